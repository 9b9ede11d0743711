"""``ByteLevel`` as a normalizer: spell the text's UTF-8 bytes in GPT-2's byte alphabet.

As ``tokenizers``' ``normalizers/byte_level.rs``. The alphabet (``BYTE_TO_CHAR``) is the
one that ``tokstream.byte_level`` defines for the pre-tokenizer and decoder of the same
name. Lone surrogates, which a Rust string cannot hold, are encoded with
``surrogatepass`` (three bytes each) rather than refused.
"""

from __future__ import annotations

from typing import Final

from ..byte_level import BYTE_TO_CHAR
from .base import Normalizer, Spans

_BYTE_LEVEL_TABLE: Final = {b: c for b, c in enumerate(BYTE_TO_CHAR)}


class ByteLevel(Normalizer):
    """Spell the text's UTF-8 bytes in GPT-2's byte-level alphabet (``" "`` -> ``"Ġ"``).

    Cost: one ``bytes.decode`` and one ``str.translate`` (ASCII-sized table).

    >>> ByteLevel().normalize_aligned(" é")
    ('ĠÃ©', [(0, 1), (1, 2), (1, 2)])
    """

    __slots__ = ()
    type_name = "ByteLevel"

    def normalize(self, text: str) -> str:
        return text.encode("utf-8", "surrogatepass").decode("latin-1").translate(_BYTE_LEVEL_TABLE)

    def normalize_aligned(self, text: str) -> tuple[str, Spans]:
        out = self.normalize(text)
        spans: Spans = []
        for k, c in enumerate(text):
            spans.extend([(k, k + 1)] * len(c.encode("utf-8", "surrogatepass")))
        return out, spans

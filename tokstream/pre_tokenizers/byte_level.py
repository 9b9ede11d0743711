"""``ByteLevel``: GPT-2's byte-level pre-tokenizer, as ``tokenizers``' ``ByteLevel``.

An optional prefix space, an optional split by GPT-2's pattern (as ``tokenizers``
writes it, without possessive quantifiers; by Unicode 16.0 classes, ``unicode16``),
then each piece's UTF-8 bytes spelled in the byte-level alphabet
(``tokstream.byte_level``, shared with the decoder). ``byte_level_regex`` recognises
the pre-tokenizers that are "one regex split, then byte-level" (GPT-2's, Llama 3's), so
that ``_pipeline`` runs them on the cached fast path of ``_fastpath``.

Not handled: ``trim_offsets`` is kept for ``to_json`` only (``tokenizers`` reads it
when ``ByteLevel`` serves as post-processor, ``tokstream.processors``).
"""

from __future__ import annotations

from typing import Final

import regex

from .base import PreTokenizer, SpannedPiece, _inserted
from .patterns import _BYTE_LEVEL_PATTERN, _SPACE_SAFE, oniguruma_spelling
from .regex_split import RegexSplit
from .sequence import Sequence
from .split import Split
from .unicode16 import _matches, _spans


class ByteLevel(PreTokenizer):
    """GPT-2 byte-level: optional prefix space, optional GPT-2 regex split, then each
    piece's UTF-8 bytes spelled in the byte-level alphabet (``tokstream.byte_level.BYTE_TO_CHAR``)."""

    def __init__(self, *, add_prefix_space: bool = True, use_regex: bool = True, trim_offsets: bool = True) -> None:
        self.add_prefix_space, self.use_regex, self.trim_offsets = add_prefix_space, use_regex, trim_offsets
        self._regex = regex.compile(_BYTE_LEVEL_PATTERN)

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        from ..byte_level import bytes_to_proxy

        out: list[str] = []
        for p in pieces:
            if not p:
                continue
            if self.add_prefix_space and not p.startswith(" "):
                p = " " + p
            parts = _matches(self._regex, p) if self.use_regex else [p]
            out += [bytes_to_proxy(s.encode("utf-8", "surrogatepass")) for s in parts if s]
        return out

    def pre_tokenize_spans(self, pieces: list[SpannedPiece]) -> list[SpannedPiece]:
        from ..byte_level import bytes_to_proxy

        out: list[SpannedPiece] = []
        for p, spans in pieces:
            if not p:
                continue
            if self.add_prefix_space and not p.startswith(" "):
                p, spans = " " + p, _inserted(spans, 1) + spans
            ranges = _spans(self._regex, p) if self.use_regex else [(0, len(p))]
            for a, b in ranges:
                if b <= a:
                    continue
                part = p[a:b]
                data = part.encode("utf-8", "surrogatepass")
                if len(data) == len(part):
                    byte_spans = spans[a:b]
                else:  # each byte's proxy character spans its character
                    byte_spans = []
                    for c, span in zip(part, spans[a:b]):
                        byte_spans += [span] * len(c.encode("utf-8", "surrogatepass"))
                out.append((bytes_to_proxy(data), byte_spans))
        return out

    def to_json(self) -> dict[str, object]:
        return {
            "type": "ByteLevel",
            "add_prefix_space": self.add_prefix_space,
            "trim_offsets": self.trim_offsets,
            "use_regex": self.use_regex,
        }


# A named pattern (or tokenizers' GPT-2 spelling) from its Oniguruma spelling.
_BY_ONIGURUMA: Final = {oniguruma_spelling(p): p for p in _SPACE_SAFE} | {p: p for p in _SPACE_SAFE}


def byte_level_regex(pre: PreTokenizer | None) -> tuple[RegexSplit, bool] | None:
    """``(split, add_prefix_space)`` when ``pre`` is "prefix a space, take the matches of
    one pattern that matches every character, spell each in the byte-level alphabet"
    (GPT-2's ``ByteLevel``, Llama 3's ``Split`` + ``ByteLevel``); else None.

    Then ``_fastpath.PieceEncoder`` with ``split`` gives its pieces, cached.
    """
    if isinstance(pre, ByteLevel) and pre.use_regex:
        return RegexSplit(_BYTE_LEVEL_PATTERN, unicode16=True), pre.add_prefix_space
    if not isinstance(pre, Sequence) or len(pre.pretokenizers) != 2:
        return None
    split, level = pre.pretokenizers
    if (
        isinstance(split, Split)
        and split.is_regex
        and split.behavior == "Isolated"
        and not split.invert
        and split.pattern in _BY_ONIGURUMA
        and isinstance(level, ByteLevel)
        and not level.use_regex
        and not level.add_prefix_space
    ):
        return RegexSplit(_BY_ONIGURUMA[split.pattern], unicode16=True), False
    return None

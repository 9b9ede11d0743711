"""``Prepend``: put a fixed string before non-empty text (SentencePiece's dummy prefix).

As ``tokenizers``' ``normalizers/prepend.rs``. The prefix is inserted text: its
characters get the zero-width span ``(0, 0)``, and ``normalize_continued`` (text that
continues a cut) leaves it out.

An empty prefix changes nothing, as in ``tokenizers`` (which then marks the first
character as inserted and panics when a ``ByteLevel`` pre-tokenizer follows).

Not here: ``Append``, which is on ``tokenizers``' main branch only (not in a release).
"""

from __future__ import annotations

from ..json_fields import Build, JsonObject, field
from .base import Normalizer, Spans, identity_spans


class Prepend(Normalizer):
    """Put ``prepend`` before non-empty text (empty text stays empty).

    Cost: one string concatenation.

    >>> Prepend("▁").normalize_aligned("hi")
    ('▁hi', [(0, 0), (0, 1), (1, 2)])
    """

    __slots__ = ("prepend",)
    type_name = "Prepend"

    space_local = True  # character-local, or acting at the ends only

    def keeps(self, char: str) -> bool:
        return True

    def __init__(self, prepend: str) -> None:
        self.prepend = prepend

    def normalize(self, text: str) -> str:
        return self.prepend + text if text else text

    def normalize_continued(self, text: str) -> str:
        return text

    def normalize_aligned(self, text: str) -> tuple[str, Spans]:
        if not text:
            return text, []
        return self.prepend + text, [(0, 0)] * len(self.prepend) + identity_spans(0, len(text))

    def to_json(self) -> dict[str, object]:
        return {"type": self.type_name, "prepend": self.prepend}

    @classmethod
    def from_json(cls, obj: JsonObject, path: str = "normalizer", *, build: Build[Normalizer] | None = None) -> Prepend:
        return cls(field(obj, "prepend", str, path))

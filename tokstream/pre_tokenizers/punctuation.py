"""``Punctuation``: split punctuation off, as ``tokenizers``' ``Punctuation``.

Punctuation is ``tokenizers``' ``is_punctuation`` (ASCII punctuation or a Unicode P*
character of the library's own tables: ``_tables.PUNCT``, read off it), each split off
with a ``SplitDelimiterBehavior`` (default ``Isolated``).

Not handled: the ``regex`` module's ``\\p{P}``, on purpose: it follows newer Unicode
tables than ``tokenizers``.
"""

from __future__ import annotations

import regex

from ..json_fields import Build, JsonObject, field
from ._tables import PUNCT
from .base import PreTokenizer, SpannedPiece, sliced, split_ranges, split_spans


class Punctuation(PreTokenizer):
    """Split off punctuation characters with a delimiter behavior (default Isolated)."""

    type_name = "Punctuation"

    _regex = regex.compile(PUNCT)

    def __init__(self, behavior: str = "Isolated") -> None:
        self.behavior = behavior

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        # An explicit class: no Unicode-version stand-ins (see _as_unicode16).
        finditer = self._regex.finditer
        return [s for p in pieces for s in split_spans(p, [m.span() for m in finditer(p)], self.behavior, False)]

    def pre_tokenize_spans(self, pieces: list[SpannedPiece]) -> list[SpannedPiece]:
        finditer = self._regex.finditer
        return [
            s
            for piece in pieces
            for s in sliced(piece, split_ranges(piece[0], [m.span() for m in finditer(piece[0])], self.behavior, False))
        ]

    def to_json(self) -> dict[str, object]:
        return {"type": "Punctuation", "behavior": self.behavior}

    @classmethod
    def from_json(
        cls, obj: JsonObject, path: str = "pre_tokenizer", *, build: Build[PreTokenizer] | None = None
    ) -> Punctuation:
        return cls(field(obj, "behavior", str, path, "Isolated"))

"""``Digits``: split numbers off, as ``tokenizers``' ``Digits``.

A number is a run of Rust's ``char::is_numeric`` characters (Nd, Nl, No as
``tokenizers`` has them: ``_tables.NUMERIC``, read off the library), or each such
character alone with ``individual_digits``.

Not handled: the ``regex`` module's ``\\p{N}``, on purpose: it follows its release's
Unicode tables, not Rust's.
"""

from __future__ import annotations

import re

from ..json_fields import Build, JsonObject, field
from ._tables import NUMERIC
from .base import PreTokenizer, SpannedPiece, sliced, split_ranges, split_spans


class Digits(PreTokenizer):
    """Split digits off; ``individual_digits`` makes each digit its own piece."""

    type_name = "Digits"

    def __init__(self, *, individual_digits: bool = False) -> None:
        self.individual_digits = individual_digits
        # Rust's char::is_numeric, explicit (NUMERIC): regex's \p{N} follows its release.
        self._regex = re.compile(NUMERIC if individual_digits else NUMERIC + "+")

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        # Rust's own tables (Unicode 17 as the regex module), not Oniguruma's 16.0.
        finditer = self._regex.finditer
        return [s for p in pieces for s in split_spans(p, [m.span() for m in finditer(p)], "Isolated", False)]

    def pre_tokenize_spans(self, pieces: list[SpannedPiece]) -> list[SpannedPiece]:
        finditer = self._regex.finditer
        return [
            s
            for piece in pieces
            for s in sliced(piece, split_ranges(piece[0], [m.span() for m in finditer(piece[0])], "Isolated", False))
        ]

    def to_json(self) -> dict[str, object]:
        return {"type": "Digits", "individual_digits": self.individual_digits}

    @classmethod
    def from_json(
        cls, obj: JsonObject, path: str = "pre_tokenizer", *, build: Build[PreTokenizer] | None = None
    ) -> Digits:
        return cls(individual_digits=field(obj, "individual_digits", bool, path, False))

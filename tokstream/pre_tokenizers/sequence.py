"""``Sequence``: pre-tokenizers applied in order, as ``tokenizers``' ``Sequence``.

Each member is applied to every piece of the one before it, for ``pre_tokenize``, for
``pre_tokenize_continued`` and for ``pre_tokenize_spans``.
"""

from __future__ import annotations

from ..json_fields import Build, JsonObject, members
from ..models.base import Spelling
from ..stability import Cut
from .base import PreTokenizer, SpannedPiece
from .regex_split import RegexSplit, regex_cut_rule


class Sequence(PreTokenizer):
    """Apply pre-tokenizers in order, each to every piece of the one before."""

    type_name = "Sequence"

    def __init__(self, pretokenizers: list[PreTokenizer]) -> None:
        self.pretokenizers = pretokenizers
        # Llama 3's shape: an isolating Split of a named pattern, then byte-level spelling.
        self._shape: tuple[RegexSplit, bool, Spelling] | None = None
        if len(pretokenizers) == 2 and pretokenizers[1].spells_bytes_only:
            split = pretokenizers[0].isolated_regex()
            if split is not None:
                self._shape = (split, False, Spelling.BYTE_LEVEL)

    def byte_level_split(self) -> tuple[RegexSplit, bool, Spelling] | None:
        return self._shape

    def cut_rule(self) -> Cut:
        return regex_cut_rule(self._shape)

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        for p in self.pretokenizers:
            pieces = p.pre_tokenize(pieces)
        return pieces

    def pre_tokenize_continued(self, pieces: list[str]) -> list[str]:
        for p in self.pretokenizers:
            pieces = p.pre_tokenize_continued(pieces)
        return pieces

    def pre_tokenize_spans(self, pieces: list[SpannedPiece]) -> list[SpannedPiece]:
        for p in self.pretokenizers:
            pieces = p.pre_tokenize_spans(pieces)
        return pieces

    def to_json(self) -> dict[str, object]:
        return {"type": "Sequence", "pretokenizers": [p.to_json() for p in self.pretokenizers]}

    @classmethod
    def from_json(
        cls, obj: JsonObject, path: str = "pre_tokenizer", *, build: Build[PreTokenizer] | None = None
    ) -> Sequence:
        """Its members are built by ``build`` (``pre_tokenizer_from_json``)."""
        return cls(members(obj, "pretokenizers", path, build))

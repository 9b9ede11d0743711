"""``Sequence``: pre-tokenizers applied in order, as ``tokenizers``' ``Sequence``.

Each member is applied to every piece of the one before it, for ``pre_tokenize``, for
``pre_tokenize_continued`` and for ``pre_tokenize_spans``.
"""

from __future__ import annotations

from .base import PreTokenizer, SpannedPiece


class Sequence(PreTokenizer):
    """Apply pre-tokenizers in order, each to every piece of the one before."""

    def __init__(self, pretokenizers: list[PreTokenizer]) -> None:
        self.pretokenizers = pretokenizers

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

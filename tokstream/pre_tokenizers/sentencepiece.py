"""SentencePiece's word cut: the pre-tokenizer a ``.model`` file implies.

``SpaceRunCut`` cuts normalized text before each run of ``▁`` that follows another
character. A ``.model`` has no pre-tokenizer; the cut is exact when ``▁`` is a piece and
no piece holds ``▁`` right after another character (``cuttable``), and then each word
is cached instead of merging the whole text at once. Its ``tokenizer.json`` form is
the equivalent ``Split``.
"""

from __future__ import annotations

import re

from ..models.sentencepiece import PieceType
from ..stability import Cut, CutKind
from .base import PreTokenizer
from .split import Split

__all__ = ["SpaceRunCut", "cuttable"]

_SPACE = "\u2581"
# A literal "▁" (not \u2581), which Oniguruma reads the same.
_RUNS = re.compile(f"{_SPACE}*[^{_SPACE}]+|{_SPACE}+")


class SpaceRunCut(PreTokenizer):
    """Cut normalized text before each run of ``▁`` that follows another character.

    Exact when ``▁`` is a piece and no piece holds ``▁`` right after another
    character: then no BPE merge and no lattice path crosses such a point, and no run
    of unknowns either, so the model gives the same ids on the parts as on the whole
    text, and each part (a word) is cached.
    """

    def cut_rule(self) -> Cut:
        """Every piece starts at a run of ``▁`` that follows another character."""
        return Cut(CutKind.SPACE_RUN)

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        out: list[str] = []
        for p in pieces:
            out += _RUNS.findall(p)
        return out

    pre_tokenize_continued = pre_tokenize  # nothing is prepended

    def to_json(self) -> dict[str, object]:
        return Split(_RUNS.pattern, "Isolated", is_regex=True).to_json()


def cuttable(pieces: list[tuple[str, float, int]]) -> bool:
    """Whether ``SpaceRunCut`` is exact for a ``.model``'s ``(piece, score, type)``."""
    matched = [t for t, _, k in pieces if k in (PieceType.NORMAL, PieceType.USER_DEFINED, PieceType.UNUSED)]
    joins = re.compile(f"[^{_SPACE}]{_SPACE}")
    return _SPACE in matched and not any(joins.search(t) for t in matched)

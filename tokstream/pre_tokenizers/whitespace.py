r"""``Whitespace`` and ``WhitespaceSplit``, as ``tokenizers``' pre-tokenizers of those names.

``Whitespace`` keeps the ``\w+|[^\w\s]+`` pieces, ``WhitespaceSplit`` the runs of
non-whitespace; whitespace is dropped by both. Matched by Unicode 16.0 classes, as
``tokenizers``' Oniguruma does (``unicode16``); ``tests/pre_tokenizers/test_pre_tokenizers.py`` checks
every code point against ``tokenizers``.

``CharDelimiterSplit`` (its own module) splits on one given character;
``Split`` with ``behavior="Removed"`` cuts the same pieces.
"""

from __future__ import annotations

import regex

from ..stability import Cut, CutKind
from .base import PreTokenizer, SpannedPiece, sliced
from .unicode16 import findall16, spans16


class Whitespace(PreTokenizer):
    """``\\w+|[^\\w\\s]+`` pieces; whitespace is dropped."""

    type_name = "Whitespace"

    def cut_rule(self) -> Cut:
        """Every ASCII whitespace character splits."""
        return Cut(CutKind.WHITESPACE)

    _regex = regex.compile(r"\w+|[^\w\s]+")

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        return [s for p in pieces for s in findall16(self._regex, p)]

    def pre_tokenize_spans(self, pieces: list[SpannedPiece]) -> list[SpannedPiece]:
        return [s for piece in pieces for s in sliced(piece, spans16(self._regex, piece[0]))]

    def to_json(self) -> dict[str, object]:
        return {"type": "Whitespace"}


class WhitespaceSplit(PreTokenizer):
    """Split on Unicode whitespace, dropping it."""

    type_name = "WhitespaceSplit"

    def cut_rule(self) -> Cut:
        """Every ASCII whitespace character splits."""
        return Cut(CutKind.WHITESPACE)

    _regex = regex.compile(r"\S+")

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        return [s for p in pieces for s in findall16(self._regex, p)]

    def pre_tokenize_spans(self, pieces: list[SpannedPiece]) -> list[SpannedPiece]:
        return [s for piece in pieces for s in sliced(piece, spans16(self._regex, piece[0]))]

    def to_json(self) -> dict[str, object]:
        return {"type": "WhitespaceSplit"}

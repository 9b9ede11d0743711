"""``Split``: ``tokenizers``' ``Split`` pre-tokenizer, on a literal string or a regex.

Matches ``tokenizers``' ``Split`` with each ``SplitDelimiterBehavior`` (``Removed``,
``Isolated``, ``MergedWithPrevious``, ``MergedWithNext``, ``Contiguous``) and ``invert``;
a regex is matched by Unicode 16.0 classes, as ``tokenizers``' Oniguruma does
(``unicode16``). A pattern that can match the empty string (``""``, ``x*``, ``\b``)
matches where Oniguruma does (``unicode16.onig_spans16``), and each empty match parts
the text around it as in ``tokenizers``: ``""`` splits between every two characters.

Not handled: Oniguruma syntax that the ``regex`` module reads differently. A
``tokenizer.json`` pattern is compiled with ``regex`` as it is; the one known
difference in the named patterns (``{n,m}+``) is written the Oniguruma way on save
(``patterns.oniguruma_spelling``).
"""

from __future__ import annotations

import regex

from ..json_fields import Build, JsonObject, field, pattern
from .base import PreTokenizer, SpannedPiece, sliced, split_ranges, split_spans
from .patterns import BY_ONIGURUMA
from .regex_split import RegexSplit
from .unicode16 import onig_spans16, spans16


def _can_match_empty(compiled: regex.Pattern[str]) -> bool:
    """Whether ``compiled`` may match the empty string somewhere (conservative: a
    pattern with lookaround, anchors or word boundaries is assumed to)."""
    if compiled.fullmatch("") is not None:
        return True
    return bool(regex.search(r"\(\?<?[=!]|\\[bBAZzGKmMy]|[$^]", compiled.pattern))


class Split(PreTokenizer):
    """Split on a literal string or a regex, with a delimiter behavior; ``invert`` swaps
    what counts as the delimiter."""

    type_name = "Split"

    def __init__(self, pattern: str, behavior: str, *, invert: bool = False, is_regex: bool = True) -> None:
        self.pattern, self.behavior, self.invert, self.is_regex = pattern, behavior, invert, is_regex
        self._regex = regex.compile(pattern if is_regex else regex.escape(pattern))
        if behavior not in ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"):
            raise ValueError(f"unknown split behavior {behavior!r}")
        # Decided once: only a pattern that can match empty text needs Oniguruma's loop.
        self._spans = onig_spans16 if _can_match_empty(self._regex) else spans16

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        out: list[str] = []
        spans = self._spans
        for p in pieces:
            out += split_spans(p, spans(self._regex, p), self.behavior, self.invert)
        return out

    def pre_tokenize_spans(self, pieces: list[SpannedPiece]) -> list[SpannedPiece]:
        out: list[SpannedPiece] = []
        spans = self._spans
        for piece in pieces:
            p = piece[0]
            out += sliced(piece, split_ranges(p, spans(self._regex, p), self.behavior, self.invert))
        return out

    def isolated_regex(self) -> RegexSplit | None:
        """A regex ``Split`` that isolates the matches of a named pattern (Llama 3's)."""
        if self.is_regex and self.behavior == "Isolated" and not self.invert and self.pattern in BY_ONIGURUMA:
            return RegexSplit(BY_ONIGURUMA[self.pattern], unicode16=True)
        return None

    def to_json(self) -> dict[str, object]:
        key = "Regex" if self.is_regex else "String"
        return {"type": "Split", "pattern": {key: self.pattern}, "behavior": self.behavior, "invert": self.invert}

    @classmethod
    def from_json(
        cls, obj: JsonObject, path: str = "pre_tokenizer", *, build: Build[PreTokenizer] | None = None
    ) -> Split:
        text, is_regex = pattern(obj, path)
        return cls(
            text, field(obj, "behavior", str, path), invert=field(obj, "invert", bool, path, False), is_regex=is_regex
        )

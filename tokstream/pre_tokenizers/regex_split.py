r"""``RegexSplit``: tiktoken's pre-tokenization, the matches of one regex, in order.

Implemented here: regex splitting with tiktoken's exact patterns (``patterns``), or any
pattern string that the ``regex`` module compiles, with tiktoken's semantics (text
between matches is dropped). The encoders (``_fastpath``, ``_pipeline``,
``train.counting``) call it; the Hugging Face pre-tokenizers, which work on lists of
pieces, are the other modules of this package.

Performance notes
-----------------
Running the full pattern is the slowest step of a warm encode (the ``regex`` module does
about 13 MB/s on English prose; tiktoken's whole encode about 18 MB/s). For the named
patterns we avoid most of it: a space that follows a non-space character is always a
piece boundary, and the pieces on either side of it do not depend on each other (the
proof is in ``patterns``). So ``cut`` splits the text at those spaces with the stdlib
``re`` engine (``split`` with a literal first character runs at about 60 MB/s) and
``_fastpath`` looks each cut part ("`` word,``") up in a dict; only unseen parts run the
full pattern. ``RegexSplit.space_safe`` records whether a pattern has this property;
user patterns do not get it unless the caller vouches for them.

Parts seen for the first time are split in bulk. On Python >= 3.11 (possessive
quantifiers in ``re``), an ASCII-only part is split with ``findall_ascii``, the stdlib
``re`` translation of the named pattern under ``re.ASCII`` (exact there, see
``patterns``), which runs about twice as fast as ``regex``. Other parts use the
``regex`` module, with Unicode 16.0 stand-ins for the rare text that needs them
(``needs_unicode16``, ``unicode16``).

Not handled: special tokens (``tokstream.specials`` finds them first) and merging
(``tokstream.models.bpe``).
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_right
from collections.abc import Callable
from itertools import accumulate

import regex

from ..models.base import Spelling
from ..stability import NO_CUT, Cut, CutKind
from .base import PreTokenizer, SpannedPiece, located_spans
from .patterns import (
    ASCII_EQUIVALENT,
    SAFE_SPACE,
    SPACE_SAFE_PATTERNS,
    known_pattern,
    oniguruma_spelling,
    resolve_pattern,
    splits_last_space_apart,
)
from .unicode16 import findall16, pattern_classes, pattern_fixes


class RegexSplit(PreTokenizer):
    """Split text into the matches of a regex, in order; text between matches is dropped.

    That is tiktoken's semantics (``findall``). Every named pattern matches every
    character, so nothing is dropped for them.

    Cost: one ``regex`` scan, O(n) for the named patterns (possessive quantifiers, no
    backtracking blow-up). ``cut`` is one stdlib ``re.split``.
    """

    __slots__ = ("_guard", "_regex", "_unicode16", "findall", "findall_ascii", "pattern", "space_safe")

    def __init__(self, pattern: str, *, space_safe: bool | None = None, unicode16: bool | None = None) -> None:
        """``space_safe`` defaults to True for the named patterns only. ``unicode16``
        (default True) matches by Unicode 16.0 classes, as tiktoken and ``tokenizers``
        (Oniguruma) do for any pattern; a pattern using a class that cannot be matched so
        raises ``TokstreamError`` (``unicode16.pattern_classes``), unless
        ``unicode16=False`` asks for the installed ``regex``'s own classes."""
        self.pattern = resolve_pattern(pattern)
        try:
            self._regex = regex.compile(self.pattern)
        except regex.error as e:
            raise ValueError(f"pre-tokenizer pattern does not compile: {e}") from e
        self.space_safe = self.pattern in SPACE_SAFE_PATTERNS if space_safe is None else space_safe
        if self._regex.groups:
            # findall would return the groups; we want whole matches.
            finditer = self._regex.finditer
            self.findall: Callable[[str], list[str]] = lambda t: [m.group() for m in finditer(t)]
        else:
            self.findall = self._regex.findall
        # For ASCII-only text; the same pieces as findall, faster (see module notes).
        self.findall_ascii: Callable[[str], list[str]] = self.findall
        ascii_pattern = ASCII_EQUIVALENT.get(self.pattern)
        if ascii_pattern is not None and sys.version_info >= (3, 11):
            self.findall_ascii = re.compile(ascii_pattern, re.ASCII).findall
        # tiktoken matches every pattern by Unicode 16.0 classes (see ``unicode16``); a
        # pattern whose classes cannot be corrected is refused here, not at encode time.
        self._unicode16 = True if unicode16 is None else unicode16
        if self._unicode16:
            pattern_classes(self.pattern)
        self._guard: regex.Pattern[str] | bool | None = False  # False: not computed yet

    @property
    def unicode16(self) -> bool:
        """Whether pieces follow Unicode 16.0 classes (tiktoken's), not the installed
        ``regex``'s (``unicode16=False``)."""
        return self._unicode16

    def needs_unicode16(self, text: str) -> bool:
        """True when ``text`` holds a character that ``regex`` classes unlike Unicode 16.0.

        Always False for ASCII text, for text with no character that a class of this
        pattern holds differently (``unicode16.pattern_fixes``) and for ``unicode16=False``.
        """
        if not self._unicode16 or text.isascii():
            return False
        guard = self._guard
        if guard is False:
            guard = self._guard = pattern_fixes(self.pattern).guard
        return guard is not None and guard.search(text) is not None  # type: ignore[union-attr]

    def unicode16_positions(self, text: str) -> list[int]:
        """The offsets of the characters of ``text`` that ``needs_unicode16`` flags, in
        order (empty when it is False). Cost: one guard scan (~20 MB/s on CJK text)."""
        if not self._unicode16 or text.isascii():
            return []
        guard = self._guard
        if guard is False:
            guard = self._guard = pattern_fixes(self.pattern).guard
        if guard is None:
            return []
        return [m.start() for m in guard.finditer(text)]  # type: ignore[union-attr]

    def findall_unicode16_at(self, text: str, positions: list[int]) -> list[str]:
        """``findall_unicode16(text)`` given ``unicode16_positions(text)``: the stand-ins
        go in by slicing (no second guard scan, no ``str.translate`` of all the text)."""
        table = pattern_fixes(self.pattern).table
        cuts: list[str] = []
        prev = 0
        for at in positions:
            cuts += (text[prev:at], table[ord(text[at])])
            prev = at + 1
        cuts.append(text[prev:])
        found = self.findall("".join(cuts))
        ends = list(accumulate(map(len, found)))
        if not ends or ends[-1] != len(text):  # text between matches: slice every match
            return [text[m.start() : m.end()] for m in self._regex.finditer("".join(cuts))]
        # The pieces tile the text: only those holding a stand-in are sliced again.
        for at in positions:
            k = bisect_right(ends, at)
            found[k] = text[ends[k - 1] if k else 0 : ends[k]]
        return found

    def findall_unicode16(self, text: str) -> list[str]:
        """``findall`` with Unicode 16.0 character classes, as tiktoken matches."""
        return findall16(self._regex, text)

    def split(self, text: str) -> list[str]:
        """Return the pieces of ``text``."""
        return self.findall(text)

    def split_exact(self, text: str) -> list[str]:
        """The pieces of ``text`` as tiktoken / ``tokenizers`` cut it (Unicode 16.0
        classes where they differ from ``regex``'s), as the encoders use them."""
        return self.findall_unicode16(text) if self.needs_unicode16(text) else self.findall(text)

    def cut(self, text: str) -> list[str]:
        """Cut ``text`` at piece boundaries that no context can move (see module notes).

        Every part but the first stands for ``" " + part``. Only valid when
        ``space_safe``; otherwise the whole text is one part.
        """
        if not self.space_safe:
            return [text]
        return SAFE_SPACE.split(text)

    # ---------------------------------------------------------- as a pipeline stage

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        """The pieces of each piece (``split_exact``)."""
        split = self.split_exact
        return [p for piece in pieces for p in split(piece)]

    def pre_tokenize_spans(self, pieces: list[SpannedPiece]) -> list[SpannedPiece]:
        return located_spans(self.pre_tokenize, pieces)

    def byte_level_split(self) -> tuple[RegexSplit, bool, Spelling]:
        """A rank file's pieces go to the model as text."""
        return self, False, Spelling.TEXT

    def cut_rule(self) -> Cut:
        """``regex_cut`` for the named patterns; other patterns keep everything open."""
        if not known_pattern(self.pattern):
            return NO_CUT
        return Cut(CutKind.REGEX, split=self.split_exact, last_space_apart=splits_last_space_apart(self.pattern))

    def to_json(self) -> dict[str, object]:
        """The ``tokenizer.json`` form: this regex as an isolating ``Split``, then the
        byte-level alphabet (the pattern in ``tokenizers``' Oniguruma spelling)."""
        return {
            "type": "Sequence",
            "pretokenizers": [
                {
                    "type": "Split",
                    "pattern": {"Regex": oniguruma_spelling(self.pattern)},
                    "behavior": "Isolated",
                    "invert": False,
                },
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
            ],
        }

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RegexSplit) and other.pattern == self.pattern

    def __hash__(self) -> int:
        return hash(self.pattern)

    def __repr__(self) -> str:
        return f"RegexSplit({self.pattern!r})"


def regex_cut_rule(shape: tuple[RegexSplit, bool, Spelling] | None) -> Cut:
    """The ``REGEX`` cut of a byte-level regex shape (``byte_level_split``), or none."""
    if shape is None:
        return NO_CUT
    split, prefix_space, _ = shape
    if split.cut_rule().kind is not CutKind.REGEX:
        return NO_CUT
    return Cut(
        CutKind.REGEX,
        split=split.split_exact,
        last_space_apart=splits_last_space_apart(split.pattern),
        prefix_space=prefix_space,
    )

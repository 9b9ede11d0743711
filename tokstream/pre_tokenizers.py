r"""Pre-tokenization: cut text into the pieces the segmentation model encodes one by one.

Implemented here: regex splitting with tiktoken's exact patterns (``gpt2``/``r50k_base``,
``p50k_base``, ``cl100k_base``, ``o200k_base``) and Llama 3's, or any pattern string
that the ``regex`` module compiles. The ``regex`` module supports the possessive
quantifiers and ``\\p{..}`` classes of tiktoken's Rust ``fancy-regex``, and its ``\\s`` is
Unicode ``White_Space`` exactly as Rust's is, so the pieces are the same.

Performance notes
-----------------
Running the full pattern is the slowest step of a warm encode (the ``regex`` module does
about 13 MB/s on English prose; tiktoken's whole encode about 18 MB/s). For the named
patterns we avoid most of it: a space that follows a non-space character is always a
piece boundary, and the pieces on either side of it do not depend on each other. Proof
sketch, for every named pattern: no alternative matches a non-space character followed
by a space (a space is only ever the optional first character of a piece, or part of an
all-whitespace piece); the only lookahead is ``(?!\\S)`` after whitespace and ``$`` after
whitespace, neither of which can end on the non-space character; and no alternative
looks behind. So the text can be cut at those spaces with the stdlib ``re`` engine
(``split`` with a literal first character runs at about 60 MB/s) and each cut part
("`` word,``") looked up in a dict; only unseen parts run the full pattern.
``RegexSplit.space_safe`` records whether a pattern has this property; user patterns
do not get it unless the caller vouches for them.

Parts seen for the first time are split in bulk. On Python >= 3.11 (possessive
quantifiers in ``re``), an ASCII-only part is split with a stdlib ``re`` translation of
the named pattern under ``re.ASCII``; for ASCII input ``\p{L}`` is ``[A-Za-z]``,
``\p{N}`` is ``[0-9]``, ``\s`` is ``[\t\n\v\f\r ]``, ``\p{M}``/``\p{Lt}``/``\p{Lm}``/
``\p{Lo}`` are empty and ``$`` is ``\Z``, so the translation is exact there and runs
about twice as fast as ``regex``. Other parts use the ``regex`` module.

Unicode versions
----------------
tiktoken's Rust engine classifies characters by Unicode 16.0; the ``regex`` module
follows whatever version its release ships (17.0 in 2026.5: CJK Extension J became
letters, U+0295 moved from Ll to Lo). Spelling the classes out as 16.0 ranges makes
matching ~15x slower, so the named tiktoken patterns keep ``\p{..}`` and
``needs_unicode16(text)`` flags the rare text holding a character whose class
differs; ``findall_unicode16`` then matches a copy of the text in which each such
character is replaced by a stand-in of its Unicode 16.0 class, and slices the
original text at the same offsets. ``tools/gen_unicode16.py`` records the data.

Offsets
-------
Every Hugging Face pre-tokenizer below also has ``pre_tokenize_spans``, the same pieces
each carried with one ``(start, end)`` span per character (``SpannedPiece``): spans of
the original text, passed in by the caller and sliced, repeated or invented as the
piece is cut and rewritten. A character a pre-tokenizer rewrites keeps its span
(``ByteLevel`` gives each UTF-8 byte's proxy character the span of its character,
``Metaspace`` gives ``▁`` the span of the space); a character it inserts (``ByteLevel``'s
prefix space, ``Metaspace``'s prepended ``▁``) gets the zero-width span at the start of
the piece's first character. ``located_spans`` serves a pre-tokenizer that has no such
method, when it only cuts text. The span variants are for ``encode_with_offsets``; they
walk characters in Python and leave ``pre_tokenize`` (the encode path) as it was.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable
from typing import Final

import numpy as np
import regex

from .models.base import Spelling
from .stability import NO_CUT, Cut, CutKind

__all__ = [
    "PATTERNS",
    "RegexSplit",
    "SpannedPiece",
    "byte_level_regex",
    "located_spans",
    "oniguruma_spelling",
    "resolve_pattern",
]

#: A piece and, for each of its characters, the ``(start, end)`` span it stands for.
SpannedPiece = tuple[str, list[tuple[int, int]]]

_GPT2: Final = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
_CL100K: Final = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_O200K: Final = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_LLAMA3: Final = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

#: Pre-tokenizer patterns by name. ``r50k_base``, ``p50k_base`` and ``gpt2`` share one.
PATTERNS: Final[dict[str, str]] = {
    "gpt2": _GPT2,
    "r50k_base": _GPT2,
    "p50k_base": _GPT2,
    "cl100k_base": _CL100K,
    "o200k_base": _O200K,
    "llama3": _LLAMA3,
}

# The GPT-2 pattern as tokenizers' ByteLevel writes it (no possessive quantifiers).
_BYTE_LEVEL_PATTERN: Final = (
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
)

# Patterns for which the space cut described in the module docstring is proven safe.
# Each also matches every character, so findall drops nothing (tokenizers' Split keeps
# unmatched text as pieces; for these there is none).
_SPACE_SAFE: Final = frozenset({_GPT2, _CL100K, _O200K, _LLAMA3, _BYTE_LEVEL_PATTERN})



def splits_last_space_apart(pattern: str) -> bool:
    """Whether ``pattern`` is GPT-2's (``\\s+(?!\\S)|\\s``: a whitespace run before a
    word is one piece and its last character; ``_stability.regex_cut``)."""
    return pattern in (_GPT2, _BYTE_LEVEL_PATTERN)


def known_pattern(pattern: str) -> bool:
    """Whether ``pattern`` is one of the named patterns whose stability rule
    ``_stability.regex_cut`` was derived for (and tested on)."""
    return pattern in _SPACE_SAFE


_A_L, _A_N = "A-Za-z", "0-9"
# Exact translations of the named patterns for ASCII-only input (see module notes).
_ASCII_EQUIVALENT: Final[dict[str, str]] = {
    _GPT2: rf"""'(?:[sdmt]|ll|ve|re)| ?[{_A_L}]++| ?[{_A_N}]++| ?[^\s{_A_L}{_A_N}]++|\s++\Z|\s+(?!\S)|\s""",
    _CL100K: (
        rf"""'(?i:[sdmt]|ll|ve|re)|[^\r\n{_A_L}{_A_N}]?+[{_A_L}]++|[{_A_N}]{{1,3}}+"""
        rf"""| ?[^\s{_A_L}{_A_N}]++[\r\n]*+|\s++\Z|\s*[\r\n]|\s+(?!\S)|\s"""
    ),
    _O200K: "|".join(
        [
            rf"""[^\r\n{_A_L}{_A_N}]?[A-Z]*[a-z]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            rf"""[^\r\n{_A_L}{_A_N}]?[A-Z]+[a-z]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            rf"""[{_A_N}]{{1,3}}""",
            rf""" ?[^\s{_A_L}{_A_N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
    _LLAMA3: (
        rf"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n{_A_L}{_A_N}]?[{_A_L}]+|[{_A_N}]{{1,3}}"""
        rf"""| ?[^\s{_A_L}{_A_N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
    ),
}

# A space whose previous character is not whitespace. The pattern starts with a literal
# so `re` jumps between spaces at memchr speed; stdlib `\S` (not str.isspace) is a subset
# of "not White_Space", so the cut is only ever more conservative than the proof needs.
_SAFE_SPACE: Final = re.compile(r" (?<=\S )")


# A stand-in character per Unicode 16.0 general category, for findall_unicode16. Any
# character the patterns treat as "other" (not a letter, mark, number or whitespace,
# and none of the literals ' / \r \n) stands in for every other category.
_STAND_IN: Final = {
    "Lu": "Q", "Ll": "q", "Lt": "\u01c5", "Lm": "\u02b0", "Lo": "\u05d0",
    "Mn": "\u0300", "Mc": "\u0903", "Me": "\u20dd",
    "Nd": "5", "Nl": "\u216b", "No": "\u00b2",
}
_OTHER: Final = "\u0378"  # unassigned in every Unicode version so far


@functools.lru_cache(maxsize=1)
def _unicode16_fixes() -> tuple[regex.Pattern[str] | None, dict[int, str]]:
    """The guard pattern and the translate table for findall_unicode16.

    Computed once per process, on first use (about 10 ms): the code points the
    installed ``regex`` assigns but Unicode 16.0 does not are found by one C-level
    scan, so a newer ``regex`` release needs no new data.
    """
    from ._unicode16 import RECLASSIFIED, UNASSIGNED

    points = np.concatenate([np.arange(a, b + 1, dtype="<u4") for a, b in UNASSIGNED])
    probe = points.tobytes().decode("utf-32-le")
    table = {ord(c): _OTHER for c in regex.findall(r"\P{Cn}", probe)}
    table.update({cp: _STAND_IN.get(cat, _OTHER) for cp, cat in RECLASSIFIED.items()})
    if not table:
        return None, table
    ranges: list[list[int]] = []
    for cp in sorted(table):
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    body = "".join(f"\\U{a:08X}-\\U{b:08X}" for a, b in ranges)
    return regex.compile(f"[{body}]"), table


def oniguruma_spelling(pattern: str) -> str:
    r"""``pattern`` as ``tokenizers``' Oniguruma reads it the same way.

    In Oniguruma's Ruby syntax ``{n,m}+`` is ``{n,m}`` repeated, not possessive (cl100k's
    ``\p{N}{1,3}+``). In the named patterns nothing follows that quantifier inside its
    alternative, so the greedy ``{n,m}`` matches the same.
    """
    return regex.sub(r"(\{\d+(?:,\d*)?\})\+", r"\1", pattern)


def resolve_pattern(pattern: str) -> str:
    """Return the regex for ``pattern``, which is a name from ``PATTERNS`` or a regex."""
    return PATTERNS.get(pattern, pattern)


class RegexSplit:
    """Split text into the matches of a regex, in order; text between matches is dropped.

    That is tiktoken's semantics (``findall``). Every named pattern matches every
    character, so nothing is dropped for them.

    Cost: one ``regex`` scan, O(n) for the named patterns (possessive quantifiers, no
    backtracking blow-up). ``cut`` is one stdlib ``re.split``.
    """

    __slots__ = ("pattern", "_regex", "space_safe", "findall", "findall_ascii", "_unicode16", "__weakref__")

    def __init__(
        self, pattern: str, *, space_safe: bool | None = None, unicode16: bool | None = None
    ) -> None:
        """``space_safe`` and ``unicode16`` default to True for the named patterns only;
        ``unicode16=True`` matches by Unicode 16.0 classes, as tiktoken and
        ``tokenizers`` (Oniguruma) do for any pattern."""
        self.pattern = resolve_pattern(pattern)
        try:
            self._regex = regex.compile(self.pattern)
        except regex.error as e:
            raise ValueError(f"pre-tokenizer pattern does not compile: {e}") from e
        self.space_safe = self.pattern in _SPACE_SAFE if space_safe is None else space_safe
        if self._regex.groups:
            # findall would return the groups; we want whole matches.
            finditer = self._regex.finditer
            self.findall: Callable[[str], list[str]] = lambda t: [
                m.group() for m in finditer(t)
            ]
        else:
            self.findall = self._regex.findall
        # For ASCII-only text; the same pieces as findall, faster (see module notes).
        self.findall_ascii: Callable[[str], list[str]] = self.findall
        ascii_pattern = _ASCII_EQUIVALENT.get(self.pattern)
        if ascii_pattern is not None and sys.version_info >= (3, 11):
            self.findall_ascii = re.compile(ascii_pattern, re.ASCII).findall
        # tiktoken's patterns follow Unicode 16.0 (see module notes).
        self._unicode16 = self.pattern in _ASCII_EQUIVALENT if unicode16 is None else unicode16

    def needs_unicode16(self, text: str) -> bool:
        """True when ``text`` holds a character that ``regex`` classes unlike Unicode 16.0.

        Always False for ASCII text and for patterns other than tiktoken's.
        """
        if not self._unicode16 or text.isascii():
            return False
        guard, _ = _unicode16_fixes()
        return guard is not None and guard.search(text) is not None

    def findall_unicode16(self, text: str) -> list[str]:
        """``findall`` with Unicode 16.0 character classes, as tiktoken matches."""
        return _matches(self._regex, text)

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
        return _SAFE_SPACE.split(text)

    # ---------------------------------------------------------- as a pipeline stage

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        """The pieces of each piece (``split_exact``)."""
        split = self.split_exact
        return [p for piece in pieces for p in split(piece)]

    def pre_tokenize_continued(self, pieces: list[str]) -> list[str]:
        return self.pre_tokenize(pieces)

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
        byte-level alphabet (``tokenizers``' Oniguruma spelling of the pattern)."""
        return {
            "type": "Sequence",
            "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": oniguruma_spelling(self.pattern)}, "behavior": "Isolated", "invert": False},
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
            ],
        }

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RegexSplit) and other.pattern == self.pattern

    def __hash__(self) -> int:
        return hash(self.pattern)

    def __repr__(self) -> str:
        return f"RegexSplit({self.pattern!r})"


# --------------------------------------------------------------------------------------
# Hugging Face pre-tokenizers. Each takes the current list of pieces and returns the new
# list, as ``tokenizers`` applies a pre-tokenizer to every split of the one before it.
# Names and options follow the ``tokenizer.json`` "type" and fields.

def _as_unicode16(text: str) -> str:
    """``text`` with each character whose class changed after Unicode 16.0 replaced by a
    stand-in of its 16.0 class (same length), or ``text`` itself when there is none.

    ``tokenizers``' regex engine, like tiktoken's, is on Unicode 16.0; matching the
    result and slicing the original text at the same offsets gives its pieces.
    """
    if text.isascii():
        return text
    guard, table = _unicode16_fixes()
    if guard is None or guard.search(text) is None:
        return text
    return text.translate(table)


def _matches(pattern: regex.Pattern[str], text: str) -> list[str]:
    """``findall`` under Unicode 16.0 classes (see ``_as_unicode16``)."""
    probe = _as_unicode16(text)
    if probe is text:
        return pattern.findall(text)
    return [text[m.start() : m.end()] for m in pattern.finditer(probe)]


def _spans(pattern: regex.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(_as_unicode16(text))]


class PreTokenizer:
    """Base class: ``pre_tokenize(pieces)`` splits (and may rewrite) every piece;
    ``pre_tokenize_spans`` does the same carrying each character's span (module notes)."""

    def cut_rule(self) -> Cut:
        """What appending text can change (``stability``): by default everything after
        the start stays open."""
        return NO_CUT

    def byte_level_split(self) -> tuple[RegexSplit, bool, Spelling] | None:
        """``(split, prefix_space, spelling)`` when this pre-tokenizer is one known total
        regex whose pieces go to the model as ``spelling`` (the byte-level fast path:
        ``_fastpath.PieceEncoder``), else None."""
        return None

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        raise NotImplementedError

    def pre_tokenize_continued(self, pieces: list[str]) -> list[str]:
        """``pre_tokenize`` for text that continues a cut (``_stability``): the first
        piece does not start the text, so nothing is prepended to it."""
        return self.pre_tokenize(pieces)

    def pre_tokenize_spans(self, pieces: list[SpannedPiece]) -> list[SpannedPiece]:
        """``pre_tokenize`` with spans; by default ``located_spans`` (exact for a
        pre-tokenizer that only cuts text)."""
        return located_spans(self.pre_tokenize, pieces)

    def to_json(self) -> dict[str, object]:
        raise NotImplementedError


def _split_spans(text: str, spans: list[tuple[int, int]], behavior: str, invert: bool) -> list[str]:
    """Apply a ``SplitDelimiterBehavior`` given the delimiter spans found in ``text``."""
    return [text[a:b] for a, b in _split_ranges(text, spans, behavior, invert)]


def _split_ranges(
    text: str, spans: list[tuple[int, int]], behavior: str, invert: bool
) -> list[tuple[int, int]]:
    """The non-empty ``(start, end)`` ranges of the pieces ``_split_spans`` returns."""
    marks: list[tuple[int, int, bool]] = []
    pos = 0
    for a, b in spans:
        if a > pos:
            marks.append((pos, a, False))
        if b > a:
            marks.append((a, b, True))
        pos = b
    if pos < len(text):
        marks.append((pos, len(text), False))
    if invert:
        marks = [(a, b, not m) for a, b, m in marks]
    out: list[tuple[int, int]] = []
    if behavior == "Removed":
        out = [(a, b) for a, b, m in marks if not m]
    elif behavior == "Isolated":
        out = [(a, b) for a, b, _ in marks]
    elif behavior == "MergedWithPrevious":
        prev_match = False
        for a, b, m in marks:
            if m and out and not prev_match:
                out[-1] = (out[-1][0], b)
            else:
                out.append((a, b))
            prev_match = m
    elif behavior == "MergedWithNext":
        pending: int | None = None
        for a, b, m in marks:
            if m:
                if pending is None:
                    pending = a
                else:
                    out.append((pending, a))
                    pending = a
            else:
                out.append((a if pending is None else pending, b))
                pending = None
        if pending is not None:
            out.append((pending, len(text)))
    elif behavior == "Contiguous":
        # tokenizers joins neighbours with the same flag (with invert, adjacent matches
        # turned content are joined too).
        prev = False
        for a, b, m in marks:
            if m == prev and out:
                out[-1] = (out[-1][0], b)
            else:
                out.append((a, b))
            prev = m
    else:
        raise ValueError(f"unknown split behavior {behavior!r}")
    return [(a, b) for a, b in out if b > a]


def _sliced(piece: SpannedPiece, ranges: list[tuple[int, int]]) -> list[SpannedPiece]:
    text, spans = piece
    return [(text[a:b], spans[a:b]) for a, b in ranges if b > a]


def _inserted(spans: list[tuple[int, int]], count: int) -> list[tuple[int, int]]:
    """Spans of ``count`` characters inserted before the ones of ``spans`` (non-empty):
    zero-width, at the start of the first one."""
    start = spans[0][0]
    return [(start, start)] * count


def located_spans(
    pre_tokenize: Callable[[list[str]], list[str]], pieces: list[SpannedPiece]
) -> list[SpannedPiece]:
    """``pre_tokenize_spans`` for a pre-tokenizer that only cuts its pieces (and may drop
    text between them): each output piece is looked up, in order, in the input pieces.

    Exact when nothing is dropped; a piece after dropped text that repeats the start of
    that text is placed too early. Raises ``NotImplementedError`` when an output piece
    is not a slice of its input (the pre-tokenizer rewrites text and needs its own
    ``pre_tokenize_spans``).
    """
    out: list[SpannedPiece] = []
    k, pos = 0, 0
    for piece in pre_tokenize([text for text, _ in pieces]):
        while k < len(pieces):
            at = pieces[k][0].find(piece, pos)
            if at >= 0:
                break
            k, pos = k + 1, 0
        else:
            raise NotImplementedError(
                f"pre-tokenizer {getattr(pre_tokenize, '__self__', pre_tokenize)!r} rewrote "
                f"text into {piece[:40]!r}; offsets need it to define pre_tokenize_spans"
            )
        out.append((piece, pieces[k][1][at : at + len(piece)]))
        pos = at + len(piece)
    return out


class Split(PreTokenizer):
    """Split on a literal string or a regex, with a delimiter behavior; ``invert`` swaps
    what counts as the delimiter."""

    def __init__(self, pattern: str, behavior: str, *, invert: bool = False, is_regex: bool = True) -> None:
        self.pattern, self.behavior, self.invert, self.is_regex = pattern, behavior, invert, is_regex
        self._regex = regex.compile(pattern if is_regex else regex.escape(pattern))
        if behavior not in ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"):
            raise ValueError(f"unknown split behavior {behavior!r}")

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        out: list[str] = []
        for p in pieces:
            out += _split_spans(p, _spans(self._regex, p), self.behavior, self.invert)
        return out

    def pre_tokenize_spans(self, pieces: list[SpannedPiece]) -> list[SpannedPiece]:
        out: list[SpannedPiece] = []
        for piece in pieces:
            p = piece[0]
            out += _sliced(piece, _split_ranges(p, _spans(self._regex, p), self.behavior, self.invert))
        return out

    def to_json(self) -> dict[str, object]:
        key = "Regex" if self.is_regex else "String"
        return {"type": "Split", "pattern": {key: self.pattern}, "behavior": self.behavior, "invert": self.invert}


class ByteLevel(PreTokenizer):
    """GPT-2 byte-level: optional prefix space, optional GPT-2 regex split, then each
    piece's UTF-8 bytes spelled in the byte-level alphabet (``byte_level.BYTE_TO_CHAR``)."""

    def byte_level_split(self) -> tuple[RegexSplit, bool, Spelling] | None:
        return self._shape

    def cut_rule(self) -> Cut:
        return _regex_cut_rule(self)

    def __init__(self, *, add_prefix_space: bool = True, use_regex: bool = True, trim_offsets: bool = True) -> None:
        self.add_prefix_space, self.use_regex, self.trim_offsets = add_prefix_space, use_regex, trim_offsets
        self._regex = regex.compile(_BYTE_LEVEL_PATTERN)
        self._shape = _byte_level_shape(self)

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        from .byte_level import bytes_to_proxy

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
        from .byte_level import bytes_to_proxy

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


class Metaspace(PreTokenizer):
    """SentencePiece whitespace: spaces become ``replacement`` (``▁``), which is also
    prepended (``prepend_scheme`` "always", or "first" for the first piece only), and
    with ``split`` each ``▁`` starts a new piece."""

    def cut_rule(self) -> Cut:
        """With ``split``, every piece starts at a run of ``▁`` (spaces)."""
        return Cut(CutKind.SPACE_RUN) if self.split else NO_CUT

    def __init__(self, *, replacement: str = "\u2581", prepend_scheme: str = "always", split: bool = True) -> None:
        if prepend_scheme not in ("always", "first", "never"):
            raise ValueError(f"unknown prepend_scheme {prepend_scheme!r}")
        self.replacement, self.prepend_scheme, self.split = replacement, prepend_scheme, split

    def pre_tokenize(self, pieces: list[str], *, first: bool = True, continued: bool = False) -> list[str]:
        out: list[str] = []
        rep = self.replacement
        for i, p in enumerate(pieces):
            if not p:
                continue
            p = p.replace(" ", rep)
            prepend = (self.prepend_scheme == "always" and not (continued and i == 0)) or (
                self.prepend_scheme == "first" and first and not continued and i == 0
            )
            if prepend and not p.startswith(rep):
                p = rep + p
            if self.split:
                spans = [(m, m + len(rep)) for m in _find_all(p, rep)]
                out += _split_spans(p, spans, "MergedWithNext", False)
            elif p:
                out.append(p)
        return out

    def pre_tokenize_continued(self, pieces: list[str]) -> list[str]:
        return self.pre_tokenize(pieces, continued=True)

    def pre_tokenize_spans(self, pieces: list[SpannedPiece], *, first: bool = True) -> list[SpannedPiece]:
        out: list[SpannedPiece] = []
        rep = self.replacement
        for i, (p, spans) in enumerate(pieces):
            if not p:
                continue
            if " " in p:
                spans = [s for c, s in zip(p, spans) for _ in range(len(rep) if c == " " else 1)]
                p = p.replace(" ", rep)
            prepend = self.prepend_scheme == "always" or (self.prepend_scheme == "first" and first and i == 0)
            if prepend and not p.startswith(rep):
                p, spans = rep + p, _inserted(spans, len(rep)) + spans
            if self.split:
                marks = [(m, m + len(rep)) for m in _find_all(p, rep)]
                out += _sliced((p, spans), _split_ranges(p, marks, "MergedWithNext", False))
            elif p:
                out.append((p, spans))
        return out

    def to_json(self) -> dict[str, object]:
        return {"type": "Metaspace", "replacement": self.replacement, "prepend_scheme": self.prepend_scheme, "split": self.split}


def _find_all(text: str, sub: str) -> list[int]:
    found, i = [], text.find(sub)
    while i >= 0:
        found.append(i)
        i = text.find(sub, i + len(sub))
    return found


class Whitespace(PreTokenizer):
    """``\\w+|[^\\w\\s]+`` pieces; whitespace is dropped."""

    def cut_rule(self) -> Cut:
        """Every ASCII whitespace character splits."""
        return Cut(CutKind.WHITESPACE)

    _regex = regex.compile(r"\w+|[^\w\s]+")

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        return [s for p in pieces for s in _matches(self._regex, p)]

    def pre_tokenize_spans(self, pieces: list[SpannedPiece]) -> list[SpannedPiece]:
        return [s for piece in pieces for s in _sliced(piece, _spans(self._regex, piece[0]))]

    def to_json(self) -> dict[str, object]:
        return {"type": "Whitespace"}


class WhitespaceSplit(PreTokenizer):
    """Split on Unicode whitespace, dropping it."""

    def cut_rule(self) -> Cut:
        """Every ASCII whitespace character splits."""
        return Cut(CutKind.WHITESPACE)

    _regex = regex.compile(r"\S+")

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        return [s for p in pieces for s in _matches(self._regex, p)]

    def pre_tokenize_spans(self, pieces: list[SpannedPiece]) -> list[SpannedPiece]:
        return [s for piece in pieces for s in _sliced(piece, _spans(self._regex, piece[0]))]

    def to_json(self) -> dict[str, object]:
        return {"type": "WhitespaceSplit"}


# tokenizers' is_punctuation: ASCII punctuation or a Unicode P* character *in its own
# (older) Unicode tables*, read off tokenizers 0.23 for every code point by
# tools/gen_tokenizers_classes.py; \p{P} of the regex module has 141 more (e.g. U+061D)
# and 2 fewer.
_PUNCT: Final = r"""[\U00000021-\U0000002F\U0000003A-\U00000040\U0000005B-\U00000060\U0000007B-\U0000007E\U000000A1\U000000A7\U000000AB\U000000B6-\U000000B7\U000000BB\U000000BF\U0000037E\U00000387\U0000055A-\U0000055F\U00000589-\U0000058A\U000005BE\U000005C0\U000005C3\U000005C6\U000005F3-\U000005F4\U00000609-\U0000060A\U0000060C-\U0000060D\U0000061B\U0000061E-\U0000061F\U0000066A-\U0000066D\U000006D4\U00000700-\U0000070D\U000007F7-\U000007F9\U00000830-\U0000083E\U0000085E\U00000964-\U00000965\U00000970\U00000AF0\U00000DF4\U00000E4F\U00000E5A-\U00000E5B\U00000F04-\U00000F12\U00000F14\U00000F3A-\U00000F3D\U00000F85\U00000FD0-\U00000FD4\U00000FD9-\U00000FDA\U0000104A-\U0000104F\U000010FB\U00001360-\U00001368\U00001400\U0000166D-\U0000166E\U0000169B-\U0000169C\U000016EB-\U000016ED\U00001735-\U00001736\U000017D4-\U000017D6\U000017D8-\U000017DA\U00001800-\U0000180A\U00001944-\U00001945\U00001A1E-\U00001A1F\U00001AA0-\U00001AA6\U00001AA8-\U00001AAD\U00001B5A-\U00001B60\U00001BFC-\U00001BFF\U00001C3B-\U00001C3F\U00001C7E-\U00001C7F\U00001CC0-\U00001CC7\U00001CD3\U00002010-\U00002027\U00002030-\U00002043\U00002045-\U00002051\U00002053-\U0000205E\U0000207D-\U0000207E\U0000208D-\U0000208E\U00002308-\U0000230B\U00002329-\U0000232A\U00002768-\U00002775\U000027C5-\U000027C6\U000027E6-\U000027EF\U00002983-\U00002998\U000029D8-\U000029DB\U000029FC-\U000029FD\U00002CF9-\U00002CFC\U00002CFE-\U00002CFF\U00002D70\U00002E00-\U00002E2E\U00002E30-\U00002E42\U00003001-\U00003003\U00003008-\U00003011\U00003014-\U0000301F\U00003030\U0000303D\U000030A0\U000030FB\U0000A4FE-\U0000A4FF\U0000A60D-\U0000A60F\U0000A673\U0000A67E\U0000A6F2-\U0000A6F7\U0000A874-\U0000A877\U0000A8CE-\U0000A8CF\U0000A8F8-\U0000A8FA\U0000A8FC\U0000A92E-\U0000A92F\U0000A95F\U0000A9C1-\U0000A9CD\U0000A9DE-\U0000A9DF\U0000AA5C-\U0000AA5F\U0000AADE-\U0000AADF\U0000AAF0-\U0000AAF1\U0000ABEB\U0000FD3E-\U0000FD3F\U0000FE10-\U0000FE19\U0000FE30-\U0000FE52\U0000FE54-\U0000FE61\U0000FE63\U0000FE68\U0000FE6A-\U0000FE6B\U0000FF01-\U0000FF03\U0000FF05-\U0000FF0A\U0000FF0C-\U0000FF0F\U0000FF1A-\U0000FF1B\U0000FF1F-\U0000FF20\U0000FF3B-\U0000FF3D\U0000FF3F\U0000FF5B\U0000FF5D\U0000FF5F-\U0000FF65\U00010100-\U00010102\U0001039F\U000103D0\U0001056F\U00010857\U0001091F\U0001093F\U00010A50-\U00010A58\U00010A7F\U00010AF0-\U00010AF6\U00010B39-\U00010B3F\U00010B99-\U00010B9C\U00011047-\U0001104D\U000110BB-\U000110BC\U000110BE-\U000110C1\U00011140-\U00011143\U00011174-\U00011175\U000111C5-\U000111C9\U000111CD\U000111DB\U000111DD-\U000111DF\U00011238-\U0001123D\U000112A9\U000114C6\U000115C1-\U000115D7\U00011641-\U00011643\U0001173C-\U0001173E\U00012470-\U00012474\U00016A6E-\U00016A6F\U00016AF5\U00016B37-\U00016B3B\U00016B44\U0001BC9F\U0001DA87-\U0001DA8B]"""
# Rust's char::is_numeric (Nd, Nl, No) as tokenizers 0.23 has it, read off the library.
_NUMERIC: Final = r"""[\U00000030-\U00000039\U000000B2-\U000000B3\U000000B9\U000000BC-\U000000BE\U00000660-\U00000669\U000006F0-\U000006F9\U000007C0-\U000007C9\U00000966-\U0000096F\U000009E6-\U000009EF\U000009F4-\U000009F9\U00000A66-\U00000A6F\U00000AE6-\U00000AEF\U00000B66-\U00000B6F\U00000B72-\U00000B77\U00000BE6-\U00000BF2\U00000C66-\U00000C6F\U00000C78-\U00000C7E\U00000CE6-\U00000CEF\U00000D58-\U00000D5E\U00000D66-\U00000D78\U00000DE6-\U00000DEF\U00000E50-\U00000E59\U00000ED0-\U00000ED9\U00000F20-\U00000F33\U00001040-\U00001049\U00001090-\U00001099\U00001369-\U0000137C\U000016EE-\U000016F0\U000017E0-\U000017E9\U000017F0-\U000017F9\U00001810-\U00001819\U00001946-\U0000194F\U000019D0-\U000019DA\U00001A80-\U00001A89\U00001A90-\U00001A99\U00001B50-\U00001B59\U00001BB0-\U00001BB9\U00001C40-\U00001C49\U00001C50-\U00001C59\U00002070\U00002074-\U00002079\U00002080-\U00002089\U00002150-\U00002182\U00002185-\U00002189\U00002460-\U0000249B\U000024EA-\U000024FF\U00002776-\U00002793\U00002CFD\U00003007\U00003021-\U00003029\U00003038-\U0000303A\U00003192-\U00003195\U00003220-\U00003229\U00003248-\U0000324F\U00003251-\U0000325F\U00003280-\U00003289\U000032B1-\U000032BF\U0000A620-\U0000A629\U0000A6E6-\U0000A6EF\U0000A830-\U0000A835\U0000A8D0-\U0000A8D9\U0000A900-\U0000A909\U0000A9D0-\U0000A9D9\U0000A9F0-\U0000A9F9\U0000AA50-\U0000AA59\U0000ABF0-\U0000ABF9\U0000FF10-\U0000FF19\U00010107-\U00010133\U00010140-\U00010178\U0001018A-\U0001018B\U000102E1-\U000102FB\U00010320-\U00010323\U00010341\U0001034A\U000103D1-\U000103D5\U000104A0-\U000104A9\U00010858-\U0001085F\U00010879-\U0001087F\U000108A7-\U000108AF\U000108FB-\U000108FF\U00010916-\U0001091B\U000109BC-\U000109BD\U000109C0-\U000109CF\U000109D2-\U000109FF\U00010A40-\U00010A48\U00010A7D-\U00010A7E\U00010A9D-\U00010A9F\U00010AEB-\U00010AEF\U00010B58-\U00010B5F\U00010B78-\U00010B7F\U00010BA9-\U00010BAF\U00010CFA-\U00010CFF\U00010D30-\U00010D39\U00010D40-\U00010D49\U00010E60-\U00010E7E\U00010F1D-\U00010F26\U00010F51-\U00010F54\U00010FC5-\U00010FCB\U00011052-\U0001106F\U000110F0-\U000110F9\U00011136-\U0001113F\U000111D0-\U000111D9\U000111E1-\U000111F4\U000112F0-\U000112F9\U00011450-\U00011459\U000114D0-\U000114D9\U00011650-\U00011659\U000116C0-\U000116C9\U000116D0-\U000116E3\U00011730-\U0001173B\U000118E0-\U000118F2\U00011950-\U00011959\U00011BF0-\U00011BF9\U00011C50-\U00011C6C\U00011D50-\U00011D59\U00011DA0-\U00011DA9\U00011DE0-\U00011DE9\U00011F50-\U00011F59\U00011FC0-\U00011FD4\U00012400-\U0001246E\U00016130-\U00016139\U00016A60-\U00016A69\U00016AC0-\U00016AC9\U00016B50-\U00016B59\U00016B5B-\U00016B61\U00016D70-\U00016D79\U00016E80-\U00016E96\U00016FF4-\U00016FF6\U0001CCF0-\U0001CCF9\U0001D2C0-\U0001D2D3\U0001D2E0-\U0001D2F3\U0001D360-\U0001D378\U0001D7CE-\U0001D7FF\U0001E140-\U0001E149\U0001E2F0-\U0001E2F9\U0001E4F0-\U0001E4F9\U0001E5F1-\U0001E5FA\U0001E8C7-\U0001E8CF\U0001E950-\U0001E959\U0001EC71-\U0001ECAB\U0001ECAD-\U0001ECAF\U0001ECB1-\U0001ECB4\U0001ED01-\U0001ED2D\U0001ED2F-\U0001ED3D\U0001F100-\U0001F10C\U0001FBF0-\U0001FBF9]"""


# Unicode's White_Space property (Rust's char::is_whitespace), stable since Unicode 6.3.
# Spelled out because stdlib re's \s is str.isspace, which also holds U+001C..U+001F.
_WHITE_SPACE: Final = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"


class BertPreTokenizer(PreTokenizer):
    """BERT: split on whitespace (dropped), then every punctuation character alone.

    Cost: both classes are explicit sets, so stdlib ``re`` is exact on any text (about
    10 MB/s, 4x the ``regex`` module here) and on ASCII text a translation with ASCII
    classes runs at about 30 MB/s.
    """

    def cut_rule(self) -> Cut:
        """Every ASCII whitespace character splits."""
        return Cut(CutKind.WHITESPACE)

    _re = re.compile(rf"{_PUNCT}|[^{_WHITE_SPACE}{_PUNCT[1:-1]}]+")
    _re_ascii = re.compile(r"[!-/:-@\[-`{-~]|[^\t\n\x0b\x0c\r !-/:-@\[-`{-~]+")
    _findall = _re.findall
    _findall_ascii = _re_ascii.findall

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        findall, findall_ascii = self._findall, self._findall_ascii
        return [s for p in pieces for s in (findall_ascii(p) if p.isascii() else findall(p))]

    def pre_tokenize_spans(self, pieces: list[SpannedPiece]) -> list[SpannedPiece]:
        out: list[SpannedPiece] = []
        for piece in pieces:
            found = (self._re_ascii if piece[0].isascii() else self._re).finditer(piece[0])
            out += _sliced(piece, [m.span() for m in found])
        return out

    def to_json(self) -> dict[str, object]:
        return {"type": "BertPreTokenizer"}


class Punctuation(PreTokenizer):
    """Split off punctuation characters with a delimiter behavior (default Isolated)."""

    _regex = regex.compile(_PUNCT)

    def __init__(self, behavior: str = "Isolated") -> None:
        self.behavior = behavior

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        # An explicit class: no Unicode-version stand-ins (see _as_unicode16).
        finditer = self._regex.finditer
        return [s for p in pieces for s in _split_spans(p, [m.span() for m in finditer(p)], self.behavior, False)]

    def pre_tokenize_spans(self, pieces: list[SpannedPiece]) -> list[SpannedPiece]:
        finditer = self._regex.finditer
        return [
            s
            for piece in pieces
            for s in _sliced(
                piece, _split_ranges(piece[0], [m.span() for m in finditer(piece[0])], self.behavior, False)
            )
        ]

    def to_json(self) -> dict[str, object]:
        return {"type": "Punctuation", "behavior": self.behavior}


class Digits(PreTokenizer):
    """Split digits off; ``individual_digits`` makes each digit its own piece."""

    def __init__(self, *, individual_digits: bool = False) -> None:
        self.individual_digits = individual_digits
        # Rust's char::is_numeric, explicit (_NUMERIC): regex's \p{N} follows its release.
        self._regex = re.compile(_NUMERIC if individual_digits else _NUMERIC + "+")

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        # Rust's own tables (Unicode 17 as the regex module), not Oniguruma's 16.0.
        finditer = self._regex.finditer
        return [s for p in pieces for s in _split_spans(p, [m.span() for m in finditer(p)], "Isolated", False)]

    def pre_tokenize_spans(self, pieces: list[SpannedPiece]) -> list[SpannedPiece]:
        finditer = self._regex.finditer
        return [
            s
            for piece in pieces
            for s in _sliced(
                piece, _split_ranges(piece[0], [m.span() for m in finditer(piece[0])], "Isolated", False)
            )
        ]

    def to_json(self) -> dict[str, object]:
        return {"type": "Digits", "individual_digits": self.individual_digits}


# A named pattern (or tokenizers' GPT-2 spelling) from its Oniguruma spelling.
_BY_ONIGURUMA: Final = {oniguruma_spelling(p): p for p in _SPACE_SAFE} | {p: p for p in _SPACE_SAFE}


def _byte_level_shape(pre: PreTokenizer) -> tuple[RegexSplit, bool, Spelling] | None:
    found = byte_level_regex(pre)
    return None if found is None else (found[0], found[1], Spelling.BYTE_LEVEL)


def _regex_cut_rule(pre: ByteLevel | Sequence) -> Cut:
    shape = pre.byte_level_split()
    if shape is None:
        return NO_CUT
    split, prefix_space, _ = shape
    return Cut(
        CutKind.REGEX,
        split=split.split_exact,
        last_space_apart=splits_last_space_apart(split.pattern),
        prefix_space=prefix_space,
    )


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


class Sequence(PreTokenizer):
    """Apply pre-tokenizers in order, each to every piece of the one before."""

    def byte_level_split(self) -> tuple[RegexSplit, bool, Spelling] | None:
        return self._shape

    def cut_rule(self) -> Cut:
        return _regex_cut_rule(self)

    def __init__(self, pretokenizers: list[PreTokenizer]) -> None:
        self.pretokenizers = pretokenizers
        self._shape = _byte_level_shape(self)

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

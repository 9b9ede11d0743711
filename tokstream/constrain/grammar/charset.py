"""Sets of Unicode scalar values as inclusive code-point ranges, and Python ``re``'s
character classes.

A set is a ``Ranges`` tuple of inclusive ``(lo, hi)`` pairs: sorted, disjoint,
non-adjacent (so each set has exactly one spelling and compares with ``==``), within
0..0x10FFFF and never touching the surrogates U+D800-U+DFFF, which are no characters
of any UTF-8 text. ``normalize`` brings any list of pairs to that form; the other
operations take and return normalized sets and cost time linear in their sizes.

>>> union(((0x61, 0x63),), ((0x64, 0x64),))
((97, 100),)
>>> negate(DOT) == ((0x0A, 0x0A),)
True
"""

from __future__ import annotations

import array
import bisect
import functools
import re
import sys
from collections.abc import Iterable

__all__ = [
    "ANY",
    "DOT",
    "MAX_CODE_POINT",
    "Ranges",
    "contains",
    "intersect",
    "negate",
    "normalize",
    "python_class",
    "union",
]

Ranges = tuple[tuple[int, int], ...]

#: The largest code point.
MAX_CODE_POINT = 0x10FFFF
_SURROGATE_LO = 0xD800
_SURROGATE_HI = 0xDFFF


def normalize(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """The set covered by ``ranges`` in normal form: sorted, overlapping and adjacent
    ranges merged, surrogates cut out.

    Raises ``ValueError`` for a pair with ``lo > hi`` or outside 0..0x10FFFF.

    >>> normalize([(5, 9), (0, 3), (4, 4), (0xD000, 0xE000)])
    ((0, 9), (53248, 55295), (57344, 57344))
    """
    pairs = []
    for lo, hi in ranges:
        if not 0 <= lo <= hi <= MAX_CODE_POINT:
            raise ValueError(f"bad code-point range ({lo:#x}, {hi:#x}): need 0 <= lo <= hi <= 0x10FFFF")
        # Split around the surrogate block so merging below can never bridge it.
        if lo < _SURROGATE_LO:
            pairs.append((lo, min(hi, _SURROGATE_LO - 1)))
        if hi > _SURROGATE_HI:
            pairs.append((max(lo, _SURROGATE_HI + 1), hi))
    pairs.sort()
    out: list[tuple[int, int]] = []
    for lo, hi in pairs:
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return tuple(out)


def union(*sets: Ranges) -> Ranges:
    """Every code point in any of the sets.

    >>> union(((1, 2),), ((2, 5),), ((7, 7),))
    ((1, 5), (7, 7))
    """
    return normalize(pair for s in sets for pair in s)


def intersect(a: Ranges, b: Ranges) -> Ranges:
    """The code points in both ``a`` and ``b``.

    >>> intersect(((0, 10), (20, 30)), ((5, 25),))
    ((5, 10), (20, 25))
    """
    out: list[tuple[int, int]] = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo = max(a[i][0], b[j][0])
        hi = min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        # Drop whichever range ends first: it can overlap nothing further on.
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


def negate(a: Ranges) -> Ranges:
    """The scalar values not in ``a`` (surrogates stay out).

    >>> negate(((0, 0x60), (0x62, MAX_CODE_POINT))) == ((0x61, 0x61),)
    True
    """
    out: list[tuple[int, int]] = []
    start = 0
    for lo, hi in a:
        if lo > start:
            out.append((start, lo - 1))
        start = hi + 1
    if start <= MAX_CODE_POINT:
        out.append((start, MAX_CODE_POINT))
    return normalize(out)


def contains(r: Ranges, cp: int) -> bool:
    """Whether code point ``cp`` is in the set (binary search).

    >>> contains(((0x30, 0x39),), ord("7")), contains(((0x30, 0x39),), ord("a"))
    (True, False)
    """
    i = bisect.bisect_right(r, (cp, MAX_CODE_POINT + 1)) - 1
    return i >= 0 and r[i][0] <= cp <= r[i][1]


#: Every Unicode scalar value.
ANY: Ranges = ((0, _SURROGATE_LO - 1), (_SURROGATE_HI + 1, MAX_CODE_POINT))
#: What ``.`` matches without DOTALL: every scalar value but ``"\\n"``.
DOT: Ranges = ((0, 0x09), (0x0B, _SURROGATE_LO - 1), (_SURROGATE_HI + 1, MAX_CODE_POINT))


@functools.cache
def _all_scalars() -> str:
    # One string holding each scalar value once, in code-point order; decoding one
    # UTF-32 buffer is an order of magnitude quicker than joining a million chr()s.
    code = next(t for t in "IL" if array.array(t).itemsize == 4)
    points = array.array(code, range(_SURROGATE_LO))
    points.extend(range(_SURROGATE_HI + 1, MAX_CODE_POINT + 1))
    return points.tobytes().decode("utf-32-le" if sys.byteorder == "little" else "utf-32-be")


def _code_point(index: int) -> int:
    # Index into _all_scalars() -> code point (the surrogate block is skipped there).
    return index if index < _SURROGATE_LO else index + (_SURROGATE_HI - _SURROGATE_LO + 1)


@functools.cache
def python_class(letter: str) -> Ranges:
    """The scalar values that Python's ``re`` matches with ``\\d \\w \\s \\D \\W \\S``
    in a ``str`` pattern without flags, on the running Python (its Unicode version).

    Computed, not tabulated: the running ``re`` scans one string of all 1,112,064
    scalar values once per letter and each match span becomes a range, so the sets are
    ``re``'s by construction. The first call builds that string (about 4 MB, kept
    cached; some 70 ms) and each letter's scan takes some 10-50 ms; later calls are
    cached lookups.

    >>> python_class("d")[:2]
    ((48, 57), (1632, 1641))
    >>> python_class("S") == negate(python_class("s"))
    True
    """
    if letter not in ("d", "w", "s", "D", "W", "S"):
        raise ValueError(f"no Python regex class \\{letter}; expected one of d w s D W S")
    text = _all_scalars()
    # A span crossing the surrogate gap maps to a range over it; normalize cuts it out.
    return normalize((_code_point(m.start()), _code_point(m.end() - 1)) for m in re.finditer(f"\\{letter}+", text))

r"""Match by Unicode 16.0 classes, as tiktoken and ``tokenizers`` do, on any ``regex`` release.

tiktoken's Rust engine classifies characters by Unicode 16.0, and so does ``tokenizers``'
Oniguruma; the ``regex`` module follows whatever version its release ships (17.0 in
2026.5: CJK Extension J became letters, U+0295 moved from Ll to Lo). Spelling the
classes out as 16.0 ranges makes matching ~15x slower, so the patterns keep ``\p{..}``
and ``_as_unicode16`` flags the rare text holding a character whose class differs; such
a text is matched as a copy in which each such character is replaced by a stand-in of
its Unicode 16.0 class (same length), and the original text is sliced at the same
offsets. ``RegexSplit.needs_unicode16`` / ``findall_unicode16`` and the Hugging Face
pre-tokenizers that match ``\p{..}`` patterns (``Split``, ``ByteLevel``, ``Whitespace``,
``WhitespaceSplit``) go through here.

Which characters differ depends on the installed ``regex`` (``pyproject.toml`` allows
any release from 2024.9.11), so no table of them is stored. ``_unicode16.py`` (made by
``tools/gen_unicode16.py`` from ``unicodedata2`` 16.0.0) holds only Unicode 16.0 facts:
the unassigned code points and the code points of each letter, mark and number
category, as ranges. ``unicode16_fixes`` compares them with the installed ``regex``
once per process, on first use.

Not handled: only the classes tiktoken's patterns use are corrected (``\p{L}``, its five
categories, ``\p{M}``, ``\p{N}``). A mark or number that only moved between
subcategories (``Mn`` to ``Mc``) is left alone, and so is any other property a
``tokenizers`` ``Split`` pattern may ask for (``\p{P}``, a script, the ``Alphabetic`` of
``\w``). ``\s`` needs nothing: ``White_Space`` has not changed since Unicode 6.3.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from itertools import chain
from typing import Final

import numpy as np
import regex

# A stand-in character per Unicode 16.0 general category, for findall_unicode16. Any
# character the patterns treat as "other" (not a letter, mark, number or whitespace,
# and none of the literals ' / \r \n) stands in for every other category.
_STAND_IN: Final = {
    "Lu": "Q",
    "Ll": "q",
    "Lt": "\u01c5",
    "Lm": "\u02b0",
    "Lo": "\u05d0",
    "Mn": "\u0300",
    "Mc": "\u0903",
    "Me": "\u20dd",
    "Nd": "5",
    "Nl": "\u216b",
    "No": "\u00b2",
}
_OTHER: Final = "\u0378"  # unassigned in every Unicode version so far

# For each Unicode 16.0 category, the characters of it that the installed regex puts in
# or out of another class the patterns use (\p{L}, \p{Lu}, \p{Ll}, \p{Lt}, \p{Lm},
# \p{Lo}, \p{M}, \p{N}). General categories partition the code points, so that is a
# letter outside its own category, a mark that is no mark, a number that is no number.
# Each class is repeated: findall then returns a few runs, not one string per character
# (2.5x faster on the unassigned code points, which regex 2026.11 assigns 17,810 of).
_MOVED: Final = {
    "Lu": r"\P{Lu}+",
    "Ll": r"\P{Ll}+",
    "Lt": r"\P{Lt}+",
    "Lm": r"\P{Lm}+",
    "Lo": r"\P{Lo}+",
    "Mn": r"\P{M}+",
    "Mc": r"\P{M}+",
    "Me": r"\P{M}+",
    "Nd": r"\P{N}+",
    "Nl": r"\P{N}+",
    "No": r"\P{N}+",
}
# Unassigned in 16.0 but assigned by regex (whatever its class: to 16.0 it is "other").
_NEWLY_ASSIGNED: Final = r"\P{Cn}+"
# Assigned in 16.0 as neither letter, mark nor number, but one in regex: [\p{L}\p{M}\p{N}]+,
# written as its complement (the categories partition), which regex scans 2.5x faster.
_NEWLY_CLASSED: Final = r"[^\p{C}\p{P}\p{S}\p{Z}]+"


def _ranges(spec: str) -> list[tuple[int, int]]:
    """The ``(first, last)`` ranges of a ``_unicode16`` string (``"41-5A C0-D6 100 ..."``)."""
    out: list[tuple[int, int]] = []
    for item in spec.split():
        first, _, last = item.partition("-")
        out.append((int(first, 16), int(last or first, 16)))
    return out


def _text_of(ranges: Iterable[tuple[int, int]]) -> str:
    """The code points of the ``(first, last)`` ``ranges``, in order, as one string
    (lone surrogates included)."""
    # int32 throughout (code points and their count fit): the few-MB temporaries are
    # most of the cost here.
    r = np.array(list(ranges), dtype=np.int32).reshape(-1, 2)
    lengths = r[:, 1] - r[:, 0] + 1
    points = np.repeat(r[:, 0] - (np.cumsum(lengths, dtype=np.int32) - lengths), lengths)
    points += np.arange(len(points), dtype=np.int32)
    return points.astype("<i4", copy=False).tobytes().decode("utf-32-le", "surrogatepass")


def _found(pattern: str, ranges: Iterable[tuple[int, int]]) -> str:
    """The characters of ``ranges`` that ``pattern`` matches, as one string."""
    return "".join(regex.findall(pattern, _text_of(ranges)))


def _gaps(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The ``(first, last)`` ranges of the code points that no range of ``ranges`` holds."""
    out: list[tuple[int, int]] = []
    pos = 0
    for a, b in sorted(ranges):
        if a > pos:
            out.append((pos, a - 1))
        pos = b + 1
    if pos <= 0x10FFFF:
        out.append((pos, 0x10FFFF))
    return out


@functools.lru_cache(maxsize=1)
def unicode16_fixes() -> tuple[regex.Pattern[str] | None, dict[int, str]]:
    """The guard pattern and the translate table for findall_unicode16.

    Computed once per process, on first use, for the installed ``regex``: each code
    point is tested once, in C (one ``regex.findall`` per Unicode 16.0 category over a
    string of its code points), so any ``regex`` release needs no new data.

    Cost: about 15 ms on first use, with a 12 MB peak of temporary arrays and strings,
    and 1.3 MB kept. The 820k code points unassigned in 16.0 take most of it; they were
    scanned at run time already when the differing assigned ones were stored at build
    time, for one ``regex`` release (dropped: wrong for every other release), and that
    cost as much. The table holds one entry per code point that differs (17,811 with
    regex 2026.11.19, nearly all newly assigned), the guard one class of their ranges.
    """
    from ._unicode16 import CATEGORIES, UNASSIGNED

    unassigned = _ranges(UNASSIGNED)
    by_category = {cat: _ranges(spec) for cat, spec in CATEGORIES.items()}
    table = dict.fromkeys(map(ord, _found(_NEWLY_ASSIGNED, unassigned)), _OTHER)
    for cat, ranges in by_category.items():
        table.update(dict.fromkeys(map(ord, _found(_MOVED[cat], ranges)), _STAND_IN[cat]))
    rest = _gaps(chain(unassigned, *by_category.values()))
    table.update(dict.fromkeys(map(ord, _found(_NEWLY_CLASSED, rest)), _OTHER))
    if not table:
        return None, table
    runs: list[list[int]] = []
    for cp in sorted(table):
        if runs and runs[-1][1] == cp - 1:
            runs[-1][1] = cp
        else:
            runs.append([cp, cp])
    body = "".join(f"\\U{a:08X}-\\U{b:08X}" for a, b in runs)
    return regex.compile(f"[{body}]"), table


def _as_unicode16(text: str) -> str:
    """``text`` with each character whose class changed after Unicode 16.0 replaced by a
    stand-in of its 16.0 class (same length), or ``text`` itself when there is none.

    ``tokenizers``' regex engine, like tiktoken's, is on Unicode 16.0; matching the
    result and slicing the original text at the same offsets gives its pieces.
    """
    if text.isascii():
        return text
    guard, table = unicode16_fixes()
    if guard is None or guard.search(text) is None:
        return text
    return text.translate(table)


def findall16(pattern: regex.Pattern[str], text: str) -> list[str]:
    """``findall`` under Unicode 16.0 classes (see ``_as_unicode16``)."""
    probe = _as_unicode16(text)
    if probe is text:
        return pattern.findall(text)
    return [text[m.start() : m.end()] for m in pattern.finditer(probe)]


def spans16(pattern: regex.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(_as_unicode16(text))]


def onig_spans16(pattern: regex.Pattern[str], text: str) -> list[tuple[int, int]]:
    """``spans16`` with Oniguruma's rule for empty matches (the ``onig`` crate's
    ``find_iter``, which ``tokenizers`` splits with): an empty match where the previous
    match ended is skipped and the search goes on one character later. Python's
    ``finditer`` takes that empty match, and after an empty match looks for a
    non-empty one at the same place, which Oniguruma never does. Only patterns that
    can match the empty string need this (``Split`` decides once)."""
    probe = _as_unicode16(text)
    search = pattern.search
    out: list[tuple[int, int]] = []
    pos, last_end, n = 0, -1, len(probe)
    while pos <= n:
        m = search(probe, pos)
        if m is None:
            break
        start, end = m.span()
        if start == end == last_end:
            pos = end + 1
            continue
        out.append((start, end))
        last_end = pos = end
    return out

r"""Match by Unicode 16.0 classes, as tiktoken and ``tokenizers`` do.

tiktoken's Rust engine classifies characters by Unicode 16.0, and so does ``tokenizers``'
Oniguruma; the ``regex`` module follows whatever version its release ships (17.0 in
2026.5: CJK Extension J became letters, U+0295 moved from Ll to Lo). Spelling the
classes out as 16.0 ranges makes matching ~15x slower, so the patterns keep ``\p{..}``
and ``_as_unicode16`` flags the rare text holding a character whose class differs; such
a text is matched as a copy in which each such character is replaced by a stand-in of
its Unicode 16.0 class (same length), and the original text is sliced at the same
offsets. ``RegexSplit.needs_unicode16`` / ``findall_unicode16`` and the Hugging Face
pre-tokenizers that match ``\p{..}`` patterns (``Split``, ``ByteLevel``, ``Whitespace``,
``WhitespaceSplit``) go through here. ``tools/gen_unicode16.py`` records the data
(``_unicode16``).
"""

from __future__ import annotations

import functools
from typing import Final

import numpy as np
import regex

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

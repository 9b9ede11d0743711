"""``UnicodeScripts``: cut text where the script changes, as ``tokenizers``' ``UnicodeScripts``.

A piece starts at each character whose script differs from the script of the last
character before it that has one; characters of script ``Any`` never start a piece
and stay in the piece they fall in. Characters of script ``Any`` *before* the first
scripted character of a piece are dropped, as ``tokenizers`` drops them (its split
list starts at the first cut), so ``"  abc"`` gives ``["abc"]`` and ``"   "`` nothing.

The scripts are ``tokenizers``' own (``_scripts``, read off the library by
``tools/gen_unicode_scripts.py``): an old Unicode table in which Hiragana, Katakana and
U+30FC count as Han, the space and every character the table lacks are ``Any``, and
Common (punctuation, digits, symbols) is a script like the others (``"a1b"`` is three
pieces). Not Unicode 16's Script property: characters assigned since the library's
table are ``Any`` there.

Cost: building the class table on first use parses ~2,600 ranges (a few ms); per piece
one ``bisect`` and one regex match over the run (a negated class per script, compiled
on first use of that script).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import cache

from ._scripts import SCRIPTED, SCRIPTS
from .base import PreTokenizer, SpannedPiece, sliced

__all__ = ["UnicodeScripts"]

_ITEM = re.compile(r"\\U([0-9A-F]{8})(?:-\\U([0-9A-F]{8}))?")
_SCRIPTED = re.compile(SCRIPTED)


@cache
def _classes() -> tuple[list[int], list[int]]:
    """``(starts, classes)``: code point ``c`` is of class ``classes[bisect_right(starts, c) - 1]``
    (0: ``Any``; ``k``: ``SCRIPTS[k - 1]``)."""
    ranges = sorted(
        (int(a, 16), int(b or a, 16), k) for k, (_, cls) in enumerate(SCRIPTS, 1) for a, b in _ITEM.findall(cls)
    )
    starts: list[int] = []
    classes: list[int] = []
    pos = 0
    for a, b, k in ranges:
        if a > pos:  # a gap: Any
            starts.append(pos)
            classes.append(0)
        starts.append(a)
        classes.append(k)
        pos = b + 1
    starts.append(pos)
    classes.append(0)
    return starts, classes


@cache
def _run(k: int) -> re.Pattern[str]:
    """The run of class ``k`` after its first character: its own characters and ``Any``."""
    return re.compile(f"(?:{SCRIPTS[k - 1][1]}|[^{SCRIPTED[1:]})*")


class UnicodeScripts(PreTokenizer):
    """Cut each piece where the (``tokenizers``) script changes (module notes).

    >>> UnicodeScripts().pre_tokenize(["どこで生れ。Yes", "  Apples are りんご 林檎"])
    ['どこで生れ', '。', 'Yes', 'Apples are ', 'りんご 林檎']
    """

    type_name = "UnicodeScripts"

    @staticmethod
    def _ranges(text: str) -> list[tuple[int, int]]:
        m = _SCRIPTED.search(text)
        if m is None:
            return []
        starts, classes = _classes()
        pos, n = m.start(), len(text)
        out: list[tuple[int, int]] = []
        while pos < n:
            # text[pos] has a script: the first one, or where the last run stopped.
            k = classes[bisect_right(starts, ord(text[pos])) - 1]
            end = _run(k).match(text, pos + 1).end()  # type: ignore[union-attr]  # * always matches
            out.append((pos, end))
            pos = end
        return out

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        return [p[a:b] for p in pieces for a, b in self._ranges(p)]

    def pre_tokenize_spans(self, pieces: list[SpannedPiece]) -> list[SpannedPiece]:
        return [s for piece in pieces for s in sliced(piece, self._ranges(piece[0]))]

    def to_json(self) -> dict[str, object]:
        return {"type": "UnicodeScripts"}

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

Cost: the class table (one byte per code point, 1.1 MB) is built on first use from the
~2,600 ranges (a few ms). A piece of up to 64 characters is walked in Python (one
``bytes`` index per character); a longer one is looked up in numpy (the UTF-32 code
points index the table; the cuts are where the class of the scripted characters
changes). A regex per script (``[K]|[^scripted]`` runs) was tried first: ``re``
matches a class holding astral ranges by scanning its ranges, 3 s for 10^6 spaces.
"""

from __future__ import annotations

import re
from functools import cache

import numpy as np

from ._scripts import SCRIPTS
from .base import PreTokenizer, SpannedPiece, sliced

__all__ = ["UnicodeScripts"]

_ITEM = re.compile(r"\\U([0-9A-F]{8})(?:-\\U([0-9A-F]{8}))?")
#: Texts up to this long are walked in Python; longer ones in numpy.
_SHORT = 64


@cache
def _table() -> bytes:
    """Each code point's class, one byte each (0: ``Any``; ``k``: ``SCRIPTS[k - 1]``)."""
    if len(SCRIPTS) > 255:
        raise RuntimeError("_scripts.py holds more script classes than one byte can number")
    table = np.zeros(0x110000, dtype=np.uint8)
    for k, (_, cls) in enumerate(SCRIPTS, 1):
        for a, b in _ITEM.findall(cls):
            table[int(a, 16) : int(b or a, 16) + 1] = k
    return table.tobytes()


def _starts(text: str) -> list[int]:
    """Where the pieces of ``text`` start: at each character whose class is not ``Any``
    and differs from the last such class before it."""
    table = _table()
    if len(text) <= _SHORT:
        out: list[int] = []
        last = 0
        for i, ch in enumerate(text):
            k = table[ord(ch)]
            if k and k != last:
                out.append(i)
                last = k
        return out
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    classes = np.frombuffer(table, dtype=np.uint8)[codes]
    scripted = np.flatnonzero(classes)
    if not scripted.size:
        return []
    own = classes[scripted]
    changes = np.empty(own.size, dtype=bool)
    changes[0] = True
    np.not_equal(own[1:], own[:-1], out=changes[1:])
    starts: list[int] = scripted[changes].tolist()
    return starts


class UnicodeScripts(PreTokenizer):
    """Cut each piece where the (``tokenizers``) script changes (module notes).

    >>> UnicodeScripts().pre_tokenize(["どこで生れ。Yes", "  Apples are りんご 林檎"])
    ['どこで生れ', '。', 'Yes', 'Apples are ', 'りんご 林檎']
    """

    type_name = "UnicodeScripts"

    @staticmethod
    def _ranges(text: str) -> list[tuple[int, int]]:
        starts = _starts(text)
        return list(zip(starts, [*starts[1:], len(text)]))

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        return [p[a:b] for p in pieces for a, b in self._ranges(p)]

    def pre_tokenize_spans(self, pieces: list[SpannedPiece]) -> list[SpannedPiece]:
        return [s for piece in pieces for s in sliced(piece, self._ranges(piece[0]))]

    def to_json(self) -> dict[str, object]:
        return {"type": "UnicodeScripts"}

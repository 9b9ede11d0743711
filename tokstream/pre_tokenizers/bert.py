"""``BertPreTokenizer``, as ``tokenizers``' (BERT's basic tokenizer after normalization).

Splits on whitespace (dropped), then cuts every punctuation character out alone, with
``tokenizers``' own classes: Unicode ``White_Space`` and its ``is_punctuation``
(``_tables.PUNCT``, read off the library), so the pieces equal ``tokenizers``' on every
code point whatever the ``regex`` release.

Not handled: BERT's normalization (lower-casing, accent stripping, spaces around CJK
characters); that is ``tokstream.normalizers.BertNormalizer``.
"""

from __future__ import annotations

import re
from typing import Final

from ..stability import Cut, CutKind
from ._tables import PUNCT
from .base import PreTokenizer, SpannedPiece, sliced

# Unicode's White_Space property (Rust's char::is_whitespace), stable since Unicode 6.3.
# Spelled out because stdlib re's \s is str.isspace, which also holds U+001C..U+001F.
_WHITE_SPACE: Final = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"


class BertPreTokenizer(PreTokenizer):
    """BERT: split on whitespace (dropped), then every punctuation character alone.

    Cost: both classes are explicit sets, so stdlib ``re`` is exact on any text (about
    10 MB/s, 4x the ``regex`` module here) and on ASCII text a translation with ASCII
    classes runs at about 30 MB/s.
    """

    type_name = "BertPreTokenizer"

    def cut_rule(self) -> Cut:
        """Every ASCII whitespace character splits."""
        return Cut(CutKind.WHITESPACE)

    _re = re.compile(rf"{PUNCT}|[^{_WHITE_SPACE}{PUNCT[1:-1]}]+")
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
            out += sliced(piece, [m.span() for m in found])
        return out

    def to_json(self) -> dict[str, object]:
        return {"type": "BertPreTokenizer"}

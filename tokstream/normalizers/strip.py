r"""``Strip`` (leading and trailing whitespace) and ``StripAccents`` (combining marks).

Both as ``tokenizers``' ``normalizers/strip.rs``. ``Strip`` removes Unicode
``White_Space`` (``_WHITE_SPACE``, what Rust's ``str::trim`` removes), not the whitespace
of ``str.strip()``, which also has U+001C..U+001F. ``StripAccents`` removes the combining
marks (Mn, Mc, Me) of the crate ``unicode-normalization-alignments``, whose tables
predate Unicode 10: ``STRIP_ACCENTS_MARKS`` (``_tables``) is that set, read off
``tokenizers`` for every code point, not the current categories.

Not here: decomposition. ``StripAccents`` removes marks only; as with ``tokenizers``, put
``NFD`` or ``NFKD`` before it to strip the accent of a precomposed ``'é'``.
"""

from __future__ import annotations

from typing import Final

from ..json_fields import Build, JsonObject, field
from ._tables import STRIP_ACCENTS_MARKS
from .base import CharSet, Normalizer, Spans, identity_spans, remove_aligned

# Unicode White_Space, what Rust's str::trim removes (Strip). Not str.strip(), whose
# whitespace also has U+001C..U+001F.
_WHITE_SPACE: Final = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

_STRIP_ACCENTS_CHARS: Final = CharSet(STRIP_ACCENTS_MARKS)


class Strip(Normalizer):
    r"""Remove leading and/or trailing Unicode whitespace (``White_Space``, as Rust's ``trim``).

    Cost: ``str.strip`` with an explicit character set (C).

    >>> Strip().normalize_aligned(" a\u3000")
    ('a', [(1, 2)])
    """

    __slots__ = ("strip_left", "strip_right")
    type_name = "Strip"

    space_local = True  # character-local, or acting at the ends only

    def keeps(self, char: str) -> bool:
        return True

    def __init__(self, *, strip_left: bool = True, strip_right: bool = True) -> None:
        self.strip_left = strip_left
        self.strip_right = strip_right

    def normalize(self, text: str) -> str:
        if self.strip_left:
            text = text.lstrip(_WHITE_SPACE)
        if self.strip_right:
            text = text.rstrip(_WHITE_SPACE)
        return text

    def normalize_continued(self, text: str) -> str:
        return text.rstrip(_WHITE_SPACE) if self.strip_right else text

    def normalize_aligned(self, text: str) -> tuple[str, Spans]:
        start = len(text) - len(text.lstrip(_WHITE_SPACE)) if self.strip_left else 0
        end = len(text.rstrip(_WHITE_SPACE)) if self.strip_right else len(text)
        end = max(start, end)
        return text[start:end], identity_spans(start, end)

    def to_json(self) -> dict[str, object]:
        return {"type": self.type_name, "strip_left": self.strip_left, "strip_right": self.strip_right}

    @classmethod
    def from_json(cls, obj: JsonObject, path: str = "normalizer", *, build: Build[Normalizer] | None = None) -> Strip:
        return cls(
            strip_left=field(obj, "strip_left", bool, path),
            strip_right=field(obj, "strip_right", bool, path),
        )


class StripAccents(Normalizer):
    r"""Remove combining marks (Mn, Mc, Me of ``tokenizers``' tables).

    It does not decompose: put ``NFD`` or ``NFKD`` before it to strip the accent of a
    precomposed ``'é'``.

    Cost: O(1) for ASCII text, else one ``re.sub``.

    >>> StripAccents().normalize("e\u0301te\u0301")
    'ete'
    """

    __slots__ = ()
    type_name = "StripAccents"

    space_local = True  # character-local, or acting at the ends only

    def keeps(self, char: str) -> bool:
        return True

    def normalize(self, text: str) -> str:
        if text.isascii():
            return text
        return _STRIP_ACCENTS_CHARS.remove(text)

    def normalize_aligned(self, text: str) -> tuple[str, Spans]:
        return remove_aligned(text, _STRIP_ACCENTS_CHARS.any)

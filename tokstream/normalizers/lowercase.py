r"""``Lowercase``: Rust's ``char::to_lowercase``, character by character.

``tokenizers`` keeps it in ``normalizers/utils.rs`` beside ``Sequence``; it has a module of
its own here, whose helpers ``BertNormalizer`` uses too (``rust_lower``,
``rust_lower_aligned``).

Rust's ``char::to_lowercase`` is Unicode 17.0, and ``Lowercase`` applies it to each
character on its own: the full mapping (``'İ'`` -> ``'i̇'``) as ``str.lower``, but without
the final-sigma rule (``'ΑΣ'`` -> ``'ασ'``, not ``'ας'``) and with the mappings Python's
tables lack. ``LOWER_ADDED`` (``_tables``, read off ``tokenizers``) holds Rust's mapping
of every character assigned after Unicode 13.0 (Python 3.10) that it lowercases;
``_LOWER_FIXES`` keeps those that the running Python lowercases differently, plus the
final sigma (checked on Python 3.10 to 3.13).

Not here: locale rules (Turkish and Lithuanian i), which neither Rust's
``to_lowercase`` nor ``str.lower`` apply.
"""

from __future__ import annotations

import re
from typing import Final

from ._tables import LOWER_ADDED
from .base import CharSet, Normalizer, Spans, identity_spans


def _lower_fixes() -> dict[int, str]:
    # Only the characters this Python lowercases differently; the final sigma always.
    fixes = {0x3A3: "\u03c3"}
    for first, last, delta in LOWER_ADDED:
        for cp in range(first, last + 1):
            if chr(cp).lower() != chr(cp + delta):
                fixes[cp] = chr(cp + delta)
    return fixes


_LOWER_FIXES: Final = _lower_fixes()
_LOWER_FIX_CHARS: Final = CharSet((cp, cp) for cp in sorted(_LOWER_FIXES))


def rust_lower(text: str) -> str:
    """Rust's per-character ``to_lowercase`` (see module notes)."""
    if text.isascii():
        return text.lower()
    return _LOWER_FIX_CHARS.sub(_fix_lower_run, text).lower()


def _fix_lower_run(m: re.Match[str]) -> str:
    return "".join([_LOWER_FIXES[ord(c)] for c in m.group()])


def rust_lower_aligned(text: str) -> tuple[str, Spans]:
    if text.isascii():
        return text.lower(), identity_spans(0, len(text))
    out: list[str] = []
    spans: Spans = []
    for k, c in enumerate(text):
        low = _LOWER_FIXES.get(ord(c)) or c.lower()
        out.append(low)
        spans.extend([(k, k + 1)] * len(low))
    return "".join(out), spans


class Lowercase(Normalizer):
    r"""Lowercase every character as Rust's ``char::to_lowercase`` does.

    Full Unicode 17.0 mappings (``'İ'`` -> ``'i̇'``, two characters), each character on
    its own: no final-sigma rule, unlike ``str.lower``.

    Cost: ``str.lower`` (C) after one class search for the few characters Python
    lowercases differently.

    >>> Lowercase().normalize("\u0391\u03a3 \u0130") == "\u03b1\u03c3 i\u0307"
    True
    """

    __slots__ = ()
    type_name = "Lowercase"

    space_local = True  # character-local, or acting at the ends only

    def keeps(self, char: str) -> bool:
        return True

    def normalize(self, text: str) -> str:
        return rust_lower(text)

    def normalize_aligned(self, text: str) -> tuple[str, Spans]:
        return rust_lower_aligned(text)

r"""Normalization: rewrite text before pre-tokenization, keeping a map back to the input.

Implemented here, one class per ``tokenizer.json`` ``"type"``, with the semantics of the
Rust ``tokenizers`` crate (checked against ``tokenizers`` 0.23.3 on every code point and on
adversarial text, ``tests/test_normalizers.py``): ``NFC``, ``NFD``, ``NFKC``, ``NFKD``,
``Lowercase``, ``StripAccents``, ``BertNormalizer``, ``Precompiled`` (SentencePiece's
``precompiled_charsmap``), ``Prepend``, ``Replace``, ``Strip``, ``Nmt``, ``ByteLevel`` and
``Sequence``. ``normalizer_from_json`` builds them from the JSON objects.

Every normalizer has two entry points: ``normalize(text)``, the encode hot path, and
``normalize_aligned(text)``, which also returns, for each output character, the span
``(start, end)`` of input code points it came from. Spans are monotone (starts and ends
never decrease) and lie within ``[0, len(text)]``:

- a character rewritten on its own (``Lowercase``, ``StripAccents``, one character of a
  charsmap) spans that character, ``(k, k + 1)``; several outputs of one input
  (``NFKD('ﬁ') == 'fi'``) all get that span;
- characters that normalize together (NFC composing ``e`` + U+0301, a ``Replace`` match,
  a grapheme the charsmap maps as a whole, marks that canonical ordering moved) all span
  the whole group;
- an inserted character (``Prepend``, the spaces around a Chinese character, the content
  of an empty ``Replace`` match) gets the zero-width span ``(k, k)`` where it was inserted,
  unless it was inserted between two outputs of one group, which it then joins;
- removed characters are in no span.

``tokenizers`` keeps a different, per-byte map (an NFC composite maps to its first input
character only, a ``Replace`` match to its last); these spans are the finer truth that
offsets are computed from.

Not here: ``Append`` and the Chinese-conversion normalizers of ``tokenizers``'s main
branch (not in a release), and ``Replace``'s ``$1`` group expansion from that branch
(0.23.3 inserts ``content`` literally, as here).

Differences from ``tokenizers``
-------------------------------
- ``Replace`` compiles a ``Regex`` pattern with the ``regex`` module, ``tokenizers`` with
  Oniguruma. The usual syntax (literals, classes, ``\s``, ``\d``, ``\p{..}``, quantifiers,
  lookaround) means the same, with two gaps: Oniguruma's Unicode tables are 16.0 and
  ``regex``'s 17.0 (``\d`` matches the new digits U+11DE0..U+11DE9 here only), and
  Oniguruma's ``\w`` is letters, marks, numbers and connectors (so ``'²'`` is a word
  character there, U+200C/U+200D are not), ``regex``'s is Unicode's (the reverse).
  Oniguruma-only syntax (``\h``, ``(?m)`` meaning dot-all) is not translated. Empty
  matches follow Oniguruma: none in empty text, none right where the previous match
  ended.
- ``Precompiled`` cuts text into extended grapheme clusters with the ``regex`` module's
  ``\X`` (Unicode 17.0 in regex 2026.5) where ``tokenizers`` uses ``unicode-segmentation``;
  the two can only disagree on clusters of characters new in the later Unicode version.
  An empty charsmap is accepted and maps nothing (SentencePiece's reading);
  ``tokenizers`` refuses to load it.
- Lone surrogates, which a Rust string cannot hold, pass through unchanged (``ByteLevel``
  encodes them with ``surrogatepass``).

Unicode versions
----------------
``tokenizers`` mixes tables of several ages, and these are matched exactly, whatever
the Python version (3.10's ``unicodedata`` is Unicode 13.0, 3.14's 16.0):

- ``NFC``/``NFD``/``NFKC``/``NFKD`` (and ``BertNormalizer``'s NFD) come from the crate
  ``unicode-normalization-alignments``, whose tables predate Unicode 10: a character
  added later has no decomposition, combining class or composition there. The
  characters of ``_NF_PROTECTED`` (found by probing ``tokenizers`` with every character
  that has a decomposition, a nonzero combining class or a composition in Unicode 17.0)
  are therefore kept out of ``unicodedata.normalize``: the text is normalized in the runs
  between them, which is exactly how an unknown starter behaves. Characters first
  assigned after Unicode 17.0 are not covered.
- ``StripAccents`` removes the combining marks (Mn, Mc, Me) of that crate, and
  ``BertNormalizer`` removes Mn and control (Cc, Cf, Co) characters from the
  ``unicode_categories`` crate (Unicode 8.0): ``_STRIP_ACCENTS_MARKS``,
  ``_BERT_NONSPACING_MARKS`` and ``_BERT_CONTROLS`` are those sets, read off
  ``tokenizers`` for every code point, not the current categories.
- ``Lowercase`` is Rust's ``char::to_lowercase`` of Unicode 17.0, character by character:
  the full mapping (``'İ'`` -> ``'i̇'``) as ``str.lower``, but without the final-sigma rule
  (``'ΑΣ'`` -> ``'ασ'``, not ``'ας'``) and with the mappings Python's tables lack
  (``_LOWER_ADDED``, checked on Python 3.10 to 3.13).

Performance notes
-----------------
``normalize`` stays in C. ``str.isascii`` (O(1)) short-cuts the Unicode forms for ASCII
text; a stdlib ``re`` class search guards the rare characters that need more (protected
characters, lowercase fixes); ``unicodedata.normalize``, ``str.lower``, ``str.replace``,
``str.strip`` and ``re.sub`` do the work.

- A mixed ``re`` class of a few hundred ranges scans at only 5-15 MB/s: ``re`` keeps
  the BMP part as a bitmap but tests every astral range, one by one, for every
  character. ``_Chars`` splits each table into a BMP class (400-1500 MB/s) and an
  astral class that only runs on text holding an astral character (a UTF-16 length
  check, at GB/s).
- ``str.translate`` with a dict runs a lookup per character once the text is not ASCII
  (20-35 MB/s), so mappings go through ``re.sub`` with a callback per run of mapped
  characters, and BERT's whitespace through one ``str.replace`` per kind of space.
- ``Precompiled`` leaves Python per grapheme cluster only for text with
  grapheme-extending characters; see its Cost note.

Measured against ``tokenizers``' ``normalize_str`` on the same text, one process, best
of 3 (Alice in Wonderland, Wagahai wa Neko, a Hindi sample): NFC/NFD/NFKC 6-25x faster
(NFKC on Japanese 0.8x), Lowercase 2-17x, StripAccents 1-14x, BertNormalizer 4-12x,
Precompiled 3-4x on English and Japanese but 0.2x on Hindi (cluster by cluster).
``normalize_aligned`` walks characters in Python (1-15 MB/s): it is for offsets.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
import struct
import unicodedata
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from typing import ClassVar, Final, Literal, TypeVar

import numpy as np
import regex

from .byte_level import BYTE_TO_CHAR
from .errors import TokenizerFileError, TokstreamError

__all__ = [
    "NFC",
    "NFD",
    "NFKC",
    "NFKD",
    "BertNormalizer",
    "ByteLevel",
    "Lowercase",
    "Nmt",
    "Normalizer",
    "Precompiled",
    "Prepend",
    "Replace",
    "Sequence",
    "Strip",
    "StripAccents",
    "normalizer_from_json",
]

Spans = list[tuple[int, int]]
_Form = Literal["NFC", "NFD", "NFKC", "NFKD"]
_T = TypeVar("_T")


# ------------------------------------------------------------------------ tables


def _parse_ranges(spec: str) -> list[tuple[int, int]]:
    """``"300-36F 483"`` -> ``[(0x300, 0x36F), (0x483, 0x483)]``."""
    out = []
    for item in spec.split():
        lo, _, hi = item.partition("-")
        out.append((int(lo, 16), int(hi or lo, 16)))
    return out


def _char_class(ranges: Iterable[tuple[int, int]]) -> str:
    """A regex character class (for ``re`` and ``regex``) holding the given ranges."""
    body = "".join(
        f"\\U{a:08X}" if a == b else f"\\U{a:08X}-\\U{b:08X}" for a, b in ranges
    )
    return f"[{body}]"


# Characters that unicode-normalization-alignments does not know (see module notes).
_NF_PROTECTED: Final = _parse_ranges(
    "7FD 897-89F 8CA-8D3 9FE C3C D3B-D3C "
    "EBA 1715 1ABF-1ADD 1AE0-1AEB 1DF6-1DFA 32FF "
    "A7F1-A7F4 A82C AB69 105C9 105D2 105DA "
    "105E4 10781-10785 10787-107B0 107B2-107BA 10D24-10D27 10D69-10D6D "
    "10EAB-10EAC 10EFA-10EFB 10EFD-10EFF 10F46-10F50 10F82-10F85 11070 "
    "1133B 11382-11385 1138B 1138E 11390-11391 113B8 "
    "113BB 113C2 113C5 113C7-113C9 113CE-113D0 1145E "
    "11839-1183A 11930 11935 11938 1193D-1193E 11943 "
    "119E0 11A34 11A47 11A99 11D42 11D44-11D45 "
    "11D97 11F41-11F42 1611E-16129 1612F 16D63 16D67-16D6A "
    "16FF0-16FF1 1CCD6-1CCF9 1E030-1E06D 1E08F 1E130-1E136 1E2AE "
    "1E2EC-1E2EF 1E4EC-1E4EF 1E5EE-1E5EF 1E6E3 1E6E6 1E6EE-1E6EF "
    "1E6F5 1F16C 1FBF0-1FBF9 "
)

# Rust's unicode_normalization_alignments::char::is_combining_mark (StripAccents).
_STRIP_ACCENTS_MARKS: Final = _parse_ranges(
    "300-36F 483-489 591-5BD 5BF 5C1-5C2 5C4-5C5 "
    "5C7 610-61A 64B-65F 670 6D6-6DC 6DF-6E4 "
    "6E7-6E8 6EA-6ED 711 730-74A 7A6-7B0 7EB-7F3 "
    "816-819 81B-823 825-827 829-82D 859-85B 8D4-8E1 "
    "8E3-903 93A-93C 93E-94F 951-957 962-963 981-983 "
    "9BC 9BE-9C4 9C7-9C8 9CB-9CD 9D7 9E2-9E3 "
    "A01-A03 A3C A3E-A42 A47-A48 A4B-A4D A51 "
    "A70-A71 A75 A81-A83 ABC ABE-AC5 AC7-AC9 "
    "ACB-ACD AE2-AE3 B01-B03 B3C B3E-B44 B47-B48 "
    "B4B-B4D B56-B57 B62-B63 B82 BBE-BC2 BC6-BC8 "
    "BCA-BCD BD7 C00-C03 C3E-C44 C46-C48 C4A-C4D "
    "C55-C56 C62-C63 C81-C83 CBC CBE-CC4 CC6-CC8 "
    "CCA-CCD CD5-CD6 CE2-CE3 D01-D03 D3E-D44 D46-D48 "
    "D4A-D4D D57 D62-D63 D82-D83 DCA DCF-DD4 "
    "DD6 DD8-DDF DF2-DF3 E31 E34-E3A E47-E4E "
    "EB1 EB4-EB9 EBB-EBC EC8-ECD F18-F19 F35 "
    "F37 F39 F3E-F3F F71-F84 F86-F87 F8D-F97 "
    "F99-FBC FC6 102B-103E 1056-1059 105E-1060 1062-1064 "
    "1067-106D 1071-1074 1082-108D 108F 109A-109D 135D-135F "
    "1712-1714 1732-1734 1752-1753 1772-1773 17B4-17D3 17DD "
    "180B-180D 1885-1886 18A9 1920-192B 1930-193B 1A17-1A1B "
    "1A55-1A5E 1A60-1A7C 1A7F 1AB0-1ABE 1B00-1B04 1B34-1B44 "
    "1B6B-1B73 1B80-1B82 1BA1-1BAD 1BE6-1BF3 1C24-1C37 1CD0-1CD2 "
    "1CD4-1CE8 1CED 1CF2-1CF4 1CF8-1CF9 1DC0-1DF5 1DFB-1DFF "
    "20D0-20F0 2CEF-2CF1 2D7F 2DE0-2DFF 302A-302F 3099-309A "
    "A66F-A672 A674-A67D A69E-A69F A6F0-A6F1 A802 A806 "
    "A80B A823-A827 A880-A881 A8B4-A8C5 A8E0-A8F1 A926-A92D "
    "A947-A953 A980-A983 A9B3-A9C0 A9E5 AA29-AA36 AA43 "
    "AA4C-AA4D AA7B-AA7D AAB0 AAB2-AAB4 AAB7-AAB8 AABE-AABF "
    "AAC1 AAEB-AAEF AAF5-AAF6 ABE3-ABEA ABEC-ABED FB1E "
    "FE00-FE0F FE20-FE2F 101FD 102E0 10376-1037A 10A01-10A03 "
    "10A05-10A06 10A0C-10A0F 10A38-10A3A 10A3F 10AE5-10AE6 11000-11002 "
    "11038-11046 1107F-11082 110B0-110BA 11100-11102 11127-11134 11173 "
    "11180-11182 111B3-111C0 111CA-111CC 1122C-11237 1123E 112DF-112EA "
    "11300-11303 1133C 1133E-11344 11347-11348 1134B-1134D 11357 "
    "11362-11363 11366-1136C 11370-11374 11435-11446 114B0-114C3 115AF-115B5 "
    "115B8-115C0 115DC-115DD 11630-11640 116AB-116B7 1171D-1172B 11C2F-11C36 "
    "11C38-11C3F 11C92-11CA7 11CA9-11CB6 16AF0-16AF4 16B30-16B36 16F51-16F7E "
    "16F8F-16F92 1BC9D-1BC9E 1D165-1D169 1D16D-1D172 1D17B-1D182 1D185-1D18B "
    "1D1AA-1D1AD 1D242-1D244 1DA00-1DA36 1DA3B-1DA6C 1DA75 1DA84 "
    "1DA9B-1DA9F 1DAA1-1DAAF 1E000-1E006 1E008-1E018 1E01B-1E021 1E023-1E024 "
    "1E026-1E02A 1E8D0-1E8D6 1E944-1E94A E0100-E01EF "
)

# unicode_categories' is_mark_nonspacing (Mn, Unicode 8.0), for BertNormalizer's
# strip_accents. Characters that NFD never outputs are in or out, whichever makes
# fewer ranges.
_BERT_NONSPACING_MARKS: Final = _parse_ranges(
    "300-36F 483-487 591-5BD 5BF 5C1-5C2 5C4-5C5 "
    "5C7 610-61A 64B-65F 670 6D6-6DC 6DF-6E4 "
    "6E7-6E8 6EA-6ED 711 730-74A 7A6-7B0 7EB-7F3 "
    "816-819 81B-823 825-827 829-82D 859-85B 8E3-902 "
    "93A 93C 941-948 94D 951-957 962-963 "
    "981 9BC 9C1-9C4 9CD 9E2-9E3 A01-A02 "
    "A3C A41-A42 A47-A48 A4B-A4D A51 A70-A71 "
    "A75 A81-A82 ABC AC1-AC5 AC7-AC8 ACD "
    "AE2-AE3 B01 B3C B3F B41-B44 B4D "
    "B56 B62-B63 B82 BC0 BCD C00 "
    "C3E-C40 C46-C47 C4A-C4D C55-C56 C62-C63 C81 "
    "CBC CBF CC6 CCC-CCD CE2-CE3 D01 "
    "D41-D44 D4D D62-D63 DCA DD2-DD4 DD6 "
    "E31 E34-E3A E47-E4E EB1 EB4-EB9 EBB-EBC "
    "EC8-ECD F18-F19 F35 F37 F39 F71-F7E "
    "F80-F84 F86-F87 F8D-F97 F99-FBC FC6 102D-1030 "
    "1032-1037 1039-103A 103D-103E 1058-1059 105E-1060 1071-1074 "
    "1082 1085-1086 108D 109D 135D-135F 1712-1714 "
    "1732-1734 1752-1753 1772-1773 17B4-17B5 17B7-17BD 17C6 "
    "17C9-17D3 17DD 180B-180D 18A9 1920-1922 1927-1928 "
    "1932 1939-193B 1A17-1A18 1A1B 1A56 1A58-1A5E "
    "1A60 1A62 1A65-1A6C 1A73-1A7C 1A7F 1AB0-1ABD "
    "1B00-1B03 1B34 1B36-1B3C 1B42 1B6B-1B73 1B80-1B81 "
    "1BA2-1BA5 1BA8-1BA9 1BAB-1BAD 1BE6 1BE8-1BE9 1BED "
    "1BEF-1BF1 1C2C-1C33 1C36-1C37 1CD0-1CD2 1CD4-1CE0 1CE2-1CE8 "
    "1CED 1CF4 1CF8-1CF9 1DC0-1DF5 1DFC-1DFF 20D0-20DC "
    "20E1 20E5-20F0 2CEF-2CF1 2D7F 2DE0-2DFF 302A-302D "
    "3099-309A A66F A674-A67D A69E-A69F A6F0-A6F1 A802 "
    "A806 A80B A825-A826 A8C4 A8E0-A8F1 A926-A92D "
    "A947-A951 A980-A982 A9B3 A9B6-A9B9 A9BC A9E5 "
    "AA29-AA2E AA31-AA32 AA35-AA36 AA43 AA4C AA7C "
    "AAB0 AAB2-AAB4 AAB7-AAB8 AABE-AABF AAC1 AAEC-AAED "
    "AAF6 ABE5 ABE8 ABED FB1E FE00-FE0F "
    "FE20-FE2F 101FD 102E0 10376-1037A 10A01-10A03 10A05-10A06 "
    "10A0C-10A0F 10A38-10A3A 10A3F 10AE5-10AE6 11001 11038-11046 "
    "1107F-11081 110B3-110B6 110B9-110BA 11100-11102 11127-1112B 1112D-11134 "
    "11173 11180-11181 111B6-111BE 111CA-111CC 1122F-11231 11234 "
    "11236-11237 112DF 112E3-112EA 11300-11301 1133C 11340 "
    "11366-1136C 11370-11374 114B3-114B8 114BA 114BF-114C0 114C2-114C3 "
    "115B2-115B5 115BC-115BD 115BF-115C0 115DC-115DD 11633-1163A 1163D "
    "1163F-11640 116AB 116AD 116B0-116B5 116B7 1171D-1171F "
    "11722-11725 11727-1172B 16AF0-16AF4 16B30-16B36 16F8F-16F92 1BC9D-1BC9E "
    "1D167-1D169 1D17B-1D182 1D185-1D18B 1D1AA-1D1AD 1D242-1D244 1DA00-1DA36 "
    "1DA3B-1DA6C 1DA75 1DA84 1DA9B-1DA9F 1DAA1-1DAAF 1E8D0-1E8D6 "
    "E0100-E01EF "
)

# What BertNormalizer's clean_text removes: unicode_categories' is_other (Cc, Cf, Co;
# not Cn) minus tab, newline and carriage return, plus U+0000 and U+FFFD.
_BERT_CONTROLS: Final = _parse_ranges(
    "0-8 B-C E-1F 7F-9F AD 600-605 "
    "61C 6DD 70F 180E 200B-200F 202A-202E "
    "2060-2064 2066-206F E000-F8FF FEFF FFF9-FFFB FFFD "
    "110BD 1BCA0-1BCA3 1D173-1D17A E0001 E0020-E007F F0000-FFFFD "
    "100000-10FFFD "
)

# What clean_text turns into " " (Rust's char::is_whitespace), after the removals:
# U+000B, U+000C, U+0085 are White_Space but also Cc, so they are removed first.
_BERT_SPACES: Final = "\t\n\r\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"

# BERT's "Chinese characters": the CJK blocks of bert.rs's is_chinese_char.
_BERT_CJK: Final = [
    (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2A6DF),
    (0x2A700, 0x2B81F), (0x2B920, 0x2CEAF), (0x2F800, 0x2FA1F),
]

# Unicode White_Space, what Rust's str::trim removes (Strip). Not str.strip(), whose
# whitespace also has U+001C..U+001F.
_WHITE_SPACE: Final = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

# Rust's to_lowercase (Unicode 17.0) for the characters whose mapping is newer than
# Unicode 13.0 (Python 3.10): (first, last, delta), every character of the run maps to
# itself + delta. Checked against tokenizers' Lowercase on every code point.
_LOWER_ADDED: Final = [
    (0x1C89, 0x1C89, 1),
    (0x2C2F, 0x2C2F, 48),
    (0xA7C0, 0xA7C0, 1),
    (0xA7CB, 0xA7CB, -42343),
    (0xA7CC, 0xA7CC, 1),
    (0xA7CE, 0xA7CE, 1),
    (0xA7D0, 0xA7D0, 1),
    (0xA7D2, 0xA7D2, 1),
    (0xA7D4, 0xA7D4, 1),
    (0xA7D6, 0xA7D6, 1),
    (0xA7D8, 0xA7D8, 1),
    (0xA7DA, 0xA7DA, 1),
    (0xA7DC, 0xA7DC, -42561),
    (0x10570, 0x1057A, 39),
    (0x1057C, 0x1058A, 39),
    (0x1058C, 0x10592, 39),
    (0x10594, 0x10595, 39),
    (0x10D50, 0x10D65, 32),
    (0x16EA0, 0x16EB8, 27),
]

_NMT_REMOVED: Final = [
    *range(0x01, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F, 0x8F, 0x9F,
]
_NMT_SPACES: Final = [
    0x09, 0x0A, 0x0C, 0x0D, 0x1680, *range(0x200B, 0x2010), 0x2028, 0x2029, 0x2581,
    0xFEFF, 0xFFFD,
]


def _lower_fixes() -> dict[int, str]:
    # Only the characters this Python lowercases differently; the final sigma always.
    fixes = {0x3A3: "\u03c3"}
    for first, last, delta in _LOWER_ADDED:
        for cp in range(first, last + 1):
            if chr(cp).lower() != chr(cp + delta):
                fixes[cp] = chr(cp + delta)
    return fixes


def _has_astral(text: str) -> bool:
    """Whether ``text`` holds a character above U+FFFF (UTF-16 encoding runs at GB/s)."""
    return not text.isascii() and len(text.encode("utf-16-le", "surrogatepass")) != 2 * len(text)


class _Chars:
    """A set of code points as stdlib ``re`` classes: the BMP part and the rest.

    ``re`` keeps the BMP part of a class as a bitmap but tests its astral ranges one
    by one for every character, so one mixed class of a few hundred ranges scans at
    5-15 MB/s where its BMP part alone scans at 400-1500 MB/s (Python 3.11). Astral
    characters are rare: the astral class only runs on text that has some.
    ``runs`` makes the patterns match runs of members rather than single ones.
    """

    __slots__ = ("any", "astral", "bmp")

    def __init__(self, ranges: Iterable[tuple[int, int]], *, runs: bool = True) -> None:
        ranges = list(ranges)
        low = [(a, min(b, 0xFFFF)) for a, b in ranges if a <= 0xFFFF]
        high = [(max(a, 0x10000), b) for a, b in ranges if b > 0xFFFF]
        plus = "+" if runs else ""
        parts = []
        self.bmp = self.astral = None
        if low:
            parts.append(_char_class(low) + plus)
            self.bmp = re.compile(parts[-1])
        if high:
            # The lookahead turns BMP characters away with one comparison.
            parts.append(r"(?=[\U00010000-\U0010FFFF])" + _char_class(high) + plus)
            self.astral = re.compile(_char_class(high) + plus)
        #: Both parts in one pattern, for single-pass rewrites of text with astral chars.
        self.any = re.compile("|".join(parts) or "(?!)")

    def search(self, text: str) -> bool:
        if self.bmp is not None and self.bmp.search(text) is not None:
            return True
        return self.astral is not None and _has_astral(text) and self.astral.search(text) is not None

    def remove(self, text: str) -> str:
        """Delete every member (two passes: removals commute)."""
        if self.bmp is not None:
            text = self.bmp.sub("", text)
        if self.astral is not None and _has_astral(text):
            text = self.astral.sub("", text)
        return text

    def sub(self, repl: Callable[[re.Match[str]], str], text: str) -> str:
        """Replace every match of a member (run) by ``repl(match)``, in one pass."""
        if self.astral is not None and _has_astral(text):
            return self.any.sub(repl, text)
        if self.bmp is None:
            return text
        return self.bmp.sub(repl, text)


_LOWER_FIXES: Final = _lower_fixes()
_LOWER_FIX_CHARS: Final = _Chars((cp, cp) for cp in sorted(_LOWER_FIXES))
_NF_PROTECTED_CHARS: Final = _Chars(_NF_PROTECTED, runs=False)
_STRIP_ACCENTS_CHARS: Final = _Chars(_STRIP_ACCENTS_MARKS)
_BERT_MN_CHARS: Final = _Chars(_BERT_NONSPACING_MARKS)
_BERT_CONTROL_CHARS: Final = _Chars(_BERT_CONTROLS)
_BERT_CJK_CHARS: Final = _Chars(_BERT_CJK, runs=False)
_NMT_TABLE: Final[dict[int, str | None]] = {
    **{cp: None for cp in _NMT_REMOVED},
    **{cp: " " for cp in _NMT_SPACES},
}
_NMT_RE: Final = re.compile(_char_class((cp, cp) for cp in sorted(_NMT_TABLE)) + "+")
_BYTE_LEVEL_TABLE: Final = {b: c for b, c in enumerate(BYTE_TO_CHAR)}


def _identity(a: int, b: int) -> Spans:
    return [(k, k + 1) for k in range(a, b)]


def _rust_lower(text: str) -> str:
    """Rust's per-character ``to_lowercase`` (see module notes)."""
    if text.isascii():
        return text.lower()
    return _LOWER_FIX_CHARS.sub(_fix_lower_run, text).lower()


def _fix_lower_run(m: re.Match[str]) -> str:
    return "".join([_LOWER_FIXES[ord(c)] for c in m.group()])


def _rust_lower_aligned(text: str) -> tuple[str, Spans]:
    if text.isascii():
        return text.lower(), _identity(0, len(text))
    out: list[str] = []
    spans: Spans = []
    for k, c in enumerate(text):
        low = _LOWER_FIXES.get(ord(c)) or c.lower()
        out.append(low)
        spans.extend([(k, k + 1)] * len(low))
    return "".join(out), spans


def _remove_aligned(text: str, pattern: re.Pattern[str]) -> tuple[str, Spans]:
    """``pattern.sub("", text)`` with spans; ``pattern`` matches runs of removed chars."""
    out: list[str] = []
    spans: Spans = []
    pos = 0
    for m in pattern.finditer(text):
        out.append(text[pos : m.start()])
        spans.extend(_identity(pos, m.start()))
        pos = m.end()
    out.append(text[pos:])
    spans.extend(_identity(pos, len(text)))
    return "".join(out), spans


def _compose(inner: Spans, outer: Spans) -> Spans:
    """Spans of a second step (over the first step's output) mapped to the input.

    ``inner`` maps the intermediate text to the input, ``outer`` the output to the
    intermediate text. Both are monotone, so a span's image is the first start and the
    last end of the intermediate characters it covers: O(1) per character. A zero-width
    span between two intermediate characters that share input becomes their overlap, so
    the result stays monotone.
    """
    n = len(inner)
    result: Spans = []
    append = result.append
    for s, e in outer:
        if s < e:
            append((inner[s][0], inner[e - 1][1]))
        elif s < n:
            start = inner[s][0]
            append((start, max(start, inner[s - 1][1]) if s else start))
        elif n:
            end = inner[-1][1]
            append((end, end))
        else:
            append((0, 0))
    return result


# ---------------------------------------------------------------------- Unicode forms


def _nf(form: _Form, text: str) -> str:
    """``unicodedata.normalize`` with tokenizers' (older) Unicode tables."""
    if text.isascii():
        return text
    if not _NF_PROTECTED_CHARS.search(text):
        return unicodedata.normalize(form, text)
    # A character the Rust tables do not know is a starter with no decomposition and
    # no composition: nothing reorders or composes across it.
    parts = _NF_PROTECTED_CHARS.any.split(text)
    marks = _NF_PROTECTED_CHARS.any.findall(text)
    out = [unicodedata.normalize(form, parts[0])]
    for mark, part in zip(marks, parts[1:], strict=True):
        out.append(mark)
        out.append(unicodedata.normalize(form, part))
    return "".join(out)


def _nf_aligned(form: _Form, text: str) -> tuple[str, Spans]:
    if text.isascii():
        return text, _identity(0, len(text))
    out: list[str] = []
    spans: Spans = []
    pos = 0
    for m in _NF_PROTECTED_CHARS.any.finditer(text):
        _nf_run_aligned(form, text, pos, m.start(), out, spans)
        out.append(m.group())
        spans.append((m.start(), m.end()))
        pos = m.end()
    _nf_run_aligned(form, text, pos, len(text), out, spans)
    return "".join(out), spans


# Chunks longer than this (a base with dozens of marks) are not split further: each
# split test normalizes the rest of the chunk, quadratic in its length.
_REFINE_MAX: Final = 32


def _nf_run_aligned(
    form: _Form, text: str, a: int, b: int, out: list[str], spans: Spans
) -> None:
    """Normalize ``text[a:b]`` (no protected character), appending output and spans.

    The run is cut into chunks that normalize independently: a chunk starts at each
    character of combining class 0, and adjacent chunks that interact (a composition
    across them, a Tibetan vowel whose decomposition starts with a mark) are merged
    until ``normalize(x + y) == normalize(x) + normalize(y)``. Each chunk is then split
    into the smallest pieces that still normalize independently (``e`` + U+0301 under
    NFD is two pieces, under NFC one). Every output character spans its piece.
    """
    if a == b:
        return
    run = text[a:b]
    if unicodedata.is_normalized(form, run):
        out.append(run)
        spans.extend(_identity(a, b))
        return
    norm = unicodedata.normalize
    combining = unicodedata.combining
    starts = [k for k in range(a + 1, b) if not combining(text[k])]
    starts.append(b)
    chunks: list[tuple[int, int, str]] = []
    cs, ce = a, starts[0]
    cn = norm(form, text[cs:ce])
    for ne in starts[1:]:
        piece = text[ce:ne]
        nn = norm(form, piece)
        if piece.isascii() and text[ce - 1].isascii():
            joined = cn + nn
        else:
            joined = norm(form, text[cs:ne])
        if joined == cn + nn:
            chunks.append((cs, ce, cn))
            cs, cn = ce, nn
        else:
            cn = joined
        ce = ne
    chunks.append((cs, ce, cn))
    if "".join(c[2] for c in chunks) != norm(form, run):
        # The pairwise test is not a proof; fall back to one chunk, coarse but right.
        chunks = [(a, b, norm(form, run))]
    for cs, ce, cn in chunks:
        if ce - cs == 1 or ce - cs > _REFINE_MAX:
            out.append(cn)
            spans.extend([(cs, ce)] * len(cn))
            continue
        start, rest = cs, cn
        for j in range(cs + 1, ce):
            left = norm(form, text[start:j])
            right = norm(form, text[j:ce])
            if left + right == rest:
                out.append(left)
                spans.extend([(start, j)] * len(left))
                start, rest = j, right
        out.append(rest)
        spans.extend([(start, ce)] * len(rest))


# ------------------------------------------------------------------------ interface


class Normalizer(ABC):
    """A normalization step: ``normalize`` text, optionally with a map back to the input.

    Subclasses are small immutable values, compared by their ``tokenizer.json`` form.
    """

    __slots__ = ()

    #: The ``tokenizer.json`` ``"type"`` of the class.
    type_name: ClassVar[str]

    #: Stability declaration (``stability``): a printable ASCII character and a space
    #: each map to themselves (or to one fixed character), one at a time, and every
    #: rule acts only on runs of spaces or at the ends. False (nothing declared) keeps
    #: streamed text open.
    @property
    def space_local(self) -> bool:
        return False

    def keeps(self, char: str) -> bool:
        """Stability declaration: the ASCII whitespace ``char`` between two printable
        characters is left alone and joined to neither. False unless declared."""
        return False

    @abstractmethod
    def normalize(self, text: str) -> str:
        """Return the normalized ``text`` (the fast path: no alignment)."""

    def normalize_continued(self, text: str) -> str:
        """``normalize`` for text that continues a cut (``_stability``): rules that
        apply only at the start of a text (Prepend, a left Strip) are left out."""
        return self.normalize(text)

    @abstractmethod
    def normalize_aligned(self, text: str) -> tuple[str, Spans]:
        """Return ``(out, spans)``: ``out == normalize(text)``, and ``spans[i]`` is the
        ``(start, end)`` code-point span of ``text`` that ``out[i]`` came from (see the
        module docstring for the rules)."""

    def to_json(self) -> dict[str, object]:
        """The ``tokenizer.json`` object of this normalizer."""
        return {"type": self.type_name}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Normalizer):
            return NotImplemented
        return type(self) is type(other) and self.to_json() == other.to_json()

    def __hash__(self) -> int:
        return hash(repr(self))

    def __repr__(self) -> str:
        fields = {k: v for k, v in self.to_json().items() if k != "type"}
        inner = ", ".join(f"{k}={v!r}" for k, v in fields.items())
        return f"{type(self).__name__}({inner})"

    @classmethod
    def _from_json(cls, obj: Mapping[str, object], path: str) -> Normalizer:
        return cls()


class _UnicodeForm(Normalizer):
    __slots__ = ()
    form: ClassVar[_Form]

    space_local = True  # character-local, or acting at the ends only

    def keeps(self, char: str) -> bool:
        return True

    def normalize(self, text: str) -> str:
        return _nf(self.form, text)

    def normalize_aligned(self, text: str) -> tuple[str, Spans]:
        return _nf_aligned(self.form, text)


class NFC(_UnicodeForm):
    r"""Unicode canonical composition, with ``tokenizers``' Unicode tables.

    Cost: O(1) for ASCII text; otherwise one class search plus
    ``unicodedata.normalize`` (its quick check makes NFC text nearly free).

    >>> out, spans = NFC().normalize_aligned("e\u0301!")
    >>> out == "\u00e9!", spans
    (True, [(0, 2), (2, 3)])
    """

    __slots__ = ()
    type_name = "NFC"
    form = "NFC"


class NFD(_UnicodeForm):
    r"""Unicode canonical decomposition, with ``tokenizers``' Unicode tables.

    Cost: as ``NFC``.

    >>> out, spans = NFD().normalize_aligned("\u00e9")
    >>> [hex(ord(c)) for c in out], spans
    (['0x65', '0x301'], [(0, 1), (0, 1)])
    """

    __slots__ = ()
    type_name = "NFD"
    form = "NFD"


class NFKC(_UnicodeForm):
    r"""Unicode compatibility composition, with ``tokenizers``' Unicode tables.

    Cost: as ``NFC``.

    >>> NFKC().normalize("\ufb01\u2460")
    'fi1'
    """

    __slots__ = ()
    type_name = "NFKC"
    form = "NFKC"


class NFKD(_UnicodeForm):
    r"""Unicode compatibility decomposition, with ``tokenizers``' Unicode tables.

    Cost: as ``NFC``.

    >>> NFKD().normalize_aligned("\ufb01")
    ('fi', [(0, 1), (0, 1)])
    """

    __slots__ = ()
    type_name = "NFKD"
    form = "NFKD"


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
        return _rust_lower(text)

    def normalize_aligned(self, text: str) -> tuple[str, Spans]:
        return _rust_lower_aligned(text)


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
        return _remove_aligned(text, _STRIP_ACCENTS_CHARS.any)


class BertNormalizer(Normalizer):
    r"""BERT's normalizer: clean text, space out Chinese characters, strip accents, lowercase.

    In that order, each when enabled:

    - ``clean_text``: remove U+0000, U+FFFD and control characters (Cc, Cf, Co, but not
      tab, newline, carriage return), then turn whitespace into ``" "``;
    - ``handle_chinese_chars``: put a space on each side of every CJK ideograph;
    - ``strip_accents``: NFD, then remove nonspacing marks (Mn); ``None`` (the JSON
      ``null``) means "when ``lowercase``", as in ``tokenizers``;
    - ``lowercase``: as ``Lowercase``.

    Cost: ASCII text (O(1) to tell) is one ``str.lower`` plus, when it holds a control
    or a tab, newline or CR, one ``bytes.translate``: 500+ MB/s on whole English text,
    65-150 MB/s line by line (per-call overhead). Other text takes one C-level pass per
    enabled step (``re.sub`` of controls, ``str.replace`` per kind of space present, a
    ``re.split`` around CJK ideographs joined by spaces, ``unicodedata.normalize`` and a
    mark ``re.sub``, ``str.lower``), no Python call per character: 70-110 MB/s on
    English with a few non-ASCII characters, ~20 MB/s on Japanese (1 in 3 characters
    an ideograph). ``bench``-style figures from one run on the shared 2-core box.

    >>> BertNormalizer().normalize("Héllo\u4e16\x00!")
    'hello 世 !'
    """

    __slots__ = ("clean_text", "handle_chinese_chars", "lowercase", "strip_accents")
    type_name = "BertNormalizer"

    space_local = True  # character by character; whitespace becomes a space

    def keeps(self, char: str) -> bool:
        return not self.clean_text  # clean_text turns \t \n \r into spaces

    def __init__(
        self,
        *,
        clean_text: bool = True,
        handle_chinese_chars: bool = True,
        strip_accents: bool | None = None,
        lowercase: bool = True,
    ) -> None:
        self.clean_text = clean_text
        self.handle_chinese_chars = handle_chinese_chars
        self.strip_accents = strip_accents
        self.lowercase = lowercase

    @property
    def _strips(self) -> bool:
        return self.lowercase if self.strip_accents is None else self.strip_accents

    def normalize(self, text: str) -> str:
        if text.isascii():
            # No CJK, no accents. Controls and spaces by one bytes.translate (a
            # 256-byte table, no per-call setup unlike str.translate's dict), skipped
            # when isprintable() says there are none.
            if self.clean_text and not text.isprintable():
                text = text.encode("ascii").translate(_BERT_ASCII_SPACES, _BERT_ASCII_CONTROLS).decode("ascii")
            return text.lower() if self.lowercase else text
        if self.clean_text:
            text = _bert_spaces(_BERT_CONTROL_CHARS.remove(text))
        if self.handle_chinese_chars and not text.isascii():
            split = _BERT_CJK_SPLIT_ANY if _has_astral(text) else _BERT_CJK_SPLIT_BMP
            parts = split(text)
            if len(parts) > 1:
                # The captured ideographs sit at odd indices: one join spaces them.
                text = " ".join(parts)
        if self._strips and not text.isascii():
            text = _BERT_MN_CHARS.remove(_nf("NFD", text))
        if self.lowercase:
            text = _rust_lower(text)
        return text

    def normalize_aligned(self, text: str) -> tuple[str, Spans]:
        spans = _identity(0, len(text))
        steps: list[Callable[[str], tuple[str, Spans]]] = []
        if self.clean_text:
            steps.append(_bert_clean_aligned)
        if self.handle_chinese_chars:
            steps.append(_bert_chinese_aligned)
        if self._strips:
            steps.append(_bert_strip_aligned)
        if self.lowercase:
            steps.append(_rust_lower_aligned)
        for step in steps:
            text, outer = step(text)
            spans = _compose(spans, outer)
        return text, spans

    def to_json(self) -> dict[str, object]:
        return {
            "type": self.type_name,
            "clean_text": self.clean_text,
            "handle_chinese_chars": self.handle_chinese_chars,
            "strip_accents": self.strip_accents,
            "lowercase": self.lowercase,
        }

    @classmethod
    def _from_json(cls, obj: Mapping[str, object], path: str) -> Normalizer:
        strip = obj.get("strip_accents")
        if strip is not None and not isinstance(strip, bool):
            raise _field_error(path, "strip_accents", "a boolean or null", strip)
        return cls(
            clean_text=_get(obj, "clean_text", bool, path),
            handle_chinese_chars=_get(obj, "handle_chinese_chars", bool, path),
            strip_accents=strip,
            lowercase=_get(obj, "lowercase", bool, path),
        )


# clean_text on ASCII text as bytes.translate arguments: tab/newline/CR to " ", the
# controls deleted (the two sets do not overlap in ASCII, so one call does both steps).
_BERT_ASCII_SPACES: Final = bytes(0x20 if b < 0x80 and chr(b) in _BERT_SPACES else b for b in range(256))
_BERT_ASCII_CONTROLS: Final = bytes(cp for a, b in _BERT_CONTROLS for cp in range(a, min(b, 0x7F) + 1))
# re.split with the ideograph captured: parts alternate text, ideograph, text, ...
_BERT_CJK_SPLIT_BMP: Final = re.compile(f"({_char_class(r for r in _BERT_CJK if r[0] <= 0xFFFF)})").split
_BERT_CJK_SPLIT_ANY: Final = re.compile(f"({_BERT_CJK_CHARS.any.pattern})").split


def _bert_spaces(text: str) -> str:
    # str.replace per kind of space (each a memchr-speed scan) beats str.translate,
    # which runs a dict lookup per character once the text is not ASCII.
    for space in _BERT_SPACES:
        if space in text:
            text = text.replace(space, " ")
    return text


def _bert_clean_aligned(text: str) -> tuple[str, Spans]:
    out, spans = _remove_aligned(text, _BERT_CONTROL_CHARS.any)
    return _bert_spaces(out), spans


def _bert_chinese_aligned(text: str) -> tuple[str, Spans]:
    out: list[str] = []
    spans: Spans = []
    pos = 0
    for m in _BERT_CJK_CHARS.any.finditer(text):
        k = m.start()
        out.append(text[pos:k])
        spans.extend(_identity(pos, k))
        out.append(f" {m.group()} ")
        spans.extend([(k, k), (k, k + 1), (k + 1, k + 1)])
        pos = k + 1
    out.append(text[pos:])
    spans.extend(_identity(pos, len(text)))
    return "".join(out), spans


def _bert_strip_aligned(text: str) -> tuple[str, Spans]:
    decomposed, inner = _nf_aligned("NFD", text)
    out, outer = _remove_aligned(decomposed, _BERT_MN_CHARS.any)
    return out, _compose(inner, outer)


# ------------------------------------------------------------------------ Precompiled

# Two characters that may start one extended grapheme cluster (UAX #29's no-break
# rules for a cluster's first two characters, loosened: a superset is harmless).
_PAIR: Final = (
    r"(?:\r\n"
    r"|\p{Grapheme_Cluster_Break=Prepend}."
    r"|.[\p{Grapheme_Cluster_Break=Extend}\p{Grapheme_Cluster_Break=ZWJ}"
    r"\p{Grapheme_Cluster_Break=SpacingMark}]"
    r"|\p{Grapheme_Cluster_Break=L}[\p{Grapheme_Cluster_Break=L}\p{Grapheme_Cluster_Break=V}"
    r"\p{Grapheme_Cluster_Break=LV}\p{Grapheme_Cluster_Break=LVT}]"
    r"|[\p{Grapheme_Cluster_Break=LV}\p{Grapheme_Cluster_Break=V}]"
    r"[\p{Grapheme_Cluster_Break=V}\p{Grapheme_Cluster_Break=T}]"
    r"|[\p{Grapheme_Cluster_Break=LVT}\p{Grapheme_Cluster_Break=T}]\p{Grapheme_Cluster_Break=T}"
    r"|\p{Grapheme_Cluster_Break=Regional_Indicator}\p{Grapheme_Cluster_Break=Regional_Indicator})"
)
_GRAPHEME: Final = regex.compile(r"\X", regex.DOTALL)
# Each match is one cluster that may hold several characters (group "multi") or a run
# of one-character clusters. \X inside the repetition starts at true cluster
# boundaries, since the scan never stops inside a cluster.
_CLUSTERS: Final = regex.compile(rf"(?P<multi>(?={_PAIR})\X)|(?:(?!{_PAIR})\X)+", regex.DOTALL)
# Results of multi-character clusters, per Precompiled; real text repeats its clusters.
_CLUSTER_CACHE_SIZE: Final = 4096


@functools.lru_cache(maxsize=1)
def _grapheme_joiners() -> _Chars:
    r"""Characters that can continue a cluster (or, Prepend, extend the next one).

    With none of them (and no CR LF), every cluster is one character. Read off the
    ``regex`` module's own tables once per process (about 80 ms), so the test agrees
    with its ``\X``; as explicit ``re`` ranges it scans ten times faster than the
    ``regex`` property class. LV/LVT syllables join only after L, which is listed.
    """
    cps = np.arange(0x110000, dtype="<u4")
    cps[0xD800:0xE000] = 0  # surrogates cannot be decoded
    every = cps.tobytes().decode("utf-32-le")
    joiners = regex.findall(
        r"[\p{Grapheme_Cluster_Break=Extend}\p{Grapheme_Cluster_Break=ZWJ}"
        r"\p{Grapheme_Cluster_Break=SpacingMark}\p{Grapheme_Cluster_Break=Prepend}"
        r"\p{Grapheme_Cluster_Break=L}\p{Grapheme_Cluster_Break=V}\p{Grapheme_Cluster_Break=T}"
        r"\p{Grapheme_Cluster_Break=Regional_Indicator}]",
        every,
    )
    return _Chars(_cp_ranges(joiners), runs=False)


_LEAF_BIT: Final = 1 << 8
_LABEL_MASK: Final = (1 << 31) | 0xFF
_VALUE_MASK: Final = (1 << 31) - 1


def _unit_offset(unit: int) -> int:
    # darts-clone's packed offset: 21 bits, shifted left by 8 when bit 9 is set.
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


def _utf8_length(lead: int) -> int:
    if lead < 0x80:
        return 1
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xF0 <= lead <= 0xF4:
        return 4
    return 0


class Precompiled(Normalizer):
    r"""SentencePiece's compiled normalization rules (``precompiled_charsmap``).

    The charsmap is ``<u32 trie size><trie: u32 units><normalized strings>``: a
    darts-clone double-array trie over UTF-8 key bytes whose values index NUL-ended
    replacements. ``tokenizers`` (``spm_precompiled``) applies it grapheme by grapheme:
    a cluster of under 6 UTF-8 bytes is looked up as a whole and, if some prefix of its
    bytes is a key, the *shortest* such key's replacement replaces the whole cluster
    (so ``'ﬁ'`` + U+0301 becomes ``'fi'``, the accent dropped); otherwise each character
    is replaced by its own entry, if it has one. A NUL byte ends a lookup.
    SentencePiece itself takes the *longest* key at each position instead (``_longest``,
    which ``formats/spm_pipeline`` uses, with ``_continued`` and ``_next_chars``).

    Unit layout (32 bits): bits 0-7 label, bit 8 has-leaf, bit 9 offset scale, bits 10-31
    offset; a leaf unit holds the value in bits 0-30 with bit 31 set.

    Cost: building walks the trie once for its one-character keys (O(trie size) with
    numpy: 60 ms for the 44k-unit NFKC map of T5-style models) and keeps the units as a
    list. ``normalize`` on text without grapheme-extending characters (most Latin and
    CJK text) is one ``re`` search for them plus one ``re.sub`` with a callback per run
    of mapped characters. Text with them (Indic scripts, decomposed accents, emoji
    sequences) goes cluster by cluster through ``regex``'s ``\X`` in C, calling Python
    per multi-character cluster and per run of other clusters (2-6 MB/s).

    A one-rule charsmap, U+FB01 (bytes EF AC 81) -> "fi", built by hand:

    >>> import struct
    >>> units = [0] * 256
    >>> units[0] = 0xE0 << 10                          # root: its base is 0xE0
    >>> units[0xE0 ^ 0xEF] = 0xAF << 10 | 0xEF         # byte EF; base 0x0F ^ 0xAF = 0xA0
    >>> units[0xA0 ^ 0xAC] = 0x8C << 10 | 0xAC         # byte AC; base 0x80
    >>> units[0x80 ^ 0x81] = 0x03 << 10 | 1 << 8 | 0x81  # byte 81, a leaf at base 0x02
    >>> units[0x02] = 1 << 31 | 0                      # the value: string offset 0
    >>> p = Precompiled(struct.pack("<I256I", 1024, *units) + b"fi\0")
    >>> p.normalize("\ufb01ne \ufb01\u0301 x\u0301") == "fine fi x\u0301"
    True
    """

    __slots__ = (
        "_charsmap",
        "_children_index",
        "_cluster_cache",
        "_continued",
        "_first",
        "_mapped",
        "_odd",
        "_root",
        "_strings",
        "_table",
        "_units",
        "_values",
    )
    type_name = "Precompiled"

    @property
    def space_local(self) -> bool:
        """The charsmap maps a space to itself."""
        return self._table.get(" ", " ") == " "

    def keeps(self, char: str) -> bool:
        """No rule maps ``char`` or holds it after its first character."""
        return self._table.get(char, char) == char and not self.space_inside_key(ord(char))

    def __init__(self, precompiled_charsmap: bytes) -> None:
        self._charsmap = bytes(precompiled_charsmap)
        self._values: dict[int, str] = {}
        self._table: dict[str, str] = {}
        #: First characters of keys longer than one character -> the trie node after them.
        self._continued: dict[str, int] = {}
        self._odd = False
        if not self._charsmap:
            self._units: list[int] = [0]
            self._strings = b""
            self._root = 0
        else:
            self._parse()
        #: Characters that start some key: only a cluster starting with one can take
        #: the whole-cluster rule.
        self._first = frozenset(self._walk_first_chars())
        self._mapped = _Chars(_cp_ranges(self._table))
        self._cluster_cache: dict[str, str] = {}

    def _parse(self) -> None:
        data = self._charsmap
        if len(data) < 4:
            raise TokstreamError(f"precompiled_charsmap is {len(data)} bytes, too short")
        (trie_size,) = struct.unpack_from("<I", data)
        if trie_size % 4 or trie_size + 4 > len(data) or trie_size == 0:
            raise TokstreamError(
                f"precompiled_charsmap: trie size {trie_size} does not fit the "
                f"{len(data)}-byte charsmap (expected a positive multiple of 4)"
            )
        units = np.frombuffer(data, dtype="<u4", count=trie_size // 4, offset=4)
        self._units = units.tolist()
        self._strings = data[4 + trie_size :]
        try:
            self._strings.decode("utf-8")
        except UnicodeDecodeError as e:
            raise TokstreamError(
                f"precompiled_charsmap: the normalized strings are not UTF-8 ({e})"
            ) from None
        self._root = _unit_offset(self._units[0])
        # Children of each node by reverse lookup (a unit labelled c at index i is the
        # child of the node whose base is i ^ c): one numpy pass instead of 255 probes
        # per node.
        labels = units & np.uint32(_LABEL_MASK)
        index = np.nonzero((labels >= 1) & (labels <= 255))[0]
        parents = index ^ labels[index]
        order = np.argsort(parents, kind="stable")
        self._children_index = (parents[order], index[order])

    def _children(self, node: int) -> list[int]:
        parents, index = self._children_index
        lo = int(np.searchsorted(parents, node, "left"))
        hi = int(np.searchsorted(parents, node, "right"))
        return [int(i) for i in index[lo:hi]]

    def _value(self, node: int) -> str:
        """The replacement stored at the leaf below ``node``."""
        if node >= len(self._units):
            raise TokstreamError(f"precompiled_charsmap: leaf {node} is outside the trie")
        offset = self._units[node] & _VALUE_MASK
        cached = self._values.get(offset)
        if cached is not None:
            return cached
        if offset > len(self._strings):
            raise TokstreamError(
                f"precompiled_charsmap: replacement offset {offset} is outside the "
                f"{len(self._strings)}-byte string table"
            )
        end = self._strings.find(b"\0", offset)
        try:
            value = self._strings[offset : end if end >= 0 else None].decode("utf-8")
        except UnicodeDecodeError:
            raise TokstreamError(
                f"precompiled_charsmap: replacement offset {offset} is not at a character"
            ) from None
        self._values[offset] = value
        return value

    def _walk_first_chars(self) -> set[str]:
        """Fill the one-character table; return the characters that start some key.

        Keys are walked down to one whole UTF-8 character. A leaf above that (a key
        that is not whole characters) makes the charsmap "odd": then every text takes
        the exact cluster-by-cluster path.
        """
        first: set[str] = set()
        if not self._charsmap:
            return first
        stack: list[tuple[int, bytes]] = [(self._root, b"")]
        while stack:
            node, path = stack.pop()
            for i in self._children(node):
                unit = self._units[i]
                key = path + bytes([unit & 0xFF])
                child = i ^ _unit_offset(unit)
                need = _utf8_length(key[0])
                if unit & _LEAF_BIT:
                    value = self._value(child)
                    if len(key) < need or need == 0:
                        self._odd = True
                    elif len(key) == need:
                        try:
                            self._table[key.decode("utf-8")] = value
                        except UnicodeDecodeError:
                            self._odd = True
                if need == 0 or len(key) > need:
                    continue
                if len(key) < need:
                    stack.append((child, key))
                else:
                    try:
                        char = key.decode("utf-8")
                    except UnicodeDecodeError:
                        continue
                    if self._children(child):
                        self._continued[char] = child
                        first.add(char)
                    elif unit & _LEAF_BIT:
                        first.add(char)
        return first

    def space_inside_key(self, byte: int = 0x20) -> bool:
        """Whether some key holds ``byte`` (a space by default) after its first byte.

        Cost: one numpy pass over the trie's edges (the parent of every edge labelled
        ``byte`` is compared with the root; unreachable units only make it cautious).
        """
        if not self._charsmap:
            return False
        parents, index = self._children_index
        units = np.asarray(self._units, dtype=np.uint32)
        labels = units[index] & np.uint32(_LABEL_MASK)
        return bool(np.any(parents[labels == byte] != self._root))

    def _next_chars(self, node: int) -> tuple[set[str], bool]:
        """The whole characters that continue some key from ``node``, and whether a key
        ends inside one of them (an "odd" key, as in ``_walk_first_chars``)."""
        chars: set[str] = set()
        odd = False
        stack: list[tuple[int, bytes]] = [(node, b"")]
        while stack:
            parent, path = stack.pop()
            for i in self._children(parent):
                unit = self._units[i]
                key = path + bytes([unit & 0xFF])
                need = _utf8_length(key[0])
                if need == 0:
                    odd = True
                    continue
                if len(key) < need:
                    odd = odd or bool(unit & _LEAF_BIT)
                    stack.append((i ^ _unit_offset(unit), key))
                    continue
                try:
                    chars.add(key.decode("utf-8"))
                except UnicodeDecodeError:
                    odd = True
        return chars, odd

    def _longest(self, data: bytes, start: int = 0) -> tuple[int, int, bool]:
        """SentencePiece's rule (``normalizer.cc``): the longest key that prefixes
        ``data[start:]``, as ``(its length in bytes, its leaf node)``, ``(0, -1)`` when
        none; and whether the walk was still inside the trie at the end of ``data``
        (then more data could give a longer key). A NUL byte ends the walk."""
        units = self._units
        n = len(units)
        node = self._root
        best, leaf = 0, -1
        for k in range(start, len(data)):
            byte = data[k]
            i = node ^ byte
            if byte == 0 or i >= n:
                return best, leaf, False
            unit = units[i]
            if unit & _LABEL_MASK != byte:
                return best, leaf, False
            node = i ^ _unit_offset(unit)
            if unit & _LEAF_BIT:
                best, leaf = k + 1 - start, node
        return best, leaf, True

    def _lookup(self, key: bytes) -> str | None:
        """The replacement of the shortest key that prefixes ``key`` (spm's transform)."""
        units = self._units
        n = len(units)
        node = self._root
        for byte in key:
            if byte == 0:
                break
            i = node ^ byte
            if i >= n:
                return None
            unit = units[i]
            if unit & _LABEL_MASK != byte:
                return None
            node = i ^ _unit_offset(unit)
            if unit & _LEAF_BIT:
                return self._value(node)
        return None

    def _map_char(self, char: str) -> str:
        if self._odd:
            value = self._lookup(char.encode("utf-8", "surrogatepass"))
            return char if value is None else value
        return self._table.get(char, char)

    def _map_cluster(self, cluster: str) -> str | None:
        """The whole-cluster replacement, or None when characters map one by one."""
        if len(cluster) < 2 and not self._odd:
            return None
        key = cluster.encode("utf-8", "surrogatepass")
        return self._lookup(key) if len(key) < 6 else None

    def _map_run(self, m: re.Match[str]) -> str:
        table = self._table
        return "".join([table[c] for c in m.group()])

    def _map_slow(self, m: regex.Match[str]) -> str:
        text = m.group()
        if m.lastgroup != "multi":
            return self._mapped.sub(self._map_run, text)
        cache = self._cluster_cache
        mapped = cache.get(text)
        if mapped is None:
            whole = self._map_cluster(text) if text[0] in self._first else None
            mapped = self._mapped.sub(self._map_run, text) if whole is None else whole
            if len(cache) < _CLUSTER_CACHE_SIZE:
                cache[text] = mapped
        return mapped

    def __reduce__(self) -> tuple[type[Precompiled], tuple[bytes]]:
        # Rebuild from the charsmap (60 ms) rather than pickle the unpacked trie.
        return (type(self), (self._charsmap,))

    def normalize(self, text: str) -> str:
        if self._odd:
            return self.normalize_aligned(text)[0]
        if not text or not self._first:
            return self._mapped.sub(self._map_run, text)
        if not _grapheme_joiners().search(text) and not ("\r" in self._first and "\r\n" in text):
            # Every grapheme cluster is one character: they all map one by one.
            return self._mapped.sub(self._map_run, text)
        return _CLUSTERS.sub(self._map_slow, text)

    def normalize_aligned(self, text: str) -> tuple[str, Spans]:
        out: list[str] = []
        spans: Spans = []
        for m in _GRAPHEME.finditer(text):
            cluster = m.group()
            start = m.start()
            whole = self._map_cluster(cluster)
            if whole is not None:
                out.append(whole)
                spans.extend([(start, m.end())] * len(whole))
                continue
            for k, char in enumerate(cluster, start):
                mapped = self._map_char(char)
                out.append(mapped)
                spans.extend([(k, k + 1)] * len(mapped))
        return "".join(out), spans

    def to_json(self) -> dict[str, object]:
        return {
            "type": self.type_name,
            "precompiled_charsmap": base64.b64encode(self._charsmap).decode("ascii"),
        }

    def __repr__(self) -> str:
        return f"Precompiled(<{len(self._charsmap)}-byte charsmap>)"

    @classmethod
    def _from_json(cls, obj: Mapping[str, object], path: str) -> Normalizer:
        encoded = _get(obj, "precompiled_charsmap", str, path)
        try:
            data = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError) as e:
            raise TokenizerFileError(
                f"{path}.precompiled_charsmap: not valid base64 ({e})"
            ) from None
        return cls(data)


def _cp_ranges(chars: Iterable[str]) -> list[tuple[int, int]]:
    ranges: list[list[int]] = []
    for cp in sorted(ord(c) for c in chars):
        if 0xD800 <= cp <= 0xDFFF:
            continue  # never in a valid UTF-8 key; re rejects them in classes on some builds
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    return [(a, b) for a, b in ranges]


# ---------------------------------------------------------------- simple rewrites


class Prepend(Normalizer):
    """Put ``prepend`` before non-empty text (empty text stays empty).

    Cost: one string concatenation.

    >>> Prepend("▁").normalize_aligned("hi")
    ('▁hi', [(0, 0), (0, 1), (1, 2)])
    """

    __slots__ = ("prepend",)
    type_name = "Prepend"

    space_local = True  # character-local, or acting at the ends only

    def keeps(self, char: str) -> bool:
        return True

    def __init__(self, prepend: str) -> None:
        self.prepend = prepend

    def normalize(self, text: str) -> str:
        return self.prepend + text if text else text

    def normalize_continued(self, text: str) -> str:
        return text

    def normalize_aligned(self, text: str) -> tuple[str, Spans]:
        if not text:
            return text, []
        return self.prepend + text, [(0, 0)] * len(self.prepend) + _identity(0, len(text))

    def to_json(self) -> dict[str, object]:
        return {"type": self.type_name, "prepend": self.prepend}

    @classmethod
    def _from_json(cls, obj: Mapping[str, object], path: str) -> Normalizer:
        return cls(_get(obj, "prepend", str, path))


def _can_match_empty(pattern: str, compiled: regex.Pattern[str]) -> bool:
    """Whether ``pattern`` may match the empty string somewhere (conservative).

    Without lookaround, anchors or word boundaries, a pattern matches empty text in
    every context iff it matches ``""``; with them we assume it can.
    """
    if compiled.fullmatch("") is not None:
        return True
    return bool(regex.search(r"\(\?<?[=!]|\\[bBAZzGKmMy]|[$^]", pattern))


#: ``Replace`` regexes that match only spaces or ``▁`` (what SentencePiece's
#: ``tokenizer.json`` form writes): they leave every other character alone.
_SPACE_ONLY_PATTERNS: Final = frozenset({" {2,}", " +", r"\A ", "\u2581+" + r"(?![\s\S])", r" +(?![\s\S])"})


class Replace(Normalizer):
    """Replace every match of ``pattern`` with ``content``, left to right.

    ``pattern`` is a literal string, or a regex with ``is_regex=True`` (the JSON
    ``{"Regex": ...}``). ``content`` is inserted literally (no group references).
    Empty matches follow ``tokenizers``: none in empty text, and none where the previous
    match ended (``"x*"`` over ``"axb"`` gives 3 matches, not Python's 4).

    Cost: ``str.replace`` for a string; one ``regex.sub`` for a regex that cannot match
    empty text, else a Python loop over the matches.

    >>> Replace(" ", "▁").normalize("a b")
    'a▁b'
    >>> Replace(" {2,}", "▁", is_regex=True).normalize_aligned("a   b")
    ('a▁b', [(0, 1), (1, 4), (4, 5)])
    """

    __slots__ = ("_empty", "_regex", "_template", "content", "is_regex", "pattern")
    type_name = "Replace"

    @property
    def space_local(self) -> bool:
        """Spaces replaced, or runs of them."""
        return self.pattern == " " or (self.is_regex and self.pattern in (" {2,}", " +"))

    def keeps(self, char: str) -> bool:
        if not self.is_regex:
            return char not in self.pattern and char not in self.content
        return self.pattern in _SPACE_ONLY_PATTERNS and char not in self.content

    def __init__(self, pattern: str, content: str, *, is_regex: bool = False) -> None:
        self.pattern = pattern
        self.content = content
        self.is_regex = is_regex
        try:
            self._regex = regex.compile(pattern if is_regex else regex.escape(pattern))
        except regex.error as e:
            raise TokstreamError(f"Replace pattern {pattern!r} does not compile: {e}") from None
        # regex.sub reads backslashes in its template; content is literal.
        self._template = content.replace("\\", "\\\\")
        self._empty = _can_match_empty(pattern, self._regex) if is_regex else not pattern

    def _matches(self, text: str) -> Iterable[tuple[int, int]]:
        """Oniguruma's ``find_iter``: skip an empty match where the last match ended."""
        if not text:
            return
        pos = 0
        last_end = -1
        search = self._regex.search
        while pos <= len(text):
            m = search(text, pos)
            if m is None:
                return
            s, e = m.span()
            if s == e == last_end:
                # After an empty match the next search from the same place finds it
                # again; after a non-empty one an empty match there is not taken.
                pos = e + 1
                continue
            yield s, e
            last_end = pos = e

    def normalize(self, text: str) -> str:
        if not text:
            return text
        if not self.is_regex and self.pattern:
            return text.replace(self.pattern, self.content)
        if not self._empty:
            return self._regex.sub(self._template, text)
        out: list[str] = []
        pos = 0
        for s, e in self._matches(text):
            out.append(text[pos:s])
            out.append(self.content)
            pos = e
        out.append(text[pos:])
        return "".join(out)

    def normalize_aligned(self, text: str) -> tuple[str, Spans]:
        out: list[str] = []
        spans: Spans = []
        pos = 0
        width = len(self.content)
        for s, e in self._matches(text):
            out.append(text[pos:s])
            spans.extend(_identity(pos, s))
            out.append(self.content)
            spans.extend([(s, e)] * width)
            pos = e
        out.append(text[pos:])
        spans.extend(_identity(pos, len(text)))
        return "".join(out), spans

    def to_json(self) -> dict[str, object]:
        kind = "Regex" if self.is_regex else "String"
        return {"type": self.type_name, "pattern": {kind: self.pattern}, "content": self.content}

    def __repr__(self) -> str:
        flag = ", is_regex=True" if self.is_regex else ""
        return f"Replace({self.pattern!r}, {self.content!r}{flag})"

    @classmethod
    def _from_json(cls, obj: Mapping[str, object], path: str) -> Normalizer:
        pattern = obj.get("pattern")
        if not isinstance(pattern, dict) or len(pattern) != 1:
            raise _field_error(path, "pattern", 'an object {"String": ...} or {"Regex": ...}', pattern)
        ((kind, value),) = pattern.items()
        if kind not in ("String", "Regex") or not isinstance(value, str):
            raise _field_error(path, "pattern", 'an object {"String": ...} or {"Regex": ...}', pattern)
        return cls(value, _get(obj, "content", str, path), is_regex=kind == "Regex")


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
        return text[start:end], _identity(start, end)

    def to_json(self) -> dict[str, object]:
        return {"type": self.type_name, "strip_left": self.strip_left, "strip_right": self.strip_right}

    @classmethod
    def _from_json(cls, obj: Mapping[str, object], path: str) -> Normalizer:
        return cls(
            strip_left=_get(obj, "strip_left", bool, path),
            strip_right=_get(obj, "strip_right", bool, path),
        )


class Nmt(Normalizer):
    r"""The NMT normalizer: remove C0 controls (but tab, newline, FF, CR), DEL, U+008F,
    U+009F; turn tab, newline, FF, CR, U+1680, U+200B..U+200F, U+2028, U+2029, U+2581,
    U+FEFF and U+FFFD into ``" "``.

    Cost: one ``re.sub`` with a callback per run of such characters.

    >>> Nmt().normalize("a\tb\x01c")
    'a bc'
    """

    __slots__ = ()
    type_name = "Nmt"

    def normalize(self, text: str) -> str:
        return _NMT_RE.sub(_nmt_run, text)

    def normalize_aligned(self, text: str) -> tuple[str, Spans]:
        out: list[str] = []
        spans: Spans = []
        for k, c in enumerate(text):
            mapped = _NMT_TABLE.get(ord(c), c)
            if mapped is not None:
                out.append(mapped)
                spans.append((k, k + 1))
        return "".join(out), spans


def _nmt_run(m: re.Match[str]) -> str:
    return m.group().translate(_NMT_TABLE)


class ByteLevel(Normalizer):
    """Spell the text's UTF-8 bytes in GPT-2's byte-level alphabet (``" "`` -> ``"Ġ"``).

    Cost: one ``bytes.decode`` and one ``str.translate`` (ASCII-sized table).

    >>> ByteLevel().normalize_aligned(" é")
    ('ĠÃ©', [(0, 1), (1, 2), (1, 2)])
    """

    __slots__ = ()
    type_name = "ByteLevel"

    def normalize(self, text: str) -> str:
        return text.encode("utf-8", "surrogatepass").decode("latin-1").translate(_BYTE_LEVEL_TABLE)

    def normalize_aligned(self, text: str) -> tuple[str, Spans]:
        out = self.normalize(text)
        spans: Spans = []
        for k, c in enumerate(text):
            spans.extend([(k, k + 1)] * len(c.encode("utf-8", "surrogatepass")))
        return out, spans


class Sequence(Normalizer):
    """Apply several normalizers in order.

    Cost: the sum of its members'; ``normalize_aligned`` composes spans in O(n) per member.

    >>> Sequence([Prepend("▁"), Replace(" ", "▁")]).normalize("a b")
    '▁a▁b'
    """

    __slots__ = ("normalizers",)
    type_name = "Sequence"

    @property
    def space_local(self) -> bool:
        return all(n.space_local for n in self.normalizers)

    def keeps(self, char: str) -> bool:
        return all(n.keeps(char) for n in self.normalizers)

    def __init__(self, normalizers: Iterable[Normalizer]) -> None:
        self.normalizers: tuple[Normalizer, ...] = tuple(normalizers)

    def normalize(self, text: str) -> str:
        for n in self.normalizers:
            text = n.normalize(text)
        return text

    def normalize_continued(self, text: str) -> str:
        for n in self.normalizers:
            text = n.normalize_continued(text)
        return text

    def normalize_aligned(self, text: str) -> tuple[str, Spans]:
        spans = _identity(0, len(text))
        for n in self.normalizers:
            text, outer = n.normalize_aligned(text)
            spans = _compose(spans, outer)
        return text, spans

    def to_json(self) -> dict[str, object]:
        return {"type": self.type_name, "normalizers": [n.to_json() for n in self.normalizers]}

    def __repr__(self) -> str:
        return f"Sequence({list(self.normalizers)!r})"

    @classmethod
    def _from_json(cls, obj: Mapping[str, object], path: str) -> Normalizer:
        items = obj.get("normalizers")
        if not isinstance(items, list):
            raise _field_error(path, "normalizers", "a list", items)
        members = []
        for i, item in enumerate(items):
            member = normalizer_from_json(item, f"{path}.normalizers[{i}]")
            if member is None:
                raise TokenizerFileError(
                    f"{path}.normalizers[{i}]: expected a normalizer object, got null"
                )
            members.append(member)
        return cls(members)


# ------------------------------------------------------------------------------ JSON


def _field_error(path: str, name: str, expected: str, got: object) -> TokenizerFileError:
    if got is None:
        return TokenizerFileError(f"{path}: missing field {name!r} ({expected})")
    return TokenizerFileError(f"{path}.{name}: expected {expected}, got {got!r:.80}")


_TYPE_NAMES: Final = {bool: "a boolean", str: "a string"}


def _get(obj: Mapping[str, object], name: str, kind: type[_T], path: str) -> _T:
    value = obj.get(name)
    if not isinstance(value, kind):
        raise _field_error(path, name, _TYPE_NAMES.get(kind, kind.__name__), value)
    return value


_FROM_JSON: Final[dict[str, type[Normalizer]]] = {
    cls.type_name: cls
    for cls in (
        NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, BertNormalizer, Precompiled,
        Prepend, Replace, Strip, Nmt, ByteLevel, Sequence,
    )
}


def normalizer_from_json(obj: object, path: str = "normalizer") -> Normalizer | None:
    """Build the normalizer of a ``tokenizer.json`` ``"normalizer"`` object.

    ``None`` (JSON ``null``) gives ``None``. An unknown ``"type"`` raises
    ``NotImplementedError`` naming it and ``path``; a missing or mistyped field raises
    ``TokenizerFileError`` (a ``ValueError``) naming the JSON path, e.g.
    ``normalizer.normalizers[1].prepend``. ``to_json`` gives the object back.

    >>> normalizer_from_json({"type": "Sequence", "normalizers": [{"type": "NFKC"}]})
    Sequence([NFKC()])
    >>> normalizer_from_json({"type": "Strip", "strip_left": True})
    Traceback (most recent call last):
    ...
    tokstream.errors.TokenizerFileError: normalizer: missing field 'strip_right' (a boolean)
    """
    if obj is None:
        return None
    if not isinstance(obj, dict):
        raise TokenizerFileError(f"{path}: expected a normalizer object, got {obj!r:.80}")
    kind = obj.get("type")
    if not isinstance(kind, str):
        raise _field_error(path, "type", "a string", kind)
    cls = _FROM_JSON.get(kind)
    if cls is None:
        raise NotImplementedError(
            f"{path}: normalizer type {kind!r} is not supported; supported types: "
            f"{', '.join(sorted(_FROM_JSON))}"
        )
    try:
        return cls._from_json(obj, path)
    except TokenizerFileError:
        raise
    except TokstreamError as e:
        raise TokenizerFileError(f"{path}: {e}") from e

"""Print the character classes that ``tokenizers``' Rust code uses, read off the library.

``pre_tokenizers.py`` embeds them as explicit classes, so matching does not depend on the
Unicode tables of the installed ``regex`` release (which move on: regex 2026.9 counts
U+1246F as a number, tokenizers 0.23 does not):

- ``_PUNCT``: ``is_punctuation`` (BertPreTokenizer, Punctuation);
- ``_NUMERIC``: Rust's ``char::is_numeric`` (Digits).

Run: ``python tools/gen_tokenizers_classes.py`` (needs ``tokenizers``).
"""

from __future__ import annotations

from tokenizers.pre_tokenizers import Digits, Punctuation

ALL = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]


def isolated(pre: object) -> list[int]:
    """Code points that ``pre`` cuts out as pieces of their own, between letters."""
    found = []
    for i in range(0, len(ALL), 50_000):
        text = "a".join(ALL[i : i + 50_000]) + "a"
        found += [ord(s) for s, _ in pre.pre_tokenize_str(text) if len(s) == 1 and s != "a"]  # type: ignore[attr-defined]
    return sorted(set(found))


def as_class(points: list[int]) -> str:
    ranges: list[list[int]] = []
    for cp in points:
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    return "[" + "".join(f"\\U{a:08X}" if a == b else f"\\U{a:08X}-\\U{b:08X}" for a, b in ranges) + "]"


if __name__ == "__main__":
    print(f'_PUNCT: Final = r"""{as_class(isolated(Punctuation()))}"""')
    print(f'_NUMERIC: Final = r"""{as_class(isolated(Digits(individual_digits=True)))}"""')

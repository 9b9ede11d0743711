"""Write ``tokstream/pre_tokenizers/_tables.py``: the character classes of ``tokenizers``'
Rust code, read off the library.

The pre-tokenizers use them as explicit classes, so matching does not depend on the
Unicode tables of the installed ``regex`` release (which move on: regex 2026.9 counts
U+1246F as a number, tokenizers 0.23 does not; its ``\\p{P}`` has U+061D, which
tokenizers' older tables do not):

- ``PUNCT``: ``is_punctuation`` (BertPreTokenizer, Punctuation);
- ``NUMERIC``: Rust's ``char::is_numeric`` (Digits).

Each code point is put between two ``a`` and run through ``tokenizers``' ``Punctuation``
and ``Digits(individual_digits=True)``, 50,000 code points per call; the ones cut out
alone are the class. ``tests/pre_tokenizers/test_pre_tokenizer_tables.py`` regenerates and compares.

Run: ``python tools/gen_tokenizers_classes.py`` (needs ``tokenizers``) writes the module;
``--check`` only compares and exits 1 when it differs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import tokenizers
from tokenizers.pre_tokenizers import Digits, Punctuation

TARGET = Path(__file__).resolve().parents[1] / "tokstream" / "pre_tokenizers" / "_tables.py"

ALL = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]


def isolated(pre: object) -> list[int]:
    """Code points that ``pre`` cuts out as pieces of their own, between letters."""
    found = []
    for i in range(0, len(ALL), 50_000):
        text = "a".join(ALL[i : i + 50_000]) + "a"
        found += [ord(s) for s, _ in pre.pre_tokenize_str(text) if len(s) == 1 and s != "a"]  # type: ignore[attr-defined]
    return sorted(set(found))


def class_items(points: list[int]) -> list[str]:
    """The items of the character class holding ``points``: ``\\U...`` or ``\\U...-\\U...``."""
    ranges: list[list[int]] = []
    for cp in points:
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    return [f"\\U{a:08X}" if a == b else f"\\U{a:08X}-\\U{b:08X}" for a, b in ranges]


def as_class(points: list[int]) -> str:
    return "[" + "".join(class_items(points)) + "]"


def classes() -> tuple[list[int], list[int]]:
    """The code points of ``PUNCT`` and ``NUMERIC``, as the installed ``tokenizers`` has them."""
    return isolated(Punctuation()), isolated(Digits(individual_digits=True))


def _assignment(name: str, points: list[int], width: int = 96) -> list[str]:
    """``name: Final = (...)``: the class as raw strings of whole items, ``width`` wide."""
    rows, row = [], "["
    for item in class_items(points):
        if len(row) + len(item) > width - len('    r""""""'):
            rows.append(row)
            row = ""
        row += item
    rows.append(row + "]")
    return [f"{name}: Final = ("] + [f'    r"""{r}"""' for r in rows] + [")"]


def render(punct: list[int], numeric: list[int], version: str) -> str:
    """The text of ``_tables.py`` for these classes, read off ``tokenizers`` ``version``."""
    lines = [
        '"""Character classes of ``tokenizers``\' Rust code (generated; do not edit).',
        "",
        f"Made by tools/gen_tokenizers_classes.py from tokenizers {version}; that script says why.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Final",
        "",
        "# tokenizers' is_punctuation: ASCII punctuation, or a Unicode P* character in the",
        "# library's own Unicode tables (BertPreTokenizer, Punctuation).",
        *_assignment("PUNCT", punct),
        "",
        "# Rust's char::is_numeric (Nd, Nl, No) as the library has it (Digits).",
        *_assignment("NUMERIC", numeric),
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    text = render(*classes(), version=tokenizers.__version__)
    if argv == ["--check"]:
        if TARGET.read_text(encoding="utf-8") != text:
            print(
                f"{TARGET} differs from what tokenizers {tokenizers.__version__} gives; "
                "run tools/gen_tokenizers_classes.py",
                file=sys.stderr,
            )
            return 1
        return 0
    if argv:
        print("usage: python tools/gen_tokenizers_classes.py [--check]", file=sys.stderr)
        return 2
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

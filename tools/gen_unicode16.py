"""Write ``tokstream/pre_tokenizers/_unicode16.py``: the Unicode 16.0 facts that exact
tiktoken pre-tokenization needs from us.

tiktoken's Rust regex engine classifies characters by Unicode 16.0; the ``regex``
module follows newer versions (17.0 as of regex 2026.5), where, for example, CJK
Extension J (U+323B0..) became letters and U+0295 moved from Ll to Lo. Writing the
classes out as Unicode 16.0 ranges would make every match ~15x slower, so the
pre-tokenizer keeps ``\\p{..}`` and switches to stand-ins only for text that holds a
character whose class differs (``pre_tokenizers/unicode16.py``). This script records
the Unicode 16.0 side of that comparison, and nothing that depends on the ``regex``
release (any ``regex>=2024.9.11`` may be installed):

- ``UNASSIGNED``: the code points unassigned in Unicode 16.0;
- ``CATEGORIES``: for each other general category (``Lu`` .. ``Co``), its Unicode 16.0
  code points; a pattern's ``\\p{..}`` general-category classes and ``\\d`` are unions
  of them;
- ``WORD_EXTRA``: the code points of ``\\w`` (Alphabetic, marks, decimal digits,
  connectors, join controls) outside the letter, mark, ``Nd``, ``Nl`` and ``Pc``
  categories in Unicode 16.0: ``Join_Control`` and the ``Other_Alphabetic`` symbols.
  ``unicodedataplus`` has no binary properties, so they are copied here from
  ``PropList-16.0.0.txt``; ``tests/pre_tokenizers/test_unicode16.py`` checks the whole
  ``\\w`` built from them against tiktoken's own.

Both are written as strings of hex ranges (``"41-5A C0-D6 D8-DE 100 ..."``), not as
tuples of int pairs: Python compiles 3,400 tuples in about 16 ms whenever no ``.pyc``
is kept (``PYTHONDONTWRITEBYTECODE``), a string in 0.1 ms, and parsing it takes 1 ms.

Which code points the installed ``regex`` classifies differently is found at run time,
once, from these ranges (``unicode16.unicode16_fixes``).
``tests/pre_tokenizers/test_unicode16.py`` regenerates the module and compares.

Run: ``pip install unicodedataplus==16.0.0.post1 && python tools/gen_unicode16.py`` writes the
module; ``--check`` only compares and exits 1 when it differs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import unicodedataplus as ud  # Unicode 16.0 (unicodedata2 is pinned to 17.0 for the normalizers)

TARGET = Path(__file__).resolve().parents[1] / "tokstream" / "pre_tokenizers" / "_unicode16.py"

#: The general categories recorded besides ``Cn``, in this order.
KEPT = (
    *("Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No"),
    *("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co"),
)

#: PropList-16.0.0.txt: Join_Control, and the Other_Alphabetic code points that are
#: no letter, mark or number (the circled and squared Latin letters, all ``So``).
WORD_EXTRA = [(0x200C, 0x200D), (0x24B6, 0x24E9), (0x1F130, 0x1F149), (0x1F150, 0x1F169), (0x1F170, 0x1F189)]


def ranges_by_category() -> dict[str, list[tuple[int, int]]]:
    """``(first, last)`` code point ranges of ``Cn`` and each ``KEPT`` category in 16.0."""
    if ud.unidata_version != "16.0.0":
        raise SystemExit(
            f"needs unicodedataplus 16.0.0, found {ud.unidata_version}: pip install unicodedataplus==16.0.0.post1"
        )
    found: dict[str, list[tuple[int, int]]] = {cat: [] for cat in ("Cn", *KEPT)}
    for cp in range(0x110000):
        ranges = found.get(ud.category(chr(cp)))
        if ranges is None:
            continue
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1] = (ranges[-1][0], cp)
        else:
            ranges.append((cp, cp))
    return found


def _spec(ranges: list[tuple[int, int]], indent: str, width: int = 96) -> list[str]:
    """``ranges`` as the lines of a string literal: hex code points, ``first-last`` for a
    range, space-separated (every line but the last ends in the space)."""
    items = [f"{a:X}" if a == b else f"{a:X}-{b:X}" for a, b in ranges]
    lines: list[str] = []
    row = ""
    for item in items:
        if row and len(indent) + len(row) + len(item) + 3 > width:
            lines.append(f'{indent}"{row}"')
            row = ""
        row += item + " "
    lines.append(f'{indent}"{row.rstrip()}"')
    return lines


def render(found: dict[str, list[tuple[int, int]]]) -> str:
    """The text of ``_unicode16.py``."""
    lines = [
        '"""Unicode 16.0 facts for exact tiktoken pre-tokenization (generated; do not edit).',
        "",
        "Made by tools/gen_unicode16.py from unicodedataplus 16.0.0; that script says why. Each",
        "string lists code points in hex, separated by spaces; ``first-last`` is a range.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "# The code points unassigned in Unicode 16.0.",
        "UNASSIGNED: str = (",
        *_spec(found["Cn"], "    "),
        ")",
        "",
        "# The code points of each other general category in Unicode 16.0.",
        "CATEGORIES: dict[str, str] = {",
    ]
    for cat in KEPT:
        lines += [f'    "{cat}": (', *_spec(found[cat], "        "), "    ),"]
    lines += [
        "}",
        "",
        "# The code points of \\w in Unicode 16.0 outside the L, M, Nd, Nl and Pc categories.",
        "WORD_EXTRA: str = (",
        *_spec(WORD_EXTRA, "    "),
        ")",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    text = render(ranges_by_category())
    if argv == ["--check"]:
        if TARGET.read_text(encoding="utf-8") != text:
            print(f"{TARGET} differs; run tools/gen_unicode16.py", file=sys.stderr)
            return 1
        return 0
    if argv:
        print("usage: python tools/gen_unicode16.py [--check]", file=sys.stderr)
        return 2
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

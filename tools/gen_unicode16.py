"""Generate ``tokstream/pre_tokenizers/_unicode16.py``: what tiktoken's Unicode 16.0 needs from us.

tiktoken's Rust regex engine classifies characters by Unicode 16.0; the ``regex``
module follows newer versions (17.0 as of regex 2026.5), where, for example, CJK
Extension J (U+323B0..) became letters and U+0295 moved from Ll to Lo. Writing the
classes out as Unicode 16.0 ranges would make every match ~15x slower, so the
pre-tokenizer keeps ``\\p{..}`` and switches to a corrected pattern only for text
that holds a character whose class differs (``pre_tokenizers/unicode16.py``). This script
records the two facts that needs:

- ``UNASSIGNED``: the code points unassigned in Unicode 16.0, as ranges. Whatever
  ``regex`` release is installed, the ones it assigns are found at run time.
- ``RECLASSIFIED``: assigned code points whose membership in a class the patterns use
  differs between Unicode 16.0 and the installed ``regex`` (found here, at build
  time, for the ``regex`` release in use), with their Unicode 16.0 category.

Run: ``pip install unicodedata2==16.0.0 && python tools/gen_unicode16.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import regex
import unicodedata2 as ud

assert ud.unidata_version == "16.0.0", ud.unidata_version

GROUPS = {
    "L": ("Lu", "Ll", "Lt", "Lm", "Lo"),
    "Lu": ("Lu",),
    "Ll": ("Ll",),
    "Lt": ("Lt",),
    "Lm": ("Lm",),
    "Lo": ("Lo",),
    "M": ("Mn", "Mc", "Me"),
    "N": ("Nd", "Nl", "No"),
}


def main() -> None:
    unassigned: list[tuple[int, int]] = []
    for cp in range(0x110000):
        if ud.category(chr(cp)) == "Cn":
            if unassigned and unassigned[-1][1] == cp - 1:
                unassigned[-1] = (unassigned[-1][0], cp)
            else:
                unassigned.append((cp, cp))
    reclassified: dict[int, str] = {}
    for name, cats in GROUPS.items():
        prop = regex.compile(r"\p{%s}" % name)
        for cp in range(0x110000):
            cat = ud.category(chr(cp))
            if cat != "Cn" and (cat in cats) != (prop.match(chr(cp)) is not None):
                reclassified[cp] = cat
    lines = [
        '"""Unicode 16.0 facts for exact tiktoken pre-tokenization (generated; do not edit).',
        "",
        "Made by tools/gen_unicode16.py from unicodedata2 16.0.0 and regex "
        f"{regex.__version__}; that script says why.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "# (first, last) code point ranges unassigned in Unicode 16.0.",
        "UNASSIGNED: tuple[tuple[int, int], ...] = (",
    ]
    row: list[str] = []
    for a, b in unassigned:
        row.append(f"(0x{a:X}, 0x{b:X}),")
        if len(row) == 5:
            lines.append("    " + " ".join(row))
            row = []
    if row:
        lines.append("    " + " ".join(row))
    lines.append(")")
    lines.append("")
    lines.append("# Assigned code points whose class differs in the installed regex: their 16.0 category.")
    lines.append("RECLASSIFIED: dict[int, str] = {")
    for cp, cat in sorted(reclassified.items()):
        lines.append(f'    0x{cp:X}: "{cat}",')
    lines.append("}")
    target = Path(__file__).resolve().parents[1] / "tokstream" / "pre_tokenizers" / "_unicode16.py"
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {target}", file=sys.stderr)


if __name__ == "__main__":
    main()

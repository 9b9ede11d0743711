"""Write ``tokstream/pre_tokenizers/_scripts.py``: the script classes of ``tokenizers``'
``UnicodeScripts`` pre-tokenizer, read off the library.

``UnicodeScripts`` cuts text where the script changes. Its script of a character is
not Unicode's current Script property but the library's own table (generated from an
old ``Scripts.txt``, Unicode 9.0-era, as SentencePiece's), with three rules on top:
Hiragana, Katakana and U+30FC (the prolonged sound mark, Common) count as Han; the
space and every character missing from the table are ``Any``, which never cuts and
joins the piece it is in. So a newer table (``unicodedataplus``, the ``regex``
module) would cut at characters ``tokenizers`` lets through. Only which characters
share a script matters, so the classes are found by asking the library:

1. each code point is put between two ``a`` (Latin), then between two ``α`` (Greek),
   and run through ``tokenizers``' ``UnicodeScripts``: a code point cut out alone is
   neither ``Any`` nor that script. ``Any`` is what neither cuts out; Latin what only
   the Greek pass does;
2. the other code points, in code point order, cut into runs of one script each;
3. the runs are grouped: the first run not yet placed is put between every other run
   not yet placed; the ones it does not cut off share its script.

Each class is named after the most frequent Unicode script (``unicodedataplus``) of
its code points, with the other scripts that ``tokenizers`` merges into it.
``tests/pre_tokenizers/test_unicode_scripts.py`` regenerates and compares.

Run: ``python tools/gen_unicode_scripts.py`` (needs ``tokenizers`` and
``unicodedataplus``) writes the module; ``--check`` only compares and exits 1 when it
differs.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import tokenizers
import unicodedataplus
from tokenizers.pre_tokenizers import UnicodeScripts

TARGET = Path(__file__).resolve().parents[1] / "tokstream" / "pre_tokenizers" / "_scripts.py"

ALL = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
_CHUNK = 50_000


def _pieces(text: str) -> list[str]:
    return [s for s, _ in UnicodeScripts().pre_tokenize_str(text)]


def _cut_out(chars: list[str], sep: str) -> set[str]:
    """The characters of ``chars`` that a cut isolates when each stands between two
    ``sep``: neither ``Any`` nor of ``sep``'s script."""
    found: set[str] = set()
    for i in range(0, len(chars), _CHUNK):
        text = sep + sep.join(chars[i : i + _CHUNK]) + sep
        found.update(p for p in _pieces(text) if len(p) == 1 and p != sep)
    return found


def classes() -> list[list[int]]:
    """The code points of each script class as the installed ``tokenizers`` has them
    (``Any`` first), each class sorted, the others in order of their first code point."""
    not_latin = _cut_out(ALL, "a")
    not_greek = _cut_out(ALL, "\u03b1")
    scripted = not_latin | not_greek
    runs: list[str] = []
    ordered = [c for c in ALL if c in scripted]
    for i in range(0, len(ordered), _CHUNK):
        # A chunk boundary may split a run in two; step 3 groups the halves again.
        runs += _pieces("".join(ordered[i : i + _CHUNK]))
    if "".join(runs) != "".join(ordered):
        raise SystemExit("UnicodeScripts dropped or reordered scripted characters: its rules changed")
    groups: list[list[int]] = []
    left = list(range(len(runs)))
    while left:
        head = runs[left[0]][0]
        others = [runs[k][0] for k in left[1:]]
        cut_off = set()
        for i in range(0, len(others), _CHUNK):
            cut_off.update(p for p in _pieces(head + head.join(others[i : i + _CHUNK]) + head) if len(p) == 1)
        same = [left[0], *(k for k in left[1:] if runs[k][0] not in cut_off)]
        groups.append(sorted(ord(c) for k in same for c in runs[k]))
        placed = set(same)
        left = [k for k in left if k not in placed]
    groups.sort(key=lambda g: g[0])
    any_class = sorted(ord(c) for c in ALL if c not in scripted)
    return [any_class, *groups]


def name(points: list[int]) -> str:
    """``"Han"``, or ``"Han + Hiragana + Katakana + Common"``: the Unicode scripts of the
    class, most frequent first (their counts decide, then the name)."""
    counts = Counter(unicodedataplus.script(chr(c)) for c in points)
    top = sorted(counts, key=lambda s: (-counts[s], s))
    # A script that holds under 1% of the class is a stray character or two (a mark
    # that moved script since the library's table): named once it holds 10 or more.
    kept = [s for s in top if s == top[0] or counts[s] >= 10]
    return " + ".join(kept)


def _ranges(points: list[int]) -> list[tuple[int, int]]:
    ranges: list[list[int]] = []
    for cp in points:
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    return [(a, b) for a, b in ranges]


def class_items(points: list[int]) -> list[str]:
    """The items of the character class holding ``points``: ``\\U...`` or ``\\U...-\\U...``."""
    return [f"\\U{a:08X}" if a == b else f"\\U{a:08X}-\\U{b:08X}" for a, b in _ranges(points)]


def as_class(points: list[int]) -> str:
    return "[" + "".join(class_items(points)) + "]"


def _assignment(points: list[int], indent: int, width: int = 96) -> list[str]:
    """The class as raw strings of whole items, ``width`` wide, indented ``indent``."""
    pad = " " * indent
    rows, row = [], "["
    for item in class_items(points):
        if len(row) + len(item) > width - len(f'{pad}r""""""'):
            rows.append(row)
            row = ""
        row += item
    rows.append(row + "]")
    return [f'{pad}r"""{r}"""' for r in rows]


def render(found: list[list[int]], version: str) -> str:
    """The text of ``_scripts.py`` for these classes, read off ``tokenizers`` ``version``."""
    scripted = found[1:]  # Any is every other code point
    lines = [
        '"""The script classes of ``tokenizers``\' ``UnicodeScripts`` (generated; do not edit).',
        "",
        f"Made by tools/gen_unicode_scripts.py from tokenizers {version}; that script says why.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Final",
        "",
        f"#: ``(name, class)`` per script ({sum(map(len, scripted))} code points; ``Any`` is every other",
        "#: one): a run of one class, with the ``Any`` characters inside it, is one piece.",
        "#: Named by the Unicode 16 scripts of their characters.",
        "SCRIPTS: Final = (",
    ]
    for points in scripted:
        lines += [
            f"    (  # {len(points)} code points",
            f'        "{name(points)}",',
            *_assignment(points, 8),
            "    ),",
        ]
    lines.append(")")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    text = render(classes(), version=tokenizers.__version__)
    if argv == ["--check"]:
        if TARGET.read_text(encoding="utf-8") != text:
            print(
                f"{TARGET} differs from what tokenizers {tokenizers.__version__} gives; run tools/gen_unicode_scripts.py",
                file=sys.stderr,
            )
            return 1
        return 0
    if argv:
        print("usage: python tools/gen_unicode_scripts.py [--check]", file=sys.stderr)
        return 2
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

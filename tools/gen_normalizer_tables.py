"""Generate ``tokstream/normalizers/_tables.py``: the character sets read off ``tokenizers``.

The normalizers match ``tokenizers`` on every code point whatever the Unicode version of
the running Python, because they carry the sets of characters where ``tokenizers``' own
(older, or newer) tables decide. Each set is found by probing the installed
``tokenizers`` with every code point but the surrogates (which a Rust string cannot
hold), joined into a few large texts (a separator keeps neighbours apart):

- ``NF_PROTECTED`` (``normalizers/unicode.py``): the characters that Unicode 17.0
  decomposes, gives a nonzero combining class or puts in a composition pair, on which
  ``tokenizers``' NFC/NFD/NFKC/NFKD show none of it. Each candidate is probed alone (its
  decomposition), between a base and U+0334 (class 1) or after U+0345 (class 240)
  (reordering), and in each of its pairs (composition), under the four forms; one
  effect seen makes it known (U+0307 is in pairs with new Todhri letters that
  ``tokenizers`` does not compose, but it reorders). The script then checks the rule
  the normalizers build on the set: on every probe, ``tokenizers`` gives
  ``unicodedata``'s result with each protected character left in place as a starter.
- ``STRIP_ACCENTS_MARKS`` (``strip.py``): what ``StripAccents`` removes.
- ``BERT_NONSPACING_MARKS`` (``bert.py``): what ``BertNormalizer``'s strip_accents
  removes from the characters that ``tokenizers``' NFD leaves alone. The others never
  reach the removal: a run of them goes in where members lie on both sides of it (one
  range fewer), else it stays out.
- ``BERT_CONTROLS`` (``bert.py``): what ``BertNormalizer``'s clean_text removes (the
  whitespace it turns into ``" "`` is not removed).
- ``LOWER_ADDED`` (``lowercase.py``): ``Lowercase`` of the characters first assigned
  after Unicode 13.0 (Python 3.10's ``unicodedata``, the oldest supported) that it
  changes, as runs ``(first, last, delta)`` of consecutive characters with one delta.
  The Age property comes from ``unicodedataplus`` (any release from 13.0 on gives the
  same set); for the older characters the script checks that ``tokenizers`` agrees with
  ``str.lower``.

The short definitions copied from ``tokenizers``' source (BERT's whitespace and CJK
blocks, Nmt's lists, White_Space) stay with their classes.

Run: ``pip install 'unicodedata2==17.0.*' unicodedataplus tokenizers==0.23.3``, then
``python tools/gen_normalizer_tables.py`` writes the module, and ``--check`` compares
instead (exit 1 and a diff on a difference). ``unicodedata2`` must be 17.0: the version
``NF_PROTECTED`` is defined against (``_tables`` says so). About 8 s;
``tests/normalizers/test_normalizer_tables.py`` runs the same probes in process.
"""

from __future__ import annotations

import argparse
import difflib
import functools
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import tokenizers
from tokenizers import normalizers as hf

TARGET = Path(__file__).resolve().parents[1] / "tokstream" / "normalizers" / "_tables.py"
UNICODE = "17.0.0"  # the Unicode version of NF_PROTECTED (unicodedata2's data)


@functools.cache
def every_char() -> tuple[str, ...]:
    """Every code point but the surrogates."""
    return tuple(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)


def per_char(normalizer: hf.Normalizer, sep: str = "\n") -> dict[str, str]:
    """``normalizer`` applied to every character on its own, in one call (``sep`` apart).

    ``sep`` must normalize to itself and appear in no other character's output; the
    count of pieces checks that.
    """
    chars = [c for c in every_char() if c != sep]
    out = normalizer.normalize_str(sep.join(chars)).split(sep)
    if len(out) != len(chars) or normalizer.normalize_str(sep) != sep:
        raise RuntimeError(f"separator {sep!r} does not keep the outputs of {normalizer} apart")
    result = dict(zip(chars, out, strict=True))
    result[sep] = sep
    return result


def as_ranges(cps: Iterable[int]) -> list[tuple[int, int]]:
    ranges: list[list[int]] = []
    for cp in sorted(cps):
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    return [(a, b) for a, b in ranges]


def removed(normalizer: hf.Normalizer, sep: str = "\n") -> list[tuple[int, int]]:
    """The characters that ``normalizer`` deletes."""
    return as_ranges(ord(c) for c, out in per_char(normalizer, sep).items() if out == "")


# ------------------------------------------------------------------------- tables


def nf_protected() -> list[tuple[int, int]]:
    import unicodedata2 as ud

    if ud.unidata_version != UNICODE:
        raise RuntimeError(f"unicodedata2 has Unicode {ud.unidata_version}; install 'unicodedata2==17.0.*'")
    pairs: dict[str, list[str]] = {}  # character -> the primary composite pairs it is in
    for c in every_char():
        parts = ud.decomposition(c).split()
        if len(parts) == 2 and not parts[0].startswith("<"):
            pair = "".join(chr(int(p, 16)) for p in parts)
            if ud.normalize("NFC", pair) == c:  # not excluded from composition
                for member in set(pair):
                    pairs.setdefault(member, []).append(pair)
    candidates = [c for c in every_char() if ud.normalize("NFKD", c) != c or ud.combining(c) or c in pairs]
    probes: list[tuple[str, str]] = []  # (candidate, probe text)
    for c in candidates:
        probes.append((c, c))
        if ud.combining(c):
            probes.append((c, f"a{c}\u0334" if ud.combining(c) > 1 else f"a\u0345{c}"))
        probes += [(c, pair) for pair in pairs.get(c, [])]
    forms = {"NFC": hf.NFC(), "NFD": hf.NFD(), "NFKC": hf.NFKC(), "NFKD": hf.NFKD()}
    text = "\n".join(p for _, p in probes)
    results = {form: n.normalize_str(text).split("\n") for form, n in forms.items()}
    known = set()
    for form, got in results.items():
        for (c, p), out in zip(probes, got, strict=True):
            full = ud.normalize(form, p)
            if full != p and out == full:
                known.add(c)
    protected = sorted({c for c in candidates if c not in known})
    # The normalizers' rule: a protected character is a starter that nothing crosses.
    split = re.compile("([" + "".join(re.escape(c) for c in protected) + "])").split
    for form, got in results.items():
        for (_, p), out in zip(probes, got, strict=True):
            parts = split(p)
            want = "".join(x if i % 2 else ud.normalize(form, x) for i, x in enumerate(parts))
            if out != want:
                raise RuntimeError(
                    f"{form} of {[f'U+{ord(x):04X}' for x in p]}: tokenizers gives "
                    f"{[f'U+{ord(x):04X}' for x in out]}, not unicodedata's with the "
                    "protected characters kept; the protection rule does not hold"
                )
    return as_ranges(map(ord, protected))


def strip_accents_marks() -> list[tuple[int, int]]:
    return removed(hf.StripAccents())


def bert_nonspacing_marks() -> list[tuple[int, int]]:
    nfd = per_char(hf.NFD())
    strip = per_char(
        hf.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False)
    )
    members = {ord(c) for c, out in strip.items() if nfd[c] == c and out == ""}
    unseen = {ord(c) for c, out in nfd.items() if out != c}
    for a, b in as_ranges(unseen):
        if a - 1 in members and b + 1 in members:
            members.update(range(a, b + 1))
    return as_ranges(members)


def bert_controls() -> list[tuple[int, int]]:
    clean = hf.BertNormalizer(clean_text=True, handle_chinese_chars=False, strip_accents=False, lowercase=False)
    return removed(clean, "a")  # not "\n": clean_text turns it into " "


def lower_added() -> list[tuple[int, int, int]]:
    import unicodedataplus

    def assigned_by_13(c: str) -> bool:
        age = unicodedataplus.age(c)
        return age != "Unassigned" and tuple(map(int, age.split("."))) <= (13, 0)

    runs: list[list[int]] = []
    for c, low in per_char(hf.Lowercase()).items():
        if low == c:
            continue
        if assigned_by_13(c):
            if low != c.lower():
                raise RuntimeError(f"U+{ord(c):04X}: tokenizers lowercases it to {low!r}, str.lower to {c.lower()!r}")
            continue
        if len(low) != 1:
            raise RuntimeError(f"U+{ord(c):04X} lowercases to {len(low)} characters, not a (first, last, delta) run")
        cp, delta = ord(c), ord(low) - ord(c)
        if runs and runs[-1][1] == cp - 1 and runs[-1][2] == delta:
            runs[-1][1] = cp
        else:
            runs.append([cp, cp, delta])
    return [(a, b, d) for a, b, d in runs]


# ----------------------------------------------------------------------- spelling


def spell_ranges(ranges: list[tuple[int, int]]) -> list[str]:
    """``parse_ranges`` syntax, six ranges a line."""
    items = [f"{a:X}" if a == b else f"{a:X}-{b:X}" for a, b in ranges]
    return ["parse_ranges("] + ['    "' + " ".join(items[i : i + 6]) + ' "' for i in range(0, len(items), 6)] + [")"]


def spell_runs(runs: list[tuple[int, int, int]]) -> list[str]:
    return ["["] + [f"    (0x{a:X}, 0x{b:X}, {d})," for a, b, d in runs] + ["]"]


# name: (comment, compute, spell), in the order of the module
TABLES: dict[str, tuple[str, Callable[[], Any], Callable[[Any], list[str]]]] = {
    "NF_PROTECTED": (
        (
            "Characters that unicode-normalization-alignments does not know: Unicode 17.0\n"
            "decomposes them, composes them or gives them a combining class, tokenizers'\n"
            "NFC/NFD/NFKC/NFKD do not (see normalizers/unicode.py)."
        ),
        nf_protected,
        spell_ranges,
    ),
    "STRIP_ACCENTS_MARKS": (
        "Rust's unicode_normalization_alignments::char::is_combining_mark (StripAccents).",
        strip_accents_marks,
        spell_ranges,
    ),
    "BERT_NONSPACING_MARKS": (
        (
            "unicode_categories' is_mark_nonspacing (Mn, Unicode 8.0), for BertNormalizer's\n"
            "strip_accents. Characters that NFD never outputs are in or out, whichever makes\n"
            "fewer ranges (out on a tie)."
        ),
        bert_nonspacing_marks,
        spell_ranges,
    ),
    "BERT_CONTROLS": (
        (
            "What BertNormalizer's clean_text removes: unicode_categories' is_other (Cc, Cf, Co;\n"
            "not Cn) minus tab, newline and carriage return, plus U+0000 and U+FFFD."
        ),
        bert_controls,
        spell_ranges,
    ),
    "LOWER_ADDED": (
        (
            "Rust's to_lowercase (Unicode 17.0) for the characters whose mapping is newer than\n"
            "Unicode 13.0 (Python 3.10): (first, last, delta), every character of the run maps to\n"
            "itself + delta. Read off tokenizers' Lowercase on every code point."
        ),
        lower_added,
        spell_runs,
    ),
}


def block(name: str, value: Any = None) -> str:
    """The source text of one table (``value``, or computed): its comment and assignment."""
    comment, compute, spell = TABLES[name]
    lines = [f"# {line}" for line in comment.split("\n")]
    body = spell(compute() if value is None else value)
    return "\n".join([*lines, f"{name}: Final = {body[0]}", *body[1:]])


def split_blocks(text: str) -> dict[str, str]:
    """The tables of a module text written by this script, by name (blocks have no blank line)."""
    found = {}
    for chunk in text.split("\n\n"):
        m = re.search(r"^([A-Z][A-Z0-9_]*): Final = ", chunk, re.MULTILINE)
        if m:
            found[m.group(1)] = chunk.strip("\n")
    return found


def header() -> str:
    return (
        '"""Character tables of the normalizers, read off ``tokenizers`` (generated; do not edit).\n'
        "\n"
        f"Made by tools/gen_normalizer_tables.py from tokenizers {tokenizers.__version__}, Unicode {UNICODE}\n"
        "(unicodedata2) and the Age property (unicodedataplus); that script says how each table\n"
        "is found, and tests/normalizers/test_normalizer_tables.py checks that it still finds these.\n"
        '"""\n'
        "\n"
        "from __future__ import annotations\n"
        "\n"
        "from typing import Final\n"
        "\n"
        "from .base import parse_ranges\n"
    )


def module_text() -> str:
    return header() + "".join(f"\n{block(name)}\n" for name in TABLES)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="compare with the file instead of writing it")
    args = parser.parse_args(argv)
    text = module_text()
    if not args.check:
        TARGET.write_text(text, encoding="utf-8")
        print(f"wrote {TARGET}", file=sys.stderr)
        return 0
    old = TARGET.read_text(encoding="utf-8")
    if old == text:
        print(f"{TARGET} is up to date", file=sys.stderr)
        return 0
    sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), text.splitlines(True), str(TARGET), "generated"))
    return 1


if __name__ == "__main__":
    sys.exit(main())

"""Unicode 16.0 matching (``tokstream/pre_tokenizers/unicode16.py``) on the installed ``regex``.

- ``_unicode16.py`` is what ``tools/gen_unicode16.py`` writes (regenerated and compared
  byte for byte; it holds Unicode 16.0 facts only, so this holds under any ``regex``);
- the fixes computed at run time equal a slow oracle: every code point's Unicode 16.0
  category (``unicodedataplus`` 16.0) against the installed ``regex``'s classes;
- tiktoken (o200k_base, cl100k_base) gives the same ids as tokstream on text made of
  exactly the characters whose class differs.
"""

from __future__ import annotations

import functools
from types import ModuleType

import pytest
import regex
from helpers import REPO, assert_same_ids_as_tiktoken, load_tool

from tokstream.pre_tokenizers import RegexSplit
from tokstream.pre_tokenizers.unicode16 import _OTHER, _STAND_IN, unicode16_fixes

DATA = REPO / "tokstream" / "pre_tokenizers" / "_unicode16.py"

#: The classes tiktoken's patterns use, by the general categories they hold.
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


def _unicodedata16() -> ModuleType:
    ud = pytest.importorskip("unicodedataplus", reason="pip install unicodedataplus==16.0.0.post1 (the test extra)")
    if ud.unidata_version != "16.0.0":
        pytest.skip(f"unicodedataplus has Unicode {ud.unidata_version}; the test extra pins 16.0.0")
    return ud


def test_data_regenerates() -> None:
    _unicodedata16()
    gen = load_tool("gen_unicode16")
    assert DATA.read_text(encoding="utf-8") == gen.render(gen.ranges_by_category()), (
        "_unicode16.py is not the generator's output; run tools/gen_unicode16.py"
    )


EVERYTHING = "".join(map(chr, range(0x110000)))


@functools.lru_cache(maxsize=1)
def oracle() -> dict[int, str]:
    """The stand-in each code point needs, found the slow way: a code point needs one
    exactly when the installed ``regex`` puts it in or out of one of ``GROUPS`` unlike
    Unicode 16.0, or assigns a code point 16.0 does not; the stand-in is of its 16.0
    category (``_OTHER`` for the rest)."""
    ud = _unicodedata16()
    members = {g: {m.start() for m in regex.finditer(rf"\p{{{g}}}", EVERYTHING)} for g in GROUPS}
    unassigned = {m.start() for m in regex.finditer(r"\p{Cn}", EVERYTHING)}
    want: dict[int, str] = {}
    for cp, c in enumerate(EVERYTHING):
        cat = ud.category(c)
        if cat == "Cn":
            if cp not in unassigned:
                want[cp] = _OTHER
        elif any((cat in cats) != (cp in members[g]) for g, cats in GROUPS.items()):
            want[cp] = _STAND_IN.get(cat, _OTHER)
    return want


def test_fixes_equal_oracle() -> None:
    want = oracle()
    guard, table = unicode16_fixes()
    if table != want:
        wrong = sorted(set(table) ^ set(want) | {cp for cp in table if table[cp] != want.get(cp)})
        pytest.fail(
            f"{len(wrong)} code points differ from the oracle, e.g. "
            + ", ".join(f"U+{cp:04X}: {table.get(cp)!r} vs {want.get(cp)!r}" for cp in wrong[:5])
        )
    guarded = [m.start() for m in guard.finditer(EVERYTHING)] if guard is not None else []
    assert guarded == sorted(want)


def test_stand_ins_keep_their_class() -> None:
    """Each stand-in is of its category in Unicode 16.0 and in the installed ``regex``."""
    ud = _unicodedata16()
    for cat, c in _STAND_IN.items():
        assert ud.category(c) == cat and regex.match(rf"\p{{{cat}}}", c), (cat, c)
    assert ud.category(_OTHER) == "Cn" and regex.match(r"\p{Cn}", _OTHER)


CONTEXTS = ["{c}", "{c}'s", "a{c}'S", "A{c}b", "{c}Ab", "a{c}B", " {c} x", "{c}{c}1", "1{c}2", "{c}\u0300"]
#: Contexts where a letter that tiktoken sees as "other" changes the ids: the
#: contraction joins the letter's piece instead of the next one.
VISIBLE = ("{c}'s", "a{c}'S")


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_reclassified_characters_match_tiktoken(name, ours, reference) -> None:
    """The characters whose class differs (by the oracle, and any the run-time table
    holds besides), in letter, case, digit, space and contraction contexts.

    Ids show a class only where it moves a piece boundary that BPE does not hide. For
    letters new since 16.0 the ``VISIBLE`` contexts do: checked first (the installed
    ``regex``'s own pieces, encoded by tiktoken, give other ids), so the comparison
    cannot pass for want of such characters. U+0295 (Ll in 16.0, Lo in 17.0) moves
    boundaries only between pieces that no token spans; ``test_fixes_equal_oracle``
    checks its stand-in.
    """
    tok, enc = ours(name), reference(name)
    differing = set(oracle()) | set(unicode16_fixes()[1])
    if not differing:
        pytest.skip(f"regex {regex.__version__} classifies every character as Unicode 16.0 does")
    chars = [chr(cp) for cp in sorted(differing)]
    new_letters = any(oracle().get(cp) == _OTHER and regex.match(r"\p{L}", chr(cp)) for cp in differing)
    split = RegexSplit(name)
    for ctx in CONTEXTS:
        text = "\n".join(" ".join(ctx.format(c=c) for c in chars[i : i + 64]) for i in range(0, len(chars), 64))
        want = enc.encode_ordinary(text)
        if ctx in VISIBLE and new_letters:
            own = [i for piece in split.findall(text) for i in enc._encode_single_piece(piece)]
            assert own != want, f"{ctx}: the installed regex's own classes give tiktoken's ids too"
        assert_same_ids_as_tiktoken(tok.encode_ordinary(text), want, text, tok=tok, enc=enc, what=ctx)

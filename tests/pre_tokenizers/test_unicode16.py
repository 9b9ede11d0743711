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
from helpers import REPO, assert_same_ids_as_tiktoken, fixture_file, load_tool
from hypothesis import given
from hypothesis import strategies as st
from strategies import hyp_settings

import tokstream
from tokstream.pre_tokenizers import RegexSplit
from tokstream.pre_tokenizers.patterns import PATTERNS
from tokstream.pre_tokenizers.unicode16 import _OTHER, _STAND_IN, _differing, pattern_classes, unicode16_fixes

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


@pytest.mark.slow
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


# ------------------------------------------------- custom patterns (issue 14)

#: Plausible patterns a rank file may be loaded with, none of them a named one: each
#: class is matched by tiktoken under Unicode 16.0 whatever the pattern.
CUSTOM_PATTERNS = {
    # cl100k_base with runs of up to 2 digits and no contraction group.
    "cl100k_variant": (
        r"""[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,2}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
    ),
    # o200k_base's case split, without its contractions.
    "cased_words": (
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
        r"""|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
        r"""|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
    ),
    # Punctuation, symbols and "other" told apart, long category names.
    "categories": (
        r"""'(?i:s|t|re|ve|m|ll|d)| ?\p{Letter}+\p{Mark}*| ?\p{Nd}+|\p{gc=Nl}|\p{No}+| ?\p{P}+"""
        r"""| ?\p{S}+|\p{Cn}+|\p{C}+|\s+(?!\S)|\s+|[^\s]"""
    ),
    # \w, \d and \b.
    "words": r"""'(?:s|t|re|ve|m|ll|d)|\b\w+\b|\d+| ?[^\w\s]+|\s+(?!\S)|\s+|[\s\S]""",
}

#: Contexts where a changed class moves a piece boundary BPE does not hide (see above)
#: plus punctuation and symbol neighbours for the patterns that tell them apart.
CUSTOM_CONTEXTS = [*CONTEXTS, "{c}!", ".{c}.", "+{c}", "{c}_x", "x{c}y"]


@functools.lru_cache(maxsize=1)
def _cl100k_ranks() -> dict[bytes, int]:
    import os
    from unittest import mock

    tiktoken_load = pytest.importorskip("tiktoken.load")
    with mock.patch.dict(os.environ, {"TIKTOKEN_CACHE_DIR": ""}):
        return tiktoken_load.load_tiktoken_bpe(str(fixture_file("tiktoken/cl100k_base.tiktoken")))


@functools.lru_cache(maxsize=8)
def custom_pair(key: str):
    """tokstream and tiktoken on the cl100k_base rank file with ``CUSTOM_PATTERNS[key]``."""
    tiktoken = pytest.importorskip("tiktoken")
    pattern = CUSTOM_PATTERNS[key]
    tok = tokstream.Tokenizer.from_tiktoken(fixture_file("tiktoken/cl100k_base.tiktoken"), pattern=pattern)
    enc = tiktoken.Encoding(key, pat_str=pattern, mergeable_ranks=_cl100k_ranks(), special_tokens={})
    return tok, enc


def _changed_chars() -> list[str]:
    """The characters whose category or \\w-ness differs between Unicode 16.0 (the
    oracle, ``unicodedataplus``) and the installed ``regex``, and any the run-time
    comparison holds besides."""
    listed = set(oracle()) | {ord(c) for c in _differing()}
    return [chr(cp) for cp in sorted(listed)]


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(CUSTOM_PATTERNS))
def test_custom_pattern_matches_tiktoken_on_changed_characters(key) -> None:
    """Every character whose class changed after 16.0, in each context, through a
    custom pattern: tiktoken's ids. Checked first: for each pattern some context gives
    other ids with the installed ``regex``'s own classes, so the comparison cannot pass
    for want of a visible change."""
    tok, enc = custom_pair(key)
    chars = _changed_chars()
    if not chars:
        pytest.skip(f"regex {regex.__version__} classifies every character as Unicode 16.0 does")
    own = regex.compile(CUSTOM_PATTERNS[key])
    visible = False
    for ctx in CUSTOM_CONTEXTS:
        text = "\n".join(" ".join(ctx.format(c=c) for c in chars[i : i + 64]) for i in range(0, len(chars), 64))
        want = enc.encode_ordinary(text)
        mine = [i for m in own.finditer(text) for i in enc._encode_single_piece(m.group().encode("utf-8"))]
        visible = visible or mine != want
        assert_same_ids_as_tiktoken(tok.encode_ordinary(text), want, text, tok=tok, enc=enc, what=f"{key} {ctx}")
    assert visible, f"{key}: the installed regex's own classes give tiktoken's ids in every context"


_PLAIN = "aZ09 '!._\n\t" + "é\u00e9\u0416\u4e2d\u0300\u00b2\u2160"


@pytest.mark.parametrize("key", sorted(CUSTOM_PATTERNS))
def test_custom_pattern_matches_tiktoken_on_mixed_text(key) -> None:
    """Hypothesis text mixing the changed characters with ASCII, contractions and
    unchanged letters, marks and numbers of other scripts."""
    tok, enc = custom_pair(key)
    chars = _changed_chars() or ["x"]
    alphabet = st.sampled_from(chars[:: max(1, len(chars) // 400)] + ["\u0295", *chars[-20:]]) | st.sampled_from(_PLAIN)
    pieces = st.lists(alphabet | st.sampled_from(["'s", "'LL", " ", "  ", "\r\n"]), max_size=40).map("".join)

    @hyp_settings(200)
    @given(pieces)
    def check(text: str) -> None:
        assert_same_ids_as_tiktoken(tok.encode_ordinary(text), enc.encode_ordinary(text), text, tok=tok, enc=enc)

    check()


@pytest.mark.parametrize(
    "pattern",
    [
        r"\p{Han}+|\S",  # a script
        r"\p{Alphabetic}+|\S",  # a binary property
        r"[[:alpha:]]+|\S",  # POSIX
        r"(?i)[a-z]+|\S",  # classes under case-insensitivity: regex folds i with U+0130
        r"(?i:in)|\S",  # i literal under case-insensitivity
        r"(\p{L})\1|\S",  # a backreference
        r"[\p{L}&&\p{Lu}]+|\S",  # Rust's class intersection, literal to regex
        r"\X|\S",  # grapheme clusters
        r"(?x) \p{L}+ | \S",  # verbose syntax
    ],
)
def test_custom_pattern_refused(pattern) -> None:
    """A construct whose Unicode 16.0 meaning cannot be reproduced is refused at load,
    never matched by other tables."""
    with pytest.raises(tokstream.TokstreamError, match="pre-tokenizer pattern"):
        tokstream.Tokenizer.from_tiktoken(fixture_file("tiktoken/cl100k_base.tiktoken"), pattern=pattern)


def test_refused_constructs_do_differ_in_tiktoken() -> None:
    """The case-folding refusal is not caution only: tiktoken leaves U+0130 out of
    ``(?i)i``, the installed ``regex`` does not."""
    tiktoken = pytest.importorskip("tiktoken")
    enc = tiktoken.Encoding("fold", pat_str=r"(?i)i", mergeable_ranks=_cl100k_ranks(), special_tokens={})
    assert enc.encode_ordinary("\u0130") == []
    assert regex.findall(r"(?i)i", "\u0130") == ["\u0130"]


def test_named_patterns_scan_clean() -> None:
    """The named patterns go through the same scan and need no exception."""
    for name, pattern in PATTERNS.items():
        classes = pattern_classes(pattern)
        assert classes.categories, name

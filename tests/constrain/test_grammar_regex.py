"""``parse_regex`` and ``charset`` against Python's ``re``.

References, none computed by the code under test: ``re.fullmatch`` on the pattern
(the tree is run by a position-set simulation written here, which reads the ranges
directly), ``re`` matching each code point one by one and the ``str`` predicates
``re`` documents for ``\\d \\w \\s``, plain Python sets of integers for the range
operations, and ``re.error``'s own positions; the offsets of refused constructs are
counted by hand in the patterns.
"""

from __future__ import annotations

import pickle
import random
import re
import unicodedata
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from regex_strategy import regexes
from strategies import hyp_settings

from tokstream.constrain.grammar import charset
from tokstream.constrain.grammar.nodes import Alt, Chars, Concat, Node, Repeat
from tokstream.constrain.grammar.regex import parse_regex
from tokstream.errors import TokstreamError, UnsupportedGrammarError

#: Characters the random strings mix into the alphabet: the class-syntax characters,
#: a newline for "." and "$", ASCII and non-ASCII digits and spaces, letters, an emoji.
EXTRAS = "-]^\n 1_é٣\u2028\u3000Ж😀"


# ------------------------------------------------------------------ the tree's language


def _in(ranges: tuple[tuple[int, int], ...], cp: int) -> bool:
    return any(lo <= cp <= hi for lo, hi in ranges)


def _ends(node: Node, text: str, starts: frozenset[int]) -> frozenset[int]:
    """The positions where a match of ``node`` starting at one of ``starts`` can end."""
    if isinstance(node, Chars):
        return frozenset(p + 1 for p in starts if p < len(text) and _in(node.ranges, ord(text[p])))
    if isinstance(node, Concat):
        for item in node.items:
            starts = _ends(item, text, starts)
        return starts
    if isinstance(node, Alt):
        return frozenset().union(*(_ends(item, text, starts) for item in node.items))
    assert isinstance(node, Repeat)
    current = starts
    for _ in range(node.min):
        current = _ends(node.item, text, current)
    reached = current
    extra = 0
    while node.max is None or extra < node.max - node.min:
        current = _ends(node.item, text, current)
        if current <= reached and node.max is None:
            break
        reached = reached | current
        extra += 1
    return reached


def tree_matches(node: Node, text: str) -> bool:
    return len(text) in _ends(node, text, frozenset([0]))


def _sample(node: Node, rnd: random.Random) -> str:
    """A random string of the tree's language (bounded loops), to test re accepts it."""
    if isinstance(node, Chars):
        lo, hi = rnd.choice(node.ranges)
        return chr(rnd.randint(lo, min(hi, lo + 40)))
    if isinstance(node, Concat):
        return "".join(_sample(item, rnd) for item in node.items)
    if isinstance(node, Alt):
        return _sample(rnd.choice(node.items), rnd)
    top = node.min + 3 if node.max is None else node.max
    return "".join(_sample(node.item, rnd) for _ in range(rnd.randint(node.min, top)))


def _nonempty(node: Node) -> bool:
    # Whether sampling can succeed: no empty class on a mandatory path.
    if isinstance(node, Chars):
        return bool(node.ranges)
    if isinstance(node, Concat):
        return all(_nonempty(i) for i in node.items)
    if isinstance(node, Alt):
        return any(_nonempty(i) for i in node.items)
    return node.min == 0 or _nonempty(node.item)


def _prune(node: Node) -> Node:
    # Drop alternatives that match nothing so _sample never picks one.
    if isinstance(node, Alt):
        return Alt(tuple(_prune(i) for i in node.items if _nonempty(i)))
    if isinstance(node, Concat):
        return Concat(tuple(_prune(i) for i in node.items))
    if isinstance(node, Repeat):
        return Repeat(_prune(node.item), node.min, node.max) if _nonempty(node.item) else Concat(())
    return node


def check_same_language(pattern: str, texts: list[str], dotall: bool = False) -> None:
    tree = parse_regex(pattern, dotall=dotall)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "[[" and the like warn (FutureWarning)
        compiled = re.compile(pattern, re.DOTALL if dotall else 0)
    for text in texts:
        expected = compiled.fullmatch(text) is not None
        assert tree_matches(tree, text) == expected, (pattern, text, expected, tree)
    if _nonempty(tree):
        rnd = random.Random(pattern)
        pruned = _prune(tree)
        for _ in range(20):
            text = _sample(pruned, rnd)
            assert compiled.fullmatch(text), (pattern, text, tree)


def _texts(alphabet: str, rnd: random.Random, n: int = 40) -> list[str]:
    chars = alphabet + EXTRAS
    texts = ["", "\n", *alphabet]
    texts += ["".join(rnd.choice(chars) for _ in range(rnd.randint(0, 6))) for _ in range(n)]
    # Strings over the alphabet alone match far more often.
    texts += ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 8))) for _ in range(n)]
    return texts


@pytest.mark.slow
@hyp_settings(400)
@given(regexes(), st.booleans(), st.randoms(use_true_random=False))
def test_random_patterns_match_like_re(pattern: str, dotall: bool, rnd: random.Random) -> None:
    check_same_language(pattern, _texts("abc", rnd), dotall)


@hyp_settings(100)
@given(regexes("a-]\\^é"), st.randoms(use_true_random=False))
def test_random_patterns_over_syntax_characters(pattern: str, rnd: random.Random) -> None:
    check_same_language(pattern, _texts("a-]\\^é", rnd))


TRICKY = [
    # classes: "]" first, "-" at the edges, escapes, class escapes, negation
    "[]a]",
    "[^]a]",
    "[]-a]",
    "[a-]",
    "[-a]",
    "[a\\-c]",
    "[\\]]",
    "[\\d-]",
    "[\\w\\s]",
    "[^\\W]",
    "[^\\d\\D]",
    "[\\b]",
    "[\\101\\0]",
    "[\\x41-\\x43]",
    "[\\N{EM DASH}a]",
    "[[a]",
    "[a&&b]",
    "[+--]",
    "[a^]",
    "[\\^a]",
    "[\\ud7ff-\\ue000]",
    # "{" that is no quantifier is a literal
    "a{",
    "a{1",
    "a{1,",
    "a{,2}",
    "a{,}",
    "a{}",
    "a{x}",
    "\\{a}",
    "}",
    "]",
    "a{2}{",
    # escapes
    "\\101",
    "\\0",
    "\\08",
    "\\012",
    "\\x41",
    "\\u00e9",
    "\\U0001F600",
    "\\N{EM DASH}",
    "\\n\\t\\r\\f\\v\\a\\\\",
    "\\.\\*\\-\\ ",
    "\\é",
    # dots and flags
    ".",
    "(?s).",
    "(?s:.)a.",
    "(?s)(?-s:.).",
    "(?u)a",
    "(?su)a.",
    # comments: a quantifier after one applies to the item before it
    "a(?#x)*",
    "(?#a\\)b)c",
    # anchors where only the ends can be
    "^a|^b",
    "^(?:a|b)$",
    "(?:^)a",
    "(?:^)*a",
    "\\A^a$\\Z",
    "$^",
    "^",
    "a$",
    "a\\Z",
    "(?:a|b$)",
    "(^a|b)c",
    "a(b|c$)",
    "(?:^a)?b",
    # empty pieces and loops
    "a|",
    "|",
    "()",
    "(?:)*",
    "a{0}",
    "(?:a{0})*",
    "(?:a|){2,}",
    "(?:|a){3}",
    "(?:a*)*b",
    "(a|ab)(c|bcd)(d*)",
    "(?P<x>a)b",
    "\\d+\\.\\d+",
    "\\s*\\w+\\S?\\W",
    "a{2,3}?b+?c??",
    "(?:ab){1,3}",
    "[abc]{,2}",
]


@pytest.mark.parametrize("pattern", TRICKY)
@pytest.mark.parametrize("dotall", [False, True])
def test_tricky_patterns_match_like_re(pattern: str, dotall: bool) -> None:
    rnd = random.Random(0)
    texts = _texts("abcd{}],-x0123", rnd, 150) + [
        "{",
        "a{",
        "a{1",
        "a{}",
        "a\n",
        "\n",
        "A",
        "\x08",
        "\x00",
        "\n",
        "é",
        "😀",
    ]
    check_same_language(pattern, texts, dotall)


def test_dollar_does_not_match_before_a_final_newline_under_fullmatch() -> None:
    assert re.fullmatch("a$", "a\n") is None
    tree = parse_regex("a$")
    assert not tree_matches(tree, "a\n")
    assert tree_matches(tree, "a")


def test_lazy_and_greedy_agree() -> None:
    assert parse_regex("a*?b+?c??d{1,2}?") == parse_regex("a*b+c?d{1,2}")


def test_surrogates_in_class_ranges_are_dropped() -> None:
    tree = parse_regex("[\\ud7ff-\\ue000]")
    assert tree == Chars(((0xD7FF, 0xD7FF), (0xE000, 0xE000)))
    assert parse_regex("[\\ud800-\\udfff]") == Chars(())


# ------------------------------------------------------------------ refusals and errors

REFUSED = [
    ("(a)\\1", 3, "backreference"),
    ("(a)(b)\\2c", 6, "backreference"),
    ("a(?P<n>b)(?P=n)", 9, "backreference"),
    ("a(?=b)", 1, "lookahead"),
    ("ab(?!b)", 2, "lookahead"),
    ("(?<=a)b", 0, "lookbehind"),
    ("x(?<!a)b", 1, "lookbehind"),
    ("(a)(?(1)b|c)", 3, "conditional"),
    ("a(?>bc)", 1, "atomic"),
    ("ab*+", 2, "possessive"),
    ("a++", 1, "possessive"),
    ("a?+", 1, "possessive"),
    ("(?:a){1,2}+", 5, "possessive"),
    ("a\\bc", 1, "\\b"),
    ("\\Ba", 0, "\\B"),
    ("a^b", 1, "^"),
    ("a$b", 1, "$"),
    ("a$\\n", 1, "$"),
    ("a\\Ab", 1, "\\A"),
    ("a\\Zb", 1, "\\Z"),
    ("(?:a$)*", 4, "$"),
    ("(?:^a)+", 3, "^"),
    ("a*^b", 2, "^"),
    ("a|b^", 3, "^"),
    ("(?i)abc", 0, "case-insensitive"),
    ("a(?i:b)", 1, "case-insensitive"),
    ("(?s)(?i)a", 4, "case-insensitive"),
    ("(?m)^a", 0, "multiline"),
    ("(?x)a b", 0, "verbose"),
    ("(?a)\\w", 0, "ASCII"),
    ("a{4294967295}", 1, "(size)"),  # above re's own limit; lower bounds are counters
    ("ab{2,4294967295}", 2, "(size)"),
    ("a{4294967295,}", 1, "(size)"),
    ("a{99999999999}", 1, "(size)"),
    ("x\\ud800", 1, "surrogate"),
    ("[a\\udc00]", 2, "surrogate"),
    ("x\ud800", 1, "surrogate"),
]


@pytest.mark.parametrize(("pattern", "offset", "word"), REFUSED)
def test_refused_constructs_name_themselves_and_their_offset(pattern: str, offset: int, word: str) -> None:
    with pytest.raises(UnsupportedGrammarError) as info:
        parse_regex(pattern)
    assert info.value.offset == offset
    assert word in info.value.message
    assert isinstance(info.value, TokstreamError)
    again = pickle.loads(pickle.dumps(info.value))
    assert (again.message, again.offset) == (info.value.message, info.value.offset)


def test_a_thousand_repetitions_are_accepted() -> None:
    assert parse_regex("a{1000}") == Repeat(Chars(((97, 97),)), 1000, 1000)


INVALID = ["a)", "(a", "[a", "a**", "*a", "a{3,2}", "\\", "(?P<1>a)", "\\q", "[z-a]", "(?<a)", "\\1"]


@pytest.mark.parametrize("pattern", INVALID)
def test_invalid_patterns_raise_with_res_position(pattern: str) -> None:
    with pytest.raises(re.error) as expected:
        re.compile(pattern)
    with pytest.raises(UnsupportedGrammarError) as info:
        parse_regex(pattern)
    assert info.value.offset == expected.value.pos
    assert expected.value.msg in info.value.message
    assert isinstance(info.value.__cause__, re.error)
    assert isinstance(info.value, TokstreamError)


# ------------------------------------------------------------------ charset

_ALL_CODES = np.concatenate([np.arange(0xD800), np.arange(0xE000, 0x110000)])
_ALL_CHARS = [chr(c) for c in _ALL_CODES.tolist()]


def _mask(ranges: charset.Ranges) -> np.ndarray:
    out = np.zeros(0x110000, dtype=bool)
    for lo, hi in ranges:
        out[lo : hi + 1] = True
    return out[_ALL_CODES]


@pytest.mark.parametrize("letter", "dwsDWS")
def test_python_class_is_re_on_every_code_point(letter: str) -> None:
    match = re.compile(f"\\{letter}").match
    expected = np.fromiter((match(c) is not None for c in _ALL_CHARS), dtype=bool, count=len(_ALL_CHARS))
    got = _mask(charset.python_class(letter))
    wrong = np.flatnonzero(got != expected)
    assert wrong.size == 0, [hex(int(_ALL_CODES[i])) for i in wrong[:10]]


def test_python_classes_are_res_documented_definitions() -> None:
    # re's docs: \d is a Unicode decimal digit (category Nd), \w what str.isalnum()
    # accepts plus "_", \s what str.isspace() accepts.
    definitions = {
        "d": lambda c: unicodedata.category(c) == "Nd",
        "w": lambda c: c.isalnum() or c == "_",
        "s": str.isspace,
    }
    for letter, predicate in definitions.items():
        expected = np.fromiter(map(predicate, _ALL_CHARS), dtype=bool, count=len(_ALL_CHARS))
        assert (_mask(charset.python_class(letter)) == expected).all(), letter
        assert (_mask(charset.python_class(letter.upper())) == ~expected).all(), letter


def test_python_class_refuses_other_letters() -> None:
    with pytest.raises(ValueError):
        charset.python_class("b")


def test_any_and_dot() -> None:
    assert _mask(charset.ANY).all()
    dot = _mask(charset.DOT)
    assert not dot[0x0A] and dot.sum() == len(_ALL_CHARS) - 1


_POINTS = st.integers(0, 40) | st.integers(0xD7F0, 0xE010) | st.integers(0x10FFF0, 0x10FFFF)
_PAIRS = st.lists(st.tuples(_POINTS, _POINTS).map(lambda p: (min(p), max(p))), max_size=6)
_PROBES = sorted({*range(42), *range(0xD7EF, 0xE012), *range(0x10FFEF, 0x110000)})


def _members(pairs: list[tuple[int, int]] | charset.Ranges) -> set[int]:
    # Every range end lies in one of the probe windows, so membership on the probes
    # (each window and one point either side) decides the whole set.
    return {c for c in _PROBES if any(lo <= c <= hi for lo, hi in pairs) and not 0xD800 <= c <= 0xDFFF}


def _check_normal(r: charset.Ranges) -> None:
    for lo, hi in r:
        assert 0 <= lo <= hi <= 0x10FFFF
        assert hi < 0xD800 or lo > 0xDFFF
    for (_, hi), (lo, _) in zip(r, r[1:]):
        assert hi + 1 < lo


@hyp_settings(150)
@given(_PAIRS, _PAIRS)
def test_range_operations_are_set_operations(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> None:
    ra, rb = charset.normalize(a), charset.normalize(b)
    sa, sb = _members(a), _members(b)
    scalars = {c for c in _PROBES if not 0xD800 <= c <= 0xDFFF}
    for r in (ra, rb):
        _check_normal(r)
    assert _members(ra) == sa
    assert ra == charset.normalize(reversed(a))  # one spelling per set
    u, i, n = charset.union(ra, rb), charset.intersect(ra, rb), charset.negate(ra)
    for r in (u, i, n):
        _check_normal(r)
    assert _members(u) == sa | sb
    assert _members(i) == sa & sb
    assert _members(n) == scalars - sa
    for c in _PROBES:
        assert charset.contains(ra, c) == (c in sa)


@pytest.mark.parametrize("bad", [[(5, 4)], [(-1, 3)], [(0, 0x110000)]])
def test_normalize_refuses_bad_ranges(bad: list[tuple[int, int]]) -> None:
    with pytest.raises(ValueError):
        charset.normalize(bad)

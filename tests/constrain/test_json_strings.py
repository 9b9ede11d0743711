"""``json_schema.strings``: ``pattern_tree`` against Python's ``re.search`` and facts of
ECMA-262, ``format_tree`` against ``jsonschema``'s draft 2020-12 format checker and the
RFCs.

References, none computed by the code under test: ``re.search`` on the pattern; for
ECMA, small cases written from the spec (``\\d`` is ASCII, ``.`` leaves out the line
terminators, ``$`` is the end of input, ``[^]`` is any character, ...) and, for the
differential patterns, an ECMA reading spelled by hand in Python syntax; the JSON
Schema Test Suite's instances; ``jsonschema``'s ``FORMAT_CHECKER`` (with the
``format-nongpl`` extras) and the standard library (``ipaddress``, ``uuid``,
``datetime``) for formats. Strings come from the automaton itself (random walks, so
every string it accepts can be drawn: soundness), from ``hypothesis`` strategies of
real values (completeness) and from mutations and random text.
"""

from __future__ import annotations

import datetime
import functools
import glob
import ipaddress
import json
import lzma
import random
import re
import uuid
import warnings
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from helpers import fixture_file
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.provisional import domains, urls
from strategies import hyp_settings, replace_surrogates

from tokstream.constrain.grammar.automaton import Dfa, compile_dfa
from tokstream.constrain.json_schema.strings import FORMATS, format_tree, pattern_tree
from tokstream.errors import UnsupportedGrammarError, UnsupportedSchemaError

CHECKER = jsonschema.Draft202012Validator.FORMAT_CHECKER
SUITE = "json-schema-test-suite/tests/draft2020-12"
BENCH = "jsonschemabench/schemas_sample.jsonl.xz"

# ECMA-262 WhiteSpace and LineTerminator, written from the spec (22.2.2.9, 12.2, 12.3;
# USP is category Zs: U+0020 U+00A0 U+1680 U+2000-U+200A U+202F U+205F U+3000).
ECMA_SPACE = "\t\v\f \xa0\ufeff\u1680\u2000-\u200a\u202f\u205f\u3000\n\r\u2028\u2029"
ECMA_LINE_TERMINATORS = "\n\r\u2028\u2029"
#: Characters the random strings mix in: the ones the two engines' classes disagree on.
TRICKY = "a Z_0-9.٣é\n\r\u2028\u2029\x1c\x85\ufeff\u3000\t/@{}[]^$😀"


def accepts(dfa: Dfa | None, s: str) -> bool:
    if dfa is None:
        return False
    state = dfa.run(0, s.encode())
    return state >= 0 and bool(dfa.accepting[state])


@functools.cache
def dfa_of(pattern: str) -> Dfa | None:
    return compile_dfa(pattern_tree(pattern))


def walk(dfa: Dfa, rng: random.Random, stop: float = 0.15, cap: int = 400) -> str | None:
    """A random string the automaton accepts (None if the walk runs too long): every
    state is live, so each step keeps acceptance reachable."""
    state, out = 0, bytearray()
    for _ in range(cap):
        if dfa.accepting[state] and (rng.random() < stop or not any(t >= 0 for t in dfa.rows[state])):
            return out.decode("utf-8")
        moves = [b for b, t in enumerate(dfa.rows[state]) if t >= 0]
        b = rng.choice(moves)
        out.append(b)
        state = dfa.rows[state][b]
    return None


def mutate(s: str, rng: random.Random, alphabet: str = TRICKY) -> str:
    for _ in range(rng.randint(1, 3)):
        i = rng.randint(0, len(s))
        op = rng.randrange(3)
        if op == 0:
            s = s[:i] + rng.choice(alphabet) + s[i:]
        elif op == 1 and s:
            s = s[:i] + s[i + 1 :]
        elif s:
            s = s[: min(i, len(s) - 1)] + rng.choice(alphabet) + s[min(i, len(s) - 1) + 1 :]
    return s


def python_search(pattern: str, s: str) -> bool | None:
    """``re.search`` as jsonschema runs it; None when ``re`` rejects the pattern."""
    try:
        return re_search(pattern, s)
    except re.error:
        return None


def re_search(pattern: str, s: str, flags: int = 0) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return re.search(pattern, s, flags) is not None


# ------------------------------------------------------------------ pattern: ECMA facts

# (pattern, string, whether both ECMA-262 and re.search match); each case states a fact
# of the ECMA spec (and of re), hand-checked.
FACTS = [
    (r"\d", "٣", False),  # ECMA \d is [0-9] (re's is Unicode)
    (r"\d", "7", True),
    (r"\w", "é", False),  # ECMA \w is [A-Za-z0-9_]
    (r"\w", "_", True),
    (r"\s", "\x1c", False),  # re's whitespace, not ECMA's
    (r"\s", "\ufeff", False),  # ECMA's whitespace, not re's
    (r"\s", "\u3000", True),  # both (Zs)
    (r"\s", "\u2028", True),
    (r"\D", "٣", False),  # a non-digit to ECMA, a digit to re
    (r"\W", "é", False),
    (r"\S", "\ufeff", False),
    (r"\S", "\x1c", False),
    (r"^\S$", "x", True),
    (r"^.$", "\r", False),  # ECMA's . leaves out the line terminators
    (r"^.$", "\u2029", False),
    (r"^.$", "😀", True),  # one code point (u-flag reading and re)
    (r"a$", "a\n", False),  # ECMA $ is the end of input (re's also before a final \n)
    (r"a$", "ba", True),
    (r"^a", "ba", False),
    (r"a", "bab", True),
    (r"^a|b$", "ab", True),
    (r"^a|b$", "ba", False),
    (r"^$", "", True),
    (r"^$", "x", False),
    (r"", "anything", True),
    (r"^\/$", "/", True),  # \/ is "/"
    (r"^\cJ$", "\n", True),  # \cJ is U+000A
    (r"^\cj$", "\n", True),
    (r"^\0$", "\x00", True),
    (r"^[^]$", "\n", True),  # [^] is any character
    (r"^[^]$", "", False),
    (r"[]", "a", False),  # [] matches nothing
    (r"^(?<year>[0-9]{4})$", "2024", True),  # named group
    (r"^a{$", "a{", True),  # "{" that starts no quantifier is a literal
    (r"^a{1,2$", "a{1,2", True),
    (r"^x{}$", "x{}", True),
    (r"^a{2}$", "aa", True),
    (r"^[\w-]+$", "a-b", True),
    (r"^[\b]$", "\x08", True),  # \b in a class is backspace
    (r"^[^\d]$", "٣", False),  # re's negated \d leaves out ٣
    (r"^[^\s]$", "\ufeff", False),  # ECMA's negated \s leaves out U+FEFF
    (r"^[\s\S]$", "\ufeff", True),
    (r"^\u00e9$", "é", True),
    (r"^\x41$", "A", True),
    (r"^[a-b-c]$", "-", True),
    (r"^a*?$", "aa", True),
    (r"^\-\@$", "-@", True),  # escaped punctuation is literal
    (r"^a]$", "a]", True),
    (r"^a}$", "a}", True),
]


@pytest.mark.parametrize(("pattern", "text", "expected"), FACTS)
def test_ecma_facts(pattern: str, text: str, expected: bool) -> None:
    assert accepts(dfa_of(pattern), text) is expected, (pattern, text)


REFUSED = [
    r"(?=a)",
    r"(?!a)",
    r"(?<=a)b",
    r"(?<!a)b",
    r"(a)\1",
    r"(?<n>a)\k<n>",
    r"\bword\b",
    r"a\B",
    r"(^a)",
    r"a^b",
    r"a$b",
    r"(a$)",
    r"^*a",
    r"\p{Letter}",
    r"\P{L}",
    r"\u{41}",
    r"\a",
    r"\q",
    r"\A",
    r"\Z",
    r"\01",
    r"\ud83d\ude00",
    r"(?i)a",
    r"(?#c)a",
    r"(?P<n>a)",
    r"a{,5}",
    r"a{,}",
    r"[]a]",  # Python accepts it as a class holding "]" and "a"
    r"[^]a]",
    r"[\d-z]",
    r"[z-a]",
    r"a**",
    r"a*+",
    r"a{2}{3}",
    r"*a",
    r"{1}",
    r"(a",
    r"a)",
    r"[a",
    "\\",
    r"\c1",
    r"\x4",
    r"a{99999999999}",
]


@pytest.mark.parametrize("pattern", REFUSED)
def test_refused(pattern: str) -> None:
    with pytest.raises(UnsupportedSchemaError) as info:
        pattern_tree(pattern)
    assert info.value.keyword == "pattern"


# ------------------------------------------------------------------ pattern: differential

_S = f"[{ECMA_SPACE}]"
_DOT = f"[^{ECMA_LINE_TERMINATORS}]"
# (pattern, the ECMA reading in Python syntax, spelled by hand, with re.ASCII so that
# \d \w are ECMA's); the tree must be exactly "re.search(pattern) and ECMA".
DIFFERENTIAL = [
    (r"^[a-z]+$", r"^[a-z]+\Z"),
    (r"a", r"a"),
    (r"\d{3}-\d{2}", r"\d{3}-\d{2}"),
    (r"^\w+@\w+\.com$", r"^\w+@\w+\.com\Z"),
    (r"\s+x", _S + r"+x"),
    (r"^[^\s]+$", f"^[^{ECMA_SPACE}]+\\Z"),
    (r"^(\([0-9]{3}\))?[0-9]{3}-[0-9]{4}$", r"^(\([0-9]{3}\))?[0-9]{3}-[0-9]{4}\Z"),
    (r"^a.c$", f"^a{_DOT}c\\Z"),
    (r"x.*y", f"x{_DOT}*y"),
    (r"^(?:ab|cd)*$|z", r"^(?:ab|cd)*\Z|z"),
    (r"^\D+$", r"^\D+\Z"),
    (r"^[\W_]{2,3}$", r"^[\W_]{2,3}\Z"),
    (
        r"^[A-Z]{2}[0-9]{2}[A-Z0-9]{4}[0-9]{7}([A-Z0-9]?){0,16}$",
        r"^[A-Z]{2}[0-9]{2}[A-Z0-9]{4}[0-9]{7}([A-Z0-9]?){0,16}\Z",
    ),
    (r"^\S*$", f"^[^{ECMA_SPACE}]*\\Z"),
    (r"^[^a-c]$|^$", r"^[^a-c]\Z|^\Z"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("pattern", "ecma"), DIFFERENTIAL)
@hyp_settings(300)
@given(data=st.data())
def test_pattern_differential(pattern: str, ecma: str, data: st.DataObject) -> None:
    dfa = dfa_of(pattern)
    rng = data.draw(st.randoms(use_true_random=False))
    kind = data.draw(st.sampled_from(["regex", "mutated", "walk", "text"]))
    if kind == "regex":
        s = data.draw(st.from_regex(pattern))
    elif kind == "mutated":
        s = mutate(data.draw(st.from_regex(pattern)), rng)
    elif kind == "walk":
        assert dfa is not None
        walked = walk(dfa, rng)
        s = walked if walked is not None else ""
    else:
        s = data.draw(st.text(alphabet=st.sampled_from(TRICKY) | st.characters(), max_size=12))
    s = replace_surrogates(s)  # strings of scalar values only: JSON text has no others
    truth = re_search(pattern, s) and re_search(ecma, s, re.ASCII)
    assert accepts(dfa, s) is truth, (pattern, s)


@hyp_settings(200)
@given(st.randoms(use_true_random=False))
def test_space_class_is_stricter_only(rng: random.Random) -> None:
    # The documented departure: \s is intersected atom by atom. Sound, never looser.
    pattern = r"\sa|\sb"
    dfa = dfa_of(pattern)
    assert dfa is not None
    s = walk(dfa, rng)
    if s is not None:
        assert re_search(pattern, s) and re_search(f"{_S}a|{_S}b", s)
    assert not accepts(dfa, "\x1ca\ufeffb")  # both engines match it, through other characters


# ------------------------------------------------------------------ pattern: corpora


def _patterns(node: Any, out: list[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "pattern" and isinstance(value, str):
                out.append(value)
            elif key == "patternProperties" and isinstance(value, dict):
                out.extend(value)
            _patterns(value, out)
    elif isinstance(node, list):
        for value in node:
            _patterns(value, out)


def _suite_files() -> list[str]:
    root = fixture_file(f"{SUITE}/pattern.json").parent
    return sorted(glob.glob(str(root / "**" / "*.json"), recursive=True))


def _sweep(patterns: list[str], label: str) -> None:
    rng = random.Random(1234)
    compiled = refused = 0
    for pattern in sorted(set(patterns)):
        try:
            tree = pattern_tree(pattern)
        except UnsupportedSchemaError:
            refused += 1
            continue
        try:
            dfa = compile_dfa(tree)
        except UnsupportedGrammarError:  # over the automaton's state bound
            refused += 1
            continue
        compiled += 1
        # Soundness on strings the automaton itself produces.
        for _ in range(5):
            s = walk(dfa, rng) if dfa is not None else None
            # (A pattern Python's re rejects has only ECMA's reading to check against.)
            if s is not None and python_search(pattern, s) is not None:
                assert python_search(pattern, s), (pattern, s)
    print(f"{label}: {compiled} of {compiled + refused} distinct patterns compile, {refused} refused")
    assert compiled + refused == len(set(patterns))


def test_suite_patterns_sweep() -> None:
    found: list[str] = []
    for path in _suite_files():
        with open(path, encoding="utf-8") as f:
            _patterns(json.load(f), found)
    assert found
    _sweep(found, "JSON Schema Test Suite")


@pytest.mark.slow
def test_bench_patterns_sweep() -> None:
    found: list[str] = []
    with lzma.open(fixture_file(BENCH), "rt", encoding="utf-8") as f:
        for line in f:
            _patterns(json.loads(line)["schema"], found)
    assert found
    _sweep(found, "JSONSchemaBench sample")


def _suite_cases(filename: str, key: str) -> Iterator[tuple[str, Any, bool]]:
    with open(fixture_file(f"{SUITE}/{filename}"), encoding="utf-8") as f:
        groups = json.load(f)
    for group in groups:
        schema = group["schema"]
        if isinstance(schema, dict) and isinstance(schema.get(key), str):
            for test in group["tests"]:
                if isinstance(test["data"], str):
                    yield schema[key], test["data"], test["valid"]


@pytest.mark.parametrize("filename", ["pattern.json", "optional/ecmascript-regex.json", "optional/non-bmp-regex.json"])
def test_suite_pattern_instances(filename: str) -> None:
    checked = 0
    for pattern, data, valid in _suite_cases(filename, "pattern"):
        try:
            dfa = dfa_of(pattern)
        except UnsupportedSchemaError:
            continue
        got = accepts(dfa, data)
        # Never looser than the suite; stricter only where Python's re refuses the
        # string (the tree is both engines' language) or by the documented \s rule.
        assert not got or valid, (pattern, data)
        if valid and not got:
            assert not python_search(pattern, data) or "\\s" in pattern or "\\S" in pattern, (pattern, data)
        checked += 1
    print(f"{filename}: {checked} string instances checked")


# ------------------------------------------------------------------ formats


@functools.cache
def format_dfa(name: str) -> Dfa:
    dfa = compile_dfa(format_tree(name))
    assert dfa is not None
    return dfa


def test_unknown_format() -> None:
    with pytest.raises(UnsupportedSchemaError) as info:
        format_tree("color")
    assert info.value.keyword == "format"


def rfc_ok(name: str, s: str) -> bool:
    """Checks from the RFCs and the standard library, beyond the checker's."""
    if name == "hostname":
        labels = s.split(".")
        return len(s) <= 253 and all(1 <= len(x) <= 63 and x[0] != "-" and x[-1] != "-" for x in labels)
    if name in ("date", "date-time"):
        day = datetime.date.fromisoformat(s[:10])  # raises on a bad day
        return day.year >= 1
    if name == "email":
        local = s.rpartition("@")[0]
        return bool(local) and ".." not in local and not local.startswith(".") and not local.endswith(".")
    if name == "ipv6":
        return "%" not in s and ipaddress.IPv6Address(s) is not None
    if name == "uri":
        return s.isascii() and ":" in s
    return s.isascii() and "\n" not in s


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FORMATS))
@hyp_settings(300)
@given(data=st.data())
def test_format_sound(name: str, data: st.DataObject) -> None:
    # Everything the automaton accepts is accepted by the checker and the RFC.
    rng = data.draw(st.randoms(use_true_random=False))
    s = walk(format_dfa(name), rng, stop=0.05, cap=600)
    if s is None:
        return
    assert CHECKER.conforms(s, name), (name, s)
    assert rfc_ok(name, s), (name, s)


def _valid_examples(name: str) -> st.SearchStrategy[str]:
    offsets = st.integers(-23 * 60 - 59, 23 * 60 + 59).map(lambda m: datetime.timezone(datetime.timedelta(minutes=m)))
    if name == "date-time":
        return st.datetimes(timezones=offsets).map(lambda d: d.isoformat())
    if name == "date":
        return st.dates().map(lambda d: d.isoformat())
    if name == "time":
        return st.times(timezones=offsets).map(lambda t: t.isoformat())
    if name == "uuid":
        return st.uuids().map(str) | st.builds(lambda: str(uuid.uuid4()))
    if name == "ipv4":
        return st.integers(0, 2**32 - 1).map(lambda n: str(ipaddress.IPv4Address(n)))
    if name == "ipv6":
        v6 = st.integers(0, 2**128 - 1).map(lambda n: str(ipaddress.IPv6Address(n)))
        mapped = st.integers(0, 2**32 - 1).map(lambda n: f"::ffff:{ipaddress.IPv4Address(n)}")
        return v6 | mapped | v6.map(lambda a: ipaddress.IPv6Address(a).exploded)
    if name == "hostname":
        return domains()
    if name == "email":
        return st.emails()
    if name == "uri":
        return urls()
    # RFC 3339 Appendix A's shapes: Y [M [D]], M [D], D; then T with H [M [S]], M [S], S.
    number = st.integers(0, 10**6).map(str)
    date = st.sampled_from(["", "D", "M", "MD", "Y", "YM", "YMD"])
    time = st.sampled_from(["", "H", "HM", "HMS", "M", "MS", "S"])

    def spell(d: str, t: str, values: list[str]) -> str:
        it = iter(values)
        return "P" + "".join(next(it) + x for x in d) + ("T" + "".join(next(it) + x for x in t) if t else "")

    shaped = st.tuples(date, time).filter(lambda dt: dt != ("", ""))
    durations = shaped.flatmap(lambda dt: st.lists(number, min_size=6, max_size=6).map(lambda v: spell(*dt, v)))
    return durations | number.map(lambda w: f"P{w}W")


def within_hostname_bound(host: str) -> bool:
    """The module's documented stricter bound on hostnames: (labels, longest) tiers."""
    labels = host.split(".")
    if any(x[2:4] == "--" for x in labels):  # reserved labels, refused
        return False
    longest = max(len(x) for x in labels)
    return any(len(labels) <= k and longest <= n for k, n in ((3, 63), (4, 62), (8, 30), (16, 14), (32, 6)))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FORMATS))
@hyp_settings(300)
@given(data=st.data())
def test_format_complete(name: str, data: st.DataObject) -> None:
    # Typical real values the checker accepts are accepted (hostnames: within the
    # documented bound); their mutations are never accepted unless the checker does.
    s = data.draw(_valid_examples(name))
    if not CHECKER.conforms(s, name):
        return
    host = s.rpartition("@")[2] if name == "email" else s
    if name in ("hostname", "email") and not (host.startswith("[") or within_hostname_bound(host)):
        return
    assert accepts(format_dfa(name), s), (name, s)
    rng = data.draw(st.randoms(use_true_random=False))
    m = mutate(s, rng, alphabet=TRICKY + "Tt:+-Z%#?:.1")
    if accepts(format_dfa(name), m):
        assert CHECKER.conforms(m, name) and rfc_ok(name, m), (name, m)


FORMAT_FILES = {
    "date-time": "date-time.json",
    "date": "date.json",
    "time": "time.json",
    "duration": "duration.json",
    "email": "email.json",
    "hostname": "hostname.json",
    "ipv4": "ipv4.json",
    "ipv6": "ipv6.json",
    "uuid": "uuid.json",
    "uri": "uri.json",
}


@pytest.mark.parametrize("name", sorted(FORMAT_FILES))
def test_suite_format_instances(name: str) -> None:
    misses = []
    for fmt, data, valid in _suite_cases(f"optional/format/{FORMAT_FILES[name]}", "format"):
        assert fmt == name
        got = accepts(format_dfa(name), data)
        assert not got or (valid and CHECKER.conforms(data, name)), (name, data)
        if valid and CHECKER.conforms(data, name) and not got:
            misses.append(data)
    print(f"{name}: suite-valid strings the tree refuses: {misses}")
    # Refusals of valid instances are only the documented ones: quoted local parts and
    # reserved ("xn--") labels.
    for data in misses:
        if name == "email":
            assert data.startswith('"'), data
        else:
            assert name == "hostname" and any(x[2:4] == "--" for x in data.split(".")), (name, data)

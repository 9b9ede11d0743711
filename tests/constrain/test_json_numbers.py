"""``json_schema.numbers.number_tree`` against exact decimal arithmetic.

The reference, none of it computed by the code under test: RFC 8259's number regex
(``re.fullmatch``) for the grammar, ``Decimal(text)`` compared with the bounds for the
value, ``Decimal(text) / multiple_of`` an integer (in exact fractions) for multipleOf,
and ``to_integral_value`` for integers. Trees are compiled with ``compile_dfa`` and
texts run through the DFA. Every comparison is an equality: accepted exactly when
valid and not in one of the refusal classes the module documents (``refused`` below spells them out), so the
module notes are checked too.
"""

from __future__ import annotations

import decimal
import itertools
import json
import math
import re
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from strategies import hyp_settings

from tokstream.constrain.grammar.automaton import Dfa, compile_dfa
from tokstream.constrain.grammar.nodes import Alt, Concat, Node, Repeat
from tokstream.constrain.json_schema.numbers import MAX_MODULAR_DIGITS, number_tree
from tokstream.errors import UnsupportedSchemaError

RFC8259 = r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?"
_PARTS = re.compile(r"(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?")

#: Exact arithmetic for building candidates near huge and tiny bounds.
EXACT = decimal.Context(prec=2000, Emax=10**6, Emin=-(10**6))

# ------------------------------------------------------------------ the reference


class Case:
    """One call of ``number_tree`` and its compiled DFA."""

    def __init__(
        self,
        integer: bool,
        lo: Decimal | None,
        hi: Decimal | None,
        xlo: bool = False,
        xhi: bool = False,
        mult: Decimal | None = None,
    ) -> None:
        self.integer, self.lo, self.hi, self.xlo, self.xhi, self.mult = integer, lo, hi, xlo, xhi, mult
        self.tree = number_tree(
            integer=integer, minimum=lo, maximum=hi, exclusive_minimum=xlo, exclusive_maximum=xhi, multiple_of=mult
        )
        self.dfa: Dfa | None = compile_dfa(self.tree)

    def __repr__(self) -> str:
        return f"Case({self.integer}, {self.lo}, {self.hi}, {self.xlo}, {self.xhi}, {self.mult})"

    def accepts(self, text: str) -> bool:
        if self.dfa is None:
            return False
        state = self.dfa.run(0, text.encode())
        return state >= 0 and bool(self.dfa.accepting[state])

    def valid(self, text: str) -> bool:
        """The JSON Schema verdict on the text (grammar, type, bounds, multipleOf)."""
        if re.fullmatch(RFC8259, text) is None:
            return False
        v = Decimal(text)
        if self.integer and v != EXACT.to_integral_value(v):
            return False
        if self.lo is not None and (v <= self.lo if self.xlo else v < self.lo):
            return False
        if self.hi is not None and (v >= self.hi if self.xhi else v > self.hi):
            return False
        return self.mult is None or (Fraction(v) / Fraction(self.mult)).denominator == 1

    def refused(self, text: str) -> bool:
        """Whether the text is of a spelling the module documents as refused."""
        m = _PARTS.fullmatch(text)
        assert m is not None
        sign, int_part, frac, exp = m.groups()
        if exp is None:
            return False  # plain decimals: always exact
        if self.integer:
            return True
        if int_part == "0" and not (frac or "").strip("0"):
            return False  # zero mantissa: value 0
        if self.mult is not None:
            return True
        if len(int_part) == 1 and int_part != "0":
            return False  # normalized mantissa [1-9](.d+)?
        # Any mantissa on a side the bounds only cut off from the other side.
        if sign:
            return not (self.lo is None and (self.hi is None or self.hi >= 0))
        return not (self.hi is None and (self.lo is None or self.lo <= 0))

    def check(self, texts: list[str]) -> None:
        for text in texts:
            valid = self.valid(text)
            expected = valid and not self.refused(text)
            got = self.accepts(text)
            if got and not valid:
                raise AssertionError(f"{self}: accepts {text!r}, whose value violates the keywords")
            assert got == expected, f"{self}: {text!r} accepted={got}, expected {expected}"


def count_nodes(tree: Node) -> int:
    """Nodes of the tree (iterative: tight paths nest hundreds of levels deep)."""
    n, stack = 0, [tree]
    while stack:
        node = stack.pop()
        n += 1
        if isinstance(node, Repeat):
            stack.append(node.item)
        elif isinstance(node, (Alt, Concat)):
            stack.extend(node.items)
    return n


# ------------------------------------------------------------------ strategies

BIG = [
    "9007199254740991",
    "-9007199254740991",
    "1.7976931348623157e308",
    "-1.7976931348623157e308",
    "1e18",
    "-1e18",
    "1000000000000000000000001",
    "2.2250738585072014e-308",
    "-5e-324",
    "1e-7",
    "123456789012345678901234567890.5",
]


def _scaled(m: int, e: int) -> Decimal:
    return EXACT.scaleb(Decimal(m), e)


bounds = st.one_of(
    st.integers(-1000, 1000).map(Decimal),
    st.builds(_scaled, st.integers(-(10**5), 10**5), st.integers(-6, 2)),
    st.builds(_scaled, st.integers(-99, 99), st.integers(-30, 30)),
    st.sampled_from([Decimal(x) for x in BIG]),
    st.sampled_from([Decimal("0"), Decimal("-0"), Decimal("0.0"), Decimal("1"), Decimal("-1")]),
)
MULTIPLES = [
    "0.001",
    "0.01",
    "0.1",
    "1",
    "1.0",
    "2",
    "4",
    "5",
    "8",
    "10",
    "20",
    "40",
    "80",
    "25",
    "50",
    "100",
    "125",
    "1000",
]
#: For integers a fraction counts by its numerator.
INT_MULTIPLES = MULTIPLES + ["0.5", "2.5", "0.04"]


@st.composite
def cases(draw: st.DrawFn) -> Case:
    integer = draw(st.booleans())
    lo = draw(st.none() | bounds)
    hi = draw(st.none() | bounds)
    if lo is not None and hi is not None and lo > hi and draw(st.integers(0, 9)):
        lo, hi = hi, lo  # mostly non-empty ranges
    mult = draw(st.none() | st.none() | st.sampled_from(INT_MULTIPLES if integer else MULTIPLES).map(Decimal))
    if mult is not None and Fraction(mult).numerator > 1 and (integer or Fraction(mult).denominator == 1):
        if any(b is not None and abs(b) >= 10**MAX_MODULAR_DIGITS for b in (lo, hi)):
            mult = None  # refused (test_huge_bounds_with_integer_multiples_raise)
    return Case(integer, lo, hi, draw(st.booleans()), draw(st.booleans()), mult)


def _exponent(draw: st.DrawFn, e: int) -> str:
    sign = "-" if e < 0 else draw(st.sampled_from(["", "+"]))
    return draw(st.sampled_from("eE")) + sign + "0" * draw(st.integers(0, 2)) + str(abs(e))


@st.composite
def spelling(draw: st.DrawFn, v: Decimal) -> str:
    """A JSON spelling of ``v``: plain (with trailing zeros), normalized exponent, or a
    non-normalized exponent form."""
    v = EXACT.plus(v)
    kind = draw(st.sampled_from(["plain", "plain", "normalized", "shifted"]))
    if kind == "plain" or not v:
        text = format(v, "f")
        zeros = draw(st.integers(0, 3))
        if zeros:
            text += ("" if "." in text else ".") + "0" * zeros
        if not v and draw(st.booleans()):
            text += _exponent(draw, draw(st.integers(-5, 5)))
        return text
    sign, digits, exp = v.as_tuple()
    assert isinstance(exp, int)
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    e = exp + len(digits) - 1  # of the first digit
    if kind == "normalized":
        mantissa = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
        if draw(st.booleans()):
            mantissa += ("" if "." in mantissa else ".") + "0" * draw(st.integers(1, 2))
        return "-" * sign + mantissa + _exponent(draw, e)
    # All digits before the point, or "0." before them.
    if draw(st.booleans()):
        return "-" * sign + ds + _exponent(draw, e - len(ds) + 1)
    return "-" * sign + "0." + ds + _exponent(draw, e + 1)


def _modest(text: str) -> bool:
    """Short, with an exponent Decimal handles quickly."""
    m = _PARTS.fullmatch(text)
    return len(text) < 40 and m is not None and len((m.group(4) or "").lstrip("+-0")) <= 4


DELTAS = [Decimal(x) for x in ["0", "1", "0.1", "0.01", "0.001", "1e-7", "1e-20", "5", "10", "25", "0.5"]]


@st.composite
def texts(draw: st.DrawFn, case: Case) -> list[str]:
    """Candidates near the bounds (and zero, and the multiples around them), random
    valid texts and near-valid junk."""
    anchors = [b for b in (case.lo, case.hi) if b is not None] + [Decimal(0), Decimal(1), Decimal(-1)]
    out = ["-0", "0", "0.0", "-0.000", "0e0", "-0E+5", "00", "-", "1.", ".5", "+1", "1e", "01.5", "1.5e+"]
    for _ in range(draw(st.integers(15, 30))):
        how = draw(st.integers(0, 9))
        if how < 7:
            base = draw(st.sampled_from(anchors))
            delta = draw(st.sampled_from(DELTAS)) * draw(st.sampled_from([1, -1]))
            if case.mult is not None and draw(st.booleans()):
                delta = case.mult * draw(st.integers(-3, 3))
                base = EXACT.quantize(base, case.mult) if abs(base) < 10**100 else base
            v = EXACT.add(base, delta)
            if how == 6:  # random extra fraction digits
                v = EXACT.add(v, _scaled(draw(st.integers(-999, 999)), -draw(st.integers(3, 8))))
            out.append(draw(spelling(v)))
        elif how < 9:
            out.append(draw(st.from_regex(RFC8259, fullmatch=True).filter(_modest)))
        else:
            out.append(draw(st.text("0123456789.-+eE", max_size=8)))
    return out


# ------------------------------------------------------------------ differential tests


@pytest.mark.slow
@hyp_settings(400)
@given(case=cases(), data=st.data())
def test_texts_near_the_bounds(case: Case, data: st.DataObject) -> None:
    """Sound (accepted -> valid) and complete outside the documented refusals."""
    case.check(data.draw(texts(case)))


@hyp_settings(150)
@given(case=cases(), data=st.data())
def test_json_dumps_spellings(case: Case, data: st.DataObject) -> None:
    """What ``json.dumps`` prints for Python ints and floats within the bounds."""
    lo = -1e300 if case.lo is None else max(float(case.lo), -1e300)
    hi = 1e300 if case.hi is None else min(float(case.hi), 1e300)
    floats = st.floats(min_value=min(lo, hi), max_value=max(lo, hi), allow_nan=False, allow_infinity=False)
    near = [float(b) for b in (case.lo, case.hi) if b is not None]
    near += [math.nextafter(x, d) for x in near for d in (-math.inf, math.inf)]
    values: list[float | int] = data.draw(st.lists(floats, min_size=5, max_size=15)) + near
    if case.lo is not None and case.hi is not None and case.lo <= case.hi and abs(case.lo) < 10**30:
        a, b = math.ceil(case.lo), math.floor(case.hi)
        if a <= b:
            values += data.draw(st.lists(st.integers(a, b), max_size=10))
            values += [a, b, float(a), float(b)]
    texts = [json.dumps(x) for x in values]
    case.check(texts)
    for text in texts:
        # The floats json.dumps prints are plain or normalized: only the documented
        # refusals (exponents for integers and under multipleOf) can miss.
        if case.valid(text) and not case.accepts(text):
            assert "e" in text and (case.integer or case.mult is not None), text


#: Every string up to 5 characters over these, once: exhaustive near zero and one.
SHORT = ["".join(p) for n in range(1, 6) for p in itertools.product("015.-e", repeat=n)]


@hyp_settings(25)
@given(case=cases())
@example(Case(False, Decimal("0.5"), Decimal("1.5"), True, False))
@example(Case(False, Decimal("-1"), Decimal("0"), False, True))
@example(Case(True, Decimal("-10"), Decimal("10"), False, False, Decimal("5")))
@example(Case(False, Decimal("0"), Decimal("1"), False, False, Decimal("0.1")))
def test_short_strings_exhaustively(case: Case) -> None:
    case.check(SHORT)


@pytest.mark.parametrize(
    ("integer", "lo", "hi", "xlo", "xhi", "mult"),
    [
        (False, None, None, False, False, None),
        (True, None, None, False, False, None),
        (False, "0", None, True, False, None),
        (False, None, "0", False, True, None),
        (False, "0", "0", False, False, None),
        (True, "0.5", "0.7", False, False, None),
        (False, "1.5", "1.5", False, True, None),
        (True, "1", "100", True, True, "25"),
        (False, "-1.7976931348623157e308", "1.7976931348623157e308", False, False, None),
        (False, "1e308", None, True, False, None),
        (False, None, "-1e308", False, True, None),
        (True, "-9007199254740991", "9007199254740991", False, False, None),
        (False, "1e-300", "2e-300", False, False, None),
        (False, "0", "1000", False, False, "0.01"),
        (True, "-1000", "12345", False, False, "8"),
    ],
)
def test_fixed_cases(integer: bool, lo: str | None, hi: str | None, xlo: bool, xhi: bool, mult: str | None) -> None:
    """Edge bounds: zero from both sides, empty ranges, the float extremes."""

    def dec(s: str | None) -> Decimal | None:
        return None if s is None else Decimal(s)

    case = Case(integer, dec(lo), dec(hi), xlo, xhi, dec(mult))
    probes = ["0", "-0", "0.0", "1", "-1", "0.5", "0.7", "1.5", "1.50", "100", "75", "50", "25", "1000", "12345"]
    probes += ["12336", "12352", "-992", "-1008", "1e308", "1.0000000000000001e308", "-1e308", "1.7976931348623157e308"]
    probes += ["1" + "0" * 308, "1" + "0" * 308 + ".000001", "-" + "1" + "0" * 308, "-1.7976931348623157e+308"]
    probes += ["1e-300", "1.5e-300", "2e-300", "2.0000001e-300", "0." + "0" * 299 + "15", "9007199254740991"]
    probes += ["9007199254740992", "-9007199254740991.0", "0.01", "999.99", "1000.001", "15e2", "0.5e1", "0e9"]
    case.check(probes)


def test_empty_ranges_are_nothing() -> None:
    from tokstream.constrain.grammar.nodes import NOTHING

    assert number_tree(integer=False, minimum=Decimal(2), maximum=Decimal(1)) == NOTHING
    assert number_tree(integer=False, minimum=Decimal(1), maximum=Decimal(1), exclusive_maximum=True) == NOTHING
    assert number_tree(integer=True, minimum=Decimal("0.1"), maximum=Decimal("0.9")) == NOTHING
    assert number_tree(integer=True, minimum=Decimal(1), maximum=Decimal(4), multiple_of=Decimal(5)) == NOTHING


# ------------------------------------------------------------------ refusals and size


@pytest.mark.parametrize(
    ("integer", "mult"),
    [
        (False, "3"),
        (True, "3"),
        (True, "7"),
        (True, "1.5"),
        (False, "0.5"),
        (False, "0.25"),
        (False, "0.3"),
        (False, "32"),
        (True, "16"),
        (True, "1024"),
        (False, "0"),
        (True, "-2"),
    ],
)
def test_unsupported_multiple_of_raises(integer: bool, mult: str) -> None:
    with pytest.raises(UnsupportedSchemaError) as info:
        number_tree(integer=integer, multiple_of=Decimal(mult))
    assert info.value.keyword == "multipleOf"


def test_absurd_bounds_raise_with_their_keyword() -> None:
    with pytest.raises(UnsupportedSchemaError) as info:
        number_tree(integer=False, minimum=Decimal("1e-5000"), exclusive_minimum=True)
    assert info.value.keyword == "exclusiveMinimum"
    with pytest.raises(UnsupportedSchemaError) as info:
        number_tree(integer=True, maximum=Decimal("1e5000"))
    assert info.value.keyword == "maximum"


def test_huge_bounds_with_integer_multiples_raise() -> None:
    with pytest.raises(UnsupportedSchemaError) as info:
        number_tree(integer=True, maximum=Decimal("1e20"), multiple_of=Decimal(8))
    assert info.value.keyword == "multipleOf"
    number_tree(integer=True, maximum=Decimal("1e20") - 1, multiple_of=Decimal(8))
    number_tree(integer=False, maximum=Decimal("1e308"), multiple_of=Decimal("0.01"))  # 10**-k: no residue


@pytest.mark.parametrize("digits", [1, 5, 16, 50, 150, 309])
def test_tree_size_is_linear_in_the_digits(digits: int) -> None:
    """A bound of ``d`` digits, ``s`` significant: O(s + d log d) tree nodes (free tails
    are single repetitions), and the automaton still compiles at 309 digits."""
    big = Decimal("1.7976931348623157") * Decimal(10) ** (digits - 1)
    nines = Decimal(10) ** min(digits, 17) - 1
    for lo, hi in [(-big, big), (None, big), (big, None), (-nines, nines)]:
        for integer in (False, True):
            for exclusive in (False, True):
                tree = number_tree(
                    integer=integer, minimum=lo, maximum=hi, exclusive_minimum=exclusive, exclusive_maximum=exclusive
                )
                assert count_nodes(tree) <= 60 * (17 + digits) + 600, (digits, count_nodes(tree))
    assert compile_dfa(number_tree(integer=False, minimum=-big, maximum=big)) is not None
    # The deepest tight paths: every digit significant after rounding to the grid.
    assert compile_dfa(number_tree(integer=True, minimum=big, exclusive_minimum=True)) is not None
    assert compile_dfa(number_tree(integer=False, minimum=Decimal("5e-324"), maximum=big)) is not None

"""JSON number texts whose value satisfies JSON Schema's numeric keywords, as a regex tree.

``number_tree(integer=..., minimum=..., maximum=..., exclusive_minimum=...,
exclusive_maximum=..., multiple_of=...)`` returns a ``grammar.nodes`` tree whose
language is a set of RFC 8259 number texts (``-?(0|[1-9][0-9]*)(\\.[0-9]+)?
([eE][+-]?[0-9]+)?``). It is *sound*: every text in it has a value (read exactly, as
``Decimal(text)``) that satisfies every keyword given. It is *complete* except for the
refusals listed below, each a whole class of spellings, never a range of values.

Exact (every valid text of the form is in the language):

- *Plain decimals* ``-?(0|[1-9][0-9]*)(\\.[0-9]+)?``, for any ``Decimal`` bounds
  (negative, zero, fractional, huge or tiny), inclusive or exclusive, with trailing
  fraction zeros (``1.50``) and ``-0`` (value 0) wherever 0 is allowed.
- ``integer=True``: the integral values among them, so ``3``, ``3.0``, ``-3.00``.
- ``integer=False`` without ``multiple_of``: *every* exponent text on a side of zero
  the bounds only cut off from the other side: non-negative texts when there is no
  maximum and the minimum is at most 0 (``minimum: 0`` allows ``15e2``, ``0.5E+3``),
  negative texts when there is no minimum and the maximum is at least 0; no bounds at
  all give the full RFC 8259 grammar.
  Under a real bound, the *normalized* exponent texts ``-?[1-9](\\.[0-9]+)?[eE][+-]?
  [0-9]+`` (what ``json.dumps``/``repr`` print for floats: ``1e-05``, ``-2.5e+16``;
  exponent digits may have leading zeros, the mantissa trailing zeros), and the
  zero-mantissa texts (``0e5``, ``-0.0E-3``, value 0) whenever 0 is allowed.
- ``multiple_of``: ``10**-k`` (``1``, ``0.1``, ``0.01``, ...): at most ``k`` fraction
  digits before the trailing zeros; an integer ``n = 2**a * 5**b`` (``2, 4, 5, 8, 10,
  20, 25, 40, 100, 125, ...``): integral values whose last ``j = max(a, b)`` digits make a
  multiple of ``n`` (``10**j`` is one). For ``integer=True`` a fraction ``p/q`` in
  lowest terms is the integer ``p`` (an integer ``x`` is a multiple of ``p/q`` iff ``p``
  divides ``x``). Both combine with bounds (``n > 1`` only below ``1e20``, see below): the bounds are first rounded inward
  to the multiples (``exclusiveMinimum: 1.5`` with ``multipleOf: 0.5`` -> ``>= 2.0``).

Refused (not in the language although the value may satisfy):

- exponent texts for ``integer=True`` (``1e2``, ``1.0E0``);
- for ``integer=False`` under a bound that is not just ``>= 0`` / ``> 0`` on that
  sign's side: exponent texts with a non-normalized nonzero mantissa (``15e2``,
  ``0.5e3``, ``10E-1``) - comparing them with a constant would tie mantissa length
  to exponent value, which no finite automaton does;
- for ``integer=False`` with ``multiple_of``: every exponent text with a nonzero
  mantissa (``1.5e-3`` is a multiple of ``0.0001`` iff ``fraction digits - exponent
  <= 4``: the same counting problem).

Raised with ``UnsupportedSchemaError(keyword="multipleOf")``: a ``multiple_of`` that is
not positive; for ``integer=False`` one that is neither ``10**-k`` nor an integer
``2**a * 5**b`` (``0.5``, ``0.25``, ``3``); for ``integer=True`` one whose numerator is
not ``2**a * 5**b`` (``3``, ``7``, ``1.5``); and ``n`` whose ``j``-digit suffixes
hold more than ``MAX_SUFFIXES`` multiples (``10**j / n > 200``: ``16``, ``32``,
``64``, ``160``), whose trees (one suffix tree per free tail) and automata would be
too large; and such an ``n > 1`` beside a bound of ``|bound| >= 1e20`` (more than
``MAX_MODULAR_DIGITS`` integer digits), where the automaton would count digits and
track the suffix at once (``maximum: 1.8e308`` with ``multipleOf: 80`` needs more than
50,000 DFA states). A bound whose plain expansion has more than
``MAX_BOUND_DIGITS`` digits (``1e-5000``, ``1e5000``) raises with its own keyword
(``minimum``, ``exclusiveMinimum``, ...). Non-finite ``Decimal`` bounds raise
``ValueError``.

Construction: a bound splits the texts by the length ``N`` of their integer part;
lengths strictly between the bounds' lengths are free (``[1-9][0-9]{N-1}`` as one
bounded repetition over all of them); at a bound's own length the tree follows the
bound's digits (integer digits, then fraction digits, aligned at the point) along a
tight path, branching off at each digit where the text can go above (lower bound) or
below (upper bound) into a free tail. Normalized exponent texts compare exponent
first, then mantissa (the same construction with ``N = 1``), with the exponent's own
integer-range tree. ``multiple_of = n`` threads the prefix's residue mod ``n`` along
the last ``j`` integer digits.

Cost: a bound of ``d`` plain digits whose first ``s`` (up to its last nonzero digit)
are significant gives a tight path of ``O(s)`` steps, each branching into a free tail
that is one bounded repetition: ``O(s)`` tree nodes (plus ``O(d log d)`` for an
exclusive bound with trailing zeros, whose "not all zero" tail is split in halves),
and ``O(s * d)`` NFA states once the automaton unrolls the repetitions. Measured
(tree nodes / DFA states): integer ``0..100`` 42 / 11; number ``maximum: 100``
180 / 52; integer ``+-9007199254740991`` 420 / 93; number ``+-1.7976931348623157e308``
928 / 1,975 (~12,000 NFA states, 60 ms to compile); number ``> 1e308`` 2,432 / 951.
``multiple_of = n > 1`` puts a suffix tree (up to ~1,500 nodes for ``n = 8``) at the
end of every free tail: integer ``+-9007199254740991`` with ``multipleOf: 8`` 6,348 /
1,688 (~110 ms to compile).
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from math import ceil, floor

from ...errors import UnsupportedSchemaError
from ..grammar.nodes import EMPTY, NOTHING, Alt, Chars, Concat, Node, Repeat, literal

__all__ = ["MAX_BOUND_DIGITS", "MAX_MODULAR_DIGITS", "MAX_SUFFIXES", "number_tree"]

#: The most digits a bound's plain expansion may have (``1.7976931348623157e308``: 309,
#: ``5e-324``: 325). The tight path nests one level per digit, and the tree walkers
#: (here and in ``automaton``) recurse per level: this keeps them well inside Python's
#: recursion limit.
MAX_BOUND_DIGITS = 400
#: The most multiples of ``n`` among ``j``-digit suffixes for ``multiple_of = n``.
MAX_SUFFIXES = 200
#: The most integer digits of a bound combined with ``multiple_of = n > 1``.
MAX_MODULAR_DIGITS = 20

_D = Chars(((0x30, 0x39),))
_NZ = Chars(((0x31, 0x39),))
_ZERO = literal("0")
_DOT = literal(".")
_MINUS = literal("-")
_E = Chars(((0x45, 0x45), (0x65, 0x65)))

# A bound along one layout: its digits aligned (integer digits, then fraction digits,
# trailing zeros dropped) and whether it is exclusive.
_Tight = tuple[tuple[int, ...], bool]
# A bound as an exact value and exclusivity.
_Bound = tuple[Fraction, bool]


# ---------------------------------------------------------------- tree helpers


def _alt(*items: Node) -> Node:
    """``Alt`` without the impossible items, flattened (one item: itself)."""
    out: list[Node] = []
    for item in items:
        if isinstance(item, Chars) and not item.ranges:
            continue
        for x in item.items if isinstance(item, Alt) else (item,):
            if x not in out:
                out.append(x)
    if not out:
        return NOTHING
    return out[0] if len(out) == 1 else Alt(tuple(out))


def _cat(*items: Node) -> Node:
    """``Concat``: impossible if an item is, flattened, empty strings dropped."""
    out: list[Node] = []
    for item in items:
        if isinstance(item, Chars) and not item.ranges:
            return NOTHING
        out.extend(item.items if isinstance(item, Concat) else (item,))
    return out[0] if len(out) == 1 else Concat(tuple(out))


def _rep(item: Node, lo: int, hi: int | None) -> Node:
    """``Repeat`` with the trivial counts written out."""
    if hi is not None and (hi < lo or hi == 0):
        return NOTHING if hi < lo else EMPTY
    if hi == lo == 1:
        return item
    return Repeat(item, lo, hi)


def _digit_set(digits: list[int]) -> Node:
    """One digit from ``digits`` (ascending)."""
    ranges: list[tuple[int, int]] = []
    for d in digits:
        if ranges and ranges[-1][1] == 0x30 + d - 1:
            ranges[-1] = (ranges[-1][0], 0x30 + d)
        else:
            ranges.append((0x30 + d, 0x30 + d))
    return Chars(tuple(ranges))


def _nonzero_run(m: int) -> Node:
    """Digit strings of length ``m`` not all zero, in ``O(m log m)`` nodes: either the
    second half is not all zero, or it is and the first half is not."""
    if m == 1:
        return _NZ
    a = m // 2
    return _alt(_cat(_rep(_D, a, a), _nonzero_run(m - a)), _cat(_nonzero_run(a), _rep(_ZERO, m - a, m - a)))


# ---------------------------------------------------------------- exact decimals


def _split(v: Fraction) -> tuple[str, str]:
    """The plain digits of ``v >= 0`` (a finite decimal): integer part without leading
    zeros (``"0"`` for none) and fraction without trailing zeros."""
    den, a, b = v.denominator, 0, 0
    while den % 2 == 0:
        den, a = den // 2, a + 1
    while den % 5 == 0:
        den, b = den // 5, b + 1
    assert den == 1, "a decimal bound has a power-of-ten denominator"
    k = max(a, b)
    s = str(v.numerator * 10**k // v.denominator).rjust(k + 1, "0")
    return s[: len(s) - k], s[len(s) - k :].rstrip("0")


def _aligned(int_part: str, frac: str) -> tuple[int, ...]:
    return tuple(int(c) for c in int_part + frac)


def _rest_zero(digits: tuple[int, ...], i: int) -> bool:
    return not any(digits[i:])


def _suffix_exponent(n: int) -> int | None:
    """The least ``j`` with ``n`` dividing ``10**j`` (``max(a, b)`` for ``n = 2**a *
    5**b``), or None if there is none."""
    a = b = 0
    while n % 2 == 0:
        n, a = n // 2, a + 1
    while n % 5 == 0:
        n, b = n // 5, b + 1
    return max(a, b) if n == 1 else None


def _at(digits: tuple[int, ...], i: int) -> int:
    return digits[i] if i < len(digits) else 0


# ---------------------------------------------------------------- digit layouts


class _Digits:
    """Unsigned texts ``(0|[1-9][0-9]*)(\\.[0-9]+)?`` of one family: with or without a
    fraction, at most ``limit`` significant fraction digits (None: any), a nonzero
    leading digit even for one-digit integer parts (``lead``: mantissas), and integral
    values that are multiples of ``n`` (``n | 10**j``; ``n > 1`` only with ``limit`` 0).

    Positions are aligned: ``0 .. N-1`` the integer digits, ``N ..`` the fraction
    digits; a text that ends (or has no fraction) reads as zeros from there on.
    Residues are those of the digits read so far, mod ``n``, and 0 while at least
    ``j`` integer digits remain (their contribution vanishes mod ``n`` then)."""

    def __init__(self, *, frac: bool, limit: int | None, n: int = 1, lead: bool = False) -> None:
        self.frac, self.limit, self.n, self.lead = frac, limit, n, lead
        j = _suffix_exponent(n)
        assert j is not None
        self.j = j
        self._suffixes: dict[tuple[int, int, bool], Node] = {}
        self.frac_any = _alt(EMPTY, _cat(_DOT, self._frac_digits(0, True))) if frac else EMPTY
        self.frac_zero = _alt(EMPTY, _cat(_DOT, _rep(_ZERO, 1, None))) if frac else EMPTY

    def _frac_digits(self, used: int, one: bool) -> Node:
        """Fraction digits after ``used`` of them, at least one when ``one``."""
        if self.limit is None:
            return _rep(_D, int(one), None)
        free = self.limit - used
        if free <= 0:
            return _rep(_ZERO, int(one), None)
        return _cat(_rep(_D, int(one), free), _rep(_ZERO, 0, None))

    def _first_min(self, n_int: int) -> int:
        return 1 if n_int > 1 or self.lead else 0

    def suffix(self, r: int, m: int, first: bool) -> Node:
        """Digit strings ``w`` of length ``m`` (the first nonzero when ``first``) with
        ``r * 10**m + w`` a multiple of ``n``."""
        j = self.j
        if m > j:
            head = _cat(_NZ, _rep(_D, m - 1 - j, m - 1 - j)) if first else _rep(_D, m - j, m - j)
            return _cat(head, self.suffix(0, j, False))
        key = (r, m, first)
        found = self._suffixes.get(key)
        if found is None:
            if m == 0:
                found = EMPTY if r == 0 else NOTHING
            else:
                groups: dict[int, list[int]] = {}
                for d in range(1 if first else 0, 10):
                    groups.setdefault((10 * r + d) % self.n, []).append(d)
                found = _alt(*(_cat(_digit_set(ds), self.suffix(r2, m - 1, False)) for r2, ds in groups.items()))
            self._suffixes[key] = found
        return found

    def free(self, n_int: int, i: int, r: int) -> Node:
        """Every continuation from position ``i`` after a prefix of residue ``r``."""
        if i < n_int:
            return _cat(self.suffix(r, n_int - i, i == 0 and self._first_min(n_int) == 1), self.frac_any)
        if i == n_int:
            return self.frac_any if r == 0 else NOTHING
        return self._frac_digits(i - n_int, False)

    def zeros(self, n_int: int, i: int, r: int) -> Node:
        """The continuations from ``i`` whose digits are all zero."""
        if i < n_int:
            if (i == 0 and self._first_min(n_int) == 1) or r * pow(10, n_int - i, self.n) % self.n:
                return NOTHING
            return _cat(_rep(_ZERO, n_int - i, n_int - i), self.frac_zero)
        if i == n_int:
            return self.frac_zero if r == 0 else NOTHING
        return _rep(_ZERO, 0, None)

    def nonzero(self, n_int: int, i: int) -> Node:
        """The continuations from ``i`` with some nonzero digit (only where exclusive
        bounds survive: no fraction limit, ``n`` 1)."""
        assert self.limit is None and self.n == 1
        tail = _cat(_rep(_ZERO, 0, None), _NZ, _rep(_D, 0, None))
        if i < n_int:
            if i == 0 and self._first_min(n_int) == 1:
                return self.free(n_int, 0, 0)
            m = n_int - i
            dotted = _cat(_DOT, tail) if self.frac else NOTHING
            return _alt(_cat(_nonzero_run(m), self.frac_any), _cat(_rep(_ZERO, m, m), dotted))
        if i == n_int:
            return _cat(_DOT, tail) if self.frac else NOTHING
        return tail

    def walk(self, n_int: int, i: int, r: int, lo: _Tight | None, hi: _Tight | None) -> Node:
        """The continuations from position ``i`` (residue ``r``) of texts with an
        ``n_int``-digit integer part whose remaining digits are ``>= lo`` and ``<= hi``
        (strictly when exclusive), for the bounds still tight: equal to the text so
        far."""
        if lo is not None and not lo[1] and _rest_zero(lo[0], i):
            lo = None  # anything is >= zeros
        if hi is not None and _rest_zero(hi[0], i):
            # Only zeros are <= zeros; nothing is < them, nor both that and > lo.
            return NOTHING if hi[1] or lo is not None else self.zeros(n_int, i, r)
        if lo is None and hi is None:
            return self.free(n_int, i, r)
        if hi is None and lo is not None and _rest_zero(lo[0], i):
            return self.nonzero(n_int, i)
        end: Node = NOTHING
        if i < n_int:
            d_lo, d_hi = (self._first_min(n_int) if i == 0 else 0), 9
        else:
            if i == n_int and r:
                return NOTHING
            # Ending reads as zeros: below any nonzero rest of hi, and below lo's.
            end = EMPTY if lo is None else NOTHING
            if not self.frac:
                return end
            d_lo = 0
            d_hi = 9 if self.limit is None or i - n_int < self.limit else 0
        residue = i < n_int and n_int - i - 1 < self.j
        groups: dict[tuple[bool, bool, int], list[int]] = {}
        for d in range(d_lo, d_hi + 1):
            if (lo is not None and d < _at(lo[0], i)) or (hi is not None and d > _at(hi[0], i)):
                continue
            tight_lo = lo is not None and d == _at(lo[0], i)
            tight_hi = hi is not None and d == _at(hi[0], i)
            r2 = (10 * r + d) % self.n if residue else 0
            groups.setdefault((tight_lo, tight_hi, r2), []).append(d)
        parts: list[Node] = []
        for (tl, th, r2), ds in groups.items():  # a loop, not a generator: one frame per digit
            parts.append(_cat(_digit_set(ds), self.walk(n_int, i + 1, r2, lo if tl else None, hi if th else None)))
        body = _alt(*parts)
        return _alt(end, _cat(_DOT, body) if i == n_int else body)

    def lengths(self, a: int, b: int | None) -> Node:
        """Texts with an integer part of ``a .. b`` digits (``a >= 2``), otherwise free."""
        if b is not None and b < a:
            return NOTHING
        j = self.j
        parts = [_cat(self.suffix(0, m, True), self.frac_any) for m in range(a, min(j, b if b is not None else j) + 1)]
        lo = max(a, j + 1)
        if b is None or b >= lo:
            reps = _rep(_D, lo - 1 - j, None if b is None else b - 1 - j)
            parts.append(_cat(_NZ, reps, self.suffix(0, j, False), self.frac_any))
        return _alt(*parts)

    def between(self, lo: _Bound | None, hi: _Bound | None) -> Node:
        """The texts with value ``>= lo`` and ``<= hi`` (exclusive as flagged; None: no
        bound), both ``>= 0``."""
        lo_n, lo_t = 1, None
        if lo is not None:
            ip, fp = _split(lo[0])
            lo_n, lo_t = len(ip), (_aligned(ip, fp), lo[1])
        if hi is None:
            return _alt(self.walk(lo_n, 0, 0, lo_t, None), self.lengths(lo_n + 1, None))
        ip, fp = _split(hi[0])
        hi_n, hi_t = len(ip), (_aligned(ip, fp), hi[1])
        if hi_n == lo_n:
            return self.walk(lo_n, 0, 0, lo_t, hi_t)
        return _alt(
            self.walk(lo_n, 0, 0, lo_t, None), self.lengths(lo_n + 1, hi_n - 1), self.walk(hi_n, 0, 0, None, hi_t)
        )


_INTS = _Digits(frac=False, limit=0)
_MANTISSA = _Digits(frac=True, limit=None, lead=True)


def _int_text(lo: int | None, hi: int | None) -> Node:
    """``[+-]?[0-9]+`` (leading zeros allowed) with integer value in ``lo .. hi``."""
    if lo is not None and hi is not None and lo > hi:
        return NOTHING
    parts: list[Node] = []
    zeros = _rep(_ZERO, 0, None)
    if hi is None or hi >= 0:
        a = max(lo, 0) if lo is not None else 0
        mag = _INTS.between((Fraction(a), False) if a else None, None if hi is None else (Fraction(hi), False))
        parts.append(_cat(_rep(literal("+"), 0, 1), zeros, mag))
    if lo is None or lo <= 0:
        a = max(-hi, 0) if hi is not None else 0
        mag = _INTS.between((Fraction(a), False) if a else None, None if lo is None else (Fraction(-lo), False))
        parts.append(_cat(_MINUS, zeros, mag))
    return _alt(*parts)


def _normalized(v: Fraction) -> tuple[tuple[int, ...], int]:
    """``v > 0`` as mantissa digits (one before the point, trailing zeros dropped) and
    exponent: ``v = d0.d1d2... * 10**e``."""
    ip, fp = _split(v)
    if ip != "0":
        digits, e = ip + fp, len(ip) - 1
    else:
        z = len(fp) - len(fp.lstrip("0"))
        digits, e = fp[z:], -(z + 1)
    return _aligned(digits.rstrip("0"), ""), e


def _exponent_texts(lo: _Bound | None, hi: _Bound | None) -> Node:
    """Normalized exponent texts ``[1-9](\\.[0-9]+)?[eE][+-]?[0-9]+`` with value in the
    magnitude range (``lo`` of value 0 counts as none: their values are positive)."""
    if hi is not None and hi[0] == 0:
        return NOTHING
    low = None if lo is None or lo[0] == 0 else _normalized(lo[0])
    high = None if hi is None else _normalized(hi[0])

    def block(mantissa: Node, e_lo: int | None, e_hi: int | None) -> Node:
        return _cat(mantissa, _E, _int_text(e_lo, e_hi))

    any_mantissa = _MANTISSA.free(1, 0, 0)
    # Value order is exponent order, then mantissa order at equal exponents.
    parts: list[Node] = []
    e_lo = e_hi = None
    if low is not None and lo is not None:
        e_lo = low[1] + 1
        same = high is not None and high[1] == low[1]
        tight_hi = (high[0], hi[1]) if same and high is not None and hi is not None else None
        parts.append(block(_MANTISSA.walk(1, 0, 0, (low[0], lo[1]), tight_hi), low[1], low[1]))
        if same:
            return parts[0]
    if high is not None and hi is not None:
        e_hi = high[1] - 1
        if low is not None and low[1] > high[1]:
            return NOTHING
        parts.append(block(_MANTISSA.walk(1, 0, 0, None, (high[0], hi[1])), high[1], high[1]))
    parts.append(block(any_mantissa, e_lo, e_hi))
    return _alt(*parts)


# ---------------------------------------------------------------- the public function


def _fraction(value: Decimal, keyword: str) -> Fraction:
    if not value.is_finite():
        raise ValueError(f"{keyword} must be finite, not {value}")
    if value:
        _, digits, exp = value.as_tuple()
        assert isinstance(exp, int)
        width = max(len(digits) + exp, 1) + max(-exp, 0)
        if width > MAX_BOUND_DIGITS:
            raise UnsupportedSchemaError(
                f"{value} has {width} digits written out; at most {MAX_BOUND_DIGITS} are supported", keyword=keyword
            )
    return Fraction(value)


def _step(integer: bool, multiple_of: Decimal | None) -> tuple[Fraction | None, int | None, int]:
    """The grid the values lie on (None: none), the fraction digit limit and ``n``."""
    if multiple_of is None:
        return (Fraction(1), 0, 1) if integer else (None, None, 1)
    if not multiple_of.is_finite() or multiple_of <= 0:
        raise UnsupportedSchemaError(f"must be a positive number, not {multiple_of}", keyword="multipleOf")
    m = Fraction(multiple_of)
    if integer:
        m = Fraction(m.numerator)  # x integral: p/q divides x iff p does
    if m.denominator == 1:
        n = m.numerator
        j = _suffix_exponent(n)
        if j is None:
            raise UnsupportedSchemaError(
                f"{multiple_of}: only integers 2**a * 5**b (decided by the last digits) are supported",
                keyword="multipleOf",
            )
        if 10**j // n > MAX_SUFFIXES:
            raise UnsupportedSchemaError(
                f"{multiple_of}: the multiples among {j}-digit endings are too many ({10**j // n}) for an exact tree",
                keyword="multipleOf",
            )
        return m, 0, n
    k = len(str(m.denominator)) - 1
    if m.numerator != 1 or m.denominator != 10**k:
        raise UnsupportedSchemaError(
            f"{multiple_of}: for numbers only 10**-k (0.1, 0.01, ...) and integers 2**a * 5**b are supported",
            keyword="multipleOf",
        )
    return m, k, 1


def number_tree(
    *,
    integer: bool,
    minimum: Decimal | None = None,
    maximum: Decimal | None = None,
    exclusive_minimum: bool = False,
    exclusive_maximum: bool = False,
    multiple_of: Decimal | None = None,
) -> Node:
    """The tree of JSON number texts whose value satisfies the keywords (module notes:
    what is exact, what is refused, what raises).

    ``integer``: JSON Schema's ``"type": "integer"`` (values with no fractional part,
    ``3.0`` included) rather than ``"number"``; ``minimum`` / ``maximum``: bounds,
    exclusive when the flag says so; ``multiple_of``: the ``multipleOf`` keyword.
    Returns ``NOTHING`` when no value qualifies.
    """
    step, limit, n = _step(integer, multiple_of)
    lo = (
        None
        if minimum is None
        else (_fraction(minimum, "exclusiveMinimum" if exclusive_minimum else "minimum"), exclusive_minimum)
    )
    hi = (
        None
        if maximum is None
        else (_fraction(maximum, "exclusiveMaximum" if exclusive_maximum else "maximum"), exclusive_maximum)
    )
    if step is not None:
        # Round the bounds inward to the grid; exclusive ones step past themselves.
        if lo is not None:
            q = lo[0] / step
            lo = ((floor(q) + 1 if lo[1] else ceil(q)) * step, False)
        if hi is not None:
            q = hi[0] / step
            hi = ((ceil(q) - 1 if hi[1] else floor(q)) * step, False)
    if n > 1 and any(b is not None and abs(b[0]) >= 10**MAX_MODULAR_DIGITS for b in (lo, hi)):
        # The automaton would count the digits and track the suffix at once.
        raise UnsupportedSchemaError(
            f"multipleOf {multiple_of} with a bound of more than {MAX_MODULAR_DIGITS} integer digits is not supported",
            keyword="multipleOf",
        )
    if lo is not None and hi is not None and (lo[0] > hi[0] or (lo[0] == hi[0] and (lo[1] or hi[1]))):
        return NOTHING
    digits = _Digits(frac=True, limit=limit, n=n)
    exponents = "none" if integer else ("full" if multiple_of is None else "zero")

    def side(mlo: _Bound | None, mhi: _Bound | None) -> Node:
        # Unsigned texts with magnitude in range; mlo None: >= 0.
        plain = digits.between(mlo, mhi)
        if exponents == "none":
            return plain
        zero = _cat(digits.between(None, (Fraction(0), False)), _E, _int_text(None, None)) if mlo is None else NOTHING
        if exponents == "zero":
            return _alt(plain, zero)
        if mhi is None and (mlo is None or mlo[0] == 0):
            # >= 0 or > 0 and no upper bound: any exponent keeps the sign.
            return _alt(plain, _cat(plain, _E, _int_text(None, None)))
        return _alt(plain, _exponent_texts(mlo, mhi), zero)

    parts: list[Node] = []
    # Non-negative texts: magnitude = value.
    if hi is None or hi[0] > 0 or (hi[0] == 0 and not hi[1]):
        mlo = None if lo is None or lo[0] < 0 or (lo[0] == 0 and not lo[1]) else lo
        parts.append(side(mlo, hi))
    # Texts with "-": magnitude = -value ("-0" is 0), so the bounds swap.
    if lo is None or lo[0] < 0 or (lo[0] == 0 and not lo[1]):
        nlo = None if hi is None or hi[0] > 0 or (hi[0] == 0 and not hi[1]) else (-hi[0], hi[1])
        nhi = None if lo is None else (-lo[0], lo[1])
        parts.append(_cat(_MINUS, side(nlo, nhi)))
    return _alt(*parts)

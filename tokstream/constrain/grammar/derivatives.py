"""Regex trees as hash-consed expressions, and their derivatives: the lazy DFA's states.

A lexeme's automaton is not built; its states are *expressions* (Brzozowski): the
state after reading text ``w`` is the derivative of the lexeme by ``w``, the strings
``x`` such that ``w + x`` matches. ``Exprs`` holds them hash-consed, one integer id
per distinct expression (``NOTHING`` 0, ``EMPTY`` 1), in a canonical form that
makes equal languages meet often:

- ``cat(h, t)`` is a right-nested pair (so a derivative shares the tail it does not
  touch), with the empty string and the empty language absorbed;
- ``alt(xs)`` is flat, sorted and without duplicates or ``NOTHING`` (associative,
  commutative, idempotent);
- ``rep(x, lo, hi)`` is a counter, never unrolled: the derivative of ``x{3,5}`` is
  ``x' x{2,4}``, so ``{0,1000}`` costs one expression per count *reached*, not a
  thousand copies up front; a nullable ``x`` has ``lo`` 0 (the empty copies pad);
- a ``Machine`` (``nodes``) is one expression per machine state, unfolded into the
  alternatives of its edges only when a derivative reaches it.

With these rules an expression is ``NOTHING`` if and only if its language is empty
(every ``Chars`` kept is non-empty, each rule keeps non-empty parts non-empty, and
the machines are pruned to their live states), so every state the DFA makes is
live: a walk that stays off ``NOTHING`` is a prefix of some match, which the exact
masks rest on.

A state's transitions (``Exprs.moves``): the code points are cut where a ``Chars`` in
the expression's *front* (what its first character can be read by) starts or ends;
one derivative per piece that some front set holds, pieces grouped by the
derivative they give. Derivatives are memoised per (expression, code point).

Cost: interning a tree is linear in its distinct nodes (shared subtrees once); a
state's expansion is linear in its front and in the part of the expression its
derivatives rebuild. ``fuel`` counts that work, and ``MAX_FUEL`` bounds it per state
(``UnsupportedGrammarError`` naming ``(size)``), as the expression count
bounds the memory.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from typing import Final

from ...errors import UnsupportedGrammarError
from .charset import Ranges
from .charset import intersect as intersect_ranges
from .nodes import Alt, Chars, Concat, Machine, Node, Repeat

__all__ = ["EMPTY_ID", "MAX_EXPRS", "MAX_FUEL", "NOTHING_ID", "Exprs"]


def _covers(spans: list[list[tuple[int, int]]], ranges: Ranges) -> bool:
    """Whether the union of ``spans`` holds every code point of ``ranges``."""
    merged = sorted(r for group in spans for r in group)
    for lo, hi in ranges:
        cur = lo
        for a, b in merged:
            if a <= cur <= b:
                cur = b + 1
            if cur > hi:
                break
        if cur <= hi:
            return False
    return True


def _children(node: Node) -> tuple[Node, ...]:
    """A tree node's subtrees."""
    if isinstance(node, Chars):
        return ()
    if isinstance(node, Repeat):
        return (node.item,)
    if isinstance(node, Machine):
        return tuple(tree for row in node.edges for tree, _ in row)
    return node.items


NOTHING_ID: Final = 0
EMPTY_ID: Final = 1
#: Expressions one automaton may hold (~200 bytes each with their memos).
MAX_EXPRS: Final = 2_000_000
#: Work units (derivative steps and alternatives flattened) one state's expansion may
#: take: ~0.3 s. A state is made lazily, so this bounds every mask and step, not just
#: compile: ``a?a?...a?aa...a`` spelled out (no counter) reaches states whose
#: derivatives rebuild thousands of alternatives each, and is refused here.
MAX_FUEL: Final = 300_000

# Expression kinds.
_EMPTY, _CHARS, _CAT, _ALT, _REP, _MACH = range(6)


class Exprs:
    """The hash-consed expressions of one automaton (module notes). ``intern(tree)``
    gives a tree's id; ``moves(e)`` its transitions by code-point ranges;
    ``nullable[e]`` whether it matches the empty string. ``what`` names the
    automaton in a ``(size)`` refusal."""

    def __init__(self, alphabet: Ranges | None = None, what: str = "the expression") -> None:
        self.alphabet = alphabet
        self.what = what
        self.kind: list[int] = [_CHARS, _EMPTY]
        self.args: list[tuple[object, ...]] = [((),), ()]
        self.nullable: list[bool] = [False, True]
        self._ids: dict[tuple[object, ...], int] = {(_CHARS, ()): NOTHING_ID, (_CAT,): EMPTY_ID}
        self._deriv: dict[tuple[int, int], int] = {}
        # Fronts as sorted tuples, not frozensets: the garbage collector stops tracking
        # tuples of ints, and a large schema's expressions keep tens of thousands.
        self._front: dict[int, tuple[Ranges, ...]] = {}
        self._body: dict[tuple[int, Ranges], int] = {}
        # Machines: per machine, per state, its unfolded expression (or None).
        self._machines: list[tuple[Machine, list[int | None], list[bool]]] = []
        self._machine_no: dict[int, int] = {}
        self._interned: dict[int, int] = {}  # id(tree node) -> expression (trees stay alive)
        self._keep: list[Node] = []
        self.fuel = 0
        self._budgeted = False
        #: Held while interning and expanding (``automaton.Dfa.expand``): the store is
        #: written then, and several automata of one grammar may share it.
        self.lock = threading.RLock()

    # ------------------------------------------------------------ construction

    def _make(self, key: tuple[object, ...], kind: int, args: tuple[object, ...], nullable: bool) -> int:
        found = self._ids.get(key)
        if found is None:
            found = self._ids[key] = len(self.kind)
            if found >= MAX_EXPRS:
                raise UnsupportedGrammarError(
                    f"(size) {self.what} needs more than {MAX_EXPRS} automaton expressions for the text read "
                    "so far; bound its repetitions less or simplify it"
                )
            self.kind.append(kind)
            self.args.append(args)
            self.nullable.append(nullable)
        return found

    def chars(self, ranges: Ranges) -> int:
        """One character of ``ranges`` (restricted to the alphabet)."""
        if self.alphabet is not None:
            ranges = intersect_ranges(ranges, self.alphabet)
        if not ranges:
            return NOTHING_ID
        return self._make((_CHARS, ranges), _CHARS, (ranges,), False)

    def cat(self, a: int, b: int) -> int:
        """``a`` then ``b``."""
        if a == NOTHING_ID or b == NOTHING_ID:
            return NOTHING_ID
        if a == EMPTY_ID:
            return b
        if b == EMPTY_ID:
            return a
        if self.kind[a] == _CAT:
            # Right-nested: (h t) b = h (t b), iteratively (chains can be long).
            heads: list[int] = []
            while self.kind[a] == _CAT:
                h, t = self.args[a]
                assert isinstance(h, int) and isinstance(t, int)
                heads.append(h)
                a = t
            out = self.cat(a, b)
            for h in reversed(heads):
                out = self._pair(h, out)
            return out
        return self._pair(a, b)

    def _pair(self, h: int, t: int) -> int:
        # h is not a CAT, neither is NOTHING/EMPTY (t may be EMPTY only via cat's guard).
        if t == EMPTY_ID:
            return h
        if t == NOTHING_ID:
            return NOTHING_ID
        return self._make((_CAT, h, t), _CAT, (h, t), self.nullable[h] and self.nullable[t])

    def alt(self, items: list[int]) -> int:
        """Any one of ``items``."""
        flat: set[int] = set()
        for x in items:
            if x == NOTHING_ID:
                continue
            if self.kind[x] == _ALT:
                flat.update(self.args[x][0])  # type: ignore[arg-type]
            else:
                flat.add(x)
        if not flat:
            return NOTHING_ID
        if len(flat) == 1:
            return next(iter(flat))
        self._spend(len(flat))
        if EMPTY_ID in flat and any(self.nullable[x] for x in flat if x != EMPTY_ID):
            flat.discard(EMPTY_ID)  # another alternative matches the empty string
            if len(flat) == 1:
                return next(iter(flat))
        key = tuple(sorted(flat))
        return self._make((_ALT, key), _ALT, (key,), any(self.nullable[x] for x in key))

    def rep(self, x: int, lo: int, hi: int | None) -> int:
        """``lo`` to ``hi`` copies of ``x`` (``hi`` None: no bound)."""
        if hi is not None and hi == 0:
            return EMPTY_ID
        if x == EMPTY_ID:
            return EMPTY_ID
        if x == NOTHING_ID:
            return EMPTY_ID if lo == 0 else NOTHING_ID
        if self.nullable[x]:
            lo = 0  # empty copies pad up to lo
        if lo == 1 and hi == 1:
            return x
        return self._make((_REP, x, lo, hi), _REP, (x, lo, hi), lo == 0 or self.nullable[x])

    def intern(self, tree: Node) -> int:
        """The expression of a regex tree (shared subtrees interned once). Iterative,
        children first, so a deeply nested tree costs no Python recursion."""
        memo = self._interned
        found = memo.get(id(tree))
        if found is not None:
            return found
        stack: list[tuple[Node, bool]] = [(tree, False)]
        while stack:
            node, ready = stack.pop()
            if id(node) in memo:
                continue
            if not ready:
                stack.append((node, True))
                stack.extend((child, False) for child in _children(node) if id(child) not in memo)
                continue
            e: int
            if isinstance(node, Chars):
                e = self.chars(node.ranges)
            elif isinstance(node, Concat):
                e = EMPTY_ID
                for item in reversed(node.items):
                    e = self.cat(memo[id(item)], e)
            elif isinstance(node, Alt):
                e = self.alt([memo[id(item)] for item in node.items])
            elif isinstance(node, Repeat):
                if node.max is not None and node.max < node.min:
                    e = NOTHING_ID
                else:
                    e = self.rep(memo[id(node.item)], node.min, node.max)
            elif isinstance(node, Machine):
                e = self._machine(node)
            else:  # pragma: no cover - a caller bug
                raise TypeError(f"not a regex tree node: {node!r}")
            self._keep.append(node)
            memo[id(node)] = e
        return memo[id(tree)]

    def _machine(self, m: Machine) -> int:
        """The expression of machine ``m`` at its start state. Its edges' trees are
        interned now; states from which no accepting state is reachable (through
        edges whose trees match something) are dropped, so each state left is live."""
        n = len(m.accepting)
        edges = [[(self.intern(tree), t) for tree, t in row] for row in m.edges]
        # Backwards from the accepting states, once over the reversed edges: live
        # states reach acceptance through edges that read something; nullable ones
        # through edges whose trees match the empty string.
        back: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        for s, row in enumerate(edges):
            for e, t in row:
                if e != NOTHING_ID:
                    back[t].append((s, e))
        live = [bool(a) for a in m.accepting]
        stack = [s for s in range(n) if live[s]]
        while stack:
            for s, _ in back[stack.pop()]:
                if not live[s]:
                    live[s] = True
                    stack.append(s)
        if not live[0]:
            return NOTHING_ID
        null = [bool(a) for a in m.accepting]
        stack = [s for s in range(n) if null[s]]
        while stack:
            for s, e in back[stack.pop()]:
                if not null[s] and self.nullable[e]:
                    null[s] = True
                    stack.append(s)
        k = len(self._machines)
        pruned = tuple(
            tuple((tree, t) for (tree, t), (e, _) in zip(m.edges[s], edges[s]) if e != NOTHING_ID and live[t])
            for s in range(n)
        )
        unfolded: list[int | None] = [None] * n
        self._machines.append((Machine(pruned, m.accepting), unfolded, null))
        self._keep.append(m)
        return self._machine_state(k, 0)

    def _machine_state(self, k: int, s: int) -> int:
        null = self._machines[k][2]
        return self._make((_MACH, k, s), _MACH, (k, s), null[s])

    def _unfold(self, e: int) -> int:
        """A machine state's expression as the alternatives of its edges (memoised)."""
        k, s = self.args[e]
        assert isinstance(k, int) and isinstance(s, int)
        m, unfolded, _ = self._machines[k]
        found = unfolded[s]
        if found is None:
            alts = [self.cat(self.intern(tree), self._machine_state(k, t)) for tree, t in m.edges[s]]
            if m.accepting[s]:
                alts.append(EMPTY_ID)
            found = unfolded[s] = self.alt(alts)
        return found

    # ------------------------------------------------------------ derivatives

    def deriv(self, e: int, c: int) -> int:
        """The derivative of ``e`` by code point ``c``. Iterative, the parts an
        expression needs first (``_needs``): a machine's chain of states joined by
        edges that match the empty string (an object's optional properties) is as
        long as the machine, so recursion would hit Python's limit."""
        memo = self._deriv
        found = memo.get((e, c))
        if found is not None:
            return found
        if self.kind[e] <= _CHARS:  # a leaf (``_CHARS`` or ``_EMPTY``): nothing needed first
            self._spend(1)
            out = memo[(e, c)] = self._deriv_of(e, c)
            return out
        stack = [e]
        expanding: set[int] = set()
        while stack:
            x = stack[-1]
            if (x, c) in memo:
                stack.pop()
                continue
            need = [d for d in self._needs(x) if (d, c) not in memo]
            if need:
                self._expanding(x, expanding)
                stack.extend(need)
                continue
            self._spend(1)
            memo[(x, c)] = self._deriv_of(x, c)
            stack.pop()
        return memo[(e, c)]

    def _expanding(self, x: int, expanding: set[int]) -> None:
        """Note that ``x``'s needed parts are being made. Made depth first, they are
        all done when ``x`` is on top again, unless one needs ``x`` itself: a loop
        through parts that match the empty string, which no derivative can end."""
        if x in expanding:
            raise UnsupportedGrammarError(f"(size) {self.what}: a loop of parts that all match the empty string")
        expanding.add(x)

    def _needs(self, e: int) -> list[int]:
        """The expressions whose derivatives and fronts ``e``'s are made of: a
        chain's heads up to its first non-nullable one (and its last tail when every
        head is nullable), an alternation's items, a counter's item, a machine
        state's unfolding."""
        kind = self.kind[e]
        if kind == _CAT:
            out: list[int] = []
            cur = e
            while self.kind[cur] == _CAT:
                h, t = self.args[cur]
                assert isinstance(h, int) and isinstance(t, int)
                out.append(h)
                if not self.nullable[h]:
                    return out
                cur = t
            out.append(cur)
            return out
        if kind == _ALT:
            (items,) = self.args[e]
            assert isinstance(items, tuple)
            return list(items)
        if kind == _REP:
            return [self.args[e][0]]  # type: ignore[list-item]
        if kind == _MACH:
            return [self._unfold(e)]
        return []

    def _deriv_of(self, e: int, c: int) -> int:
        """``deriv(e, c)`` from the derivatives of ``_needs(e)``, which are memoised."""
        memo = self._deriv
        kind = self.kind[e]
        if kind == _EMPTY:
            return NOTHING_ID
        if kind == _CHARS:
            (ranges,) = self.args[e]
            assert isinstance(ranges, tuple)
            i = bisect_right(ranges, (c, 0x110000)) - 1
            return EMPTY_ID if i >= 0 and ranges[i][0] <= c <= ranges[i][1] else NOTHING_ID
        if kind == _CAT:
            # Along the chain while the heads are nullable.
            alts: list[int] = []
            cur = e
            while True:
                if self.kind[cur] != _CAT:
                    alts.append(memo[(cur, c)])
                    break
                h, t = self.args[cur]
                assert isinstance(h, int) and isinstance(t, int)
                alts.append(self.cat(memo[(h, c)], t))
                self._spend(1)
                if not self.nullable[h]:
                    break
                cur = t
            return self.alt(alts)
        if kind == _ALT:
            (items,) = self.args[e]
            assert isinstance(items, tuple)
            return self.alt([memo[(x, c)] for x in items])
        if kind == _REP:
            x, lo, hi = self.args[e]
            assert isinstance(x, int) and isinstance(lo, int)
            rest = self.rep(x, max(lo - 1, 0), None if hi is None else hi - 1)  # type: ignore[operator]
            return self.cat(memo[(x, c)], rest)
        return memo[(self._unfold(e), c)]

    def front(self, e: int) -> tuple[Ranges, ...]:
        """The character sets the first character of ``e`` can be read by (iterative,
        as ``deriv``)."""
        memo = self._front
        found = memo.get(e)
        if found is not None:
            return found
        stack = [e]
        expanding: set[int] = set()
        while stack:
            x = stack[-1]
            if x in memo:
                stack.pop()
                continue
            kind = self.kind[x]
            if kind == _CHARS:
                ranges = self.args[x][0]
                assert isinstance(ranges, tuple)
                memo[x] = (ranges,)
                stack.pop()
                continue
            parts = self._needs(x)
            need = [d for d in parts if d not in memo]
            if need:
                self._expanding(x, expanding)
                stack.extend(need)
                continue
            self.fuel += 1
            if kind == _CAT:
                self._spend(len(parts))
            # The union of the parts' fronts (for a chain: its nullable heads and the
            # first one that is not).
            if len(parts) == 1:
                memo[x] = memo[parts[0]]
            else:
                acc: set[Ranges] = set()
                for d in parts:
                    acc.update(memo[d])
                memo[x] = tuple(sorted(acc))
            stack.pop()
        return memo[e]

    def _spend(self, units: int) -> None:
        # Only a state's expansion is budgeted (``moves``); interning is linear in
        # the tree the caller gave.
        self.fuel += units
        if self.fuel > MAX_FUEL and self._budgeted:
            self.fuel = 0
            raise UnsupportedGrammarError(
                f"(size) {self.what}: one automaton state took more than {MAX_FUEL} derivative steps "
                "(long runs of optional or overlapping items without a counter, or deep alternations of "
                "them); write the run as a counted repetition such as a{0,n} or simplify"
            )

    def body_limit(self, e: int, body: Ranges) -> int | None:
        """How many characters of ``body`` ``e`` reads as a plain run before anything
        else can come, when it is ``rep(x, lo, hi) t`` with every character of
        ``body`` a whole string of ``x`` and ``t`` neither nullable nor starting with
        one: then every string of ``body`` of at most ``hi`` characters leads to a
        live, non-accepting state (``walker``'s slices rest on this), and a longer
        one to a dead state. ``hi`` (``1 << 30`` for no bound), or None."""
        found = self._body.get((e, body))
        if found is not None:
            return found if found >= 0 else None
        out = -1
        if self.kind[e] == _CAT:
            h, t = self.args[e]
            assert isinstance(h, int) and isinstance(t, int)
            if self.kind[h] == _REP and not self.nullable[t]:
                x, _, hi = self.args[h]
                assert isinstance(x, int)
                clear = all(not intersect_ranges(r, body) for r in self.front(t))
                if clear and _covers([spans for d, spans in self.moves(x) if d == EMPTY_ID], body):
                    out = (1 << 30) if hi is None else int(hi)  # type: ignore[call-overload]
        self._body[(e, body)] = out
        return out if out >= 0 else None

    def moves(self, e: int) -> list[tuple[int, list[tuple[int, int]]]]:
        """The transitions of ``e``: ``(derivative, code-point ranges)`` per distinct
        derivative other than ``NOTHING`` (module notes). Budgeted (``MAX_FUEL``)."""
        self.fuel = 0
        self._budgeted = True
        try:
            return self._moves(e)
        finally:
            self._budgeted = False

    def _moves(self, e: int) -> list[tuple[int, list[tuple[int, int]]]]:
        front = self.front(e)
        cuts: set[int] = set()
        for ranges in front:
            for lo, hi in ranges:
                cuts.add(lo)
                cuts.add(hi + 1)
        points = sorted(cuts)
        # Coverage of each elementary piece [points[i], points[i+1]) by some front set.
        delta = dict.fromkeys(points, 0)
        for ranges in front:
            for lo, hi in ranges:
                delta[lo] += 1
                delta[hi + 1] -= 1
        by_target: dict[int, list[tuple[int, int]]] = {}
        depth = 0
        for a, b in zip(points, points[1:]):
            depth += delta[a]
            if depth <= 0:
                continue
            d = self.deriv(e, a)
            if d != NOTHING_ID:
                spans = by_target.setdefault(d, [])
                if spans and spans[-1][1] == a - 1:
                    spans[-1] = (spans[-1][0], b - 1)
                else:
                    spans.append((a, b - 1))
        return list(by_target.items())

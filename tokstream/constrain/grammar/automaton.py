"""A regex tree (``nodes``) as a byte-level DFA over UTF-8, built lazily, live states only.

``compile_dfa(tree, alphabet)`` interns the tree as a hash-consed expression
(``derivatives``: counters, not unrolled copies) and makes one state, the start. A
state is *expanded* (its row of 256 next states computed) when a walk or a parser
step first reads it (``Dfa.expand``, ``Dfa.walk_arrays``):

1. *Characters.* The expression's derivatives by the pieces of its front
   (``Exprs.moves``): one per distinct next expression, with the code-point ranges
   leading there; each next expression is a state (made, not yet expanded).
2. *Bytes.* Each range set becomes the UTF-8 byte sequences of its code points
   (``utf8_sequences``), merged into a byte trie per state whose inner nodes are
   states shared across the automaton when they lead the same tails to the same
   targets (hash-consed), so a run of continuation bytes ``80-BF`` is one state
   whatever the character state. Inner states are made expanded.

``Dfa``: ``0`` the start; ``rows[s][b]`` the next state or ``-1`` (dead);
``accepting[s]``. Every state is live (``derivatives``: an expression is NOTHING
exactly when its language is empty), and every path spells valid UTF-8, so a token
walk that stays off ``-1`` is exactly "a valid prefix of some match".

Cost: compile is the interning, linear in the tree's distinct nodes; a state's
expansion is one derivative per piece of its front (a few microseconds each) plus
its bytes. Only the states walks reach are made: ``(a|b)*a(a|b){20}`` compiles in
microseconds though its full DFA has 2**20 states. Bounds, each an
``UnsupportedGrammarError`` naming ``(size)``: ``MAX_STATES`` states per automaton,
and the expressions' count and derivative steps (``derivatives``). Memory per state:
the walk table's row (256 intp, 2 KB), the row list and its moves.

``compile_dfa_eager`` is the automaton the engine had before: a Thompson NFA over
character classes, subset construction of every reachable set, pruning, then bytes.
It stays as the tests' oracle (``tests/constrain/test_grammar_lazy.py``) and builds
the intersections and differences of ``intersect`` / ``difference``.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from ...errors import UnsupportedGrammarError
from . import charset
from .charset import Ranges, normalize
from .charset import intersect as intersect_ranges
from .derivatives import NOTHING_ID, Exprs
from .nodes import Alt, Chars, Concat, Machine, Node, Repeat

__all__ = [
    "MAX_STATES",
    "Dfa",
    "char_sets",
    "compile_dfa",
    "compile_dfa_eager",
    "difference",
    "intersect",
    "is_empty",
    "utf8_sequences",
]

#: Bound on the DFA states a terminal reaches (lazily), and on the eager oracle's
#: NFA and DFA states.
MAX_STATES = 50_000

#: The UTF-8 encoding lengths' code-point bounds (surrogates are never in a Chars).
_LENGTH_BOUNDS = ((0, 0x7F), (0x80, 0x7FF), (0x800, 0xFFFF), (0x10000, 0x10FFFF))


class _Pending:
    """The row of a state not expanded yet: reading it expands the state
    (``Dfa.expand``), which puts the real row in its place in ``Dfa.rows``, so only
    the first read of a state costs more than a list index."""

    __slots__ = ("dfa", "state")

    def __init__(self, dfa: Dfa, state: int) -> None:
        self.dfa = dfa
        self.state = state

    def __getitem__(self, byte: int) -> int:
        return self.dfa.expand(self.state)[byte]

    def __iter__(self) -> Iterator[int]:
        return iter(self.dfa.expand(self.state))

    def __len__(self) -> int:
        return 256


class _PendingMoves:
    """``Dfa.moves`` of a state not expanded yet (``_Pending``'s twin)."""

    __slots__ = ("dfa", "state")

    def __init__(self, dfa: Dfa, state: int) -> None:
        self.dfa = dfa
        self.state = state

    def _real(self) -> tuple[tuple[int, int], ...]:
        self.dfa.expand(self.state)
        found = self.dfa.moves[self.state]
        assert isinstance(found, tuple)
        return found

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return iter(self._real())

    def __len__(self) -> int:
        return len(self._real())


#: A state's row: the next state per byte (-1 dead), or a placeholder until expanded.
Row = tuple[int, ...] | _Pending
#: A state's non-dead ``(byte, next state)`` pairs, or a placeholder until expanded.
Moves = tuple[tuple[int, int], ...] | _PendingMoves


class Dfa:
    """A byte-level DFA (module notes) whose states are made when first reached.

    ``rows[s][b]`` is the next state or ``-1`` (dead); ``accepting[s]``; ``moves[s]``
    the non-dead ``(byte, next)`` pairs. A state exists (has an id) once a transition
    to it is known, and is *expanded* (its row computed) when a row or a walk first
    reads it: ``expand``. Every state that exists is live. ``walk_arrays`` gives the
    numpy walks (``walker``) the same table, one-offset with ``0`` the dead state.
    Expansion takes a lock, so threads may share the automaton; what it builds is
    only ever appended, so readers need none."""

    def __init__(self, source: _Source | None, n_hint: int = 16) -> None:
        self.rows: list[Row] = []
        self.accepting: list[bool] = []
        self.moves: list[Moves] = []
        self._source = source
        # The expression store's lock when there is one: automata sharing a store
        # expand under one lock, since expansion writes the store.
        self._lock = source.exprs.lock if source is not None else threading.RLock()
        cap = max(16, n_hint + 1)
        # One generation of the walk arrays, swapped whole when it grows (a reader
        # holding the old one still sees every row it was built with).
        self._gen: tuple[npt.NDArray[np.intp], npt.NDArray[np.bool_], npt.NDArray[np.bool_]] = (
            np.zeros(cap * 256, dtype=np.intp),
            np.zeros(cap, dtype=np.bool_),
            np.zeros(cap, dtype=np.bool_),
        )
        self._gen[1][0] = True  # the dead state's row (all zeros) is final
        self._inner: dict[_Tails, int] = {}
        # Inner states made but not expanded: their tails, read when a walk reaches them.
        self._inner_tails: dict[int, _Tails] = {}

    @classmethod
    def from_rows(cls, rows: Sequence[Sequence[int]], accepting: Sequence[bool]) -> Dfa:
        """A DFA given whole: every state's row (all states live)."""
        dfa = cls(None, len(rows))
        for a in accepting:
            dfa._add(bool(a))
        for s, row in enumerate(rows):
            dfa._set_row(s, list(row))
        return dfa

    @property
    def n_states(self) -> int:
        """How many states exist so far (all live)."""
        return len(self.rows)

    @property
    def nullable(self) -> bool:
        """Whether the empty string matches."""
        return self.accepting[0]

    @property
    def accepting_list(self) -> list[bool]:
        """``accepting`` (a list already; kept for the walker's reads)."""
        return self.accepting

    def matches(self, text: str) -> bool:
        """Whether the whole of ``text`` is a string of the DFA."""
        state = self.run(0, text.encode("utf-8", "surrogatepass"))
        return state >= 0 and self.accepting[state]

    def run(self, state: int, data: bytes) -> int:
        """The state after ``data`` from ``state`` (-1: dead)."""
        rows = self.rows
        for b in data:
            state = rows[state][b]
            if state < 0:
                return -1
        return state

    def body_limit(self, state: int, body: Ranges) -> int | None:
        """``derivatives.Exprs.body_limit`` of a boundary state's expression (None for
        a state inside a character or a DFA given whole)."""
        src = self._source
        if src is None or state >= len(src.expr_of) or src.expr_of[state] < 0:
            return None
        with self._lock:
            return src.exprs.body_limit(src.expr_of[state], body)

    def expand_all(self) -> None:
        """Expand every reachable state (tests and the eager oracle's comparisons)."""
        s = 0
        while s < len(self.rows):
            self.expand(s)
            s += 1

    def walk_arrays(self, states: npt.NDArray[np.intp]) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.bool_]]:
        """The one-offset walk table and accepting flags (``table[(s+1)*256 + b]`` is
        the next state plus one, ``0`` dead; ``accepting[s + 1]``), with every state of
        ``states`` (one-offset, as a walk holds them) expanded first."""
        table, expanded, acc = self._gen
        if not expanded[states].all():
            for s in np.unique(states[~expanded[states]]).tolist():
                self.expand(s - 1)
            table, expanded, acc = self._gen
        return table, acc

    def walk_tables(self) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
        """The current one-offset walk table, its ``expanded`` flags and ``accepting``
        flags (``walk_arrays``' layout), as they are: rows not expanded yet read as
        dead, so a reader checks ``expanded`` first (the compiled walk does)."""
        return self._gen

    def expand(self, state: int) -> tuple[int, ...]:
        """The row of ``state``, computed (and its targets made) if it is new."""
        row = self.rows[state]
        if not isinstance(row, _Pending):
            return row
        with self._lock:
            row = self.rows[state]
            if not isinstance(row, _Pending):
                return row
            tails = self._inner_tails.pop(state, None)
            if tails is not None:
                out = [-1] * 256
                _fill_row(self, out, tails)
            else:
                assert self._source is not None  # a DFA given whole has every row
                out = self._source.expand(self, state)
            return self._set_row(state, out)

    def _add(self, accepting: bool) -> int:
        """A new state, not expanded (under the lock)."""
        s = len(self.rows)
        table, expanded, acc = self._gen
        if s + 2 > len(expanded):
            cap = 2 * len(expanded)
            t2 = np.zeros(cap * 256, dtype=np.intp)
            t2[: len(table)] = table
            e2 = np.zeros(cap, dtype=np.bool_)
            e2[: len(expanded)] = expanded
            a2 = np.zeros(cap, dtype=np.bool_)
            a2[: len(acc)] = acc
            table, expanded, acc = self._gen = (t2, e2, a2)
        acc[s + 1] = accepting
        self.accepting.append(accepting)
        self.moves.append(_PendingMoves(self, s))
        self.rows.append(_Pending(self, s))
        return s

    def _set_row(self, s: int, row: list[int]) -> tuple[int, ...]:
        """Record state ``s``'s row (under the lock; its targets exist). Kept as a
        tuple: a tuple of ints is untracked by the cyclic GC, where a 256-item list
        per state made a full collection walk millions of items (0.3 s with 60
        grammars cached)."""
        table, expanded, _ = self._gen
        arr = np.asarray(row, dtype=np.intp)
        table[(s + 1) * 256 : (s + 2) * 256] = arr + 1
        # numpy picks the live bytes: ~5 us, where a Python pass over 256 took ~30 us.
        live = np.flatnonzero(arr >= 0)
        self.moves[s] = tuple(zip(live.tolist(), arr[live].tolist()))
        kept = self.rows[s] = tuple(row)
        expanded[s + 1] = True
        return kept

    def inner_state(self, tails: _Tails) -> int:
        """The state inside a character that must still read ``tails`` (byte-range
        sequences to their targets), shared by every state whose characters continue
        so (hash-consed: a run of ``80-BF`` bytes is one state). Its row is made when
        a walk first reads it (``expand``): most of a wide state's inner states (~7
        per target for a JSON string body) are never reached by a token."""
        found = self._inner.get(tails)
        if found is None:
            found = self._inner[tails] = self._add(False)
            self._inner_tails[found] = tails
        return found


class _Source:
    """Where a lazy ``Dfa``'s boundary states come from: expressions and their
    derivatives (``derivatives``), one state per distinct expression reached.
    Expanding a state is one derivative per piece of its front, then the bytes
    (``_fill_row``)."""

    def __init__(self, exprs: Exprs, what: str) -> None:
        self.exprs = exprs
        self.what = what
        self.ids: dict[int, int] = {}
        self.expr_of: list[int] = []  # per state: its expression (-1 for inner states)
        self.joined: dict[tuple[tuple[int, int], ...], tuple[Ranges, tuple[tuple[tuple[int, int], ...], ...]]] = {}

    def state_of(self, dfa: Dfa, e: int) -> int:
        """The boundary state of expression ``e`` (made if new; budgeted)."""
        found = self.ids.get(e)
        if found is None:
            if dfa.n_states >= MAX_STATES:
                raise UnsupportedGrammarError(
                    f"(size) {self.what} needs more than {MAX_STATES} automaton states for the text "
                    "read so far: counted repetitions of optional or overlapping parts multiply states; "
                    "bound them less or simplify"
                )
            found = self.ids[e] = dfa._add(self.exprs.nullable[e])
            while len(self.expr_of) <= found:
                self.expr_of.append(-1)
            self.expr_of[found] = e
        return found

    def expand(self, dfa: Dfa, state: int) -> list[int]:
        """The row of boundary state ``state`` (under the DFA's lock)."""
        e = self.expr_of[state]
        assert e >= 0
        row = [-1] * 256
        tails: list[tuple[tuple[tuple[int, int], ...], int]] = []
        for d, spans in self.exprs.moves(e):
            t = self.state_of(dfa, d)
            key = tuple(spans)
            found = self.joined.get(key)
            if found is None:
                ascii_part = tuple((lo, min(hi, 0x7F)) for lo, hi in key if lo <= 0x7F)
                wide = tuple((max(lo, 0x80), hi) for lo, hi in key if hi >= 0x80)
                found = self.joined[key] = (ascii_part, _sequences(wide))
            for lo, hi in found[0]:
                row[lo : hi + 1] = [t] * (hi + 1 - lo)
            tails.extend((seq, t) for seq in found[1])
        if tails:
            _fill_row(dfa, row, tails)
        return row


def _fill_row(dfa: Dfa, row: list[int], tails: Iterable[tuple[tuple[tuple[int, int], ...], int]]) -> None:
    """Write into ``row`` the first bytes of ``tails`` (byte-range sequences, each to
    its target): a sequence's last byte goes to its target, a longer one to the inner
    state of the tails it shares that byte with. The byte axis is cut where some first
    range starts or ends; the bytes of one piece lead to the same state."""
    tails = list(tails)
    cuts = {0, 256}
    for seq, _ in tails:
        cuts.add(seq[0][0])
        cuts.add(seq[0][1] + 1)
    edges = sorted(cuts)
    for a, b in zip(edges, edges[1:]):
        here = [(seq, t) for seq, t in tails if seq[0][0] <= a and b - 1 <= seq[0][1]]
        if not here:
            continue
        ends = [t for seq, t in here if len(seq) == 1]
        # A byte that ends a character: classes are disjoint, so one target.
        target = ends[0] if ends else dfa.inner_state(_tails(here))
        row[a:b] = [target] * (b - a)


def utf8_sequences(lo: int, hi: int) -> Iterator[tuple[tuple[int, int], ...]]:
    """The UTF-8 encodings of code points ``lo..hi`` (no surrogates inside) as byte-range
    sequences: each yielded tuple of ``(low, high)`` byte ranges matches exactly the
    encodings of a sub-range, and together they cover ``lo..hi``.

    >>> list(utf8_sequences(0x61, 0x7A))
    [((97, 122),)]
    >>> [tuple((hex(a), hex(b)) for a, b in s) for s in utf8_sequences(0x7F, 0x80)]
    [(('0x7f', '0x7f'),), (('0xc2', '0xc2'), ('0x80', '0x80'))]
    """
    for a, b in _LENGTH_BOUNDS:
        x, y = max(lo, a), min(hi, b)
        if x <= y:
            yield from _same_length(x, y)


def _same_length(lo: int, hi: int) -> Iterator[tuple[tuple[int, int], ...]]:
    """``utf8_sequences`` for code points of one encoded length: split until every
    byte position is a plain range (the lower bytes span all of ``80-BF`` wherever the
    upper ones differ)."""
    n = len(chr(lo).encode("utf-8"))
    for i in range(1, n):
        m = (1 << (6 * i)) - 1  # the code-point bits of the i trailing bytes
        if lo & ~m != hi & ~m:
            if lo & m:
                yield from _same_length(lo, lo | m)
                yield from _same_length((lo | m) + 1, hi)
                return
            if hi & m != m:
                yield from _same_length(lo, (hi & ~m) - 1)
                yield from _same_length(hi & ~m, hi)
                return
    a, b = chr(lo).encode("utf-8"), chr(hi).encode("utf-8")
    yield tuple(zip(a, b))


@lru_cache(maxsize=4096)
def _sequences(ranges: Ranges) -> tuple[tuple[tuple[int, int], ...], ...]:
    """All byte-range sequences of a code-point range set (cached: ``\\w`` recurs)."""
    return tuple(s for lo, hi in ranges for s in utf8_sequences(lo, hi))


class _Classes:
    """The partition of the code points into classes no set of the tree tells apart."""

    def __init__(self, sets: Sequence[Ranges]) -> None:
        cuts = {0, 0x110000}
        for ranges in sets:
            for lo, hi in ranges:
                cuts.add(lo)
                cuts.add(hi + 1)
        self.starts = sorted(cuts)
        # Each elementary interval's signature: which sets hold it.
        inside: list[list[int]] = [[] for _ in self.starts]
        for k, ranges in enumerate(sets):
            for lo, hi in ranges:
                a = bisect_right(self.starts, lo) - 1
                b = bisect_right(self.starts, hi) - 1
                for e in range(a, b + 1):
                    inside[e].append(k)
        ids: dict[tuple[int, ...], int] = {}
        self.of_interval = [ids.setdefault(tuple(sig), len(ids)) if sig else -1 for sig in inside]
        self.n = len(ids)
        # Per set: its class ids; per class: its code-point ranges.
        self.of_set: list[frozenset[int]] = [frozenset() for _ in sets]
        members: list[set[int]] = [set() for _ in sets]
        ranges_of: list[list[tuple[int, int]]] = [[] for _ in range(self.n)]
        for e, c in enumerate(self.of_interval):
            if c < 0 or e + 1 >= len(self.starts):
                continue
            ranges_of[c].append((self.starts[e], self.starts[e + 1] - 1))
            for k in inside[e]:
                members[k].add(c)
        self.of_set = [frozenset(m) for m in members]
        self.mask_of_set = [sum(1 << c for c in m) for m in members]
        self.ranges = [tuple(r) for r in ranges_of]
        self._bits: dict[int, tuple[int, ...]] = {}

    def bits(self, mask: int) -> tuple[int, ...]:
        """The class ids of a bit mask (cached: a DFA repeats a few masks)."""
        found = self._bits.get(mask)
        if found is None:
            out = []
            m = mask
            while m:
                low = m & -m
                out.append(low.bit_length() - 1)
                m ^= low
            found = self._bits[mask] = tuple(out)
        return found


class _Nfa:
    """Thompson NFA over class ids: ``eps[s]`` targets, ``edges[s]`` (classes, target)."""

    def __init__(self, classes: _Classes, set_index: dict[Ranges, int]) -> None:
        self.eps: list[list[int]] = []
        self.edges: list[list[tuple[int, int]]] = []  # (class bit mask, target)
        self.classes = classes
        self.set_index = set_index
        self._memo: dict[tuple[int, int], int] = {}

    def new(self) -> int:
        if len(self.eps) >= MAX_STATES:
            raise UnsupportedGrammarError(
                f"the expression needs more than {MAX_STATES} automaton states (large bounded repetitions "
                "nest multiplicatively); write the repetition with fewer copies or unbounded"
            )
        self.eps.append([])
        self.edges.append([])
        return len(self.eps) - 1

    def build(self, node: Node, end: int) -> int:
        """Add ``node`` leading to ``end``; return its start state. Built backwards so
        that a subtree object used twice before the same continuation (a compiler's
        shared suffix: JSON Schema's optional properties) is built once: memoised on
        ``(id(node), end)`` (the caller keeps the tree alive)."""
        key = (id(node), end)
        found = self._memo.get(key)
        if found is not None:
            return found
        if isinstance(node, Chars):
            start = self.new()
            mask = self.classes.mask_of_set[self.set_index[node.ranges]]
            if mask:
                self.edges[start].append((mask, end))
        elif isinstance(node, Concat):
            start = end
            for item in reversed(node.items):
                start = self.build(item, start)
        elif isinstance(node, Alt):
            start = self.new()
            for item in node.items:
                self.eps[start].append(self.build(item, end))
        elif isinstance(node, Machine):
            states = [self.new() for _ in node.accepting]
            for s, edges in enumerate(node.edges):
                for item, t in edges:
                    self.eps[states[s]].append(self.build(item, states[t]))
                if node.accepting[s]:
                    self.eps[states[s]].append(end)
            start = states[0]
        elif isinstance(node, Repeat):
            start = end
            if node.max is None:
                # A loop: start -> item -> back to start; exit from start.
                start = self.new()
                self.eps[start].append(end)
                self.eps[start].append(self.build(node.item, start))
            else:
                for _ in range(node.max - node.min):
                    # An optional copy: skip straight to the end, or one more item.
                    opt = self.new()
                    self.eps[opt].append(end)
                    self.eps[opt].append(self.build(node.item, start))
                    start = opt
            for _ in range(node.min):
                start = self.build(node.item, start)
        else:  # pragma: no cover - a caller bug
            raise TypeError(f"not a regex tree node: {node!r}")
        self._memo[key] = start
        return start

    def closure(self, states: set[int]) -> frozenset[int]:
        stack = list(states)
        seen = set(states)
        eps = self.eps
        while stack:
            for t in eps[stack.pop()]:
                if t not in seen:
                    seen.add(t)
                    stack.append(t)
        return frozenset(seen)


def _collect(node: Node, out: set[Ranges], seen: set[int] | None = None) -> None:
    if seen is None:
        seen = set()
    if id(node) in seen:  # a shared subtree: once (a compiler's DAG stays linear)
        return
    seen.add(id(node))
    if isinstance(node, Chars):
        out.add(node.ranges)
    elif isinstance(node, Repeat):
        _collect(node.item, out, seen)
    elif isinstance(node, Machine):
        for edges in node.edges:
            for item, _ in edges:
                _collect(item, out, seen)
    else:
        for item in node.items:
            _collect(item, out, seen)


def char_sets(tree: Node) -> set[Ranges]:
    """The character sets (``Chars`` ranges) a tree reads, each once."""
    out: set[Ranges] = set()
    _collect(tree, out)
    return out


def _restricted(node: Node, alphabet: Ranges | None, memo: dict[int, Node] | None = None) -> Node:
    if alphabet is None:
        return node
    if memo is None:
        memo = {}
    found = memo.get(id(node))
    if found is not None:  # shared subtrees stay shared (``_Nfa.build`` memoises on them)
        return found
    out: Node
    if isinstance(node, Chars):
        out = Chars(intersect_ranges(node.ranges, alphabet))
    elif isinstance(node, Repeat):
        out = Repeat(_restricted(node.item, alphabet, memo), node.min, node.max)
    elif isinstance(node, Concat):
        out = Concat(tuple(_restricted(i, alphabet, memo) for i in node.items))
    elif isinstance(node, Machine):
        edges = tuple(tuple((_restricted(i, alphabet, memo), t) for i, t in row) for row in node.edges)
        out = Machine(edges, node.accepting)
    else:
        out = Alt(tuple(_restricted(i, alphabet, memo) for i in node.items))
    memo[id(node)] = out
    return out


class _CharDfa:
    """A character-level DFA over the classes of ``classes``: ``rows[s]`` maps a
    class id to the next state (missing: dead), ``accepting[s]``; state 0 the start.
    Not pruned: a state may be dead (``live``)."""

    def __init__(self, rows: list[dict[int, int]], accepting: list[bool], classes: _Classes) -> None:
        self.rows = rows
        self.accepting = accepting
        self.classes = classes

    def live(self) -> list[bool]:
        """Per state: whether an accepting state is reachable (reverse search)."""
        back: list[list[int]] = [[] for _ in self.rows]
        for s, row in enumerate(self.rows):
            for t in set(row.values()):
                back[t].append(s)
        live = list(self.accepting)
        stack = [s for s, a in enumerate(self.accepting) if a]
        while stack:
            for p in back[stack.pop()]:
                if not live[p]:
                    live[p] = True
                    stack.append(p)
        return live

    def pruned(self) -> _CharDfa | None:
        """The same language over live states only (start kept 0); None if empty."""
        live = self.live()
        if not live[0]:
            return None
        new_id: dict[int, int] = {}
        for s in range(len(self.rows)):
            if live[s]:
                new_id[s] = len(new_id)
        rows = [{c: new_id[t] for c, t in self.rows[s].items() if live[t]} for s in new_id]
        return _CharDfa(rows, [self.accepting[s] for s in new_id], self.classes)

    def machine(self) -> Node:
        """As a ``Machine`` node (edges read the classes' code points)."""
        pruned = self.pruned()
        if pruned is None:
            return Chars(())
        edges: list[tuple[tuple[Node, int], ...]] = []
        for row in pruned.rows:
            by_target: dict[int, list[int]] = {}
            for c, t in row.items():
                by_target.setdefault(t, []).append(c)
            edges.append(
                tuple(
                    (Chars(normalize(r for c in cls for r in self.classes.ranges[c])), t)
                    for t, cls in sorted(by_target.items())
                )
            )
        return Machine(tuple(edges), tuple(pruned.accepting))


def _split(nfa: _Nfa, cur: frozenset[int]) -> list[tuple[int, set[int]]]:
    """The class axis cut by the edges of NFA set ``cur``: ``(class mask, targets)``
    parts, each mask's classes leading to the same targets (partition refinement on
    ints: a few parts, however many classes a set like "any character but a quote"
    spans)."""
    parts: list[tuple[int, set[int]]] = []
    for s in cur:
        for m, t in nfa.edges[s]:
            rest = m
            split: list[tuple[int, set[int]]] = []
            for k, (pm, ts) in enumerate(parts):
                inter = pm & m
                if not inter:
                    continue
                rest &= ~inter
                if inter == pm:
                    ts.add(t)
                else:
                    parts[k] = (pm & ~inter, ts)
                    split.append((inter, ts | {t}))
                if not rest and inter == m:
                    break
            parts.extend(split)
            if rest:
                parts.append((rest, {t}))
    return parts


def _char_dfas(trees: Sequence[Node], alphabet: Ranges | None = None) -> list[_CharDfa]:
    """The character-level DFAs of ``trees`` (subset construction over one class
    partition shared by all, so that products can pair their classes)."""
    trees = [_restricted(t, alphabet) for t in trees]
    sets: set[Ranges] = set()
    for tree in trees:
        _collect(tree, sets)
    set_list = sorted(sets)
    classes = _Classes(set_list)
    out: list[_CharDfa] = []
    for tree in trees:
        nfa = _Nfa(classes, {r: k for k, r in enumerate(set_list)})
        final = nfa.new()
        start = nfa.build(tree, final)
        # Subset construction. Per DFA state the classes are split by the NFA edges'
        # masks (partition refinement on ints: a few parts, however many classes a
        # set like "any character but a quote" spans), then each part's targets are
        # closed once (cached: the same target sets recur across states).
        first = nfa.closure({start})
        dstates: dict[frozenset[int], int] = {first: 0}
        queue = [first]
        dtrans: list[dict[int, int]] = []
        closed_of: dict[frozenset[int], int] = {}
        while len(dtrans) < len(queue):
            cur = queue[len(dtrans)]
            row: dict[int, int] = {}
            for mask, targets in _split(nfa, cur):
                key = frozenset(targets)
                nxt = closed_of.get(key)
                if nxt is None:
                    closed = nfa.closure(targets)
                    nxt = dstates.get(closed)
                    if nxt is None:
                        if len(dstates) >= MAX_STATES:
                            raise UnsupportedGrammarError(
                                f"the expression needs more than {MAX_STATES} DFA states; simplify it"
                            )
                        nxt = dstates[closed] = len(dstates)
                        queue.append(closed)
                    closed_of[key] = nxt
                for c in classes.bits(mask):
                    row[c] = nxt
            dtrans.append(row)
        out.append(_CharDfa(dtrans, [final in st for st in queue], classes))
    return out


def compile_dfa(
    tree: Node, alphabet: Ranges | None = None, *, what: str = "the expression", exprs: Exprs | None = None
) -> Dfa | None:
    """The live byte-level DFA of ``tree`` over the characters of ``alphabet`` (all
    when None), built lazily (module notes): only the start state exists until a
    walk or a step reads more. None when the language is empty (nothing can match).
    ``what`` names the tree in a ``(size)`` refusal. ``exprs``: an expression store
    to share with other automata of one grammar over the same ``alphabet`` (a
    subtree two terminals hold is interned once; they then share one lock)."""
    if exprs is None:
        exprs = Exprs(alphabet, what)
    with exprs.lock:
        e = exprs.intern(tree)
    if e == NOTHING_ID:
        return None
    source = _Source(exprs, what)
    dfa = Dfa(source)
    source.state_of(dfa, e)
    return dfa


def compile_dfa_eager(
    tree: Node, alphabet: Ranges | None = None, *, what: str = "the expression", exprs: Exprs | None = None
) -> Dfa | None:
    """``compile_dfa`` the old way, every state at once (subset construction over
    all reachable sets, then pruning, then bytes): the oracle the lazy automaton is
    tested against, and nothing else (``what`` and ``exprs`` are unused: the same
    call shape)."""
    del what, exprs
    (char,) = _char_dfas([tree], alphabet)
    pruned = char.pruned()
    if pruned is None:
        return None
    return _to_bytes(pruned.rows, pruned.accepting, pruned.classes)


def _product(a: Node, b: Node, accept: str) -> Node:
    """The product automaton of ``a`` and ``b``; ``accept`` "and" (intersection) or
    "not" (strings of ``a`` that are not of ``b``: ``b`` may die, ``-1``)."""
    da, db = _char_dfas([a, b])
    pairs: dict[tuple[int, int], int] = {(0, 0): 0}
    queue = [(0, 0)]
    rows: list[dict[int, int]] = []
    while len(rows) < len(queue):
        sa, sb = queue[len(rows)]
        row: dict[int, int] = {}
        for c, ta in da.rows[sa].items():
            tb = db.rows[sb].get(c, -1) if sb >= 0 else -1
            if tb < 0 and accept == "and":
                continue
            nxt = pairs.get((ta, tb))
            if nxt is None:
                if len(pairs) >= MAX_STATES:
                    raise UnsupportedGrammarError(f"the combined expression needs more than {MAX_STATES} states")
                nxt = pairs[(ta, tb)] = len(pairs)
                queue.append((ta, tb))
            row[c] = nxt
        rows.append(row)
    if accept == "and":
        accepting = [da.accepting[sa] and db.accepting[sb] for sa, sb in queue]
    else:
        accepting = [da.accepting[sa] and not (sb >= 0 and db.accepting[sb]) for sa, sb in queue]
    return _CharDfa(rows, accepting, da.classes).machine()


def intersect(a: Node, b: Node) -> Node:
    """A tree (a ``Machine``) whose strings are those of both ``a`` and ``b``; cost:
    both DFAs plus their reachable product (``MAX_STATES`` bounds it)."""
    return _product(a, b, "and")


def difference(a: Node, b: Node) -> Node:
    """A tree (a ``Machine``) whose strings are those of ``a`` that ``b`` does not
    match (no complement of ``b`` is built: a pair whose ``b`` side died stays).

    ``X*`` minus literals over ``X`` (a JSON object's "any name but the listed ones")
    is the trie of the literals with an exit to ``X*`` at every node
    (``_words_complement``): linear in the literals' length, where the product builds
    both character DFAs first."""
    words = _literal_words(b)
    if (
        words is not None
        and isinstance(a, Repeat)
        and a.min == 0
        and a.max is None
        and isinstance(a.item, Chars)
        and all(charset.contains(a.item.ranges, c) for w in words for c in w)
    ):
        return _words_complement(a.item.ranges, words)
    return _product(a, b, "not")


def _literal_words(tree: Node) -> list[tuple[int, ...]] | None:
    """The code points of each literal of ``tree`` (a literal, or an ``Alt`` of them),
    or None when it is anything else."""
    items = tree.items if isinstance(tree, Alt) else (tree,)
    words: list[tuple[int, ...]] = []
    for item in items:
        if not isinstance(item, Concat):
            return None
        word: list[int] = []
        for ch in item.items:
            if not (isinstance(ch, Chars) and len(ch.ranges) == 1 and ch.ranges[0][0] == ch.ranges[0][1]):
                return None
            word.append(ch.ranges[0][0])
        words.append(tuple(word))
    return words


def _words_complement(chars: Ranges, words: list[tuple[int, ...]]) -> Machine:
    """The strings over ``chars`` that are none of ``words`` (each over ``chars``), as
    a ``Machine``: state 0 the trie's root, one state per trie node (accepting unless a
    word ends there), each with an edge per child and one on the other characters to
    the last state, ``chars*`` (accepting). Every state is live: a node has finitely
    many children and ``chars`` is not empty (it holds the words' characters, or the
    empty string is the only word and the root's exit holds all of ``chars``)."""
    children: list[dict[int, int]] = [{}]
    ends = [False]
    for w in words:
        node = 0
        for c in w:
            nxt = children[node].get(c)
            if nxt is None:
                nxt = children[node][c] = len(children)
                children.append({})
                ends.append(False)
            node = nxt
        ends[node] = True
    free = len(children)
    any_char = Chars(chars)
    rows: list[tuple[tuple[Node, int], ...]] = []
    for kids in children:
        row: list[tuple[Node, int]] = [(Chars(((c, c),)), t) for c, t in sorted(kids.items())]
        rest = charset.intersect(chars, charset.negate(charset.normalize((c, c) for c in kids))) if kids else chars
        if rest:
            row.append((Chars(rest), free))
        rows.append(tuple(row))
    rows.append(((any_char, free),))
    return Machine(tuple(rows), (*(not e for e in ends), True))


def is_empty(tree: Node) -> bool:
    """Whether no string matches ``tree``."""
    (char,) = _char_dfas([tree])
    return not char.live()[0]


#: A byte trie node's content: the (byte-range tail, target) pairs it must still match,
#: sorted. A tuple of ints and tuples, not a frozenset: the garbage collector stops
#: tracking such tuples, and a lazy DFA keeps one per inner state (~140,000 frozensets
#: across a server's cached JSON Schemas, each visited by every full collection).
_Tails = tuple[tuple[tuple[tuple[int, int], ...], int], ...]


def _tails(here: Iterable[tuple[tuple[tuple[int, int], ...], int]]) -> _Tails:
    """The canonical key of what an inner state must still read."""
    return tuple(sorted({(seq[1:], t) for seq, t in here}))


def _to_bytes(char_rows: list[dict[int, int]], accepting: list[bool], classes: _Classes) -> Dfa:
    n = len(char_rows)
    rows: list[list[int]] = [[-1] * 256 for _ in range(n)]
    inner: dict[_Tails, int] = {}

    def node_for(tails: _Tails) -> int:
        found = inner.get(tails)
        if found is None:
            found = inner[tails] = len(rows)
            rows.append([-1] * 256)
            fill(found, tails)
        return found

    def fill(state: int, tails: _Tails | list[tuple[tuple[tuple[int, int], ...], int]]) -> None:
        # Cut the byte axis where some first range starts or ends, then group the
        # tails per piece: the bytes of one piece lead to the same node.
        cuts = {0, 256}
        for seq, _ in tails:
            cuts.add(seq[0][0])
            cuts.add(seq[0][1] + 1)
        edges = sorted(cuts)
        row = rows[state]
        for a, b in zip(edges, edges[1:]):
            here = [(seq, t) for seq, t in tails if seq[0][0] <= a and b - 1 <= seq[0][1]]
            if not here:
                continue
            ends = [t for seq, t in here if len(seq) == 1]
            if ends:
                # A byte that ends a character: classes are disjoint, so one target.
                target = ends[0]
            else:
                target = node_for(_tails(here))
            row[a:b] = [target] * (b - a)

    joined: dict[tuple[int, ...], tuple[Ranges, tuple[tuple[tuple[int, int], ...], ...]]] = {}
    for s, crow in enumerate(char_rows):
        by_target: dict[int, list[int]] = {}
        for c, t in crow.items():
            by_target.setdefault(t, []).append(c)
        tails: list[tuple[tuple[tuple[int, int], ...], int]] = []
        row = rows[s]
        for t, cls in by_target.items():
            key = tuple(cls)
            found = joined.get(key)
            if found is None:
                # The class set's ranges joined (fewer sequences), split into the
                # one-byte (ASCII) part, written straight into the row, and the
                # multi-byte sequences, which go through the trie (cached: a JSON
                # DFA repeats the same few class sets in every state).
                ranges = normalize(r for c in cls for r in classes.ranges[c])
                ascii_part = tuple((lo, min(hi, 0x7F)) for lo, hi in ranges if lo <= 0x7F)
                wide = tuple((max(lo, 0x80), hi) for lo, hi in ranges if hi >= 0x80)
                found = joined[key] = (ascii_part, _sequences(wide))
            for lo, hi in found[0]:
                row[lo : hi + 1] = [t] * (hi + 1 - lo)
            tails.extend((seq, t) for seq in found[1])
        if tails:
            fill(s, tails)
    return Dfa.from_rows(rows, [*accepting, *([False] * (len(rows) - n))])

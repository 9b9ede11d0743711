"""A regex tree (``nodes``) as a byte-level DFA over UTF-8, pruned to live states.

``compile_dfa(tree, alphabet)`` builds, in three steps:

1. *Character classes.* The code points are cut into the classes no ``Chars`` of the
   tree tells apart (a ``\\w`` next to ``@`` and ``.`` gives ~4 classes, not 700
   ranges), after intersecting every ``Chars`` with ``alphabet`` (the characters the
   vocabulary can spell: see ``constraint``).
2. *A character-level DFA.* A Thompson NFA over class ids, then subset construction
   (one DFA state per reachable set of NFA states), then pruning: a state from which
   no accepting state is reachable is dropped, so every state left is *live*.
3. *Bytes.* Each character-level transition (a set of classes -> a target) becomes the
   UTF-8 byte sequences of its code points (``utf8_sequences``), merged into one
   deterministic byte trie per state whose inner nodes are shared globally when they
   lead the same tails to the same targets (hash-consed), so a run of continuation
   bytes ``80-BF`` is one node whatever the state.

The result, ``Dfa``: states ``0 .. n-1``, ``0`` the start; ``trans[s, b]`` the next
state or ``-1`` (dead); ``accepting[s]``; states ``< n_boundary`` are character
boundaries, the others sit inside a character. Every state is live (acceptance is
reachable), and every path spells valid UTF-8, so a token walk that stays off ``-1``
is exactly "a valid prefix of some match".

Cost: classes O(R log R) for R ranges; the NFA O(tree size) states (bounded
repetition is unrolled: ``{m,n}`` copies the item n times); subset construction
O(D x N) set operations for D DFA states; bytes O(D x classes x 4) trie nodes at
most, usually far fewer. ``MAX_STATES`` bounds the NFA and the DFA and raises
``UnsupportedGrammarError`` beyond (``(a|b)*a(a|b){20}`` needs 2**20 states). Memory:
``4 x 256`` bytes per byte-level state (the dense table, for numpy walks) plus its
list-of-lists copy for stepping in Python.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np
import numpy.typing as npt

from ...errors import UnsupportedGrammarError
from .charset import Ranges, normalize
from .charset import intersect as intersect_ranges
from .nodes import Alt, Chars, Concat, Machine, Node, Repeat

__all__ = ["MAX_STATES", "Dfa", "char_sets", "compile_dfa", "difference", "intersect", "is_empty", "utf8_sequences"]

#: Bound on NFA and DFA states per terminal.
MAX_STATES = 50_000

#: The UTF-8 encoding lengths' code-point bounds (surrogates are never in a Chars).
_LENGTH_BOUNDS = ((0, 0x7F), (0x80, 0x7FF), (0x800, 0xFFFF), (0x10000, 0x10FFFF))


@dataclass(frozen=True)
class Dfa:
    """A byte-level DFA (module notes): ``trans`` ``(n, 256)`` int32, ``-1`` dead;
    ``rows`` the same as lists (for stepping in Python); ``accepting`` per state."""

    trans: npt.NDArray[np.int32]
    rows: tuple[tuple[int, ...], ...]
    accepting: npt.NDArray[np.bool_]
    n_boundary: int

    @property
    def n_states(self) -> int:
        """How many states (all live)."""
        return len(self.rows)

    @property
    def nullable(self) -> bool:
        """Whether the empty string matches."""
        return bool(self.accepting[0])

    @cached_property
    def walk_table(self) -> npt.NDArray[np.intp]:
        """``trans`` flattened for numpy walks (``walker``), with the dead state as
        state ``n`` whose row leads back to itself: ``walk_table[s * 256 + b]``."""
        n = self.n_states
        table = np.concatenate([self.trans.reshape(-1), np.full(256, -1, dtype=self.trans.dtype)]).astype(np.intp)
        table[table < 0] = n
        return table

    @cached_property
    def moves(self) -> tuple[tuple[tuple[int, int], ...], ...]:
        """Per state, its ``(byte, next state)`` pairs that are not dead, by byte (the
        narrow walk's lookups)."""
        return tuple(tuple((b, t) for b, t in enumerate(row) if t >= 0) for row in self.rows)

    @cached_property
    def accepting_list(self) -> tuple[bool, ...]:
        """``accepting`` as Python bools."""
        return tuple(bool(a) for a in self.accepting)

    @cached_property
    def walk_accepting(self) -> npt.NDArray[np.bool_]:
        """``accepting`` with the dead state ``n`` appended (not accepting)."""
        return np.concatenate([self.accepting, [False]])

    def matches(self, text: str) -> bool:
        """Whether the whole of ``text`` is a string of the DFA."""
        state = self.run(0, text.encode("utf-8", "surrogatepass"))
        return state >= 0 and bool(self.accepting[state])

    def run(self, state: int, data: bytes) -> int:
        """The state after ``data`` from ``state`` (-1: dead)."""
        rows = self.rows
        for b in data:
            state = rows[state][b]
            if state < 0:
                return -1
        return state


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
            row: dict[int, int] = {}
            for mask, targets in parts:
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


def compile_dfa(tree: Node, alphabet: Ranges | None = None) -> Dfa | None:
    """The live byte-level DFA of ``tree`` over the characters of ``alphabet`` (all
    when None); None when the language is empty (nothing can match)."""
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
    match (no complement of ``b`` is built: a pair whose ``b`` side died stays)."""
    return _product(a, b, "not")


def is_empty(tree: Node) -> bool:
    """Whether no string matches ``tree``."""
    (char,) = _char_dfas([tree])
    return not char.live()[0]


#: A byte trie node's content: the (byte-range tail, target) pairs it must still match.
_Tails = frozenset[tuple[tuple[tuple[int, int], ...], int]]


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
                target = node_for(frozenset((seq[1:], t) for seq, t in here))
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
    trans = np.array(rows, dtype=np.int32).reshape(len(rows), 256)
    acc = np.zeros(len(rows), dtype=np.bool_)
    acc[:n] = accepting
    return Dfa(trans, tuple(tuple(r) for r in rows), acc, n)

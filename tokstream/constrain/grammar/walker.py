"""The vocabulary as a byte trie, and every token walked through a DFA at once.

``Walker(index)`` holds, per vocabulary index, the trie of the text tokens' bytes:
one node per distinct prefix (421,661 nodes for o200k_base's 200k tokens and 1.4 MB
of bytes), numbered breadth first (by depth, and within a depth in the tokens'
sorted order), so that

- the children of a node are one contiguous range ``[child_lo, child_hi)``, and the
  descendants of a node at any one depth are one contiguous range too;
- the tokens below a node are one slice ``[sub_lo, sub_hi)`` of the index's sorted
  ``order`` (the ranks), those spelled exactly by the node first (``tok_n`` of them).

``walk(dfa, state, node)`` runs the bytes below ``node`` through ``dfa`` from ``state``
one depth at a time, in numpy: a depth's states are one gather of the parents'
states and one of the transition table (``table[state * 256 + byte]``). It returns
the ranks of the tokens alive to their end, and the *crossings*: alive nodes in an
accepting state that have children, where a lexeme may end inside a token and the
parser must decide the rest (``constraint``). Each depth runs *dense* (every node of
the depth's range, ~3 numpy passes, no compaction) when most of the range is alive,
else *sparse* (the alive frontier and its children only), so a state that takes
nearly every token costs one pass over the trie and a narrow one a few small arrays.

Cost (o200k_base, 2-core machine): build ~0.3 s once per index; eight int64 and two
bool arrays per node, 66 bytes a node (28 MB; int64 because numpy converts any other
index type on every gather). A walk that keeps nearly every token ~4 ms (the old walk over
the flattened token bytes, 1.4M bytes with compaction, took ~30 ms), a walk that
most tokens leave at their first byte ~0.1-0.5 ms, the old one 2-3 ms (its first
step gathered one byte per token).

A state that lets few bytes through (inside a property name, a literal, a number's
digits) walks in Python first (``_walk_narrow``: per alive node, its allowed bytes
bisected among the node's children), ~1 us per alive node instead of ~20 us per depth
of numpy passes; a depth with more work than ``_NARROW`` goes to the numpy walk.

Where the compiled core is built, every walk runs in C instead (``_native_walk.c``,
``TokenTrie``): breadth first over the same trie and the DFA's one-offset table, a
few ns per alive node, without the GIL; the states it reaches before they are
expanded come back *pending*, are expanded here (the lazy DFA's derivatives), and
walked on. The pure walk above stays the fallback and, with ``walk_reference``, the
oracle the tests hold it to. ``walk_below`` walks from many nodes in one state at
once: a parser's lexeme that ended at many crossings (``constraint``).

``walk_reference`` is the slow, readable definition the tests hold the fast walk to:
each token's bytes through ``Dfa.run``, in Python.
"""

from __future__ import annotations

import re
import threading
from array import array
from bisect import bisect_left
from typing import TYPE_CHECKING, Final, NamedTuple

import numpy as np
import numpy.typing as npt

from ...compiled import TokenTrie
from .charset import normalize

if TYPE_CHECKING:
    from ...vocab import VocabIndex
    from .automaton import Dfa

__all__ = ["BODY", "Crossings", "Walker"]

#: The narrow walk (``Walker._walk_narrow``) hands a depth to numpy when its work
#: (children read or bisections) exceeds this: ~0.2 us each in Python against ~20 us
#: for a numpy depth.
_NARROW: Final = 1024

IntpArray = npt.NDArray[np.intp]
BoolArray = npt.NDArray[np.bool_]


class Crossings(NamedTuple):
    """A walk's crossings, shallowest first, one entry per node: its depth ``q``, the
    node, and the ranks below it, ``[lo, hi)``; those of ``[cand, hi)`` are longer
    than ``q`` (the candidates whose lexeme may end at ``q``), ``[lo, cand)`` are the
    node's own spelling; ``state``, the DFA state the walk is in at the node (an
    accepting one)."""

    q: IntpArray
    node: IntpArray
    lo: IntpArray
    cand: IntpArray
    hi: IntpArray
    state: IntpArray


_EMPTY: Final = np.zeros(0, dtype=np.intp)
_NO_CROSSINGS: Final = Crossings(_EMPTY, _EMPTY, _EMPTY, _EMPTY, _EMPTY, _EMPTY)

#: A depth runs dense when at least this share of its range is alive or expanded.
_DENSE: Final = 0.25


class Walker:
    """Per vocabulary index: the byte trie of the text tokens (module notes), their
    bytes by rank (``data``), and the characters the vocabulary can spell
    (``alphabet``: None for all)."""

    def __init__(self, index: VocabIndex) -> None:
        order = index.order.astype(np.intp)
        self._setup(index.n_vocab, order, [index.token_bytes[i] for i in order], _spellable(index))
        self._slicing = True
        self.slices()  # with the trie, so no first mask pays for it

    def _setup(
        self, n_vocab: int, order: IntpArray, data: list[bytes], alphabet: tuple[tuple[int, int], ...] | None
    ) -> None:
        self.n_vocab = n_vocab
        self.order: IntpArray = order
        # A tuple: untracked by the cyclic GC (``vocab.Vocab.table``).
        self.data: tuple[bytes, ...] = tuple(data)
        self.alphabet = alphabet
        self._slicing = False
        self._slices: _Slices | None = None
        self._slice_lock = threading.Lock()
        self._build(data)

    @classmethod
    def _subset(cls, parent: Walker, ranks: IntpArray) -> Walker:
        """The walker of some of ``parent``'s tokens (``ranks``, increasing, so their
        bytes stay sorted); its ranks are positions in ``ranks``."""
        w = cls.__new__(cls)
        w._setup(parent.n_vocab, parent.order[ranks], [parent.data[r] for r in ranks.tolist()], parent.alphabet)
        return w

    def slices(self) -> _Slices:
        """The slices of the vocabulary (built on first use, once)."""
        if self._slices is None:
            with self._slice_lock:
                if self._slices is None:
                    self._slices = _Slices(self)
        return self._slices

    def _build(self, data: list[bytes]) -> None:
        n = len(data)
        lens = np.fromiter((len(b) for b in data), dtype=np.intp, count=n)
        offs = np.zeros(n, dtype=np.intp)
        if n > 1:
            np.cumsum(lens[:-1], out=offs[1:])
        flat = np.frombuffer(b"".join(data), dtype=np.uint8)
        # lcp[r]: the bytes rank r shares with rank r - 1.
        lcp = np.zeros(n, dtype=np.intp)
        idx = np.arange(1, n)
        k = 0
        while idx.size:
            idx = idx[(lens[idx - 1] > k) & (lens[idx] > k)]
            idx = idx[flat[offs[idx - 1] + k] == flat[offs[idx] + k]]
            lcp[idx] += 1
            k += 1
        # Rank r creates the nodes of its prefixes longer than lcp[r], in depth-first
        # order (the ranks are sorted): node `start[r] + j` is its prefix of lcp[r]+j+1.
        new = lens - lcp
        start = np.zeros(n, dtype=np.intp)
        if n > 1:
            np.cumsum(new[:-1], out=start[1:])
        m = int(new.sum())
        owner = np.repeat(np.arange(n, dtype=np.intp), new)
        depth = np.arange(m, dtype=np.intp) - np.repeat(start - lcp - 1, new)
        byte = flat[offs[owner] + depth - 1].astype(np.intp)
        parent = np.arange(m, dtype=np.intp) - 1  # the node before, inside one rank's run
        # The first new node of rank r hangs under its depth-lcp[r] ancestor, which
        # the last earlier rank with a smaller lcp created (-1: the root).
        first_of = np.full(n, -1, dtype=np.intp)
        for v in np.unique(lcp[lcp > 0]).tolist():
            sel = np.flatnonzero((lcp == v) & (new > 0))
            smaller = np.flatnonzero(lcp < v)
            creator = smaller[np.searchsorted(smaller, sel) - 1]
            first_of[sel] = start[creator] + (v - lcp[creator] - 1)
        has_new = new > 0
        parent[start[has_new]] = first_of[has_new]
        # The node that spells rank r (a duplicate spelling shares its first's node).
        end_node = np.where(has_new, start + new - 1, -1)
        np.maximum.accumulate(end_node, out=end_node)
        # Breadth-first numbering, root = 0: by depth, depth-first order within one.
        bfs = np.argsort(depth, kind="stable")
        relabel = np.empty(m + 1, dtype=np.intp)
        relabel[bfs] = np.arange(1, m + 1, dtype=np.intp)
        relabel[m] = 0  # parent -1 (index m after wrapping) is the root
        size = m + 1
        self.byte: IntpArray = np.concatenate([[0], byte[bfs]]).astype(np.intp)
        self.parent: IntpArray = np.concatenate([[0], relabel[parent[bfs]]]).astype(np.intp)
        self.depth: IntpArray = np.concatenate([[0], depth[bfs]]).astype(np.intp)
        rank_node = relabel[end_node] if n else np.zeros(0, dtype=np.intp)
        self.rank_node: IntpArray = rank_node
        # Children: contiguous, as the parents of the nodes are nondecreasing.
        kids = np.bincount(self.parent[1:], minlength=size).astype(np.intp)
        self.child_lo: IntpArray = np.zeros(size, dtype=np.intp)
        np.cumsum(kids[:-1], out=self.child_lo[1:])
        self.child_lo += 1
        self.child_hi: IntpArray = self.child_lo + kids
        self.tok_n: IntpArray = np.bincount(rank_node, minlength=size).astype(np.intp)
        # The ranks below a node: from its first creator rank, as many as it holds.
        self.sub_lo: IntpArray = np.zeros(size, dtype=np.intp)
        self.sub_lo[1:] = owner[bfs]
        below = self.tok_n.copy()
        bounds = np.searchsorted(self.depth, np.arange(int(self.depth.max()) + 2))
        for d in range(len(bounds) - 2, 0, -1):  # the deepest depth first
            a, b = int(bounds[d]), int(bounds[d + 1])
            np.add.at(below, self.parent[a:b], below[a:b])
        self.sub_hi: IntpArray = self.sub_lo + below
        self.has_tok: BoolArray = self.tok_n > 0
        self.has_kids: BoolArray = kids > 0
        self.multi = bool((self.tok_n > 1).any())
        # The compiled walk's copy of the trie (``_native_walk.c``), when it is built.
        self._trie = (
            TokenTrie(
                self.byte.astype(np.uint8).tobytes(),
                self.child_lo,
                self.child_hi,
                self.has_tok.astype(np.uint8).tobytes(),
                self.has_kids.astype(np.uint8).tobytes(),
                self.sub_lo,
                self.tok_n,
                self.sub_hi,
            )
            if TokenTrie is not None and np.dtype(np.intp).itemsize == 8
            else None
        )
        self._plain = (
            bytes(self.byte.astype(np.uint8)),
            array("l", self.child_lo.tolist()),
            array("l", self.child_hi.tolist()),
            self.has_tok.astype(np.uint8).tobytes(),
            self.has_kids.astype(np.uint8).tobytes(),
        )

    def node_of(self, rank: int, depth: int) -> int:
        """The node of the first ``depth`` bytes of rank ``rank``'s token."""
        v = int(self.rank_node[rank])
        for _ in range(int(self.depth[v]) - depth):
            v = int(self.parent[v])
        return v

    def ranks(self, nodes: IntpArray) -> IntpArray:
        """The ranks of the tokens spelled exactly by ``nodes`` (each spells one or,
        for a duplicate spelling, several consecutive ranks)."""
        lo = self.sub_lo[nodes]
        if not self.multi:
            return lo
        return _ranges(lo, lo + self.tok_n[nodes])

    def _walk_narrow(
        self, dfa: Dfa, state: int, node: int, crossings: bool
    ) -> tuple[list[int], list[tuple[int, int]], list[tuple[int, int]] | None]:
        """``walk`` in Python, breadth first, while few bytes get through: per alive
        node, its DFA state's allowed bytes are looked up among the node's sorted
        children (bisect), so the cost is the alive nodes, not the depths' numpy
        passes (~20 us each). Returns the alive nodes that spell a token, the
        crossings, and the depth's frontier it hands over to the numpy walk (None
        when done) once a depth's work exceeds ``_NARROW``."""
        byte, child_lo, child_hi, has_tok, has_kids = self._plain
        moves, rows = dfa.moves, dfa.rows
        accepting = dfa.accepting_list
        ended = [node] if node and has_tok[node] else []
        found: list[tuple[int, int]] = []
        level = [(node, state)]
        while level:
            # The work of this depth: per node, its allowed bytes bisected, or its
            # children read through the row, whichever is fewer.
            work = 0
            for v, s in level:
                work += min(len(moves[s]) * 4, child_hi[v] - child_lo[v])
            if work > _NARROW:
                return ended, found, level
            nxt: list[tuple[int, int]] = []
            for v, s in level:
                a, b = child_lo[v], child_hi[v]
                if a == b:
                    continue
                mv = moves[s]
                if len(mv) * 4 < b - a:
                    pairs = []
                    for bt, t in mv:
                        c = bisect_left(byte, bt, a, b)
                        if c != b and byte[c] == bt:
                            pairs.append((c, t))
                else:
                    row = rows[s]
                    pairs = [(c, row[byte[c]]) for c in range(a, b) if row[byte[c]] >= 0]
                for c, t in pairs:
                    if has_tok[c]:
                        ended.append(c)
                    if crossings and accepting[t] and has_kids[c]:
                        found.append((c, t))
                    nxt.append((c, t))
            level = nxt
        return ended, found, None

    def walk(self, dfa: Dfa, state: int, node: int, *, crossings: bool = True) -> tuple[IntpArray, Crossings]:
        """The tokens below ``node`` walked through ``dfa`` from ``state`` (module
        notes): ``(ranks alive to their end, crossings)``; no crossings are collected
        with ``crossings=False``."""
        if node == 0 and self._slicing:
            limit = dfa.body_limit(state, BODY)
            if limit:
                return self._walk_sliced(dfa, state, limit, crossings)
        if self._trie is not None:
            return self._walk_compiled(dfa, state, node, crossings)
        ended_nodes, crossing_nodes, level = self._walk_narrow(dfa, state, node, crossings)
        ended: list[IntpArray] = [np.array(ended_nodes, dtype=np.intp)] if ended_nodes else []
        found: list[IntpArray] = [np.array(crossing_nodes, dtype=np.intp)] if crossing_nodes else []
        if level is not None:
            level.sort()  # one depth, in node order: the numpy steps take ranges
            self._walk_numpy(
                dfa,
                np.array([v for v, _ in level], dtype=np.intp),
                np.array([s for _, s in level], dtype=np.intp),
                ended,
                found,
                crossings,
            )
        ranks = self.ranks(np.concatenate(ended)) if ended else _EMPTY
        return ranks, self._crossings(np.concatenate(found)) if found else _NO_CROSSINGS

    def walk_below(self, dfa: Dfa, state: int, nodes: IntpArray, allowed: BoolArray) -> tuple[IntpArray, IntpArray]:
        """``walk`` from each of ``nodes`` (distinct, none the root) in the same
        ``state``, as one walk, for a parser's lexeme that ended at many crossings in
        one state: the ranks *below* the nodes (not their own spellings) alive to
        their end are set in ``allowed`` (one flag per rank); returns the crossings'
        nodes and DFA states (a node below two of ``nodes`` may be listed twice)."""
        if self._trie is not None:
            states = np.full(len(nodes), state + 1, dtype=np.intp)
            _, found = self._compiled_rounds(dfa, nodes.tobytes(), states.tobytes(), True, allowed)
            pairs = np.frombuffer(b"".join(found), dtype=np.intp).reshape(-1, 2)
            return pairs[:, 0], pairs[:, 1] - 1
        ended: list[IntpArray] = []
        found_pure: list[IntpArray] = []
        nodes = np.sort(nodes)
        cuts = np.flatnonzero(np.diff(self.depth[nodes])) + 1
        for group in np.split(nodes, cuts):
            # One depth's nodes, sorted: the numpy walk's input.
            self._walk_numpy(dfa, group, np.full(len(group), state, dtype=np.intp), ended, found_pure, True)
        if ended:
            allowed[self.ranks(np.concatenate(ended))] = True
        if not found_pure:
            return _EMPTY, _EMPTY
        pairs = np.concatenate(found_pure)
        return pairs[:, 0], pairs[:, 1]

    def refused(self, nodes: IntpArray, allowed: BoolArray) -> BoolArray:
        """Per node of ``nodes``, whether a token strictly below it (longer than its
        own spelling) is not allowed yet."""
        if self._trie is not None:
            return np.frombuffer(self._trie.refused(nodes.tobytes(), allowed), dtype=np.bool_)
        cand, hi = self.sub_lo[nodes] + self.tok_n[nodes], self.sub_hi[nodes]
        if not len(nodes):
            return np.zeros(0, dtype=np.bool_)
        # Over the span the nodes cover, not the vocabulary.
        a, b = int(cand.min()), int(hi.max())
        count = np.concatenate([[0], np.cumsum(~allowed[a:b])])
        return np.asarray(count[hi - a] > count[cand - a])

    def _compiled_rounds(
        self, dfa: Dfa, nodes: bytes, states: bytes, crossings: bool, allowed: BoolArray | None = None
    ) -> tuple[list[bytes], list[bytes]]:
        """The compiled walk from ``nodes`` in ``states`` (int64 bytes, one-offset
        states), round after round: the states it reaches before they are expanded
        come back pending, are expanded here, and their nodes walked on (so the lazy
        DFA makes only the states tokens reach, as the pure walk does). Returns the
        ended nodes' and the crossings' bytes of each round (with ``allowed``, the
        ended ranks are set there instead)."""
        assert self._trie is not None
        ended: list[bytes] = []
        found: list[bytes] = []
        while True:
            table, expanded, accepting = dfa.walk_tables()
            if allowed is None:
                e, f, nodes, states = self._trie.walk(table, expanded, accepting, nodes, states, crossings)
            else:
                e, f, nodes, states = self._trie.walk(table, expanded, accepting, nodes, states, crossings, allowed)
            if e:
                ended.append(e)
            if f:
                found.append(f)
            if not nodes:
                return ended, found
            for s in set(np.frombuffer(states, dtype=np.intp).tolist()):
                dfa.expand(s - 1)

    def _walk_compiled(self, dfa: Dfa, state: int, node: int, crossings: bool) -> tuple[IntpArray, Crossings]:
        """``walk`` in C (``_native_walk.c``, ``_compiled_rounds``)."""
        start = np.array([node], dtype=np.intp)
        e, f = self._compiled_rounds(dfa, start.tobytes(), np.array([state + 1], dtype=np.intp).tobytes(), crossings)
        nodes = np.frombuffer(b"".join(e), dtype=np.intp)
        if node and self.has_tok[node]:
            nodes = np.concatenate([start, nodes])
        ranks = self.ranks(nodes) if len(nodes) else _EMPTY
        if not f:
            return ranks, _NO_CROSSINGS
        # Node numbers are breadth first, so sorted is shallowest first.
        pairs = np.frombuffer(b"".join(f), dtype=np.intp).reshape(-1, 2) - (0, 1)
        return ranks, self._crossings(pairs[np.argsort(pairs[:, 0], kind="stable")])

    def _walk_sliced(self, dfa: Dfa, state: int, limit: int, crossings: bool) -> tuple[IntpArray, Crossings]:
        """``walk`` from the root for a state that reads up to ``limit`` characters
        of ``BODY`` as a plain run (``Dfa.body_limit``): the tokens made of at most
        that many such characters are allowed without walking (a precomputed slice),
        longer ones are not, and only the other tokens are walked, on their own trie
        (``_Slices``). The same result as the plain walk, which the tests check."""
        sl = self.slices()
        ended_c, cross_c = sl.complement.walk(dfa, state, 0, crossings=crossings)
        ended = np.concatenate([sl.upto(limit), sl.comp_ranks[ended_c]])
        if not cross_c.node.size:
            return ended, _NO_CROSSINGS
        # A crossing of the other tokens' trie is a node of the full trie: the same
        # bytes, so the same state, for every token below it.
        nodes = {
            self.node_of(int(sl.comp_ranks[lo]), q): t
            for q, lo, t in zip(cross_c.q.tolist(), cross_c.lo.tolist(), cross_c.state.tolist())
        }
        found = np.array(sorted(nodes.items()), dtype=np.intp).reshape(-1, 2)  # breadth first: shallowest first
        return ended, self._crossings(found)

    def _walk_numpy(
        self,
        dfa: Dfa,
        nodes_in: IntpArray,
        states: IntpArray,
        ended: list[IntpArray],
        found: list[IntpArray],
        crossings: bool,
    ) -> None:
        """The walk below one depth's alive ``nodes_in`` (sorted) in ``states``, one
        depth at a time in numpy; the alive nodes below are added to ``ended`` and
        ``found``."""
        # States are one-offset here, 0 the dead state (``Dfa.walk_arrays``); the
        # automaton is lazy, so each depth first makes sure its states are expanded.
        dead = 0
        states = states + 1
        byte, parent, child_lo, child_hi = self.byte, self.parent, self.child_lo, self.child_hi
        # The depth's alive nodes: sparse (nodes, states) or dense (range start, states).
        nodes: IntpArray | None = nodes_in
        base = 0  # dense: the states are those of nodes [base, base + len(states))
        while True:
            table, accepting = dfa.walk_arrays(states)
            if nodes is not None:
                lo, hi = child_lo[nodes], child_hi[nodes]
                a, b = int(lo[0]), int(hi[-1])
                count = hi - lo
                total = int(count.sum())
                if not total:
                    break
                if total >= _DENSE * (b - a):
                    base = int(nodes[0])
                    full = np.full(int(nodes[-1]) - base + 1, dead, dtype=np.intp)
                    full[nodes - base] = states
                    nodes, states = None, full
                else:
                    keep = count > 0
                    kids = _ranges(lo[keep], hi[keep])
                    st = table[np.repeat(states[keep], count[keep]) * 256 + byte[kids]]
                    alive = st != dead
                    nodes, states = kids[alive], st[alive]
                    if not nodes.size:
                        break
                    self._collect(nodes, states, accepting, ended, found, crossings)
                    continue
            # Dense: every child of the range [base, base + len(states)).
            a = int(child_lo[base])
            b = int(child_hi[base + len(states) - 1])
            if a == b:
                break
            st = table[states[parent[a:b] - base] * 256 + byte[a:b]]
            alive = st != dead
            n_alive = int(np.count_nonzero(alive))
            if not n_alive:
                break
            alive_nodes, alive_states = a + np.flatnonzero(alive), st[alive]
            self._collect(alive_nodes, alive_states, accepting, ended, found, crossings)
            if n_alive < _DENSE * (b - a):
                nodes, states = alive_nodes, alive_states
            else:
                states, base = st, a

    def _collect(
        self,
        nodes: IntpArray,
        states: IntpArray,
        accepting: BoolArray,
        ended: list[IntpArray],
        found: list[IntpArray],
        crossings: bool,
    ) -> None:
        """Record the alive ``nodes`` that spell a token, and those that cross."""
        t = self.has_tok[nodes]
        if t.any():
            ended.append(nodes[t])
        if crossings:
            c = accepting[states] & self.has_kids[nodes]
            if c.any():
                found.append(np.stack([nodes[c], states[c] - 1], axis=1))

    def _crossings(self, pairs: IntpArray) -> Crossings:
        """The crossings at ``pairs`` (rows of node and DFA state, in the order found:
        shallowest first)."""
        nodes = np.ascontiguousarray(pairs[:, 0])
        lo = self.sub_lo[nodes]
        return Crossings(
            self.depth[nodes], nodes, lo, lo + self.tok_n[nodes], self.sub_hi[nodes], np.ascontiguousarray(pairs[:, 1])
        )

    def walk_reference(self, dfa: Dfa, state: int, node: int) -> tuple[list[int], list[tuple[int, int]]]:
        """``walk``'s result by definition, in Python (for the tests): the ranks below
        ``node`` whose remaining bytes ``dfa`` takes from ``state``, and every
        ``(rank, q)`` where such a token is alive and accepting after its ``q``-th
        byte, strictly inside it and past ``node``."""
        off = int(self.depth[node])
        lo, hi = int(self.sub_lo[node]), int(self.sub_hi[node])
        alive: list[int] = []
        cross: list[tuple[int, int]] = []
        for r in range(lo, hi):
            data = self.data[r]
            s = state
            for q in range(off, len(data)):
                s = dfa.rows[s][data[q]]
                if s < 0:
                    break
                if q + 1 < len(data) and dfa.accepting[s]:
                    cross.append((r, q + 1))
            else:
                alive.append(r)
        return alive, cross


#: The characters a JSON string holds raw (no control character, quote or backslash):
#: the alphabet of the slices.
BODY: Final = normalize([(0x20, 0x21), (0x23, 0x5B), (0x5D, 0xD7FF), (0xE000, 0x10FFFF)])
_NOT_BODY: Final = re.compile(rb'[\x00-\x1f"\\]')


class _Slices:
    """The vocabulary cut by ``BODY``, as llguidance's slicer cuts it: per rank, how
    many characters its token holds when they are all of ``BODY`` (a trailing
    incomplete UTF-8 character counts as one: every non-ASCII character is in
    ``BODY``, so it can be completed), else -1; ``upto(n)``, the ranks of 1 to ``n``
    such characters; and the walker of the other tokens (``complement``, with
    ``comp_ranks`` its ranks' positions in the full order). Cost: one decode per
    token, once per vocabulary (~0.1 s for 128k tokens); a slice is cached per
    ``n``."""

    def __init__(self, walker: Walker) -> None:
        counts = np.full(len(walker.data), -1, dtype=np.intp)
        for r, data in enumerate(walker.data):
            if not data or _NOT_BODY.search(data):
                continue
            try:
                counts[r] = len(data.decode("utf-8"))
            except UnicodeDecodeError as e:
                # Valid but for an incomplete character at the end: it counts as one.
                if e.end == len(data) and e.reason == "unexpected end of data":
                    try:
                        counts[r] = len(data[: e.start].decode("utf-8")) + 1
                    except UnicodeDecodeError:
                        pass
        self.counts = counts
        self.comp_ranks: IntpArray = np.flatnonzero(counts < 0).astype(np.intp)
        self.complement = Walker._subset(walker, self.comp_ranks)
        self._upto: dict[int, IntpArray] = {}
        self._max = int(counts.max()) if len(counts) else 0

    def upto(self, n: int) -> IntpArray:
        """The ranks of the tokens of 1 to ``n`` characters, all of ``BODY``."""
        n = min(n, self._max)
        found = self._upto.get(n)
        if found is None:
            found = self._upto[n] = np.flatnonzero((self.counts >= 1) & (self.counts <= n)).astype(np.intp)
        return found


def _ranges(lo: IntpArray, hi: IntpArray) -> IntpArray:
    """The concatenation of the nonempty, increasing, disjoint ranges ``[lo[i], hi[i])``,
    without a Python loop: ones, with a jump at each range's head, summed."""
    if not len(lo):
        return np.zeros(0, dtype=np.intp)
    count = hi - lo
    steps = np.ones(int(count.sum()), dtype=np.intp)
    heads = np.zeros(len(lo), dtype=np.intp)
    if len(lo) > 1:
        np.cumsum(count[:-1], out=heads[1:])
    steps[heads[1:]] = lo[1:] - hi[:-1] + 1
    steps[0] = lo[0]
    return np.cumsum(steps)


def _spellable(index: VocabIndex) -> tuple[tuple[int, int], ...] | None:
    """The characters the vocabulary can spell: None (all) when every byte a UTF-8
    text can hold is a one-byte token; else the characters that are whole tokens by
    themselves."""
    trie = index.trie
    if all(bytes((b,)) in trie for b in range(0xF5) if b not in (0xC0, 0xC1)):
        return None
    chars: set[int] = set()
    for data in index.token_bytes:
        if 0 < len(data) <= 4:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                continue
            if len(text) == 1:
                chars.add(ord(text))
    return normalize((c, c) for c in chars)

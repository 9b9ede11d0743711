"""The grammar engine's vocabulary trie and its numpy walks (``grammar.walker``).

The trie is checked against the vocabulary index it is built from (every node's
bytes, parent chain and token slice against ``VocabIndex.extensions``), and
``Walker.walk`` against ``Walker.walk_reference``, its definition in plain Python
(each token's bytes through ``Dfa.run``), for hypothesis regexes from random DFA
states and random trie nodes, on four kinds of vocabulary: both the compiled walk
(``_native_walk.c``, when built) and the pure one (Python and numpy), each on fresh
lazy automata, so the compiled walk's pending states are expanded on the way.
"""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest
from helpers import fixture_tokenizer
from hypothesis import given
from hypothesis import strategies as st
from regex_strategy import regexes
from strategies import hyp_settings

from tokstream._native_loader import native
from tokstream.constrain.grammar.automaton import compile_dfa
from tokstream.constrain.grammar.constraint import _walkers
from tokstream.constrain.grammar.regex import parse_regex
from tokstream.constrain.grammar.walker import BODY, Walker
from tokstream.errors import UnsupportedGrammarError

TIDS = ("o200k_base", "hf/llama3_tokenizer.json", "hf/mistral_7b_v1_tokenizer.json", "hf/bert_minilm_tokenizer.json")


#: The vocabularies of the hypothesis walks: Llama 3's in the quick run, all in CI's.
VOCABS = [pytest.param(t, marks=() if t == "hf/llama3_tokenizer.json" else pytest.mark.slow) for t in TIDS]
#: The walks under test: the compiled one wherever it is built (every CI run but the
#: pure pass), and the pure one always.
PATHS = ("pure", "compiled") if native is not None else ("pure",)


def _walker(tid: str, path: str = "compiled") -> Walker:
    w = _walkers(fixture_tokenizer(tid).vocab.index)
    if path == "compiled":
        assert w._trie is not None
        return w
    # Shallow copies that walk the pure way, the slices' complement walker too.
    sl = copy.copy(w.slices())
    sl.complement = copy.copy(sl.complement)
    sl.complement._trie = None
    pure = copy.copy(w)
    pure._trie, pure._slices = None, sl
    return pure


def _spelling(w: Walker, node: int) -> bytes:
    out = []
    while node:
        out.append(int(w.byte[node]))
        node = int(w.parent[node])
    return bytes(reversed(out))


@pytest.mark.slow
@pytest.mark.parametrize("tid", TIDS)
def test_trie_matches_the_index(tid: str) -> None:
    """Every rank's node spells its bytes; a node's ranks are the index's extensions
    of its bytes, its own spelling first; children are contiguous and one byte deeper."""
    index = fixture_tokenizer(tid).vocab.index
    w = _walker(tid)
    rng = random.Random(0)
    n = len(w.data)
    assert n == len(index.order)
    for r in rng.sample(range(n), 300) + [0, n - 1]:
        data = w.data[r]
        assert _spelling(w, int(w.rank_node[r])) == data
        for depth in {1, len(data) // 2, len(data)} - {0}:
            v = w.node_of(r, depth)
            assert int(w.depth[v]) == depth and _spelling(w, v) == data[:depth]
            assert (int(w.sub_lo[v]), int(w.sub_hi[v])) == index.extensions(data[:depth])
            own = [k for k in range(int(w.sub_lo[v]), int(w.sub_hi[v])) if w.data[k] == data[:depth]]
            assert own == list(range(int(w.sub_lo[v]), int(w.sub_lo[v]) + int(w.tok_n[v])))
            kids = range(int(w.child_lo[v]), int(w.child_hi[v]))
            assert all(int(w.parent[k]) == v and int(w.depth[k]) == depth + 1 for k in kids)
    # Every distinct nonempty prefix of a token is one node.
    prefixes = {d[:k] for d in w.data for k in range(1, len(d) + 1)}
    assert len(w.byte) == len(prefixes) + 1


def _check_walk(w: Walker, pattern: str, seed: int) -> None:
    try:
        dfa = compile_dfa(parse_regex(pattern), w.alphabet)
    except UnsupportedGrammarError:
        return
    if dfa is None:  # nothing the vocabulary spells matches
        return
    rng = random.Random(seed)
    n = len(w.data)
    for _ in range(3):
        state = rng.randrange(dfa.n_states)
        r = rng.randrange(n)
        node = w.node_of(r, rng.randint(1, min(2, len(w.data[r]))))
        ended, crossings = w.walk(dfa, state, node)
        want_alive, want_cross = w.walk_reference(dfa, state, node)
        assert sorted(ended.tolist()) == want_alive, (pattern, state, node)
        got = {(k, q) for q, _, _, cand, hi, _ in zip(*(a.tolist() for a in crossings)) for k in range(cand, hi)}
        assert got == set(want_cross), (pattern, state, node)
        assert crossings.q.tolist() == sorted(crossings.q.tolist())  # shallowest first
        for q, lo, t in zip(crossings.q.tolist(), crossings.lo.tolist(), crossings.state.tolist()):
            assert t == dfa.run(state, w.data[lo][int(w.depth[node]) : q]) and dfa.accepting[t]
        ended_only, none = w.walk(dfa, state, node, crossings=False)
        assert np.array_equal(np.sort(ended_only), np.sort(ended)) and not none.node.size


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("tid", VOCABS)
@hyp_settings(30)
@given(pattern=regexes("ae t.0"), seed=st.integers(0, 2**32 - 1))
def test_walk_equals_its_definition(tid: str, path: str, pattern: str, seed: int) -> None:
    """The compiled walk, and the pure one (dense and sparse numpy depths), equal the
    per-token Python walk."""
    _check_walk(_walker(tid, path), pattern, seed)


@pytest.mark.slow
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("tid", TIDS)
@pytest.mark.parametrize("pattern", [r"[^\"]*", r" ?[a-z]+( [a-z]+)*", r"\w+", r"[0-9]{1,3}(,[0-9]{3})*"])
def test_walk_from_the_root(tid: str, path: str, pattern: str) -> None:
    """From the root, over the whole vocabulary (permissive states run dense)."""
    w = _walker(tid, path)
    dfa = compile_dfa(parse_regex(pattern), w.alphabet)
    assert dfa is not None
    for state in range(min(dfa.n_states, 2)):
        ended, crossings = w.walk(dfa, state, 0)
        want_alive, want_cross = w.walk_reference(dfa, state, 0)
        assert sorted(ended.tolist()) == want_alive
        assert {
            (k, q) for q, _, _, cand, hi, _ in zip(*(a.tolist() for a in crossings)) for k in range(cand, hi)
        } == set(want_cross)


@pytest.mark.parametrize("tid", TIDS)
@pytest.mark.parametrize(
    "pattern",
    [
        r'"[^"\\\x00-\x1f]*"',  # a free JSON string body: sliced after the quote
        r'"[^"\\\x00-\x1f]{0,3}" ?x',  # bounded: longer body tokens are refused
        r'"([^"\\\x00-\x1f]|\\["\\/bfnrt]){2,6}",',  # escapes beside the raw characters
        r'"[^"\\\x00-\x1f]{1,40}("|a)',  # the tail starts with a body character: no slicing
        r'"[^"\\\x00-\x1f]{4,300}"\}?',  # a long count with a minimum
        r'"[^"\x00-\x1f]*"',  # a backslash in the run: not the body's alphabet, no slicing
    ],
)
@pytest.mark.parametrize("path", PATHS)
def test_sliced_walks_equal_their_definition(tid: str, path: str, pattern: str) -> None:
    """A state that reads a run of JSON string characters walks only the tokens
    outside the slices (``Walker._walk_sliced``); its result equals the plain
    per-token walk, at every state a short walk reaches."""
    w = _walker(tid, path)
    dfa = compile_dfa(parse_regex(pattern), w.alphabet)
    assert dfa is not None
    state, seen = 0, []
    for b in b'"ab':
        state = dfa.rows[state][b]
        seen.append(state)
    for state in seen:
        ended, crossings = w.walk(dfa, state, 0)
        want_alive, want_cross = w.walk_reference(dfa, state, 0)
        assert sorted(ended.tolist()) == want_alive, (pattern, state)
        got = {(k, q) for q, _, _, cand, hi, _ in zip(*(a.tolist() for a in crossings)) for k in range(cand, hi)}
        assert got == set(want_cross), (pattern, state)
    if w.alphabet is None and "{0,3}" in pattern:
        assert dfa.body_limit(seen[0], BODY) == 3  # the slicing path ran


def _check_walk_below(w: Walker, pattern: str, seed: int) -> None:
    try:
        dfa = compile_dfa(parse_regex(pattern), w.alphabet)
    except UnsupportedGrammarError:
        return
    if dfa is None:
        return
    rng = random.Random(seed)
    n = len(w.data)
    state = rng.randrange(dfa.n_states)
    nodes = sorted({w.node_of(r, rng.randint(1, min(3, len(w.data[r])))) for r in rng.sample(range(n), 40)})
    allowed = np.zeros(n, dtype=np.bool_)
    cross, ends = w.walk_below(dfa, state, np.array(nodes, dtype=np.intp), allowed)
    want_allowed: set[int] = set()
    want_cross: set[tuple[int, int]] = set()
    for v in nodes:
        alive, crossings = w.walk_reference(dfa, state, v)
        own = set(range(int(w.sub_lo[v]), int(w.sub_lo[v]) + int(w.tok_n[v])))
        want_allowed |= set(alive) - own
        for r, q in crossings:
            node = w.node_of(r, q)
            want_cross.add((node, dfa.run(state, w.data[r][int(w.depth[v]) : q])))
    assert set(np.flatnonzero(allowed).tolist()) == want_allowed, (pattern, state)
    assert set(zip(cross.tolist(), ends.tolist())) == want_cross, (pattern, state)
    # refused: a crossing with a token below it still refused.
    probe = np.array(sorted({v for v, _ in want_cross} | set(nodes)), dtype=np.intp)
    got = w.refused(probe, allowed).tolist()
    for v, flag in zip(probe.tolist(), got):
        below = range(int(w.sub_lo[v]) + int(w.tok_n[v]), int(w.sub_hi[v]))
        assert flag == any(not allowed[r] for r in below), (pattern, v)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("tid", VOCABS)
@hyp_settings(20)
@given(pattern=regexes("ae t.0"), seed=st.integers(0, 2**32 - 1))
def test_walk_below_equals_its_definition(tid: str, path: str, pattern: str, seed: int) -> None:
    """``walk_below`` (many start nodes in one state, marking ``allowed``) and
    ``refused`` equal the per-token walk from each node, both ways."""
    _check_walk_below(_walker(tid, path), pattern, seed)

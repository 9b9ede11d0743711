"""The lazy automata (``derivatives`` + ``automaton.Dfa``) against the eager ones they
replaced (``automaton.compile_dfa_eager``: Thompson NFA, subset construction over every
reachable set, pruning, bytes), kept as the oracle.

- Languages: for hypothesis regexes, the reachable product of the two DFAs, over all
  256 bytes from every pair: both dead or both alive, with the same acceptance. That
  is language equality at byte level (a finite check: the eager DFA is finite and the
  lazy one is minimal up to the derivatives' canonical forms), and it checks that every
  lazy state is live (the eager DFA is pruned, so a live eager state pairs only with a
  live lazy one).
- Masks: on schemas of the JSONSchemaBench sample, ``json_schema_constraint``'s token
  masks along seeded random walks equal those of the same grammar built with eager
  automata, step by step.
- Threads: walks of one lazy automaton from several threads at once (states made
  under the lock while others read) give the single-threaded masks.
"""

from __future__ import annotations

import json
import lzma
import random
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers import fixture_file, fixture_tokenizer
from hypothesis import given
from hypothesis import strategies as st
from regex_strategy import regexes
from strategies import hyp_settings

import tokstream
from tokstream.constrain.grammar.automaton import Dfa, compile_dfa, compile_dfa_eager, difference
from tokstream.constrain.grammar.charset import ANY
from tokstream.constrain.grammar.constraint import GrammarConstraint, _Compiled, _walkers
from tokstream.constrain.grammar.earley import Grammar
from tokstream.constrain.grammar.nodes import Alt, Chars, Machine, Repeat, literal
from tokstream.constrain.grammar.regex import parse_regex
from tokstream.constrain.json_schema.compiler import compile_schema
from tokstream.constrain.json_schema.constraint import _whitespace
from tokstream.errors import TokstreamError, UnsupportedGrammarError

LLAMA3 = "hf/llama3_tokenizer.json"
EOS = 128009
BENCH = "jsonschemabench/schemas_sample.jsonl.xz"


def _same_language(lazy: Dfa, eager: Dfa, limit: int = 20_000) -> None:
    seen = {(0, 0)}
    todo = [(0, 0)]
    while todo:
        a, b = todo.pop()
        assert lazy.accepting[a] == eager.accepting[b], (a, b)
        ra, rb = lazy.rows[a], eager.rows[b]
        for byte in range(256):
            ta, tb = ra[byte], rb[byte]
            assert (ta < 0) == (tb < 0), (a, b, byte)
            if ta >= 0 and (ta, tb) not in seen:
                seen.add((ta, tb))
                todo.append((ta, tb))
        assert len(seen) < limit


_WORD = st.text(alphabet="ab\u00e9\u65e5\U0001f600", max_size=5)


@hyp_settings(200)
@given(words=st.lists(_WORD, min_size=1, max_size=8), probes=st.lists(_WORD, max_size=30), narrow=st.booleans())
def test_any_string_but_these_words(words: list[str], probes: list[str], narrow: bool) -> None:
    # "Any name but the listed ones" (an object's other properties) is built as a trie
    # with exits, not by the product: its language is that of Python's set membership,
    # in the lazy and the eager automaton alike.
    chars = ((0x61, 0x62), (0xE9, 0xE9), (0x65E5, 0x65E5), (0x1F600, 0x1F600)) if narrow else ANY
    names = difference(Repeat(Chars(chars), 0, None), Alt(tuple(literal(w) for w in words)))
    assert isinstance(names, Machine)
    lazy, eager = compile_dfa(names), compile_dfa_eager(names)
    assert lazy is not None and eager is not None
    for probe in [*probes, *words, "z", "az", ""]:
        expected = probe not in words and (not narrow or "z" not in probe)
        assert lazy.matches(probe) == expected == eager.matches(probe), (words, probe)


@hyp_settings(200)
@given(pattern=regexes("ab.é"))
def test_lazy_dfa_has_the_eager_language(pattern: str) -> None:
    tree = parse_regex(pattern)
    try:
        eager = compile_dfa_eager(tree)
    except UnsupportedGrammarError:
        return
    lazy = compile_dfa(tree)
    assert (lazy is None) == (eager is None), pattern
    if lazy is not None and eager is not None:
        _same_language(lazy, eager)


@pytest.mark.parametrize(
    "pattern",
    [
        r"(a|b)*a(a|b){8}",  # 2**8 eager states: the lazy DFA makes what a walk reaches
        r"(a?){30}a{30}",
        r"((ab){2,5}c){0,7}",
        r"[^\"\\\x00-\x1f]{0,40}",
        r"[\u0100-\U0010ffff]{1,3}x",
        r"(ab|a)(bc|c)*",
    ],
)
def test_lazy_dfa_on_counted_patterns(pattern: str) -> None:
    tree = parse_regex(pattern)
    eager, lazy = compile_dfa_eager(tree), compile_dfa(tree)
    assert eager is not None and lazy is not None
    _same_language(lazy, eager)


def _sample(n: int, max_chars: int = 3000) -> list[tuple[str, Any]]:
    out = []
    with lzma.open(fixture_file(BENCH), "rt") as f:
        rows = [json.loads(line) for line in f]
    for row in rows[:: max(1, len(rows) // (8 * n))]:
        text = json.dumps(row["schema"])
        if len(text) <= max_chars:
            out.append((row["id"], row["schema"]))
    return out[:n]


def _built_constraint(
    tok: tokstream.Tokenizer, schema: Any, eos: int, build_dfa: Callable[..., Dfa | None] = compile_dfa
) -> GrammarConstraint:
    """``json_schema_constraint`` by hand, with ``build_dfa`` making the automata."""
    index = tok.vocab.index
    walker = _walkers(index)
    compiled = compile_schema(schema, _whitespace(None))
    g = Grammar(compiled.rules, compiled.terminals, compiled.start, alphabet=walker.alphabet, build_dfa=build_dfa)
    return GrammarConstraint(index, _Compiled(g, walker, single_lexeme=compiled.single), eos)


@pytest.mark.slow
def test_masks_equal_the_eager_engine_on_the_sample() -> None:
    tok = fixture_tokenizer(LLAMA3)
    masker = tokstream.TokenMasker(tok)
    compared = 0
    for sid, schema in _sample(24):
        try:
            eager = _built_constraint(tok, schema, EOS, compile_dfa_eager)
        except (TokstreamError, RecursionError):
            continue
        lazy = tokstream.json_schema_constraint(tok, schema, eos_id=EOS)
        rng = random.Random(sid)
        for step in range(25):
            want, got = masker.mask(eager), masker.mask(lazy)
            assert np.array_equal(want, got), (sid, step, np.flatnonzero(want != got)[:10])
            ids = np.flatnonzero(got)
            if not ids.size or lazy.is_done:
                break
            t = int(rng.choice(ids))
            assert lazy.accept(t) and eager.accept(t)
            compared += 1
    assert compared >= 100


def test_threads_share_one_lazy_automaton() -> None:
    tok = fixture_tokenizer("o200k_base")
    walker = _walkers(tok.vocab.index)
    pattern = r"[a-z ]{0,12}(, [a-z]{2,9}){0,4}"
    reference = compile_dfa(parse_regex(pattern), walker.alphabet)
    assert reference is not None
    reference.expand_all()
    states = list(range(min(reference.n_states, 40)))
    want = {s: sorted(walker.walk(reference, s, 0)[0].tolist()) for s in states}
    shared = compile_dfa(parse_regex(pattern), walker.alphabet)
    assert shared is not None
    shared.expand_all()  # the same numbering; then fresh lazy copies are walked in threads
    errors: list[BaseException] = []

    def work(seed: int, dfa: Dfa) -> None:
        try:
            for s in random.Random(seed).sample(states, len(states)):
                assert sorted(walker.walk(dfa, s, 0)[0].tolist()) == want[s]
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k, shared)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    # A fresh automaton grown from threads at once: the same language as the reference.
    fresh = compile_dfa(parse_regex(pattern), walker.alphabet)
    assert fresh is not None
    runs = [threading.Thread(target=lambda: [walker.walk(fresh, 0, 0) for _ in range(3)]) for _ in range(4)]
    for t in runs:
        t.start()
    for t in runs:
        t.join()
    _same_language(fresh, reference)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array", "items": {"type": "integer"}, "minItems": 12},
        {"type": "array", "items": {"type": "boolean"}, "minItems": 3, "maxItems": 14},
        {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 15},
        {
            "type": "array",
            "prefixItems": [{"type": "string"}, {"type": "null"}],
            "items": {"type": "integer"},
            "maxItems": 13,
        },
        {
            "type": "array",
            "prefixItems": [{"type": "boolean"}],
            "items": {"type": "null"},
            "minItems": 0,
            "maxItems": 12,
        },
        {
            "type": "array",
            "prefixItems": [{"type": "boolean"}] * 3,
            "items": {"type": "null"},
            "minItems": 2,
            "maxItems": 14,
        },
    ],
)
def test_counted_arrays_equal_the_item_automaton(schema: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """An array read with a counter (``compiler.counted_items``) has the masks of the
    same array as one automaton state per item count (the construction it replaces
    for large counts), along random walks that stop at EOS."""
    from tokstream.constrain.json_schema import compiler

    tok = fixture_tokenizer("o200k_base")
    masker = tokstream.TokenMasker(tok)
    eos = 199999
    counted = tokstream.json_schema_constraint(tok, schema, eos_id=eos)
    monkeypatch.setattr(compiler, "_COUNTED", 10**9)
    automaton = _built_constraint(tok, schema, eos)
    rng = random.Random(repr(schema))
    for _ in range(3):
        a, b = counted.fork(), automaton.fork()
        for step in range(60):
            want, got = masker.mask(b), masker.mask(a)
            assert np.array_equal(want, got), (schema, step, np.flatnonzero(want != got)[:10])
            ids = np.flatnonzero(got)
            if not ids.size or a.is_done:
                break
            # Short tokens, so walks reach the counts' ends.
            short = [int(i) for i in ids if len(tok.vocab.index.token_bytes[int(i)]) <= 2] or ids.tolist()
            t = eos if eos in ids and rng.random() < 0.2 else int(rng.choice(short))
            assert a.accept(t) and b.accept(t)


def test_long_chains_of_empty_edges_need_no_recursion() -> None:
    """A machine whose states are joined by edges matching the empty string (an
    object's optional properties skipped one after another) is as deep as it is long:
    its fronts and derivatives are made without Python recursion (the recursive ones
    hit Python's limit here), and its language stays exact."""
    from tokstream.constrain.grammar.nodes import EMPTY

    n = 5000
    # 0 -a-> 1 and 0 -""-> 1, then "" edges to n, then b: the strings b and ab.
    edges = (((literal("a"), 1), (EMPTY, 1)), *(((EMPTY, i + 1),) for i in range(1, n)), ((literal("b"), n + 1),), ())
    dfa = compile_dfa(Machine(edges, tuple(i == n + 1 for i in range(n + 2))))
    assert dfa is not None
    assert dfa.matches("b") and dfa.matches("ab")
    assert not dfa.matches("aab") and not dfa.matches("a") and not dfa.matches("")

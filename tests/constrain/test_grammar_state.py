"""Regex and grammar constraints as values: accept / rollback / fork / refused accept,
``TokenMasker.draft_masks`` over them, errors for what the engine cannot take, and
token healing followed by a regex.

Every expectation is a mask recorded from the same constraint on another path (the
algebra must make paths commute), ``re.fullmatch``, or the Earley oracle
(``grammar_oracle``) — never a hard-coded output of the engine.
"""

from __future__ import annotations

import gc
import random
import re
from typing import Any

import numpy as np
import pytest
from grammar_oracle import GRAMMARS, REGEXES, eos_of, regex_oracle, walk
from helpers import fixture_tokenizer
from hypothesis import given
from hypothesis import strategies as st
from strategies import hyp_settings

import tokstream
from tokstream.constrain.grammar import earley
from tokstream.errors import UnsupportedGrammarError

TIDS = ("o200k_base", "hf/llama3_tokenizer.json", "hf/mistral_7b_v1_tokenizer.json")


def _make(tid: str, kind: str, name: str) -> Any:
    tok = fixture_tokenizer(tid)
    if kind == "regex":
        return tokstream.regex_constraint(tok, REGEXES[name], eos_id=eos_of(tid))
    return tokstream.grammar_constraint(tok, GRAMMARS[name], eos_id=eos_of(tid))


def _state(c: Any) -> tuple[bytes, bool, int]:
    """A constraint's observable state: its mask (as bytes), ``can_end``, ``accepted``."""
    return c.allowed_ids().tobytes(), bool(c.can_end), c.accepted


_CASES = [("regex", n) for n in sorted(REGEXES)] + [("grammar", n) for n in sorted(GRAMMARS)]


@pytest.mark.slow
@pytest.mark.parametrize("tid", TIDS)
@hyp_settings(25)
@given(case=st.sampled_from(_CASES), seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 8))
def test_accept_rollback_fork_refuse(tid: str, case: tuple[str, str], seed: int, steps: int) -> None:
    """Rolling back restores every earlier state; a fork moves independently of its
    source; a refused id (and EOS before the output can end) changes nothing."""
    rng = random.Random(seed)
    eos = eos_of(tid)
    n = fixture_tokenizer(tid).n_vocab
    c = _make(tid, *case)
    states = [_state(c)]
    taken: list[int] = []
    for _ in range(steps):
        allowed = [int(i) for i in c.allowed_ids() if i != eos]
        if not allowed:
            break
        refused = rng.choice(sorted(set(range(n)) - set(c.allowed_ids().tolist())))
        before = _state(c)
        assert not c.accept(refused)
        assert _state(c) == before, f"refused id {refused} changed the state"
        t = rng.choice(allowed)
        assert c.accept(t)
        taken.append(t)
        states.append(_state(c))
    # fork at a random point: moving the fork leaves the source as it was, and back
    k = rng.randrange(len(taken) + 1)
    c.rollback(len(taken) - k)
    assert _state(c) == states[k]
    f = c.fork()
    for t in taken[k:]:
        assert f.accept(t)
    assert _state(f) == states[-1]
    assert _state(c) == states[k]
    for t in taken[k:]:
        assert c.accept(t)
    f.rollback(len(taken))
    assert _state(f) == states[0] and _state(c) == states[-1]
    # one step at a time, back to the start
    for j in range(len(taken), 0, -1):
        assert _state(c) == states[j]
        c.rollback()
    assert _state(c) == states[0]


@pytest.mark.slow
@pytest.mark.parametrize("tid", TIDS)
@pytest.mark.parametrize("name", ["date", "email", "quoted"])
def test_draft_masks_equal_sequential_masks(tid: str, name: str) -> None:
    """``draft_masks`` over a regex constraint: row j is the mask after the first j
    draft ids; after a refused draft id every later row is all False; the constraint
    itself is unchanged."""
    masker = tokstream.TokenMasker(fixture_tokenizer(tid))
    eos = eos_of(tid)
    rng = random.Random(name)
    for trial in range(4):
        c = _make(tid, "regex", name)
        ref = c.fork()
        draft: list[int] = []
        rows = [masker.mask(ref)]
        for _ in range(5):
            allowed = [int(i) for i in ref.allowed_ids() if i != eos]
            if not allowed:
                break
            draft.append(rng.choice(allowed))
            assert ref.accept(draft[-1])
            rows.append(masker.mask(ref))
        bad_at = None
        if trial % 2 and draft:
            bad_at = rng.randrange(len(draft))
            c2 = c.fork()
            for t in draft[:bad_at]:
                assert c2.accept(t)
            draft[bad_at] = int(np.flatnonzero(~masker.mask(c2))[0])  # a refused id
        before = _state(c)
        got = masker.draft_masks(c, draft)
        assert _state(c) == before
        assert got.shape == (len(draft) + 1, masker.n_vocab)
        for j in range(len(draft) + 1):
            if bad_at is not None and j > bad_at:
                assert not got[j].any(), f"row {j} after the refused draft id at {bad_at} is not all False"
            else:
                assert np.array_equal(got[j], rows[j]), f"row {j} differs from the sequential mask"


# -- what the engine cannot take --------------------------------------------------------------------

_BAD_REGEXES = [
    ("ab(?=c)", "(?="),  # lookahead
    ("(a)b\\1", "\\1"),  # backreference
    ("x(?<=x)y", "(?<="),  # lookbehind
    ("ab(c", "("),  # unbalanced
    ("a{3,1}", "{"),  # bad repeat
]


@pytest.mark.parametrize(("pattern", "marker"), _BAD_REGEXES)
def test_regex_errors_have_offsets(pattern: str, marker: str) -> None:
    """Non-regular or malformed patterns raise ``UnsupportedGrammarError`` whose
    offset points into the offending construct's span."""
    tok = fixture_tokenizer("o200k_base")
    with pytest.raises(UnsupportedGrammarError) as info:
        tokstream.regex_constraint(tok, pattern)
    e = info.value
    at = pattern.index(marker)
    assert e.offset is not None and at <= e.offset <= len(pattern), (pattern, e.offset, str(e))


_BAD_GRAMMARS = [
    ('start: item\nitem: "a" missing\n', 2),  # an undefined rule
    ('start: "a"\nitem: "b\n', 2),  # an unterminated string
    ("start: A\nA: /a(?=b)/\n", 2),  # a lookahead in a terminal
    ('start: "a"\n\nitem: ) "b"\n', 3),  # a stray parenthesis
]


@pytest.mark.parametrize(("text", "line"), _BAD_GRAMMARS)
def test_grammar_errors_have_lines(text: str, line: int) -> None:
    """Malformed grammars raise ``UnsupportedGrammarError`` naming the line."""
    tok = fixture_tokenizer("o200k_base")
    with pytest.raises(UnsupportedGrammarError) as info:
        tokstream.grammar_constraint(tok, text)
    assert info.value.line == line, (text, info.value.line, str(info.value))


def test_grammar_without_start_raises() -> None:
    """A grammar with no ``start`` rule is refused."""
    with pytest.raises(UnsupportedGrammarError):
        tokstream.grammar_constraint(fixture_tokenizer("o200k_base"), 'item: "a"\n')


# -- token healing, then a regex ---------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("tid", TIDS)
@pytest.mark.parametrize("seed", range(3))
def test_heal_then_regex(tid: str, seed: int) -> None:
    """``heal`` backs off the word cut short ("Par"); ``regex_constraint(...,
    prefix=healing)`` first reproduces the removed bytes, then the pattern: every
    state equals the oracle of ``<removed bytes><pattern>``, and the generated text
    ends up as the prompt plus a match."""
    tok = fixture_tokenizer(tid)
    prompt = "The capital city is Par"
    ids = tok.encode(prompt)
    h = tokstream.heal(tok, ids, max_backoff=2)
    assert h.removed >= 1 and h.prefix.endswith(b"Par"), (h.removed, h.prefix)
    pattern = r"(is|ma|eto)( [A-Z][a-z]+)?"
    eos = eos_of(tid)
    c = tokstream.regex_constraint(tok, pattern, eos_id=eos, prefix=h)
    oracle = regex_oracle(re.escape(h.prefix.decode()) + "(?:" + pattern + ")")
    out, ended = walk(c, oracle, tid, seed, eos=eos, steps=12, p_eos=0.5)
    assert out.startswith(h.prefix) or h.prefix.startswith(out)
    if ended:
        assert re.fullmatch(pattern, out[len(h.prefix) :].decode())
        # the kept prompt plus the output is the whole prompt, then a match
        assert tok.decode_bytes(h.prompt_ids) + out == tok.decode_bytes(ids) + out[len(h.prefix) :]


# -- memory: a grammar forgets the sets no state holds ---------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(("name", "max_sets"), [("arith", 40), ("lists", 12)])
def test_forgetting_sets_keeps_masks_and_bounds_memory(
    name: str, max_sets: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A grammar that clears its memos every few new sets (``Grammar.max_sets``) gives
    the same masks as one that keeps them, and holds only a bounded number of sets
    across many outputs of a recursive grammar (each nesting level is a new set)."""
    # Only this grammar's own budget here (the shared one is the next test's).
    monkeypatch.setattr(earley, "MAX_SETS_ALL", 1 << 40)
    tid = "o200k_base"
    tok = fixture_tokenizer(tid)
    eos = eos_of(tid)
    keep = tokstream.grammar_constraint(tok, GRAMMARS[name], eos_id=eos)
    # Another compile of the same language (the source differs by a comment line).
    lean = tokstream.grammar_constraint(tok, GRAMMARS[name] + "\n// forgetful\n", eos_id=eos)
    grammar = lean._compiled.grammar
    assert grammar is not keep._compiled.grammar
    # Below what the outputs make, so forgetting happens (lists make few sets: a
    # lexeme's end is one set per DFA state it ends in, ``ESet.after_lexeme``).
    grammar.max_sets = max_sets
    rng = random.Random(name)
    high = 0
    for _ in range(12):
        a, b = keep.fork(), lean.fork()
        for _ in range(12):
            ids = a.allowed_ids()
            assert np.array_equal(ids, b.allowed_ids())
            assert a.can_end == b.can_end
            choices = [int(i) for i in ids if i != eos]
            if not choices:
                break
            t = rng.choice(choices)
            assert a.accept(t) and b.accept(t)
        del a, b
        gc.collect()
        high = max(high, len(grammar._intern))
    # A set held by a memo also holds the sets its items started in (their origins),
    # so the bound is a few times max_sets; without forgetting it grows per output.
    assert high <= 8 * grammar.max_sets, f"{high} sets held with max_sets={grammar.max_sets}"
    assert len(keep._compiled.grammar._intern) > high  # the memos alone keep more


@pytest.mark.slow
def test_all_grammars_forget_together(monkeypatch: pytest.MonkeyPatch) -> None:
    """After ``MAX_SETS_ALL`` new sets in all grammars, every grammar clears its memos,
    idle ones included (a server's compile cache holds many): an idle grammar keeps
    only the sets a state still holds, and its masks stay the same."""
    tid = "o200k_base"
    tok = fixture_tokenizer(tid)
    eos = eos_of(tid)
    idle = tokstream.grammar_constraint(tok, GRAMMARS["arith"] + "\n// idle\n", eos_id=eos)
    busy = tokstream.grammar_constraint(tok, GRAMMARS["arith"] + "\n// busy\n", eos_id=eos)
    rng = random.Random(7)

    def trace(c: tokstream.Constraint[Any], steps: int) -> list[np.ndarray]:
        state, masks = c.fork(), []
        for _ in range(steps):
            ids = state.allowed_ids()
            masks.append(ids)
            choices = [int(i) for i in ids if i != eos]
            if not choices:
                break
            assert state.accept(rng.choice(choices))
        return masks

    monkeypatch.setattr(earley, "MAX_SETS_ALL", 1 << 40)
    rng.seed(1)
    before = trace(idle, 30)
    gc.collect()
    grammar = idle._compiled.grammar
    held = len(grammar._intern)
    assert held > 5  # the memos keep the walk's sets
    monkeypatch.setattr(earley, "MAX_SETS_ALL", 8)
    trace(busy, 30)  # more than 8 new sets: every grammar forgets
    gc.collect()
    assert len(grammar._intern) < held
    rng.seed(1)
    assert all(np.array_equal(a, b) for a, b in zip(before, trace(idle, 30), strict=True))

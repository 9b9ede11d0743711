"""Regex and grammar constraints against llguidance, id for id, with the Earley oracle
(``grammar_oracle``) as the judge where the two differ.

llguidance's tokenizer is built from our token bytes read by the public API
(``public_token_bytes``; special tokens under their names), so both sides see the same
vocabulary. Along seeded random walks (ids drawn from what we allow, fed to both), the
non-special allowed sets are compared; every id where they differ is checked with the
oracle and we must agree with it. Where llguidance is the one that departs from the
oracle (its lexer is greedy, its ``\\w`` is Unicode's not Python's, it drops some
tokens that are proper prefixes of forced bytes), the difference is printed (``-s``
shows it) for the record, not failed. EOS: ours is allowed exactly when the oracle
says the output is complete.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from grammar_oracle import EOS_NAMES, GRAMMARS, REGEXES, Oracle, lark_oracle, regex_oracle
from helpers import fixture_tokenizer, public_token_bytes

import tokstream

llg = pytest.importorskip("llguidance")

TIDS = ("o200k_base", "hf/llama3_tokenizer.json", "hf/mistral_7b_v1_tokenizer.json")
_LLT: dict[str, Any] = {}


class _Vocab:
    """What ``llguidance.TokenizerWrapper`` reads: our tokens' bytes and specials."""

    def __init__(self, tid: str) -> None:
        tok = fixture_tokenizer(tid)
        names = {int(v): k for k, v in tok.special_tokens.items()}
        table = public_token_bytes(tid)
        self.eos_token_id = int(tok.special_tokens[EOS_NAMES[tid]])
        self.bos_token_id = None
        self.tokens = [names[i].encode() if i in names else table[i] for i in range(len(table))]
        self.special_token_ids = sorted(names)
        self._tok = tok

    def __call__(self, text: str) -> list[int]:
        return list(self._tok.encode(text))


def llg_tokenizer(tid: str) -> Any:
    """llguidance's tokenizer over our vocabulary, built once per fixture."""
    if tid not in _LLT:
        _LLT[tid] = llg.LLTokenizer(llg.TokenizerWrapper(_Vocab(tid)))
    return _LLT[tid]


def _llg_mask(m: Any, n: int) -> np.ndarray:
    bits = np.frombuffer(m.compute_bitmask(), dtype=np.uint8)
    return np.unpackbits(bits, bitorder="little")[:n].astype(bool)


def compare_walk(c: Any, m: Any, oracle: Oracle, tid: str, seed: int, steps: int, label: str) -> list[str]:
    """Walk ``c`` and llguidance's matcher ``m`` together; assert that we agree with the
    oracle on every id where the two differ; return the differences where llguidance
    does not."""
    tok = fixture_tokenizer(tid)
    table = public_token_bytes(tid)
    n = len(table)
    eos = int(tok.special_tokens[EOS_NAMES[tid]])
    text = np.array([bool(t) for t in table])
    rng = random.Random(seed)
    out = b""
    notes: list[str] = []
    for _ in range(steps):
        assert not m.is_error(), m.get_error()
        ours = np.zeros(n, dtype=bool)
        ours[c.allowed_ids()] = True
        theirs = _llg_mask(m, n)
        assert bool(ours[eos]) == oracle.complete(out), f"{label}: EOS allowed={ours[eos]} at {out!r}"
        diff = np.flatnonzero((ours != theirs) & text)
        if len(diff):
            verdict = oracle.viable_many(out, [table[i] for i in diff])
            wrong = diff[verdict != ours[diff]]
            assert not len(wrong), (
                f"{label}, output {out!r}: we differ from the oracle on ids {wrong[:8].tolist()} "
                f"{[table[i] for i in wrong[:8]]} (ours allowed: {ours[wrong[:8]].tolist()})"
            )
            sample = [(int(i), table[i], "llguidance allows" if theirs[i] else "llguidance refuses") for i in diff[:4]]
            notes.append(f"{label} at {out!r}: {len(diff)} ids, oracle sides with us; e.g. {sample}")
        # Walk on where both engines go (where they differ, the oracle has ruled), so
        # one engine's refusal at the first step does not end the comparison.
        allowed = [int(i) for i in np.flatnonzero(ours & theirs & text)]
        if not allowed:
            break
        t = rng.choice(allowed)
        assert c.accept(t)
        if not m.consume_token(t):
            notes.append(f"{label}: llguidance refused id {t} {table[t]!r} at {out!r}; walk stops")
            break
        out += table[t]
    return notes


@pytest.mark.slow
@pytest.mark.parametrize("tid", TIDS)
@pytest.mark.parametrize("name", sorted(REGEXES))
def test_regex_masks_equal_llguidance(tid: str, name: str) -> None:
    """The realistic regexes: same allowed ids as llguidance, or the oracle's."""
    pattern = REGEXES[name]
    tok = fixture_tokenizer(tid)
    eos = int(tok.special_tokens[EOS_NAMES[tid]])
    oracle = regex_oracle(pattern)
    notes: list[str] = []
    for seed in range(3):
        c = tokstream.regex_constraint(tok, pattern, eos_id=eos)
        m = llg.LLMatcher(llg_tokenizer(tid), llg.LLMatcher.grammar_from_regex(pattern), log_level=0)
        notes += compare_walk(c, m, oracle, tid, seed, 10, f"{tid} regex {name} seed {seed}")
    for note in notes:
        print(note)


@pytest.mark.slow
@pytest.mark.parametrize("tid", TIDS)
@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_grammar_masks_equal_llguidance(tid: str, name: str) -> None:
    """The grammars: same allowed ids as llguidance, or the oracle's."""
    text = GRAMMARS[name]
    tok = fixture_tokenizer(tid)
    eos = int(tok.special_tokens[EOS_NAMES[tid]])
    oracle = lark_oracle(text)
    notes: list[str] = []
    for seed in range(3):
        c = tokstream.grammar_constraint(tok, text, eos_id=eos)
        m = llg.LLMatcher(llg_tokenizer(tid), text, log_level=0)
        assert not m.is_error(), m.get_error()
        notes += compare_walk(c, m, oracle, tid, seed, 10, f"{tid} grammar {name} seed {seed}")
    for note in notes:
        print(note)

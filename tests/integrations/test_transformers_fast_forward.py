"""Fast-forward with transformers: ``ConstraintLogitsProcessor(pin_forced=True)`` and
``generate_with_fast_forward``.

References: the forced ids of a choice are tiktoken's ids of the forced text up to its
last piece (written out by hand, as in ``tests/constrain/test_forced.py``); the masks
off forced text are an independent constraint's ``TokenMasker`` mask; generated rows
fullmatch their regex (``re``); the forward passes are counted with a hook on the
model. The pinned ``generate`` (one forward pass per token) and
``generate_with_fast_forward`` (forced ids fed in one pass) give the same greedy ids.

The processor tests use numpy scores; the rest needs torch and transformers
(optional extras: skipped where absent).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from helpers import generate_one, tiktoken_reference, tiny_llama

import tokstream
from tokstream.constrain import Constraint, TokenMasker
from tokstream.constrain.constraint import PrefixConstraint
from tokstream.errors import TokstreamError
from tokstream.integrations.transformers import ConstraintLogitsProcessor, generate_with_fast_forward

TOK = tokstream.load("o200k_base")
N = TOK.n_vocab
PADDED = -(-N // 64) * 64 + 64  # padded embedding rows past the tokenizer's ids
EOS = TOK.encode("<|endoftext|>", allowed_special="all")[0]
OPTIONS = ['{"name": "Ada"}', '{"name": "Bob"}']
RECORD = r'\{"name": "[a-z]{1,6}", "age": [0-9]{1,2}\}'


def _ref_ids(text: str) -> list[int]:
    return list(tiktoken_reference("o200k_base").encode(text))


def _finite(row: np.ndarray) -> list[int]:
    return np.flatnonzero(np.isfinite(row[:N])).tolist()


def test_pin_forced_allows_only_the_first_forced_id() -> None:
    """The options share '{"name": "'; its pieces '{"', 'name', '":' are final (the last,
    ' "', may merge): those three ids are pinned one step at a time, then the
    constraint's own mask applies again."""
    pinned = ConstraintLogitsProcessor(TOK, tokstream.choice_constraint(TOK, OPTIONS, eos_id=EOS), pin_forced=True)
    plain = ConstraintLogitsProcessor(TOK, tokstream.choice_constraint(TOK, OPTIONS, eos_id=EOS))
    ref = tokstream.choice_constraint(TOK, OPTIONS, eos_id=EOS)
    masker = TokenMasker(TOK)
    want = _ref_ids('{"name":')
    input_ids = np.array([TOK.encode("Answer:")])
    rng = np.random.default_rng(0)
    for t in want:
        scores = rng.standard_normal((1, PADDED)).astype(np.float32)
        kept = float(scores[0, t])
        assert _finite(pinned(input_ids, scores)[0]) == [t]
        assert scores[0, t] == kept  # the pinned id keeps its score
        assert np.isneginf(scores[0, N:]).all()
        # The plain mask allows more than the canonical id ('{' too).
        assert len(_finite(plain(input_ids, np.zeros((1, PADDED), dtype=np.float32))[0])) > 1
        assert ref.accept(t)
        input_ids = np.concatenate([input_ids, [[t]]], axis=1)
    scores = np.zeros((1, PADDED), dtype=np.float32)
    assert _finite(pinned(input_ids, scores)[0]) == np.flatnonzero(masker.mask(ref)).tolist()


def test_pin_forced_needs_the_tokenizer() -> None:
    bare = PrefixConstraint(TOK.vocab.index, b"ab")
    ConstraintLogitsProcessor(TOK, bare)  # without pinning nothing is encoded
    with pytest.raises(TokstreamError, match="without its tokenizer"):
        ConstraintLogitsProcessor(TOK, bare, pin_forced=True)


# -- generate_with_fast_forward ------------------------------------------------------------


@pytest.fixture(scope="module")
def model() -> Any:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    return tiny_llama(PADDED, seed=1).eval()


class _Passes:
    """Counts the model's forward passes (a forward hook on the top module)."""

    def __init__(self, model: Any) -> None:
        self.n = 0
        self._handle = model.register_forward_hook(self._hook)

    def _hook(self, *args: Any) -> None:
        self.n += 1

    def close(self) -> None:
        self._handle.remove()


def _text(ids: list[int]) -> str:
    return b"".join(TOK.token_bytes(i) for i in ids if i != EOS).decode()


def _pinned_generate(model: Any, prompt: list[int], c: Constraint[Any], max_new_tokens: int) -> list[int]:
    processor = ConstraintLogitsProcessor(TOK, c, pin_forced=True)
    return generate_one(model, prompt, processor, EOS, max_new_tokens=max_new_tokens, do_sample=False)


def _forced_count(c: Constraint[Any], ids: list[int]) -> int:
    """How many of ``ids`` were forced when ``c`` followed them (an independent fork)."""
    c = c.fork()
    n = 0
    k = 0
    while k < len(ids):
        forced = c.forced_ids()
        if forced:
            assert ids[k : k + len(forced)] == forced[: len(ids) - k]
            for i in forced[: len(ids) - k]:
                assert c.accept(i)
            n += min(len(forced), len(ids) - k)
            k += len(forced)
            continue
        if ids[k] == EOS:
            break
        assert c.accept(ids[k])
        k += 1
    return n


@pytest.mark.parametrize("pattern", [RECORD, r"(yes|no), (definitely|probably) (yes|no)\."])
def test_fast_forward_skips_passes(model: Any, pattern: str) -> None:
    """Greedy: the same ids as the pinned generate, which makes one pass per id; fast
    forward makes one per id it picked (the forced ones ride along)."""
    prompt = TOK.encode("Person:")
    c = tokstream.regex_constraint(TOK, pattern, eos_id=EOS)
    passes = _Passes(model)
    try:
        ours = generate_with_fast_forward(model, TOK, prompt, c, max_new_tokens=40, eos_token_id=EOS)
        fast = passes.n
        passes.n = 0
        theirs = _pinned_generate(model, prompt, c, 40)
        slow = passes.n
    finally:
        passes.close()
    assert ours == theirs
    assert ours[-1] == EOS and re.fullmatch(pattern, _text(ours[:-1]))
    forced = _forced_count(c, ours)
    assert forced > 0
    assert slow == len(ours)
    assert fast == len(ours) - forced


def test_fast_forward_sampling_and_cap(model: Any) -> None:
    import torch

    prompt = TOK.encode("Person:")
    c = tokstream.regex_constraint(TOK, RECORD, eos_id=EOS)
    gen = torch.Generator().manual_seed(0)
    for _ in range(3):
        ids = generate_with_fast_forward(
            model, TOK, prompt, c, max_new_tokens=40, eos_token_id=EOS, do_sample=True, generator=gen
        )
        assert ids[-1] == EOS and re.fullmatch(RECORD, _text(ids[:-1])), ids
    assert c.accepted == 0  # the constraint passed in is not moved
    # The cap counts forced ids too: 2 of the 3 forced ids of '{"name": "' fit.
    capped = generate_with_fast_forward(model, TOK, prompt, c, max_new_tokens=2, eos_token_id=EOS)
    assert capped == _ref_ids('{"name":')[:2]
    assert generate_with_fast_forward(model, TOK, prompt, c, max_new_tokens=0) == []
    with pytest.raises(ValueError, match="max_new_tokens"):
        generate_with_fast_forward(model, TOK, prompt, c, max_new_tokens=-1)
    with pytest.raises(ValueError, match="prompt id"):
        generate_with_fast_forward(model, TOK, [], c, max_new_tokens=4)

"""tokstream.integrations: the transformers logits processor and the vLLM per-request
processor, driven step by step the way ``generate`` and vLLM call them.

The "model" is random logits over o200k_base's vocabulary padded to a multiple of 64
(as model embeddings are); the next id is sampled from the processed scores. Every
step's scores are checked against a reference: a constraint built independently and
fed the same ids by hand, its ``allowed_ids()`` turned into the expected finite set.
Needs torch (an optional extra, absent in CI: the module skips there); the tests at
the end also use transformers when it is installed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers import generate_one, generate_pair

torch = pytest.importorskip("torch")

import tokstream
from tokstream.constrain import Constraint, choice_constraint, heal, prefix_constraint
from tokstream.integrations.transformers import (
    ConstraintLogitsProcessor,
    heal_for_generate,
)
from tokstream.integrations.vllm import request_logits_processor

TOK = tokstream.load("o200k_base")
N = TOK.n_vocab
PADDED = -(-N // 64) * 64 + 64  # padded embedding rows past the tokenizer's ids
EOS = TOK.encode("<|endoftext|>", allowed_special="all")[0]


def _bytes(ids: list[int]) -> bytes:
    return b"".join(TOK.token_bytes(i) if i != EOS else b"" for i in ids)


def _check_row(row: Any, ref: Constraint[Any]) -> None:
    """The finite scores of ``row`` are exactly ``ref``'s allowed ids; padding is -inf."""
    finite = np.flatnonzero(torch.isfinite(row[:N]).numpy())
    assert np.array_equal(finite, ref.allowed_ids())
    assert torch.isneginf(row[N:]).all()


def _generate(
    processor: Any, prompt: Any, refs: list[Constraint[Any]], steps: int, seed: int, *, stop_at_eos: bool = False
) -> list[list[int]]:
    """Sample ``steps`` ids per row as ``generate`` does, checking each step's scores
    against ``refs`` (advanced here by hand)."""
    gen = torch.Generator().manual_seed(seed)
    input_ids = prompt.clone()
    out: list[list[int]] = [[] for _ in range(prompt.shape[0])]
    for _ in range(steps):
        scores = torch.randn(prompt.shape[0], PADDED, generator=gen) * 3
        returned = processor(input_ids, scores)
        assert returned is scores  # in place
        for r, ref in enumerate(refs):
            _check_row(scores[r], ref)
        nxt = torch.multinomial(torch.softmax(scores, dim=-1), 1, generator=gen)
        for r, ref in enumerate(refs):
            t = int(nxt[r, 0])
            assert ref.accept(t), "sampled an id the reference refuses"
            out[r].append(t)
        input_ids = torch.cat([input_ids, nxt], dim=1)
        if stop_at_eos and all(EOS in o for o in out):
            break
    return out


@pytest.mark.parametrize("seed", range(5))
def test_heal_for_generate_prefix(seed: int) -> None:
    prompt = TOK.encode("Visit https://exa")
    ids, processor = heal_for_generate(TOK, prompt, max_backoff=2)
    h = heal(TOK, prompt, max_backoff=2)
    assert ids == h.prompt_ids and h.prefix == b"exa"
    k = 3  # like num_return_sequences=3: rows repeat_interleave'd from one prompt
    refs: list[Constraint[Any]] = [h.constraint() for _ in range(k)]
    out = _generate(processor, torch.tensor([ids] * k), refs, steps=6, seed=seed)
    for row in out:
        assert _bytes(row).startswith(b"exa")
    assert all(c.is_done for c in processor.constraints)


@pytest.mark.parametrize("seed", range(5))
def test_choice_with_eos(seed: int) -> None:
    options = ["yes", "no", "maybe", "may"]
    c = choice_constraint(TOK, options, eos_id=EOS)
    processor = ConstraintLogitsProcessor(TOK, c)
    refs: list[Constraint[Any]] = [choice_constraint(TOK, options, eos_id=EOS) for _ in range(2)]
    out = _generate(processor, torch.tensor([[13225, 11]] * 2), refs, steps=12, seed=seed, stop_at_eos=True)
    for row in out:
        end = row.index(EOS)  # the choice ends with EOS within 12 steps (one byte per token at worst)
        assert _bytes(row[:end]).decode() in options
    assert c.accepted == 0  # the constraint passed in is not changed


def test_batch_rows_are_independent() -> None:
    sources: list[Constraint[Any]] = [
        prefix_constraint(TOK, b" wor"),
        choice_constraint(TOK, ["alpha", "beta"], eos_id=EOS),
    ]
    processor = ConstraintLogitsProcessor(TOK, sources)
    # 2 prompts x 2 sequences each: rows 0, 1 follow sources[0]; rows 2, 3 sources[1]
    refs: list[Constraint[Any]] = [sources[r // 2].fork() for r in range(4)]
    prompt = torch.tensor([[9906, 11, 1879]] * 4)
    out = _generate(processor, prompt, refs, steps=8, seed=7, stop_at_eos=True)
    assert all(_bytes(o).startswith(b" wor") for o in out[:2])
    assert all(_bytes(o[: o.index(EOS)]).decode() in ("alpha", "beta") for o in out[2:])
    assert [c.accepted for c in sources] == [0, 0]


def test_rows_reordered_like_beam_search() -> None:
    c = prefix_constraint(TOK, b"abcdef")
    processor = ConstraintLogitsProcessor(TOK, c, prompt_length=1)
    a, b = TOK.encode("ab")[0], TOK.encode("a")[0]
    assert TOK.token_bytes(a) == b"ab" and TOK.token_bytes(b) == b"a"
    processor(torch.tensor([[5, a], [5, b]]), torch.zeros(2, PADDED))
    # Beam search swaps the rows and extends them: the processor rolls back and refeeds.
    scores = torch.zeros(2, PADDED)
    processor(torch.tensor([[5, b, TOK.encode("b")[0]], [5, a, TOK.encode("c")[0]]]), scores)
    ref0, ref1 = prefix_constraint(TOK, b"cdef"), prefix_constraint(TOK, b"def")
    _check_row(scores[0], ref0)
    _check_row(scores[1], ref1)
    # A shorter history (assisted generation dropping candidates) rolls back too.
    scores = torch.zeros(2, PADDED)
    processor(torch.tensor([[5, b], [5, a]]), scores)
    _check_row(scores[0], prefix_constraint(TOK, b"bcdef"))
    _check_row(scores[1], prefix_constraint(TOK, b"cdef"))


def test_refused_and_out_of_range_ids_raise() -> None:
    processor = ConstraintLogitsProcessor(TOK, prefix_constraint(TOK, b" wor"))
    processor(torch.tensor([[9906]]), torch.zeros(1, PADDED))
    hello = TOK.encode(" hello")[0]
    with pytest.raises(ValueError, match=rf"row 0: generated id {hello} \(position 0 after the prompt\) is refused"):
        processor(torch.tensor([[9906, hello]]), torch.zeros(1, PADDED))
    processor = ConstraintLogitsProcessor(TOK, prefix_constraint(TOK, b" wor"))
    processor(torch.tensor([[9906]]), torch.zeros(1, PADDED))
    with pytest.raises(ValueError, match="outside the tokenizer's vocabulary"):
        processor(torch.tensor([[9906, N + 3]]), torch.zeros(1, PADDED))


def test_shape_errors() -> None:
    sources: list[Constraint[Any]] = [prefix_constraint(TOK, b"a"), prefix_constraint(TOK, b"b")]
    with pytest.raises(ValueError, match="not a multiple of the 2 constraints"):
        ConstraintLogitsProcessor(TOK, sources)(torch.zeros(3, 2, dtype=torch.long), torch.zeros(3, PADDED))
    processor = ConstraintLogitsProcessor(TOK, sources)
    processor(torch.zeros(2, 2, dtype=torch.long), torch.zeros(2, PADDED))
    with pytest.raises(ValueError, match="make a new ConstraintLogitsProcessor"):
        processor(torch.zeros(4, 3, dtype=torch.long), torch.zeros(4, PADDED))
    with pytest.raises(ValueError, match="another tokenizer"):
        ConstraintLogitsProcessor(tokstream.load("cl100k_base"), sources)
    with pytest.raises(ValueError, match="fewer than the tokenizer's n_vocab"):
        ConstraintLogitsProcessor(TOK, sources)(torch.zeros(2, 2, dtype=torch.long), torch.zeros(2, N - 1))


def test_half_precision_scores() -> None:
    processor = ConstraintLogitsProcessor(TOK, prefix_constraint(TOK, b" wor"))
    scores = torch.randn(1, PADDED).to(torch.bfloat16)
    processor(torch.tensor([[9906]]), scores)
    _check_row(scores[0].float(), prefix_constraint(TOK, b" wor"))


@pytest.mark.parametrize("seed", range(3))
def test_vllm_request_processor(seed: int) -> None:
    options = ["yes", "no", "maybe"]
    p = request_logits_processor(TOK, choice_constraint(TOK, options, eos_id=EOS))
    ref = choice_constraint(TOK, options, eos_id=EOS)
    gen = torch.Generator().manual_seed(seed)
    output_ids: list[int] = []  # vLLM hands the same list, grown in place
    while EOS not in output_ids:
        row = torch.randn(PADDED, generator=gen)
        assert p(output_ids, row) is row
        _check_row(row, ref)
        t = int(torch.multinomial(torch.softmax(row, dim=-1), 1, generator=gen))
        assert ref.accept(t)
        output_ids.append(t)
        assert len(output_ids) < 12
    assert _bytes(output_ids[:-1]).decode() in options
    assert not p.constraint.is_done  # EOS not seen yet: the next call feeds it
    row = p(output_ids, torch.zeros(PADDED))
    assert p.constraint.is_done and torch.isfinite(row[:N]).all() and torch.isneginf(row[N:]).all()
    with pytest.raises(ValueError, match="request: generated id"):
        request_logits_processor(TOK, choice_constraint(TOK, options))([TOK.encode(" hello")[0]], torch.zeros(PADDED))


# -- with transformers itself, when installed ----------------------------------------------


def test_transformers_logits_processor_list() -> None:
    transformers = pytest.importorskip("transformers")
    processor = ConstraintLogitsProcessor(TOK, prefix_constraint(TOK, b" wor"))
    scores = transformers.LogitsProcessorList([processor])(torch.tensor([[9906]]), torch.zeros(1, PADDED))
    _check_row(scores[0], prefix_constraint(TOK, b" wor"))


@pytest.mark.parametrize("mode", ["sample", "beam"])
def test_transformers_generate_tiny_model(mode: str) -> None:
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=PADDED, n_positions=64, n_embd=16, n_layer=1, n_head=2)
    model = transformers.GPT2LMHeadModel(config).eval()
    options = ["yes", "no", "maybe"]
    ids, _ = heal_for_generate(TOK, TOK.encode("Answer:"), max_backoff=1)
    processor = ConstraintLogitsProcessor(TOK, choice_constraint(TOK, options, eos_id=EOS))
    rows = generate_pair(model, ids, processor, mode, 10, EOS)
    for row in rows:
        end = row.index(EOS)
        assert _bytes(row[:end]).decode() in options


# -- what generate's own processors (run before ours) and reuse do -------------------------


def _tiny_gpt2(vocab_size: int) -> Any:
    """A tiny random GPT-2 over ``vocab_size`` ids (seeded, eval mode)."""
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=vocab_size, n_positions=64, n_embd=16, n_layer=1, n_head=2)
    return transformers.GPT2LMHeadModel(config).eval()


def _generate_one(model: Any, ids: list[int], processor: Any, **kwargs: Any) -> list[int]:
    """``model.generate`` on one prompt under ``processor``; the new ids."""
    pytest.importorskip("transformers")
    return generate_one(model, ids, processor, EOS, **kwargs)


X = TOK.encode("x")[0]


@pytest.mark.parametrize("do_sample", [False, True])
@pytest.mark.parametrize(
    ("option", "options", "prompt"),
    [
        # "yes"/"no" then EOS, but min_new_tokens bans EOS for 5 tokens
        ({"min_new_tokens": 5}, ["yes", "no"], TOK.encode("Answer:")),
        # the only allowed id, "x", is in the prompt: no_repeat_ngram_size=1 bans it
        ({"no_repeat_ngram_size": 1}, ["x"], [X, *TOK.encode(" is")]),
    ],
)
def test_earlier_processor_bans_every_allowed_id(
    option: dict[str, int], options: list[str], prompt: list[int], do_sample: bool
) -> None:
    """generate runs its own processors before ours; when they ban every id the
    constraint allows, the error names that cause (before the fix: greedy picked id 0
    and the refusal blamed "a processor after this one"; sampling died in torch with
    "probability tensor contains either `inf`, `nan` or element < 0")."""
    model = _tiny_gpt2(PADDED)
    processor = ConstraintLogitsProcessor(TOK, choice_constraint(TOK, options, eos_id=EOS))
    with pytest.raises(ValueError, match=r"row 0 \(position \d after the prompt\): the constraint allows 1 id") as e:
        _generate_one(model, prompt, processor, do_sample=do_sample, **option)
    assert next(iter(option)) in str(e.value) and "processor after this one" not in str(e.value)
    # Without the option the same generation is fine.
    processor = ConstraintLogitsProcessor(TOK, choice_constraint(TOK, options, eos_id=EOS))
    row = _generate_one(model, prompt, processor, do_sample=do_sample)
    assert _bytes(row[: row.index(EOS)]).decode() in options


def test_rows_without_finite_scores_numpy() -> None:
    """The check works on numpy scores too, and only for rows the constraint restricts."""
    sources: list[Constraint[Any]] = [choice_constraint(TOK, ["x"], eos_id=EOS), prefix_constraint(TOK, b"")]
    processor = ConstraintLogitsProcessor(TOK, sources)
    scores = np.zeros((2, PADDED), dtype=np.float32)
    scores[:, X] = -np.inf  # row 1's constraint is done: every id allowed, the rest is finite
    with pytest.raises(
        ValueError, match=rf"row 0 \(position 0 after the prompt\): the constraint allows 1 id\(s\) \({X}\)"
    ):
        processor(np.array([[9906], [9906]]), scores)
    processor = ConstraintLogitsProcessor(TOK, sources)
    scores = np.full((2, PADDED), -np.inf, dtype=np.float32)
    scores[0, X] = 0.0
    processor(np.array([[9906], [9906]]), scores)  # row 1 banned by others, not restricted: not ours


def test_reuse_with_another_prompt_raises() -> None:
    """One processor per generate call: a second call with a longer prompt, the same
    length, or the previous output plus more ids raises a clear error (before the fix
    the longer prompt's ids were fed to the constraint as generated ones and the
    refusal blamed "a processor after this one")."""
    model = _tiny_gpt2(PADDED)
    options = ["yes", "no"]
    processor = ConstraintLogitsProcessor(TOK, choice_constraint(TOK, options, eos_id=EOS))
    first = TOK.encode("Answer:")
    row = _generate_one(model, first, processor)
    assert EOS in row
    reuse = "is being reused for another generate call"
    with pytest.raises(ValueError, match=reuse):  # longer
        _generate_one(model, TOK.encode("A much longer question here, isn't it?"), processor)
    with pytest.raises(ValueError, match=rf"differ from the prompt of this processor's first call.*{reuse}"):
        _generate_one(model, TOK.encode("Reply:")[:2] + [1] * (len(first) - 2), processor)  # same length
    with pytest.raises(ValueError, match=rf"more than at the previous call.*{reuse}"):
        _generate_one(model, first + row + TOK.encode(" Again?"), processor)  # output plus a new turn
    with pytest.raises(ValueError, match="fewer than prompt_length"):  # shorter
        _generate_one(model, first[:1], processor)
    # A fresh processor per call is the way.
    row = _generate_one(
        model,
        TOK.encode("A much longer question here, isn't it?"),
        ConstraintLogitsProcessor(TOK, choice_constraint(TOK, options, eos_id=EOS)),
    )
    assert _bytes(row[: row.index(EOS)]).decode() in options

"""A regex constraint in a real transformers ``generate``: ``ConstraintLogitsProcessor``
over ``tokstream.regex_constraint`` with a tiny random GPT-2 over o200k_base's
vocabulary; every generated row, up to EOS, fullmatches the regex (``re``).

Needs torch and transformers (optional extras, absent in CI: the module skips there,
as ``test_transformers_integration.py`` does).
"""

from __future__ import annotations

import re

import pytest
from helpers import generate_pair

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import tokstream
from tokstream.integrations.transformers import ConstraintLogitsProcessor

TOK = tokstream.load("o200k_base")
N = TOK.n_vocab
PADDED = -(-N // 64) * 64 + 64  # padded embedding rows past the tokenizer's ids
EOS = TOK.encode("<|endoftext|>", allowed_special="all")[0]


def _text(ids: list[int]) -> str:
    return b"".join(TOK.token_bytes(i) for i in ids).decode()


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["sample", "beam"])
@pytest.mark.parametrize("pattern", [r"\d{4}-\d{2}-\d{2}", r"(yes|no)( please)?", r"[a-c]{2,5}"])
def test_generate_fullmatches_regex(mode: str, pattern: str) -> None:
    """Sampled or beam-searched rows, cut at EOS, fullmatch the pattern."""
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=PADDED, n_positions=64, n_embd=16, n_layer=1, n_head=2)
    model = transformers.GPT2LMHeadModel(config).eval()
    ids = TOK.encode("Answer:")
    processor = ConstraintLogitsProcessor(TOK, tokstream.regex_constraint(TOK, pattern, eos_id=EOS))
    rows = generate_pair(model, ids, processor, mode, 48, EOS)
    for row in rows:
        assert EOS in row, f"no EOS within 48 tokens: {row}"  # every match is at most 40 bytes
        assert re.fullmatch(pattern, _text(row[: row.index(EOS)])), row


@pytest.mark.parametrize("seed", range(3))
def test_vllm_request_processor_regex(seed: int) -> None:
    """vLLM's per-request processor over a regex constraint: sampling from the
    processed rows (vLLM hands the growing output list each call) ends in EOS after a
    text that fullmatches the pattern, and padded columns stay -inf."""
    from tokstream.integrations.vllm import request_logits_processor

    pattern = r"[0-9]{1,3}(\.[0-9]{1,3}){3}"
    p = request_logits_processor(TOK, tokstream.regex_constraint(TOK, pattern, eos_id=EOS))
    gen = torch.Generator().manual_seed(seed)
    output_ids: list[int] = []
    while EOS not in output_ids:
        row = p(output_ids, torch.randn(PADDED, generator=gen))
        assert torch.isneginf(row[N:]).all()
        t = int(torch.multinomial(torch.softmax(row, dim=-1), 1, generator=gen))
        output_ids.append(t)
        assert len(output_ids) < 40
    assert re.fullmatch(pattern, _text(output_ids[:-1])), output_ids

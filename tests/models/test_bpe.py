"""Hugging Face BPE (``models/bpe.py``) on hostile model objects: what ``tokenizers``
refuses we refuse, what it reads we read to its ids, and ``dropout`` (which would make
ids random) is refused.

The corpus and adversarial differential tests of BPE run on the fixture files in
``tests/formats/test_hf_json.py``; here each case is a small edit of the GPT-2 or Mistral
file, compared with ``tokenizers`` on the same text.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers import fixture_text

from tokstream import Tokenizer
from tokstream.errors import TokenizerFileError
from tokstream.models import BPE

tokenizers = pytest.importorskip("tokenizers")

SAMPLES = ["Hello, world! It's 2024; y'all   ok?", " unaffable  aaaa \n\t12345", "日本語 👍🏽 é"]


def _file(name: str) -> dict[str, Any]:
    obj: dict[str, Any] = json.loads(fixture_text(f"hf/{name}"))
    obj["padding"] = obj["truncation"] = None
    return obj


def _same_as_tokenizers(obj: dict[str, Any]) -> None:
    text = json.dumps(obj)
    ref = tokenizers.Tokenizer.from_str(text)
    ours = Tokenizer.from_str(text)
    for sample in SAMPLES:
        want = ref.encode(sample).ids
        assert ours.encode(sample, allowed_special="all", add_special_tokens=True) == want, sample
        assert ours.decode(want) == ref.decode(want, skip_special_tokens=False), sample


def test_merges_are_required() -> None:
    """tokenizers refuses a BPE model without ``merges`` ("Missing vocab/merges"); we
    loaded it as merge-less."""
    obj = _file("gpt2_tokenizer.json")
    del obj["model"]["merges"]
    with pytest.raises(Exception, match="merges"):
        tokenizers.Tokenizer.from_str(json.dumps(obj))
    with pytest.raises(TokenizerFileError, match=r"model: missing field 'merges'"):
        Tokenizer.from_str(json.dumps(obj))


def test_empty_merges_load() -> None:
    obj = _file("gpt2_tokenizer.json")
    obj["model"]["merges"] = []
    _same_as_tokenizers(obj)


@pytest.mark.parametrize("dropout", [0.1, 0.5, 1.0])
def test_dropout_is_refused(dropout: float) -> None:
    """tokenizers applies dropout at random on every encode; we ignored it silently."""
    obj = _file("gpt2_tokenizer.json")
    obj["model"]["dropout"] = dropout
    tokenizers.Tokenizer.from_str(json.dumps(obj))  # tokenizers reads it
    with pytest.raises(TokenizerFileError, match=r"model\.dropout: .* training-time option"):
        Tokenizer.from_str(json.dumps(obj))
    with pytest.raises(ValueError, match="training-time option"):
        BPE({"a": 0}, [], dropout=dropout)


def test_zero_dropout_is_no_dropout() -> None:
    obj = _file("gpt2_tokenizer.json")
    obj["model"]["dropout"] = 0.0
    _same_as_tokenizers(obj)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gpt2_tokenizer.json", "mistral_7b_v1_tokenizer.json"])
@pytest.mark.parametrize("key", ["continuing_subword_prefix", "end_of_word_suffix"])
def test_empty_prefix_and_suffix_match_tokenizers(name: str, key: str) -> None:
    """An empty continuing-subword prefix or end-of-word suffix is no prefix at all, in
    tokenizers as here."""
    obj = _file(name)
    obj["model"][key] = ""
    _same_as_tokenizers(obj)


def test_repeated_merge_takes_its_last_rank_as_tokenizers() -> None:
    """A pair listed twice merges at its last rank, as in ``tokenizers`` (whose merge map
    is a hash map collected in order); tokstream took the first until 2026-12."""
    import tokenizers

    spec = {
        "version": "1.0",
        "model": {
            "type": "BPE",
            "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5},
            "merges": ["b c", "a b", "ab c", "b c"],
        },
    }
    ref = tokenizers.Tokenizer.from_str(json.dumps(spec))
    ours = Tokenizer.from_str(json.dumps(spec))
    spec["model"]["merges"] = ["a b", "b c", "ab c", "b c"]  # type: ignore[index]
    ref2 = tokenizers.Tokenizer.from_str(json.dumps(spec))
    ours2 = Tokenizer.from_str(json.dumps(spec))
    for text in ("abc", "abcabc", "bcab", "aabbcc", "abcb" * 13):
        assert ours.encode(text) == ref.encode(text).ids, text
        assert ours2.encode(text) == ref2.encode(text).ids, text


@pytest.mark.parametrize("rank_bits", [20, 4])  # packed sort; ranks too wide: argsort
def test_pair_table_answers_as_a_last_wins_dict(rank_bits: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """``_PairTable`` (merges sorted by left id, loaded per left id) against the plain
    dict it replaces."""
    import random

    import numpy as np

    from tokstream.models import bpe

    monkeypatch.setattr(bpe, "_RANK_BITS", rank_bits)
    rng = random.Random(rank_bits)
    n, stride = 300, 7
    a = np.array([rng.randrange(7) for _ in range(n)], np.uint64)
    b = np.array([rng.randrange(7) for _ in range(n)], np.uint64)
    new = np.array([rng.randrange(100) for _ in range(n)], np.int64)
    oracle: dict[int, int] = {}
    for rank in range(n):
        oracle[int(a[rank]) * stride + int(b[rank])] = rank << 32 | int(new[rank])
    table = bpe._PairTable(a, b, new, stride)
    for left in range(7):
        table.need(left)
        table.need(left)  # loading twice changes nothing
        for right in range(7):
            key = left * stride + right
            assert table.get(key, bpe._NO_MERGE) == oracle.get(key, bpe._NO_MERGE)

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


@pytest.mark.parametrize("name", ["gpt2_tokenizer.json", "mistral_7b_v1_tokenizer.json"])
@pytest.mark.parametrize("key", ["continuing_subword_prefix", "end_of_word_suffix"])
def test_empty_prefix_and_suffix_match_tokenizers(name: str, key: str) -> None:
    """An empty continuing-subword prefix or end-of-word suffix is no prefix at all, in
    tokenizers as here."""
    obj = _file(name)
    obj["model"][key] = ""
    _same_as_tokenizers(obj)

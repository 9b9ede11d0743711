"""``FixedLength`` against ``tokenizers``' on hand-made ``tokenizer.json`` files: ids,
tokens, offsets and decode on edge cases and hypothesis text, its JSON (length 0 is
refused where ``tokenizers`` would panic), pickling and streaming."""

from __future__ import annotations

import json
import pickle

import pytest
from helpers import assert_same_as_tokenizers, assert_streams_like_encode, hf_pair
from hypothesis import given
from hypothesis import strategies as st
from strategies import adversarial_text, hyp_settings

from tokstream import Tokenizer
from tokstream.errors import TokenizerFileError
from tokstream.pipeline import tokenizer_json
from tokstream.pre_tokenizers import FixedLength, pre_tokenizer_from_json

tokenizers = pytest.importorskip("tokenizers")

# A BPE over a small alphabet, other characters unknown: chunks of 1-5 characters
# merge inside, never across.
_ALPHABET = "".join(dict.fromkeys("abcdefgh lo wrd,.!日本👋é"))
_MERGES = [["a", "b"], ["ab", "c"], ["l", "o"], ["lo", " "], ["日", "本"], ["d", "e"], ["de", "f"]]
_VOCAB = {"<unk>": 0} | {c: i + 1 for i, c in enumerate(_ALPHABET)}
_VOCAB |= {"".join(m): len(_VOCAB) + i for i, m in enumerate(_MERGES)}
BPE = {"type": "BPE", "vocab": _VOCAB, "merges": _MERGES, "unk_token": "<unk>"}
ADDED = [
    {
        "id": len(_VOCAB),
        "content": "<eos>",
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": False,
        "special": True,
    },
]


def doc(pre: dict[str, object]) -> dict[str, object]:
    return tokenizer_json(model=BPE, pre_tokenizer=pre, added_tokens=ADDED)


DOCS = {
    "default": doc({"type": "FixedLength"}),
    "3": doc({"type": "FixedLength", "length": 3}),
    "1": doc({"type": "FixedLength", "length": 1}),
    "after_whitespace": doc(
        {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, {"type": "FixedLength", "length": 2}]}
    ),
}
EDGE_CASES = [
    "",
    " ",
    "a",
    "abcde",
    "abcdef",
    "Hello world",
    "abcabcabc",
    "日本日本日本",
    "👋 abc 👋",
    "lo lo lo lo",
    "é" * 11,
    "ab<eos>cdef<eos>",
]


@pytest.fixture(scope="module", params=sorted(DOCS))
def pair(request: pytest.FixtureRequest) -> tuple[Tokenizer, object]:
    return hf_pair(DOCS[request.param])


@pytest.mark.parametrize("text", EDGE_CASES)
def test_edge_cases(pair: tuple[Tokenizer, object], text: str) -> None:
    assert_same_as_tokenizers(*pair, text)


_soup = st.one_of(st.text(alphabet=_ALPHABET + "<eos>", max_size=40), adversarial_text(surrogates_ok=False))


@pytest.mark.slow
@hyp_settings(2000)
@given(text=_soup)
def test_hypothesis_text(pair: tuple[Tokenizer, object], text: str) -> None:
    assert_same_as_tokenizers(*pair, text)


@pytest.mark.slow
@hyp_settings(500)
@given(text=_soup, data=st.data())
def test_streaming_equals_one_shot(pair: tuple[Tokenizer, object], text: str, data: st.DataObject) -> None:
    assert_streams_like_encode(pair[0], text, data.draw(st.lists(st.integers(0, len(text)), max_size=8)))


def test_json_round_trip_and_pickle() -> None:
    for name, d in DOCS.items():
        ours, _ = hf_pair(d)
        saved = json.dumps(ours.pipeline.to_json())
        theirs = tokenizers.Tokenizer.from_str(saved)
        assert json.loads(saved)["pre_tokenizer"] == json.loads(theirs.to_str())["pre_tokenizer"], name
        back = pickle.loads(pickle.dumps(ours))
        for text in EDGE_CASES:
            ids = ours.encode(text, allowed_special="all")
            assert ids == theirs.encode(text, add_special_tokens=False).ids == back.encode(text, allowed_special="all")


@pytest.mark.parametrize("length", [None, -1, 2.0, True, "3"])
def test_bad_length_fails_as_in_tokenizers(length: object) -> None:
    obj = {"type": "FixedLength", "length": length}
    with pytest.raises(Exception):  # tokenizers raises a bare Exception
        tokenizers.Tokenizer.from_str(json.dumps(doc(obj)))
    with pytest.raises(TokenizerFileError, match=r"pre_tokenizer\.length: expected"):
        pre_tokenizer_from_json(obj)


def test_zero_length_is_refused_on_load() -> None:
    # tokenizers loads it and panics on the first non-empty text; we refuse the file.
    theirs = tokenizers.Tokenizer.from_str(json.dumps(doc({"type": "FixedLength", "length": 0})))
    with pytest.raises(BaseException, match="chunk size must be non-zero"):
        theirs.encode("a")
    with pytest.raises(TokenizerFileError, match=r"pre_tokenizer\.length: expected a length of at least 1, got 0"):
        pre_tokenizer_from_json({"type": "FixedLength", "length": 0})
    assert FixedLength().length == 5

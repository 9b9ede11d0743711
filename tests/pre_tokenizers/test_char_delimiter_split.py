"""``CharDelimiterSplit`` against ``tokenizers``' on hand-made ``tokenizer.json`` files:
ids, tokens, offsets and decode on edge cases and hypothesis text, its JSON, pickling
and streaming."""

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
from tokstream.pre_tokenizers import pre_tokenizer_from_json

tokenizers = pytest.importorskip("tokenizers")

_WORDS = ["[UNK]", "a", "b", "ab", "hello", "world", "日本", "👋", " ", "a b", "x|y"]
WORDLEVEL = {"type": "WordLevel", "vocab": {w: i for i, w in enumerate(_WORDS)}, "unk_token": "[UNK]"}
ADDED = [
    {
        "id": len(_WORDS),
        "content": "<s>",
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": False,
        "special": True,
    },
]


def doc(delimiter: str) -> dict[str, object]:
    return tokenizer_json(
        model=WORDLEVEL,
        added_tokens=ADDED,
        pre_tokenizer={"type": "CharDelimiterSplit", "delimiter": delimiter},
        decoder={"type": "Fuse"},
    )


DOCS = {"pipe": doc("|"), "space": doc(" "), "emoji": doc("👋"), "letter": doc("a")}
EDGE_CASES = ["", "|", "||", "a|b", "|a||b|", "a b", " a  b ", "hello👋world", "👋👋", "aaa", "banana", "a<s>|b", "x|y"]


@pytest.fixture(scope="module", params=sorted(DOCS))
def pair(request: pytest.FixtureRequest) -> tuple[Tokenizer, object]:
    return hf_pair(DOCS[request.param])


@pytest.mark.parametrize("text", EDGE_CASES)
def test_edge_cases(pair: tuple[Tokenizer, object], text: str) -> None:
    assert_same_as_tokenizers(*pair, text)


_soup = st.one_of(
    st.lists(st.sampled_from([*_WORDS, "|", "👋", "<s>", "  "]), max_size=12).map("".join),
    adversarial_text(surrogates_ok=False),
)


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


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ({"type": "CharDelimiterSplit"}, "missing field 'delimiter'"),
        ({"type": "CharDelimiterSplit", "delimiter": ""}, r"pre_tokenizer\.delimiter: expected one character"),
        ({"type": "CharDelimiterSplit", "delimiter": "ab"}, r"pre_tokenizer\.delimiter: expected one character"),
        ({"type": "CharDelimiterSplit", "delimiter": 1}, r"pre_tokenizer\.delimiter: expected a string"),
        ({"type": "CharDelimiterSplit", "delimiter": None}, r"pre_tokenizer\.delimiter: expected a string"),
    ],
)
def test_bad_delimiter_fails_as_in_tokenizers(obj: dict[str, object], message: str) -> None:
    with pytest.raises(Exception):  # tokenizers raises a bare Exception
        tokenizers.Tokenizer.from_str(json.dumps(tokenizer_json(model=WORDLEVEL, pre_tokenizer=obj)))
    with pytest.raises(TokenizerFileError, match=message):
        pre_tokenizer_from_json(obj)

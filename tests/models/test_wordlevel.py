"""WordLevel against ``tokenizers``' ``WordLevel`` on hand-made ``tokenizer.json`` files:
ids, tokens, offsets and decode on edge cases and hypothesis text, the unknown-token
rules (a ``unk_token`` missing from the vocabulary fails where ``tokenizers`` fails),
the JSON round trip, pickling and streaming."""

from __future__ import annotations

import json
import pickle

import pytest
from helpers import assert_same_as_tokenizers, assert_streams_like_encode, hf_pair
from hypothesis import given
from hypothesis import strategies as st
from strategies import adversarial_text, hyp_settings

from tokstream import Tokenizer
from tokstream.errors import TokenizerFileError, TokstreamError
from tokstream.models import WordLevel, model_from_json
from tokstream.pipeline import tokenizer_json

tokenizers = pytest.importorskip("tokenizers")

WORDS = ["hello", "world", "a", "b", "ab", ",", ".", "!", "日本", "語", "é", "e\u0301", "👋", "[UNK]"]
VOCAB = {w: i for i, w in enumerate(WORDS)} | {"gap": 40}  # ids need not be dense
# tokenizers numbers added tokens from the vocabulary size (15), whatever the file says.
ADDED = [
    {
        "id": 15,
        "content": "[CLS]",
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": False,
        "special": True,
    },
    {
        "id": 16,
        "content": "[SEP]",
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": False,
        "special": True,
    },
    {
        "id": 17,
        "content": "new word",
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": True,
        "special": False,
    },
]
BERT_POST = {"type": "BertProcessing", "sep": ["[SEP]", 16], "cls": ["[CLS]", 15]}


def model(unk: str = "[UNK]", vocab: dict[str, int] = VOCAB) -> dict[str, object]:
    return {"type": "WordLevel", "vocab": vocab, "unk_token": unk}


#: The shapes a WordLevel file comes in: words by whitespace (with a template and
#: added tokens), the whole text as one word, and words by a Sequence of splits.
DOCS = {
    "whitespace": tokenizer_json(
        model=model(), added_tokens=ADDED, pre_tokenizer={"type": "Whitespace"}, post_processor=BERT_POST
    ),
    "no_pre_tokenizer": tokenizer_json(model=model(), added_tokens=ADDED[:2]),
    "sequence": tokenizer_json(
        model=model(),
        normalizer={"type": "Lowercase"},
        pre_tokenizer={
            "type": "Sequence",
            "pretokenizers": [{"type": "WhitespaceSplit"}, {"type": "Punctuation", "behavior": "Isolated"}],
        },
        decoder={"type": "WordPiece", "prefix": "##", "cleanup": True},
    ),
}

EDGE_CASES = [
    "",
    " ",
    "hello",
    "hello world",
    "  hello   world  ",
    "Hello, World!",
    "hello,world.",
    "ab a b abab",
    "日本語 日本",
    "é e\u0301 ée\u0301",
    "👋 hello👋",
    "[UNK] [CLS] hello [SEP]",
    "[CLS]hello[SEP]",
    "a new word b",
    "gap",
    "\n\thello\r\n",
    "unknown words everywhere",
]


@pytest.fixture(scope="module", params=sorted(DOCS))
def pair(request: pytest.FixtureRequest) -> tuple[Tokenizer, object]:
    return hf_pair(DOCS[request.param])


@pytest.mark.parametrize("text", EDGE_CASES)
def test_edge_cases(pair: tuple[Tokenizer, object], text: str) -> None:
    assert_same_as_tokenizers(*pair, text)


_word_soup = st.lists(
    st.one_of(st.sampled_from([*WORDS, "[CLS]", "new word", " ", "  ", "\n"]), adversarial_text(surrogates_ok=False)),
    max_size=12,
).map(" ".join)


@pytest.mark.slow
@hyp_settings(2000)
@given(text=st.one_of(_word_soup, adversarial_text(surrogates_ok=False)))
def test_hypothesis_text(pair: tuple[Tokenizer, object], text: str) -> None:
    assert_same_as_tokenizers(*pair, text)


# ----------------------------------------------------------------- unknown token


def test_unk_token_missing_from_vocab_fails_where_tokenizers_fails() -> None:
    ours, theirs = hf_pair(tokenizer_json(model=model(unk="<unk>"), pre_tokenizer={"type": "Whitespace"}))
    assert ours.encode("hello world") == theirs.encode("hello world").ids
    with pytest.raises(Exception, match="Missing \\[UNK\\] token"):
        theirs.encode("hello there")
    with pytest.raises(TokstreamError, match="not in the WordLevel vocabulary and neither is its unk_token '<unk>'"):
        ours.encode("hello there")
    with pytest.raises(TokstreamError):
        ours.encode_with_offsets("there")
    assert WordLevel(VOCAB, unk_token="<unk>").unknown_id is None


def test_unknown_word_is_unk_token_whole() -> None:
    wl = WordLevel(VOCAB, unk_token="[UNK]")
    assert wl.encode_piece("helloworld") == (VOCAB["[UNK]"],)
    assert wl.encode_piece_spans("xyz") == [(VOCAB["[UNK]"], 0, 3)]
    assert wl.encode_piece("") == ()
    assert wl.unknown_id == VOCAB["[UNK]"]
    assert wl.vocab_size == len(VOCAB)


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ({"type": "WordLevel", "vocab": {"a": 0}}, "missing field 'unk_token'"),
        ({"type": "WordLevel", "vocab": {"a": 0}, "unk_token": None}, "model.unk_token: expected a string, got null"),
        ({"type": "WordLevel", "unk_token": "a"}, "missing field 'vocab'"),
        ({"type": "WordLevel", "vocab": {"a": -1}, "unk_token": "a"}, r'model.vocab\["a"\]'),
        ({"type": "WordLevel", "vocab": {"a": "0"}, "unk_token": "a"}, r'model.vocab\["a"\]'),
        ({"type": "WordLevel", "vocab": [], "unk_token": "a"}, "model.vocab: expected an object"),
    ],
)
def test_malformed_json_fails_as_in_tokenizers(obj: dict[str, object], message: str) -> None:
    with pytest.raises(Exception):  # tokenizers raises a bare Exception
        tokenizers.Tokenizer.from_str(json.dumps(tokenizer_json(model=obj)))
    with pytest.raises(TokenizerFileError, match=message):
        model_from_json(obj)


def test_extra_keys_are_ignored() -> None:
    obj = {"type": "WordLevel", "vocab": {"a": 0, "[UNK]": 1}, "unk_token": "[UNK]", "extra": True}
    ours, theirs = hf_pair(tokenizer_json(model=obj))
    assert ours.encode("a") == theirs.encode("a").ids == [0]
    assert ours.encode("b") == theirs.encode("b").ids == [1]
    # The class reads an object without "type" too (tokenizers' WordLevel does).
    assert WordLevel.from_json({"vocab": {"a": 0}, "unk_token": "a"}).encode_piece("b") == (0,)
    with pytest.raises(TokenizerFileError, match=r"model\.type: expected 'WordLevel'"):
        WordLevel.from_json({"type": "WordPiece", "vocab": {"a": 0}, "unk_token": "a"})


# ------------------------------------------------------------ saving, pickling


@pytest.mark.parametrize("name", sorted(DOCS))
def test_to_json_loads_in_tokenizers_to_the_same_ids(name: str) -> None:
    ours, _ = hf_pair(DOCS[name])
    saved = json.dumps(ours.pipeline.to_json())
    theirs = tokenizers.Tokenizer.from_str(saved)
    assert json.loads(saved)["model"] == json.loads(theirs.to_str())["model"]
    again = Tokenizer.from_str(saved)
    for text in EDGE_CASES:
        ids = ours.encode(text, allowed_special="all")
        assert ids == theirs.encode(text, add_special_tokens=False).ids == again.encode(text, allowed_special="all")
    assert again.fingerprint == ours.fingerprint


@pytest.mark.parametrize("name", sorted(DOCS))
def test_pickle(name: str) -> None:
    ours, _ = hf_pair(DOCS[name])
    back = pickle.loads(pickle.dumps(ours))
    model_back = pickle.loads(pickle.dumps(ours.pipeline.model))
    for text in EDGE_CASES:
        assert back.encode(text, allowed_special="all") == ours.encode(text, allowed_special="all")
        assert model_back.encode_piece(text) == ours.pipeline.model.encode_piece(text)


# --------------------------------------------------------------------- streaming


@pytest.mark.slow
@hyp_settings(500)
@given(text=st.one_of(_word_soup, adversarial_text(surrogates_ok=False)), data=st.data())
def test_streaming_equals_one_shot(pair: tuple[Tokenizer, object], text: str, data: st.DataObject) -> None:
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=8))
    assert_streams_like_encode(pair[0], text, cuts)

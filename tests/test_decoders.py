"""The CTC decoder against ``tokenizers``' ``CTC`` on a hand-made character-level
``tokenizer.json`` (a wav2vec2-style vocabulary): decode of drawn id sequences (runs of
repeats, pads, delimiters, specials), encode round trips, its JSON, pickling and
``StreamDecoder`` (which decodes a CTC stream whole at its end)."""

from __future__ import annotations

import json
import pickle

import pytest
from helpers import assert_same_as_tokenizers, hf_pair
from hypothesis import given
from hypothesis import strategies as st
from strategies import hyp_settings

from tokstream import StreamDecoder, Tokenizer
from tokstream.decoders import CTC, decoder_from_json
from tokstream.errors import TokenizerFileError
from tokstream.pipeline import tokenizer_json

tokenizers = pytest.importorskip("tokenizers")

SPECIALS = ["<pad>", "<s>", "</s>", "<unk>"]
CHARS = ["|", "E", "T", "A", "O", "N", "I", "H", "S", "'", ".", "?", "!", ",", " ", "n't", "'s", "é", "do not", "pad"]
VOCAB = {t: i for i, t in enumerate(SPECIALS + CHARS)}
ADDED = [
    {
        "id": i,
        "content": t,
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": False,
        "special": True,
    }
    for i, t in enumerate(SPECIALS)
]


def doc(decoder: dict[str, object]) -> dict[str, object]:
    return tokenizer_json(
        model={"type": "WordLevel", "vocab": VOCAB, "unk_token": "<unk>"},
        added_tokens=ADDED,
        pre_tokenizer={"type": "FixedLength", "length": 1},
        decoder=decoder,
    )


def ctc(pad: str = "<pad>", delimiter: str = "|", cleanup: bool = True) -> dict[str, object]:
    return {"type": "CTC", "pad_token": pad, "word_delimiter_token": delimiter, "cleanup": cleanup}


DOCS = {
    "default": doc(ctc()),
    "no_cleanup": doc(ctc(cleanup=False)),
    "other_tokens": doc(ctc(pad="A", delimiter="E")),
    "empty_tokens": doc(ctc(pad="", delimiter="")),
    "in_sequence": doc(
        {
            "type": "Sequence",
            "decoders": [ctc(), {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}],
        }
    ),
}


@pytest.fixture(scope="module", params=sorted(DOCS))
def pair(request: pytest.FixtureRequest) -> tuple[Tokenizer, object]:
    return hf_pair(DOCS[request.param])


ID_SEQUENCES = [
    [],
    [0, 0, 7, 5, 5, 0, 0, 6, 6],
    [4, 4, 0, 4, 4],
    [1, 7, 7, 0, 7, 2],
    [11, 0, 5, 14, 14, 9, 9, 4, 16, 19, 3, 3],
    [5, 18, 0, 22, 4, 21, 0, 23],
]


@pytest.mark.parametrize("ids", ID_SEQUENCES)
def test_decode_fixed(pair: tuple[Tokenizer, object], ids: list[int]) -> None:
    ours, theirs = pair
    for skip in (False, True):
        assert ours.decode(ids, skip_special_tokens=skip) == theirs.decode(ids, skip_special_tokens=skip)  # type: ignore[attr-defined]


# Runs of one id, as CTC output comes: dedup and pads between repeats matter.
_runs = st.lists(st.tuples(st.integers(0, len(VOCAB) - 1), st.integers(1, 3)), max_size=30).map(
    lambda runs: [i for i, n in runs for _ in range(n)]
)


@pytest.mark.slow
@hyp_settings(3000)
@given(ids=_runs)
def test_decode_drawn_ids(pair: tuple[Tokenizer, object], ids: list[int]) -> None:
    ours, theirs = pair
    for skip in (False, True):
        want = theirs.decode(ids, skip_special_tokens=skip)  # type: ignore[attr-defined]
        assert ours.decode(ids, skip_special_tokens=skip) == want
        dec = StreamDecoder(ours, skip_special_tokens=skip)
        assert "".join(dec.step(i) for i in ids) + dec.finish() == want


@pytest.mark.slow
@hyp_settings(1000)
@given(
    text=st.text(alphabet="ETAONIHS'.?!, é|", max_size=30)
    | st.sampled_from(["", "HE'S", "DO NOT", "A , B", "<s>HI</s>"])
)
def test_encode_and_decode(pair: tuple[Tokenizer, object], text: str) -> None:
    assert_same_as_tokenizers(*pair, text)


def test_json_round_trip_and_pickle() -> None:
    for name, d in DOCS.items():
        ours, _ = hf_pair(d)
        saved = json.dumps(ours.pipeline.to_json())
        theirs = tokenizers.Tokenizer.from_str(saved)
        assert json.loads(saved)["decoder"] == json.loads(theirs.to_str())["decoder"], name
        back = pickle.loads(pickle.dumps(ours))
        for ids in ID_SEQUENCES:
            assert back.decode(ids) == ours.decode(ids) == theirs.decode(ids, skip_special_tokens=False)


@pytest.mark.parametrize("missing", ["pad_token", "word_delimiter_token", "cleanup"])
def test_every_field_is_required_as_in_tokenizers(missing: str) -> None:
    obj = {k: v for k, v in ctc().items() if k != missing}
    with pytest.raises(Exception):  # tokenizers raises a bare Exception
        tokenizers.Tokenizer.from_str(json.dumps(doc(obj)))
    with pytest.raises(TokenizerFileError, match=f"missing field '{missing}'"):
        decoder_from_json(obj)
    assert isinstance(decoder_from_json(ctc()), CTC)

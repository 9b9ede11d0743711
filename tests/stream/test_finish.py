"""How a StreamDecoder ends: ``stop_token_ids``, ``max_tokens``, ``finish_reason``.

The reference is ``tok.decode`` of the ids up to the end (itself tested against
tiktoken / tokenizers / sentencepiece); the reasons follow vLLM's ``finish_reason`` /
``stop_reason`` (a stop id: ``"stop"`` with the id; the budget: ``"length"``), with
``"eos"`` for ids that simply ran out.
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from helpers import TOKENIZER_IDS, fixture_tokenizer
from hypothesis import given
from hypothesis import strategies as st
from strategies import adversarial_text, hyp_settings

import tokstream
from tokstream.errors import InvalidTokenIdError
from tokstream.stream.decoder import StreamDecoder


def ids_of(tok: tokstream.Tokenizer, text: str) -> list[int]:
    return tok.encode(text, disallowed_special=())


def feed(dec: StreamDecoder, ids: list[int], by_push: bool) -> str:
    out = dec.push(ids) if by_push else "".join(dec.step(i) for i in ids)
    return out + dec.finish()


@pytest.mark.parametrize("tid", TOKENIZER_IDS)
@hyp_settings(40)
@given(text=adversarial_text(), n=st.integers(1, 40), by_push=st.booleans())
def test_max_tokens_is_decode_of_the_first_n(tid: str, text: str, n: int, by_push: bool) -> None:
    tok = fixture_tokenizer(tid)
    ids = ids_of(tok, text)
    dec = StreamDecoder(tok, max_tokens=n)
    out = feed(dec, ids, by_push)
    assert out == tok.decode(ids[:n])
    assert dec.text == out
    assert dec.finish_reason == ("length" if n <= len(ids) else "eos")
    assert dec.stopped == (n <= len(ids))
    assert dec.stop_reason is None


@pytest.mark.slow
@pytest.mark.parametrize("tid", TOKENIZER_IDS)
@hyp_settings(40)
@given(text=adversarial_text().filter(bool), data=st.data(), by_push=st.booleans())
def test_stop_id_ends_before_its_text(tid: str, text: str, data: st.DataObject, by_push: bool) -> None:
    tok = fixture_tokenizer(tid)
    ids = ids_of(tok, text)
    if not ids:
        return
    stop = data.draw(st.sampled_from(ids))
    extra = data.draw(st.sampled_from(ids))  # a second stop id, maybe the same
    cut = min(ids.index(stop), ids.index(extra))
    dec = StreamDecoder(tok, stop_token_ids=[stop, extra])
    out = feed(dec, ids, by_push)
    assert out == tok.decode(ids[:cut])
    assert dec.finish_reason == "stop" and dec.stopped
    assert dec.stop_reason == ids[cut]
    assert dec.step(ids[0]) == "" and dec.push(ids) == "" and dec.finish() == ""


@pytest.mark.parametrize(
    "tid", ["o200k_base", "hf/mistral_7b_v1_tokenizer.json", "spm/spm_botchan_en_unigram_1000.model"]
)
def test_the_first_end_wins(tid: str) -> None:
    tok = fixture_tokenizer(tid)
    text = "Hello there. The END is near, said the cat; the end came."
    ids = ids_of(tok, text)
    full = tok.decode(ids)
    at = full.index(" END")
    # A stop string completing before the budget: "stop", the string.
    dec = StreamDecoder(tok, stop=" END", max_tokens=len(ids))
    assert feed(dec, ids, False) == full[:at]
    assert (dec.finish_reason, dec.stop_reason) == ("stop", " END")
    # The budget before the stop string: "length", and the text is decode of the first n.
    dec = StreamDecoder(tok, stop=" END", max_tokens=2)
    assert feed(dec, ids, True) == tok.decode(ids[:2])
    assert (dec.finish_reason, dec.stop_reason) == ("length", None)
    # A stop id before the stop string; the held " E" (maybe " END") is flushed, as finish.
    k = next(k for k in range(1, len(ids)) if tok.decode(ids[:k]).endswith(" E") or k == len(ids) - 1)
    k = ids.index(ids[k])  # its first place
    dec = StreamDecoder(tok, stop=" END", stop_token_ids=[ids[k]])
    assert feed(dec, ids, False) == tok.decode(ids[:k])
    assert (dec.finish_reason, dec.stop_reason) == ("stop", ids[k])
    # A stop id that is also the budget's last id: the stop id wins, its text is not shown.
    dec = StreamDecoder(tok, stop_token_ids=[ids[3]], max_tokens=4)
    assert feed(dec, ids, False) == tok.decode(ids[: ids.index(ids[3])])
    assert dec.finish_reason == "stop"


def test_special_stop_id_and_a_character_split_over_tokens() -> None:
    tok = tokstream.load("o200k_base")
    eos = tok.encode("<|endoftext|>", allowed_special="all")[0]
    ids = tok.encode("naïve 👋")
    assert tok.decode(ids[-1:]) == "\ufffd"  # the emoji's last byte is a token of its own
    # The stop id arrives inside the emoji: the held bytes come out as U+FFFD, as decode.
    dec = StreamDecoder(tok, stop_token_ids=[eos])
    out = "".join(dec.step(i) for i in [*ids[:-1], eos, ids[-1]])
    assert out == tok.decode(ids[:-1]) and out.endswith("\ufffd")
    assert (dec.finish_reason, dec.stop_reason) == ("stop", eos)
    # Without the stop id the special's literal is text, as in decode.
    dec = StreamDecoder(tok, max_tokens=len(ids) + 1)
    assert feed(dec, [*ids, eos], False) == tok.decode([*ids, eos])
    assert dec.finish_reason == "length"


def test_prompt_ids_do_not_count() -> None:
    tok = tokstream.load("cl100k_base")
    prompt, gen = ids_of(tok, "The prompt has several ids"), ids_of(tok, " and then the reply")
    dec = StreamDecoder(tok, prefix_ids=prompt, max_tokens=2)
    out = feed(dec, gen, False)
    assert out == tok.decode(prompt + gen[:2])[len(tok.decode(prompt)) :]
    assert dec.finish_reason == "length"


def test_fork_keeps_the_budget() -> None:
    tok = tokstream.load("o200k_base")
    ids = ids_of(tok, "one two three four five six")
    dec = StreamDecoder(tok, max_tokens=4, stop_token_ids=[ids[5]])
    dec.push(ids[:2])
    other = dec.fork()
    feed(other, ids[2:], False)
    assert other.text == tok.decode(ids[:4]) and other.finish_reason == "length"
    assert dec.finish_reason is None and not dec.stopped
    feed(dec, ids[2:3], True)
    assert dec.text == tok.decode(ids[:3]) and dec.finish_reason == "eos"


def test_bad_options_raise_and_name_the_value() -> None:
    tok = tokstream.load("o200k_base")
    for bad in ([tok.n_vocab], [-1], [True], ["7"], [1.0]):
        with pytest.raises(InvalidTokenIdError):
            StreamDecoder(tok, stop_token_ids=bad)
    with pytest.raises(TypeError, match="collection of ids"):
        StreamDecoder(tok, stop_token_ids=5)  # type: ignore[arg-type]
    for budget in (0, -3, 2.0, True):
        with pytest.raises(ValueError, match="max_tokens"):
            StreamDecoder(tok, max_tokens=budget)  # type: ignore[arg-type]
    # numpy ids, as a model's config gives them
    dec = StreamDecoder(tok, stop_token_ids=np.array([199999]))
    assert dec.step(199999) == "" and dec.stop_reason == 199999
    assert type(dec.stop_reason) is int


def test_adecode_exposes_the_decoder_and_stops_reading() -> None:
    tok = tokstream.load("o200k_base")
    ids = ids_of(tok, "alpha beta gamma delta epsilon")
    read: list[int] = []
    closed: list[bool] = []

    async def model():
        try:
            for i in ids:
                read.append(i)
                yield i
        finally:
            closed.append(True)

    async def run(**kw):
        stream = tokstream.adecode(tok, model(), **kw)
        assert stream.decoder.finish_reason is None
        text = "".join([p async for p in stream])
        return text, stream.decoder

    text, dec = asyncio.run(run(max_tokens=3))
    assert text == tok.decode(ids[:3]) and dec.finish_reason == "length"
    assert read == ids[:3] and closed == [True]  # no id read past the budget, source closed
    read.clear(), closed.clear()
    text, dec = asyncio.run(run(stop_token_ids=[ids[2]]))
    assert text == tok.decode(ids[:2]) and (dec.finish_reason, dec.stop_reason) == ("stop", ids[2])
    assert read == ids[:3] and closed == [True]
    read.clear(), closed.clear()
    text, dec = asyncio.run(run())
    assert text == tok.decode(ids) and dec.finish_reason == "eos" and closed == [True]

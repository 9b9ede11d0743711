"""Stop strings: ``StopMatcher`` alone and inside ``StreamDecoder``.

Expected outputs are literal strings or come from a naive reference written here
(``naive_stop``: the earliest end over all stops, ties by list order).
"""

from __future__ import annotations

import pytest
from helpers import fixture_tokenizer
from hypothesis import given
from hypothesis import strategies as st
from strategies import adversarial_text, hyp_settings

from tokstream.stream.decoder import StreamDecoder
from tokstream.stream.stops import StopMatcher


def naive_stop(text: str, stops: list[str]) -> tuple[int, str] | None:
    """(start, stop) of the stop that ends first in ``text``; ties by list order."""
    best: tuple[int, int, str] | None = None  # (end, rank, stop)
    for rank, s in enumerate(stops):
        at = text.find(s)  # the first occurrence of s is also its first end
        if at >= 0 and (best is None or (at + len(s), rank) < best[:2]):
            best = (at + len(s), rank, s)
    return None if best is None else (best[0] - len(best[2]), best[2])


def naive_held(text: str, stops: list[str]) -> str:
    """The longest suffix of ``text`` that is a proper prefix of some stop."""
    for k in range(min(len(text), max(map(len, stops)) - 1), 0, -1):
        if any(len(s) > k and s.startswith(text[-k:]) for s in stops):
            return text[-k:]
    return ""


def expected(text: str, stops: list[str], include_stop: bool) -> str:
    hit = naive_stop(text, stops)
    if hit is None:
        return text
    start, s = hit
    return text[: start + len(s)] if include_stop else text[:start]


def char_ids(tok, text: str) -> list[int]:
    """One token per character (each checked to be a single token)."""
    out = []
    for c in text:
        ids = tok.encode(c)
        assert len(ids) == 1, c
        out += ids
    return out


@pytest.fixture(scope="module")
def o200k():
    return fixture_tokenizer("o200k_base")


# ------------------------------------------------------------------ named cases


@pytest.mark.parametrize("include_stop", [False, True])
def test_pari_inside_paris(o200k, include_stop):
    ids = o200k.encode("The capital of France is Paris. It is big.")
    dec = StreamDecoder(o200k, stop="Pari", include_stop=include_stop)
    out = "".join(dec.step(i) for i in ids) + dec.finish()
    assert out == dec.text == ("The capital of France is Pari" if include_stop else "The capital of France is ")
    assert dec.stopped and dec.stop_reason == "Pari"


@pytest.mark.parametrize("include_stop", [False, True])
def test_stop_spanning_five_tokens(o200k, include_stop):
    ids = char_ids(o200k, "xxSTOxSTOP!yy")
    dec = StreamDecoder(o200k, stop=["STOP!"], include_stop=include_stop)
    steps = [dec.step(i) for i in ids]
    # "STO" is held, released when "x" shows it is no stop; the second "STOP!" (5 tokens) stops
    assert steps[:6] == ["x", "x", "", "", "", "STOx"]
    assert steps[6:10] == ["", "", "", ""]
    assert steps[10] == ("STOP!" if include_stop else "")
    assert steps[11:] == ["", ""]
    assert dec.finish() == ""
    assert dec.text == ("xxSTOxSTOP!" if include_stop else "xxSTOx")


def test_caucasus_is_not_duplicated(o200k):
    ids = o200k.encode("Caucas") + o200k.encode("us")
    dec = StreamDecoder(o200k, stop=["Caucasian"])
    steps = [dec.step(i) for i in ids]
    assert "".join(steps) + dec.finish() == "Caucasus"
    assert dec.text == "Caucasus" and not dec.stopped and dec.stop_reason is None


def test_earliest_completing_stop_wins(o200k):
    ids = char_ids(o200k, "there")
    dec = StreamDecoder(o200k, stop=["re", "he"])
    assert dec.push(ids) == "t"
    assert dec.stop_reason == "he"
    # Same end position: list order decides.
    for stops, out in ((["ere", "re"], "th"), (["re", "ere"], "the")):
        dec = StreamDecoder(o200k, stop=stops)
        assert dec.push(ids) + dec.finish() == out
        assert dec.stop_reason == stops[0]


def test_stop_inside_a_longer_stop(o200k):
    dec = StreamDecoder(o200k, stop=["abcd", "bc"])
    assert dec.push(char_ids(o200k, "xabcd")) == "xa"
    assert dec.stop_reason == "bc"


def _byte_id(tok, value: int) -> int:
    for i in range(1000):  # the 256 single bytes come first in tiktoken encodings
        if tok.token_bytes(i) == bytes([value]):
            return i
    raise LookupError(value)


def test_stop_e_acute_over_byte_tokens(o200k):
    a, b = o200k.encode("a"), o200k.encode("b")
    ids = a + [_byte_id(o200k, 0xC3), _byte_id(o200k, 0xA9)] + b  # "aéb", é split in two tokens
    assert o200k.decode(ids) == "aéb"
    dec = StreamDecoder(o200k, stop="é")
    assert [dec.step(i) for i in ids] == ["a", "", "", ""]
    assert dec.stopped and dec.stop_reason == "é" and dec.text == "a"
    dec = StreamDecoder(o200k, stop="é", include_stop=True)
    assert [dec.step(i) for i in ids] == ["a", "", "é", ""]


def test_pending_partial_stop_flushed_by_finish(o200k):
    dec = StreamDecoder(o200k, stop=["STOP"])
    assert [dec.step(i) for i in char_ids(o200k, "goST")] == ["g", "o", "", ""]
    assert dec.finish() == "ST"
    assert dec.text == "goST" and not dec.stopped


def test_partial_stop_then_unfinished_character(o200k):
    # finish flushes the decoder (U+FFFD for the cut character) through the matcher
    dec = StreamDecoder(o200k, stop=["\ufffd"])
    assert dec.push(o200k.encode("ok") + [_byte_id(o200k, 0xE5)]) == "ok"
    assert dec.finish() == ""
    assert dec.stopped and dec.stop_reason == "\ufffd"


def test_no_hold_back_when_no_stop_can_start(o200k):
    ids = o200k.encode("Hello world, this is fine and plain.")
    dec = StreamDecoder(o200k, stop=["\n\nUser:", "###"])
    for i in ids:
        assert dec.step(i) == o200k.decode([i])  # every token's text at once
    assert dec.finish() == ""


def test_stopped_stream_returns_nothing(o200k):
    dec = StreamDecoder(o200k, stop=["END"])
    assert dec.push(o200k.encode("one END two")) == "one "
    assert dec.stopped
    assert dec.step(o200k.encode("x")[0]) == ""
    assert dec.push(o200k.encode(" more")) == ""
    assert dec.finish() == ""
    assert dec.text == "one " and dec.stop_reason == "END"


def test_stop_reason_and_forms(o200k):
    dec = StreamDecoder(o200k)
    assert dec.stop_reason is None and not dec.stopped
    dec = StreamDecoder(o200k, stop=(s for s in ["b", "a"]))  # any iterable of str
    assert dec.push(o200k.encode("xab")) == "x" and dec.stop_reason == "a"
    with pytest.raises(ValueError):
        StreamDecoder(o200k, stop=["ok", ""])
    with pytest.raises(ValueError):
        StreamDecoder(o200k, stop="")
    with pytest.raises(TypeError):
        StreamDecoder(o200k, stop=[b"x"])  # type: ignore[list-item]


def test_fork_independence(o200k):
    dec = StreamDecoder(o200k, stop=["STOP"])
    assert dec.push(char_ids(o200k, "goST")) == "go"
    other = dec.fork()
    assert dec.push(char_ids(o200k, "OP")) == ""
    assert dec.stopped and dec.text == "go"
    assert other.push(char_ids(o200k, "AR")) == "STAR"
    assert not other.stopped and other.text == "goSTAR"
    assert other.finish() == "" and dec.finish() == ""


def test_stop_with_prompt_is_matched_in_generated_text_only(o200k):
    prompt = o200k.encode("the word is Pa")
    dec = StreamDecoder(o200k, stop="Paris", prefix_ids=prompt)
    assert dec.push(o200k.encode("ris")) + dec.finish() == "ris"
    assert not dec.stopped


@pytest.mark.parametrize(
    "tid",
    ["hf/mistral_7b_v1_tokenizer.json", "spm/mistral_7b_v1_tokenizer.model", "hf/bert_minilm_tokenizer.json"],
)
def test_stops_on_pipeline_tokenizers(tid):
    tok = fixture_tokenizer(tid)
    ids = tok.encode("Hello there, 吾輩は猫である. General Kenobi!")
    text = tok.decode(ids)
    for stops in (["猫"], ["general", "General"], ["輩は"], ["zzz"], ["kenobi!", "Kenobi!"]):
        for include in (False, True):
            dec = StreamDecoder(tok, stop=stops, include_stop=include)
            out = "".join(dec.step(i) for i in ids) + dec.finish()
            assert out == expected(text, stops, include), stops


# ------------------------------------------------------------------ properties

_stop_alphabet = st.text(alphabet="ab\n", min_size=1, max_size=4)


@hyp_settings(300)
@given(
    text=st.text(alphabet="ab\n", max_size=40),
    stops=st.lists(_stop_alphabet, min_size=1, max_size=4),
    data=st.data(),
)
def test_matcher_random_chunks_small_alphabet(text, stops, data):
    """Many overlaps: stops over {a, b, newline}, text cut at random points."""
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=8)))
    chunks = [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    m = StopMatcher(stops)
    out, seen = "", ""
    for chunk in chunks:
        out += m.feed(chunk)
        seen += chunk
        if m.matched is None:
            assert m.held == naive_held(seen, stops)  # exactly the possible stop start
            assert out + m.held == seen
    if m.matched is None:
        out += m.flush()
    hit = naive_stop(text, stops)
    assert m.matched == (None if hit is None else hit[1])
    assert out == expected(text, stops, include_stop=False)


@hyp_settings(100)
@given(text=adversarial_text(surrogates_ok=False), data=st.data())
def test_stream_stops_random_text(text, data):
    """Random text, random token chunking, stops drawn from the text and elsewhere."""
    tok = fixture_tokenizer("o200k_base")
    ids = tok.encode(text, disallowed_special=())
    assert tok.decode(ids) == text  # byte-level BPE is lossless without surrogates
    pieces = [text[i : i + n] for i in range(len(text)) for n in (1, 2, 5)] or ["x"]
    stops = data.draw(
        st.lists(st.one_of(st.sampled_from(pieces), st.text(min_size=1, max_size=3)), min_size=1, max_size=3)
    )
    include = data.draw(st.booleans())
    dec = StreamDecoder(tok, stop=stops, include_stop=include)
    out, k = "", 0
    while k < len(ids) and not dec.stopped:
        n = data.draw(st.integers(1, 4))
        out += dec.push(ids[k : k + n]) if n > 1 else dec.step(ids[k])
        k += n
    out += dec.finish()
    assert out == dec.text == expected(text, stops, include)
    hit = naive_stop(text, stops)
    assert dec.stop_reason == (None if hit is None else hit[1])

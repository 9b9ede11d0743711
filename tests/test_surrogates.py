"""Lone surrogates are one rule for every pipeline (``tokstream.surrogates``): text that
holds them encodes exactly as the same text with tiktoken's replacement (pairs joined,
lone ones U+FFFD), through every entry point that takes text, and offsets stay in code
points of the input.

References: tiktoken on the original text (it does the replacement itself), and
``tokenizers`` / ``sentencepiece`` on the replaced text (neither takes a lone
surrogate). The replacement itself is checked against the expression tiktoken uses.
"""

from __future__ import annotations

import functools

import pytest
from helpers import (
    ENCODING_NAMES,
    TOKENIZER_IDS,
    assert_sequences_equal,
    fixture_file,
    fixture_tokenizer,
    hf_reference,
    tiktoken_reference,
)
from hypothesis import given
from hypothesis import strategies as st
from strategies import adversarial_text, hyp_settings, surrogates

import tokstream
from tokstream.cache import PrefixCachePlanner
from tokstream.surrogates import has_surrogates, index_map, replace_surrogates, settled_end


def _tiktoken_fallback(text: str) -> str:
    # tiktoken's Encoding.encode, after its UnicodeEncodeError
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


#: Text with at least one surrogate (lone, paired, reversed, runs) amid adversarial text.
surrogate_text = st.tuples(adversarial_text(max_fragments=6), surrogates, adversarial_text(max_fragments=6)).map(
    "".join
)


# ------------------------------------------------------------------ the module


@hyp_settings(500)
@given(text=st.one_of(surrogate_text, adversarial_text(), st.text()))
def test_replacement_is_tiktokens(text: str) -> None:
    assert replace_surrogates(text) == _tiktoken_fallback(text)
    assert has_surrogates(text) == any("\ud800" <= c <= "\udfff" for c in text)
    if not has_surrogates(text):
        assert replace_surrogates(text) is text


@pytest.mark.slow
@hyp_settings(500)
@given(text=surrogate_text)
def test_index_map(text: str) -> None:
    fixed = replace_surrogates(text)
    back = index_map(text)
    assert len(back) == len(fixed) + 1 and back[0] == 0 and back[-1] == len(text)
    for k, c in enumerate(fixed):
        # each character of the replaced text comes from text[back[k]:back[k + 1]]
        assert _tiktoken_fallback(text[back[k] : back[k + 1]]) == c


@pytest.mark.slow
@hyp_settings(500)
@given(text=surrogate_text, more=st.one_of(surrogates, st.text(max_size=3)))
def test_settled_end(text: str, more: str) -> None:
    head = text[: settled_end(text)]
    assert replace_surrogates(text + more).startswith(replace_surrogates(head))
    assert settled_end(text) >= len(text) - 1


# ------------------------------------------------------------ every entry point


@functools.cache
def _planner(tid: str) -> PrefixCachePlanner:
    return PrefixCachePlanner(fixture_tokenizer(tid), block_size=2)


@pytest.mark.slow
@pytest.mark.parametrize("tid", TOKENIZER_IDS)
@pytest.mark.parametrize(
    "text", ["a\udcb5b", "\ud800", "héllo \udcb5 wörld", "x\ud83d\ude00y", "\udcb5 \udcb5", "日本\udfff\ud800語"]
)
def test_fixed_examples(tid: str, text: str) -> None:
    _check_entry_points(fixture_tokenizer(tid), tid, text)


@pytest.mark.slow
@pytest.mark.parametrize("tid", TOKENIZER_IDS)
@hyp_settings(50)
@given(text=surrogate_text, data=st.data())
def test_every_entry_point(tid: str, text: str, data: st.DataObject) -> None:
    tok = fixture_tokenizer(tid)
    _check_entry_points(tok, tid, text)
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=4))
    _check_stream(tok, text, cuts)


def _check_entry_points(tok: tokstream.Tokenizer, tid: str, text: str) -> None:
    fixed = _tiktoken_fallback(text)
    kw = dict(allowed_special="all")
    want = tok.encode(fixed, **kw)
    assert_sequences_equal(tok.encode(text, **kw), want, what="encode", text=text)
    assert tok.encode_ordinary(text) == tok.encode_ordinary(fixed)
    assert tok.encode_batch([text, fixed], **kw) == [want, want]
    assert tok.encode(text, add_special_tokens=True, **kw) == tok.encode(fixed, add_special_tokens=True, **kw)
    # offsets: the replaced text's, mapped back to code points of the input
    ids, offsets = tok.encode_with_offsets(text, **kw)
    fixed_ids, fixed_offsets = tok.encode_with_offsets(fixed, **kw)
    assert ids == fixed_ids == want
    back = index_map(text)
    assert offsets == [(back[a], back[b]) for a, b in fixed_offsets]
    # the stable cut is the replaced text's (short of a trailing high surrogate)
    r = tok.encode_stable(text, **kw)
    assert r.ids == want
    head = text[: settled_end(text)]
    b = tok.stable_boundary(text, **kw)
    assert b == r.boundary and b in back
    assert b == index_map(head)[tok.stable_boundary(replace_surrogates(head), **kw)]
    assert tok.encode(text[:b], **kw) == want[: r.stable_len]
    plan = _planner(tid).plan(text, **kw)
    assert plan.ids == want and plan.stable_len == r.stable_len
    _check_reference(tok, tid, text, fixed, want)


def _check_stream(tok: tokstream.Tokenizer, text: str, cuts: list[int]) -> None:
    """Streamed in chunks (a pair may be split over two), the ids are the replaced
    text's, and every stable boundary so far holds for the rest of the text."""
    want = tok.encode(_tiktoken_fallback(text), allowed_special="all")
    enc = tokstream.StreamEncoder(tok, allowed_special="all", batch=1)
    out: list[int] = []
    start = 0
    for end in [*sorted(set(cuts)), len(text)]:
        out += enc.push(text[start:end])
        assert want[: len(out)] == out, f"stream emitted ids that are not a prefix: {text!r} cut at {end}"
        start = end
    out += enc.finish()
    assert_sequences_equal(out, want, what="streamed ids", names=("StreamEncoder", "encode"), text=text)


# ----------------------------------------------------------------- references


@functools.cache
def _spm_reference(relpath: str) -> object:
    spm = pytest.importorskip("sentencepiece")
    return spm.SentencePieceProcessor(model_file=str(fixture_file(relpath)))


def _check_reference(tok: tokstream.Tokenizer, tid: str, text: str, fixed: str, want: list[int]) -> None:
    """Our ids of ``text`` against the reference's (tiktoken on ``text`` itself;
    ``tokenizers`` and ``sentencepiece`` on ``fixed``)."""
    if tid in ENCODING_NAMES:
        ref = tiktoken_reference(tid).encode(text, disallowed_special=())
        ours = tok.encode(text, disallowed_special=())
        names = ("tokstream", "tiktoken")
    elif tid.startswith("hf/"):
        ref = hf_reference(fixture_file(tid)).encode(fixed, add_special_tokens=False).ids
        ours = want
        names = ("tokstream", "tokenizers")
    else:
        ref = _spm_reference(tid).encode(fixed)  # type: ignore[attr-defined]
        ours = tok.encode(text, disallowed_special=())
        names = ("tokstream", "sentencepiece")
    assert_sequences_equal(ours, ref, what="ids against the reference", names=names, text=text)


def test_bert_drops_the_replacement_character() -> None:
    """The reported case: BERT's normalizer deletes U+FFFD, so a lone surrogate in a
    word vanishes (it gave [UNK] before, which tokenizers never does for this text)."""
    tok = fixture_tokenizer("hf/bert_minilm_tokenizer.json")
    ref = hf_reference(fixture_file("hf/bert_minilm_tokenizer.json"))
    assert tok.encode("a\udcb5b") == ref.encode("a\ufffdb", add_special_tokens=False).ids
    assert tok.encode("a\udcb5b") == tok.encode("ab")


def test_stream_commits_past_a_lone_surrogate() -> None:
    """A lone surrogate early in a stream no longer holds back every later id (the cut
    stopped at the first surrogate)."""
    tok = fixture_tokenizer("cl100k_base")
    text = "a\udcb5 " + "word " * 50 + "end"
    assert tok.stable_boundary(text) > len(text) // 2
    assert tok.stable_boundary("hello \ud83d") <= len("hello ")  # a pair may still form

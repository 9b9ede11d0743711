"""``StreamEncoder``: the concatenated output equals ``encode(full_text)`` under every
chunking, it raises where ``encode`` raises, it is eager on prose and its work is
linear in the text."""

from __future__ import annotations

import random
from itertools import pairwise

import pytest
from helpers import BYTE_LEVEL_IDS, TOKENIZER_IDS, fixture_tokenizer
from hypothesis import given
from hypothesis import strategies as st
from strategies import adversarial_text, hyp_settings
from test_encoder_eager import pending_after_pushes

import tokstream
from tokstream import SpecialTokenError, StreamEncoder
from tokstream.stability import Stability


def _stream(tok, chunks, **options) -> list[int]:
    enc = StreamEncoder(tok, **options)
    out: list[int] = []
    for chunk in chunks:
        out += enc.push(chunk)
    return out + enc.finish()


def _cuts(text: str, points) -> list[str]:
    points = sorted({p for p in points if 0 < p < len(text)})
    edges = [0, *points, len(text)]
    return [text[a:b] for a, b in pairwise(edges)]


@pytest.mark.parametrize("tid", TOKENIZER_IDS)
def test_corpora_any_chunking(tid: str, read_corpus) -> None:
    tok = fixture_tokenizer(tid)
    rng = random.Random(tid)
    for name, start in (
        ("corpus_alice_in_wonderland_en.txt", 0),
        ("shakespeare_gutenberg_modern.txt", 50_000),
        ("corpus_wagahaiwa_nekodearu_ja.txt", 2_000),
    ):
        text = read_corpus(name)[start : start + 6_000]
        want = tok.encode(text)
        assert _stream(tok, text) == want  # one character per push
        for size in (16, 64, 1000):
            assert _stream(tok, _cuts(text, range(size, len(text), size))) == want
        assert _stream(tok, _cuts(text, rng.sample(range(len(text)), 400))) == want


@pytest.mark.slow
@pytest.mark.parametrize("tid", TOKENIZER_IDS)
@hyp_settings(200)
@given(text=adversarial_text(), data=st.data())
def test_any_chunking_adversarial(tid: str, text: str, data) -> None:
    tok = fixture_tokenizer(tid)
    points = data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=12))
    chunks = _cuts(text, points)
    assert _stream(tok, chunks, disallowed_special=()) == tok.encode(text, disallowed_special=())
    assert _stream(tok, chunks, allowed_special="all") == tok.encode(text, allowed_special="all")
    # Chunks of at least the batch size are scanned at once: the cut rules run.
    padded = ["a" * 70 + chunks[0], *chunks[1:]] if chunks else []
    full = "".join(padded)
    assert _stream(tok, padded, disallowed_special=()) == tok.encode(full, disallowed_special=())


_SPLITTERS = {
    "crlf": "line one\r\nline two\r\n\r\nline three\r\n",
    "zwj": "family 👨\u200d👩\u200d👧\u200d👦 and 👍🏽 flags 🇫🇷🇩🇪 done",
    "digits": "pi is 3.14159265358979 and 1234567 plus 98765",
    "contractions": "I don't think they'll say we'RE sure it's HE'LL or she'd",
    "combining": "cafe\u0301 nai\u0308ve e\u0301\u0301\u0301 Å",
    "spaces": "a    b\t\t c \u3000 d\n\n\n   e       ",
}


@pytest.mark.parametrize("tid", TOKENIZER_IDS)
@pytest.mark.parametrize("case", sorted(_SPLITTERS))
def test_awkward_splits(tid: str, case: str) -> None:
    """Every two-chunk split, and every split into two-character chunks, of text with
    clusters and runs that a cut must not break."""
    tok = fixture_tokenizer(tid)
    text = _SPLITTERS[case] * 3
    want = tok.encode(text)
    for i in range(1, len(text)):
        # The first part padded past the batch size so the cut rules run at the split.
        assert _stream(tok, [text[:i], text[i:]]) == want, i
        pad = "word " * 14
        assert _stream(tok, [pad + text[:i], text[i:]]) == tok.encode(pad + text), i
    assert _stream(tok, _cuts(text, range(2, len(text), 2))) == want


@pytest.mark.parametrize("tid", TOKENIZER_IDS)
def test_special_literal_split_across_chunks(tid: str) -> None:
    tok = fixture_tokenizer(tid)
    literal = max(tok.special_tokens, key=len)
    text = "word " * 15 + "before " + literal + " after " + literal
    for i in range(len(text) - 2 * len(literal) - 8, len(text)):
        chunks = [text[:i], text[i:]]
        assert _stream(tok, chunks, allowed_special="all") == tok.encode(text, allowed_special="all")
        assert _stream(tok, chunks, disallowed_special=()) == tok.encode(text, disallowed_special=())
        with pytest.raises(SpecialTokenError) as err:
            _stream(tok, chunks)
        assert err.value.offset == text.index(literal)


def test_disallowed_literal_raises_on_the_completing_push_and_loses_nothing() -> None:
    tok = tokstream.load("cl100k_base")
    enc = StreamEncoder(tok)
    out = enc.push("some text " * 10 + "<|endof")
    with pytest.raises(SpecialTokenError, match="offset 100"):
        enc.push("text|> more")
    out += enc.push("text and more")  # the rejected chunk is not kept
    out += enc.finish()
    assert out == tok.encode("some text " * 10 + "<|endoftext and more")


def test_surrogate_pair_split_across_chunks() -> None:
    tok = tokstream.load("o200k_base")
    text = "x " * 40 + "\ud83d\ude00 and a lone \udc00 one"
    i = text.index("\ude00")
    assert _stream(tok, [text[:i], text[i:]]) == tok.encode(text)


_PROSE = [
    (tid, name)
    for tid in BYTE_LEVEL_IDS + ("cl100k_base",)
    for name in ("corpus_alice_in_wonderland_en.txt", "corpus_us_constitution_en.txt")
    # r50k_base spells a run of spaces one id per space, and GPT-2's pattern has no
    # line cut, so Alice's indented poem (not prose) leaves up to 9 ids pending; it
    # reads the constitution.
    if not (tid == "r50k_base" and name.startswith("corpus_alice"))
]


@pytest.mark.parametrize(("tid", "name"), _PROSE)
def test_eager_on_prose(tid: str, name: str, read_corpus) -> None:
    """After each 64-character chunk of English prose, the last one short, at most 4
    ids of ``encode(text)`` that lie wholly in the text pushed are not returned yet
    (``test_encoder_eager``, which also compares with the references directly)."""
    tok = fixture_tokenizer(tid)
    text = read_corpus(name)[: 40_000 - 41]
    pending = pending_after_pushes(tok, text, tok.encode(text), 64)
    assert max(pending) <= 4, (max(pending), pending.index(max(pending)))


@pytest.mark.parametrize("tid", TOKENIZER_IDS)
def test_pending_is_at_most_the_last_word(tid: str, read_corpus) -> None:
    """For every fixture tokenizer, what stays pending after a 64-character chunk of
    prose never spans two spaces that follow a word (the space-run rule's bound;
    small vocabularies spell the last word in more than 4 ids)."""
    tok = fixture_tokenizer(tid)
    text = read_corpus("corpus_alice_in_wonderland_en.txt")[:20_000]
    enc = StreamEncoder(tok)
    for i in range(0, len(text) - 64, 64):
        enc.push(text[i : i + 64])
        pending = enc.pending_text
        word_spaces = [j for j in range(1, len(pending)) if pending[j] == " " and "!" <= pending[j - 1] <= "~"]
        assert len(word_spaces) <= 1, repr(pending)


@pytest.mark.slow
@pytest.mark.parametrize("tid", ["cl100k_base", "hf/llama3_tokenizer.json", "spm/mistral_7b_v1_tokenizer.model"])
@pytest.mark.parametrize("text", ["a" * 200_000, "a b " * 50_000, "日本語" * 60_000, " " * 200_000])
def test_work_is_linear(tid: str, text: str, monkeypatch) -> None:
    """The text the cut rules look at, summed over all pushes of 16 characters, is a
    small multiple of the text's length (no rescans of a growing buffer)."""
    tok = fixture_tokenizer(tid)
    scanned = 0
    real = Stability.cut

    def counting(self, text, policy, matcher, first):
        nonlocal scanned
        scanned += len(text)
        return real(self, text, policy, matcher, first)

    monkeypatch.setattr(Stability, "cut", counting)
    assert _stream(tok, _cuts(text, range(16, len(text), 16))) == tok.encode(text)
    assert scanned <= 6 * len(text)


def test_push_after_finish_and_bad_input() -> None:
    tok = tokstream.load("cl100k_base")
    enc = StreamEncoder(tok)
    assert enc.push("") == []
    with pytest.raises(TypeError):
        enc.push(b"bytes")  # type: ignore[arg-type]
    assert enc.push("hello") == []
    assert enc.finish() == tok.encode("hello")
    assert enc.finish() == []
    with pytest.raises(ValueError, match="after finish"):
        enc.push("more")

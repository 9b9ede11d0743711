"""``encode_with_offsets``: code-point spans, checked against a slow oracle.

The convention (``Tokenizer.encode_with_offsets`` docstring): ``offsets[i]`` is the
``(start, end)`` code-point span of the original text that token ``i`` covers; a token
covers every character any of its bytes belongs to, so tokens that split one character's
UTF-8 bytes (an emoji in byte-level BPE) share that character and their spans overlap.
Offsets index the *original* text even where lone surrogates were replaced by U+FFFD (3
bytes each) or a surrogate pair was joined into one 4-byte character (two code points
of the original text).

The oracle below walks the token bytes (lengths from tiktoken, not from us) and maps each
byte to the span of the original characters it came from.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import adversarial_text, hyp_settings, replace_surrogates


def _is_high(c: str) -> bool:
    return "\ud800" <= c <= "\udbff"


def _is_low(c: str) -> bool:
    return "\udc00" <= c <= "\udfff"


def byte_spans(text: str) -> list[tuple[int, int]]:
    """For each byte of the UTF-8 that gets encoded, the span of original characters."""
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(text):
        c = text[i]
        if _is_high(c) and i + 1 < len(text) and _is_low(text[i + 1]):
            spans += [(i, i + 2)] * 4  # a pair joins into one astral character
            i += 2
        elif _is_high(c) or _is_low(c):
            spans += [(i, i + 1)] * 3  # U+FFFD
            i += 1
        else:
            spans += [(i, i + 1)] * len(c.encode("utf-8"))
            i += 1
    return spans


def oracle_offsets(text: str, token_lengths: list[int]) -> list[tuple[int, int]]:
    """The slow, obviously correct offsets for tokens of these byte lengths."""
    spans = byte_spans(text)
    assert len(spans) == len(replace_surrogates(text).encode("utf-8"))
    assert sum(token_lengths) == len(spans)
    out, pos = [], 0
    for n in token_lengths:
        assert n > 0
        out.append((spans[pos][0], spans[pos + n - 1][1]))
        pos += n
    return out


def check_offsets(tok, enc, text, **kw):
    ids, offsets = tok.encode_with_offsets(text, **kw)
    assert ids == enc.encode(text, **kw), "ids differ from tiktoken"
    assert ids == tok.encode(text, **kw)
    assert len(offsets) == len(ids)
    assert all(isinstance(a, int) and isinstance(b, int) for a, b in offsets)
    pieces = [enc.decode_single_token_bytes(i) for i in ids]
    expected = oracle_offsets(text, [len(p) for p in pieces])
    if offsets != expected:
        k = next(j for j, (a, b) in enumerate(zip(offsets, expected)) if a != b)
        raise AssertionError(
            f"offset {k} of {len(ids)}: tokstream {offsets[k]}, oracle {expected[k]}; "
            f"token {ids[k]}={pieces[k]!r}; text={text[:200]!r}"
        )
    # A token whose bytes are whole characters recovers its text by slicing.
    for (start, end), piece in zip(offsets, pieces):
        try:
            piece_text = piece.decode("utf-8")
        except UnicodeDecodeError:
            continue  # splits a character; its span is that whole character
        assert replace_surrogates(text[start:end]) == piece_text
        if not any(_is_high(c) or _is_low(c) for c in text[start:end]):
            assert text[start:end] == piece_text
    if text:
        assert offsets[0][0] == 0 and offsets[-1][1] == len(text)
    return ids, offsets


# ------------------------------------------------------------------- examples


@pytest.mark.parametrize(
    "text",
    [
        "",
        "hi there",
        "😀",
        "😀😀😀 emoji",
        "👨\u200d👩\u200d👧\u200d👦 family",
        "🇺🇸🇯🇵",
        "e\u0301\u0301",
        "吾輩は猫である。名前はまだ無い。",
        "नमस्ते दुनिया สวัสดี مرحبا",
        "\ud800",
        "a\ud800b",
        "\ud83d\ude00",
        "x\ud83d\ude00y\udc00\ud800z",
        "\ud800\ud800\udc00",
        "\r\n\r\n  \t\u3000\u00a0 x",
        "HelloWORLDfoo 'S 'LL ’s 1234567 ١٢٣",
    ],
    ids=repr,
)
def test_offsets_examples(pair, text):
    tok, enc = pair
    check_offsets(tok, enc, text)


def test_offsets_split_character_overlap(ours, reference):
    """An emoji split over tokens: every piece covers the whole emoji."""
    tok, enc = ours("cl100k_base"), reference("cl100k_base")
    text = "a😀b"
    _, offsets = check_offsets(tok, enc, text)
    assert len(enc.encode(text)) > 3  # tiktoken splits the emoji's bytes
    emoji_tokens = [o for o in offsets if o == (1, 2)]
    assert len(emoji_tokens) >= 2


def test_offsets_with_specials(pair):
    tok, enc = pair
    text = "x<|endoftext|>é<|endoftext|><|endoftext|>\ud83d\ude00"
    ids, offsets = check_offsets(tok, enc, text, allowed_special="all")
    eot = enc._special_tokens["<|endoftext|>"]
    spans = [o for i, o in zip(ids, offsets) if i == eot]
    assert spans == [(1, 14), (15, 28), (28, 41)]
    # Special literals encoded as plain text also get offsets.
    check_offsets(tok, enc, text, disallowed_special=())


# -------------------------------------------------------------------- corpora


def test_offsets_corpus_samples(pair, corpus_name, read_corpus):
    tok, enc = pair
    text = read_corpus(corpus_name)
    step = max(1, len(text) // 4)
    for start in range(0, len(text), step):
        check_offsets(tok, enc, text[start : start + 4000])


# ----------------------------------------------------------------- hypothesis


@hyp_settings(500)
@given(text=adversarial_text(), allow=st.booleans())
def test_offsets_adversarial(all_pairs, text, allow):
    kw = {"allowed_special": "all"} if allow else {"disallowed_special": ()}
    for tok, enc in all_pairs.values():
        check_offsets(tok, enc, text, **kw)

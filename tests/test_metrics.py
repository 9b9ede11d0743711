"""Metrics with expectations computed by hand: a byte-level tokenizer without merges makes
one token per UTF-8 byte, a WordPiece tokenizer with only its alphabet one token per
character, so every count below is a byte, character or word count of the text."""

from __future__ import annotations

import math

import pytest

from tokstream.metrics import (
    bits_per_byte,
    bytes_per_token,
    chars_per_token,
    stats,
    tokens_per_byte,
    tokens_per_char,
    tokens_per_word,
)
from tokstream.train.bpe import train_bpe
from tokstream.train.wordpiece import train_wordpiece

# The seed tutorial's [D07] corpus: code, Chinese and an emoji.
D07 = ["def add(x): return x + 1", "把变量加一🙂"]


@pytest.fixture(scope="module")
def byte_tok():  # type: ignore[no-untyped-def]
    return train_bpe(["x"], 256)  # the 256 bytes, no merges


@pytest.fixture(scope="module")
def char_tok():  # type: ignore[no-untyped-def]
    text = "".join(D07) + " \t\n\u3000\x1cabcdé.!"
    tok = train_wordpiece([text], 1 + 2 * len(set(text)))  # the alphabet, no merges
    return tok


def test_byte_tokenizer_counts_bytes(byte_tok) -> None:  # type: ignore[no-untyped-def]
    # 24 ASCII bytes; 5 CJK characters of 3 bytes and one 4-byte emoji.
    assert tokens_per_byte(byte_tok, D07) == 1.0
    assert bytes_per_token(byte_tok, D07) == 1.0
    assert tokens_per_char(byte_tok, D07) == (24 + 19) / (24 + 6)
    assert chars_per_token(byte_tok, D07) == (24 + 6) / (24 + 19)
    # Words: def, add(x):, return, x, +, 1 and the whole Chinese sentence.
    assert tokens_per_word(byte_tok, D07) == (24 + 19) / 7
    assert tokens_per_char(byte_tok, "把变量加一🙂") == 19 / 6


def test_char_tokenizer_counts_characters(char_tok) -> None:  # type: ignore[no-untyped-def]
    assert tokens_per_char(char_tok, D07) == 1.0
    assert tokens_per_byte(char_tok, D07) == (24 + 6) / (24 + 19)
    # Micro-average: 30 tokens over 7 words, not the mean of 24/6 and 6/1.
    assert tokens_per_word(char_tok, D07) == 30 / 7


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("a b  c", 3),
        ("a\tb\nc\r\nd", 4),
        ("end. Start!", 2),  # punctuation stays in its word
        ("a\u3000b\u00a0c", 3),  # ideographic and no-break spaces are whitespace
        ("a\x1cb", 2),  # so are the ASCII separators, as str.isspace says
        ("  \n ", 0),
        ("", 0),
        ("把变量加一", 1),  # no spaces, one word: segment Chinese first
    ],
)
def test_words_are_whitespace_separated_runs(char_tok, text: str, words: int) -> None:  # type: ignore[no-untyped-def]
    assert stats(char_tok, text)["words"] == words


def test_stats_keys_and_values(byte_tok) -> None:  # type: ignore[no-untyped-def]
    s = stats(byte_tok, D07)
    assert list(s) == [
        "texts",
        "tokens",
        "words",
        "chars",
        "bytes",
        "tokens_per_word",
        "tokens_per_char",
        "tokens_per_byte",
        "bytes_per_token",
        "chars_per_token",
    ]
    assert (s["texts"], s["tokens"], s["words"], s["chars"], s["bytes"]) == (2, 43, 7, 30, 43)
    assert s["tokens_per_word"] == 43 / 7 and s["tokens_per_char"] == 43 / 30
    assert s["tokens_per_byte"] == s["bytes_per_token"] == 1.0


def test_a_str_is_one_text_and_generators_work(byte_tok) -> None:  # type: ignore[no-untyped-def]
    assert stats(byte_tok, "ab cd")["texts"] == 1
    assert stats(byte_tok, (t for t in D07)) == stats(byte_tok, D07)


def test_special_literals_count_as_text(byte_tok) -> None:  # type: ignore[no-untyped-def]
    tok = train_bpe(["x"], 257, special_tokens=["<|end|>"])
    assert stats(tok, "a<|end|>")["tokens"] == 8


def test_lone_surrogates_count_as_replacement_characters(byte_tok) -> None:  # type: ignore[no-untyped-def]
    s = stats(byte_tok, "a\ud800b")
    assert (s["chars"], s["bytes"], s["tokens"]) == (3, 5, 5)


def test_empty_denominators(byte_tok) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="tokens per word is undefined: the texts hold no words"):
        tokens_per_word(byte_tok, ["  ", "\n"])
    with pytest.raises(ValueError, match="no tokens"):
        bytes_per_token(byte_tok, [])
    s = stats(byte_tok, [""])
    assert s["texts"] == 1 and s["tokens_per_word"] is None and s["bytes_per_token"] is None


def test_non_text(byte_tok) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TypeError, match=r"texts\[1\] is bytes, not str"):
        tokens_per_byte(byte_tok, ["ok", b"no"])  # type: ignore[list-item]


# ----------------------------------------------------------------- bits per byte


def test_bits_per_byte_d07() -> None:
    # Seed tutorial §1.3: 4.0 nats over 8 bytes, whether in 2 tokens or 4.
    nll, n_bytes = 4.0, 8
    assert bits_per_byte(nll, n_bytes) == 4.0 / (8 * math.log(2))
    assert bits_per_byte(2 * (nll / 2), n_bytes) == bits_per_byte(4 * (nll / 4), n_bytes)
    assert bits_per_byte(8 * math.log(2), 8) == pytest.approx(1.0)
    assert bits_per_byte(0, 3) == 0.0


@pytest.mark.parametrize(
    ("nll", "n_bytes", "error", "match"),
    [
        (-1.0, 8, ValueError, "total_nll_nats must be a finite number >= 0"),
        (math.nan, 8, ValueError, "finite"),
        (math.inf, 8, ValueError, "finite"),
        (1.0, 0, ValueError, "n_bytes must be > 0"),
        ("1", 8, TypeError, "total_nll_nats must be a number"),
        (1.0, 8.0, TypeError, "n_bytes must be an int"),
        (True, 8, TypeError, "number"),
    ],
)
def test_bits_per_byte_bad_input(nll: object, n_bytes: object, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        bits_per_byte(nll, n_bytes)  # type: ignore[arg-type]

"""Tokenizer metrics: fertility with its denominator in the name, bytes per token, and
bits per byte (seed tutorial §1.2-1.3).

Every ratio is over all ``texts`` together (the sum of the numerators over the sum of
the denominators, the micro-average), never a mean of per-text ratios. The units:

- **token**: an id of ``tok.encode_ordinary(text)``: special tokens' literals count as
  plain text and no post-processor adds BOS/EOS;
- **character**: a code point of the text (``len(text)``), after lone surrogates are
  replaced by U+FFFD as ``encode`` replaces them;
- **byte**: a byte of the UTF-8 encoding of that text;
- **word**: a maximal run of non-whitespace characters, i.e. an item of
  ``text.split()``, whitespace being ``str.isspace`` (Unicode ``White_Space`` and the
  ASCII separators U+001C-U+001F). Punctuation stays in its word (``"end."`` is one
  word). Scripts written without spaces (Chinese, Japanese, Thai) have few such words,
  so compare them by tokens per character or per byte, or segment the text with a word
  segmenter first and say which.

A text given as one ``str`` is one text (not an iterable of characters).

Not here: perplexity or any model's loss (``bits_per_byte`` takes the total NLL you
computed), throughput, Rényi efficiency.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Protocol

from .surrogates import replace_surrogates

__all__ = [
    "bits_per_byte",
    "bytes_per_token",
    "chars_per_token",
    "stats",
    "tokens_per_byte",
    "tokens_per_char",
    "tokens_per_word",
]


class _Encoder(Protocol):
    def encode_ordinary(self, text: str) -> list[int]: ...


Texts = str | Iterable[str]


def tokens_per_word(tok: _Encoder, texts: Texts) -> float:
    """Tokens per whitespace-separated word (narrow-sense fertility; module notes).

    >>> import tokstream
    >>> tokens_per_word(tokstream.load("cl100k_base"), ["hello world", "tokenization is fun"])
    1.2
    """
    t = _totals(tok, texts)
    return _ratio(t["tokens"], t["words"], "tokens per word", "words")


def tokens_per_char(tok: _Encoder, texts: Texts) -> float:
    """Tokens per character (code point).

    >>> import tokstream
    >>> tokens_per_char(tokstream.load("cl100k_base"), "hello world")
    0.18181818181818182
    """
    t = _totals(tok, texts)
    return _ratio(t["tokens"], t["chars"], "tokens per character", "characters")


def tokens_per_byte(tok: _Encoder, texts: Texts) -> float:
    """Tokens per UTF-8 byte (1.0 for a byte-level tokenizer without merges).

    >>> import tokstream
    >>> tokens_per_byte(tokstream.load("cl100k_base"), "héllo")
    0.5
    """
    t = _totals(tok, texts)
    return _ratio(t["tokens"], t["bytes"], "tokens per byte", "bytes")


def bytes_per_token(tok: _Encoder, texts: Texts) -> float:
    """UTF-8 bytes per token: the compression ratio, higher is shorter sequences.

    >>> import tokstream
    >>> bytes_per_token(tokstream.load("cl100k_base"), "hello world")
    5.5
    """
    t = _totals(tok, texts)
    return _ratio(t["bytes"], t["tokens"], "bytes per token", "tokens")


def chars_per_token(tok: _Encoder, texts: Texts) -> float:
    """Characters (code points) per token.

    >>> import tokstream
    >>> chars_per_token(tokstream.load("cl100k_base"), "hello world")
    5.5
    """
    t = _totals(tok, texts)
    return _ratio(t["chars"], t["tokens"], "characters per token", "tokens")


def bits_per_byte(total_nll_nats: float, n_bytes: int) -> float:
    """Bits per byte from a model's total negative log-likelihood over a text.

    ``total_nll_nats`` is ``-sum(log p(token_i | tokens before))`` in nats over all the
    tokens of a text, ``n_bytes`` that text's UTF-8 byte count: BPB is
    ``total_nll_nats / (n_bytes * ln 2)``. Unlike loss per token it does not depend on
    how many tokens the tokenizer made, so it compares models with different
    tokenizers on the same text (seed tutorial §1.3: 4.0 nats over 8 bytes is the same
    BPB whether the text took 2 tokens or 4).

    >>> round(bits_per_byte(4.0, 8), 6)
    0.721348
    """
    if isinstance(total_nll_nats, bool) or not isinstance(total_nll_nats, (int, float)):
        raise TypeError(f"total_nll_nats must be a number, got {type(total_nll_nats).__name__}")
    if isinstance(n_bytes, bool) or not isinstance(n_bytes, int):
        raise TypeError(f"n_bytes must be an int, got {type(n_bytes).__name__}")
    if not math.isfinite(total_nll_nats) or total_nll_nats < 0:
        raise ValueError(f"total_nll_nats must be a finite number >= 0 (a sum of -log p), got {total_nll_nats}")
    if n_bytes <= 0:
        raise ValueError(f"n_bytes must be > 0, got {n_bytes}")
    return total_nll_nats / (n_bytes * math.log(2))


def stats(tok: _Encoder, texts: Texts) -> dict[str, int | float | None]:
    """The counts and ratios of ``texts`` under ``tok``, encoding each text once.

    Keys, in this order: ``texts``, ``tokens``, ``words``, ``chars``, ``bytes`` (ints),
    then ``tokens_per_word``, ``tokens_per_char``, ``tokens_per_byte``,
    ``bytes_per_token``, ``chars_per_token`` (floats, ``None`` where the denominator
    is 0). ``tokstream stats`` prints this table.

    >>> import tokstream
    >>> s = stats(tokstream.load("cl100k_base"), ["hello world"])
    >>> s["tokens"], s["words"], s["bytes"], s["tokens_per_word"]
    (2, 2, 11, 1.0)
    """
    t = _totals(tok, texts)
    n_tokens, words, chars, n_bytes = t["tokens"], t["words"], t["chars"], t["bytes"]
    out: dict[str, int | float | None] = dict(t)
    out["tokens_per_word"] = n_tokens / words if words else None
    out["tokens_per_char"] = n_tokens / chars if chars else None
    out["tokens_per_byte"] = n_tokens / n_bytes if n_bytes else None
    out["bytes_per_token"] = n_bytes / n_tokens if n_tokens else None
    out["chars_per_token"] = chars / n_tokens if n_tokens else None
    return out


def _totals(tok: _Encoder, texts: Texts) -> dict[str, int]:
    if isinstance(texts, str):
        texts = [texts]
    totals = {"texts": 0, "tokens": 0, "words": 0, "chars": 0, "bytes": 0}
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}] is {type(text).__name__}, not str")
        text = replace_surrogates(text)  # count what encode counts: U+FFFD in their place
        data = text.encode("utf-8")
        totals["texts"] += 1
        totals["tokens"] += len(tok.encode_ordinary(text))
        totals["words"] += len(text.split())
        totals["chars"] += len(text)
        totals["bytes"] += len(data)
    return totals


def _ratio(numerator: int, denominator: int, what: str, unit: str) -> float:
    if not denominator:
        raise ValueError(f"{what} is undefined: the texts hold no {unit}")
    return numerator / denominator

"""Cheap pickling of tokenizers and the process pool behind ``encode_batch``.

An embedded tokenizer pickles as its name. Any other pickles as one bytes blob of its
token bytes plus two integer arrays (about the size of the rank file, one memcpy
instead of 200,000 dict entries), and is rebuilt once per process: unpickling the same
fingerprint again returns the tokenizer already built.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .tokenizer import Tokenizer

__all__ = ["reduce_tokenizer", "encode_in_pool"]

_rebuilt: dict[str, Tokenizer] = {}
_lock = threading.Lock()


def reduce_tokenizer(tok: Tokenizer) -> tuple[Any, ...]:
    """``__reduce__`` for ``Tokenizer``."""
    if tok._source is not None and tok._source[0] == "embedded":
        return (_load_embedded, (tok._source[1],))
    if tok._source is not None and tok._source[0] == "sentencepiece":
        return (_from_sentencepiece, (tok._source[1], tok.name))
    if tok._pipeline is not None:
        import json

        return (_from_json, (json.dumps(tok._pipeline.to_json(), ensure_ascii=False), tok.name))
    items = sorted((r, b) for b, r in tok._ranks.items())
    ids = np.fromiter((r for r, _ in items), dtype=np.int64, count=len(items))
    lengths = np.fromiter((len(b) for _, b in items), dtype=np.int64, count=len(items))
    blob = b"".join(b for _, b in items)
    state = (
        tok.fingerprint,
        tok.name,
        tok.pattern,
        tok.special_tokens,
        blob,
        ids.tobytes(),
        lengths.tobytes(),
    )
    return (_rebuild, state)


def _from_json(text: str, name: str) -> Tokenizer:
    from .formats.hf_json import tokenizer_from_json

    return tokenizer_from_json(text, source=name)


def _from_sentencepiece(data: bytes, name: str) -> Tokenizer:
    from .formats.spm_pipeline import sentencepiece_from_bytes

    return sentencepiece_from_bytes(data, name=name)


def _load_embedded(name: str) -> Tokenizer:
    from .formats.registry import load_embedded

    return load_embedded(name)


def _rebuild(
    fingerprint: str,
    name: str,
    pattern: str,
    special_tokens: dict[str, int],
    blob: bytes,
    ids_raw: bytes,
    lengths_raw: bytes,
) -> Tokenizer:
    from .tokenizer import Tokenizer

    with _lock:
        tok = _rebuilt.get(fingerprint)
    if tok is not None:
        return tok
    ids = np.frombuffer(ids_raw, dtype=np.int64).tolist()
    ends = np.cumsum(np.frombuffer(lengths_raw, dtype=np.int64)).tolist()
    starts = [0, *ends[:-1]]
    ranks = {blob[a:b]: r for a, b, r in zip(starts, ends, ids)}
    tok = Tokenizer(ranks, pattern=pattern, special_tokens=special_tokens, name=name)
    tok._fingerprint = fingerprint
    with _lock:
        _rebuilt.setdefault(fingerprint, tok)
    return tok


_worker_tok: Tokenizer | None = None


def _init_worker(tok: Tokenizer) -> None:
    global _worker_tok
    _worker_tok = tok


def _encode_chunk(texts: list[str], kw: dict[str, Any]) -> list[list[int]]:
    assert _worker_tok is not None  # set by the pool initializer
    return [_worker_tok.encode(t, **kw) for t in texts]


def encode_in_pool(
    tok: Tokenizer, texts: Sequence[str], kw: dict[str, Any], workers: int
) -> list[list[int]]:
    """Encode ``texts`` on ``workers`` processes, in order, in contiguous chunks."""
    # A few chunks per worker balances uneven text lengths without much pickling.
    n_chunks = min(len(texts), workers * 4)
    bounds = [len(texts) * k // n_chunks for k in range(n_chunks + 1)]
    chunks = [list(texts[a:b]) for a, b in zip(bounds, bounds[1:])]
    with ProcessPoolExecutor(
        max_workers=workers, initializer=_init_worker, initargs=(tok,)
    ) as pool:
        results = pool.map(_encode_chunk, chunks, [kw] * len(chunks))
        return [ids for chunk in results for ids in chunk]

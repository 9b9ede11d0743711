"""The process pool behind ``encode_batch``.

Workers get the tokenizer once, through the pool's initializer; a tokenizer pickles as
its own recipe (``Tokenizer.__reduce__``: an embedded name, a ``.model``'s bytes, or
its stages, a rank file as one bytes blob), so this module knows no file format.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .tokenizer import Tokenizer

__all__ = ["encode_in_pool"]

_worker_tok: Tokenizer | None = None


def _init_worker(tok: Tokenizer) -> None:
    global _worker_tok
    _worker_tok = tok


def _encode_chunk(texts: list[str], kw: dict[str, Any]) -> list[list[int]]:
    tok = _worker_tok
    if tok is None:  # pragma: no cover - the pool initializer always runs first
        raise RuntimeError("encode_batch worker started without its tokenizer")
    return [tok.encode(t, **kw) for t in texts]


def encode_in_pool(tok: Tokenizer, texts: Sequence[str], kw: dict[str, Any], workers: int) -> list[list[int]]:
    """Encode ``texts`` on ``workers`` processes, in order, in contiguous chunks."""
    # A few chunks per worker balances uneven text lengths without much pickling.
    n_chunks = min(len(texts), workers * 4)
    bounds = [len(texts) * k // n_chunks for k in range(n_chunks + 1)]
    chunks = [list(texts[a:b]) for a, b in zip(bounds, bounds[1:])]
    with ProcessPoolExecutor(max_workers=workers, initializer=_init_worker, initargs=(tok,)) as pool:
        results = pool.map(_encode_chunk, chunks, [kw] * len(chunks))
        return [ids for chunk in results for ids in chunk]

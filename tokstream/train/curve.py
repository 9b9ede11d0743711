"""Compression along training: held-out bytes per token against vocabulary size.

The seed tutorials' figure of compression against vocabulary size, from a user's own
training run (``tokstream train --plot``): ``bpe_curve`` reads it off a trained BPE
tokenizer, whose first ``k`` merges are exactly the tokenizer training had after ``k``
merges (every token's parts rank below it); for Unigram, ``train_unigram(snapshot=...)``
hands over the tokenizer of each pruning round and ``bytes_per_token`` measures it.

Cost: one encode of the held-out texts per point (and, for BPE, one tokenizer build:
O(V)); ``points`` bounds it.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..models.ranks import RankBPE
from ..tokenizer import Tokenizer

__all__ = ["bpe_curve", "bytes_per_token"]


def bytes_per_token(tok: Tokenizer, texts: Sequence[str]) -> float:
    """UTF-8 bytes per token of ``texts`` (special-token literals encoded as text)."""
    tokens = sum(len(tok.encode(t, disallowed_special=())) for t in texts)
    size = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)
    return size / tokens if tokens else 0.0


def bpe_curve(tok: Tokenizer, heldout: Sequence[str], points: int = 16) -> list[tuple[int, float]]:
    """``(vocabulary size, held-out bytes per token)`` after growing numbers of merges,
    from the 256 bytes alone to the whole ``tok`` (a ``train_bpe`` tokenizer), at most
    ``points`` sizes evenly spaced."""
    model = tok.pipeline.model
    if not isinstance(model, RankBPE):
        raise TypeError(f"bpe_curve needs a rank-based BPE tokenizer (train_bpe's), not {type(model).__name__}")
    ranks = dict(model.ranks)
    top = len(ranks)
    first = min(256, top)
    step = max(1, (top - first) // max(1, points - 1))
    sizes = sorted({*range(first, top, step), top})
    out = []
    for size in sizes:
        kept = {token: rank for token, rank in ranks.items() if rank < size}
        part = tok if size == top else Tokenizer(kept, pattern=tok.pattern, name=f"{tok.name}@{size}")
        out.append((size, bytes_per_token(part, heldout)))
    return out

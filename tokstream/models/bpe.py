"""Byte-level BPE by merge ranks, with tiktoken's semantics.

A piece's bytes start as single bytes; the adjacent pair whose concatenation has the
lowest rank is merged, the leftmost one on ties, until no adjacent pair concatenates to
a token. The remaining parts' ranks are the ids. This is what tiktoken's
``byte_pair_merge`` computes; ranks are looked up on concatenated bytes, not on a merge
list, so a vocabulary needs nothing but ``dict[bytes, int]``.

Not handled here: pre-tokenization (``pre_tokenizers``), special tokens (``specials``),
caching of pieces (``tokenizer``), and merge lists / byte fallback / dropout of Hugging
Face BPE (a later model).

Performance notes
-----------------
- Most pieces of real text are a token themselves: one dict lookup, no merging.
- Short pieces (under ``_BUCKETS_MIN`` bytes) use a flat list of pair ranks; ``min``
  and ``list.index`` run in C, so the O(n^2) scan beats anything cleverer for small n.
- Longer pieces (CJK runs, a run of one character, a base64 blob) keep candidate
  pairs in per-rank buckets swept left to right: each merge is O(1) Python work, plus
  sorting the buckets' runs. A heap of ``(rank, start)`` entries was tried first:
  1,000,000 ``a`` took 3.4 s with tuple keys, 2.0 s with int keys, and grew 14x from
  10^5 to 10^6 bytes (cache misses in a 10^6-entry heap); the buckets take 0.7 s and
  grow 11.5x. tiktoken takes 0.27 s.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping

from ..errors import TokstreamError

__all__ = ["BytePairEncoder"]

_BUCKETS_MIN = 24
_NO_RANK = 1 << 62


class BytePairEncoder:
    """Encode one pre-token's bytes into ids by merge ranks.

    Cost: building is O(1) (the rank dict is shared, not copied). ``encode_piece`` is
    one dict lookup for an in-vocabulary piece, O(n^2) with C inner loops below
    ``_BUCKETS_MIN`` bytes, and O(n log n) at worst above it (sorting bucket runs;
    in practice linear).
    """

    __slots__ = ("ranks",)

    def __init__(self, ranks: Mapping[bytes, int]) -> None:
        self.ranks = ranks

    def encode_piece(self, piece: bytes) -> tuple[int, ...]:
        """Return the ids of one pre-token's bytes.

        Raises ``TokstreamError`` naming the byte when a single byte is not in the
        vocabulary (a vocabulary that is not byte-complete; tiktoken panics there).
        """
        rank = self.ranks.get(piece)
        if rank is not None:
            return (rank,)
        if len(piece) < _BUCKETS_MIN:
            bounds = _merge_small(piece, self.ranks)
        else:
            bounds = _merge_buckets(piece, self.ranks)
        ranks = self.ranks
        try:
            return tuple([ranks[piece[a:b]] for a, b in zip(bounds, bounds[1:])])
        except KeyError as e:
            raise TokstreamError(
                f"cannot encode {piece!r}: the vocabulary has no token for {e.args[0]!r} "
                f"(a rank file should hold all 256 single bytes)"
            ) from None


def _merge_small(piece: bytes, ranks: Mapping[bytes, int]) -> list[int]:
    """Return the part boundaries after merging; flat-list version for short pieces."""
    get = ranks.get
    bounds = list(range(len(piece) + 1))
    # pair[i] is the rank of parts i and i+1 joined.
    pair = [get(piece[i : i + 2], _NO_RANK) for i in range(len(piece) - 1)]
    while pair:
        best = min(pair)
        if best == _NO_RANK:
            break
        i = pair.index(best)  # leftmost among equal ranks, as tiktoken
        del bounds[i + 1]
        del pair[i]
        if i < len(pair):
            pair[i] = get(piece[bounds[i] : bounds[i + 2]], _NO_RANK)
        if i > 0:
            pair[i - 1] = get(piece[bounds[i - 1] : bounds[i + 1]], _NO_RANK)
    return bounds


def _merge_buckets(piece: bytes, ranks: Mapping[bytes, int]) -> list[int]:
    """Return the part boundaries after merging; rank-bucket version for long pieces.

    Parts form a linked list by start offset: part ``s`` spans ``[s, nxt[s])``, and
    ``nxt[s] == -1`` once ``s`` was merged into its left neighbour. Candidate pairs wait
    in one bucket per rank (their start offsets); a small heap orders the ranks. A rank
    is processed as one left-to-right sweep over its sorted starts, which is what
    tiktoken's "lowest rank, leftmost first" loop does one merge at a time, with two
    exceptions handled exactly: a merge that creates another pair of the *same* rank
    feeds the sweep through a small heap (it may lie left of the sweep), and one that
    creates a *lower* rank suspends the sweep, which resumes after that rank. A popped
    start is stale unless the pair there still has this rank.
    """
    get = ranks.get
    n = len(piece)
    nxt = list(range(1, n + 2))
    prv = list(range(-1, n))
    buckets: dict[int, list[int]] = {}
    for i in range(n - 1):
        r = get(piece[i : i + 2])
        if r is not None:
            bucket = buckets.get(r)
            if bucket is None:
                buckets[r] = [i]
            else:
                bucket.append(i)
    order = list(buckets)
    heapq.heapify(order)
    pop, push = heapq.heappop, heapq.heappush

    def enqueue(rank: int, start: int) -> None:
        bucket = buckets.get(rank)
        if bucket is None:
            buckets[rank] = [start]
            push(order, rank)
        else:
            bucket.append(start)

    # A suspended sweep keeps its sorted starts, its position and its same-rank heap,
    # so resuming costs O(1), not a copy of the rest.
    suspended: dict[int, tuple[list[int], int, list[int]]] = {}
    while order:
        rank = pop(order)
        fresh = buckets.pop(rank, None)
        paused = suspended.pop(rank, None)
        if paused is not None:
            starts, i, same = paused
            if fresh:
                same.extend(fresh)
                heapq.heapify(same)
        elif fresh is not None:
            starts, i, same = fresh, 0, []
            starts.sort()  # runs appended left to right: timsort merges them in O(n)
        else:
            continue  # a duplicate entry in `order`
        m = len(starts)
        while True:
            if same and (i >= m or same[0] < starts[i]):
                s = pop(same)
            elif i < m:
                s = starts[i]
                i += 1
            else:
                break
            mid = nxt[s]
            if mid < 0 or mid >= n:
                continue
            end = nxt[mid]
            if get(piece[s:end]) != rank:
                continue
            nxt[s] = end
            nxt[mid] = -1
            lower = False
            if end < n:
                prv[end] = s
                r = get(piece[s : nxt[end]])
                if r is not None:
                    if r == rank:
                        push(same, s)
                    else:
                        enqueue(r, s)
                        lower = lower or r < rank
            before = prv[s]
            if before >= 0:
                r = get(piece[before:end])
                if r is not None:
                    if r == rank:
                        push(same, before)
                    else:
                        enqueue(r, before)
                        lower = lower or r < rank
            if lower:
                # A lower rank now exists: it goes first; this sweep resumes after it.
                suspended[rank] = (starts, i, same)
                push(order, rank)
                break
    bounds = [0]
    s = 0
    while s < n:
        s = nxt[s]
        bounds.append(s)
    return bounds

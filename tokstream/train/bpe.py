"""Byte-level BPE training: the merges, in order, as tiktoken-style ranks.

Training counts adjacent symbol pairs over the distinct pre-tokens (weighted by their
counts), merges the most frequent pair, and repeats. A tie goes to the pair whose
``(left bytes, right bytes)`` is smallest, so a corpus always gives the same merges.
The result is a rank-file ``Tokenizer``: the 256 single bytes are ranks 0-255 (by byte
value), merge ``i`` makes rank ``256 + i``, special tokens follow. ``models/bpe.py``
encodes with those ranks, and ``save`` writes a ``tokenizer.json`` for ``tokenizers``.

When a merge makes bytes that are already a token (``"ab" + "c"`` after ``"a" + "bc"``),
the merge happens but no token is added, as in ``tokenizers``' trainer.

Not here: character-level (non-byte) BPE, normalization, dropout.

Performance notes
-----------------
``counting.PairIndex`` keeps the pair counts and, per pair, the words holding it; a
merge updates only those words. The next pair comes from a lazy max-heap of
``(-count, left bytes, right bytes)``: an entry whose count went stale is pushed again
with its current count when it surfaces, and pairs that gained count (all hold the new
symbol) are pushed at once. ``bench/train.py`` has the figures against ``tokenizers``.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

from ..pre_tokenizers import resolve_pattern
from ..tokenizer import Tokenizer
from .counting import PairIndex, count_pretokens

__all__ = ["train_bpe"]

Progress = Callable[[int, int], None]


def train_bpe(
    texts_or_counts: Iterable[str] | Mapping[str, int],
    vocab_size: int,
    *,
    pattern: str = "o200k_base",
    special_tokens: Sequence[str] = (),
    min_frequency: int = 2,
    byte_level: bool = True,
    progress: Progress | None = None,
    name: str = "trained-bpe",
) -> Tokenizer:
    """Train a byte-level BPE tokenizer of ``vocab_size`` ids (specials included).

    ``texts_or_counts`` is an iterable of texts or the ``Counter`` of
    ``count_pretokens`` under the same ``pattern`` (a regex or a known name). Merging
    stops at ``vocab_size`` or when the best pair occurs fewer than ``min_frequency``
    times. ``progress(done, total)`` is called as merges are made.

    Pieces ``low``, `` lower``, `` lowest`` (3 each): ``l o`` and ``o w`` tie at 9 and
    ``(b"l", b"o")`` is smaller, so 256 = ``lo``, then 257 = ``low``; `` ``+``low`` and
    ``low``+``e`` tie at 6, so 258 = `` low``, then 259 = `` lowe``:

    >>> tok = train_bpe(["low lower lowest"] * 3, 260, pattern="gpt2")
    >>> [tok.token_bytes(i) for i in tok.encode(" lowest")]
    [b' lowe', b's', b't']
    """
    if not byte_level:
        raise NotImplementedError("only byte-level BPE training is implemented (byte_level=True)")
    counts = _counts(texts_or_counts, pattern)
    specials = list(dict.fromkeys(special_tokens))
    base = 256
    if vocab_size < base + len(specials):
        raise ValueError(
            f"vocab_size={vocab_size} is too small: the byte alphabet needs {base} ids and "
            f"the special tokens {len(specials)} more"
        )
    ranks = {bytes([b]): b for b in range(base)}
    words = {tuple(piece.encode("utf-8")): c for piece, c in counts.items()}
    merges = learn_merges(words, ranks, vocab_size - len(specials), min_frequency=min_frequency, progress=progress)
    del merges  # the ranks hold them
    special_ids = {s: len(ranks) + i for i, s in enumerate(specials)}
    return Tokenizer(ranks, pattern=resolve_pattern(pattern), special_tokens=special_ids, name=name)


def _counts(texts_or_counts: Iterable[str] | Mapping[str, int], pattern: str) -> Mapping[str, int]:
    if isinstance(texts_or_counts, str):
        raise TypeError("pass an iterable of texts (a list of str) or a Counter, not one str")
    if isinstance(texts_or_counts, Mapping):
        counts = texts_or_counts
        for piece, c in counts.items():
            if not isinstance(piece, str) or not isinstance(c, int):
                raise TypeError(f"counts must map str to int, got {type(piece).__name__} -> {type(c).__name__}")
    else:
        counts = count_pretokens(texts_or_counts, pattern)
    if not any(c > 0 for c in counts.values()):
        raise ValueError("the corpus is empty: no pre-tokens to train on")
    return counts


def learn_merges(
    words: Mapping[tuple[int, ...], int],
    ranks: dict[bytes, int],
    vocab_size: int,
    *,
    min_frequency: int = 2,
    progress: Progress | None = None,
) -> list[tuple[bytes, bytes]]:
    """Merge pairs over ``words`` (symbol-id tuples -> counts; ids are ``ranks``'
    values) until ``ranks`` holds ``vocab_size`` tokens; new tokens are added to
    ``ranks`` in place. Returns the merges as ``(left bytes, right bytes)``.
    """
    spelling = {r: b for b, r in ranks.items()}
    index = PairIndex.from_counts(words)
    counts = index.pair_counts
    heap = [(-c, spelling[a], spelling[b], (a, b)) for (a, b), c in counts.items()]
    heapq.heapify(heap)
    merges: list[tuple[bytes, bytes]] = []
    total = vocab_size - len(ranks)
    while len(ranks) < vocab_size and heap:
        neg, left, right, pair = heapq.heappop(heap)
        current = counts.get(pair, 0)
        if current != -neg:
            if current:
                heapq.heappush(heap, (-current, left, right, pair))
            continue
        if current < min_frequency:
            break
        merged = left + right
        new = ranks.get(merged)
        if new is None:
            new = ranks[merged] = len(spelling)
            spelling[new] = merged
        merges.append((left, right))
        for p in index.merge(pair, new):
            heapq.heappush(heap, (-counts[p], spelling[p[0]], spelling[p[1]], p))
        if progress is not None and (len(merges) % 100 == 0 or len(ranks) == vocab_size):
            progress(len(ranks) - (vocab_size - total), total)
    return merges

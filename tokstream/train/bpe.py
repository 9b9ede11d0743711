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
from collections.abc import Callable, Iterable, Mapping, Sequence

from ..models.ranks import RankBPE
from ..pre_tokenizers import resolve_pattern
from ..tokenizer import Tokenizer
from .counting import PairIndex, pretoken_counts

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
    base: Tokenizer | None = None,
    name: str = "trained-bpe",
) -> Tokenizer:
    """Train a byte-level BPE tokenizer of ``vocab_size`` ids (specials included).

    ``texts_or_counts`` is an iterable of texts or the ``Counter`` of
    ``count_pretokens`` under the same ``pattern`` (a regex or a known name). Merging
    stops at ``vocab_size`` or when the best pair occurs fewer than ``min_frequency``
    times. ``progress(done, total)`` is called as merges are made.

    ``base``, a rank-file tokenizer, continues its merges on the new corpus: each
    pre-token starts as ``base``'s ids, every old token keeps its id and every old merge
    its rank, new tokens take the ids after ``base.n_vocab`` (its specials included),
    and ``base``'s pattern is used. ``special_tokens`` then adds new specials last.

    Pieces ``low``, `` lower``, `` lowest`` (3 each): ``l o`` and ``o w`` tie at 9 and
    ``(b"l", b"o")`` is smaller, so 256 = ``lo``, then 257 = ``low``; `` ``+``low`` and
    ``low``+``e`` tie at 6, so 258 = `` low``, then 259 = `` lowe``:

    >>> tok = train_bpe(["low lower lowest"] * 3, 260, pattern="gpt2")
    >>> [tok.token_bytes(i) for i in tok.encode(" lowest")]
    [b' lowe', b's', b't']
    """
    if not byte_level:
        raise NotImplementedError("only byte-level BPE training is implemented (byte_level=True)")
    base_model = base.pipeline.model if base is not None else None
    if base is not None:
        if not isinstance(base_model, RankBPE):
            raise ValueError(f"base={base.name!r} is not a rank-file (tiktoken-style) tokenizer")
        pattern = base.pattern
    counts = pretoken_counts(texts_or_counts, pattern)
    old_specials: dict[str, int] = {}
    if isinstance(base_model, RankBPE) and base is not None:
        ranks = dict(base_model.ranks)
        old_specials = base.special_tokens
        words = _segmented(counts, base_model.encode_bytes)
    else:
        ranks = {bytes([b]): b for b in range(256)}
        words = {tuple(piece.encode("utf-8")): c for piece, c in counts.items()}
    first_id = max([*ranks.values(), *old_specials.values()]) + 1
    specials = [s for s in dict.fromkeys(special_tokens) if s not in old_specials]
    budget = vocab_size - first_id - len(specials)
    if budget < 0:
        raise ValueError(
            f"vocab_size={vocab_size} is too small: the "
            f"{'byte alphabet' if base is None else 'base vocabulary'} needs {first_id} ids and "
            f"the special tokens {len(specials)} more"
        )
    learn_merges(words, ranks, budget, first_id=first_id, min_frequency=min_frequency, progress=progress)
    next_id = max(first_id, max(ranks.values()) + 1)  # new tokens took ids from first_id
    special_ids = dict(old_specials)
    special_ids.update({s: next_id + i for i, s in enumerate(specials)})
    return Tokenizer(ranks, pattern=resolve_pattern(pattern), special_tokens=special_ids, name=name)


def _segmented(
    counts: Mapping[str, int], encode_piece: Callable[[bytes], tuple[int, ...]]
) -> dict[tuple[int, ...], int]:
    words: dict[tuple[int, ...], int] = {}
    for piece, c in counts.items():
        w = encode_piece(piece.encode("utf-8"))
        words[w] = words.get(w, 0) + c
    return words


def learn_merges(
    words: Mapping[tuple[int, ...], int],
    ranks: dict[bytes, int],
    new_tokens: int,
    *,
    first_id: int | None = None,
    min_frequency: int = 2,
    progress: Progress | None = None,
) -> list[tuple[bytes, bytes]]:
    """Merge pairs over ``words`` (symbol-id tuples -> counts; ids are ``ranks``'
    values) until ``new_tokens`` tokens were added to ``ranks`` (in place, with ids
    from ``first_id``, default the next free one). Returns the merges as
    ``(left bytes, right bytes)``; a merge whose bytes are already a token adds none.
    """
    spelling = {r: b for b, r in ranks.items()}
    next_id = max(spelling, default=-1) + 1 if first_id is None else first_id
    index = PairIndex.from_counts(words)
    counts = index.pair_counts
    heap = [(-c, spelling[a], spelling[b], (a, b)) for (a, b), c in counts.items()]
    heapq.heapify(heap)
    merges: list[tuple[bytes, bytes]] = []
    added = 0
    while added < new_tokens and heap:
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
            new = ranks[merged] = next_id
            spelling[new] = merged
            next_id += 1
            added += 1
            if progress is not None and (added % 100 == 0 or added == new_tokens):
                progress(added, new_tokens)
        merges.append((left, right))
        for p in index.merge(pair, new):
            heapq.heappush(heap, (-counts[p], spelling[p[0]], spelling[p[1]], p))
    return merges

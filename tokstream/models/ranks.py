"""Byte-level BPE over merge ranks, with tiktoken's semantics: a rank file's model.

A piece's UTF-8 bytes start as single bytes; the adjacent pair whose concatenation has
the lowest rank is merged, the leftmost one on ties, until no adjacent pair
concatenates to a token. The remaining parts' ranks are the ids. This is what
tiktoken's ``byte_pair_merge`` computes; ranks are looked up on concatenated bytes,
not on a merge list, so a vocabulary needs nothing but ``dict[bytes, int]``.

Not here: pre-tokenization (``pre_tokenizers``), special tokens
(``added_vocabulary``), the piece and part caches (``_fastpath``), and Hugging Face's
merge-list BPE with byte fallback (``bpe.py``).

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
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

import numpy as np

from .._native_loader import native
from ..byte_level import bytes_to_proxy, proxy_to_bytes
from ..errors import TokstreamError
from ..json_fields import check_dense_ids, sparse_ids_message
from .base import ByteEncoder, Model, NativeText, Spelling

__all__ = ["RankBPE", "merges_for_ranks"]

if TYPE_CHECKING:
    from .._native import PairTable

_BUCKETS_MIN: Final = 24
_NO_RANK: Final = 1 << 62
#: Guards the first build of a model's native pair table.
_BUILD_LOCK: Final = threading.Lock()


class RankBPE(Model):
    """A rank file's model: ``ranks`` maps token bytes to ids (module notes).

    ``specials`` are the tokenizer's special tokens, which share the id space: no
    special may reuse a token's id, and a ``tokenizer.json`` lists them in the model's
    vocabulary to keep their ids (``tokenizers`` gives an added token its vocabulary
    id, else the next one after the vocabulary). Ids are non-negative and dense
    (``json_fields.check_dense_ids``: per-id tables are sized by the largest).

    The empty token (a rank file's ``= 50256`` line, which tiktoken reads as ``b""``)
    keeps its id and decodes to nothing, but encode never produces it: it is left out
    of the map the merge loop reads (tiktoken would give it for an empty match).

    >>> m = RankBPE({b"a": 0, b"b": 1, b"ab": 2, b"c": 3})
    >>> m.encode_piece("abc"), m.spellings()[2]
    ((2, 3), 'ab')

    Cost: building is O(1) (the rank dict is shared, not copied) plus one pass to check
    that ids are unique. ``encode_piece`` is one dict lookup for an in-vocabulary piece,
    O(n^2) with C inner loops below ``_BUCKETS_MIN`` bytes, and O(n log n) at worst
    above it (sorting bucket runs; in practice linear).
    """

    __slots__ = ("_encoder", "_spellings", "_table", "ranks", "specials")

    def __init__(self, ranks: Mapping[bytes, int], *, specials: Mapping[str, int] | None = None) -> None:
        self.ranks = ranks
        self.specials: dict[str, int] = dict(specials or {})
        if not ranks:
            raise TokstreamError("ranks is empty: a rank file's tokenizer needs its tokens (all 256 single bytes)")
        _check_int_ids(ranks, self.specials)
        ids = set(ranks.values())
        if len(ids) != len(ranks):
            raise ValueError("two tokens share one rank; ranks must be unique")
        for text, sid in self.specials.items():
            if sid in ids:
                raise ValueError(f"special token {text!r} reuses the id {sid} of a token")
        every = [*ids, *self.specials.values()]
        if every:
            low, high = min(every), max(every)
            if low < 0:
                raise TokstreamError(f"{self._describe(low)}: ids must be non-negative")
            if not check_dense_ids(len(every), high):
                raise TokstreamError(f"{self._describe(high)}: {sparse_ids_message(len(every), high)}")
        #: What the merge loop looks up: the ranks without the empty token (class notes).
        self._encoder: Mapping[bytes, int] = ranks
        if b"" in ranks:
            self._encoder = {token: rank for token, rank in ranks.items() if token}
        self._spellings: dict[int, str] | None = None
        #: The compiled core's pair table, built on the first piece that needs merging
        #: (``native_table``); None on the pure path.
        self._table: PairTable | None = None

    def _describe(self, token_id: int) -> str:
        """``rank 7 (b'abc')`` or ``special token '<x>' (7)``, for messages."""
        for text, sid in self.specials.items():
            if sid == token_id:
                return f"special token {text!r} ({sid})"
        token = next((t for t, r in self.ranks.items() if r == token_id), b"")
        return f"rank {token_id} (token {token[:40]!r})"

    def encode_piece(self, piece: str) -> tuple[int, ...]:
        """The ids of one pre-token (its UTF-8 bytes merged); lone surrogates raise
        ``UnicodeEncodeError``, which the tokenizer answers as tiktoken does."""
        return self.encode_bytes(piece.encode("utf-8"))

    def encode_bytes(self, piece: bytes) -> tuple[int, ...]:
        """The ids of one pre-token's bytes.

        Raises ``TokstreamError`` naming the byte when a single byte is not in the
        vocabulary (a vocabulary that is not byte-complete; tiktoken panics there).
        """
        ranks = self._encoder
        rank = ranks.get(piece)
        if rank is not None:
            return (rank,)
        table = self._table if self._table is not None else self.native_table()
        if table is not None:
            ids = table.encode_bytes(piece)
            if ids is not None:
                return ids
            # else a byte has no token: the pure path below names it
        return self.encode_bytes_pure(piece)

    def encode_bytes_pure(self, piece: bytes) -> tuple[int, ...]:
        """``encode_bytes`` on the pure-Python merge loop, the readable oracle of the
        compiled one (tests compare the two)."""
        ranks = self._encoder
        rank = ranks.get(piece)
        if rank is not None:
            return (rank,)
        bounds = _merge_small(piece, ranks) if len(piece) < _BUCKETS_MIN else _merge_buckets(piece, ranks)
        try:
            return tuple([ranks[piece[a:b]] for a, b in zip(bounds, bounds[1:])])
        except KeyError as e:
            raise TokstreamError(
                f"cannot encode {piece!r}: the vocabulary has no token for {e.args[0]!r} "
                f"(a rank file should hold all 256 single bytes)"
            ) from None

    def native_table(self) -> PairTable | None:
        """The compiled core's pair table (every split of a token into two tokens),
        built once on first use (~0.1 s and ~16 MB for o200k's 446k pairs); None when
        the pure-Python path runs (``tokstream.native_available()``)."""
        if native is None:
            return None
        with _BUILD_LOCK:  # two threads' first encodes build it once
            if self._table is None:
                encoder = self._encoder
                self._table = native.PairTable.from_ranks(encoder if isinstance(encoder, dict) else dict(encoder))
        return self._table

    def byte_encoder(self, spelling: Spelling) -> ByteEncoder | None:
        """Text pieces encode from their bytes, and a piece that is a token is that token."""
        if spelling is not Spelling.TEXT:
            return None
        ranks = self._encoder
        return self.encode_bytes, lambda: ranks

    def native_text(self, spelling: Spelling) -> NativeText | None:
        """The pair table and the ranks: a piece that is a token is that token."""
        if spelling is not Spelling.TEXT:
            return None
        table = self.native_table()
        return None if table is None else (table, self._encoder)

    def token_to_id(self, spelling: str) -> int | None:
        data = proxy_to_bytes(spelling)
        return None if data is None else self.ranks.get(data)

    def spellings(self) -> Mapping[int, str]:
        """Each rank's bytes in the byte-level alphabet (built once, on first use)."""
        if self._spellings is None:
            self._spellings = {r: bytes_to_proxy(b) for b, r in self.ranks.items()}
        return self._spellings

    @property
    def vocab_size(self) -> int:
        return len(self.ranks)

    def rank_form(self, spelling: Spelling, specials: Mapping[str, int]) -> Mapping[bytes, int] | None:
        """The ranks, when pieces come spelled as text (a rank file's own shape)."""
        return self.ranks if spelling is Spelling.TEXT else None

    def raw_bytes(self) -> Mapping[bytes, int]:
        return self.ranks

    @property
    def id_limit(self) -> int:
        return max([*self.ranks.values(), *self.specials.values()], default=-1) + 1

    def to_json(self) -> dict[str, object]:
        """The ``tokenizer.json`` model that encodes as this one: byte-level BPE with
        ``ignore_merges`` and ``merges_for_ranks`` as its merge list, the specials in
        its vocabulary (class notes). Cost: ~1 s for o200k (the merge list)."""
        vocab = {bytes_to_proxy(b): r for b, r in sorted(self.ranks.items(), key=lambda item: item[1])}
        for text, sid in sorted(self.specials.items(), key=lambda item: item[1]):
            if text in vocab:
                raise TokstreamError(
                    f"cannot save as tokenizer.json: special token {text!r} is spelled like token "
                    f"{vocab[text]}, and tokenizers would give both one id"
                )
            vocab[text] = sid
        merges = [[bytes_to_proxy(a), bytes_to_proxy(b)] for a, b in merges_for_ranks(self.ranks)]
        return {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": True,
            "vocab": vocab,
            "merges": merges,
        }

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        # One bytes blob plus two integer arrays: about the size of the rank file, one
        # memcpy instead of 200,000 dict entries.
        items = sorted((r, b) for b, r in self.ranks.items())
        ids = np.fromiter((r for r, _ in items), dtype=np.int64, count=len(items))
        lengths = np.fromiter((len(b) for _, b in items), dtype=np.int64, count=len(items))
        blob = b"".join(b for _, b in items)
        return (_rebuild, (blob, ids.tobytes(), lengths.tobytes(), self.specials))

    def __repr__(self) -> str:
        return f"RankBPE({len(self.ranks)} ranks, {len(self.specials)} specials)"


def _rebuild(blob: bytes, ids_raw: bytes, lengths_raw: bytes, specials: dict[str, int]) -> RankBPE:
    ids = np.frombuffer(ids_raw, dtype=np.int64).tolist()
    ends = np.cumsum(np.frombuffer(lengths_raw, dtype=np.int64)).tolist()
    starts = [0, *ends[:-1]]
    return RankBPE({blob[a:b]: r for a, b, r in zip(starts, ends, ids)}, specials=specials)


def merges_for_ranks(ranks: Mapping[bytes, int]) -> list[tuple[bytes, bytes]]:
    """The merge list under which Hugging Face's ``BPE`` (with ``ignore_merges``)
    encodes as ``RankBPE`` does on ``ranks``.

    tiktoken merges any adjacent pair whose concatenation is a token, at that token's
    rank. The list holds, for every token in rank order, each split of it into two
    lower-ranked tokens (the conversion ``transformers`` uses for tiktoken models),
    ordered by the parts' ranks; ``ignore_merges`` takes a whole piece that is a token
    first, as tiktoken does.

    Cost: one dict lookup pair per byte of every token (about 1 s for o200k).
    """
    merges: list[tuple[bytes, bytes]] = []
    get = ranks.get
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        splits = []
        for k in range(1, len(token)):
            left, right = get(token[:k]), get(token[k:])
            if left is not None and right is not None and left < rank and right < rank:
                splits.append((left, right, k))
        splits.sort()
        merges += [(token[:k], token[k:]) for _, _, k in splits]
    return merges


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


def _check_int_ids(ranks: Mapping[bytes, int], specials: Mapping[str, int]) -> None:
    """Raise ``TypeError`` for an id that is not an ``int`` (a ``bool`` is not an id:
    ``True`` would silently be id 1). Cost: one C-level ``map(type, ...)`` over the ids."""
    if set(map(type, ranks.values())) | set(map(type, specials.values())) <= {int}:
        return
    named = [
        *((f"rank of {t[:40]!r}", r) for t, r in ranks.items()),
        *((f"special token {t!r}", i) for t, i in specials.items()),
    ]
    for what, value in named:
        if type(value) is not int and (isinstance(value, bool) or not isinstance(value, int)):
            raise TypeError(f"{what}: ids must be int, got {type(value).__name__} {value!r:.40}")

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

import regex

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


class BPE:
    """Hugging Face ``tokenizers``' BPE model: a vocabulary plus an ordered merge list.

    Matches the Rust ``BPE::tokenize``: a piece starts as its characters (with
    ``continuing_subword_prefix`` on all but the first and ``end_of_word_suffix`` on the
    last); a character not in the vocabulary becomes its ``<0xXX>`` byte tokens when
    ``byte_fallback`` finds them all, else ``unk_token`` (consecutive unknowns fused
    into one when ``fuse_unk``), else it is dropped. Then the pair with the lowest
    merge rank, leftmost first, is merged until none is left. ``ignore_merges`` takes a
    piece that is itself in the vocabulary as one token (Llama 3 sets it).
    ``dropout`` skips each candidate merge with that probability (subword
    regularization; off by default; see ``encode_piece(..., rng=)``).

    Cost: building is O(V + M) for V tokens and M merges (a dict keyed by
    ``left_id * stride + right_id``). ``encode_piece`` on n symbols is O(n^2) with C
    inner loops below 24 symbols and a heap above, like the byte-level merge.
    """

    __slots__ = (
        "vocab",
        "merges",
        "unk_token",
        "byte_fallback",
        "fuse_unk",
        "ignore_merges",
        "continuing_subword_prefix",
        "end_of_word_suffix",
        "dropout",
        "_pairs",
        "_stride",
        "_unk_id",
        "_byte_ids",
    )

    def __init__(
        self,
        vocab: Mapping[str, int],
        merges: list[tuple[str, str]],
        *,
        unk_token: str | None = None,
        byte_fallback: bool = False,
        fuse_unk: bool = False,
        ignore_merges: bool = False,
        continuing_subword_prefix: str | None = None,
        end_of_word_suffix: str | None = None,
        dropout: float | None = None,
        where: str = "model",
    ) -> None:
        self.vocab = dict(vocab)
        self.merges = list(merges)
        self.unk_token = unk_token
        self.byte_fallback = byte_fallback
        self.fuse_unk = fuse_unk
        self.ignore_merges = ignore_merges
        self.continuing_subword_prefix = continuing_subword_prefix
        self.end_of_word_suffix = end_of_word_suffix
        if dropout is not None and not 0.0 <= dropout <= 1.0:
            raise ValueError(f"{where}.dropout: {dropout} is not a probability")
        self.dropout = dropout
        stride = max(self.vocab.values(), default=0) + 1
        self._stride = stride
        prefix_len = len(continuing_subword_prefix or "")
        pairs: dict[int, tuple[int, int]] = {}
        for rank, (left, right) in enumerate(self.merges):
            a, b = self.vocab.get(left), self.vocab.get(right)
            if a is None or b is None:
                missing = left if a is None else right
                raise ValueError(
                    f"{where}.merges[{rank}]: {missing!r} is not in the vocabulary"
                )
            # The merged token drops the right part's continuation prefix, as Rust does.
            merged = left + (right[prefix_len:] if prefix_len and right.startswith(continuing_subword_prefix or "") else right)
            new_id = self.vocab.get(merged)
            if new_id is None:
                raise ValueError(
                    f"{where}.merges[{rank}]: the merged token {merged!r} is not in the vocabulary"
                )
            pairs.setdefault(a * stride + b, (rank, new_id))
        self._pairs = pairs
        self._unk_id: int | None = None
        if unk_token is not None:
            self._unk_id = self.vocab.get(unk_token)
        self._byte_ids: list[int | None] | None = None
        if byte_fallback:
            self._byte_ids = [self.vocab.get(f"<0x{b:02X}>") for b in range(256)]

    def symbols(self, piece: str) -> list[int]:
        """The initial symbols of a piece: characters, byte fallbacks and unknowns."""
        vocab = self.vocab
        prefix, suffix = self.continuing_subword_prefix, self.end_of_word_suffix
        if prefix is None and suffix is None:
            ids = list(map(vocab.get, piece))
            if None not in ids:
                return ids  # type: ignore[return-value]
        out: list[int] = []
        unk_pending = False
        last = len(piece) - 1
        for i, ch in enumerate(piece):
            s = ch
            if i and prefix is not None:
                s = prefix + s
            if i == last and suffix is not None:
                s = s + suffix
            tid = vocab.get(s)
            if tid is not None:
                unk_pending = False
                out.append(tid)
                continue
            if self._byte_ids is not None:
                byte_ids = [self._byte_ids[b] for b in s.encode("utf-8")]
                if None not in byte_ids:
                    out.extend(byte_ids)  # type: ignore[arg-type]
                    unk_pending = False
                    continue
            if self._unk_id is None:
                if self.unk_token is not None:
                    raise ValueError(f"unk_token {self.unk_token!r} is not in the vocabulary")
                continue  # no unk token: the character is dropped, as in Rust
            if unk_pending and self.fuse_unk:
                continue
            out.append(self._unk_id)
            unk_pending = True
        return out

    def cut_char(self) -> str | None:
        """A character ``c`` at whose runs text can be cut without changing the ids.

        When no token holds ``c`` right after another character, no merge can join
        the text before a run of ``c`` to the run, so ``encode_piece`` of a whole text
        equals the concatenation over its pieces ``c*[^c]+|c+``: SentencePiece-style
        BPE (no pre-tokenizer, ``▁`` for spaces) can then be cached per word. Returns
        ``"▁"`` or ``" "`` when that holds, else None (also under dropout, prefixes or
        suffixes, which depend on where a piece starts and ends).

        Cost: one pass over the vocabulary (~10 ms for 32k tokens).
        """
        if self.dropout or self.continuing_subword_prefix or self.end_of_word_suffix:
            return None
        for c in ("\u2581", " "):
            # c must be a token: an unknown c could fuse with an unknown before it.
            if c in self.vocab and not any(_joins_before(t, c) for t in self.vocab):
                return c
        return None

    def to_json(self) -> dict[str, object]:
        """The ``tokenizer.json`` model object."""
        return {
            "type": "BPE",
            "dropout": self.dropout,
            "unk_token": self.unk_token,
            "continuing_subword_prefix": self.continuing_subword_prefix,
            "end_of_word_suffix": self.end_of_word_suffix,
            "fuse_unk": self.fuse_unk,
            "byte_fallback": self.byte_fallback,
            "ignore_merges": self.ignore_merges,
            "vocab": self.vocab,
            "merges": [[a, b] for a, b in self.merges],
        }

    def encode_piece(self, piece: str, *, rng: object = None) -> tuple[int, ...]:
        """The ids of one pre-token. ``rng`` (a numpy Generator) enables dropout."""
        if not piece:
            return ()
        if self.ignore_merges:
            tid = self.vocab.get(piece)
            if tid is not None:
                return (tid,)
        symbols = self.symbols(piece)
        if self.dropout and rng is not None:
            return tuple(_merge_ids_heap(symbols, self._pairs, self._stride, self.dropout, rng))
        return tuple(_merge_ids(symbols, self._pairs, self._stride))


def merges_for_ranks(ranks: Mapping[bytes, int]) -> list[tuple[bytes, bytes]]:
    """The merge list under which ``BPE`` (with ``ignore_merges``) encodes as
    ``BytePairEncoder`` does on ``ranks``.

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


def _joins_before(token: str, c: str) -> bool:
    """True when ``c`` follows another character somewhere in ``token``."""
    i = token.find(c, 1)
    while i > 0:
        if token[i - 1] != c:
            return True
        i = token.find(c, i + 1)
    return False


def _merge_ids(symbols: list[int], pairs: Mapping[int, tuple[int, int]], stride: int) -> list[int]:
    """Merge ids by merge rank, leftmost first (``tokenizers``' ``Word::merge_all``)."""
    n = len(symbols)
    if n < 2:
        return symbols
    get = pairs.get
    none = (_NO_RANK, -1)
    if n < _BUCKETS_MIN:
        cand = [get(a * stride + b, none) for a, b in zip(symbols, symbols[1:])]
        while cand:
            best = min(cand)
            if best[0] == _NO_RANK:
                break
            i = cand.index(best)
            symbols[i : i + 2] = [best[1]]
            del cand[i]
            if i < len(cand):
                cand[i] = get(symbols[i] * stride + symbols[i + 1], none)
            if i > 0:
                cand[i - 1] = get(symbols[i - 1] * stride + symbols[i], none)
        return symbols
    return _merge_ids_heap(symbols, pairs, stride)


def _merge_ids_heap(
    symbols: list[int],
    pairs: Mapping[int, tuple[int, int]],
    stride: int,
    dropout: float = 0.0,
    rng: object = None,
) -> list[int]:
    """Long pieces, and dropout: a heap of (rank, pos, new_id) over a linked list, as
    the Rust ``merge_all``; with ``dropout`` each popped merge is skipped with that
    probability and the skipped ones return to the heap after the next merge."""
    random = rng.random if dropout else None  # type: ignore[attr-defined]
    n = len(symbols)
    get = pairs.get
    nxt = list(range(1, n + 1))
    prv = list(range(-1, n - 1))
    alive = [True] * n
    heap = []
    for i in range(n - 1):
        m = get(symbols[i] * stride + symbols[i + 1])
        if m is not None:
            heap.append((m[0], i, m[1]))
    heapq.heapify(heap)
    skipped: list[tuple[int, int, int]] = []
    while heap:
        top = heapq.heappop(heap)
        if random is not None:
            if random() < dropout:
                skipped.append(top)
                continue
            for entry in skipped:
                heapq.heappush(heap, entry)
            skipped.clear()
        _, pos, new_id = top
        if not alive[pos] or nxt[pos] >= n:
            continue
        right = nxt[pos]
        m = get(symbols[pos] * stride + symbols[right])
        if m is None or m[1] != new_id:
            continue
        symbols[pos] = new_id
        alive[right] = False
        nxt[pos] = nxt[right]
        if nxt[pos] < n:
            prv[nxt[pos]] = pos
        before = prv[pos]
        if before >= 0:
            m = get(symbols[before] * stride + new_id)
            if m is not None:
                heapq.heappush(heap, (m[0], before, m[1]))
        if nxt[pos] < n:
            m = get(new_id * stride + symbols[nxt[pos]])
            if m is not None:
                heapq.heappush(heap, (m[0], pos, m[1]))
    return [s for s, a in zip(symbols, alive) if a]


class SentencePieceBPE:
    """SentencePiece's BPE (``bpe_model.cc``): merges by piece *score*, not by a list.

    The piece starts as its characters, except that user-defined pieces are matched
    whole (longest first) and never merged. Repeatedly, the adjacent pair whose
    concatenation is a piece with the highest score is merged, the leftmost on ties.
    Pieces of type UNUSED may be merged through and are then split back into the
    pieces they were made of. A symbol that is not a piece is unknown: with
    ``byte_fallback`` it becomes its ``<0xXX>`` byte pieces, else ``unk_id``, and a
    run of unknowns is one ``unk_id``, as SentencePiece reports it.

    Cost: O(n log n) per piece with a heap; pieces are cached by the tokenizer.
    """

    def __init__(
        self,
        pieces: list[tuple[str, float, int]],
        *,
        unk_id: int,
        byte_fallback: bool,
    ) -> None:
        # pieces: (text, score, type) by id; types as in sentencepiece_model.proto.
        self.pieces = pieces
        self.unk_id = unk_id
        self.byte_fallback = byte_fallback
        normal, unused, user = 1, 5, 4
        self._score: dict[str, float] = {}
        self._id: dict[str, int] = {}
        self._unused: set[str] = set()
        self._user: list[str] = []
        for i, (text, score, kind) in enumerate(pieces):
            if kind in (normal, user, unused):
                self._score.setdefault(text, score)
                self._id.setdefault(text, i)
                if kind == unused:
                    self._unused.add(text)
                if kind == user:
                    self._user.append(text)
        self._byte_ids = [self._id_or_none(f"<0x{b:02X}>", pieces) for b in range(256)]
        self._user_re = (
            regex.compile("|".join(regex.escape(u) for u in sorted(self._user, key=len, reverse=True)))
            if self._user
            else None
        )

    @staticmethod
    def _id_or_none(text: str, pieces: list[tuple[str, float, int]]) -> int | None:
        for i, (t, _, kind) in enumerate(pieces):
            if t == text and kind == 6:
                return i
        return None

    def _symbols(self, piece: str) -> list[tuple[str, bool]]:
        if self._user_re is None:
            return [(c, False) for c in piece]
        out: list[tuple[str, bool]] = []
        pos = 0
        for m in self._user_re.finditer(piece):
            out += [(c, False) for c in piece[pos : m.start()]]
            out.append((m.group(), True))
            pos = m.end()
        out += [(c, False) for c in piece[pos:]]
        return out

    def encode_piece(self, piece: str) -> tuple[int, ...]:
        syms = self._symbols(piece)
        n = len(syms)
        text = [s for s, _ in syms]
        frozen = [f for _, f in syms]
        nxt = list(range(1, n + 1))
        prv = list(range(-1, n - 1))
        score = self._score
        rev: dict[str, tuple[str, str]] = {}
        heap: list[tuple[float, int, int, int]] = []

        def add(left: int, right: int) -> None:
            if left < 0 or right >= n or frozen[left] or frozen[right]:
                return
            merged = text[left] + text[right]
            sc = score.get(merged)
            if sc is None:
                return
            heapq.heappush(heap, (-sc, left, right, len(merged)))
            if merged in self._unused:
                rev[merged] = (text[left], text[right])

        for i in range(1, n):
            add(i - 1, i)
        while heap:
            _, left, right, size = heapq.heappop(heap)
            if not text[left] or not text[right] or len(text[left]) + len(text[right]) != size:
                continue
            text[left] += text[right]
            nxt[left] = nxt[right]
            if nxt[right] < n:
                prv[nxt[right]] = left
            text[right] = ""
            add(prv[left], left)
            add(left, nxt[left])
        out: list[int] = []
        i = 0
        while i < n:
            self._emit(text[i], rev, out)
            i = nxt[i]
        unk = self.unk_id
        if unk in out:
            # SentencePiece merges a run of unknown pieces into one.
            out = [t for k, t in enumerate(out) if t != unk or k == 0 or out[k - 1] != unk]
        return tuple(out)

    def _emit(self, w: str, rev: dict[str, tuple[str, str]], out: list[int]) -> None:
        if w in self._unused and w in rev:
            a, b = rev[w]
            self._emit(a, rev, out)
            self._emit(b, rev, out)
            return
        tid = self._id.get(w)
        if tid is not None:
            out.append(tid)
            return
        if self.byte_fallback:
            ids = [self._byte_ids[b] for b in w.encode("utf-8")]
            if None not in ids:
                out.extend(ids)  # type: ignore[arg-type]
                return
        out.append(self.unk_id)

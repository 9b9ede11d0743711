"""Hugging Face ``tokenizers``' BPE: a vocabulary plus an ordered merge list.

Matches the Rust ``BPE::tokenize`` (class notes), with byte fallback, ``fuse_unk``,
continuing-subword prefixes and end-of-word suffixes, ``ignore_merges`` and dropout.

Not here: tiktoken's rank-file BPE, which merges by the ranks of concatenated bytes
(``ranks.py``), and SentencePiece's score-based BPE (``sentencepiece.py``).
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..byte_level import bytes_to_proxy, proxies_to_bytes, proxy_to_bytes
from .base import ByteEncoder, Model, Spelling
from .ranks import merges_for_ranks

__all__ = ["BPE"]

_BUCKETS_MIN: Final = 24
_NO_RANK: Final = 1 << 62


class BPE(Model):
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
        merges: Sequence[tuple[str, str]],
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
        self._stride = stride = max(self.vocab.values(), default=0) + 1
        self._pairs = _pair_table(self.vocab, self.merges, continuing_subword_prefix or "", stride, where)
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

    # ------------------------------------------------------------- declarations

    def token_to_id(self, spelling: str) -> int | None:
        return self.vocab.get(spelling)

    def spellings(self) -> Mapping[int, str]:
        return {i: s for s, i in self.vocab.items()}

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def byte_encoder(self, spelling: Spelling) -> ByteEncoder | None:
        """Byte-level pieces encode from their bytes (not under dropout, which a cache
        would freeze); a piece that is a token is that token only under
        ``ignore_merges`` (otherwise the merges decide)."""
        if spelling is not Spelling.BYTE_LEVEL or self.dropout:
            return None
        encode_piece = self.encode_piece

        def encode_bytes(piece: bytes) -> tuple[int, ...]:
            return encode_piece(bytes_to_proxy(piece))

        whole: dict[bytes, int] = {}
        if self.ignore_merges:
            whole = {d: i for d, i in zip(proxies_to_bytes(self.vocab), self.vocab.values()) if d is not None}
        return encode_bytes, whole

    def rank_form(self, spelling: Spelling, specials: Mapping[str, int]) -> dict[bytes, int] | None:
        """The tiktoken ranks this model encodes as, when it is exactly what
        ``RankBPE.to_json`` writes (``ignore_merges``, ``merges_for_ranks`` as its merge
        list, nothing else set; ``specials`` listed in the vocabulary are left out);
        else None. Cost: rebuilding the merge list (about 1 s for o200k), once."""
        if (
            spelling is not Spelling.BYTE_LEVEL
            or not self.ignore_merges
            or self.dropout
            or self.byte_fallback
            or self.unk_token is not None
            or self.continuing_subword_prefix
            or self.end_of_word_suffix
        ):
            return None
        ranks: dict[bytes, int] = {}
        for spelling_, tid in self.vocab.items():
            if specials.get(spelling_) == tid:
                continue  # RankBPE.to_json lists the specials in the vocabulary too
            data = proxy_to_bytes(spelling_)
            if data is None:
                return None
            ranks[data] = tid
        derived = merges_for_ranks(ranks)
        if len(derived) != len(self.merges) or any(
            (bytes_to_proxy(a), bytes_to_proxy(b)) != pair for (a, b), pair in zip(derived, self.merges)
        ):
            return None
        return ranks

    @property
    def unknown_id(self) -> int | None:
        return self._unk_id

    @property
    def id_limit(self) -> int:
        return self._stride if self.vocab else 0

    @property
    def byte_tokens(self) -> bool:
        return self.byte_fallback

    @property
    def subword_prefix(self) -> str:
        return self.continuing_subword_prefix or ""

    @property
    def word_suffix(self) -> str:
        return self.end_of_word_suffix or ""

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        # The merge table is derived: pickle the vocabulary and merges only.
        return (_rebuild, (self.vocab, self.merges, self._options()))

    def _options(self) -> dict[str, Any]:
        return {
            "unk_token": self.unk_token,
            "byte_fallback": self.byte_fallback,
            "fuse_unk": self.fuse_unk,
            "ignore_merges": self.ignore_merges,
            "continuing_subword_prefix": self.continuing_subword_prefix,
            "end_of_word_suffix": self.end_of_word_suffix,
            "dropout": self.dropout,
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


def _pair_table(
    vocab: Mapping[str, int], merges: Sequence[tuple[str, str]], prefix: str, stride: int, where: str
) -> dict[int, tuple[int, int]]:
    """``left_id * stride + right_id -> (rank, merged_id)``, the first merge of a pair
    winning. Built with C-level ``map``s (Llama 3's 280k merges: ~0.1 s; a Python loop
    took 0.6 s)."""
    lefts = [a for a, _ in merges]
    rights = [b for _, b in merges]
    get = vocab.get
    a_ids = list(map(get, lefts))
    b_ids = list(map(get, rights))
    if prefix:
        # The merged token drops the right part's continuation prefix, as Rust does.
        cut = len(prefix)
        merged = [a + (b[cut:] if b.startswith(prefix) else b) for a, b in zip(lefts, rights)]
    else:
        merged = list(map(str.__add__, lefts, rights))
    new_ids = list(map(get, merged))
    if None in a_ids or None in b_ids or None in new_ids:
        for rank, (left, right) in enumerate(merges):
            if a_ids[rank] is None or b_ids[rank] is None:
                missing = left if a_ids[rank] is None else right
                raise ValueError(f"{where}.merges[{rank}]: {missing!r} is not in the vocabulary")
            if new_ids[rank] is None:
                raise ValueError(
                    f"{where}.merges[{rank}]: the merged token {merged[rank]!r} is not in the vocabulary"
                )
    keys = list(map(stride.__mul__, a_ids))  # type: ignore[arg-type]
    keys = list(map(int.__add__, keys, b_ids))  # type: ignore[arg-type]
    n = len(keys)
    # Reversed, so that the first merge of a repeated pair is the one kept.
    return dict(zip(reversed(keys), zip(range(n - 1, -1, -1), reversed(new_ids))))  # type: ignore[arg-type]


def _rebuild(vocab: dict[str, int], merges: list[tuple[str, str]], options: dict[str, Any]) -> BPE:
    return BPE(vocab, merges, **options)


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

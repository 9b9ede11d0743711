"""The public vocabulary: what every layer above the core reads about a tokenizer's tokens.

``tok.vocab`` (a ``Vocabulary``) is the one place ``stream/``, ``constrain/`` and
``cache/`` learn about tokens, as llguidance's ``TokEnv`` and xgrammar's
``TokenizerInfo`` are for their engines:

- ``token_bytes(id)`` and the whole ``table``: each id's bytes in decoded text (the
  byte-level proxy undone, ``▁`` as a space, ``<0xXX>`` as its byte; None for an id
  the vocabulary does not have), built on first use;
- ``special_ids``, and ``added_ids``: the ids the post-processor puts before and after
  a text (BOS, CLS / EOS, SEP);
- ``spellings``: each id's spelling in the vocabulary (``"Ġhello"``, ``"▁the"``);
- ``index``: the ``VocabIndex`` (token bytes sorted, and in a trie), built on first use,
  once, under a lock.

Cost: nothing is built until used, once, under a lock: the bytes table (O(V), shared
with ``Tokenizer.decode``; ~40 ms for Llama 3, which an encode-only user never pays),
the spellings and the index (``VocabIndex`` has its own Cost note).
"""

from __future__ import annotations

import threading
import weakref
from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

import marisa_trie
import numpy as np
import numpy.typing as npt

from .errors import InvalidTokenIdError

__all__ = ["Slice", "VocabIndex", "Vocabulary"]

#: A ``(start, stop)`` range of positions in ``VocabIndex.order``.
Slice = tuple[int, int]


class Vocabulary:
    """One tokenizer's tokens (module notes).

    >>> import tokstream
    >>> vocab = tokstream.load("cl100k_base").vocab
    >>> vocab.token_bytes(15339), 100257 in vocab.special_ids, vocab.added_ids
    (b'hello', True, ((), ()))
    """

    __slots__ = (
        "_index",
        "_lock",
        "_make_table",
        "_spell",
        "_spellings",
        "_table",
        "added_ids",
        "n_vocab",
        "name",
        "special_ids",
    )

    def __init__(
        self,
        table: Callable[[], list[bytes | None]],
        *,
        n_vocab: int,
        special_ids: frozenset[int],
        added_ids: tuple[tuple[int, ...], tuple[int, ...]] = ((), ()),
        spellings: Callable[[], Sequence[str | None]],
        name: str = "tokenizer",
    ) -> None:
        self._make_table = table
        # Tuples, not lists, for every vocabulary-sized table here: a tuple of bytes and
        # None is untracked by the cyclic GC after its first collection, where a list
        # is traversed item by item in every full collection (~30 ns an item, 40 ms
        # for Llama 3's tables, paid at random inside compiles and masks).
        self._table: tuple[bytes | None, ...] | None = None
        self.n_vocab: int = n_vocab
        self.special_ids: frozenset[int] = special_ids
        self.added_ids: tuple[tuple[int, ...], tuple[int, ...]] = added_ids
        self.name = name
        self._spell = spellings
        self._spellings: tuple[str | None, ...] | None = None
        self._index: VocabIndex | None = None
        self._lock = threading.RLock()  # the index reads the table under it

    @property
    def table(self) -> tuple[bytes | None, ...]:
        """Each id's bytes (None: the id is a hole), ``n_vocab`` of them. Read-only: it
        is the tokenizer's own decode table."""
        table = self._table
        if table is None:
            with self._lock:
                table = self._table
                if table is None:
                    table = self._table = tuple(self._make_table())
                    if len(table) != self.n_vocab:  # pragma: no cover - a pipeline bug
                        raise RuntimeError(f"{self.name}: {len(table)} token bytes for {self.n_vocab} ids")
        return table

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes ``token_id`` contributes to decoded text; ``InvalidTokenIdError``
        for an id the vocabulary does not have (a ``bool`` is not an id)."""
        table = self.table
        if type(token_id) is bool or not isinstance(token_id, (int, np.integer)) or not 0 <= token_id < len(table):
            raise InvalidTokenIdError(token_id, self.name, self.n_vocab)
        data = table[token_id]
        if data is None:
            raise InvalidTokenIdError(token_id, self.name, self.n_vocab)
        return data

    @property
    def spellings(self) -> tuple[str | None, ...]:
        """Each id's spelling in the vocabulary (``Tokenizer.id_to_token``), None for a
        hole; built on first use."""
        if self._spellings is None:
            with self._lock:
                if self._spellings is None:
                    self._spellings = tuple(self._spell())
        return self._spellings

    @property
    def index(self) -> VocabIndex:
        """The sorted-bytes and trie index over the text tokens, built on first use
        (thread-safe: concurrent first uses build it once)."""
        index = self._index
        if index is None:
            with self._lock:
                index = self._index
                if index is None:
                    index = self._index = VocabIndex(self.table, self.special_ids)
        return index

    def __repr__(self) -> str:
        return f"<Vocabulary {self.name!r} n_vocab={self.n_vocab}>"


class VocabIndex:
    """Token bytes of one tokenizer, sorted and in a trie: what prefix-style constraints
    and masks ask at every step.

    - *which tokens extend a byte string?* The text tokens sorted by their bytes
      (``order``) put every extension of a prefix in one contiguous slice, found by two
      binary searches (``extensions``): O(log V) and no Python loop over the slice.
    - *which tokens are prefixes of a byte string?* A ``marisa_trie.BinaryTrie`` over
      the distinct token bytes answers with at most one key per length of the string
      (``prefixes``); each key maps to the slice of ``order`` holding the ids that
      share those bytes (several ids can: an added token spelled like a vocabulary
      token).

    Special tokens and tokens with no bytes (holes, empty pieces) are in neither: no
    text matching ever allows them. ``token_bytes[id]`` is the id's bytes, ``b""`` for
    those; ``order`` the text ids sorted by (bytes, id); ``rank[id]`` an id's position
    in ``order`` (-1 for those), which masks use to turn slices back into ids;
    ``special`` a bool array of the special ids.

    Cost (o200k_base, 200k ids): build ~0.2 s (one sort of the bytes, one trie); memory
    ~3 MB of numpy arrays plus the trie (~2 MB) and the sorted bytes list, which shares
    the tokenizer's bytes objects. ``extensions`` ~2 us, ``prefixes`` ~1 us per key
    found (``bench/masks.py``).
    """

    __slots__ = ("__weakref__", "_key_slice", "_sorted", "n_vocab", "order", "rank", "special", "token_bytes", "trie")

    def __init__(self, table: Sequence[bytes | None], special_ids: frozenset[int]) -> None:
        n = len(table)
        self.n_vocab: int = n
        # Tuples: untracked by the GC (``Vocab.table``).
        self.token_bytes: tuple[bytes, ...] = tuple(
            b"" if (i in special_ids or data is None) else data for i, data in enumerate(table)
        )
        text_ids = [i for i, b in enumerate(self.token_bytes) if b]
        order = sorted(text_ids, key=lambda i: (self.token_bytes[i], i))
        self.order: npt.NDArray[np.int32] = np.asarray(order, dtype=np.int32)
        self._sorted: tuple[bytes, ...] = tuple([self.token_bytes[i] for i in order])
        rank = np.full(n, -1, dtype=np.int32)
        rank[self.order] = np.arange(len(order), dtype=np.int32)
        self.rank: npt.NDArray[np.int32] = rank
        special = np.zeros(n, dtype=bool)
        special[list(special_ids)] = True
        self.special: npt.NDArray[np.bool_] = special
        self.trie = marisa_trie.BinaryTrie(self._sorted)
        # Trie key id -> the slice of `order` holding the ids with exactly those bytes.
        key_slice: list[Slice] = [(0, 0)] * len(self.trie)
        start = 0
        for k in range(1, len(self._sorted) + 1):
            if k == len(self._sorted) or self._sorted[k] != self._sorted[start]:
                key_slice[self.trie.key_id(self._sorted[start])] = (start, k)
                start = k
        self._key_slice: tuple[Slice, ...] = tuple(key_slice)

    def extensions(self, prefix: bytes) -> Slice:
        """The slice of ``order`` whose tokens' bytes start with ``prefix`` (``prefix``
        itself included)."""
        s = self._sorted
        lo = bisect_left(s, prefix)
        end = _successor(prefix)
        hi = len(s) if end is None else bisect_left(s, end, lo)
        return lo, hi

    def prefixes(self, data: bytes) -> list[Slice]:
        """The slices of ``order`` whose tokens' bytes are non-empty prefixes of
        ``data`` (``data`` itself included), shortest first."""
        trie, key_slice = self.trie, self._key_slice
        return [key_slice[trie.key_id(key)] for key in trie.prefixes(data)]

    def sized_prefixes(self, data: bytes) -> list[tuple[int, Slice]]:
        """``prefixes(data)`` with each one's length: ``(len, slice)``, shortest first
        (constraints keep the pieces after which the rest can still be spelled)."""
        trie, key_slice = self.trie, self._key_slice
        return [(len(key), key_slice[trie.key_id(key)]) for key in trie.prefixes(data)]

    def ids(self, slices: Sequence[Slice], keep: npt.NDArray[np.bool_] | None = None) -> npt.NDArray[np.int32]:
        """The ids in ``slices`` of ``order``, as one array (unsorted); with ``keep``
        (one bool per rank), only the ranks it marks."""
        if not slices:
            return np.empty(0, dtype=np.int32)
        order = self.order
        if keep is None:
            return np.concatenate([order[lo:hi] for lo, hi in slices])
        return np.concatenate([order[lo:hi][keep[lo:hi]] for lo, hi in slices])


T = TypeVar("T")


class PerIndex(Generic[T]):
    """``build(index)`` once per vocabulary index, for tables derived from it: built
    once even when threads ask together, and dropped with the index (a weak key).

    >>> tables = PerIndex(lambda index: object())
    """

    __slots__ = ("_build", "_cache", "_lock")

    def __init__(self, build: Callable[[VocabIndex], T]) -> None:
        self._build = build
        self._cache: weakref.WeakKeyDictionary[VocabIndex, T] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def __call__(self, index: VocabIndex) -> T:
        found = self._cache.get(index)
        if found is None:
            with self._lock:
                found = self._cache.get(index)
                if found is None:
                    found = self._cache[index] = self._build(index)
        return found


def _successor(prefix: bytes) -> bytes | None:
    """The smallest byte string greater than every string that starts with
    ``prefix``; None when there is none (``prefix`` is empty or all 0xFF)."""
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return None
    return stripped[:-1] + bytes([stripped[-1] + 1])

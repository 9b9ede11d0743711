"""Logits masks from constraints: bool masks, xgrammar-layout int32 bitmasks, ``-inf``.

``TokenMasker(tok)`` turns what a ``Constraint`` allows next (``Constraint.allowed()``:
everything, or slices of the vocabulary index's ``order`` plus explicit ids) into

- ``mask``: a bool array ``(n_vocab,)``, True where the id is allowed;
- ``bitmask``: int32 words ``(ceil(n_vocab / 32),)``, bit ``i % 32`` of word ``i // 32``
  set when id ``i`` is allowed, least significant bit first. This is the layout that
  xgrammar's ``apply_token_bitmask_inplace`` and llguidance's
  (``llguidance.numpy.apply_token_bitmask_inplace``) read: ``np.packbits(mask,
  bitorder="little")`` as little-endian int32. Bits past ``n_vocab`` are zero, so
  padded ids stay disallowed; an all-allowed word is ``-1``. Ids must fit in int32;
- ``apply``: disallowed logits set to ``-inf`` in place (numpy, or torch when installed);
- ``draft_masks``: one mask per position of a speculative draft;
- ``fill_bitmask_batch``: a whole batch's rows in one call, into the caller's
  ``(batch, words)`` array (xgrammar's and llguidance's batch shape; *Batches* below).

Every result is a fresh array that the caller owns and may change (``fill_bitmask``
and ``fill_bitmask_batch`` write into the caller's array instead).

It leaves out: logits narrower than the vocabulary (``apply`` raises), and GPU kernels
(``apply`` on a torch tensor builds the bool mask on the CPU and moves it).

Performance notes. o200k_base (V = 200k) on a shared 2-core machine, numpy 2.4, p50 per
call; ``python bench/masks.py`` prints the kept design and the dropped ones in one run.
The hard case is a short prefix: ``b" "`` allows one slice of 106,529 ids (53% of the
vocabulary), ``b"e"`` 2,026; after the first step a slice is usually a few ids.

- *Scatter*, ``mask[order[lo:hi]] = True``: ~1.7 ns per id, 210 us for ``b" "``; into
  packed words (``np.bitwise_or.at``) ~6.5 ns per id. Kept for small slices only.
- *Rank compare*, ``(rank >= lo) & (rank < hi)``: O(V) whatever the slice: 47-95 us
  for the bool mask, more with packing, 100-300 us with several slices. Dropped.
- *LRU of packed slices* keyed by ``(lo, hi)``: ~1 us warm, but the first use of each
  slice pays the scatter and ``packbits`` (~220 us), and that first use is exactly
  "heal, then the first mask". Dropped for the structure below: no cold case, a fixed
  size, no eviction policy.
- *Kept: prefix bitmasks.* ``P[k]`` is the packed int32 bitmask of the ids at ranks
  ``[0, k*B)`` (``B = 1024``), so ranks ``[a*B, b*B)`` are ``P[b] ^ P[a]``: one XOR of
  ``V/32`` words (~1 us). A slice ``[lo, hi)`` of at least ``B`` ids rounds ``lo`` and
  ``hi`` to the nearest multiple of ``B`` and toggles the at most ``B`` ids in between
  (``bitwise_xor.at`` on the words, or set / clear in the bool mask). Build, on the
  first large slice: one ``bincount`` and one ``bitwise_or.accumulate``, 10-35 ms and
  ``(V/B + 1) * V/8`` bytes (4.9 MB for o200k_base, 2 MB for Llama 3's 128k). ``B =
  512`` doubled the memory for no measurable gain; ``B = 2048`` halved it but doubled
  the toggles (~20 us). The bool mask adds ``np.unpackbits`` (~10 us), so it takes this
  path only for slices of 8192 ids or more; below, scattering into ``np.zeros`` wins.
- Measured (o200k_base / Llama 3): ``bitmask`` 8-14 us for every prefix; ``mask``
  19-27 us for ``b" "`` and 6-9 us for the others; ``heal`` + first mask 28-38 us for
  ``b" "``, 11-17 us for the others; ``draft_masks`` of 4 ids 30-80 us; the naive
  Python scan over the vocabulary 17-60 ms (1,000-6,700x slower than ``mask``).
- ``apply`` cannot use a masked assignment: ``np.copyto(x, -inf, where=~mask)``,
  ``np.putmask`` and ``np.where`` branch per element and cost 750-950 us on a 50% mask.
  Kept: a byte -> 8 floats table (``+inf`` allowed, ``-inf`` not) gathered over the
  packed bitmask's bytes (``take``, ~22 us) and ``np.minimum(logits, bias)`` (~26 us),
  80-160 us together for ``b" "`` (both stream 800 KB), so allowed values stay exactly
  as they were and disallowed ones become ``-inf``. ``np.minimum`` would keep a NaN, so
  one ``sum`` (~15 us) detects NaNs and those at disallowed ids are set first. A float16 table was slower (the cast); a reused bias
  buffer was no faster. Few allowed ids (<= 4096): save them, fill ``-inf``, restore
  (25-40 us).
- *UTF-8* (``utf8``; ``Allowed.utf8_state``): a constraint's slices are narrowed to
  the tokens that may follow the output's open UTF-8 state. Per state, the packed ids
  of those tokens are built once (``_Tables.ok_words``, ``V/8`` bytes each, ~1 ms), so
  the filter is one ``&`` of ``V/32`` words after the prefix-bitmask XOR (~2 us), or a
  boolean selection of the slice (``ok[lo:hi]``) before a scatter. Computing validity
  per call from the token bytes (a Python scan of the slice) cost ~60 ms for
  ``b" "``; a per-state rank compare ~100 us. The filter of the 8 states holds ``8 x
  V/8`` bytes of words plus ``utf8.Utf8Index`` (``8 x (V + T)`` bytes).
- *Batches* (``fill_bitmask_batch``): the rows may run on one thread pool per
  process, shared by every masker (one thread fewer than the cores: the caller works
  too). Each thread claims the next row until none is left, so a cold row
  (milliseconds) and warm ones (microseconds) balance; a pool task that has not
  started when the rows run out is cancelled, not waited for (two callers share the
  pool without waiting on each other's batches). Measured with ``python
  bench/batch.py`` (Llama 3, 2 cores; 64 walks of different sample schemas stepped
  together, a finished walk's row taken by the next schema; 200 steps; two cold
  copies of tokstream in one run): two threads against one, per step p50 0.97-1.00x,
  mean 0.99-1.04x; 64 warm rows (cached masks, ~3 us each) ~1.4x slower on two
  threads (the hand-off costs more than the rows). Threads do not help because a
  row's work holds the GIL: a cold row is the parser (``ESet.run`` and the crossings'
  loop, ~65% of its time) and the walker's Python narrow walk; numpy's C loops, the
  only part that could run without the GIL, are ~5% of it (cProfile) and run on small
  arrays. So ``threads=None`` is one thread (``_DEFAULT_THREADS``) until the walk
  and the parser run in compiled code without the GIL. The step costs what its cold
  rows cost: p50 ~0.4-0.65 s per step of 64 rows against llguidance's 12-16 ms
  (``fill_next_token_bitmask_par``), 33-41x; a quarter of the rows are new parser
  states over 1 ms and hold ~97% of the time.
- A few explicit ids (a grammar's EOS) are set one by one (``_or_ids``, ~0.3 us
  each): ``np.bitwise_or.at`` and its array checks cost ~11 us, more than the copy of
  a cached row.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

from ..errors import InvalidTokenIdError, TokstreamError
from ..vocab import PerIndex, Slice, VocabIndex
from .bitmask import BITS, pack_bitmask, unpack_bitmask
from .constraint import Allowed, Constraint, check_id
from .utf8 import N_LIVE, utf8_index

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["TokenMasker", "pack_bitmask", "unpack_bitmask"]

BoolArray = npt.NDArray[np.bool_]
Int32Array = npt.NDArray[np.int32]

#: Rank block of the prefix bitmasks: toggles per slice <= _BLOCK, memory ~ 1 / _BLOCK.
_BLOCK = 1024
#: Slices at least this long use the prefix bitmasks for a bool mask (unpack ~10 us
#: versus ~1.7 ns per scattered id).
_BOOL_BIG = 8192
#: At most this many allowed ids: ``apply`` saves them, fills -inf and restores them.
_APPLY_FEW = 4096
#: At most this many explicit ids are set in a bitmask one by one (``_or_ids``).
_FEW_IDS = 16
#: ``fill_bitmask_batch(threads=None)``'s thread count; None would be one per core.
#: One, while the grammar walk holds the GIL: threads measured no faster cold and
#: slower warm (module notes, *Batches*). None once the walk runs without the GIL.
_DEFAULT_THREADS: int | None = 1


class _Tables:
    """Per-vocabulary-index data of the mask builders (module notes), shared by every
    ``TokenMasker`` of one tokenizer. Holds no reference to the index (it is the weak
    key of ``_tables``' cache)."""

    __slots__ = (
        "_lock",
        "_ok_words",
        "_prefix",
        "_utf8_ok",
        "_weak_index",
        "all_true",
        "all_words",
        "bit",
        "n_text",
        "n_vocab",
        "n_words",
        "order",
        "word",
    )

    def __init__(self, index: VocabIndex) -> None:
        n = index.n_vocab
        self.n_vocab = n
        self.n_words = (n + 31) // 32
        self.order = index.order.astype(np.intp)
        self.n_text = len(self.order)
        # Per rank (aligned with `order`): the id's word and its bit in that word.
        self.word: npt.NDArray[np.intp] = self.order >> 5
        self.bit: Int32Array = BITS[self.order & 31]
        self.all_true: BoolArray = np.ones(n, dtype=np.bool_)
        self.all_words: Int32Array = pack_bitmask(self.all_true)
        self._prefix: Int32Array | None = None
        self._lock = threading.Lock()
        self._weak_index = weakref.ref(index)
        self._utf8_ok: BoolArray | None = None
        self._ok_words: list[Int32Array | None] = [None] * N_LIVE

    @property
    def prefix(self) -> Int32Array:
        """``P[k]``: the packed ids at ranks ``[0, k*_BLOCK)``; built on first use,
        once (under the tables' lock)."""
        p = self._prefix
        if p is None:
            with self._lock:
                p = self._prefix
                if p is None:
                    p = self._prefix = self._build_prefix()
        return p

    def utf8_ok(self, state: int) -> BoolArray:
        """Per rank: whether the token may follow UTF-8 state ``state`` (``utf8``)."""
        ok = self._utf8_ok
        if ok is None:
            index = self._weak_index()
            if index is None:  # pragma: no cover - a masker holds its index
                raise RuntimeError("the vocabulary index is gone")
            ok = self._utf8_ok = utf8_index(index).ok  # built once, under utf8's lock
        row: BoolArray = ok[state]
        return row

    def ok_words(self, state: int) -> Int32Array:
        """The packed ids of the tokens that may follow UTF-8 state ``state``; built on
        first use per state, once (under the tables' lock)."""
        w = self._ok_words[state]
        if w is None:
            ok = self.utf8_ok(state)
            with self._lock:
                w = self._ok_words[state]
                if w is None:
                    m = np.zeros(self.n_vocab, dtype=np.bool_)
                    m[self.order[ok]] = True
                    w = self._ok_words[state] = pack_bitmask(m)
        return w

    def _build_prefix(self) -> Int32Array:
        t, w = self.n_text, self.n_words
        k = -(-t // _BLOCK)
        block = np.arange(t, dtype=np.intp) // _BLOCK
        # Per block, the OR of its ids' bits, as a sum (the bits within one word are
        # distinct ids, so they never carry); float64 holds sums < 2**32 exactly.
        sums = np.bincount(block * w + self.word, weights=self.bit.view(np.uint32), minlength=k * w)
        deltas = sums.astype(np.uint32).view(np.int32).reshape(k, w)
        prefix = np.zeros((k + 1, w), dtype=np.int32)
        if k:
            np.bitwise_or.accumulate(deltas, axis=0, out=prefix[1:])
        return prefix

    def rounded(self, lo: int, hi: int) -> tuple[int, int, int, int]:
        """``(a, b, edge_a, edge_b)``: ``lo`` and ``hi`` rounded to the nearest block
        boundary (block numbers, and their ranks capped at the text ids' count)."""
        a = (lo + _BLOCK // 2) // _BLOCK
        b = (hi + _BLOCK // 2) // _BLOCK
        # `hi` may round past the last (partial) block: P has only k + 1 rows.
        b = min(b, len(self.prefix) - 1)
        return a, b, min(a * _BLOCK, self.n_text), min(b * _BLOCK, self.n_text)


#: The tables of an index, built once (concurrent first maskers share one).
_tables: Final = PerIndex(_Tables)


#: Per logits dtype: byte value -> its 8 bits as +inf (allowed) / -inf (disallowed).
_BIAS: dict[np.dtype[Any], npt.NDArray[np.floating[Any]]] = {}


def _bias_table(dtype: np.dtype[Any]) -> npt.NDArray[np.floating[Any]]:
    table = _BIAS.get(dtype)
    if table is None:
        bits = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little")
        table = _BIAS[dtype] = np.where(bits.astype(bool), np.inf, -np.inf).astype(dtype)
    return table


class TokenMasker:
    """Masks of one tokenizer's vocabulary from constraints (module notes).

    ``mask`` (bool), ``bitmask`` (int32, xgrammar layout), their batch forms
    ``mask_batch`` / ``bitmask_batch``, ``fill_bitmask`` (into an engine's
    preallocated array) and ``fill_bitmask_batch`` (a batch's rows in one call),
    ``apply`` (``-inf`` in place) and ``draft_masks``. Results are fresh arrays. A
    constraint must come from the same tokenizer object.

    Cost: construction is O(1) after the tokenizer's first masker (the vocabulary index
    and these tables are cached per tokenizer; the first builds both, ~0.3 s for
    o200k_base, and the prefix bitmasks 10-35 ms on the first large slice). Per call
    on o200k_base: ``bitmask`` <= 15 us and ``mask`` <= 27 us for any prefix, ``apply``
    25-160 us (module notes; ``bench/masks.py``).

    >>> import tokstream
    >>> from tokstream.constrain import prefix_constraint
    >>> tok = tokstream.load("cl100k_base")
    >>> masker = TokenMasker(tok)
    >>> m = masker.mask(prefix_constraint(tok, b" wor"))
    >>> bool(m[tok.encode(" world")[0]]), bool(m[tok.encode(" hello")[0]])
    (True, False)
    """

    __slots__ = ("_tables", "index", "n_vocab", "n_words")

    def __init__(self, tok: Tokenizer) -> None:
        self.index = tok.vocab.index
        self._tables = _tables(self.index)
        self.n_vocab: int = self.index.n_vocab
        #: Words of a bitmask row: ceil(n_vocab / 32).
        self.n_words: int = self._tables.n_words

    # -- single masks -----------------------------------------------------------------

    def mask(self, constraint: Constraint[Any]) -> BoolArray:
        """A bool array ``(n_vocab,)``: True where ``constraint`` allows the id next."""
        return self._bool(self._allowed(constraint), None)

    def bitmask(self, constraint: Constraint[Any]) -> Int32Array:
        """int32 words ``(ceil(n_vocab / 32),)``: bit ``i % 32`` of word ``i // 32`` set
        when id ``i`` is allowed (xgrammar's layout; tail bits zero)."""
        return self._words(self._allowed(constraint), None)

    # -- batches ----------------------------------------------------------------------

    def mask_batch(self, constraints: Sequence[Constraint[Any]]) -> BoolArray:
        """Bool masks ``(len(constraints), n_vocab)``, row ``r`` = ``mask(constraints[r])``."""
        cs = _constraint_list(constraints)
        out = np.empty((len(cs), self.n_vocab), dtype=np.bool_)
        for r, c in enumerate(cs):
            self._bool(self._allowed(c), out[r])
        return out

    def bitmask_batch(self, constraints: Sequence[Constraint[Any]]) -> Int32Array:
        """int32 bitmasks ``(len(constraints), ceil(n_vocab / 32))``, row ``r`` =
        ``bitmask(constraints[r])``."""
        cs = _constraint_list(constraints)
        out = np.empty((len(cs), self.n_words), dtype=np.int32)
        for r, c in enumerate(cs):
            self._words(self._allowed(c), out[r])
        return out

    def fill_bitmask(self, constraint: Constraint[Any], out: Any, row: int = 0) -> None:
        """Write ``bitmask(constraint)`` into row ``row`` of ``out``, an int32 array
        ``(batch, words)`` or ``(words,)`` (then ``row`` must be 0), as engines
        preallocate it (``xgrammar.allocate_token_bitmask``); a CPU torch tensor works
        too. ``words`` may exceed ``ceil(n_vocab / 32)`` (the model's padded
        vocabulary): the extra words are zeroed, so padded ids stay disallowed."""
        if isinstance(row, (bool, np.bool_)) or not isinstance(row, (int, np.integer)):
            raise TokstreamError(f"fill_bitmask needs an int row, got {row!r}")
        arr = _as_numpy_out(out)
        if arr.dtype != np.int32:
            raise TypeError(f"fill_bitmask needs an int32 array, got {arr.dtype}")
        if arr.ndim == 1:
            if row != 0:
                raise IndexError(f"row {row} of a 1-D bitmask; pass row=0 or a 2-D array")
            target = arr
        elif arr.ndim == 2:
            if not -arr.shape[0] <= row < arr.shape[0]:
                raise IndexError(f"row {row} is out of range for a bitmask of {arr.shape[0]} rows")
            target = arr[row]
        else:
            raise ValueError(f"fill_bitmask needs a 1-D or 2-D array, got shape {arr.shape}")
        w = self.n_words
        if target.shape[0] < w:
            raise ValueError(
                f"the bitmask has {target.shape[0]} words, fewer than the {w} that n_vocab={self.n_vocab} needs; "
                f"allocate ceil(vocab_size / 32) words with vocab_size >= {self.n_vocab}"
            )
        self._words(self._allowed(constraint), target[:w])
        target[w:] = 0

    def fill_bitmask_batch(
        self,
        constraints: Sequence[Constraint[Any]],
        out: Any,
        *,
        indices: Sequence[int] | None = None,
        threads: int | None = None,
    ) -> None:
        """Write ``bitmask(constraints[k])`` into row ``indices[k]`` of ``out`` for every
        ``k`` (row ``k`` without ``indices``), in one call, the rows spread over a
        thread pool shared by every masker (module notes, *Batches*).

        The shape of xgrammar's ``BatchGrammarMatcher.batch_fill_next_token_bitmask(
        matchers, bitmask, indices)`` and of llguidance's ``fill_next_token_bitmask_par(
        executor, [(matcher, index), ...], bitmask)``: ``out`` is an int32 array
        ``(batch, words)``, numpy or a CPU torch tensor, ``words >= ceil(n_vocab / 32)``
        (the extra words are zeroed, as ``fill_bitmask`` does), ``batch`` at least the
        largest row named; rows not named are left as they are. ``indices`` are
        distinct rows (negative ones count from the end). Each row is exactly
        ``fill_bitmask`` of its constraint alone, whatever the threads.

        ``threads``: at most this many threads work on the rows, the caller's
        included, capped by the cores and the rows: ``1`` computes them in the
        calling thread; None (the default) is tokstream's choice, today one thread,
        as the grammar walk holds the GIL and threads measured no faster (module
        notes, *Batches*). Rows may share a compiled grammar (forks of one
        constraint, the same schema twice); the same constraint object may appear
        in several rows.

        Everything is checked before any row is written: a non-array ``out`` or a
        non-``Constraint`` raises ``TypeError``; a wrong dtype or shape, bad
        ``indices`` or ``threads``, a tensor off the CPU raise ``TokstreamError``
        naming the problem; a constraint of another tokenizer, ``ValueError``. An
        error while computing a row (the first row's in batch order) is raised
        after every thread has stopped; the rows other threads finished stay written.

        >>> import tokstream
        >>> from tokstream.constrain import prefix_constraint
        >>> tok = tokstream.load("cl100k_base")
        >>> masker = TokenMasker(tok)
        >>> out = np.zeros((4, masker.n_words), dtype=np.int32)
        >>> cs = [prefix_constraint(tok, b" wor"), prefix_constraint(tok, b"hel")]
        >>> masker.fill_bitmask_batch(cs, out, indices=[3, 1])
        >>> bool((out[3] == masker.bitmask(cs[0])).all()), int(out[0].any())
        (True, 0)
        """
        cs = _constraint_list(constraints)
        for c in cs:
            self.check(c)
        arr = _as_numpy_out(out, "fill_bitmask_batch")
        if arr.dtype != np.int32:
            raise TokstreamError(
                f"fill_bitmask_batch needs an int32 bitmask, got {arr.dtype}; "
                "allocate it with np.zeros((batch, words), dtype=np.int32) or xgrammar.allocate_token_bitmask"
            )
        if arr.ndim != 2:
            raise TokstreamError(
                f"fill_bitmask_batch needs a 2-D (batch, words) bitmask, got shape {tuple(arr.shape)}; "
                "for one row use fill_bitmask"
            )
        n_rows, n_cols = arr.shape
        w = self.n_words
        if n_cols < w:
            raise TokstreamError(
                f"the bitmask has {n_cols} words per row, fewer than the {w} that n_vocab={self.n_vocab} needs; "
                f"allocate ceil(vocab_size / 32) words with vocab_size >= {self.n_vocab}"
            )
        rows = self._batch_rows(indices, len(cs), n_rows)
        k = _batch_threads(threads, len(cs))
        jobs = list(zip(cs, rows))
        if k == 1:
            for c, r in jobs:
                self._fill_row(c, arr[r], w)
            return
        self._fill_parallel(jobs, arr, w, k)

    @staticmethod
    def _batch_rows(indices: Sequence[int] | None, n: int, n_rows: int) -> list[int]:
        """The row of each constraint, validated and made non-negative."""
        if indices is None:
            if n > n_rows:
                raise TokstreamError(
                    f"the bitmask has {n_rows} rows, fewer than the {n} constraints; "
                    "allocate at least one row per constraint, or pass indices"
                )
            return list(range(n))
        if isinstance(indices, (str, bytes)) or not hasattr(indices, "__len__"):
            raise TokstreamError(f"indices must be a sequence of row numbers, got {type(indices).__name__}")
        # numpy arrays and torch tensors: their items as Python ints
        items = indices.tolist() if hasattr(indices, "tolist") else list(indices)
        if len(items) != n:
            raise TokstreamError(f"{len(items)} indices for {n} constraints; pass one row per constraint")
        rows: list[int] = []
        seen: set[int] = set()
        for i in items:
            if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
                raise TokstreamError(f"indices must be ints, got {i!r}")
            if not -n_rows <= i < n_rows:
                raise TokstreamError(f"index {i} is out of range for a bitmask of {n_rows} rows")
            r = int(i) % n_rows
            if r in seen:
                raise TokstreamError(f"indices name row {r} twice; each constraint needs its own row")
            seen.add(r)
            rows.append(r)
        return rows

    def _fill_row(self, constraint: Constraint[Any], target: Int32Array, w: int) -> None:
        """``fill_bitmask``'s work on one (validated) row."""
        self._words(constraint.allowed(), target[:w])
        if target.shape[0] > w:
            target[w:] = 0

    def _fill_parallel(self, jobs: list[tuple[Constraint[Any], int]], arr: Int32Array, w: int, k: int) -> None:
        """The rows of ``jobs`` on ``k`` threads: ``k - 1`` tasks of the shared pool and
        the caller's own. Each thread claims the next row until none is left (cold
        rows cost milliseconds, warm ones microseconds: claiming balances them)."""
        lock = threading.Lock()
        nxt = [0]
        errors: list[tuple[int, BaseException]] = []

        def work() -> None:
            while True:
                with lock:
                    j = nxt[0]
                    if j >= len(jobs) or errors:
                        return
                    nxt[0] = j + 1
                c, r = jobs[j]
                try:
                    self._fill_row(c, arr[r], w)
                except Exception as e:  # raised in the caller, below
                    with lock:
                        errors.append((j, e))
                    return

        pool = _shared_pool()
        futures: list[Future[None]] = [pool.submit(work) for _ in range(k - 1)]
        try:
            work()
        finally:
            for f in futures:
                # A task that has not started (the pool busy with another caller's
                # batch) is not waited for: the rows are all claimed.
                if not f.cancel():
                    f.result()
        if errors:
            raise min(errors, key=lambda e: e[0])[1]

    # -- logits -------------------------------------------------------------------------

    def apply(self, logits: Any, constraint: Constraint[Any] | Sequence[Constraint[Any]]) -> Any:
        """Set the logits of disallowed ids to ``-inf`` in place and return ``logits``.

        ``logits``: a float numpy array ``(V,)`` with one constraint, or ``(batch, V)``
        with a sequence of ``batch`` constraints; a torch tensor the same way (torch is
        imported only then). ``V`` may exceed ``n_vocab`` (padded embedding rows): the
        extra columns are set to ``-inf`` too, even when nothing is restricted. ``V <
        n_vocab`` raises ``ValueError``. Allowed values are left as they are.
        """
        if type(logits).__module__.split(".", 1)[0] == "torch":
            return self._apply_torch(logits, constraint)
        if not isinstance(logits, np.ndarray):
            raise TypeError(f"apply needs a numpy array or a torch tensor, got {type(logits).__name__}")
        if logits.dtype.kind != "f":
            raise TypeError(f"apply needs floating-point logits (to hold -inf), got {logits.dtype}")
        rows = self._rows(logits.ndim, logits.shape, constraint)
        if logits.ndim == 1:
            self._apply_row(logits, self._allowed(rows[0]))
        else:
            for r, c in enumerate(rows):
                self._apply_row(logits[r], self._allowed(c))
        return logits

    def _rows(
        self, ndim: int, shape: tuple[int, ...], constraint: Constraint[Any] | Sequence[Constraint[Any]]
    ) -> list[Constraint[Any]]:
        """The constraint of each row of ``shape``-shaped logits, validated."""
        if ndim == 1:
            if not isinstance(constraint, Constraint):
                raise TypeError("1-D logits take one constraint; pass a sequence only with 2-D (batch, vocab) logits")
            rows = [constraint]
        elif ndim == 2:
            if isinstance(constraint, Constraint):
                raise TypeError(f"2-D logits take a sequence of {shape[0]} constraints (one per row), not one")
            rows = _constraint_list(constraint)
            if len(rows) != shape[0]:
                raise ValueError(f"logits have {shape[0]} rows but {len(rows)} constraints were given")
        else:
            raise ValueError(f"apply needs 1-D (vocab,) or 2-D (batch, vocab) logits, got shape {tuple(shape)}")
        if shape[-1] < self.n_vocab:
            raise ValueError(
                f"logits have {shape[-1]} columns, fewer than the tokenizer's n_vocab={self.n_vocab}; "
                "is this the model's tokenizer? (wider logits are fine: padded columns are masked)"
            )
        return rows

    def _apply_row(self, x: npt.NDArray[np.floating[Any]], a: Allowed) -> None:
        n = self.n_vocab
        if x.shape[0] > n:
            x[n:] = -np.inf  # padded embedding rows: never allowed
        if a.everything:
            return
        head = x[:n]
        if a.words is None and sum(hi - lo for lo, hi in a.slices) + len(a.ids) <= _APPLY_FEW:
            ids = self._ids(a)
            kept = head[ids]
            head.fill(-np.inf)
            head[ids] = kept
            return
        data = np.ascontiguousarray(self._words(a, None).astype("<i4", copy=False)).view(np.uint8)
        bias = _bias_table(x.dtype).take(data, axis=0).reshape(-1)[:n]
        # np.minimum keeps a NaN, and a disallowed NaN must still become -inf (fail
        # closed); one sum (~15 us) shows whether there is any NaN to fix first.
        if np.isnan(head.sum()):
            head[np.isnan(head) & (bias < 0)] = -np.inf
        np.minimum(head, bias, out=head)

    def _apply_torch(self, logits: Any, constraint: Constraint[Any] | Sequence[Constraint[Any]]) -> Any:
        import torch  # optional: only for torch logits

        if not logits.is_floating_point():
            raise TypeError(f"apply needs floating-point logits (to hold -inf), got {logits.dtype}")
        rows = self._rows(logits.dim(), tuple(logits.shape), constraint)
        n = self.n_vocab
        allowed = self.mask(rows[0]) if logits.dim() == 1 else self.mask_batch(rows)
        disallowed = torch.from_numpy(np.logical_not(allowed)).to(logits.device, non_blocking=True)
        logits[..., :n].masked_fill_(disallowed, float("-inf"))
        if logits.shape[-1] > n:
            logits[..., n:] = float("-inf")
        return logits

    # -- speculative drafts ----------------------------------------------------------

    def draft_masks(self, constraint: Constraint[Any], draft_ids: Sequence[int]) -> BoolArray:
        """Bool masks ``(len(draft_ids) + 1, n_vocab)`` for verifying a draft: row ``j``
        is the mask after accepting ``draft_ids[:j]`` (row 0: the current mask).

        Fails closed: from the first draft id the constraint refuses (or an id outside
        ``[0, n_vocab)``, e.g. a padded-vocabulary id), every later row is all False.
        The rows follow the constraint: once it is done (a prefix met, a choice's EOS
        accepted) they allow everything. ``constraint`` itself is not changed (the
        rows come from a ``fork``).
        """
        self.check(constraint)
        # numpy arrays and torch tensors: their items as Python ints
        ids = draft_ids.tolist() if hasattr(draft_ids, "tolist") else list(draft_ids)
        for t in ids:
            if isinstance(t, (bool, np.bool_)):
                check_id(t, "draft_ids", self.n_vocab)  # raises: a bool is not an id
            if not isinstance(t, (int, np.integer)):
                raise TypeError(f"draft ids must be ints, got {type(t).__name__}")
        n = self.n_vocab
        # np.empty, not np.zeros: every row is written below, and a fresh calloc'ed
        # (k+1) x V block costs ~16 us of page faults for o200k_base.
        out = np.empty((len(ids) + 1, n), dtype=np.bool_)
        c = constraint.fork()
        for j in range(len(ids) + 1):
            self._bool(c.allowed(), out[j])
            if j == len(ids):
                break
            t = int(ids[j])
            if not 0 <= t < n or not c.accept(t):
                out[j + 1 :] = False  # fail closed after a refused draft id
                break
        return out

    # -- builders ---------------------------------------------------------------------

    def check(self, constraint: Constraint[Any]) -> None:
        """Raise unless ``constraint`` is a ``Constraint`` built on this masker's
        tokenizer (its vocabulary index): ``TypeError`` / ``ValueError``. The
        integrations check their constraints with it up front."""
        if not isinstance(constraint, Constraint):
            raise TypeError(f"expected a Constraint, got {type(constraint).__name__}")
        if constraint.index is not self.index:
            raise ValueError(
                "the constraint was built for another tokenizer (another vocabulary index); "
                "build it from the same tokenizer object"
            )

    def _allowed(self, constraint: Constraint[Any]) -> Allowed:
        self.check(constraint)
        return constraint.allowed()

    def _explicit(self, a: Allowed) -> npt.NDArray[np.intp]:
        ids = np.asarray(a.ids, dtype=np.intp)
        if ids.size and (ids.min() < 0 or ids.max() >= self.n_vocab):
            bad = next(i for i in a.ids if not 0 <= i < self.n_vocab)
            raise InvalidTokenIdError(bad, "constraint", self.n_vocab)
        return ids

    def _or_ids(self, w: Int32Array, a: Allowed) -> None:
        """Set the bits of ``a.ids`` in the words ``w``. A few ids (a grammar's EOS)
        one by one, ~0.3 us each; ``np.bitwise_or.at`` and the array checks cost ~11
        us whatever the count."""
        if len(a.ids) > _FEW_IDS:
            ids = self._explicit(a)
            np.bitwise_or.at(w, ids >> 5, BITS[ids & 31])
            return
        n = self.n_vocab
        for i in a.ids:
            if not 0 <= i < n:
                raise InvalidTokenIdError(i, "constraint", n)
            w[i >> 5] |= BITS[i & 31]

    def _ids(self, a: Allowed) -> npt.NDArray[np.intp]:
        """Every id ``a`` lists (slices and explicit ids; may repeat)."""
        keep = None if a.utf8_state is None else self._tables.utf8_ok(a.utf8_state)
        parts = [self.index.ids(a.slices, keep).astype(np.intp, copy=False)]
        if a.ids:
            parts.append(self._explicit(a))
        if a.words is not None:
            parts.append(np.flatnonzero(unpack_bitmask(a.words, self.n_vocab)))
        return np.concatenate(parts)

    def _bool(self, a: Allowed, out: BoolArray | None) -> BoolArray:
        """The bool mask of ``a``, written into ``out`` (then returned) or fresh."""
        t = self._tables
        if a.everything:
            if out is None:
                return t.all_true.copy()
            out[...] = True
            return out
        if a.words is not None:
            # A grammar state's cached bitmask: unpack it, then add the rest.
            bits = unpack_bitmask(a.words, self.n_vocab)
            if a.slices:
                bits |= self._bool(Allowed(everything=False, slices=a.slices, utf8_state=a.utf8_state), None)
            if a.ids:
                bits[self._explicit(a)] = True
            if out is None:
                return bits
            out[...] = bits
            return out
        big = [s for s in a.slices if s[1] - s[0] >= _BOOL_BIG]
        small = [s for s in a.slices if 0 < s[1] - s[0] < _BOOL_BIG]
        state = a.utf8_state
        ok = None if state is None else t.utf8_ok(state)
        m: BoolArray
        if big:
            # One big slice: XOR two prefix rows, unpack, fix the edges in the bool
            # mask (set/clear is cheaper than XOR on words). Several (never from our
            # constraints) may overlap: toggle each in word space and OR them.
            words = self._big_words(big[0], toggle=len(big) > 1)
            for s in big[1:]:
                words |= self._big_words(s, toggle=True)
            if state is not None:
                words &= t.ok_words(state)
            m = unpack_bitmask(words, self.n_vocab)
            if len(big) == 1:
                self._fix_edges(m, *big[0], ok)
            if out is not None:
                out[...] = m
                m = out
        elif out is None:
            m = np.zeros(self.n_vocab, dtype=np.bool_)
        else:
            out[...] = False
            m = out
        order = t.order
        for lo, hi in small:
            m[order[lo:hi] if ok is None else order[lo:hi][ok[lo:hi]]] = True
        if a.ids:
            m[self._explicit(a)] = True
        return m

    def _fix_edges(self, m: BoolArray, lo: int, hi: int, ok: BoolArray | None) -> None:
        """Turn the mask of ranks ``[edge_a, edge_b)`` into that of ``[lo, hi)`` (only
        the ranks ``ok`` allows, when given, are set)."""
        t = self._tables
        order = t.order
        _, _, ea, eb = t.rounded(lo, hi)
        if lo < ea:
            m[order[lo:ea] if ok is None else order[lo:ea][ok[lo:ea]]] = True
        elif ea < lo:
            m[order[ea:lo]] = False
        if hi < eb:
            m[order[hi:eb]] = False
        elif eb < hi:
            m[order[eb:hi] if ok is None else order[eb:hi][ok[eb:hi]]] = True

    def _big_words(self, s: Slice, *, toggle: bool) -> Int32Array:
        """Fresh words of ranks ``[edge_a, edge_b)`` (``toggle=False``) or of exactly
        ``[lo, hi)`` (``toggle=True``: the edge ids XORed in, at most ``_BLOCK``)."""
        t = self._tables
        lo, hi = s
        a, b, ea, eb = t.rounded(lo, hi)
        prefix = t.prefix
        words: Int32Array = np.bitwise_xor(prefix[b], prefix[a])
        if toggle:
            # Each range holds the ids whose bit is wrong; the two ranges are disjoint
            # when hi - lo >= _BLOCK (so a < b), and .at applies repeats anyway.
            for x, y in ((min(lo, ea), max(lo, ea)), (min(hi, eb), max(hi, eb))):
                if x < y:
                    np.bitwise_xor.at(words, t.word[x:y], t.bit[x:y])
        return words

    def _words(self, a: Allowed, out: Int32Array | None) -> Int32Array:
        """The int32 bitmask of ``a``, written into ``out`` (then returned) or fresh."""
        t = self._tables
        if a.everything:
            if out is None:
                return t.all_words.copy()
            out[...] = t.all_words
            return out
        if a.words is not None:
            # A grammar state's cached bitmask: one copy, then the rest ORed in.
            if out is None:
                out = a.words.copy()
            else:
                out[...] = a.words
            if a.slices:
                out |= self._words(Allowed(everything=False, slices=a.slices, utf8_state=a.utf8_state), None)
            if a.ids:
                self._or_ids(out, a)
            return out
        big = [s for s in a.slices if s[1] - s[0] >= _BLOCK]
        small = [s for s in a.slices if 0 < s[1] - s[0] < _BLOCK]
        state = a.utf8_state
        w: Int32Array
        if big:
            w = self._big_words(big[0], toggle=True)
            for s in big[1:]:
                w |= self._big_words(s, toggle=True)
            if state is not None:
                w &= t.ok_words(state)
            if out is not None:
                out[...] = w
                w = out
        elif out is None:
            w = np.zeros(t.n_words, dtype=np.int32)
        else:
            out[...] = 0
            w = out
        if small:
            if state is None:
                words = [t.word[lo:hi] for lo, hi in small]
                bits = [t.bit[lo:hi] for lo, hi in small]
            else:
                ok = t.utf8_ok(state)
                words = [t.word[lo:hi][ok[lo:hi]] for lo, hi in small]
                bits = [t.bit[lo:hi][ok[lo:hi]] for lo, hi in small]
            if len(small) == 1:
                np.bitwise_or.at(w, words[0], bits[0])
            else:
                np.bitwise_or.at(w, np.concatenate(words), np.concatenate(bits))
        if a.ids:
            self._or_ids(w, a)
        return w


def _constraint_list(constraints: Sequence[Constraint[Any]]) -> list[Constraint[Any]]:
    if isinstance(constraints, Constraint):
        raise TypeError("expected a sequence of constraints, got one Constraint; wrap it in a list")
    return list(constraints)


def _as_numpy_out(out: Any, what: str = "fill_bitmask") -> npt.NDArray[Any]:
    """``out`` as a writable numpy array sharing its memory (a CPU torch tensor too)."""
    if type(out).__module__.split(".", 1)[0] == "torch":
        if out.device.type != "cpu":
            raise TokstreamError(
                f"{what} writes CPU memory; the tensor is on {out.device}: fill a CPU (pinned) "
                "tensor and copy it to the device, as engines do"
            )
        arr: npt.NDArray[Any] = out.numpy()
        return arr
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{what} needs a numpy int32 array or a CPU torch tensor, got {type(out).__name__}")
    if not out.flags.writeable:
        raise TokstreamError(f"{what} needs a writable array")
    return out


def _cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


_pool_lock: Final = threading.Lock()
_pool: ThreadPoolExecutor | None = None


def _shared_pool() -> ThreadPoolExecutor:
    """The batch fill's worker threads, one pool per process, made on first use: one
    thread fewer than the cores (the caller works too)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=max(_cores() - 1, 1), thread_name_prefix="tokstream-masks")
        return _pool


def _forget_pool() -> None:
    # A forked child has none of the parent's threads: it makes its own pool.
    global _pool
    _pool = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _batch_threads(threads: int | None, n: int) -> int:
    """How many threads fill ``n`` rows (``fill_bitmask_batch``'s ``threads``)."""
    if threads is None:
        k = _cores() if _DEFAULT_THREADS is None else _DEFAULT_THREADS
    elif isinstance(threads, (bool, np.bool_)) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise TokstreamError(f"threads must be a positive int or None, got {threads!r}")
    else:
        k = min(int(threads), _cores())
    return max(1, min(k, n))

"""Tokenize and count corpora on a Dask cluster: encode a bag or a dataframe column,
and count pre-tokens (or Unigram words) as a map step summed by a tree reduction.

Each partition is one task: ``encode_batch`` on the partition's texts, or a
``Counter`` of the partition. ``encode_batch`` runs with ``max_workers=1`` there: the
worker is the unit of parallelism, and a worker process may not fork a pool.

The tokenizer goes into the graph once, as one key that every partition's task
depends on, holding the tokenizer pickled to bytes on the client (``_Packed``); each
worker process unpickles a given tokenizer once and keeps it (the last 8) for later
computations. Why bytes: the scheduler unpickles and re-pickles task data, and a
worker that got it re-pickles it for a peer. For an embedded tokenizer (which pickles
as its name) that is nothing, but Llama 3's ``tokenizer.json`` pickles to 6.7 MB of
stages that take ~1.5 s to rebuild, and with the object itself in the graph a
six-partition ``encode_bag`` of a few words took ~9 s on a loaded 2-core machine,
every time; as bytes the first call takes the one rebuild per worker and later calls
~0.1 s.

Counts of partitions add up to the counts of the whole corpus as long as partitions
are cut between texts, never inside one (a cut inside a pre-token changes the
pieces). A bag's partitions are always cut between elements, so keep each element a
whole text (a document, a paragraph): ``db.read_text`` gives lines, whose counts
differ from the whole file's wherever a pre-token spans a newline (``"\\n\\n"``).

The summed ``Counter`` is what the trainers take: ``train_bpe(counts, vocab_size,
pattern=...)`` with the pattern the counts were made with gives the tokenizer that
training on the texts gives (same ``fingerprint``), and ``train_unigram`` does the
same on ``count_words_bag``'s counts.

Dask is an optional extra (``pip install 'tokstream[dask]'``): it is imported when a
function here is called, not when this module is.
"""

from __future__ import annotations

import hashlib
import pickle
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..tokenizer import Tokenizer
from ..train.counting import count_pretokens
from ..train.unigram import count_words

if TYPE_CHECKING:
    import dask.bag
    import dask.dataframe
    from dask.delayed import Delayed

    from ..specials import SpecialSet

__all__ = ["count_pretokens_bag", "count_words_bag", "encode_bag", "encode_column"]


def encode_bag(
    tok: Tokenizer,
    bag: dask.bag.Bag,
    *,
    allowed_special: SpecialSet = frozenset(),
    disallowed_special: SpecialSet = "all",
    add_special_tokens: bool = False,
) -> dask.bag.Bag:
    """A bag of id lists: element ``i`` is ``tok.encode(text_i, ...)`` of the text
    bag's element ``i``, partition by partition (lazy: ``.compute()`` it).

    The keyword options are ``Tokenizer.encode``'s.
    """
    _check_bag(bag, "encode_bag")
    options = _encode_options(allowed_special, disallowed_special, add_special_tokens)
    map_partitions = cast("Callable[..., dask.bag.Bag]", bag.map_partitions)  # dask is untyped
    return map_partitions(_encode_partition, _shipped(tok), options)


def encode_column(
    tok: Tokenizer,
    series: dask.dataframe.Series,
    *,
    allowed_special: SpecialSet = frozenset(),
    disallowed_special: SpecialSet = "all",
    add_special_tokens: bool = False,
) -> dask.dataframe.Series:
    """A dask ``Series`` of id lists (``object`` dtype, same index and name) with
    ``tok.encode(text, ...)`` of each text of ``series`` (lazy).

    Every value must be a ``str`` (fill or drop missing values first). The keyword
    options are ``Tokenizer.encode``'s. Needs ``dask.dataframe`` (pandas, pyarrow).
    """
    try:
        import dask.dataframe as dd
    except ImportError as e:
        raise ImportError("encode_column needs dask.dataframe (pandas, pyarrow): pip install 'dask[dataframe]'") from e
    if not isinstance(series, dd.Series):
        raise TypeError(
            f"encode_column takes a dask.dataframe.Series (a column: df['text']), got {type(series).__name__}"
        )
    options = _encode_options(allowed_special, disallowed_special, add_special_tokens)
    map_partitions = cast("Callable[..., dd.Series]", series.map_partitions)
    return map_partitions(_encode_series, _shipped(tok), options, meta=(series.name, "object"))


def count_pretokens_bag(bag: dask.bag.Bag, pattern: str = "o200k_base", *, split_every: int = 8) -> Counter[str]:
    """``count_pretokens`` of all the bag's texts under ``pattern``, computed: one
    ``Counter`` per partition, summed ``split_every`` at a time (a tree, so no task
    sums them all). Pass the result to ``train_bpe(counts, vocab_size, pattern=pattern)``.
    """
    _check_bag(bag, "count_pretokens_bag")
    return _summed(bag, partial(count_pretokens, pattern=pattern), split_every)


def count_words_bag(bag: dask.bag.Bag, *, special_tokens: Sequence[str] = (), split_every: int = 8) -> Counter[str]:
    """``count_words`` (``tokstream.train.unigram``) of all the bag's texts, computed:
    the words ``train_unigram`` trains on. Pass the result, with the same
    ``special_tokens``, to ``train_unigram(counts, vocab_size, special_tokens=...)``.
    """
    _check_bag(bag, "count_words_bag")
    if isinstance(special_tokens, str):
        raise TypeError("special_tokens must be a list of str, not one str")
    return _summed(bag, partial(count_words, special_tokens=tuple(special_tokens)), split_every)


# ------------------------------------------------------------------ the tasks


def _encode_partition(texts: Iterable[str], packed: _Packed, options: dict[str, Any]) -> list[list[int]]:
    return packed.tokenizer().encode_batch(list(texts), max_workers=1, **options)


def _encode_series(texts: Any, packed: _Packed, options: dict[str, Any]) -> Any:
    """A pandas Series of id lists; ``type(texts)`` builds it, so pandas is not imported."""
    ids = packed.tokenizer().encode_batch(texts.tolist(), max_workers=1, **options)
    column = np.empty(len(ids), dtype=object)
    for i, row in enumerate(ids):  # one by one: from the list, equal-length rows would make a 2-D array
        column[i] = row
    return type(texts)(column, index=texts.index, name=texts.name, dtype=object)


def _sum_counters(counters: Iterable[Counter[str]]) -> Counter[str]:
    total: Counter[str] = Counter()
    for c in counters:
        total.update(c)  # in place: sum(counters, Counter()) copies at every step
    return total


# ------------------------------------------------------------------- helpers


def _check_bag(bag: object, caller: str) -> None:
    try:
        import dask.bag as db
    except ImportError as e:
        raise ImportError(f"{caller} needs Dask: pip install 'tokstream[dask]'") from e
    if not isinstance(bag, db.Bag):
        raise TypeError(
            f"{caller} takes a dask.bag.Bag of texts (db.from_sequence(texts, npartitions=...)), "
            f"got {type(bag).__name__}"
        )


class _Packed:
    """A tokenizer pickled once, and the sha256 of the pickle, which names it."""

    __slots__ = ("blob", "key")

    def __init__(self, tok: Tokenizer) -> None:
        self.blob = pickle.dumps(tok, protocol=pickle.HIGHEST_PROTOCOL)
        self.key = hashlib.sha256(self.blob).hexdigest()

    def tokenizer(self) -> Tokenizer:
        """The tokenizer, unpickled once per process (the ``_KEPT`` latest are kept)."""
        with _unpacked_lock:
            tok = _unpacked.get(self.key)
        if tok is None:
            tok = cast("Tokenizer", pickle.loads(self.blob))
            with _unpacked_lock:
                tok = _unpacked.setdefault(self.key, tok)
                while len(_unpacked) > _KEPT:
                    del _unpacked[next(iter(_unpacked))]  # the oldest
        return tok


_KEPT = 8
_unpacked: dict[str, Tokenizer] = {}
_unpacked_lock = threading.Lock()


def _shipped(tok: Tokenizer) -> Delayed:
    """The packed tokenizer as one graph key, named by its content (dask's own hash
    of a tokenizer object, ``delayed(tok, pure=True)``, takes seconds)."""
    from dask.delayed import delayed

    if not isinstance(tok, Tokenizer):
        raise TypeError(f"tok must be a tokstream.Tokenizer (tokstream.load(...)), got {type(tok).__name__}")
    packed = _Packed(tok)
    return cast("Callable[..., Delayed]", delayed)(packed, name=f"tokstream-tokenizer-{packed.key}", traverse=False)


def _encode_options(
    allowed_special: SpecialSet, disallowed_special: SpecialSet, add_special_tokens: bool
) -> dict[str, Any]:
    return {
        "allowed_special": allowed_special,
        "disallowed_special": disallowed_special,
        "add_special_tokens": add_special_tokens,
    }


def _summed(bag: dask.bag.Bag, count: Any, split_every: int) -> Counter[str]:
    if isinstance(split_every, bool) or not isinstance(split_every, int):
        raise TypeError(f"split_every must be an int, got {split_every!r}")
    if split_every < 2:
        raise ValueError(f"split_every={split_every} must be at least 2 (the counters one task sums)")
    reduction = cast("Callable[..., Any]", bag.reduction)
    total: Counter[str] = reduction(count, _sum_counters, split_every=split_every).compute()
    return total

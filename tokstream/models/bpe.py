"""Hugging Face ``tokenizers``' BPE: a vocabulary plus an ordered merge list.

Matches the Rust ``BPE::tokenize`` (class notes), with byte fallback, ``fuse_unk``,
continuing-subword prefixes and end-of-word suffixes and ``ignore_merges``.

Not here: ``dropout`` (subword regularization, a training-time option that makes
encode random): a model with a dropout other than null or 0 is refused, since
``tokenizers`` would give other ids on every call.

Not here: tiktoken's rank-file BPE, which merges by the ranks of concatenated bytes
(``ranks.py``), and SentencePiece's score-based BPE (``sentencepiece.py``).

Performance notes
-----------------
Loading Llama 3's ``tokenizer.json`` (128k tokens, 280k merges) takes ~1.5x
``tokenizers`` (``bench/load.py``); ``from_json`` is most of it, JSON decoding ~0.13 s.
Everything per merge runs in C: the vocabulary is checked with ``set(map(type, ...))``,
``min`` and ``max``; string merges are split 4096 at a time with one ``join`` and one
``split`` and checked by part counts; the parts and merged tokens are looked up with
``itemgetter`` into numpy arrays, block by block so the new strings are hashed while
still in cache (25 ms better than one pass). The 840k dict lookups are most of the time
(memory-bound; looking up the 62k distinct parts once was slower, guessing the merged
ids from their order barely faster). A loop per merge took 0.6 s.

The merge loop's table is ``_PairTable``, built on the first encode that needs a merge:
one ``np.sort`` by left id (~3 ms), then a left id's merges enter a plain dict when the
loop first meets it. A dict of all 280k merges cost that first encode 60-90 ms (560k
Python ints), four times the encode itself on a page of text; a binary search per pair
(numpy, ~1 us each) made Japanese text's first encode 1.6x slower than that dict and
warm lookups through a dict subclass 7% slower. A merge is one packed int, ``rank << 32 | merged_id``, so
``min`` picks the lowest rank; 280k ``(rank, id)`` tuples cost more to build and are no
faster to compare.
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

from .._native_loader import native
from ..byte_level import BYTE_TO_CHAR, bytes_to_proxy, proxies_to_bytes, proxy_to_bytes
from ..errors import TokenizerFileError
from ..json_fields import (
    MAX_ID,
    Build,
    JsonObject,
    error,
    expect_object,
    field,
    kind,
    token_ids,
)
from .base import ByteEncoder, Model, NativeText, Spelling
from .ranks import merges_for_ranks

if TYPE_CHECKING:
    from .._native import PairTable

__all__ = ["BPE"]

_U64 = npt.NDArray[np.uint64]
_I64 = npt.NDArray[np.int64]

_BUCKETS_MIN: Final = 24
#: Guards the first build of any model's pair table (rare, and brief).
_BUILD_LOCK: Final = threading.Lock()
#: A merge in the pair table: ``rank << _ID_BITS | merged_id`` (ids are below 2**32).
_ID_BITS: Final = 32
_ID_MASK: Final = (1 << _ID_BITS) - 1
#: Above every packed merge (ranks are below 2**31): "no merge" for ``min``.
_NO_MERGE: Final = 1 << 63


class BPE(Model):
    """Hugging Face ``tokenizers``' BPE model: a vocabulary plus an ordered merge list.

    Matches the Rust ``BPE::tokenize``: a piece starts as its characters (with
    ``continuing_subword_prefix`` on all but the first and ``end_of_word_suffix`` on the
    last); a character not in the vocabulary becomes its ``<0xXX>`` byte tokens when
    ``byte_fallback`` finds them all, else ``unk_token`` (consecutive unknowns fused
    into one when ``fuse_unk``), else it is dropped. Then the pair with the lowest
    merge rank, leftmost first, is merged until none is left. ``ignore_merges`` takes a
    piece that is itself in the vocabulary as one token (Llama 3 sets it).
    ``dropout`` may only be None or 0 (module notes). As ``tokenizers``, ``merges`` is
    required in a ``tokenizer.json`` (it may be empty).

    Cost: building is O(V + M) for V tokens and M merges, the pair table
    O(M log M) on first use (module notes).
    ``encode_piece`` on n symbols is O(n^2) with C inner loops below 24 symbols and a
    heap above, like the byte-level merge.
    """

    type_name = "BPE"

    __slots__ = (
        "_byte_ids",
        "_byte_level",
        "_lefts",
        "_native",
        "_pair_ids",
        "_pairs",
        "_rights",
        "_stride",
        "_unk_id",
        "byte_fallback",
        "continuing_subword_prefix",
        "dropout",
        "end_of_word_suffix",
        "fuse_unk",
        "ignore_merges",
        "unk_token",
        "vocab",
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
        merges = list(merges)
        self._setup(
            dict(vocab),
            [([a for a, _ in merges], [b for _, b in merges])],
            len(merges),
            unk_token=unk_token,
            byte_fallback=byte_fallback,
            fuse_unk=fuse_unk,
            ignore_merges=ignore_merges,
            continuing_subword_prefix=continuing_subword_prefix,
            end_of_word_suffix=end_of_word_suffix,
            dropout=dropout,
            where=where,
        )

    def _setup(
        self,
        vocab: dict[str, int],
        merge_blocks: Iterable[tuple[list[str], list[str]]],
        n_merges: int,
        *,
        unk_token: str | None,
        byte_fallback: bool,
        fuse_unk: bool,
        ignore_merges: bool,
        continuing_subword_prefix: str | None,
        end_of_word_suffix: str | None,
        dropout: float | None,
        where: str,
    ) -> None:
        """``__init__`` with the merges as blocks of (left parts, right parts), in order
        (``from_json`` splits a block and looks it up while its strings are in cache)."""
        self.vocab = vocab
        self.unk_token = unk_token
        self.byte_fallback = byte_fallback
        self.fuse_unk = fuse_unk
        self.ignore_merges = ignore_merges
        self.continuing_subword_prefix = continuing_subword_prefix
        self.end_of_word_suffix = end_of_word_suffix
        if dropout:
            raise ValueError(
                f"{where}.dropout: {dropout} is not supported: dropout is a training-time option "
                f"(subword regularization) that makes encode random; set it to null to encode "
                f"deterministically, as tokenizers does without it"
            )
        self.dropout = dropout
        ids = vocab.values()
        if vocab and not (min(ids) >= 0 and max(ids) < MAX_ID):
            raise ValueError(f"{where}.vocab: ids must be in [0, 2**32), as tokenizers' (u32)")
        self._stride = max(ids, default=0) + 1
        # The merges are checked (and their ids found) now; the dict the merge loop
        # reads is built from those ids on first use (``_pair_dict``).
        self._lefts, self._rights, self._pair_ids = _merge_ids_of(
            vocab, merge_blocks, n_merges, continuing_subword_prefix or "", where
        )
        self._pairs: _PairTable | None = None
        #: The compiled core's table (``_native_table``), on the first merge.
        self._native: PairTable | None = None
        self._unk_id: int | None = None
        if unk_token is not None:
            self._unk_id = self.vocab.get(unk_token)
        self._byte_ids: list[int | None] | None = None
        if byte_fallback:
            self._byte_ids = [self.vocab.get(f"<0x{b:02X}>") for b in range(256)]
        self._byte_level: dict[int, bytes | None] | None = None

    @property
    def merges(self) -> list[tuple[str, str]]:
        """The merge list, first merge first (built on each call from the two flat
        lists that are kept, which load faster)."""
        return list(zip(self._lefts, self._rights))

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
        ``"▁"`` or ``" "`` when that holds, else None (also under prefixes or
        suffixes, which depend on where a piece starts and ends).

        Cost: one pass over the vocabulary (~10 ms for 32k tokens).
        """
        if self.continuing_subword_prefix or self.end_of_word_suffix:
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
            "merges": list(map(list, zip(self._lefts, self._rights))),
        }

    @classmethod
    def from_json(cls, obj: JsonObject, path: str = "model", *, build: Build[Model] | None = None) -> BPE:
        """Build from a ``tokenizer.json`` ``"model"`` object.

        As ``tokenizers``: ``vocab`` is required (ids unique, in ``[0, 2**32)``, dense:
        ``json_fields.token_ids``); ``merges`` is required, a list of ``"a b"`` strings
        (exactly one space) or of ``[a, b]`` pairs; the options may be absent or null
        (their defaults), ``dropout`` null or 0 (module notes);
        ``type`` must be ``"BPE"`` when present; other keys are ignored. Malformed input
        raises ``TokenizerFileError`` (a ``ValueError``) naming the JSON path, ``path``
        being the object's own.

        >>> m = BPE.from_json({"vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]})
        >>> m.encode_piece("aba")
        (2, 0)
        >>> BPE.from_json({"vocab": {"a": 0, "b": 1}, "merges": ["a b"]})
        Traceback (most recent call last):
        ...
        tokstream.errors.TokenizerFileError: model.merges[0]: the merged token 'ab' is not in the vocabulary
        """
        o = expect_object(obj, path, "a BPE model object")
        if o.get("type", "BPE") != "BPE":
            raise error(f"{path}.type", f"expected 'BPE', got {kind(o['type'])}")
        vocab = _unique_ids(token_ids(o, "vocab", path), path)
        # The options first, so a bad option is named before a missing merge list.
        unk_token = field(o, "unk_token", str, path, None)
        byte_fallback = field(o, "byte_fallback", bool, path, False)
        fuse_unk = field(o, "fuse_unk", bool, path, False)
        ignore_merges = field(o, "ignore_merges", bool, path, False)
        prefix = field(o, "continuing_subword_prefix", str, path, None)
        suffix = field(o, "end_of_word_suffix", str, path, None)
        dropout = field(o, "dropout", (int, float), path, None)
        merges = field(o, "merges", list, path)
        self = cls.__new__(cls)
        try:
            self._setup(
                vocab,
                _json_merge_blocks(merges, path),
                len(merges),
                unk_token=unk_token,
                byte_fallback=byte_fallback,
                fuse_unk=fuse_unk,
                ignore_merges=ignore_merges,
                continuing_subword_prefix=prefix,
                end_of_word_suffix=suffix,
                dropout=dropout,
                where=path,
            )
        except TokenizerFileError:
            raise
        except ValueError as e:  # the message names the path already
            raise TokenizerFileError(str(e)) from e
        return self

    # ------------------------------------------------------------- declarations

    def token_to_id(self, spelling: str) -> int | None:
        return self.vocab.get(spelling)

    def spellings(self) -> Mapping[int, str]:
        return dict(zip(self.vocab.values(), self.vocab))

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def byte_encoder(self, spelling: Spelling) -> ByteEncoder | None:
        """Byte-level pieces encode from their bytes. The whole-token map is empty:
        ``encode_piece`` already answers a piece that is a token under ``ignore_merges``
        with one dict lookup, and building a bytes map of every token (~60 ms for
        Llama 3) cost the first encode after a load more than it saves."""
        if spelling is not Spelling.BYTE_LEVEL:
            return None
        encode_piece = self.encode_piece
        if native is not None and self.continuing_subword_prefix is None and self.end_of_word_suffix is None:
            # A piece's symbols are its bytes' proxy characters' ids: the compiled core
            # starts from its bytes (a byte whose proxy is no token returns None and
            # takes the general path, with its fallbacks).
            vocab, ignore = self.vocab, self.ignore_merges

            def encode_bytes(piece: bytes) -> tuple[int, ...]:
                if not piece:
                    return ()
                if ignore:
                    tid = vocab.get(bytes_to_proxy(piece))
                    if tid is not None:
                        return (tid,)
                table = self._native if self._native is not None else self._native_table()
                ids = table.encode_bytes(piece)
                return ids if ids is not None else encode_piece(bytes_to_proxy(piece))

        else:

            def encode_bytes(piece: bytes) -> tuple[int, ...]:
                return encode_piece(bytes_to_proxy(piece))

        def whole() -> Mapping[bytes, int]:
            return {}

        return encode_bytes, whole

    def native_text(self, spelling: Spelling) -> NativeText | None:
        """Byte-level pieces merge from their bytes' proxy ids (no subword prefix or
        word suffix); under ``ignore_merges`` a piece that is a token is that token,
        so the whole-token map is built (~25 ms for Llama 3, on the first encode)."""
        if (
            native is None
            or spelling is not Spelling.BYTE_LEVEL
            or self.continuing_subword_prefix is not None
            or self.end_of_word_suffix is not None
        ):
            return None
        table = self._native if self._native is not None else self._native_table()
        if not self.ignore_merges:
            return table, None
        return table, {data: tid for tid, data in self.byte_level_bytes().items() if data is not None}

    def byte_level_bytes(self) -> Mapping[int, bytes | None]:
        """Read once and kept: the fast path's whole-token map and the tokenizer's
        bytes table both need it (~25 ms for Llama 3)."""
        if self._byte_level is None:
            self._byte_level = dict(zip(self.vocab.values(), proxies_to_bytes(self.vocab)))
        return self._byte_level

    def rank_form(self, spelling: Spelling, specials: Mapping[str, int]) -> dict[bytes, int] | None:
        """The tiktoken ranks this model encodes as, when it is exactly what
        ``RankBPE.to_json`` writes (``ignore_merges``, ``merges_for_ranks`` as its merge
        list, nothing else set; ``specials`` listed in the vocabulary are left out);
        else None. Cost: rebuilding the merge list (about 1 s for o200k), once."""
        if (
            spelling is not Spelling.BYTE_LEVEL
            or not self.ignore_merges
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

    def encode_piece(self, piece: str) -> tuple[int, ...]:
        """The ids of one pre-token (merged by the compiled core when it runs)."""
        return self._encode_piece(piece, native is not None)

    def encode_piece_pure(self, piece: str) -> tuple[int, ...]:
        """``encode_piece`` on the pure-Python merge loop, the readable oracle of the
        compiled one (tests compare the two)."""
        return self._encode_piece(piece, False)

    def _encode_piece(self, piece: str, compiled: bool) -> tuple[int, ...]:
        if not piece:
            return ()
        if self.ignore_merges:
            tid = self.vocab.get(piece)
            if tid is not None:
                return (tid,)
        symbols = self.symbols(piece)
        if compiled:
            table = self._native if self._native is not None else self._native_table()
            return table.merge(symbols)
        pairs = self._pairs if self._pairs is not None else self._pair_dict()
        return tuple(_merge_ids(symbols, pairs, self._stride))

    def _native_table(self) -> PairTable:
        """The compiled core's pair table, built once from the ids found at load
        (~5 ms for Llama 3's 280k merges; 16 bytes a slot at load factor <= 1/2), with
        each byte's proxy character's id for ``byte_encoder``."""
        assert native is not None
        with _BUILD_LOCK:
            if self._native is None:
                a_ids, b_ids, new_ids = self._pair_ids
                table = native.PairTable.from_merges(a_ids, b_ids, new_ids)
                table.set_byte_ids([self.vocab.get(c) for c in BYTE_TO_CHAR])
                self._native = table
        return self._native

    def _pair_dict(self) -> _PairTable:
        """The pair table (``_PairTable``), built from the ids found at load on first
        use (~3 ms for Llama 3's 280k merges; a tokenizer that only decodes, or whose
        text is whole tokens, never builds it)."""
        with _BUILD_LOCK:  # two threads' first encodes build it once
            if self._pairs is None:
                a_ids, b_ids, new_ids = self._pair_ids
                # The ids stay: the native table (or a test's oracle run) builds from them.
                self._pairs = _PairTable(a_ids, b_ids, new_ids, self._stride)
        return self._pairs


#: ``from_json`` splits and looks up the merges in blocks of this many, so that the new
#: strings are hashed while they are still in cache (module notes).
_BLOCK: Final = 4096


def _merge_ids_of(
    vocab: Mapping[str, int],
    blocks: Iterable[tuple[list[str], list[str]]],
    n: int,
    prefix: str,
    where: str,
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[_U64, _U64, _I64]]:
    """The merges' left and right parts (tuples: untracked by the cyclic GC, where a
    list of 280k strings is traversed in every full collection), and the ids of their parts and merged tokens;
    a merge whose part or merged token is not a token raises, naming it.

    ``blocks`` give the ``n`` merges in order as (left parts, right parts). The lookups
    are C-level (``itemgetter``) into numpy arrays (module notes); only a merge whose
    parts are not tokens is looked for in Python, to name it.
    """
    lefts: list[str] = []
    rights: list[str] = []
    a_ids = np.empty(n, np.uint64)
    b_ids = np.empty(n, np.uint64)
    new_ids = np.empty(n, np.int64)
    cut = len(prefix)
    start = 0
    for left, right in blocks:
        if not left:
            continue
        end = start + len(left)
        if prefix:
            # The merged token drops the right part's continuation prefix, as Rust does.
            merged = [a + (b[cut:] if b.startswith(prefix) else b) for a, b in zip(left, right)]
        else:
            merged = list(map(str.__add__, left, right))
        try:
            # itemgetter(*keys) looks them all up in one C call (a block of one gives a
            # scalar, which numpy broadcasts); faster than map(vocab.get, ...).
            a_ids[start:end] = itemgetter(*left)(vocab)
            b_ids[start:end] = itemgetter(*right)(vocab)
            new_ids[start:end] = itemgetter(*merged)(vocab)
        except KeyError:  # some part is not in the vocabulary
            for rank, (a, b, ab) in enumerate(zip(left, right, merged), start):
                for part in (a, b):
                    if part not in vocab:
                        raise ValueError(f"{where}.merges[{rank}]: {part!r} is not in the vocabulary") from None
                if ab not in vocab:
                    raise ValueError(
                        f"{where}.merges[{rank}]: the merged token {ab!r} is not in the vocabulary"
                    ) from None
            raise
        lefts += left
        rights += right
        start = end
    return tuple(lefts), tuple(rights), (a_ids, b_ids, new_ids)


class _PairTable:
    """``left_id * stride + right_id -> rank << 32 | merged_id``, read through ``get``
    (an exact dict's), filled one left id at a time.

    A dict of every merge costs ~60-90 ms for Llama 3's 280k (560k Python ints), and
    the first encode after a load paid it: four times that encode on a page of text.
    The merge loop only meets the left ids of pieces that are not tokens, so the merges
    are sorted by left id once (one ``np.sort`` of ``left << 20 | rank``, ~3 ms) and a
    left id's merges enter the dict the first time the loop meets it (``need``), in rank
    order: a pair listed twice keeps its last rank, as in ``tokenizers``, whose merge
    map is a hash map collected in order. ``loaded`` holds the left ids in the dict (a
    set: ``issuperset`` checks a piece's symbols in C; a bytearray read per symbol cost
    Japanese text's warm encode 8% more).

    Cost: the sorted merges (16 bytes each), ``stride`` starts and ``loaded``; loading
    a left id is one slice and ``tolist`` (~3k instructions plus its merges); lookups
    are the plain dict's.
    """

    __slots__ = ("_flat", "_pairs", "_starts", "get", "loaded")

    def __init__(self, a_ids: _U64, b_ids: _U64, new_ids: _I64, stride: int) -> None:
        n = len(a_ids)
        if n >> _RANK_BITS:  # ranks too wide to pack beside a left id (< 2**32)
            order = np.argsort(a_ids, kind="stable")  # stable: rank order kept
        else:
            packed = np.sort((a_ids << np.uint64(_RANK_BITS)) | np.arange(n, dtype=np.uint64))
            order = (packed & np.uint64((1 << _RANK_BITS) - 1)).astype(np.int64)
        lefts = a_ids[order]
        # Key and merge side by side, so a left id's merges are one slice and one
        # ``tolist`` (numpy calls are most of a load: two slices cost 1.5x).
        flat = np.empty(2 * n, np.uint64)
        flat[0::2] = lefts * np.uint64(stride) + b_ids[order]
        flat[1::2] = (order << _ID_BITS) | new_ids[order]
        self._flat = flat
        # Where each left id's merges start (x2, in ``flat``): counts, summed (a
        # search per id costs 20x); a list, since a numpy read per load costs more.
        starts = np.zeros(stride + 1, np.int64)
        np.cumsum(np.bincount(lefts.astype(np.intp), minlength=stride), out=starts[1:])
        self._starts: list[int] = (starts * 2).tolist()
        self._pairs: dict[int, int] = {}
        self.get = self._pairs.get
        self.loaded: set[int] = set()

    def need(self, left: int) -> None:
        """Put the merges whose left part is ``left`` in the dict (safe to repeat, and
        under threads: ``loaded`` is set after the dict holds them)."""
        starts = self._starts
        pairs = iter(self._flat[starts[left] : starts[left + 1]].tolist())
        self._pairs.update(zip(pairs, pairs))
        self.loaded.add(left)


#: ``_PairTable`` packs a rank into the low bits of a sort key when it fits.
_RANK_BITS: Final = 20


def _unique_ids(vocab: dict[str, int], path: str) -> dict[str, int]:
    """A copy of ``vocab`` after checking that no two tokens share an id (``tokenizers``
    would give them one id, and decoding would pick one)."""
    if len(set(vocab.values())) != len(vocab):
        seen: dict[int, str] = {}
        for token, token_id in vocab.items():
            if token_id in seen:
                raise error(f"{path}.vocab", f"id {token_id} is used by both {seen[token_id]!r} and {token!r}")
            seen[token_id] = token
    return dict(vocab)


def _json_merge_blocks(raw: list[Any], path: str) -> Iterator[tuple[list[str], list[str]]]:
    """The left and right parts of a ``tokenizer.json`` merge list, ``_BLOCK`` merges at
    a time: ``"a b"`` strings, split at their one space (``tokenizers`` splits at every
    space and wants two parts), or ``[a, b]`` pairs.

    Checked and split in C: a block of strings is joined and split at spaces once, and
    holds one space per merge when every merge has a space and the split gives two
    parts per merge (a loop per merge took 230 ms for Llama 3's 280k). A block that
    fails the checks (or mixes both forms, which is read) is walked entry by entry, to
    name the first bad one.
    """
    types = set(map(type, raw))
    for start in range(0, len(raw), _BLOCK):
        block = raw[start : start + _BLOCK]
        if types == {str}:
            flat = " ".join(block).split(" ")
            if len(flat) == 2 * len(block) and all(map(str.__contains__, block, repeat(" "))):
                yield flat[0::2], flat[1::2]
                continue
        elif types == {list} and set(map(len, block)) == {2}:
            left = list(map(itemgetter(0), block))
            right = list(map(itemgetter(1), block))
            if set(map(type, left)) == {str} == set(map(type, right)):
                yield left, right
                continue
        yield _merge_block_slowly(block, start, path)


def _merge_block_slowly(block: list[Any], start: int, path: str) -> tuple[list[str], list[str]]:
    left: list[str] = []
    right: list[str] = []
    for i, merge in enumerate(block, start):
        if isinstance(merge, str):
            parts = merge.split(" ")
        elif isinstance(merge, list) and all(isinstance(part, str) for part in merge):
            parts = merge
        else:
            raise error(f"{path}.merges[{i}]", f"expected 'a b' or [a, b], got {merge!r:.80}")
        if len(parts) != 2:
            raise error(f"{path}.merges[{i}]", f"expected 'a b' or [a, b], got {merge!r:.80}")
        left.append(parts[0])
        right.append(parts[1])
    return left, right


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


def _merge_ids(symbols: list[int], table: _PairTable, stride: int) -> list[int]:
    """Merge ids by merge rank, leftmost first (``tokenizers``' ``Word::merge_all``).
    The table's values are packed ``rank << 32 | merged_id``, so ``min`` picks the
    lowest rank and ``list.index`` the leftmost pair of that rank."""
    n = len(symbols)
    if n < 2:
        return symbols
    loaded, need = table.loaded, table.need
    if not loaded.issuperset(symbols):
        for s in set(symbols).difference(loaded):
            need(s)
    get = table.get
    if n < _BUCKETS_MIN:
        cand = [get(a * stride + b, _NO_MERGE) for a, b in zip(symbols, symbols[1:])]
        while cand:
            best = min(cand)
            if best == _NO_MERGE:
                break
            i = cand.index(best)
            new_id = best & _ID_MASK
            if new_id not in loaded:
                need(new_id)
            symbols[i : i + 2] = [new_id]
            del cand[i]
            if i < len(cand):
                cand[i] = get(new_id * stride + symbols[i + 1], _NO_MERGE)
            if i > 0:
                cand[i - 1] = get(symbols[i - 1] * stride + new_id, _NO_MERGE)
        return symbols
    return _merge_ids_heap(symbols, table, stride)


def _merge_ids_heap(symbols: list[int], table: _PairTable, stride: int) -> list[int]:
    """Long pieces: a heap of (packed merge, pos) over a linked list, as the Rust
    ``merge_all`` (rank first, then position). ``symbols`` are loaded in the table."""
    n = len(symbols)
    get, loaded, need = table.get, table.loaded, table.need
    nxt = list(range(1, n + 1))
    prv = list(range(-1, n - 1))
    alive = [True] * n
    heap = []
    for i in range(n - 1):
        m = get(symbols[i] * stride + symbols[i + 1])
        if m is not None:
            heap.append((m, i))
    heapq.heapify(heap)
    while heap:
        merge, pos = heapq.heappop(heap)
        if not alive[pos] or nxt[pos] >= n:
            continue
        right = nxt[pos]
        new_id = merge & _ID_MASK
        m = get(symbols[pos] * stride + symbols[right])
        if m is None or m & _ID_MASK != new_id:  # as Rust, which compares the new id only
            continue
        if new_id not in loaded:
            need(new_id)
        symbols[pos] = new_id
        alive[right] = False
        nxt[pos] = nxt[right]
        if nxt[pos] < n:
            prv[nxt[pos]] = pos
        before = prv[pos]
        if before >= 0:
            m = get(symbols[before] * stride + new_id)
            if m is not None:
                heapq.heappush(heap, (m, before))
        if nxt[pos] < n:
            m = get(new_id * stride + symbols[nxt[pos]])
            if m is not None:
                heapq.heappush(heap, (m, pos))
    return [s for s, a in zip(symbols, alive) if a]

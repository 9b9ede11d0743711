"""The compile cache under every regex, grammar and JSON Schema constraint: compiled
grammars shared by tokenizers with equal fingerprints, one build per key however many
threads or tasks ask together, within a memory budget; and the worker pools the
awaitable API (``compile``) runs on.

- ``PerFingerprint(build)``: one value per tokenizer *fingerprint* (``tok.fingerprint``),
  built from the first tokenizer's vocabulary index. Two ``Tokenizer`` objects with
  equal fingerprints (one rebuilt from another's ranks, a rank file and the
  ``tokenizer.json`` saved from it) share it, so a schema compiled for one is a cache
  hit for the other. Each vocabulary index that asked holds
  it, so it lives as long as one of those tokenizers does (as ``vocab.PerIndex`` values
  do), and the budget below is per fingerprint, as it was per vocabulary index.
- ``CompileCache``: an LRU of compiled values keyed by their source (the caller's key:
  the kind, the canonical text, the options that change the compiled grammar), bounded
  by a count and by bytes (the newest entry stays even alone over the byte budget).
  *Single-flight*: the first caller of a key builds it; callers arriving during the
  build wait for that build (in threads) or await it (``compile``), and get its value
  or its exception: one build, never two. A build that fails is not cached; one cut
  short by a ``BaseException`` that is no ``Exception`` (``KeyboardInterrupt`` in the
  thread that built) is retried by the next caller instead of handing them that
  interrupt. A build that asks for a key another build is on builds it again itself:
  waiting could deadlock the one build thread on a build queued behind it.
- ``no_wait()``: a thread-local mode for the awaitable path. Inside it, a miss does not
  build in the calling thread: the build goes to the build pool and ``Pending`` (with the
  future of the build) is raised, as is a wait on another caller's build, so the caller
  can free its thread and await the future on its event loop (``compile``).

Pools (``lookup_pool``, ``build_pool``, created on first use, threads named
``tokstream-lookup`` / ``tokstream-compile``): lookups (the key, a cache hit, the first
mask) run on ``LOOKUP_WORKERS`` threads, builds on ``BUILD_WORKERS``, so a hit never
queues behind a slow build. Why one build worker, measured on a 2-core machine with an
enum of 3,000 strings (2.2 s to compile, pure Python) while an event loop timed
``asyncio.sleep(0.001)``: one build thread, the loop's wake-ups were late by p50 5 ms,
p99 40 ms, max 55 ms (Python's 5 ms switch interval: the loop waits for the GIL); two
builds in parallel took 8.2 s together (not 4.4 s: they fight over the GIL) and made
the loop late by p50 15 ms, p99 190 ms, max 300 ms. A switch interval of 1 ms
(``sys.setswitchinterval``, the server's choice to make) gives p50 1.2 ms, p99 4 ms. On
``examples/openai_server.py`` with its clients in the same process, while one request's
compile spent 4 s in Python: ``GET /v1/models`` p50 0.6 ms, max 16 ms (idle: 0.6 / 3
ms); a 4-token completion p50 44 ms (idle 12 ms); a 1 ms switch interval changed
nothing measurable there (the clients' threads want the GIL too). A
process pool would leave the loop alone entirely, but a compiled grammar holds locks
and per-vocabulary tables and is not picklable; the lazy engine (issue 28) moves most
work from compile to the mask walks anyway. A build still running when the interpreter
exits delays the exit until it ends (``concurrent.futures`` joins its threads).

Cost: a hit is one dict lookup under a lock plus the caller's key (the canonical text);
statistics are two counters under a lock (``compile_cache_info``). Memory: the budget
the caller gives (``grammar.constraint``: 64 grammars and 512 MB per fingerprint); an
in-flight entry is a future.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final, Generic, NamedTuple, TypeVar

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer
    from ..vocab import VocabIndex

__all__ = [
    "BUILD_WORKERS",
    "LOOKUP_WORKERS",
    "CompileCache",
    "CompileCacheInfo",
    "Pending",
    "PerFingerprint",
    "build_pool",
    "cache_info",
    "lookup_pool",
    "no_wait",
]

#: Threads for builds (module notes: one, as parallel pure-Python builds only fight
#: over the GIL and stall an event loop more).
BUILD_WORKERS: Final = 1
#: Threads for lookups: the key, a hit, the first mask of a new constraint.
LOOKUP_WORKERS: Final = 2

V = TypeVar("V")
T = TypeVar("T")


class CompileCacheInfo(NamedTuple):
    """The compile cache's statistics, as ``functools.lru_cache``'s ``cache_info()``:
    ``hits`` (answered from the cache, or by joining a build already running), ``misses``
    (builds started), ``maxsize`` (compiled grammars kept per tokenizer fingerprint) and
    ``currsize`` (compiled grammars held now, over all tokenizers)."""

    hits: int
    misses: int
    maxsize: int
    currsize: int


class Pending(Exception):  # a signal, not an error: it never reaches a user
    """Raised inside ``no_wait()`` instead of waiting: ``future`` is the build's."""

    def __init__(self, future: Future[Any]) -> None:
        super().__init__("a compile for this key is running")
        self.future = future


class _Abandoned(Exception):
    """Set on a build's future when the build ended by a non-``Exception`` (an interrupt):
    whoever waited retries."""


_stats_lock: Final = threading.Lock()
_stats: Final = {"hits": 0, "misses": 0}
_caches: Final[weakref.WeakSet[CompileCache[Any]]] = weakref.WeakSet()
_local: Final = threading.local()


def _count(name: str) -> None:
    with _stats_lock:
        _stats[name] += 1


def cache_info() -> CompileCacheInfo:
    """The statistics of every ``CompileCache`` (``CompileCacheInfo``)."""
    with _stats_lock:
        hits, misses = _stats["hits"], _stats["misses"]
        caches = list(_caches)
    return CompileCacheInfo(hits, misses, max((c.maxsize for c in caches), default=0), sum(len(c) for c in caches))


@contextmanager
def no_wait(*, again: bool = False) -> Iterator[None]:
    """Within this block, in this thread, ``CompileCache.get`` raises ``Pending`` rather
    than build or wait (module notes). ``again``: the caller asks once more after
    awaiting a build it was counted for, so a hit is not counted twice."""
    before = getattr(_local, "no_wait", False), getattr(_local, "again", False)
    _local.no_wait, _local.again = True, again
    try:
        yield
    finally:
        _local.no_wait, _local.again = before


class CompileCache(Generic[V]):
    """An LRU of built values with single-flight builds (module notes).

    ``size(value)`` is a value's bytes against ``maxbytes``.

    >>> cache = CompileCache(2, 1 << 20, len)
    >>> cache.get("a", lambda: b"compiled"), cache.get("a", lambda: b"not built")
    (b'compiled', b'compiled')
    """

    def __init__(self, maxsize: int, maxbytes: int, size: Callable[[V], int]) -> None:
        self.maxsize = maxsize
        self._maxbytes = maxbytes
        self._size = size
        self._lru: OrderedDict[Hashable, V] = OrderedDict()
        self._bytes = 0
        self._flight: dict[Hashable, Future[V]] = {}
        self._lock = threading.Lock()
        with _stats_lock:
            _caches.add(self)

    def __len__(self) -> int:
        return len(self._lru)

    def get(self, key: Hashable, build: Callable[[], V]) -> V:
        """The value for ``key``: cached, or the running build's, or ``build()`` (here,
        or in the build pool under ``no_wait``)."""
        while True:
            with self._lock:
                found = self._lru.get(key)
                if found is not None:
                    self._lru.move_to_end(key)
                    if not getattr(_local, "again", False):
                        _count("hits")
                    return found
                future = self._flight.get(key)
                if future is None:
                    future = self._flight[key] = Future()
                    # Running from the start: cancelling an awaiting task's wrapper of it
                    # (asyncio.wrap_future) cannot cancel the build others wait for.
                    future.set_running_or_notify_cancel()
                    break
            if getattr(_local, "building", False):
                # A build that needs a key another build is on: built again here, as a
                # build thread waiting on a build queued behind it would wait forever.
                _count("misses")
                return build()
            if not getattr(_local, "again", False):
                _count("hits")
            if getattr(_local, "no_wait", False):
                raise Pending(future)
            try:
                return future.result()
            except _Abandoned:
                continue  # that build was interrupted: try again
        _count("misses")
        if not getattr(_local, "no_wait", False):
            return self._fill(key, future, build)
        try:
            build_pool().submit(self._fill, key, future, build)
        except BaseException as e:  # the pool is shut down (interpreter exit)
            self._fail(key, future, e)
            raise
        raise Pending(future)

    def _fill(self, key: Hashable, future: Future[V], build: Callable[[], V]) -> V:
        """Build ``key``'s value, cache it and hand it to whoever waits."""
        nested = getattr(_local, "building", False)
        _local.building = True
        try:
            value = build()
        except BaseException as e:
            self._fail(key, future, e)
            raise
        finally:
            _local.building = nested
        with self._lock:
            if key not in self._lru:
                self._lru[key] = value
                self._bytes += self._size(value)
            while len(self._lru) > self.maxsize or (self._bytes > self._maxbytes and len(self._lru) > 1):
                self._bytes -= self._size(self._lru.popitem(last=False)[1])
            del self._flight[key]
        future.set_result(value)
        return value

    def _fail(self, key: Hashable, future: Future[V], e: BaseException) -> None:
        with self._lock:
            self._flight.pop(key, None)
        future.set_exception(e if isinstance(e, Exception) else _Abandoned())


class PerFingerprint(Generic[T]):
    """``build(index)`` once per tokenizer fingerprint (module notes): tokenizers with
    equal fingerprints get the same value, built from the first one's vocabulary index,
    kept while one of their indexes lives. A value must take weak references (an
    instance of a Python class does).

    >>> import tokstream
    >>> class Tables:
    ...     def __init__(self, index):
    ...         self.n_vocab = index.n_vocab
    >>> per = PerFingerprint(Tables)
    >>> per(tokstream.load("cl100k_base")) is per(tokstream.load("cl100k_base"))
    True
    """

    def __init__(self, build: Callable[[VocabIndex], T]) -> None:
        self._build = build
        self._by_index: weakref.WeakKeyDictionary[VocabIndex, T] = weakref.WeakKeyDictionary()
        self._by_fingerprint: weakref.WeakValueDictionary[str, T] = weakref.WeakValueDictionary()
        self._lock = threading.Lock()

    def __call__(self, tok: Tokenizer) -> T:
        index = tok.vocab.index
        found = self._by_index.get(index)
        if found is None:
            fingerprint = tok.fingerprint  # computed once per tokenizer, outside the lock
            with self._lock:
                found = self._by_index.get(index)
                if found is None:
                    found = self._by_fingerprint.get(fingerprint)
                    if found is None:
                        found = self._by_fingerprint[fingerprint] = self._build(index)
                    self._by_index[index] = found
        return found


_pools: Final[dict[str, ThreadPoolExecutor]] = {}
_pools_lock: Final = threading.Lock()


def _pool(name: str, workers: int) -> ThreadPoolExecutor:
    pool = _pools.get(name)
    if pool is None:
        with _pools_lock:
            pool = _pools.get(name)
            if pool is None:
                pool = _pools[name] = ThreadPoolExecutor(workers, thread_name_prefix=f"tokstream-{name}")
    return pool


def build_pool() -> ThreadPoolExecutor:
    """The threads builds run on under ``no_wait`` (``BUILD_WORKERS``)."""
    return _pool("compile", BUILD_WORKERS)


def lookup_pool() -> ThreadPoolExecutor:
    """The threads the awaitable API looks keys up on (``LOOKUP_WORKERS``)."""
    return _pool("lookup", LOOKUP_WORKERS)

"""Compiling constraints off the hot path: ``compile_constraint`` (blocking) and
``compile_constraint_async`` (awaitable: an event loop never runs a compile), one
dispatch over JSON Schemas, regexes and Lark grammars, on the shared compile cache.

Every regex, grammar and JSON Schema constraint is compiled once per key and kept
(``compile_cache``: an LRU of 64 compiled grammars and 512 MB per tokenizer
fingerprint). The key is

- the tokenizer's ``fingerprint``: two ``Tokenizer`` objects with equal fingerprints
  share their compiled grammars;
- the kind and the source: a regex's or grammar's text as given; a JSON Schema's
  canonical JSON (``json_schema.canonical_json``: compact separators, no ASCII escapes,
  every object's keys in their own order, because key order is part of a schema's
  meaning in this library, ``properties`` order first);
- the options that change the compiled grammar: ``whitespace`` (JSON Schema) and the
  ``prefix`` bytes. ``eos_id`` does not: it is a property of the returned constraint,
  so the same schema with another EOS id is a hit.

A repeated key is a hit (``compile_cache_info``); callers that ask for a key while it
compiles share that one compile, in threads and in tasks alike.

``compile_constraint_async`` runs the lookup on a small thread pool and the compile on
a one-thread pool of its own (``compile_cache``: why one, with the latencies measured),
awaiting the result, so the event loop keeps serving while a large schema compiles.
The GIL still lets one thread run Python at a time: while a pure-Python compile runs,
the loop waits up to Python's switch interval (5 ms by default) each time it wants the
GIL back. Cancelling the awaiting task abandons the wait, not the compile: the compile
finishes, is cached, and a later request for the key is a hit; other tasks waiting on
it are not disturbed. A compile error reaches every waiter as the same exception
(``UnsupportedSchemaError``, ``UnsupportedGrammarError``, ``TokstreamError``) the
synchronous functions raise; failures are not cached.

Not here: a process pool (a compiled grammar holds locks and per-vocabulary tables and
does not pickle); cancelling a compile that is running (Python threads cannot be
interrupted; every compile is bounded by the engine's budgets instead).
"""

from __future__ import annotations

import asyncio
from concurrent.futures import Future
from functools import partial
from typing import TYPE_CHECKING, Any, Final

from .compile_cache import CompileCacheInfo, Pending, cache_info, lookup_pool, no_wait
from .grammar.constraint import GrammarConstraint, grammar_constraint, regex_constraint
from .healing import Healing
from .json_schema import json_schema_constraint

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["CompileCacheInfo", "compile_cache_info", "compile_constraint", "compile_constraint_async"]

#: Times the awaitable path looks a key up again after awaiting its compile (the entry
#: can be evicted in between, under churn); then it compiles, or waits for the compile,
#: on a lookup thread (not the build thread: waiting there for a build queued behind it
#: would never end).
_ROUNDS: Final = 3


def compile_cache_info() -> CompileCacheInfo:
    """The compile cache's statistics, as ``functools.lru_cache``'s ``cache_info()``:
    ``hits`` (found, or joined a compile already running), ``misses`` (compiles started),
    ``maxsize`` (compiled grammars kept per tokenizer fingerprint), ``currsize``
    (compiled grammars held now). Every regex, grammar and JSON Schema constraint counts,
    however it was made.

    >>> import tokstream
    >>> tok = tokstream.load("cl100k_base")
    >>> before = tokstream.compile_cache_info()
    >>> _ = tokstream.compile_constraint(tok, regex=r"[0-9]{3}-cache-info")
    >>> _ = tokstream.compile_constraint(tok, regex=r"[0-9]{3}-cache-info", eos_id=100257)
    >>> after = tokstream.compile_cache_info()
    >>> after.misses - before.misses, after.hits - before.hits
    (1, 1)
    """
    return cache_info()


def _dispatch(
    tok: Tokenizer,
    json_schema: Any,
    regex: str | None,
    grammar: str | None,
    eos_id: int | None,
    whitespace: str | None,
    prefix: bytes | Healing,
) -> partial[GrammarConstraint]:
    """The one constraint function the arguments name, bound to them; ``TypeError``
    unless exactly one source is given (``whitespace`` with a JSON Schema only)."""
    given = [
        name for name, v in (("json_schema", json_schema), ("regex", regex), ("grammar", grammar)) if v is not None
    ]
    if len(given) == 1 and json_schema is not None:
        return partial(json_schema_constraint, tok, json_schema, eos_id=eos_id, whitespace=whitespace, prefix=prefix)
    if len(given) == 1 and whitespace is not None:
        raise TypeError("whitespace= applies to json_schema= only")
    if len(given) == 1 and regex is not None:
        return partial(regex_constraint, tok, regex, eos_id=eos_id, prefix=prefix)
    if len(given) == 1 and grammar is not None:
        return partial(grammar_constraint, tok, grammar, eos_id=eos_id, prefix=prefix)
    raise TypeError(f"pass exactly one of json_schema=, regex= or grammar= (got {', '.join(given) or 'none'})")


def compile_constraint(
    tok: Tokenizer,
    *,
    json_schema: Any = None,
    regex: str | None = None,
    grammar: str | None = None,
    eos_id: int | None = None,
    whitespace: str | None = None,
    prefix: bytes | Healing = b"",
) -> GrammarConstraint:
    """A constraint compiled from exactly one of ``json_schema`` (a dict, a boolean
    schema or its JSON text: ``json_schema_constraint``), ``regex``
    (``regex_constraint``) or ``grammar`` (Lark text: ``grammar_constraint``), with
    those functions' options and errors, through the shared compile cache (module
    notes: the key). Blocking: the compile runs in the calling thread, or, when another
    thread or task is compiling the same key, this call waits for that compile.

    >>> import tokstream
    >>> tok = tokstream.load("cl100k_base")
    >>> c = tokstream.compile_constraint(tok, json_schema={"enum": ["yes", "no"]}, eos_id=100257)
    >>> [c.accept(i) for i in tok.encode('"yes"')], c.can_end
    ([True, True, True], True)
    """
    return _dispatch(tok, json_schema, regex, grammar, eos_id, whitespace, prefix)()


def _lookup(make: partial[GrammarConstraint], first_mask: bool, again: bool) -> GrammarConstraint | Future[Any]:
    """On a lookup thread: the constraint (a hit, its first mask computed when asked), or
    the future of the compile it waits for (started on the build pool if it was a miss).
    ``again``: after awaiting that future (not counted as a second hit)."""
    try:
        with no_wait(again=again):
            return _compile_waiting(make, first_mask)
    except Pending as p:
        return p.future


def _compile_waiting(make: partial[GrammarConstraint], first_mask: bool) -> GrammarConstraint:
    """The constraint, compiling or waiting for its compile here; its first mask too
    when asked (cached with the compiled grammar: later masks of it are hits)."""
    constraint = make()
    if first_mask:
        constraint.allowed()
    return constraint


async def compile_constraint_async(
    tok: Tokenizer,
    *,
    json_schema: Any = None,
    regex: str | None = None,
    grammar: str | None = None,
    eos_id: int | None = None,
    whitespace: str | None = None,
    prefix: bytes | Healing = b"",
    first_mask: bool = True,
) -> GrammarConstraint:
    """``compile_constraint`` for an event loop: the lookup, the compile and (with
    ``first_mask``) the mask of the start state run on worker threads, awaited, so the
    loop goes on serving meanwhile (module notes). Concurrent calls for one key share
    one compile. Cancelling the awaiting task leaves the compile running to completion
    and into the cache. Errors are those of ``compile_constraint``, raised here.

    ``first_mask``: the start state's mask is computed in the worker too (the first
    ``allowed_ids`` or ``TokenMasker`` call on the loop then finds it cached; the most
    expensive mask of many grammars). Read a dict ``json_schema`` as given when this is
    called: do not change it before the call returns.

    >>> import asyncio, tokstream
    >>> tok = tokstream.load("cl100k_base")
    >>> c = asyncio.run(tokstream.compile_constraint_async(tok, regex=r"[a-z]+@[a-z]+\\.org", eos_id=100257))
    >>> [c.accept(i) for i in tok.encode("ada@python.org")], c.can_end
    ([True, True, True, True], True)
    """
    make = _dispatch(tok, json_schema, regex, grammar, eos_id, whitespace, prefix)
    loop = asyncio.get_running_loop()
    for n in range(_ROUNDS):
        found = await loop.run_in_executor(lookup_pool(), _lookup, make, first_mask, n > 0)
        if not isinstance(found, Future):
            return found
        # The compile's future is running: cancelling this wrapper cannot cancel it
        # (compile_cache). Its exception, if any, is raised here.
        await asyncio.wrap_future(found)
    return await loop.run_in_executor(lookup_pool(), _compile_waiting, make, first_mask)

"""``compile_constraint`` / ``compile_constraint_async`` and the compile cache under them
(``tokstream.constrain.compile``, ``compile_cache``).

The cache is global to the process, so every test reads ``compile_cache_info`` before
and after and compares the differences, and uses schemas of its own (a fresh ``title``,
an annotation: no effect on the constraint). A compile is held open where a test needs
one in flight: ``json_schema.constraint.compile_schema`` is wrapped to wait on an event
(``Gate``), so "in flight" is a state the test controls, not a race it hopes to win.
"""

from __future__ import annotations

import asyncio
import gc
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import tokstream
from tokstream.constrain.compile_cache import LOOKUP_WORKERS
from tokstream.constrain.json_schema import constraint as json_constraint

EOS = 100257  # cl100k_base's <|endoftext|>


@pytest.fixture(scope="module")
def tok() -> tokstream.Tokenizer:
    return tokstream.load("cl100k_base")


@pytest.fixture(scope="module")
def twin(tok: tokstream.Tokenizer) -> tokstream.Tokenizer:
    """Another ``Tokenizer`` object with ``tok``'s ranks: an equal fingerprint, its own
    vocabulary index."""
    other = tokstream.Tokenizer(
        tok.pipeline.model.ranks, pattern=tok.pattern, special_tokens=tok.special_tokens, name=tok.name
    )
    assert other is not tok and other.vocab.index is not tok.vocab.index
    assert other.fingerprint == tok.fingerprint
    return other


def fresh_schema(**extra: Any) -> dict[str, Any]:
    """A small object schema no other test compiles (its title is new)."""
    schema: dict[str, Any] = {
        "title": uuid.uuid4().hex,
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 8}, "n": {"type": "integer"}},
        "required": ["name", "n"],
    }
    schema.update(extra)
    return schema


def delta(before: tokstream.constrain.compile.CompileCacheInfo) -> tuple[int, int]:
    """(misses, hits) since ``before``."""
    now = tokstream.compile_cache_info()
    return now.misses - before.misses, now.hits - before.hits


def accepts(c: Any, tok: tokstream.Tokenizer, text: str) -> bool:
    return all(c.accept(i) for i in tok.encode(text)) and c.can_end


def wait_for(predicate: Callable[[], bool], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


async def until(predicate: Callable[[], bool], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.005)


class Gate:
    """``compile_schema`` wrapped: a schema whose title is ``title`` waits for
    ``release()`` (after ``started`` is set) and is counted in ``calls``; ``fail`` makes
    it raise that error instead of compiling."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, title: str) -> None:
        self.title = title
        self.started = threading.Event()
        self.opened = threading.Event()
        self.calls = 0
        self.fail: Exception | None = None
        self.busy = 0.0  # seconds of pure-Python work before compiling (holds the GIL)
        self.then: Callable[[], object] | None = None  # called once the gate is open
        real = json_constraint.compile_schema

        def gated(root: Any, ws: Any) -> Any:
            if isinstance(root, dict) and root.get("title") == self.title:
                self.calls += 1
                self.started.set()
                if not self.opened.wait(60):
                    raise RuntimeError("the test never released the gate")
                end = time.perf_counter() + self.busy
                while time.perf_counter() < end:
                    sum(range(1000))
                if self.then is not None:
                    self.then()
                if self.fail is not None:
                    raise self.fail
            return real(root, ws)

        monkeypatch.setattr(json_constraint, "compile_schema", gated)

    def release(self) -> None:
        self.opened.set()


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    g = Gate(monkeypatch, uuid.uuid4().hex)
    yield g
    g.release()  # a failed test must not leave a build thread waiting


# -- the key ------------------------------------------------------------------------------------


def test_a_tokenizer_with_an_equal_fingerprint_hits(tok: tokstream.Tokenizer, twin: tokstream.Tokenizer) -> None:
    schema = fresh_schema()
    before = tokstream.compile_cache_info()
    a = tokstream.compile_constraint(tok, json_schema=schema, eos_id=EOS, whitespace="compact")
    assert delta(before) == (1, 0)
    b = tokstream.compile_constraint(twin, json_schema=schema, eos_id=EOS, whitespace="compact")
    assert delta(before) == (1, 1)
    # Each constraint is its own tokenizer's: it walks and fast-forwards with it.
    assert a.index is tok.vocab.index and b.index is twin.vocab.index
    assert b.forced_ids() == a.forced_ids() and b.forced_bytes() == b'{"name":"'
    assert accepts(a, tok, '{"name":"Ada","n":3}') and accepts(b, twin, '{"name":"Ada","n":3}')


def test_what_the_key_holds(tok: tokstream.Tokenizer) -> None:
    """The canonical JSON merges spellings of one value; the options that change the
    compiled grammar split; ``eos_id`` does not."""
    schema = fresh_schema()
    text = json_constraint.canonical_json(schema)
    assert text.startswith('{"title":') and " " not in text
    spaced = json.dumps(schema, indent=2, ensure_ascii=True)
    before = tokstream.compile_cache_info()
    tokstream.compile_constraint(tok, json_schema=schema, whitespace="compact")
    tokstream.compile_constraint(tok, json_schema=text, whitespace="compact", eos_id=EOS)  # its JSON text
    tokstream.compile_constraint(tok, json_schema=spaced, whitespace="compact")  # other whitespace
    tokstream.json_schema_constraint(tok, schema, whitespace="compact")  # the plain function shares it
    assert delta(before) == (1, 3)
    tokstream.compile_constraint(tok, json_schema=schema)  # default whitespace: another grammar
    tokstream.compile_constraint(tok, json_schema=schema, whitespace="compact", prefix=b"x")
    reordered = {k: schema[k] for k in ("type", "title", "properties", "required")}
    tokstream.compile_constraint(tok, json_schema=reordered, whitespace="compact")  # key order is kept
    assert delta(before) == (4, 3)


def test_key_order_is_meaning(tok: tokstream.Tokenizer) -> None:
    """Why the canonical JSON keeps key order: the same keys in another order are
    another constraint (an ``allOf`` before or after the object's own properties)."""
    own = {"properties": {"a": {"const": 2}}, "required": ["a"]}
    merged = {"allOf": [{"properties": {"b": {"const": 1}}, "required": ["b"]}]}
    first = tokstream.compile_constraint(tok, json_schema={**merged, **own}, whitespace="compact", eos_id=EOS)
    last = tokstream.compile_constraint(tok, json_schema={**own, **merged}, whitespace="compact", eos_id=EOS)
    assert accepts(first.fork(), tok, '{"b":1,"a":2}') and not accepts(first.fork(), tok, '{"a":2,"b":1}')
    assert accepts(last.fork(), tok, '{"a":2,"b":1}') and not accepts(last.fork(), tok, '{"b":1,"a":2}')


def test_regex_and_grammar(tok: tokstream.Tokenizer, twin: tokstream.Tokenizer) -> None:
    pattern = rf"[0-9]{{2}}-{uuid.uuid4().hex}"
    grammar = f'start: "[" [start ("," start)*] "]" | "{uuid.uuid4().hex}"'
    before = tokstream.compile_cache_info()
    r = tokstream.compile_constraint(tok, regex=pattern, eos_id=EOS)
    assert tokstream.regex_constraint(twin, pattern) is not None
    g = asyncio.run(tokstream.compile_constraint_async(tok, grammar=grammar))
    assert tokstream.grammar_constraint(twin, grammar) is not None
    assert delta(before) == (2, 2)
    assert accepts(r, tok, pattern.replace("[0-9]{2}", "42")) and accepts(g, tok, "[[],[]]")


def test_compiled_grammars_live_with_their_tokenizers() -> None:
    """The cache holds a tokenizer's grammars while the tokenizer lives (no longer), and
    at most ``maxsize`` of them."""
    texts = ["the cat sat on the mat", "a cat and a hat"] * 20
    small = tokstream.train_bpe(texts, 300)
    base = tokstream.compile_cache_info().currsize
    maxsize = tokstream.compile_cache_info().maxsize
    for n in range(maxsize + 6):
        tokstream.compile_constraint(small, regex=f"cat{n}")
    assert tokstream.compile_cache_info().currsize - base == maxsize
    del small
    gc.collect()
    assert tokstream.compile_cache_info().currsize <= base


# -- single flight --------------------------------------------------------------------------------


def test_threads_asking_together_share_one_compile(tok: tokstream.Tokenizer, gate: Gate) -> None:
    schema = fresh_schema(title=gate.title)
    before = tokstream.compile_cache_info()
    got: list[Any] = []
    threads = [
        threading.Thread(target=lambda: got.append(tokstream.compile_constraint(tok, json_schema=schema)))
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    gate.started.wait(60)
    wait_for(lambda: delta(before) == (1, 3), "three callers to join the compile")
    gate.release()
    for t in threads:
        t.join(60)
    assert len(got) == 4 and gate.calls == 1
    assert all(accepts(c, tok, '{"name": "x", "n": 1}') for c in got)


@pytest.mark.asyncio
async def test_tasks_asking_together_share_one_compile(tok: tokstream.Tokenizer, gate: Gate) -> None:
    """More waiting tasks than lookup threads: waiters hold no thread, so a cache hit
    still comes back at once while the compile is held open."""
    schema = fresh_schema(title=gate.title)
    other = fresh_schema()
    await tokstream.compile_constraint_async(tok, json_schema=other)  # cached from here on
    before = tokstream.compile_cache_info()
    tasks = [asyncio.create_task(tokstream.compile_constraint_async(tok, json_schema=schema)) for _ in range(6)]
    assert len(tasks) > LOOKUP_WORKERS
    await until(lambda: delta(before) == (1, 5), "(misses, hits) == (1, 5)")
    hit = await asyncio.wait_for(tokstream.compile_constraint_async(tok, json_schema=other), 10)
    assert accepts(hit, tok, '{"name":"x","n":1}') and delta(before) == (1, 6)
    assert not any(t.done() for t in tasks)
    gate.release()
    got = await asyncio.gather(*tasks)
    assert gate.calls == 1 and delta(before) == (1, 6)
    assert all(accepts(c, tok, '{"name":"x","n":1}') for c in got)
    assert len({id(c) for c in got}) == 6  # one compile, six constraints of their own


@pytest.mark.asyncio
async def test_sync_callers_join_an_async_compile(tok: tokstream.Tokenizer, gate: Gate) -> None:
    schema = fresh_schema(title=gate.title)
    before = tokstream.compile_cache_info()
    task = asyncio.create_task(tokstream.compile_constraint_async(tok, json_schema=schema))
    await until(lambda: gate.started.is_set(), "the compile to start")
    joined = asyncio.get_running_loop().run_in_executor(None, lambda: tokstream.json_schema_constraint(tok, schema))
    await until(lambda: delta(before) == (1, 1), "(misses, hits) == (1, 1)")
    gate.release()
    await task
    await joined
    assert gate.calls == 1 and delta(before) == (1, 1)


@pytest.mark.asyncio
async def test_a_compile_that_needs_a_queued_compile_does_not_deadlock(tok: tokstream.Tokenizer, gate: Gate) -> None:
    """A build (on the one build thread) that compiles a key whose build is queued behind
    it on that thread builds the key itself, rather than wait for it forever."""
    inner, outer = fresh_schema(), fresh_schema(title=gate.title)
    gate.then = lambda: tokstream.json_schema_constraint(tok, inner)
    first = asyncio.create_task(tokstream.compile_constraint_async(tok, json_schema=outer))
    await until(lambda: gate.started.is_set(), "the compile to start")
    before = tokstream.compile_cache_info()
    queued = asyncio.create_task(tokstream.compile_constraint_async(tok, json_schema=inner))
    await until(lambda: delta(before)[0] == 1, "the inner compile to be queued")  # behind the gated one
    gate.release()
    a, b = await asyncio.wait_for(asyncio.gather(first, queued), 60)
    assert accepts(a, tok, '{"name":"x","n":1}') and accepts(b, tok, '{"name":"x","n":1}')


# -- cancellation and errors -------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_cancelling_a_waiter_leaves_the_compile_and_the_cache_whole(
    tok: tokstream.Tokenizer, gate: Gate, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop = asyncio.get_running_loop()
    seen: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: seen.append(context))
    schema = fresh_schema(title=gate.title)
    before = tokstream.compile_cache_info()
    doomed = asyncio.create_task(tokstream.compile_constraint_async(tok, json_schema=schema))
    patient = asyncio.create_task(tokstream.compile_constraint_async(tok, json_schema=schema))
    await until(lambda: delta(before) == (1, 1), "(misses, hits) == (1, 1)")
    doomed.cancel()
    with pytest.raises(asyncio.CancelledError):
        await doomed
    gate.release()
    c = await asyncio.wait_for(patient, 60)
    assert accepts(c, tok, '{"name":"x","n":1}')
    again = await tokstream.compile_constraint_async(tok, json_schema=schema)  # a hit: nothing rebuilt
    assert accepts(again, tok, '{"name":"x","n":1}')
    assert gate.calls == 1 and delta(before) == (1, 2)
    # Cancelled while it was the only waiter: the compile still lands in the cache.
    lone = Gate(monkeypatch, uuid.uuid4().hex)
    task = asyncio.create_task(tokstream.compile_constraint_async(tok, json_schema=fresh_schema(title=lone.title)))
    await until(lambda: lone.started.is_set(), "the compile to start")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    lone.release()
    mark = tokstream.compile_cache_info()
    c = await asyncio.wait_for(tokstream.compile_constraint_async(tok, json_schema=fresh_schema(title=lone.title)), 60)
    assert accepts(c, tok, '{"name":"x","n":1}')
    assert lone.calls == 1 and delta(mark) == (0, 1)  # joined the compile, or found it: never a second one
    await asyncio.sleep(0.05)
    gc.collect()
    assert seen == []  # no "exception was never retrieved", no callback error


@pytest.mark.asyncio
async def test_errors_reach_every_waiter_and_are_not_cached(tok: tokstream.Tokenizer, gate: Gate) -> None:
    schema = fresh_schema(title=gate.title)
    gate.fail = tokstream.UnsupportedSchemaError("refused by the test", "(test)", "")
    before = tokstream.compile_cache_info()
    tasks = [asyncio.create_task(tokstream.compile_constraint_async(tok, json_schema=schema)) for _ in range(3)]
    await until(lambda: delta(before) == (1, 2), "(misses, hits) == (1, 2)")
    syncs = asyncio.get_running_loop().run_in_executor(
        None, lambda: tokstream.compile_constraint(tok, json_schema=schema)
    )
    await until(lambda: delta(before) == (1, 3), "(misses, hits) == (1, 3)")
    gate.release()
    results = await asyncio.gather(*tasks, syncs, return_exceptions=True)
    assert all(r is gate.fail for r in results), results
    assert gate.calls == 1
    gate.fail = None  # not cached: the next request compiles again, and succeeds
    c = await tokstream.compile_constraint_async(tok, json_schema=schema)
    assert gate.calls == 2 and delta(before) == (2, 3) and accepts(c, tok, '{"name":"x","n":1}')


@pytest.mark.asyncio
async def test_the_same_errors_as_the_functions(tok: tokstream.Tokenizer) -> None:
    with pytest.raises(tokstream.UnsupportedSchemaError) as info:
        await tokstream.compile_constraint_async(tok, json_schema={"not": {"type": "string"}})
    assert info.value.keyword == "not"
    with pytest.raises(tokstream.UnsupportedSchemaError, match="not valid JSON"):
        await tokstream.compile_constraint_async(tok, json_schema="{oops")
    with pytest.raises(tokstream.UnsupportedGrammarError):
        await tokstream.compile_constraint_async(tok, regex="(a)\\1")
    with pytest.raises(tokstream.UnsupportedGrammarError):
        await tokstream.compile_constraint_async(tok, grammar="start: undefined_rule")
    with pytest.raises(tokstream.InvalidTokenIdError):
        await tokstream.compile_constraint_async(tok, regex="a", eos_id=10**9)
    with pytest.raises(tokstream.TokstreamError, match="not valid UTF-8"):
        await tokstream.compile_constraint_async(tok, regex="a", prefix=b"\xff")
    with pytest.raises(TypeError, match="exactly one"):
        await tokstream.compile_constraint_async(tok)
    with pytest.raises(TypeError, match="exactly one"):
        await tokstream.compile_constraint_async(tok, regex="a", grammar="start: 'a'")
    with pytest.raises(TypeError, match="json_schema= only"):
        tokstream.compile_constraint(tok, regex="a", whitespace="compact")


# -- the event loop --------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_the_loop_runs_while_a_slow_compile_does(tok: tokstream.Tokenizer, gate: Gate) -> None:
    """A compile that spends 2 s in pure Python (holding the GIL but for the switch
    interval) leaves the loop free: a 10 ms ticker is never late by a fraction of the
    compile. On the loop, the ticker would stall for the whole 2 s."""
    gate.busy = 2.0
    gate.release()
    gaps: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            gaps.append(now - last - 0.01)
            last = now

    ticking = asyncio.create_task(ticker())
    await asyncio.sleep(0.05)
    start = time.perf_counter()
    await tokstream.compile_constraint_async(tok, json_schema=fresh_schema(title=gate.title))
    took = time.perf_counter() - start
    done.set()
    await ticking
    assert took >= 2.0
    assert max(gaps) < took / 4, f"the loop stalled {max(gaps):.3f} s during a {took:.2f} s compile"
    assert len(gaps) > 20

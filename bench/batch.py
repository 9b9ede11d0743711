"""Batch bitmask fill: 64 concurrent JSON Schema walks, one batch call per step, tokstream
against llguidance's parallel batch fill (and xgrammar's).

Run ``python bench/batch.py`` from the repository root (``--help`` for the options;
``--quick`` for a smoke run). In one process, on the Llama 3 ``tokenizer.json``
(``hf/llama3_tokenizer.json`` in ``../shared/fixtures``), every engine gets the same
vocabulary as in ``bench/grammar.py`` (whose loaders, engine wrappers and instance
generator this script imports): our token bytes, the special ids refused, EOS
``<|eot_id|>``.

A server steps a batch: ``--batch`` rows (64), each a walk of its own schema of the
JSONSchemaBench sample (``jsonschemabench/schemas_sample.jsonl.xz``). A walk is one
valid instance of its schema (hypothesis-jsonschema, keys in ``properties`` order,
``json.dumps(..., ensure_ascii=False)``, as ``bench/grammar.py --part json`` draws
them), encoded by Llama 3, then EOS. At every step each engine fills the bitmask rows
of the whole batch with one call into its own ``(batch, ceil(V/32))`` int32 array, and
each row then takes its walk's next token:

- tokstream: ``TokenMasker.fill_bitmask_batch(constraints, out, indices=rows)``, with
  the library's default threads; a second copy of tokstream (another ``Tokenizer``
  object, so its compiled grammars and cached masks are its own, cold too) runs with
  the other choice of ``threads`` (one thread if the default uses the pool, the pool
  if it does not), so the run shows whether threads help. The two copies' rows must
  be equal, the same check the tests make;
- llguidance: ``llguidance.numpy.fill_next_token_bitmask_par(executor, [(matcher,
  row), ...], out)`` on an ``LLExecutor()`` (its default threads);
- xgrammar (``--engines ... xgrammar``): ``BatchGrammarMatcher(max_threads=cores)
  .batch_fill_next_token_bitmask(matchers, out, indices=rows)`` (its ``"auto"`` would
  use half the cores).

A walk that ends (its EOS taken) hands its row to the next schema (continuous batching:
every walk of a run is a different schema, so no engine sees a schema's states twice),
until ``--steps`` steps have been timed. Schemas are taken spread over the sample (every
``len / batch``-th first) and used when every engine in the run compiles them (an
engine's refusal, tokstream's compile or the instance generation past ``--timeout``
seconds: skipped and counted). Compiles happen between steps, when a row is handed
over, and are timed apart (**compile** p50 / p99 per engine): **step** is only the batch
fill call. A walk whose token an engine refuses ends for every engine (printed; a
token accepted but missing from an engine's mask is counted). Accepts are timed apart
too (one ``accept`` / ``consume_token`` / ``accept_token`` per row, for information).

Printed: per engine, the step p50 / p90 / p99 and the mean in ms; the ratios of
tokstream's (default threads) step p50 and p99 to llguidance's, with PASS/MISS against
issue 28's acceptance point 6 (tokstream at most 2x llguidance, both quantiles); the
threads ratio of the two tokstream copies (< 1: threads help). Absolute times on a
shared machine are noise; the ratios, taken in one run, are the result.

Needs ``pip install llguidance hypothesis-jsonschema jsonschema`` (xgrammar: ``pip
install xgrammar torch``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import tokstream
from tokstream.constrain import masks as _masks
from tokstream.constrain.json_schema import json_schema_constraint

sys.path.insert(0, str(Path(__file__).resolve().parent))
from encode import verdict
from grammar import (
    JSON_SAMPLE,
    JSON_TIMEOUT_S,
    JSON_WARMUP,
    MAX_INSTANCE_TOKENS,
    LLGuidanceEngine,
    Skip,
    Timeout,
    Vocab,
    Workload,
    XGrammarEngine,
    _version,
    deadline,
    error_head,
    in_schema_order,
    instance_maker,
    load_schemas,
    load_vocab,
)

#: Issue 28, acceptance point 6: tokstream's time per step at most this many times llguidance's.
TARGET_RATIO = 2.0
ENGINES = ("tokstream", "llguidance", "xgrammar")
COMPILE_ORDER = ("llguidance", "tokstream", "xgrammar")


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


class BatchEngine:
    """What the bench needs of an engine: ``compile`` a schema to a pristine start
    state, ``start`` a walking state from it, ``fill`` the rows of a batch in one call,
    ``accept`` one token."""

    name = ""

    def compile(self, schema: Any) -> Any:
        raise NotImplementedError

    def start(self, pristine: Any) -> Any:
        raise NotImplementedError

    def fill(self, states: list[Any], rows: list[int], out: np.ndarray) -> None:
        raise NotImplementedError

    def accept(self, state: Any, token: int) -> bool:
        raise NotImplementedError


class TokstreamBatch(BatchEngine):
    def __init__(self, v: Vocab, threads: int | None, label: str) -> None:
        self.v = v
        self.masker = tokstream.TokenMasker(v.tok)
        self.threads = threads
        self.name = label
        self.timeout = JSON_TIMEOUT_S

    def compile(self, schema: Any) -> Any:
        with deadline(self.timeout):
            return json_schema_constraint(self.v.tok, schema, eos_id=self.v.eos)

    def start(self, pristine: Any) -> Any:
        return pristine.fork()

    def fill(self, states: list[Any], rows: list[int], out: np.ndarray) -> None:
        self.masker.fill_bitmask_batch(states, out, indices=rows, threads=self.threads)

    def accept(self, state: Any, token: int) -> bool:
        return bool(state.accept(token))


class LLGuidanceBatch(BatchEngine):
    name = "llguidance"

    def __init__(self, v: Vocab) -> None:
        import llguidance
        import llguidance.numpy as llnp

        self.single = LLGuidanceEngine(v)  # bench/grammar.py's: the tokenizer and compile
        self.executor = llguidance.LLExecutor()
        self.fill_par = llnp.fill_next_token_bitmask_par

    def compile(self, schema: Any) -> Any:
        return self.single.compile(Workload("schema", schema=schema))

    def start(self, pristine: Any) -> Any:
        return pristine.deep_copy()

    def fill(self, states: list[Any], rows: list[int], out: np.ndarray) -> None:
        self.fill_par(self.executor, list(zip(states, rows)), out)

    def accept(self, state: Any, token: int) -> bool:
        return bool(state.consume_token(token))


class XGrammarBatch(BatchEngine):
    name = "xgrammar"

    def __init__(self, v: Vocab) -> None:
        self.single = XGrammarEngine(v)  # bench/grammar.py's: TokenizerInfo and compile
        self.xgr = self.single.xgr
        self.batch = self.xgr.BatchGrammarMatcher(max_threads=cores())

    def compile(self, schema: Any) -> Any:
        return self.single.compile(Workload("schema", schema=schema))[0]

    def start(self, pristine: Any) -> Any:
        return self.xgr.GrammarMatcher(pristine)

    def fill(self, states: list[Any], rows: list[int], out: np.ndarray) -> None:
        self.batch.batch_fill_next_token_bitmask(states, out, indices=rows)

    def accept(self, state: Any, token: int) -> bool:
        return bool(state.accept_token(token))


@dataclass
class Walk:
    """One row's walk: its schema, tokens (EOS last), each engine's state."""

    id: str
    tokens: list[int]
    states: dict[str, Any]
    pos: int = 0


@dataclass
class Tally:
    """Per engine: step and accept times (ns), compile times (ms)."""

    steps: list[int] = field(default_factory=list)
    accepts: list[int] = field(default_factory=list)
    compiles: list[float] = field(default_factory=list)
    misses: int = 0


class Schemas:
    """The next usable schema of the sample, prepared (compiled by every engine, one
    instance drawn), on demand; what was skipped, counted."""

    def __init__(self, v: Vocab, engines: list[BatchEngine], batch: int, timeout: float, tallies: dict[str, Tally]):
        rows = load_schemas(None) or []
        stride = max(1, len(rows) // batch)
        # Every stride-th row first, then the next offset: spread over the sample's splits.
        self.order: Iterator[dict[str, Any]] = (rows[i] for k in range(stride) for i in range(k, len(rows), stride))
        self.v, self.engines, self.timeout, self.tallies = v, engines, timeout, tallies
        self.make = instance_maker()
        self.tried = 0
        self.skipped: dict[str, int] = {}

    def skip(self, why: str) -> None:
        self.skipped[why] = self.skipped.get(why, 0) + 1

    def next(self) -> Walk | None:
        for row in self.order:
            self.tried += 1
            walk = self.prepare(row)
            if walk is not None:
                return walk
        return None

    def prepare(self, row: dict[str, Any]) -> Walk | None:
        pristine: dict[str, Any] = {}
        times: dict[str, float] = {}
        # The fastest compiler first: a schema it refuses costs the others nothing.
        for e in sorted(self.engines, key=lambda e: COMPILE_ORDER.index(e.name.split(" ")[0])):
            try:
                t0 = time.perf_counter()
                pristine[e.name] = e.compile(row["schema"])
                times[e.name] = (time.perf_counter() - t0) * 1e3
            except (Exception, Timeout) as err:  # Skip, an engine's own error, or the deadline
                self.skip(f"{e.name.split(' ')[0]}: {error_head(err)[:50]}")
                return None
        try:
            with deadline(self.timeout):
                drawn = self.make(row["schema"], 1)
        except (Exception, Timeout) as err:
            self.skip(f"instance: {type(err).__name__}")
            return None
        if not drawn:
            self.skip("instance: none drawn")
            return None
        for name, ms in times.items():
            self.tallies[name].compiles.append(ms)
        text = json.dumps(in_schema_order(drawn[0], row["schema"], row["schema"]), ensure_ascii=False)
        tokens = self.v.tok.encode(text, disallowed_special=())[:MAX_INSTANCE_TOKENS] + [self.v.eos]
        return Walk(row["id"], tokens, {e.name: e.start(pristine[e.name]) for e in self.engines})


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(len(s) * q))] if s else float("nan")


def quantiles_ms(ns: list[int]) -> str:
    ms = [x / 1e6 for x in ns]
    mean = sum(ms) / len(ms) if ms else float("nan")
    return f"p50 {pct(ms, 0.5):8.3f} p90 {pct(ms, 0.9):8.3f} p99 {pct(ms, 0.99):8.3f} mean {mean:8.3f} ms"


def make_engines(args: argparse.Namespace) -> tuple[Vocab, list[BatchEngine], str, str | None]:
    """The engines of the run on Llama 3, warmed up; the name of tokstream's default
    copy and of its other-threads copy (None without the check)."""
    v = load_vocab("llama3")
    if v is None:
        raise SystemExit(1)
    default = _masks._batch_threads(None, args.batch)
    main_name = f"tokstream t={default}"
    engines: list[BatchEngine] = [TokstreamBatch(v, None, main_name)]
    other_name = None
    if args.threads_check:
        other = 1 if default > 1 else cores()
        other_name = f"tokstream t={other}"
        if other == default:
            print(f"# threads check skipped: one core ({main_name} only)")
            other_name = None
        else:
            v2 = load_vocab("llama3")  # another Tokenizer: its own index, compiled grammars and masks
            assert v2 is not None
            engines.append(TokstreamBatch(v2, other, other_name))
    for name in args.engines:
        if name == "tokstream":
            continue
        try:
            engines.append(LLGuidanceBatch(v) if name == "llguidance" else XGrammarBatch(v))
        except (Exception, Skip) as err:  # ImportError and whatever a peer's constructor raises
            print(f"# {name}: not run: {type(err).__name__}: {err}")
    for e in engines:
        if isinstance(e, TokstreamBatch):
            e.timeout = args.timeout
        warm = np.zeros((args.batch, v.n_words), dtype=np.int32)
        p = e.compile(JSON_WARMUP.schema)
        e.fill([e.start(p) for _ in range(args.batch)], list(range(args.batch)), warm)  # lazy tables, the pools
    return v, engines, main_name, other_name


def run(args: argparse.Namespace) -> bool:
    if not JSON_SAMPLE.is_file():
        print(f"skipping: {JSON_SAMPLE} not found (set TOKSTREAM_FIXTURES)")
        return False
    v, engines, main_name, other_name = make_engines(args)
    names = [e.name for e in engines]
    tallies = {n: Tally() for n in names}
    versions = [f"llguidance {_version('llguidance')} (LLExecutor default threads)"] if "llguidance" in names else []
    if "xgrammar" in names:
        versions.append(f"xgrammar {_version('xgrammar')} (BatchGrammarMatcher, {cores()} threads)")
    print(
        f"# python {sys.version.split()[0]}, numpy {np.__version__}, tokstream from {Path(tokstream.__file__).parent}; "
        f"{cores()} cores; {'; '.join(versions)}"
    )
    print(
        f"# {v.name}: n_vocab={len(v.table)}, {v.n_words} words a row; batch {args.batch} walks, {args.steps} steps; "
        f"engines: {', '.join(names)}; timeout {args.timeout:g} s",
        flush=True,
    )
    schemas = Schemas(v, engines, args.batch, args.timeout, tallies)
    live: list[Walk | None] = [schemas.next() for _ in range(args.batch)]
    outs = {n: np.zeros((args.batch, v.n_words), dtype=np.int32) for n in names}
    clock = time.perf_counter_ns
    walks_done, ended_early, unequal = 0, [], 0
    sizes: list[int] = []
    t_start = time.perf_counter()
    for step in range(args.steps):
        rows = [r for r, w in enumerate(live) if w is not None]
        if not rows:
            break
        sizes.append(len(rows))
        walks = [live[r] for r in rows]
        # Rotate the engines' order, so none always runs right after another's work.
        k = step % len(engines)
        for e in engines[k:] + engines[:k]:
            states = [w.states[e.name] for w in walks if w is not None]
            t0 = clock()
            e.fill(states, rows, outs[e.name])
            tallies[e.name].steps.append(clock() - t0)
        if other_name is not None and not np.array_equal(outs[main_name][rows], outs[other_name][rows]):
            unequal += 1
        for r in rows:
            w = live[r]
            assert w is not None
            token = w.tokens[w.pos]
            refused = []
            for e in engines:
                t0 = clock()
                ok = e.accept(w.states[e.name], token)
                tallies[e.name].accepts.append(clock() - t0)
                if not ok:
                    refused.append(e.name)
                elif not (int(outs[e.name][r, token >> 5]) >> (token & 31)) & 1:
                    tallies[e.name].misses += 1  # accepted, yet not in the engine's own mask
            w.pos += 1
            if refused or w.pos == len(w.tokens):
                if refused:
                    ended_early.append((w.id, refused, v.table[token] if token != v.eos else b"EOS", w.pos))
                walks_done += 1
                live[r] = schemas.next()  # compiles here: between steps, not timed
        if (step + 1) % 20 == 0:
            spent = time.perf_counter() - t_start
            print(f"  [{step + 1}/{args.steps}] {spent:6.0f} s", file=sys.stderr, flush=True)

    steps = len(sizes)
    print(
        f"# {steps} steps, batch size p50 {pct(sizes, 0.5):.0f} (min {min(sizes, default=0)}); walks finished {walks_done}, "
        f"schemas used {len(tallies[names[0]].compiles)}, tried {schemas.tried}"
    )
    if schemas.skipped:
        print(
            "# schemas skipped: "
            + "; ".join(f"{c} {why}" for why, c in sorted(schemas.skipped.items(), key=lambda x: -x[1]))
        )
    for sid, who, tok, pos in ended_early:
        print(f"  walk ended early: {sid} at token {pos}: {', '.join(who)} refused {tok!r}")
    for n in names:
        t = tallies[n]
        print(
            f"  {n:<14} step {quantiles_ms(t.steps)} | accept/row p50 {pct(t.accepts, 0.5) / 1e3:6.1f} us"
            f" | compile p50 {pct(t.compiles, 0.5):8.2f} p99 {pct(t.compiles, 0.99):8.2f} ms (n={len(t.compiles)})"
            f" | tokens outside the mask {t.misses}"
        )
    ok = True
    if "llguidance" in names:
        ours, theirs = tallies[main_name].steps, tallies["llguidance"].steps
        r50 = pct(ours, 0.5) / pct(theirs, 0.5)
        r99 = pct(ours, 0.99) / pct(theirs, 0.99)
        rmean = sum(ours) / sum(theirs)
        ok = r50 <= TARGET_RATIO and r99 <= TARGET_RATIO
        print(
            f"batch  {v.name}  {args.batch} walks x {steps} steps  {main_name} p50 {pct(ours, 0.5) / 1e6:.3f} ms"
            f" p99 {pct(ours, 0.99) / 1e6:.3f} ms  llguidance p50 {pct(theirs, 0.5) / 1e6:.3f} ms"
            f" p99 {pct(theirs, 0.99) / 1e6:.3f} ms  ratio p50 {r50:.2f}x p99 {r99:.2f}x mean {rmean:.2f}x"
            f" (tokstream / llguidance, <= {TARGET_RATIO:g}x)  {verdict(ok)}"
        )
    if "xgrammar" in names:
        ours, theirs = tallies[main_name].steps, tallies["xgrammar"].steps
        print(
            f"batch  {v.name}  vs xgrammar  ratio p50 {pct(ours, 0.5) / pct(theirs, 0.5):.2f}x"
            f" p99 {pct(ours, 0.99) / pct(theirs, 0.99):.2f}x mean {sum(ours) / sum(theirs):.2f}x (tokstream / xgrammar)"
        )
    if other_name is not None:
        many, one = (main_name, other_name) if _masks._batch_threads(None, args.batch) > 1 else (other_name, main_name)
        a, b = tallies[many].steps, tallies[one].steps
        print(
            f"threads  {many} / {one}  ratio p50 {pct(a, 0.5) / pct(b, 0.5):.2f}x p99 {pct(a, 0.99) / pct(b, 0.99):.2f}x"
            f" mean {sum(a) / sum(b):.2f}x (<1: threads help); rows unequal in {unequal} of {steps} steps"
        )
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Batch bitmask fill: tokstream against llguidance (and xgrammar).")
    parser.add_argument("--batch", type=int, default=64, help="walks stepped together (default 64)")
    parser.add_argument("--steps", type=int, default=None, help="timed steps (default 200; --quick 20)")
    parser.add_argument("--engines", nargs="+", choices=ENGINES, default=["tokstream", "llguidance"])
    parser.add_argument(
        "--no-threads-check",
        dest="threads_check",
        action="store_false",
        help="leave out the second tokstream copy with the other choice of threads",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=JSON_TIMEOUT_S,
        help=f"seconds for tokstream's compile and the instance generation per schema (default {JSON_TIMEOUT_S:g})",
    )
    parser.add_argument("--quick", action="store_true", help="smoke run: batch 8, 20 steps")
    args = parser.parse_args(argv)
    if args.quick and args.batch == 64:
        args.batch = 8
    args.steps = args.steps if args.steps is not None else (20 if args.quick else 200)
    args.engines = sorted(dict.fromkeys(["tokstream", *args.engines]), key=ENGINES.index)
    ok = run(args)
    print(f"# tokstream target met: {verdict(ok)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Regex and grammar constraints: tokstream against llguidance, xgrammar and outlines-core.

Run ``python bench/grammar.py`` from the repository root (``--help`` for the options;
``--quick`` for a smoke run). In one process, on o200k_base (embedded) and the Llama 3
``tokenizer.json`` (``hf/llama3_tokenizer.json`` in ``../shared/fixtures``; skipped with a
message when absent), every engine gets the same vocabulary: our ``vocab.table`` bytes,
the special ids refused, one EOS (o200k: ``<|endoftext|>`` 199999; Llama 3: ``<|eot_id|>``
128009, the end of a chat turn). For each workload -- a dozen regexes (dates, e-mail,
numbers, URL, UUID, a CJK alternative, ...) and a few Lark grammars (left-recursive
arithmetic with ``%ignore``, nested lists, a key=value config, JSON), each translated
into every peer's syntax -- it prints per engine:

- **compile** (the constraint / matcher / index built from the pattern) and **first
  mask** (the int32 bitmask of the start state, xgrammar's layout); their sum is the key
  figure for regexes: target for tokstream p50 <= 20 ms over the regexes;
- **step** p50 / p99 of one bitmask along seeded random walks (``--walks`` x up to
  ``--steps`` tokens): target for tokstream p50 <= 50 us, p99 <= 5 ms (pooled over the
  workloads of a kind); **accept** p50 (advancing by one token; no target).

All engines walk the SAME token path: at each step every engine computes its mask, the
driver (tokstream when it has the engine, else llguidance) picks a random non-special
token that every engine still on the path allows (``--path driver``: one the driver
allows), and every engine advances with it. Disagreements are printed: an engine whose
mask differs from the driver's (counted per step, with an example of each side), and an
engine that refuses the chosen token (it leaves that walk). Engines that do not install
or import, or that refuse a workload, are reported and skipped. Compile is timed once
per workload (cold, after one warm-up compile per engine and tokenizer), so the p50 over
the workloads is the robust figure; peer tokenizer construction is timed and printed,
outside the comparison. Ratios are geometric means over the workloads of engine / other.
Absolute times on a shared machine are noise; the ratios and PASS/MISS are the result.

Mask differences between the peers seen with llguidance 1.9.1, xgrammar 0.2.9 and
outlines-core 0.2.14 (so not every difference is a bug of ours): llguidance leaves out
tokens where the bytes ahead are forced (after ``+1`` in ``phone`` only ``" ("``, not
``" "``, though it accepts ``" "``; no partial UTF-8 token inside a forced CJK
character), refuses leading ``%ignore`` text, and allows some tokens that lead nowhere
(``_##`` at the start of ``config``); outlines-core leaves out some transitions (after
``816`` in ``float`` no ``.``/``e``/``E``); the EBNF twins allow leading whitespace, as
Lark's ``%ignore`` does.

Peers: ``pip install llguidance xgrammar outlines-core``; xgrammar requires torch (the
CPU build is enough: ``pip install torch==2.13.0`` here).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import math
import os
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import tokstream
from tokstream.tokenizer import Tokenizer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from encode import verdict

FIXTURES = Path(os.environ.get("TOKSTREAM_FIXTURES", Path(__file__).resolve().parents[2] / "shared" / "fixtures"))
LLAMA3 = FIXTURES / "hf" / "llama3_tokenizer.json"
TARGET_FIRST_MS = 20.0
TARGET_STEP_P50_US = 50.0
TARGET_STEP_P99_US = 5000.0
ENGINES = ("tokstream", "llguidance", "xgrammar", "outlines-core")


@dataclass(frozen=True)
class Workload:
    """One constraint in each engine's syntax: ``regex`` (all engines take the same
    pattern; classes are spelled out, as ``\\d`` is Unicode in some engines and ASCII in
    others) or ``lark`` (tokstream and llguidance) with its ``ebnf`` twin for xgrammar,
    written to the same language (``%ignore`` becomes ``ws`` between every two lexemes)."""

    name: str
    regex: str | None = None
    lark: str | None = None
    ebnf: str | None = None

    @property
    def kind(self) -> str:
        return "regex" if self.regex is not None else "grammar"


DATE = r"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"
REGEXES = (
    Workload("iso_date", regex=DATE),
    Workload(
        "date_time",
        regex=DATE + r"T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,6})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])",
    ),
    Workload("email", regex=r"[a-zA-Z0-9._%+-]+@[a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)*\.[a-zA-Z]{2,}"),
    Workload("integer", regex=r"-?(0|[1-9][0-9]*)"),
    Workload("float", regex=r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?"),
    Workload(
        "url",
        regex=r"https?://[a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)+(:[0-9]{1,5})?(/[a-zA-Z0-9._~%!$&'()*+,;=:@-]*)*(\?[a-zA-Z0-9._~%!$&'()*+,;=:@/?-]*)?",
    ),
    Workload("phone", regex=r"(\+1 )?\([0-9]{3}\) [0-9]{3}-[0-9]{4}"),
    Workload("quoted_string", regex=r'"([^"\\\x00-\x1f]|\\["\\bfnrt]|\\u[0-9a-fA-F]{4})*"'),
    Workload("uuid", regex=r"[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"),
    Workload(
        "ipv4",
        regex=r"((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])",
    ),
    Workload("cjk_city", regex=r"(北京|上海|广州|深圳)市"),
    Workload("hex_color", regex=r"#([0-9a-fA-F]{6}|[0-9a-fA-F]{3})"),
    Workload(
        "semver",
        regex=r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?",
    ),
    Workload("sentence", regex=r"[A-Z][a-z]*( [a-z]+){2,12}[.!?]"),
)

GRAMMARS = (
    Workload(
        "arithmetic",
        lark=r"""
start: expr
expr: expr "+" term | expr "-" term | term
term: term "*" factor | term "/" factor | factor
factor: NUMBER | "(" expr ")" | "-" factor
NUMBER: /[0-9]+(\.[0-9]+)?/
WS: /[ \t]+/
%ignore WS
""",
        ebnf=r"""
root ::= ws expr ws
expr ::= expr ws "+" ws term | expr ws "-" ws term | term
term ::= term ws "*" ws factor | term ws "/" ws factor | factor
factor ::= number | "(" ws expr ws ")" | "-" ws factor
number ::= [0-9]+ ("." [0-9]+)?
ws ::= [ \t]*
""",
    ),
    Workload(
        "nested_lists",
        lark=r"""
start: list
list: "[" (item ("," item)*)? "]"
item: INT | list
%import common.INT
%import common.WS_INLINE
%ignore WS_INLINE
""",
        ebnf=r"""
root ::= ws list ws
list ::= "[" ws (item (ws "," ws item)*)? ws "]"
item ::= [0-9]+ | list
ws ::= [ \t]*
""",
    ),
    Workload(
        "config",
        lark=r"""
start: line*
line: pair? NL
pair: KEY "=" value
value: STRING | NUMBER | BOOL
KEY: /[a-z_][a-z0-9_.]*/
STRING: /"[^"\n]*"/
NUMBER: /-?[0-9]+(\.[0-9]+)?/
BOOL: "true" | "false"
NL: /\n/
WS: /[ \t]+/
COMMENT: /#[^\n]*/
%ignore WS
%ignore COMMENT
""",
        # A comment runs to the end of the line, so it can only close a line or the input.
        ebnf=r"""
root ::= (ws (pair ws)? comment? "\n")* ws comment?
pair ::= key ws "=" ws value
value ::= "\"" [^"\n]* "\"" | "-"? [0-9]+ ("." [0-9]+)? | "true" | "false"
key ::= [a-z_] [a-z0-9_.]*
comment ::= "#" [^\n]*
ws ::= [ \t]*
""",
    ),
    Workload(
        "json",
        lark=r"""
start: value
value: object | array | STRING | NUMBER | "true" | "false" | "null"
object: "{" (pair ("," pair)*)? "}"
pair: STRING ":" value
array: "[" (value ("," value)*)? "]"
STRING: /"([^"\\\x00-\x1f]|\\["\\bfnrt]|\\u[0-9a-fA-F]{4})*"/
NUMBER: /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/
WS: /[ \t\n\r]+/
%ignore WS
""",
        ebnf=r"""
root ::= ws value ws
value ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ws (pair (ws "," ws pair)*)? ws "}"
pair ::= string ws ":" ws value
array ::= "[" ws (value (ws "," ws value)*)? ws "]"
string ::= "\"" ([^"\\\x00-\x1f] | "\\" ["\\bfnrt] | "\\u" [0-9a-fA-F]{4})* "\""
number ::= "-"? ("0" | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [+-]? [0-9]+)?
ws ::= [ \t\n\r]*
""",
    ),
)
QUICK = ("iso_date", "email", "quoted_string", "cjk_city", "arithmetic")
WARMUP = Workload("warmup", regex=r"warm[0-9]+")


class Skip(Exception):
    """An engine cannot run a workload (no syntax for it, or it refused the pattern)."""


@dataclass
class Vocab:
    """One tokenizer as every engine sees it."""

    name: str
    tok: Tokenizer
    eos: int
    table: list[bytes]  # holes (ids with no token) as b""
    specials: frozenset[int]  # includes the EOS
    n_words: int = 0
    valid: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))  # packed: ids < n_vocab
    pickable: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))  # packed: not special, not a hole
    byte_ids: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = len(self.table)
        self.n_words = (n + 31) // 32
        ok = np.zeros(self.n_words * 32, dtype=bool)
        ok[:n] = True
        self.valid = np.packbits(ok, bitorder="little").view(np.int32)
        ok[:n] = [bool(b) for b in self.table]
        ok[list(self.specials)] = False
        self.pickable = np.packbits(ok, bitorder="little").view(np.int32)
        self.byte_ids = {b[0]: i for i, b in enumerate(self.table) if len(b) == 1 and i not in self.specials}

    def encode_bytes(self, data: bytes) -> list[int]:
        """Bytes to ids for a peer that asks (llguidance): the valid UTF-8 prefix through
        our encoder, any undecodable rest as single-byte tokens (both vocabularies here
        hold all 256)."""
        try:
            return self.tok.encode(data.decode("utf-8"), disallowed_special=())
        except UnicodeDecodeError as e:
            head = self.tok.encode(data[: e.start].decode("utf-8"), disallowed_special=()) if e.start else []
            return head + [self.byte_ids[b] for b in data[e.start :]]


class Engine:
    """What the bench needs of a constraint engine. ``compile`` builds the start state
    (pristine, never advanced), ``fresh`` a walking state from it; ``fill`` writes row 0 of
    an int32 (1, n_words) bitmask; ``accept`` advances by one token."""

    name = ""
    version = ""

    def compile(self, w: Workload) -> Any:
        raise NotImplementedError

    def fresh(self, pristine: Any) -> Any:
        raise NotImplementedError

    def fill(self, state: Any, out: np.ndarray) -> None:
        raise NotImplementedError

    def accept(self, state: Any, token: int) -> bool:
        raise NotImplementedError


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "?"


class TokstreamEngine(Engine):
    name = "tokstream"

    def __init__(self, v: Vocab) -> None:
        missing = [n for n in ("regex_constraint", "grammar_constraint", "TokenMasker") if not hasattr(tokstream, n)]
        if missing:
            raise Skip(f"tokstream at {Path(tokstream.__file__).parent} has no {', '.join(missing)} yet")
        self.version = getattr(tokstream, "__version__", "?")
        self.v = v
        self.masker = tokstream.TokenMasker(v.tok)

    def compile(self, w: Workload) -> Any:
        # getattr: the bench predates the engine, and must still type-check without it.
        if w.regex is not None:
            return getattr(tokstream, "regex_constraint")(self.v.tok, w.regex, eos_id=self.v.eos)  # noqa: B009
        return getattr(tokstream, "grammar_constraint")(self.v.tok, w.lark, eos_id=self.v.eos)  # noqa: B009

    def fresh(self, pristine: Any) -> Any:
        return pristine.fork()

    def fill(self, state: Any, out: np.ndarray) -> None:
        self.masker.fill_bitmask(state, out, 0)

    def accept(self, state: Any, token: int) -> bool:
        return bool(state.accept(token))


class _WrappedVocab:
    """The duck type llguidance.TokenizerWrapper reads: our token bytes, specials, EOS and
    an encoder."""

    def __init__(self, v: Vocab) -> None:
        self.eos_token_id = v.eos
        self.bos_token_id = None
        self.tokens = v.table
        self.special_token_ids = sorted(v.specials)
        self._v = v

    def __call__(self, data: bytes) -> list[int]:
        return self._v.encode_bytes(data)


class LLGuidanceEngine(Engine):
    name = "llguidance"

    def __init__(self, v: Vocab) -> None:
        import llguidance
        import llguidance.numpy as llnp

        self.version = _version("llguidance")
        self.ll = llguidance
        self.fill_bitmask = llnp.fill_next_token_bitmask
        self.tokenizer = llguidance.LLTokenizer(llguidance.TokenizerWrapper(_WrappedVocab(v)))

    def compile(self, w: Workload) -> Any:
        m = self.ll.LLMatcher
        if w.regex is not None:
            grammar = m.grammar_from_regex(w.regex)
        elif w.lark is not None:
            grammar = m.grammar_from_lark(w.lark)
        else:
            raise Skip("no Lark text")
        matcher = m(self.tokenizer, grammar, log_level=0)
        if matcher.is_error():
            raise Skip(matcher.get_error().splitlines()[0])
        return matcher

    def fresh(self, pristine: Any) -> Any:
        return pristine.deep_copy()

    def fill(self, state: Any, out: np.ndarray) -> None:
        self.fill_bitmask(state, out, 0)

    def accept(self, state: Any, token: int) -> bool:
        return bool(state.consume_token(token))


class XGrammarEngine(Engine):
    name = "xgrammar"

    def __init__(self, v: Vocab) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import xgrammar as xgr
        self.version = _version("xgrammar")
        self.xgr = xgr
        # Specials and holes as empty tokens: xgrammar then treats them as special,
        # never allowed except the stop token.
        vocab = [b"" if i in v.specials else b for i, b in enumerate(v.table)]
        info = xgr.TokenizerInfo(vocab, xgr.VocabType.RAW, vocab_size=len(vocab), stop_token_ids=[v.eos])
        # Its own cache off, or a repeated pattern would time a lookup.
        self.threads = os.cpu_count() or 1
        self.compiler = xgr.GrammarCompiler(info, max_threads=self.threads, cache_enabled=False)

    def compile(self, w: Workload) -> Any:
        try:
            if w.regex is not None:
                compiled = self.compiler.compile_regex(w.regex)
            elif w.ebnf is not None:
                compiled = self.compiler.compile_grammar(w.ebnf)
            else:
                raise Skip("no EBNF translation")
        except Skip:
            raise
        except Exception as e:  # xgrammar raises RuntimeError and its own types
            raise Skip(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from e
        return (compiled, self.xgr.GrammarMatcher(compiled))

    def fresh(self, pristine: Any) -> Any:
        return self.xgr.GrammarMatcher(pristine[0])

    def fill(self, state: Any, out: np.ndarray) -> None:
        (state[1] if isinstance(state, tuple) else state).fill_next_token_bitmask(out, 0)

    def accept(self, state: Any, token: int) -> bool:
        return bool(state.accept_token(token))


class OutlinesEngine(Engine):
    name = "outlines-core"

    def __init__(self, v: Vocab) -> None:
        import outlines_core

        self.version = _version("outlines_core")
        self.oc = outlines_core
        by_bytes: dict[bytes, list[int]] = {}
        for i, b in enumerate(v.table):
            if b and i not in v.specials:
                by_bytes.setdefault(b, []).append(i)
        self.vocabulary = outlines_core.Vocabulary(v.eos, by_bytes)

    def compile(self, w: Workload) -> Any:
        if w.regex is None:
            raise Skip("regexes only")
        try:
            index = self.oc.Index(w.regex, self.vocabulary)
        except Exception as e:  # a ValueError for what its regex crate refuses
            raise Skip(f"{type(e).__name__}: {e}") from e
        return (index, self.oc.Guide(index))

    def fresh(self, pristine: Any) -> Any:
        return self.oc.Guide(pristine[0])

    def fill(self, state: Any, out: np.ndarray) -> None:
        guide = state[1] if isinstance(state, tuple) else state
        guide.write_mask_into(out.ctypes.data, out.size, 4)

    def accept(self, state: Any, token: int) -> bool:
        try:
            state.advance(token, return_tokens=False)
        except ValueError:
            return False
        return True


FACTORIES: dict[str, Callable[[Vocab], Engine]] = {
    "tokstream": TokstreamEngine,
    "llguidance": LLGuidanceEngine,
    "xgrammar": XGrammarEngine,
    "outlines-core": OutlinesEngine,
}


@dataclass
class Result:
    """One (engine, workload): times in ns, disagreements with the driver."""

    compile_ns: int = 0
    first_ns: int = 0
    steps: list[int] = field(default_factory=list)
    accepts: list[int] = field(default_factory=list)
    diff_steps: int = 0
    diff_ids: int = 0
    diff_example: str = ""
    refusals: int = 0

    @property
    def total_ms(self) -> float:
        return (self.compile_ns + self.first_ns) / 1e6


def pct(xs: list[int], q: float) -> float:
    """Percentile ``q`` (0..1) of ``xs`` in microseconds (nan when empty)."""
    if not xs:
        return math.nan
    s = sorted(xs)
    return s[min(len(s) - 1, int(len(s) * q))] / 1e3


def ids_of(packed: np.ndarray, n: int) -> np.ndarray:
    return np.flatnonzero(np.unpackbits(packed.view(np.uint8), bitorder="little")[:n])


def describe(v: Vocab, ids: np.ndarray) -> str:
    return ", ".join(f"{v.table[int(i)]!r}" if int(i) != v.eos else "EOS" for i in ids[:3]) + (
        f" (+{len(ids) - 3})" if len(ids) > 3 else ""
    )


def run_workload(
    v: Vocab, engines: list[Engine], w: Workload, args: argparse.Namespace, rng: np.random.Generator
) -> dict[str, Result]:
    """Compile, first mask, and the shared random walks of one workload."""
    clock = time.perf_counter_ns
    n = len(v.table)
    results: dict[str, Result] = {}
    pristine: dict[str, Any] = {}
    live_engines: list[Engine] = []
    for e in engines:
        out = np.zeros((1, v.n_words), dtype=np.int32)
        try:
            t0 = clock()
            p = e.compile(w)
            t1 = clock()
            e.fill(p, out)
            t2 = clock()
        except Skip as s:
            print(f"  {w.kind:<7} {w.name:<14} {e.name:<13} skipped: {s}", flush=True)
            continue
        except Exception as s:  # an engine's own error type: report, go on
            print(f"  {w.kind:<7} {w.name:<14} {e.name:<13} skipped: {type(s).__name__}: {s}", flush=True)
            continue
        results[e.name] = Result(compile_ns=t1 - t0, first_ns=t2 - t1)
        pristine[e.name] = p
        live_engines.append(e)
    if not live_engines:
        return results
    driver = live_engines[0]
    bufs = {e.name: np.zeros((1, v.n_words), dtype=np.int32) for e in live_engines}
    shown = 0
    for _ in range(args.walks):
        states = {e.name: e.fresh(pristine[e.name]) for e in live_engines}
        walking = list(live_engines)
        prefix = b""
        for _ in range(args.steps):
            for e in walking:
                t0 = clock()
                e.fill(states[e.name], bufs[e.name])
                results[e.name].steps.append(clock() - t0)
                np.bitwise_and(bufs[e.name][0], v.valid, out=bufs[e.name][0])  # bits past n_vocab: not compared
            ref = bufs[driver.name][0]
            choice = ref & v.pickable
            for e in walking[1:]:
                got = bufs[e.name][0]
                if not np.array_equal(got, ref):
                    r = results[e.name]
                    only_ref, only_got = ids_of(ref & ~got, n), ids_of(got & ~ref, n)
                    r.diff_steps += 1
                    r.diff_ids += len(only_ref) + len(only_got)
                    if not r.diff_example:
                        r.diff_example = f"after {prefix!r}: only {driver.name}: [{describe(v, only_ref)}]; only {e.name}: [{describe(v, only_got)}]"
                if args.path == "common":
                    choice = choice & got
            allowed = ids_of(choice, n)
            if len(allowed) == 0:
                break
            token = int(rng.choice(allowed))
            for e in list(walking):
                t0 = clock()
                ok = e.accept(states[e.name], token)
                results[e.name].accepts.append(clock() - t0)
                if not ok:
                    results[e.name].refusals += 1
                    walking.remove(e)
                    if shown < 3:
                        shown += 1
                        print(
                            f"  disagreement: {e.name} refused {v.table[token]!r} (id {token}) after {prefix!r}, which {driver.name} allowed",
                            flush=True,
                        )
            prefix += v.table[token]
            if driver not in walking:
                break
    return results


def print_workload(w: Workload, results: dict[str, Result], ref_name: str) -> None:
    ref = results.get(ref_name)
    for name, r in results.items():
        ratio = ""
        if ref is not None and name != ref_name:
            ratio = (
                f"  x{r.total_ms / ref.total_ms:5.2f} / x{pct(r.steps, 0.5) / pct(ref.steps, 0.5):5.2f} vs {ref_name}"
            )
        print(
            f"  {w.kind:<7} {w.name:<14} {name:<13} compile {r.compile_ns / 1e6:8.2f} ms  first mask {r.first_ns / 1e6:7.2f} ms"
            f"  = {r.total_ms:8.2f} ms | step p50 {pct(r.steps, 0.5):8.1f} us p99 {pct(r.steps, 0.99):8.1f} us"
            f" (n={len(r.steps)})  accept p50 {pct(r.accepts, 0.5):7.1f} us{ratio}",
            flush=True,
        )
        if r.diff_steps:
            print(f"    {name}: mask differs at {r.diff_steps} steps ({r.diff_ids} ids); first {r.diff_example}")
        if r.refusals:
            print(f"    {name}: refused the path's token in {r.refusals} walks")


def geomean(xs: list[float]) -> float:
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else math.nan


def summarize(v: Vocab, kind: str, per_workload: dict[str, dict[str, Result]], names: list[str]) -> list[bool]:
    """The kind's p50s over the workloads, ratio tables, and tokstream's targets."""
    if not per_workload:
        return []
    print(f"# {v.name} {kind} ({len(per_workload)} workloads):")
    for name in names:
        rs = [r[name] for r in per_workload.values() if name in r]
        if not rs:
            continue
        totals = sorted(r.total_ms for r in rs)
        steps = [s for r in rs for s in r.steps]
        diffs = sum(r.diff_steps for r in rs)
        refused = sum(r.refusals for r in rs)
        print(
            f"  {name:<13} compile+first mask p50 {totals[len(totals) // 2]:8.2f} ms max {totals[-1]:8.2f} ms over {len(rs)}"
            f" | step p50 {pct(steps, 0.5):8.1f} us p99 {pct(steps, 0.99):8.1f} us (n={len(steps)})"
            f" | disagreements: {diffs} mask steps, {refused} refusals"
        )
    present = [n for n in names if any(n in r for r in per_workload.values())]
    if len(present) > 1:
        print("  ratios row/column, geometric mean over shared workloads (compile+first mask ; step p50):")
        print("  " + " " * 13 + "".join(f"{c:>22}" for c in present))
        for a in present:
            cells = []
            for b in present:
                shared = [r for r in per_workload.values() if a in r and b in r]
                tot = geomean([r[a].total_ms / r[b].total_ms for r in shared])
                st = geomean([pct(r[a].steps, 0.5) / pct(r[b].steps, 0.5) for r in shared])
                cells.append(f"{tot:9.2f} ; {st:9.2f}")
            print(f"  {a:<13}" + "".join(f"{c:>22}" for c in cells))
    results: list[bool] = []
    ours = [r["tokstream"] for r in per_workload.values() if "tokstream" in r]
    if ours:
        if kind == "regex":
            totals = sorted(r.total_ms for r in ours)
            ok = totals[len(totals) // 2] <= TARGET_FIRST_MS
            results.append(ok)
            print(
                f"  target tokstream compile+first mask p50 {totals[len(totals) // 2]:.2f} ms <= {TARGET_FIRST_MS:.0f} ms  {verdict(ok)}"
            )
        steps = [s for r in ours for s in r.steps]
        for q, target in ((0.5, TARGET_STEP_P50_US), (0.99, TARGET_STEP_P99_US)):
            ok = pct(steps, q) <= target
            results.append(ok)
            print(f"  target tokstream step p{int(q * 100)} {pct(steps, q):.1f} us <= {target:.0f} us  {verdict(ok)}")
    return results


def load_vocab(name: str) -> Vocab | None:
    if name == "o200k":
        tok = tokstream.load("o200k_base")
        eos_text = "<|endoftext|>"
    else:
        if not LLAMA3.is_file():
            print(f"skipping llama3: {LLAMA3} not found (set TOKSTREAM_FIXTURES)")
            return None
        tok = Tokenizer.from_file(LLAMA3)
        eos_text = "<|eot_id|>"
    vocab = tok.vocab
    eos = vocab.table.index(eos_text.encode())
    table = [b if b is not None else b"" for b in vocab.table]
    return Vocab(tok.name or name, tok, eos, table, frozenset(vocab.special_ids) | {eos})


def bench_tokenizer(v: Vocab, args: argparse.Namespace, workloads: list[Workload]) -> list[bool]:
    engines: list[Engine] = []
    notes = []
    for name in args.engines:
        t0 = time.perf_counter()
        try:
            e = FACTORIES[name](v)
        except Skip as s:
            print(f"# {name}: not run: {s}", flush=True)
            continue
        except Exception as s:  # ImportError and whatever a peer's constructor raises
            print(f"# {name}: not run: {type(s).__name__}: {s}", flush=True)
            continue
        built = time.perf_counter() - t0
        t0 = time.perf_counter()
        try:  # one compile + mask per engine before the timing: lazy imports, first-use tables
            e.fill(e.compile(WARMUP), np.zeros((1, v.n_words), dtype=np.int32))
        except Exception as s:
            print(f"# {name}: warm-up compile failed: {type(s).__name__}: {s}")
        notes.append(
            f"{name} {e.version} (tokenizer {built * 1e3:.0f} ms, warm-up {(time.perf_counter() - t0) * 1e3:.0f} ms)"
        )
        engines.append(e)
    print(
        f"# {v.name}: n_vocab={len(v.table)}, EOS {v.table[v.eos]!r} ({v.eos}), {len(v.specials)} special ids refused; "
        + "; ".join(notes),
        flush=True,
    )
    if not engines:
        return []
    ref_name = "llguidance" if any(e.name == "llguidance" for e in engines) else engines[0].name
    print(
        f"# driver: {engines[0].name}; path: {args.path}; ratios on each line: compile+first mask / step p50 vs {ref_name}"
    )
    rng = np.random.default_rng(args.seed)
    by_kind: dict[str, dict[str, dict[str, Result]]] = {"regex": {}, "grammar": {}}
    for w in workloads:
        res = run_workload(v, engines, w, args, rng)
        print_workload(w, res, ref_name)
        if res:
            by_kind[w.kind][w.name] = res
    names = [e.name for e in engines]
    return summarize(v, "regex", by_kind["regex"], names) + summarize(v, "grammar", by_kind["grammar"], names)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regex / grammar constraints: tokstream against its peers.")
    parser.add_argument("--tokenizers", nargs="+", choices=("o200k", "llama3"), default=["o200k", "llama3"])
    parser.add_argument("--engines", nargs="+", choices=ENGINES, default=list(ENGINES))
    parser.add_argument("--walks", type=int, default=None, help="random walks per workload (default 5; --quick 2)")
    parser.add_argument("--steps", type=int, default=None, help="tokens per walk at most (default 40; --quick 15)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--path",
        choices=("common", "driver"),
        default="common",
        help="pick each token among those all engines allow (default) or the driver allows",
    )
    parser.add_argument("--workloads", nargs="+", help="names to run (default: all)")
    parser.add_argument("--quick", action="store_true", help=f"smoke run: {', '.join(QUICK)}; fewer, shorter walks")
    args = parser.parse_args(argv)
    args.walks = args.walks if args.walks is not None else (2 if args.quick else 5)
    args.steps = args.steps if args.steps is not None else (15 if args.quick else 40)
    # The driver comes first: tokstream when it runs, else the next engine asked for.
    args.engines = sorted(dict.fromkeys(args.engines), key=ENGINES.index)
    workloads = list(REGEXES + GRAMMARS)
    wanted = args.workloads or (QUICK if args.quick else None)
    if wanted:
        unknown = set(wanted) - {w.name for w in workloads}
        if unknown:
            parser.error(f"unknown workloads: {', '.join(sorted(unknown))}")
        workloads = [w for w in workloads if w.name in wanted]
    print(
        f"# python {sys.version.split()[0]}, numpy {np.__version__}, tokstream from {Path(tokstream.__file__).parent}"
    )
    results: list[bool] = []
    for name in args.tokenizers:
        v = load_vocab(name)
        if v is not None:
            results += bench_tokenizer(v, args, workloads)
    if results:
        print(f"# tokstream targets met: {sum(results)}/{len(results)}  {verdict(all(results))}")
    else:
        print("# tokstream targets: not measured (tokstream did not run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

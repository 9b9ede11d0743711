"""Regex, grammar and JSON Schema constraints: tokstream against llguidance, xgrammar and
outlines-core.

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

**The JSON part** (``--part json`` alone; ``--json-limit N`` schemas spread evenly over
the file, ``--json-instances K`` per schema, default 3): the JSONSchemaBench sample
(``jsonschemabench/schemas_sample.jsonl.xz`` in the fixtures, 1,281 schemas: id, split,
schema; skipped with a message when absent) on Llama 3 only. Every engine compiles each
schema as it is: tokstream ``json_schema_constraint`` (default whitespace), llguidance
``grammar_from_json_schema`` (``whitespace_flexible``, not ``lenient``), xgrammar
``compile_json_schema`` (``any_whitespace``, ``strict_mode=False``: unlisted properties
allowed where the schema allows them, as JSON Schema says), outlines-core
``build_regex_from_schema`` (its ``[ ]?`` whitespace) + ``Index``. A compile error is a
refusal of that schema. Limits: tokstream's compile and the instance generation stop
after ``--json-timeout`` s (15; SIGALRM); outlines-core's Index is built in a worker
process killed after ``OUTLINES_TIMEOUT_S`` (5 s; its Index takes seconds on many
schemas and minutes on some) and not tried for regexes over ``OUTLINES_MAX_REGEX``
characters -- both count as refusals. **TTFM** (time to first mask) is compile + the
start state's bitmask (outlines-core: regex + Index time inside the worker). Valid
instances come from hypothesis-jsonschema (derandomized, generation phase only, the K
largest distinct of 2K draws, each checked by ``jsonschema``; its object strategy is
adapted to the newer ``many`` API of Hypothesis), keys put in ``properties`` order (the
order tokstream and llguidance require; best effort through ``$ref`` and combinators),
serialized by ``json.dumps(..., ensure_ascii=False)`` (raw UTF-8 as a model writes it;
``--json-ascii`` for ``\\uXXXX`` escapes, which llguidance and outlines-core refuse for
non-control characters) and encoded by Llama 3; every engine then walks the tokens and
EOS: **TBM** (time per bitmask) before each token, then the token. An engine that
refuses a token leaves that instance and is printed with the schema id. Printed:
coverage per engine and tokstream vs llguidance on the same schemas, TTFM and TBM
p50/p90/p99, geometric-mean ratios over shared schemas, tokstream's refused keywords and
the peers' error heads, the refused valid instances, and the targets: tokstream TBM p50
<= 50 us and p99 <= 5 ms, TTFM p50 <= 100 ms, coverage >= llguidance's. Progress goes to
stderr. xgrammar's TTFM (about 1-2 s per schema here on two cores) and outlines-core's
Index make a full run long; ``--engines tokstream llguidance`` is the quick comparison.

Peers: ``pip install llguidance xgrammar outlines-core``; xgrammar requires torch (the
CPU build is enough: ``pip install torch==2.13.0`` here). The JSON part needs
``pip install hypothesis-jsonschema jsonschema``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import json
import lzma
import math
import multiprocessing
import os
import pickle
import re
import signal
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
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
JSON_SAMPLE = FIXTURES / "jsonschemabench" / "schemas_sample.jsonl.xz"
TARGET_TTFM_MS = 100.0
#: Issue 28's targets against llguidance in the same run (ours / theirs at most this),
#: and the floor below which the engine may not be called done (10x on each).
RATIO_TARGETS = (("TTFM p50", 3.0), ("TTFM p99", 3.0), ("TBM p50", 1.0), ("TBM p99", 2.0))
RATIO_FLOOR = 10.0
#: Per-schema limits: tokstream's compile and the instance generation (SIGALRM;
#: ``--json-timeout``), outlines-core's Index (a worker process, killed; its Index
#: takes seconds on many schemas, minutes on some).
JSON_TIMEOUT_S = 15.0
OUTLINES_TIMEOUT_S = 5.0
OUTLINES_MAX_REGEX = 200_000
OUTLINES_MAX_BYTES = 8 << 30
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
    schema: Any = None  # a JSON Schema (the JSON part): every engine takes it as it is

    @property
    def kind(self) -> str:
        return "regex" if self.regex is not None else "json" if self.schema is not None else "grammar"


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


class Timeout(BaseException):
    """A Python-level step ran past its deadline (a BaseException: no library's
    ``except Exception`` swallows it)."""


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise ``Timeout`` in the block after ``seconds`` (SIGALRM: main thread, Python
    code only -- native code is interrupted at its next return to Python)."""

    def ring(signum: int, frame: object) -> None:
        raise Timeout(f"timeout > {seconds:g} s")

    old = signal.signal(signal.SIGALRM, ring)
    # Ring again every 0.5 s: an exception raised inside a gc callback or a
    # __del__ is ignored by Python, and a one-shot alarm would then never stop the block.
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.5)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _outlines_worker(conn: Any, eos: int, by_bytes: dict[bytes, list[int]]) -> None:
    """``OutlinesWorker``'s process: Index builds on request, pickled back."""
    import resource

    import outlines_core

    resource.setrlimit(resource.RLIMIT_AS, (OUTLINES_MAX_BYTES, OUTLINES_MAX_BYTES))
    vocabulary = outlines_core.Vocabulary(eos, by_bytes)
    conn.send("ready")
    while True:
        regex = conn.recv()
        try:
            t0 = time.perf_counter_ns()
            index = outlines_core.Index(regex, vocabulary)
            ns = time.perf_counter_ns() - t0
            conn.send((True, pickle.dumps(index), ns))
        except BaseException as e:
            conn.send((False, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", 0))


class OutlinesWorker:
    """A process that builds outlines-core Indexes, killed (and replaced on the next
    call) when one runs past its timeout."""

    def __init__(self, eos: int, by_bytes: dict[bytes, list[int]]) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_outlines_worker, args=(child, eos, by_bytes), daemon=True)
        self.proc.start()
        assert self.conn.recv() == "ready"

    def build(self, regex: str, timeout: float) -> tuple[bool, Any, int]:
        self.conn.send(regex)
        try:
            if self.conn.poll(timeout):
                ok, payload, ns = self.conn.recv()
                return ok, payload, ns
        except EOFError:
            self.close()
            return False, "crashed (the worker died: memory limit?)", 0
        self.close()
        return False, f"timeout > {timeout:g} s", 0

    def close(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join()


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
        self.timeout = JSON_TIMEOUT_S

    def compile(self, w: Workload) -> Any:
        # getattr: the bench predates the engine, and must still type-check without it.
        if w.regex is not None:
            return getattr(tokstream, "regex_constraint")(self.v.tok, w.regex, eos_id=self.v.eos)  # noqa: B009
        if w.schema is not None:
            from tokstream.constrain.json_schema import json_schema_constraint

            with deadline(self.timeout):
                return json_schema_constraint(self.v.tok, w.schema, eos_id=self.v.eos)
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
        elif w.schema is not None:
            try:  # flexible whitespace, as ours; unknown keywords refused (not "lenient")
                grammar = m.grammar_from_json_schema(w.schema, defaults={"whitespace_flexible": True})
            except Exception as e:
                raise Skip(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from e
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
            elif w.schema is not None:
                # strict_mode=False: properties the schema does not list are allowed where
                # the schema allows them (JSON Schema's default, as ours and llguidance's).
                compiled = self.compiler.compile_json_schema(
                    json.dumps(w.schema), any_whitespace=True, strict_mode=False
                )
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
        self.eos = v.eos
        self.by_bytes = by_bytes
        self.worker: OutlinesWorker | None = None
        self.compile_ns: int | None = None

    def compile(self, w: Workload) -> Any:
        self.compile_ns = None
        if w.schema is not None:
            return self.compile_schema(w.schema)
        if w.regex is None:
            raise Skip("regexes only")
        try:
            index = self.oc.Index(w.regex, self.vocabulary)
        except Exception as e:  # a ValueError for what its regex crate refuses
            raise Skip(f"{type(e).__name__}: {e}") from e
        return (index, self.oc.Guide(index))

    def compile_schema(self, schema: Any) -> Any:
        """The schema's regex (outlines' default whitespace, ``[ ]?``), then its Index,
        built in a worker process: an Index of a large regex can take minutes and GBs,
        and native code cannot be interrupted here. Over ``OUTLINES_MAX_REGEX``
        characters or ``OUTLINES_TIMEOUT_S`` seconds it counts as refused. The compile time
        is the regex plus the worker's own Index time (the transfer back is not
        counted)."""
        from outlines_core.json_schema import build_regex_from_schema

        t0 = time.perf_counter_ns()
        try:
            regex = build_regex_from_schema(json.dumps(schema))
        except Exception as e:
            raise Skip(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from e
        regex_ns = time.perf_counter_ns() - t0
        if len(regex) > OUTLINES_MAX_REGEX:
            raise Skip(f"regex of {len(regex)} characters > {OUTLINES_MAX_REGEX} (not built)")
        if self.worker is None:
            self.worker = OutlinesWorker(self.eos, self.by_bytes)
        ok, payload, index_ns = self.worker.build(regex, OUTLINES_TIMEOUT_S)
        if not ok:
            if payload.startswith("timeout"):
                self.worker = None  # killed
            raise Skip(payload)
        index = pickle.loads(payload)
        self.compile_ns = regex_ns + index_ns
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


def compile_engines(
    v: Vocab, engines: list[Engine], w: Workload
) -> tuple[dict[str, Result], dict[str, Any], list[Engine], dict[str, BaseException]]:
    """Compile and first mask of one workload per engine: results, the pristine start
    states, the engines that compiled, and the error of each that did not (``Skip``:
    the engine refused; another type: the engine's own error; ``Timeout``)."""
    clock = time.perf_counter_ns
    results: dict[str, Result] = {}
    pristine: dict[str, Any] = {}
    live_engines: list[Engine] = []
    errors: dict[str, BaseException] = {}
    for e in engines:
        out = np.zeros((1, v.n_words), dtype=np.int32)
        try:
            t0 = clock()
            p = e.compile(w)
            t1 = clock()
            e.fill(p, out)
            t2 = clock()
        except (Exception, Timeout) as s:  # Skip, or an engine's own error type: report, go on
            errors[e.name] = s
            continue
        # An engine that builds elsewhere (outlines-core's worker) reports its own time.
        own = getattr(e, "compile_ns", None)
        results[e.name] = Result(compile_ns=own if own is not None else t1 - t0, first_ns=t2 - t1)
        pristine[e.name] = p
        live_engines.append(e)
    return results, pristine, live_engines, errors


def fill_masks(
    v: Vocab, walking: list[Engine], states: dict[str, Any], bufs: dict[str, np.ndarray], results: dict[str, Result]
) -> None:
    """One timed bitmask per engine still walking (bits past n_vocab cleared)."""
    clock = time.perf_counter_ns
    for e in walking:
        t0 = clock()
        e.fill(states[e.name], bufs[e.name])
        results[e.name].steps.append(clock() - t0)
        np.bitwise_and(bufs[e.name][0], v.valid, out=bufs[e.name][0])


def advance(walking: list[Engine], states: dict[str, Any], token: int, results: dict[str, Result]) -> list[Engine]:
    """Every engine still walking takes ``token`` (timed); those that refuse it leave
    ``walking`` and are returned."""
    clock = time.perf_counter_ns
    refused = []
    for e in list(walking):
        t0 = clock()
        ok = e.accept(states[e.name], token)
        results[e.name].accepts.append(clock() - t0)
        if not ok:
            results[e.name].refusals += 1
            walking.remove(e)
            refused.append(e)
    return refused


def run_workload(
    v: Vocab, engines: list[Engine], w: Workload, args: argparse.Namespace, rng: np.random.Generator
) -> dict[str, Result]:
    """Compile, first mask, and the shared random walks of one workload."""
    n = len(v.table)
    results, pristine, live_engines, errors = compile_engines(v, engines, w)
    for name, s in errors.items():
        why = s if isinstance(s, Skip) else f"{type(s).__name__}: {s}"
        print(f"  {w.kind:<7} {w.name:<14} {name:<13} skipped: {why}", flush=True)
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
            fill_masks(v, walking, states, bufs, results)
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
            for e in advance(walking, states, token, results):
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


def print_ratios(per_workload: dict[str, dict[str, Result]], names: list[str], over: str, what: str) -> None:
    """Row / column ratios of compile+first mask and step p50, each the geometric mean
    over the workloads both engines ran."""
    present = [n for n in names if any(n in r for r in per_workload.values())]
    if len(present) < 2:
        return
    print(f"  ratios row/column, geometric mean over shared {over} ({what}):")
    print("  " + " " * 13 + "".join(f"{c:>22}" for c in present))
    for a in present:
        cells = []
        for b in present:
            shared = [r for r in per_workload.values() if a in r and b in r]
            tot = geomean([r[a].total_ms / r[b].total_ms for r in shared])
            st = geomean([pct(r[a].steps, 0.5) / pct(r[b].steps, 0.5) for r in shared])
            cells.append(f"{tot:9.2f} ; {st:9.2f}")
        print(f"  {a:<13}" + "".join(f"{c:>22}" for c in cells))


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
    print_ratios(per_workload, names, "workloads", "compile+first mask ; step p50")
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


def make_engines(v: Vocab, args: argparse.Namespace, warmups: tuple[Workload, ...] = (WARMUP,)) -> list[Engine]:
    """The engines asked for that construct on ``v``, each warmed up (one compile +
    mask of each of ``warmups``: lazy imports, first-use tables), with a header line."""
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
        for w in warmups:
            try:
                e.fill(e.compile(w), np.zeros((1, v.n_words), dtype=np.int32))
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
    return engines


def bench_tokenizer(v: Vocab, args: argparse.Namespace, workloads: list[Workload]) -> list[bool]:
    engines = make_engines(v, args)
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


# ---------------------------------------------------------------------- the JSON part

JSON_WARMUP = Workload("warmup_json", schema={"type": "object", "properties": {"w": {"type": "integer"}}})
MAX_INSTANCE_TOKENS = 4096


def load_schemas(limit: int | None) -> list[dict[str, Any]] | None:
    """The JSONSchemaBench sample's rows (id, split, schema); ``limit`` of them spread
    evenly over the file (its rows come grouped by split)."""
    if not JSON_SAMPLE.is_file():
        print(f"skipping json: {JSON_SAMPLE} not found (set TOKSTREAM_FIXTURES)")
        return None
    with lzma.open(JSON_SAMPLE, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    if limit is not None and limit < len(rows):
        rows = [rows[i * len(rows) // limit] for i in range(limit)]
    return rows


class _LegacyMany:
    """hypothesis-jsonschema 0.23 drives ``cu.many`` with ``.more()`` / ``.reject()``;
    newer Hypothesis made ``many`` a context manager iterated with ``for``. This adapts
    the one call site (``from_object_schema``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from hypothesis.internal.conjecture.utils import many

        self._many = many(*args, **kwargs)
        self._it: Iterator[None] | None = None

    def more(self) -> bool:
        if self._it is None:
            self._many.__enter__()
            self._it = iter(self._many)
        try:
            next(self._it)
        except StopIteration:
            self._many.__exit__(None, None, None)
            return False
        return True

    def reject(self, why: str | None = None) -> None:
        self._many.reject(why)


def instance_maker() -> Callable[[Any, int], list[Any]]:
    """``make(schema, k)``: up to ``k`` distinct valid instances of ``schema`` drawn by
    hypothesis-jsonschema, deterministically (derandomized, no database, generation
    phase only), the largest of ``2k`` draws; each checked with ``jsonschema``."""
    import types

    import hypothesis
    import hypothesis.internal.conjecture.utils as cu
    import hypothesis_jsonschema._from_schema as from_schema_module
    import jsonschema
    from hypothesis_jsonschema import from_schema

    if not hasattr(cu.many, "more"):
        from_schema_module.cu = types.SimpleNamespace(many=_LegacyMany)  # type: ignore[assignment,attr-defined]

    def make(schema: Any, k: int) -> list[Any]:
        drawn: list[Any] = []

        @hypothesis.settings(
            database=None,
            derandomize=True,
            max_examples=2 * k,
            phases=[hypothesis.Phase.generate],
            deadline=None,
            suppress_health_check=list(hypothesis.HealthCheck),
        )
        @hypothesis.given(from_schema(schema))
        def collect(x: Any) -> None:
            drawn.append(x)

        collect()
        validator = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)(schema)
        texts: dict[str, Any] = {}
        for x in drawn:
            text = json.dumps(x)
            if text not in texts and validator.is_valid(x):
                texts[text] = x
        return [texts[t] for t in sorted(texts, key=len, reverse=True)[:k]]

    return make


def _resolve(node: Any, root: Any, seen: int = 0) -> Any:
    """``node`` with local ``$ref``s followed (best effort; None when unresolvable)."""
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and seen < 32:
        ref = node["$ref"]
        if not ref.startswith("#"):
            return None
        target = root
        for part in [p for p in ref[1:].split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            try:
                target = target[int(part)] if isinstance(target, list) else target[part]
            except (KeyError, IndexError, ValueError, TypeError):
                return None
        node, seen = target, seen + 1
    return node


def _branches(node: Any, root: Any, depth: int = 0) -> list[dict[str, Any]]:
    """``node`` and the subschemas of its ``allOf`` / ``anyOf`` / ``oneOf``, resolved."""
    node = _resolve(node, root)
    if not isinstance(node, dict) or depth > 8:
        return []
    out = [node]
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in node.get(key, []) if isinstance(node.get(key), list) else []:
            out += _branches(sub, root, depth + 1)
    return out


def in_schema_order(value: Any, node: Any, root: Any, depth: int = 0) -> Any:
    """``value`` with each object's keys in its schema's ``properties`` order, then the
    others as drawn: the order tokstream and llguidance produce (and require). Best
    effort through ``$ref`` and the combinators."""
    if depth > 64:
        return value
    nodes = _branches(node, root)
    if isinstance(value, dict):
        order: dict[str, Any] = {}
        for n in nodes:
            props = n.get("properties")
            if isinstance(props, dict):
                for k, sub in props.items():
                    order.setdefault(k, sub)
        keys = [k for k in order if k in value] + [k for k in value if k not in order]
        extra = next(
            (n["additionalProperties"] for n in nodes if isinstance(n.get("additionalProperties"), dict)), None
        )
        return {k: in_schema_order(value[k], order.get(k, extra), root, depth + 1) for k in keys}
    if isinstance(value, list):
        out = []
        for i, x in enumerate(value):
            sub = None
            for n in nodes:
                prefix = n.get("prefixItems", n.get("items") if isinstance(n.get("items"), list) else None)
                if isinstance(prefix, list) and i < len(prefix):
                    sub = prefix[i]
                elif isinstance(n.get("items"), dict):
                    sub = n["items"]
                elif isinstance(n.get("additionalItems"), dict):
                    sub = n["additionalItems"]
                if sub is not None:
                    break
            out.append(in_schema_order(x, sub, root, depth + 1))
        return out
    return value


@dataclass
class SchemaRun:
    """One schema of the JSON part: per-engine results and errors, its instances."""

    id: str
    results: dict[str, Result]
    errors: dict[str, BaseException]
    instances: int = 0
    gen_error: str = ""
    refused: list[tuple[str, int, bytes, int]] = field(default_factory=list)  # engine, instance, prefix, token
    mask_misses: Counter[str] = field(default_factory=Counter)  # a token accepted but not in the mask


def run_schema(v: Vocab, engines: list[Engine], row: dict[str, Any], args: argparse.Namespace, make: Any) -> SchemaRun:
    """Compile + first mask per engine (TTFM), then walk each instance's tokens through
    every engine that compiled: one timed bitmask per engine per token (TBM), then the
    token; EOS after the last."""
    w = Workload(row["id"], schema=row["schema"])
    results, pristine, live, errors = compile_engines(v, engines, w)
    run = SchemaRun(row["id"], results, errors)
    if not live:
        return run
    try:
        with deadline(args.json_timeout):
            drawn = make(row["schema"], args.json_instances)
    except (Exception, Timeout) as err:
        run.gen_error = f"{type(err).__name__}: {str(err).splitlines()[0][:80] if str(err) else ''}"
        return run
    bufs = {e.name: np.zeros((1, v.n_words), dtype=np.int32) for e in live}
    for i, x in enumerate(drawn):
        text = json.dumps(in_schema_order(x, row["schema"], row["schema"]), ensure_ascii=args.json_ascii)
        tokens = v.tok.encode(text, disallowed_special=())[:MAX_INSTANCE_TOKENS] + [v.eos]
        run.instances += 1
        states = {e.name: e.fresh(pristine[e.name]) for e in live}
        walking = list(live)
        prefix = b""
        for token in tokens:
            fill_masks(v, walking, states, bufs, results)
            outside = {e.name for e in walking if not (int(bufs[e.name][0][token >> 5]) >> (token & 31)) & 1}
            for e in advance(walking, states, token, results):
                run.refused.append((e.name, i, prefix, token))
                outside.discard(e.name)
            run.mask_misses.update(outside)
            if not walking:
                break
            prefix += v.table[token]
    return run


def error_head(e: BaseException) -> str:
    """A refusal's group: tokstream's keyword, else the error's first words (digits
    folded)."""
    from tokstream.errors import UnsupportedSchemaError

    if isinstance(e, UnsupportedSchemaError):
        return f"keyword {e.keyword}" if e.keyword else f"schema: {re.sub(r'[0-9]+', 'N', e.message)[:60]}"
    text = str(e).splitlines()[0] if str(e) else ""
    kind = "" if isinstance(e, Skip) else f"{type(e).__name__}: "
    return kind + re.sub(r"[0-9]+", "N", text)[:70]


def _pcts(xs: list[float], unit: str) -> str:
    s = sorted(xs)
    if not s:
        return "n=0"
    q = [s[min(len(s) - 1, int(len(s) * p))] for p in (0.5, 0.9, 0.99)]
    return f"p50 {q[0]:9.2f} p90 {q[1]:9.2f} p99 {q[2]:9.2f} {unit} (n={len(s)})"


def summarize_json(v: Vocab, runs: list[SchemaRun], names: list[str]) -> list[bool]:
    """Coverage, TTFM and TBM per engine, ratios, refusals, and tokstream's targets."""
    total = len(runs)
    print(f"# {v.name} json ({total} schemas of {JSON_SAMPLE.name}):")
    compiled = {n: {r.id for r in runs if n in r.results} for n in names}
    for n in names:
        steps = [s for r in runs if n in r.results for s in r.results[n].steps]
        ttfm = [r.results[n].total_ms for r in runs if n in r.results]
        print(
            f"  {n:<13} compiled {len(compiled[n]):5d}/{total} ({100 * len(compiled[n]) / max(total, 1):5.1f}%)"
            f" | TTFM {_pcts(ttfm, 'ms')} | TBM {_pcts([s / 1e3 for s in steps], 'us')}"
        )
    if "tokstream" in names and "llguidance" in names:
        ours, theirs = compiled["tokstream"], compiled["llguidance"]
        every = {r.id for r in runs}
        print(
            f"  tokstream vs llguidance: both {len(ours & theirs)}, only tokstream {len(ours - theirs)},"
            f" only llguidance {len(theirs - ours)}, neither {len(every - ours - theirs)}"
        )
        only = [r for r in runs if r.id in theirs - ours]
        for r in only[:12]:
            print(f"    only llguidance: {r.id}: {error_head(r.errors['tokstream'])}")
        if len(only) > 12:
            print(f"    ... and {len(only) - 12} more")
    per = {r.id: r.results for r in runs if r.results}
    print_ratios(per, names, "schemas", "TTFM ; TBM p50")
    ours_runs = [r for r in runs if "tokstream" in r.results]
    if ours_runs:
        slow = sorted(ours_runs, key=lambda r: -r.results["tokstream"].total_ms)[:5]
        print(
            "  tokstream slowest TTFM: " + "; ".join(f"{r.id} {r.results['tokstream'].total_ms:.0f} ms" for r in slow)
        )
        walked_ours = [r for r in ours_runs if r.results["tokstream"].steps]
        slow = sorted(walked_ours, key=lambda r: -pct(r.results["tokstream"].steps, 0.5))[:5]
        print(
            "  tokstream slowest TBM p50: "
            + "; ".join(
                f"{r.id} {pct(r.results['tokstream'].steps, 0.5):.0f} us (max {max(r.results['tokstream'].steps) / 1e3:.0f})"
                for r in slow
            )
        )
    for n in names:
        refused = Counter(error_head(r.errors[n]) for r in runs if n in r.errors)
        if refused:
            print(f"  {n} refused {sum(refused.values())} schemas:")
            for head, c in refused.most_common(12 if n in ("tokstream", "llguidance") else 6):
                print(f"    {c:5d}  {head}")
    from tokstream.errors import TokstreamError

    odd = [
        (r.id, r.errors["tokstream"])
        for r in runs
        if not isinstance(r.errors.get("tokstream", TokstreamError()), TokstreamError)
    ]
    for sid, e in odd:
        print(f"  tokstream error that is no TokstreamError (a bug?): {sid}: {type(e).__name__}: {str(e)[:160]}")
    walked = [r for r in runs if r.instances]
    gen_failed = Counter(r.gen_error.split(":")[0] for r in runs if r.gen_error)
    print(
        f"  instances: {sum(r.instances for r in walked)} over {len(walked)} schemas"
        f"; generation failed on {sum(gen_failed.values())} schemas ({', '.join(f'{k} {c}' for k, c in gen_failed.most_common())})"
        f"; {sum(1 for r in runs if r.results and not r.instances and not r.gen_error)} schemas gave none"
    )
    for n in names:
        bad = [(r.id, i, prefix, tok) for r in walked for (e, i, prefix, tok) in r.refused if e == n]
        misses = sum(r.mask_misses[n] for r in walked)
        insts = sum(r.instances for r in walked if n in r.results)
        print(f"  {n:<13} refused {len(bad)} of {insts} valid instances; {misses} accepted tokens outside its mask")
        show = 40 if n == "tokstream" else 15 if n == "llguidance" else 3
        for sid, i, prefix, tok in bad[:show]:
            what = "EOS (not accepting at the end)" if tok == v.eos else f"{v.table[tok]!r} (id {tok})"
            print(f"    {sid} #{i}: refused {what} after ...{prefix[-60:]!r}")
        if len(bad) > show:
            print(f"    ... and {len(bad) - show} more")
    results: list[bool] = []
    if "tokstream" in names:
        steps = [s for r in runs if "tokstream" in r.results for s in r.results["tokstream"].steps]
        for q, target in ((0.5, TARGET_STEP_P50_US), (0.99, TARGET_STEP_P99_US)):
            ok = pct(steps, q) <= target
            results.append(ok)
            print(f"  target tokstream TBM p{int(q * 100)} {pct(steps, q):.1f} us <= {target:.0f} us  {verdict(ok)}")
        ttfm = sorted(r.results["tokstream"].total_ms for r in runs if "tokstream" in r.results)
        p50 = ttfm[len(ttfm) // 2] if ttfm else math.nan
        ok = p50 <= TARGET_TTFM_MS
        results.append(ok)
        print(f"  target tokstream TTFM p50 {p50:.2f} ms <= {TARGET_TTFM_MS:.0f} ms  {verdict(ok)}")
        if "llguidance" in names:
            results.extend(_ratio_targets(runs))
            ok = len(compiled["tokstream"]) >= len(compiled["llguidance"])
            results.append(ok)
            print(
                f"  target tokstream coverage {len(compiled['tokstream'])} >= llguidance's {len(compiled['llguidance'])}  {verdict(ok)}"
            )
    return results


def _ratio_targets(runs: list[SchemaRun]) -> list[bool]:
    """tokstream / llguidance for TTFM p50, p99 and TBM p50, p99 (each engine over the
    schemas it compiled and the steps it walked), against ``RATIO_TARGETS``, and
    whether each is within ``RATIO_FLOOR``."""
    figures: dict[str, list[float]] = {}
    for n in ("tokstream", "llguidance"):
        ttfm = [float(r.results[n].total_ms) for r in runs if n in r.results]
        steps = [s for r in runs if n in r.results for s in r.results[n].steps]
        figures[n] = [
            pct([int(t * 1e6) for t in ttfm], 0.5) / 1e3,
            pct([int(t * 1e6) for t in ttfm], 0.99) / 1e3,
            pct(steps, 0.5),
            pct(steps, 0.99),
        ]
    out: list[bool] = []
    for (what, target), ours, theirs in zip(RATIO_TARGETS, figures["tokstream"], figures["llguidance"]):
        ratio = ours / theirs if theirs > 0 else math.inf
        ok = ratio <= target
        out.append(ok)
        unit = "ms" if what.startswith("TTFM") else "us"
        floor = "within" if ratio <= RATIO_FLOOR else "outside"
        print(
            f"  target tokstream {what} / llguidance's: {ours:.2f} / {theirs:.2f} {unit} = {ratio:.2f}x <= {target:g}x"
            f"  {verdict(ok)} ({floor} the {RATIO_FLOOR:g}x floor)"
        )
    return out


def bench_json(args: argparse.Namespace) -> list[bool]:
    rows = load_schemas(args.json_limit)
    if rows is None:
        return []
    v = load_vocab("llama3")
    if v is None:
        return []
    engines = make_engines(v, args, (WARMUP, JSON_WARMUP))
    if not engines:
        return []
    for e in engines:
        if isinstance(e, TokstreamEngine):
            e.timeout = args.json_timeout
    make = instance_maker()
    print(
        f"# json: {len(rows)} schemas, {args.json_instances} instances each (hypothesis-jsonschema"
        f" {_version('hypothesis-jsonschema')}, hypothesis {_version('hypothesis')}); timeout {args.json_timeout:g} s;"
        f" outlines-core Index {OUTLINES_TIMEOUT_S:g} s, regexes over {OUTLINES_MAX_REGEX} characters not built",
        flush=True,
    )
    runs = []
    t0 = time.perf_counter()
    for i, row in enumerate(rows):
        runs.append(run_schema(v, engines, row, args, make))
        if (i + 1) % 20 == 0 or i + 1 == len(rows):
            spent = time.perf_counter() - t0
            print(
                f"  [{i + 1}/{len(rows)}] {spent:6.0f} s, ~{spent / (i + 1) * (len(rows) - i - 1):4.0f} s left ({row['id']})",
                file=sys.stderr,
                flush=True,
            )
    for e in engines:
        if isinstance(e, OutlinesEngine) and e.worker is not None:
            e.worker.close()
    return summarize_json(v, runs, [e.name for e in engines])


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
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"smoke run: {', '.join(QUICK)}; fewer, shorter walks; 24 schemas, 1 instance each",
    )
    parser.add_argument(
        "--part",
        nargs="+",
        choices=("regex", "grammar", "json"),
        default=["regex", "grammar", "json"],
        help="what to run (default: all; json is the JSON Schema part, Llama 3 only)",
    )
    parser.add_argument(
        "--json-limit", type=int, default=None, help="schemas, spread over the sample (default all; --quick 24)"
    )
    parser.add_argument("--json-instances", type=int, default=None, help="instances per schema (default 3; --quick 1)")
    parser.add_argument(
        "--json-ascii",
        action="store_true",
        help="serialize instances with json.dumps's default ensure_ascii (\\uXXXX for every non-ASCII character)",
    )
    parser.add_argument(
        "--json-timeout",
        type=float,
        default=JSON_TIMEOUT_S,
        help=f"seconds per schema and engine (default {JSON_TIMEOUT_S:g})",
    )
    args = parser.parse_args(argv)
    args.walks = args.walks if args.walks is not None else (2 if args.quick else 5)
    args.steps = args.steps if args.steps is not None else (15 if args.quick else 40)
    args.json_limit = args.json_limit if args.json_limit is not None else (24 if args.quick else None)
    args.json_instances = args.json_instances if args.json_instances is not None else (1 if args.quick else 3)
    # The driver comes first: tokstream when it runs, else the next engine asked for.
    args.engines = sorted(dict.fromkeys(args.engines), key=ENGINES.index)
    workloads = [w for w in REGEXES + GRAMMARS if w.kind in args.part]
    wanted = args.workloads or (QUICK if args.quick else None)
    if wanted:
        unknown = set(wanted) - {w.name for w in REGEXES + GRAMMARS}
        if unknown:
            parser.error(f"unknown workloads: {', '.join(sorted(unknown))}")
        workloads = [w for w in workloads if w.name in wanted]
    if args.workloads and "json" in args.part and len(args.part) > 1:
        args.part = [p for p in args.part if p != "json"]  # --workloads names regexes and grammars
    print(
        f"# python {sys.version.split()[0]}, numpy {np.__version__}, tokstream from {Path(tokstream.__file__).parent}"
    )
    results: list[bool] = []
    for name in args.tokenizers if workloads else ():
        v = load_vocab(name)
        if v is not None:
            results += bench_tokenizer(v, args, workloads)
    if "json" in args.part:
        results += bench_json(args)
    if results:
        print(f"# tokstream targets met: {sum(results)}/{len(results)}  {verdict(all(results))}")
    else:
        print("# tokstream targets: not measured (tokstream did not run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

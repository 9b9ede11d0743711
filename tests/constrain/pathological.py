"""Hostile regexes, grammars and JSON Schemas for the constraint engine's budgets (issue
28, acceptance point 4), the harness that runs each in a capped subprocess, and the
judge of what came back.

Every case is valid input (regular, context-free, satisfiable), built to make a naive
compiler blow up: nested counted repeats, ``a?{n}a{n}``, ``(a|b)*a(a|b){k}``, bounds
of 10**9, enums of 100,000 strings, nesting 10,000 deep, alternations of 50,000
literals, left-recursive and highly ambiguous grammars. The engine must either
compile it (lazily) and answer masks, or refuse it early with a named error:

- compile + first mask within ``TIME_BUDGET`` seconds of wall time (measured in the
  child around exactly those two calls; tokenizer load, index build and a warm-up of
  each constructor come before), and each of ``STEPS`` random steps after it
  (``accept`` + ``bitmask``) within the same budget;
- under an address-space cap of ``ADDRESS_SPACE`` bytes (``RLIMIT_AS``, set before
  anything is imported);
- a refusal is an ``UnsupportedGrammarError`` (``UnsupportedSchemaError`` for a
  schema) whose message contains ``(size)`` and names where: the regex offset, the
  grammar line, or the schema keyword and its JSON pointer (``Case.where``); never a
  ``MemoryError``, ``RecursionError`` or other exception, never a misleading hint
  (``Case.forbid``: an enum or an alternation is not a "repetition").

Layout: the *generators* are plain functions returning a pattern, grammar text or
schema (``GENERATORS``); a ``Case`` names one generator call plus what a refusal must
say; ``CASES`` are the named cases, ``hostile_cases()`` a hypothesis strategy drawing
named cases and new ones with drawn sizes. ``run_case`` runs one case in a fresh
``python -c`` process (the child rebuilds the input from the generator name and its
parameters, so no megabytes cross the pipe) and returns its JSON report;
``judge(case, report)`` lists the problems (empty: the case passes).

A refusal must name ``(size)`` (``BUDGET_TAGS``): every case is valid input, so a
budget is the only reason to refuse it; ``(depth)`` or "Python's recursion limit" is
not accepted (widen ``BUDGET_TAGS`` if a depth budget is to count as a named one).
The one exception is ``Case.unsupported_ok``: a keyword with cases the engine refuses
outright (``uniqueItems`` over items that can differ), where naming the keyword and
its pointer is enough.

``python tests/constrain/pathological.py`` prints a markdown table of every case on
the engine that ``import tokstream`` finds (``PYTHONPATH=other/tree`` to try another):
verdict, outcome, compile + first mask seconds, slowest step, message head, problems.
``-k SUBSTRING`` selects cases, ``-j N`` runs N children at once (default: the CPU
count), ``--hard-stop S`` kills a child S seconds after its timer started, ``--json
PATH`` keeps every report, ``--list`` names the cases; the exit status is 1 when any
case fails. The pytest form (``test_bounded.py``, the same verdicts) lands once
every case passes; until then this table is the record (issue 28's notes). Wall times
are the criterion, so run it on an idle machine: on a loaded one the cases near the
budget (``word-class-counted``, ``unicode-class-counted``) can cross it.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import queue
import random
import re
import string
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # hypothesis is imported by hostile_cases() only: the children never need it
    from hypothesis import strategies as st


__all__ = [
    "ADDRESS_SPACE",
    "BUDGET_TAGS",
    "CASES",
    "GENERATORS",
    "HARD_STOP",
    "SETUP_TIMEOUT",
    "STEPS",
    "TIME_BUDGET",
    "Case",
    "build_source",
    "hostile_cases",
    "judge",
    "run_case",
    "run_cases",
]

#: Seconds of wall time for compile + first mask, and for each later step.
TIME_BUDGET = 2.0
#: The child's address-space cap (``RLIMIT_AS``): 2 GiB.
ADDRESS_SPACE = 2 << 30
#: Seconds after the child's timer starts (it says so on stdout) at which the parent
#: kills it (5x the budget: past it, waiting longer tells nothing more). Set by
#: ``TOKSTREAM_BOUNDED_HARD_STOP``.
HARD_STOP = float(os.environ.get("TOKSTREAM_BOUNDED_HARD_STOP", "10"))
#: Seconds the child may take to load the tokenizer, build the index and warm up (~2 s
#: on an idle machine, several times that on a loaded one) before its timer starts.
SETUP_TIMEOUT = 120.0
#: Random steps (accept a random allowed id, then the next bitmask) after the first mask.
STEPS = 8
#: What a refusal's message must contain (one of): the name of the budget that stopped it.
BUDGET_TAGS = ("(size)",)
#: The tokenizer every case runs on (embedded, no download).
TOKENIZER = "o200k_base"

_HERE = Path(__file__).resolve().parent
_REPORT = "@@bounded-report@@ "
_READY = "@@bounded-timer-started@@"
_REGEX_WHERE = (r"\boffset \d+",)
_GRAMMAR_WHERE = (r"\bline \d+",)


# ---------------------------------------------------------------------------------------
# Generators: plain functions, JSON-able parameters, deterministic output.


def pattern(source: str) -> str:
    """A pattern or grammar written out (small cases)."""
    return source


def nested_counted(depth: int, lo: int, hi: int, atom: str = "a") -> str:
    """``((a{lo,hi}){lo,hi}){lo,hi}`` with ``depth`` quantifiers."""
    q = f"{{{lo},{hi}}}" if lo != hi else f"{{{lo}}}"
    s = atom + q
    for _ in range(depth - 1):
        s = f"({s}){q}"
    return s


def optional_run(n: int, counted: bool = False) -> str:
    """``a?`` n times then ``a`` n times (the issue's ``"a?" * n + "a" * n``), or its
    counted spelling ``(?:a?){n}a{n}``."""
    return f"(?:a?){{{n}}}a{{{n}}}" if counted else "a?" * n + "a" * n


def sliding_window(lo: int, hi: int) -> str:
    """``(a|b)*a(a|b){lo,hi}``: the k-th symbol from the end is an ``a`` (2**k DFA states
    by subset construction)."""
    q = f"{{{lo}}}" if lo == hi else f"{{{lo},{hi}}}"
    return f"(a|b)*a(a|b){q}"


def huge_bound(lo: int, hi: int | None, atom: str = "a", prefix: int = 0, suffix: str = "") -> str:
    """``x * prefix + atom{lo,hi} + suffix`` (``hi`` None: ``{lo,}``); the bound sits at
    offset ``prefix + len(atom)``."""
    q = f"{{{lo},}}" if hi is None else (f"{{{lo}}}" if lo == hi else f"{{{lo},{hi}}}")
    return "x" * prefix + atom + q + suffix


def deep_groups(depth: int, style: str = "capture") -> str:
    """Parentheses ``depth`` deep: ``capture`` ``((a))``, ``noncap`` ``(?:(?:a))``, ``alt``
    ``(a|(a|b))``, ``star`` ``((a)*)*``."""
    if style == "capture":
        return "(" * depth + "a" + ")" * depth
    if style == "noncap":
        return "(?:" * depth + "a" + ")" * depth
    if style == "alt":
        return "(a|" * depth + "b" + ")" * depth
    if style == "star":
        return "(" * depth + "a" + ")*" * depth
    raise ValueError(style)


def _words(n: int, style: str, seed: int = 0) -> list[str]:
    """``n`` distinct words: ``numbered`` ``w00000``, ``random`` 6-12 random letters,
    ``prefixed`` a 40-letter shared prefix then a number."""
    if style == "numbered":
        return [f"w{i:05d}" for i in range(n)]
    if style == "prefixed":
        return [f"{'p' * 40}{i}" for i in range(n)]
    rng = random.Random(seed)
    out: set[str] = set()
    while len(out) < n:
        out.add("".join(rng.choices(string.ascii_lowercase, k=rng.randint(6, 12))))
    return sorted(out)


def alternation(n: int, style: str = "numbered", seed: int = 0) -> str:
    """A regex of ``n`` literal alternatives ``w00000|w00001|...``."""
    return "|".join(_words(n, style, seed))


def long_literal(n: int) -> str:
    """A literal of ``n`` characters ``abab...``."""
    return ("ab" * (n // 2 + 1))[:n]


def lark_alternation(n: int, style: str = "numbered", seed: int = 0) -> str:
    """``start: "w00000" | "w00001" | ...`` (``n`` literals on one line)."""
    return "start: " + " | ".join(f'"{w}"' for w in _words(n, style, seed))


def lark_chain(n: int, style: str) -> str:
    """``n`` rules in a chain: ``nest`` ``r0: "(" r1 ")" | "x"`` (n deep), ``leftcycle``
    ``r0: r1 "a" | "b"`` ... ``r{n-1}: r0 "a" | "c"`` (indirect left recursion through
    every rule), ``alias`` ``r0: r1`` ... (unit rules)."""
    lines = ["start: r0"]
    for i in range(n - 1):
        if style == "nest":
            lines.append(f'r{i}: "(" r{i + 1} ")" | "x"')
        elif style == "leftcycle":
            lines.append(f'r{i}: r{i + 1} "a" | "b"')
        elif style == "alias":
            lines.append(f"r{i}: r{i + 1}")
        else:
            raise ValueError(style)
    last = {"nest": '"x"', "leftcycle": 'r0 "a" | "c"', "alias": '"x"'}[style]
    lines.append(f"r{n - 1}: {last}")
    return "\n".join(lines)


def lark_deep_groups(depth: int) -> str:
    """``start: ((("a")))`` with ``depth`` groups in one rule."""
    return "start: " + "(" * depth + '"a"' + ")" * depth


def lark_repeat(lo: int, hi: int | None, on: str = "rule") -> str:
    """``"a" ~ lo..hi`` on a rule (``on="rule"``) or inside a terminal (``"terminal"``);
    ``hi`` None: ``~ lo``."""
    rep = f"{lo}" if hi is None else f"{lo}..{hi}"
    if on == "rule":
        return f'start: "a" ~ {rep}'
    return f'start: A\nA: "a" ~ {rep}'


def lark_regex(regex: str) -> str:
    """``start: /regex/``: a regex terminal."""
    return f"start: /{regex}/"


def schema(value: Any) -> Any:
    """A schema written out (small cases)."""
    return value


def _wrap(name: str, sub: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {name: sub}, "required": [name], "additionalProperties": False}


def array_bounds(
    min_items: int | None = None, max_items: int | None = None, items: Any = None, wrap: bool = True
) -> dict[str, Any]:
    """An array of ``items`` (integers by default) with ``minItems`` / ``maxItems``,
    under the property ``xs`` when ``wrap``."""
    s: dict[str, Any] = {"type": "array", "items": {"type": "integer"} if items is None else items}
    if min_items is not None:
        s["minItems"] = min_items
    if max_items is not None:
        s["maxItems"] = max_items
    return _wrap("xs", s) if wrap else s


def string_bounds(
    min_length: int | None = None, max_length: int | None = None, pattern: str | None = None, wrap: bool = True
) -> dict[str, Any]:
    """A string with ``minLength`` / ``maxLength`` / ``pattern``, under ``s`` when ``wrap``."""
    s: dict[str, Any] = {"type": "string"}
    if min_length is not None:
        s["minLength"] = min_length
    if max_length is not None:
        s["maxLength"] = max_length
    if pattern is not None:
        s["pattern"] = pattern
    return _wrap("s", s) if wrap else s


def object_bounds(
    min_properties: int | None = None,
    max_properties: int | None = None,
    n_properties: int = 0,
    required: bool = False,
    value: Any = None,
    wrap: bool = True,
) -> dict[str, Any]:
    """An object of ``n_properties`` listed properties ``p0, p1, ...`` (each ``value``,
    a string of at most 20 characters by default), all required if ``required``, other
    members free, with ``minProperties`` / ``maxProperties``; under ``o`` when ``wrap``."""
    v = {"type": "string", "maxLength": 20} if value is None else value
    s: dict[str, Any] = {"type": "object", "properties": {f"p{i}": v for i in range(n_properties)}}
    if required:
        s["required"] = [f"p{i}" for i in range(n_properties)]
    if min_properties is not None:
        s["minProperties"] = min_properties
    if max_properties is not None:
        s["maxProperties"] = max_properties
    return _wrap("o", s) if wrap else s


def enum_values(n: int, kind: str = "string", style: str = "random", seed: int = 0, wrap: bool = True) -> Any:
    """An ``enum`` of ``n`` values: ``string`` (words of ``_words``), ``integer``
    (0..n-1 spread over 9 digits) or ``mixed`` (strings, numbers, arrays, objects)."""
    values: list[Any]
    if kind == "string":
        values = list(_words(n, style, seed))
    elif kind == "integer":
        values = [i * 7919 for i in range(n)]
    elif kind == "mixed":
        words = _words(n, style, seed)
        values = [[w, i] if i % 3 == 0 else ({"k": w} if i % 3 == 1 else i + 0.5) for i, w in enumerate(words)]
    else:
        raise ValueError(kind)
    s = {"enum": values}
    return _wrap("e", s) if wrap else s


def any_of_consts(n: int, style: str = "numbered", wrap: bool = True) -> dict[str, Any]:
    """``anyOf`` of ``n`` ``const`` strings, under ``a`` when ``wrap``."""
    s = {"anyOf": [{"const": w} for w in _words(n, style)]}
    return _wrap("a", s) if wrap else s


def deep_schema(depth: int, kind: str) -> dict[str, Any]:
    """A schema nested ``depth`` levels, built without recursion: ``items`` (arrays of
    arrays), ``properties`` (objects under ``a``), ``anyOf`` / ``allOf`` (one level per
    branch), ``ref_alias`` (``$defs/d0`` refers to ``d1`` ... to an integer), ``ref_nest``
    (``d{i}`` is an array of ``d{i+1}``)."""
    leaf: dict[str, Any] = {"type": "integer"}
    if kind in ("ref_alias", "ref_nest"):
        defs: dict[str, Any] = {}
        for i in range(depth):
            ref = {"$ref": f"#/$defs/d{i + 1}"}
            defs[f"d{i}"] = ref if kind == "ref_alias" else {"type": "array", "items": ref}
        defs[f"d{depth}"] = leaf
        return {"$defs": defs, "$ref": "#/$defs/d0"}
    s = leaf
    for _ in range(depth):
        if kind == "items":
            s = {"type": "array", "items": s}
        elif kind == "properties":
            s = {"type": "object", "properties": {"a": s}, "required": ["a"]}
        elif kind == "anyOf":
            s = {"anyOf": [s, {"type": "null"}]}
        elif kind == "allOf":
            s = {"allOf": [s]}
        else:
            raise ValueError(kind)
    return s


def deep_schema_text(depth: int) -> str:
    """``deep_schema(depth, "items")`` as JSON text, written without ``json.dumps``
    (which would hit the recursion limit itself)."""
    return '{"type": "array", "items": ' * depth + '{"type": "integer"}' + "}" * depth


def pattern_properties(patterns: list[str], additional: bool = False) -> dict[str, Any]:
    """An object whose member names match one of ``patterns`` (ECMA regexes), each value
    an integer; other names refused unless ``additional``."""
    return _wrap(
        "pp",
        {
            "type": "object",
            "patternProperties": {p: {"type": "integer"} for p in patterns},
            "additionalProperties": additional,
        },
    )


def prefix_items(n: int) -> dict[str, Any]:
    """``prefixItems`` of ``n`` alternating integer / string schemas, under ``xs``."""
    items = [{"type": "integer"} if i % 2 else {"type": "string", "maxLength": 8} for i in range(n)]
    return _wrap("xs", {"type": "array", "prefixItems": items, "minItems": n})


def unique_items(n_values: int, min_items: int) -> dict[str, Any]:
    """An array of at least ``min_items`` distinct values among ``n_values`` integers
    (``uniqueItems``: a subset per state, exponential if unrolled), under ``xs``."""
    return _wrap(
        "xs",
        {"type": "array", "items": {"enum": list(range(n_values))}, "uniqueItems": True, "minItems": min_items},
    )


def object_of(members: list[dict[str, Any]]) -> dict[str, Any]:
    """An object of required properties ``m0, m1, ...``, each the schema of a generator
    call ``{"make": ..., "params": ...}`` (a wrapping generator's inner schema)."""
    props = {}
    for i, m in enumerate(members):
        unwrapped = {"wrap": False} if "wrap" in inspect.signature(GENERATORS[m["make"]]).parameters else {}
        props[f"m{i}"] = build_source(m["make"], {**m["params"], **unwrapped})
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


GENERATORS: dict[str, Callable[..., Any]] = {
    f.__name__: f
    for f in (
        pattern,
        nested_counted,
        optional_run,
        sliding_window,
        huge_bound,
        deep_groups,
        alternation,
        long_literal,
        lark_alternation,
        lark_chain,
        lark_deep_groups,
        lark_repeat,
        lark_regex,
        schema,
        array_bounds,
        string_bounds,
        object_bounds,
        enum_values,
        any_of_consts,
        deep_schema,
        deep_schema_text,
        pattern_properties,
        prefix_items,
        unique_items,
        object_of,
    )
}


def build_source(make: str, params: dict[str, Any]) -> Any:
    """The pattern, grammar text or schema of generator ``make`` called with ``params``."""
    return GENERATORS[make](**params)


# ---------------------------------------------------------------------------------------
# Cases.


@dataclass(frozen=True)
class Case:
    """One hostile input: ``kind`` (``regex`` / ``grammar`` / ``schema``), the generator
    call that makes it, and what a refusal must say. ``where``: regexes that must all
    be found in a refusal's message (the offset, line, or keyword and JSON pointer that
    caused it); ``forbid``: words it must not contain (misleading hints)."""

    name: str
    kind: str
    make: str
    params: dict[str, Any] = field(default_factory=dict)
    where: tuple[str, ...] = ()
    forbid: tuple[str, ...] = ()
    #: A refusal that the construct is not supported at all (no budget named) is
    #: acceptable too: the case's keyword has cases outside the engine's reach.
    unsupported_ok: bool = False

    def __post_init__(self) -> None:
        if not self.where:
            default = {"regex": _REGEX_WHERE, "grammar": _GRAMMAR_WHERE}.get(self.kind, ())
            object.__setattr__(self, "where", default)

    @property
    def spec(self) -> dict[str, Any]:
        """What the child needs: the kind and the generator call."""
        return {"kind": self.kind, "make": self.make, "params": self.params}

    def source(self) -> Any:
        return build_source(self.make, self.params)


def _r(name: str, make: str, where: tuple[str, ...] = (), forbid: tuple[str, ...] = (), **params: Any) -> Case:
    return Case(f"regex/{name}", "regex", make, params, where, forbid)


def _g(name: str, make: str, where: tuple[str, ...] = (), forbid: tuple[str, ...] = (), **params: Any) -> Case:
    return Case(f"grammar/{name}", "grammar", make, params, where, forbid)


def _s(
    name: str,
    make: str,
    where: tuple[str, ...],
    forbid: tuple[str, ...] = (),
    unsupported_ok: bool = False,
    **params: Any,
) -> Case:
    return Case(f"schema/{name}", "schema", make, params, where, forbid, unsupported_ok)


def _kw(keywords: str | tuple[str, ...], pointer: str, tail: str = "") -> tuple[str, str]:
    """A schema refusal names one of ``keywords`` and the JSON pointer ``#pointer`` then
    ``tail`` (a regex), or a pointer below it (the refusal may point deeper); ``""`` is
    the root."""
    names = (keywords,) if isinstance(keywords, str) else keywords
    keyword = r"(?<![\w$])(" + "|".join(map(re.escape, names)) + r")(?!\w)"
    if not pointer:
        return keyword, r"#(?!/)"
    return keyword, "#" + re.escape(pointer) + tail + r"(?![\w$])"


_NOT_REP = ("repetition",)  # an enum, an alternation or a nesting is not a repetition

CASES: list[Case] = [
    # -- regexes ---------------------------------------------------------------------
    _r("nested-counted-3x50", "nested_counted", depth=3, lo=1, hi=50),
    _r("nested-counted-4x50", "nested_counted", depth=4, lo=1, hi=50),
    _r("nested-counted-3x0..1000", "nested_counted", depth=3, lo=0, hi=1000),
    _r("nested-counted-exact-2x1000", "nested_counted", depth=2, lo=1000, hi=1000),
    _r("optional-run-2000", "optional_run", n=2000),
    _r("optional-run-5000", "optional_run", n=5000),
    _r("optional-run-8000", "optional_run", n=8000),
    _r("optional-run-counted-8000", "optional_run", n=8000, counted=True),
    _r("sliding-window-20", "sliding_window", lo=20, hi=20),
    _r("sliding-window-20..30", "sliding_window", lo=20, hi=30),
    _r("bound-0..1e9", "huge_bound", where=(r"\boffset [01]\b",), lo=0, hi=10**9),
    _r("bound-1e9-exact", "huge_bound", where=(r"\boffset [01]\b",), lo=10**9, hi=10**9),
    _r("bound-1e9-open-class", "huge_bound", where=(r"\boffset [0-5]\b",), lo=10**9, hi=None, atom="[a-z]"),
    _r("bound-after-5000-chars", "huge_bound", where=(r"\boffset 500[01]\b",), lo=0, hi=10**9, prefix=5000),
    _r("bound-group-0..1e9", "huge_bound", lo=0, hi=10**9, atom="(ab|cd)", suffix="x"),
    _r("dot-counted-nested", "pattern", source=r"(.{0,1000}x){0,1000}"),
    _r("unicode-class-counted", "pattern", source="[\u0100-\U0010ffff]{1000}"),
    _r("word-class-counted", "pattern", source=r"\w{1000}\W{1000}"),
    _r("redos-classic", "pattern", source=r"(x+x+)+y"),
    _r("parens-10000", "deep_groups", forbid=_NOT_REP, depth=10_000),
    _r("noncap-parens-10000", "deep_groups", forbid=_NOT_REP, depth=10_000, style="noncap"),
    _r("nested-alternation-10000", "deep_groups", forbid=_NOT_REP, depth=10_000, style="alt"),
    _r("nested-star-5000", "deep_groups", depth=5000, style="star"),
    _r("alternation-50000", "alternation", forbid=_NOT_REP, n=50_000),
    _r("alternation-50000-random", "alternation", forbid=_NOT_REP, n=50_000, style="random"),
    _r("literal-1000000", "long_literal", n=1_000_000),
    # -- grammars ----------------------------------------------------------------------
    _g("ambiguous-binary", "pattern", source='start: start start | "a"'),
    _g("ambiguous-cyclic-nullable", "pattern", source='start: s\ns: s s s | s | "a" |'),
    _g("ambiguous-expression", "pattern", source='start: e\ne: e "+" e | e e | "(" e ")" | "x" | '),
    _g("ambiguous-ignore", "pattern", source="start: WORD+\nWORD: /a+/\n%ignore /a+/"),
    _g("left-recursive-cycle-10000", "lark_chain", n=10_000, style="leftcycle"),
    _g("rule-nesting-10000", "lark_chain", forbid=_NOT_REP, n=10_000, style="nest"),
    _g("unit-rule-chain-10000", "lark_chain", forbid=_NOT_REP, n=10_000, style="alias"),
    _g("group-nesting-10000", "lark_deep_groups", forbid=_NOT_REP, depth=10_000),
    _g("alternation-50000", "lark_alternation", forbid=_NOT_REP, n=50_000),
    _g("rule-repeat-1e9", "lark_repeat", lo=10**9, hi=None),
    _g("rule-repeat-0..1e9", "lark_repeat", lo=0, hi=10**9),
    _g("terminal-repeat-1..1e9", "lark_repeat", lo=1, hi=10**9, on="terminal"),
    _g("regex-sliding-window-25", "lark_regex", regex="(a|b)*a(a|b){25}"),
    _g("regex-bound-0..1e9", "lark_regex", regex="a{0,1000000000}"),
    # -- schemas -------------------------------------------------------------------------
    _s("minItems-1e9-root", "array_bounds", _kw("minItems", ""), min_items=10**9, wrap=False),
    _s("minItems-1e9", "array_bounds", _kw("minItems", "/properties/xs"), min_items=10**9),
    _s("maxItems-1e9", "array_bounds", _kw("maxItems", "/properties/xs"), max_items=10**9),
    _s(
        "minItems-maxItems-1e9", "array_bounds", _kw("minItems", "/properties/xs"), min_items=10**9, max_items=10**9 + 5
    ),
    _s(
        "minItems-5000-of-minItems-5000",
        "array_bounds",
        _kw("minItems", "/properties/xs"),
        min_items=5000,
        items={"type": "array", "items": {"type": "integer"}, "minItems": 5000},
    ),
    _s("minLength-1e9", "string_bounds", _kw("minLength", "/properties/s"), min_length=10**9),
    _s("maxLength-1e9", "string_bounds", _kw("maxLength", "/properties/s"), max_length=10**9),
    _s("length-exact-1e6", "string_bounds", _kw("minLength", "/properties/s"), min_length=10**6, max_length=10**6),
    _s(
        "maxLength-1e9-nasty-pattern",
        "string_bounds",
        _kw("maxLength", "/properties/s"),
        max_length=10**9,
        pattern="^(a|b)*a(a|b){20}$",
    ),
    _s("pattern-nested-counted", "string_bounds", _kw("pattern", "/properties/s"), pattern="^((a{1,50}){1,50}){1,50}$"),
    _s("minProperties-1e9", "object_bounds", _kw("minProperties", "/properties/o"), min_properties=10**9),
    _s(
        "maxProperties-1e9",
        "object_bounds",
        _kw("maxProperties", "/properties/o"),
        max_properties=10**9,
        n_properties=50,
    ),
    _s("properties-1000-optional", "object_bounds", _kw("properties", "/properties/o"), n_properties=1000),
    _s(
        "properties-1000-min500",
        "object_bounds",
        _kw("minProperties", "/properties/o"),
        n_properties=1000,
        min_properties=500,
        max_properties=900,
    ),
    _s("enum-100000-strings", "enum_values", _kw("enum", "/properties/e"), _NOT_REP, n=100_000),
    _s("enum-100000-prefixed", "enum_values", _kw("enum", "/properties/e"), _NOT_REP, n=100_000, style="prefixed"),
    _s("enum-100000-integers", "enum_values", _kw("enum", "/properties/e"), _NOT_REP, n=100_000, kind="integer"),
    _s("enum-30000-mixed", "enum_values", _kw("enum", "/properties/e"), _NOT_REP, n=30_000, kind="mixed"),
    _s("anyOf-50000-consts", "any_of_consts", _kw("anyOf", "/properties/a"), _NOT_REP, n=50_000),
    _s("deep-items-10000", "deep_schema", _kw("items", "/items"), _NOT_REP, depth=10_000, kind="items"),
    _s("deep-items-10000-text", "deep_schema_text", _kw("items", "/items"), _NOT_REP, depth=10_000),
    _s(
        "deep-properties-10000",
        "deep_schema",
        _kw("properties", "/properties/a"),
        _NOT_REP,
        depth=10_000,
        kind="properties",
    ),
    _s("deep-anyOf-10000", "deep_schema", _kw("anyOf", "/anyOf/0"), _NOT_REP, depth=10_000, kind="anyOf"),
    _s("deep-allOf-10000", "deep_schema", _kw("allOf", "/allOf/0"), _NOT_REP, depth=10_000, kind="allOf"),
    _s(
        "ref-alias-chain-10000",
        "deep_schema",
        _kw("$ref", "/$defs/d", r"\d+"),
        _NOT_REP,
        depth=10_000,
        kind="ref_alias",
    ),
    _s(
        "ref-nesting-chain-10000",
        "deep_schema",
        _kw("$ref", "/$defs/d", r"\d+"),
        _NOT_REP,
        depth=10_000,
        kind="ref_nest",
    ),
    _s(
        "patternProperties-nasty",
        "pattern_properties",
        _kw("patternProperties", "/properties/pp"),
        patterns=["^(a|b)*a(a|b){20}$", "^((x{1,50}){1,50}){1,50}$", "^(y+y+)+z$"],
    ),
    _s("prefixItems-10000", "prefix_items", _kw("prefixItems", "/properties/xs"), n=10_000),
    _s(
        "uniqueItems-100-min50",
        "unique_items",
        _kw("uniqueItems", "/properties/xs"),
        unsupported_ok=True,  # uniqueItems over items that can differ is refused outright today
        n_values=100,
        min_items=50,
    ),
    _s(
        "integer-range-1e300",
        "schema",
        _kw(("minimum", "maximum", "multipleOf"), ""),
        value={"type": "integer", "minimum": -(10**300), "maximum": 10**300, "multipleOf": 4},
    ),
    _s(
        "multipleOf-2^300",  # decided by the last 300 digits: 5**300 suffixes
        "schema",
        _kw(("multipleOf", "minimum", "maximum"), ""),
        value={"type": "integer", "multipleOf": 2**300, "minimum": 0, "maximum": 10**120},
    ),
    _s(
        "multipleOf-tiny-wide-range",
        "schema",
        _kw(("multipleOf", "minimum", "maximum"), ""),
        value={"type": "number", "multipleOf": 0.0001, "minimum": -1e308, "maximum": 1e308},
    ),
    _s(
        "number-range-tiny-exclusive",
        "schema",
        _kw(("exclusiveMinimum", "maximum"), ""),
        value={"type": "number", "exclusiveMinimum": 1e-300, "maximum": 1.0000000000001e-300},
    ),
]


# ---------------------------------------------------------------------------------------
# The hypothesis strategy: named cases, and new ones of the same families with drawn sizes.

_HUGE = [1000, 5000, 10**4, 10**5, 10**6, 10**9]
_DEEP = (100, 10_000)


def _drawn_regex(draw: st.DrawFn, st: Any) -> Case:
    family = draw(st.sampled_from(["nested", "optional", "window", "bound", "groups", "alternation"]))
    if family == "nested":
        p = {"depth": draw(st.integers(2, 5)), "lo": draw(st.integers(0, 10)), "hi": draw(st.integers(10, 1000))}
        return _r(f"drawn-nested-counted-{p}", "nested_counted", **p)
    if family == "optional":
        p = {"n": draw(st.integers(1, 8000)), "counted": draw(st.booleans())}
        return _r(f"drawn-optional-run-{p}", "optional_run", **p)
    if family == "window":
        lo = draw(st.integers(10, 30))
        p = {"lo": lo, "hi": lo + draw(st.integers(0, 10))}
        return _r(f"drawn-sliding-window-{p}", "sliding_window", **p)
    if family == "bound":
        lo = draw(st.one_of(st.just(0), st.sampled_from(_HUGE)))
        atom = draw(st.sampled_from(["a", "[a-z]", "(ab|c)", ".", "\\w"]))
        prefix = draw(st.integers(0, 100))
        p = {
            "lo": lo,
            "hi": draw(st.one_of(st.none(), st.just(lo), st.sampled_from(_HUGE).map(lambda h: lo + h))),
            "atom": atom,
        }
        p["prefix"] = prefix
        end = prefix + len(atom)
        return _r(f"drawn-bound-{p}", "huge_bound", where=(rf"\boffset ({prefix}|{end})\b",), **p)
    if family == "groups":
        p = {"depth": draw(st.integers(*_DEEP)), "style": draw(st.sampled_from(["capture", "noncap", "alt", "star"]))}
        return _r(f"drawn-groups-{p}", "deep_groups", forbid=() if p["style"] == "star" else _NOT_REP, **p)
    p = {"n": draw(st.integers(1000, 50_000)), "style": draw(st.sampled_from(["numbered", "random", "prefixed"]))}
    return _r(f"drawn-alternation-{p}", "alternation", forbid=_NOT_REP, **p)


def _drawn_grammar(draw: st.DrawFn, st: Any) -> Case:
    family = draw(st.sampled_from(["chain", "groups", "alternation", "repeat", "ambiguous"]))
    if family == "chain":
        p = {"n": draw(st.integers(*_DEEP)), "style": draw(st.sampled_from(["nest", "leftcycle", "alias"]))}
        return _g(f"drawn-chain-{p}", "lark_chain", **p)
    if family == "groups":
        p = {"depth": draw(st.integers(*_DEEP))}
        return _g(f"drawn-groups-{p}", "lark_deep_groups", forbid=_NOT_REP, **p)
    if family == "alternation":
        p = {"n": draw(st.integers(1000, 50_000)), "style": draw(st.sampled_from(["numbered", "random", "prefixed"]))}
        return _g(f"drawn-alternation-{p}", "lark_alternation", forbid=_NOT_REP, **p)
    if family == "repeat":
        lo = draw(st.one_of(st.just(0), st.sampled_from(_HUGE)))
        p = {"lo": lo, "hi": draw(st.one_of(st.none(), st.sampled_from(_HUGE).map(lambda h: lo + h)))}
        p["on"] = draw(st.sampled_from(["rule", "terminal"]))
        return _g(f"drawn-repeat-{p}", "lark_repeat", **p)
    k = draw(st.integers(2, 6))
    alts = [" ".join(["s"] * j) for j in range(2, k + 1)] + ['"a"'] + draw(st.sampled_from([[], ["s"], [""]]))
    source = "start: s\ns: " + " | ".join(alts)
    return _g(f"drawn-ambiguous-{source!r}", "pattern", source=source)


def _schema_member(draw: st.DrawFn, st: Any) -> tuple[str, dict[str, Any], str]:
    """A generator call for a schema member, and the keyword a refusal would name."""
    family = draw(st.sampled_from(["array", "string", "object", "enum", "anyOf", "deep"]))
    if family == "array":
        lo = draw(st.one_of(st.none(), st.sampled_from(_HUGE)))
        hi = draw(st.one_of(st.none(), st.sampled_from(_HUGE).map(lambda h: (lo or 0) + h)))
        return "array_bounds", {"min_items": lo, "max_items": hi}, "minItems" if lo is not None else "maxItems"
    if family == "string":
        lo = draw(st.one_of(st.none(), st.sampled_from(_HUGE)))
        hi = draw(st.one_of(st.none(), st.sampled_from(_HUGE).map(lambda h: (lo or 0) + h)))
        pat = draw(st.sampled_from([None, "^(a|b)*a(a|b){15}$", "^[a-z]{3,40}$", "^(x+x+)+y$"]))
        return "string_bounds", {"min_length": lo, "max_length": hi, "pattern": pat}, "minLength|maxLength|pattern"
    if family == "object":
        p = {
            "min_properties": draw(st.one_of(st.none(), st.sampled_from(_HUGE))),
            "n_properties": draw(st.integers(0, 300)),
        }
        return "object_bounds", p, "minProperties|properties"
    if family == "enum":
        p = {"n": draw(st.integers(1000, 100_000)), "kind": draw(st.sampled_from(["string", "integer", "mixed"]))}
        return "enum_values", p, "enum"
    if family == "anyOf":
        return "any_of_consts", {"n": draw(st.integers(1000, 50_000))}, "anyOf|const"
    p = {"depth": draw(st.integers(*_DEEP)), "kind": draw(st.sampled_from(["items", "properties", "anyOf", "allOf"]))}
    return "deep_schema", p, p["kind"]


def _drawn_schema(draw: st.DrawFn, st: Any) -> Case:
    members = [_schema_member(draw, st) for _ in range(draw(st.integers(1, 3)))]
    keywords = "|".join(sorted({k for _, _, k in members}))
    where = (rf"(?<![\w$])({keywords})(?!\w)", r"#/properties/m\d+")
    forbid = _NOT_REP if all(k in ("enum", "anyOf|const") for _, _, k in members) else ()
    spec = [{"make": m, "params": p} for m, p, _ in members]
    return _s(f"drawn-object-of-{spec}", "object_of", where, forbid, members=spec)


def hostile_cases() -> st.SearchStrategy[Case]:
    """A hypothesis strategy of hostile cases: the named ones and new draws of each
    family (regex, grammar, schema objects combining up to three hostile members)."""
    from hypothesis import strategies as st

    drawn = [st.composite(lambda draw, f=f: f(draw, st))() for f in (_drawn_regex, _drawn_grammar, _drawn_schema)]
    return st.one_of(st.sampled_from(CASES), *drawn)


# ---------------------------------------------------------------------------------------
# The child: load, warm up, cap, then time compile + first mask and a few steps.

_CHILD = """\
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
sys.path.insert(0, {here!r})
import pathological
pathological._child_main()
"""


def _child_main() -> None:
    """Read a case's spec on stdin, print one report line (``_REPORT`` + JSON). An
    engine that fails on the warm-up is reported as such (``setup-error``), not as a
    crash without a report."""
    report: dict[str, Any] = {"outcome": "setup-error", "phase": "setup", "steps": 0, "max_step_s": 0.0}
    try:
        _child_case(json.loads(sys.stdin.read()), report)
    except BaseException as e:  # the report must get out, whatever happened
        report.update(_exception_fields(e, named=False))
        report["outcome"] = "setup-error" if report["phase"] == "setup" else "error"
    try:
        import resource

        report["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        sys.stdout.write(_REPORT + json.dumps(report) + "\n")
        sys.stdout.flush()
    finally:
        os._exit(0)  # no teardown of whatever the engine built


def _exception_fields(e: BaseException, *, named: bool) -> dict[str, Any]:
    fields: dict[str, Any] = {"type": type(e).__name__, "bases": [k.__name__ for k in type(e).__mro__]}
    try:
        fields["message"] = str(e)[:4000]
        if not named:
            import traceback

            fields["traceback"] = "".join(traceback.format_exception(type(e), e, e.__traceback__)[-6:])[-3000:]
    except BaseException:  # a MemoryError while formatting: the type alone says enough
        fields.setdefault("message", "")
    return fields


def _child_case(spec: dict[str, Any], report: dict[str, Any]) -> None:
    import numpy as np

    import tokstream
    from tokstream.errors import TokstreamError

    tok = tokstream.load(TOKENIZER)
    eos = tok.special_tokens["<|endoftext|>"]
    masker = tokstream.TokenMasker(tok)
    build = {
        "regex": tokstream.regex_constraint,
        "grammar": tokstream.grammar_constraint,
        "schema": tokstream.json_schema_constraint,
    }[spec["kind"]]
    # The index build and each constructor's one-time work (imports, class tables) come
    # before the timer: they are no case's cost.
    for warm in (
        tokstream.regex_constraint(tok, r"[a-z]+\d", eos_id=eos),
        tokstream.grammar_constraint(tok, 'start: "(" start ")" | /[a-z]+/', eos_id=eos),
        tokstream.json_schema_constraint(tok, {"type": "object", "properties": {"a": {"type": "string"}}}, eos_id=eos),
    ):
        masker.bitmask(warm)
    source = build_source(spec["make"], spec["params"])
    n_vocab = tok.n_vocab
    report.update(outcome="ok", phase="compile")

    def allowed(bits: Any) -> Any:
        return np.flatnonzero(np.unpackbits(bits.view(np.uint8), bitorder="little")[:n_vocab])

    def failed(e: BaseException) -> None:
        named = isinstance(e, TokstreamError)
        report.update(_exception_fields(e, named=named), outcome="refused" if named else "error")

    sys.stdout.write(_READY + "\n")  # the parent's hard stop counts from here
    sys.stdout.flush()
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    try:
        c = build(tok, source, eos_id=eos)
        report["phase"] = "first mask"
        bits = masker.bitmask(c)
    except Exception as e:
        report["compile_mask_s"] = time.perf_counter() - t0
        failed(e)
        return
    report["compile_mask_s"] = time.perf_counter() - t0
    report["compile_mask_cpu_s"] = time.process_time() - cpu0
    report["first_allowed"] = len(allowed(bits))
    rng = random.Random(0)
    t = time.perf_counter()
    try:
        for k in range(STEPS):
            plain = [int(i) for i in allowed(bits) if i != eos]
            if not plain:
                break
            report["phase"] = f"step {k + 1}"
            pick = rng.choice(plain)
            t = time.perf_counter()
            if not c.accept(pick):
                report.update(outcome="error", type="MaskAcceptMismatch", bases=["MaskAcceptMismatch"])
                report["message"] = f"id {pick} is in the mask but accept() refused it"
                return
            bits = masker.bitmask(c)
            report["max_step_s"] = max(report["max_step_s"], time.perf_counter() - t)
            report["steps"] = k + 1
            if c.is_done:
                break
    except Exception as e:
        report["max_step_s"] = max(report["max_step_s"], time.perf_counter() - t)
        failed(e)


# ---------------------------------------------------------------------------------------
# The parent: run, judge, tabulate.


def run_case(case: Case, *, hard_stop: float = HARD_STOP, setup_timeout: float = SETUP_TIMEOUT) -> dict[str, Any]:
    """Run ``case`` in a fresh capped ``python -c`` process; its report, or one made
    here for a child killed ``hard_stop`` seconds after its timer started (or
    ``setup_timeout`` seconds into its load) or dead without a report."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    code = _CHILD.format(cap=ADDRESS_SPACE, here=str(_HERE))
    with (
        tempfile.TemporaryFile("w+") as err,
        subprocess.Popen(
            [sys.executable, "-c", code],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=env,
        ) as proc,
    ):
        assert proc.stdin is not None and proc.stdout is not None
        lines: queue.Queue[str | None] = queue.Queue()
        out = proc.stdout

        def pump() -> None:
            for line in out:
                lines.put(line)
            lines.put(None)

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        proc.stdin.write(json.dumps(case.spec))
        proc.stdin.close()
        report = _await_report(proc, lines, hard_stop, setup_timeout)
        reader.join()
        if report["outcome"] == "crash":
            err.seek(0)
            report["message"] += err.read()[-1500:]
    return report


def _await_report(
    proc: subprocess.Popen[str], lines: queue.Queue[str | None], hard_stop: float, setup_timeout: float
) -> dict[str, Any]:
    """The child's report from its stdout lines, killing it at the deadlines."""
    started: float | None = None
    deadline = time.monotonic() + setup_timeout
    report: dict[str, Any] | None = None
    while True:
        try:
            line = lines.get(timeout=max(deadline - time.monotonic(), 0.0))
        except queue.Empty:
            proc.kill()
            proc.wait()
            if started is None:
                return {"outcome": "setup-timeout", "message": f"no start within {setup_timeout:g} s of load"}
            wall = time.monotonic() - started
            return {"outcome": "timeout", "wall_s": wall, "message": f"killed {hard_stop:g} s after the timer started"}
        if line is None:
            break
        if line.startswith(_READY):
            started = time.monotonic()
            deadline = started + hard_stop
        elif line.startswith(_REPORT):
            report = json.loads(line[len(_REPORT) :])
    proc.wait()
    wall = time.monotonic() - started if started is not None else 0.0
    if report is not None:
        return {**report, "wall_s": wall}
    return {
        "outcome": "crash",
        "wall_s": wall,
        "returncode": proc.returncode,
        "message": f"exit status {proc.returncode}, no report; stderr: ",
    }


def judge(case: Case, report: dict[str, Any]) -> list[str]:
    """What is wrong with ``report`` for ``case`` (module notes); empty when it passes."""
    problems = []
    outcome = report["outcome"]
    if outcome in ("timeout", "crash", "setup-timeout"):
        return [f"{outcome}: {report.get('message', '')}"]
    if outcome == "setup-error":
        return [f"the child failed before the case (load or warm-up): {report['type']}: {report.get('message', '')}"]
    t = report.get("compile_mask_s", 0.0)
    if t > TIME_BUDGET:
        problems.append(f"compile + first mask took {t:.2f} s (budget {TIME_BUDGET:g} s)")
    if report.get("max_step_s", 0.0) > TIME_BUDGET:
        problems.append(f"a step took {report['max_step_s']:.2f} s (budget {TIME_BUDGET:g} s)")
    if outcome == "ok":
        return problems
    message = report.get("message", "")
    want = "UnsupportedSchemaError" if case.kind == "schema" else "UnsupportedGrammarError"
    if want not in report.get("bases", ()):
        what = "a named refusal" if outcome == "refused" else "an unnamed exception"
        problems.append(f"{report['phase']}: raised {report['type']} ({what}), not {want}")
        return problems
    if not case.unsupported_ok and not any(tag in message for tag in BUDGET_TAGS):
        problems.append(f"the refusal does not name its budget ({' or '.join(BUDGET_TAGS)})")
    for where in case.where:
        if not re.search(where, message):
            problems.append(f"the refusal does not say where (no match for {where!r})")
    for word in case.forbid:
        if word in message.lower():
            problems.append(f"the refusal's hint is misleading: it says {word!r}")
    return problems


def run_cases(cases: Iterable[Case], *, jobs: int, hard_stop: float = HARD_STOP) -> list[tuple[Case, dict[str, Any]]]:
    """``run_case`` over ``cases``, ``jobs`` at a time; in the order given."""
    cases = list(cases)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        reports = list(pool.map(lambda c: run_case(c, hard_stop=hard_stop), cases))
    return list(zip(cases, reports))


def _head(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def format_row(case: Case, report: dict[str, Any], problems: list[str], *, width: int = 110) -> str:
    outcome = report["outcome"]
    if outcome in ("refused", "error", "setup-error"):
        outcome = f"{outcome} {report.get('type', '')}"
        if report.get("phase", "compile") not in ("compile", "first mask"):
            outcome += f" @{report['phase']}"
    if report["outcome"] == "timeout":
        t = f">{report['wall_s']:.0f}"
    elif "compile_mask_s" not in report:
        t = "-"
    else:
        t = f"{report.get('compile_mask_s', 0.0):.3f}"
    verdict = "PASS" if not problems else "FAIL"
    text = report.get("message", "") if report["outcome"] != "ok" else f"{report.get('steps', 0)} steps ok"
    line = f"| {case.name} | {verdict} | {outcome} | {t} | {report.get('max_step_s', 0.0):.3f} | {_head(text, width)} |"
    return line + (" " + _head("; ".join(problems), 200) if problems else "") + " |"


def _engine() -> str:
    """Which tokstream the children import, and its git commit (``+dirty`` with local
    changes), for the table's footer."""
    where = subprocess.run(
        [sys.executable, "-c", "import tokstream, os; print(os.path.dirname(tokstream.__file__))"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    try:
        rev = subprocess.run(["git", "-C", where, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", where, "status", "--porcelain", "--", "."], capture_output=True, text=True)
    except OSError:
        return where
    if rev.returncode:
        return f"{where} (not a git checkout)"
    return f"{where} at {rev.stdout.strip()}" + ("+dirty" if dirty.stdout.strip() else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the pathological constraint cases and print a table.")
    parser.add_argument("-k", action="append", default=[], help="run only cases whose name contains this (repeatable)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2, help="cases run at once")
    parser.add_argument("--hard-stop", type=float, default=HARD_STOP, help="seconds before a child is killed")
    parser.add_argument("--list", action="store_true", help="list the case names and exit")
    parser.add_argument("--json", metavar="PATH", help="also write every report to this JSON file")
    args = parser.parse_args(argv)
    cases = [c for c in CASES if not args.k or any(k in c.name for k in args.k)]
    if args.list:
        print("\n".join(c.name for c in cases))
        return 0
    t = time.perf_counter()
    results = run_cases(cases, jobs=args.jobs, hard_stop=args.hard_stop)
    print("| case | verdict | outcome | compile+mask s | max step s | message head | problems |")
    print("|---|---|---|---|---|---|---|")
    failed = 0
    for case, report in results:
        problems = judge(case, report)
        failed += bool(problems)
        print(format_row(case, report, problems))
    print(
        f"\n{len(results) - failed} passed, {failed} failed, {len(results)} cases in "
        f"{time.perf_counter() - t:.0f} s ({args.jobs} jobs, budget {TIME_BUDGET:g} s, "
        f"cap {ADDRESS_SPACE >> 30} GiB, hard stop {args.hard_stop:g} s)\nengine: {_engine()}"
    )
    if args.json:
        Path(args.json).write_text(
            json.dumps([{"case": c.name, "problems": judge(c, r), **r} for c, r in results], indent=1)
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

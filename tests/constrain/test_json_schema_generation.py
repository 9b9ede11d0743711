"""``json_schema_constraint`` generates only valid JSON, and its masks are exact in the
direction a sampler can see: every allowed token can be completed to a valid instance.

The truth is ``json.loads`` and ``jsonschema`` (the validator class the schema's
``$schema`` names, with its format checker: tokstream asserts ``format``, each format
a subset of what that checker accepts), never tokstream's own output.

Schemas: the first ``PER_SPLIT`` schemas of each split of the JSONSchemaBench sample
(file order) of at most ``MAX_SCHEMA_CHARS`` characters that compile, the first
``N_RECURSIVE`` compiling ones with a recursive local ``$ref`` (a ``$ref`` whose target
reaches itself again through ``$ref``s), hand-written recursive schemas (``HAND``),
and for exactness the compiled groups of the draft 2020-12 JSON Schema Test Suite.

- Generation: from a fresh constraint (``eos_id`` = Llama 3's ``<|eot_id|>``), pick a
  random allowed token (uniform, or uniform over first bytes: ``pick``) until EOS, at most ``CAP`` tokens (a sample that hits the cap
  is not counted, but every one of its steps was allowed). A uniform pick favours
  long strings and deep nesting, so with probability ``CLOSING`` the pick is among the
  allowed tokens that close structures (``tier``): EOS when allowed, else tokens made
  of ``"`` ``}`` ``]`` only, else tokens holding one of ``" } ] ,`` and no opener or
  whitespace. Never outside ``allowed_ids()``. Every completed sample must parse and
  validate.
- Exactness: at states along random walks (and along valid suite instances), a
  random subset of the allowed tokens is taken one by one; after each, the constraint
  must never be dead (an empty ``allowed_ids()`` before ``can_end``) and a closing-
  biased completion must reach EOS within a budget (retried with a larger budget and
  full bias before it counts as a failure), with text that validates. When EOS is
  allowed, the text so far must validate. The converse on a sample: ids outside the
  mask are refused by ``accept`` and leave the state as it was.
"""

from __future__ import annotations

import functools
import json
import lzma
import random
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

import numpy as np
import pytest
from helpers import fixture_file, fixture_names, fixture_tokenizer

import tokstream
from tokstream.constrain.json_schema import json_schema_constraint
from tokstream.errors import TokstreamError, UnsupportedSchemaError

jsonschema = pytest.importorskip("jsonschema")

LLAMA3 = "hf/llama3_tokenizer.json"
EOS = 128009  # <|eot_id|>
BENCH = "jsonschemabench/schemas_sample.jsonl.xz"
SUITE = "json-schema-test-suite/tests/draft2020-12"
SPLITS = (
    "Github_easy",
    "Github_hard",
    "Github_medium",
    "Github_trivial",
    "Github_ultra",
    "Glaiveai2K",
    "JsonSchemaStore",
    "Kubernetes",
    "Snowplow",
    "WashingtonPost",
)
PER_SPLIT = 3
#: The largest schema (JSON characters) chosen per split (Github_ultra has none this small).
MAX_SCHEMA_CHARS: dict[str | None, int] = {None: 6000, "Github_ultra": 100_000}
N_RECURSIVE = 8
#: Random completions per schema (the issue: hundreds per schema, a few dozen schemas):
#: 10-45 s of CPU per schema on this machine, most of it the first visits of states.
SAMPLES = 200
MAX_RECURSIVE_CHARS = 4000
CAP = 400
CLOSING = 0.5

#: Hand-written recursive schemas.
HAND: dict[str, dict[str, Any]] = {
    "tree": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 8},
            "children": {"type": "array", "items": {"$ref": "#"}, "maxItems": 3},
        },
        "required": ["name"],
        "additionalProperties": False,
    },
    "linked_list": {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer", "minimum": -5, "maximum": 5},
                    "next": {"$ref": "#/$defs/node"},
                },
                "required": ["value"],
                "additionalProperties": False,
            }
        },
        "$ref": "#/$defs/node",
    },
    "expression": {
        "$defs": {
            "expr": {
                "anyOf": [
                    {"type": "number"},
                    {
                        "type": "object",
                        "properties": {
                            "op": {"enum": ["+", "-", "*"]},
                            "args": {"type": "array", "items": {"$ref": "#/$defs/expr"}, "minItems": 1, "maxItems": 2},
                        },
                        "required": ["op", "args"],
                        "additionalProperties": False,
                    },
                ]
            }
        },
        "$ref": "#/$defs/expr",
    },
    "mutual": {
        "$defs": {
            "a": {"type": "array", "items": {"$ref": "#/$defs/b"}, "maxItems": 2},
            "b": {
                "type": "object",
                "properties": {"tag": {"const": "b"}, "more": {"$ref": "#/$defs/a"}},
                "required": ["tag"],
                "additionalProperties": False,
            },
        },
        "$ref": "#/$defs/a",
    },
    "json_value": {
        "$defs": {
            "v": {
                "anyOf": [
                    {"type": ["null", "boolean", "integer"]},
                    {"type": "string", "pattern": "^[a-z]*$"},
                    {"type": "array", "items": {"$ref": "#/$defs/v"}},
                    {"type": "object", "additionalProperties": {"$ref": "#/$defs/v"}},
                ]
            }
        },
        "$ref": "#/$defs/v",
    },
}


# -- fixtures and schema choice ------------------------------------------------------


@pytest.fixture(scope="module")
def llama3() -> tokstream.Tokenizer:
    return fixture_tokenizer(LLAMA3)


@functools.cache
def token_bytes() -> tuple[bytes, ...]:
    """Each id's bytes (Llama 3 is byte-level; specials have none)."""
    return tuple(fixture_tokenizer(LLAMA3).vocab.index.token_bytes)


def per_split(split: str) -> int:
    """Schemas chosen from ``split``: Github_ultra's are large (18k-80k characters;
    seconds to compile), so one."""
    return 1 if split == "Github_ultra" else PER_SPLIT


def _tier(data: bytes) -> int:
    if not data:
        return 3
    if all(c in b'"}]' for c in data):
        return 0
    if any(c in b'"}],' for c in data) and not any(c in b"{[ \t\r\n" for c in data):
        return 1
    return 2


@functools.cache
def tiers() -> np.ndarray:
    """Per id: 0 pure closers, 1 other closing tokens, 2 the rest, 3 no bytes."""
    return np.array([_tier(b) for b in token_bytes()], dtype=np.int8)


@functools.cache
def first_bytes() -> np.ndarray:
    """Per id: its first byte (256 for none)."""
    return np.array([b[0] if b else 256 for b in token_bytes()], dtype=np.int16)


@functools.cache
def bench_rows() -> list[dict[str, Any]]:
    with lzma.open(fixture_file(BENCH), "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _compiles(tok: tokstream.Tokenizer, schema: Any) -> bool:
    try:
        json_schema_constraint(tok, schema, eos_id=EOS)
    except (UnsupportedSchemaError, TokstreamError):
        return False
    return True


def _local_refs(node: Any, out: set[str]) -> set[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#"):
            out.add(ref)
        for v in node.values():
            _local_refs(v, out)
    elif isinstance(node, list):
        for v in node:
            _local_refs(v, out)
    return out


def _resolve(root: Any, ref: str) -> Any:
    node = root
    if ref in ("#", "#/"):
        return root
    if not ref.startswith("#/"):
        return None
    for part in ref[2:].split("/"):
        part = unquote(part).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def is_recursive(schema: Any) -> bool:
    """Whether some local ``$ref``'s target reaches the same ``$ref`` again."""
    graph: dict[str, set[str]] = {}
    todo = list(_local_refs(schema, set()))
    while todo:
        ref = todo.pop()
        if ref not in graph:
            graph[ref] = _local_refs(_resolve(schema, ref), set())
            todo.extend(graph[ref])
    for start, first in graph.items():
        seen: set[str] = set()
        stack = list(first)
        while stack:
            x = stack.pop()
            if x == start:
                return True
            if x not in seen:
                seen.add(x)
                stack.extend(graph.get(x, ()))
    return False


@functools.cache
def split_schemas(split: str) -> tuple[tuple[str, Any], ...]:
    """The first ``PER_SPLIT`` compiling schemas of ``split`` of at most its
    ``MAX_SCHEMA_CHARS``, in file order."""
    tok = fixture_tokenizer(LLAMA3)
    out = []
    limit = MAX_SCHEMA_CHARS.get(split, MAX_SCHEMA_CHARS[None])
    for row in bench_rows():
        if row["split"] != split or len(json.dumps(row["schema"])) > limit:
            continue
        if _compiles(tok, row["schema"]):
            out.append((row["id"], row["schema"]))
            if len(out) == per_split(split):
                break
    return tuple(out)


@functools.cache
def recursive_schemas() -> tuple[tuple[str, Any], ...]:
    """The first ``N_RECURSIVE`` compiling schemas of the sample with a recursive
    ``$ref``, of at most ``MAX_RECURSIVE_CHARS`` characters."""
    tok = fixture_tokenizer(LLAMA3)
    out = []
    for row in bench_rows():
        schema = row["schema"]
        if len(json.dumps(schema)) <= MAX_RECURSIVE_CHARS and is_recursive(schema) and _compiles(tok, schema):
            out.append((row["id"], schema))
            if len(out) == N_RECURSIVE:
                break
    return tuple(out)


# -- the reference ---------------------------------------------------------------------


def validator(schema: Any) -> Any:
    # The latest draft for an unknown $schema (the suite's custom metaschemas).
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def check_valid(v: Any, data: bytes, what: str) -> None:
    """``data`` is JSON text (UTF-8) whose value ``v`` accepts."""
    __tracebackhide__ = True
    try:
        value = json.loads(data.decode("utf-8"))
    except ValueError as e:
        raise AssertionError(f"{what}: the output is not JSON ({e}): {data!r}") from None
    errors = list(v.iter_errors(value))
    assert not errors, f"{what}: the output does not validate: {errors[0].message}\n  output = {data!r}"


# -- sampling ---------------------------------------------------------------------------


def pick(allowed: np.ndarray, rng: random.Random, closing: float) -> int:
    """An id of ``allowed``: EOS when allowed (most of the time), then with
    probability ``closing`` a closing one, else uniform over the ids or (half the
    time, so that rare structure such as ``{`` among thousands of digit tokens is
    taken too) over their first bytes, then over the ids with that first byte."""
    if allowed[-1] == EOS and rng.random() < max(closing, 0.9):
        return EOS
    if rng.random() < closing:
        t = tiers()[allowed]
        for k in (0, 1):
            sel = allowed[t == k]
            if sel.size:
                return int(sel[rng.randrange(sel.size)])
    if rng.random() < 0.5:
        firsts = first_bytes()[allowed]
        byte = rng.choice(np.unique(firsts).tolist())
        allowed = allowed[firsts == byte]
    return int(allowed[rng.randrange(allowed.size)])


def run_to_eos(c: Any, rng: random.Random, cap: int, closing: float, what: str) -> list[int] | None:
    """Sample from ``c`` until EOS (then the ids before it) or ``cap`` ids (None).
    Every step must have a non-empty mask and take the id it picks."""
    out: list[int] = []
    tb = token_bytes()
    for _ in range(cap):
        allowed = c.allowed_ids()
        assert allowed.size, (
            f"{what}: dead state (nothing allowed, can_end={c.can_end}) after {b''.join(tb[i] for i in out)!r}"
        )
        t = pick(allowed, rng, closing)
        assert c.accept(t), f"{what}: id {t} of allowed_ids() refused by accept"
        if t == EOS:
            assert c.is_done
            return out
        out.append(t)
    return None


def text_of(ids: list[int]) -> bytes:
    tb = token_bytes()
    return b"".join(tb[i] for i in ids)


def generate(name: str, schema: Any, samples: int, seed: int) -> tuple[int, int]:
    """``samples`` random completions of ``schema``, each checked; (completed, capped)."""
    tok = fixture_tokenizer(LLAMA3)
    base = json_schema_constraint(tok, schema, eos_id=EOS)
    v = validator(schema)
    rng = random.Random(f"{name}/{seed}")
    done = capped = 0
    for k in range(samples):
        ids = run_to_eos(base.fork(), rng, CAP, CLOSING, f"{name} sample {k}")
        if ids is None:
            capped += 1
            continue
        check_valid(v, text_of(ids), f"{name} sample {k}")
        done += 1
    assert base.accepted == 0
    return done, capped


def _report(label: str, results: dict[str, tuple[int, int]]) -> None:
    done = sum(d for d, _ in results.values())
    print(f"{label}: {done} completed samples valid, {sum(c for _, c in results.values())} capped; {results}")


@pytest.mark.slow
@pytest.mark.parametrize(("split", "k"), [(split, k) for split in SPLITS for k in range(per_split(split))])
def test_generation_sample(split: str, k: int, llama3: tokstream.Tokenizer) -> None:
    """Random completions of the first small compiling schemas of each split are
    valid JSON that validates (``SAMPLES`` per schema, at least half of them reaching
    EOS)."""
    chosen = split_schemas(split)
    assert len(chosen) == per_split(split), f"{split}: only {len(chosen)} schemas compile: {[n for n, _ in chosen]}"
    name, schema = chosen[k]
    done, capped = generate(name, schema, samples=SAMPLES, seed=0)
    print(f"{name}: {done} completed samples valid, {capped} capped")
    assert done >= SAMPLES // 2, f"{name}: too few samples reached EOS ({done} of {SAMPLES})"


@pytest.mark.slow
@pytest.mark.parametrize("part", range(N_RECURSIVE))
def test_generation_recursive_sample(part: int, llama3: tokstream.Tokenizer) -> None:
    """The same on the sample's schemas with a recursive ``$ref`` (one per test)."""
    chosen = recursive_schemas()
    assert len(chosen) == N_RECURSIVE, f"only {len(chosen)} recursive schemas compile"
    mine = chosen[part : part + 1]
    results = {name: generate(name, schema, samples=SAMPLES, seed=1) for name, schema in mine}
    _report(f"recursive {part}", results)
    assert all(d >= SAMPLES // 2 for d, _ in results.values()), f"too few samples reached EOS: {results}"


def test_recursion_detection() -> None:
    """``is_recursive`` on its own (the choice above relies on it)."""
    assert all(is_recursive(s) for s in HAND.values())
    assert not is_recursive({"$defs": {"a": {"type": "integer"}}, "properties": {"x": {"$ref": "#/$defs/a"}}})
    assert is_recursive(
        {"$defs": {"a": {"items": {"$ref": "#/$defs/b"}}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}
    )


#: The nesting depth (containers; a scalar inside a container counts as one more
#: level) of a value that took the schema's recursion at least once.
RECURSED = {"tree": 4, "linked_list": 3, "expression": 3, "mutual": 5, "json_value": 2}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HAND))
def test_generation_hand_written(name: str, llama3: tokstream.Tokenizer) -> None:
    """Hand-written recursive schemas: ``SAMPLES`` random completions each (less closing
    bias, so they nest), all valid, and some of them take the recursion."""
    schema = HAND[name]
    base = json_schema_constraint(llama3, schema, eos_id=EOS)
    v = validator(schema)
    rng = random.Random(name)
    depths = []
    for k in range(SAMPLES):
        ids = run_to_eos(base.fork(), rng, CAP, 0.3, f"{name} sample {k}")
        if ids is None:
            continue
        data = text_of(ids)
        check_valid(v, data, f"{name} sample {k}")
        depths.append(_depth(json.loads(data)))
    print(f"{name}: {len(depths)} completed, depths {sorted(depths)}")
    assert len(depths) >= 75
    assert max(depths) >= RECURSED[name], f"{name}: no sample takes the recursion: {depths}"


def _depth(value: Any, inside: bool = False) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v, True) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v, True) for v in value), default=0)
    return int(inside)


# -- exactness -------------------------------------------------------------------------------


def complete(c: Any, v: Any, rng: random.Random, what: str) -> None:
    """``c`` (a fork, after some token) reaches EOS with valid text: a closing-biased
    completion within 150 tokens, else longer ones with less bias (a closing token
    may be allowed forever without ending anything: ``}`` in an email's local part),
    down to none (uniform over first bytes, ``pick``) within 1,500."""
    prefix = c.fork()
    for cap, closing in ((150, 0.8), (400, 0.5), (1000, 0.2), (1500, 0.0), (1500, 0.0)):
        ids = run_to_eos(prefix.fork(), rng, cap, closing, what)
        if ids is not None:
            check_valid(v, text_of(_ids_of(prefix) + ids), what)
            return
    raise AssertionError(f"{what}: no completion to EOS within the budgets after {text_of(_ids_of(prefix))!r}")


def _ids_of(c: Any) -> list[int]:
    """The ids ``c`` accepted so far (walk its state stack)."""
    return list(c._history)


class Tracked:
    """A constraint with the ids it accepted (for the texts in reports and checks)."""

    def __init__(self, c: Any, history: list[int] | None = None) -> None:
        self.c = c
        self._history = list(history or [])

    def fork(self) -> Tracked:
        return Tracked(self.c.fork(), self._history)

    def allowed_ids(self) -> np.ndarray:
        return self.c.allowed_ids()

    def accept(self, t: int) -> bool:
        ok = self.c.accept(t)
        if ok and t != EOS:
            self._history.append(t)
        return ok

    @property
    def can_end(self) -> bool:
        return self.c.can_end

    @property
    def is_done(self) -> bool:
        return self.c.is_done


def check_state(state: Tracked, v: Any, rng: random.Random, what: str, n_allowed: int, n_refused: int) -> None:
    """At ``state``: a random subset of allowed ids can each be completed to a valid
    instance; when EOS is allowed the text so far validates; random refused ids are
    refused by ``accept`` without a state change."""
    allowed = state.allowed_ids()
    here = text_of(state._history)
    assert allowed.size, f"{what}: dead state after {here!r}"
    assert (allowed[-1] == EOS) == state.can_end, f"{what}: EOS in mask != can_end after {here!r}"
    if state.can_end:
        check_valid(v, here, f"{what} (EOS allowed)")
    chosen = [int(t) for t in rng.sample(allowed.tolist(), min(n_allowed, allowed.size))]
    for t in chosen:
        f = state.fork()
        assert f.accept(t), f"{what}: allowed id {t} ({token_bytes()[t]!r}) refused by accept after {here!r}"
        if t == EOS:
            continue
        complete(f, v, rng, f"{what}: after {here!r} + {token_bytes()[t]!r}")
    mask = np.zeros(len(token_bytes()), dtype=bool)
    mask[allowed] = True
    refused = np.flatnonzero(~mask)
    before = state.c.accepted
    for t in rng.sample(refused.tolist(), min(n_refused, refused.size)):
        assert not state.c.accept(t), f"{what}: id {t} ({token_bytes()[t]!r}) outside the mask accepted after {here!r}"
        assert state.c.accepted == before
    assert np.array_equal(state.allowed_ids(), allowed)


def walk_states(schema: Any, rng: random.Random, n: int) -> Iterator[Tracked]:
    """``n`` states along one closing-biased random walk from the start (the start
    first), at random depths."""
    tok = fixture_tokenizer(LLAMA3)
    c = Tracked(json_schema_constraint(tok, schema, eos_id=EOS))
    states = [c.fork()]
    for _ in range(120):
        allowed = c.allowed_ids()
        if allowed.size == 1 and allowed[0] == EOS:
            break
        t = pick(allowed[allowed != EOS] if allowed[-1] == EOS else allowed, rng, CLOSING)
        assert c.accept(t)
        states.append(c.fork())
    yield states[0]
    yield from rng.sample(states[1:], min(n - 1, len(states) - 1))


@pytest.mark.slow
@pytest.mark.parametrize("split", SPLITS)
def test_exact_sample_split(split: str, llama3: tokstream.Tokenizer) -> None:
    """Allowed ids complete to valid instances, refused ids are refused, on states
    of random walks of each split's chosen schemas."""
    for name, schema in split_schemas(split)[:2]:
        rng = random.Random(f"exact/{name}")
        v = validator(schema)
        for k, state in enumerate(walk_states(schema, rng, 3)):
            check_state(state, v, rng, f"{name} state {k}", n_allowed=8, n_refused=20)


@pytest.mark.slow
def test_exact_recursive(llama3: tokstream.Tokenizer) -> None:
    """The same on recursive schemas: the hand-written ones and the sample's first three."""
    chosen = [*HAND.items(), *recursive_schemas()[:3]]
    for name, schema in chosen:
        rng = random.Random(f"exact/{name}")
        v = validator(schema)
        for k, state in enumerate(walk_states(schema, rng, 3)):
            check_state(state, v, rng, f"{name} state {k}", n_allowed=6, n_refused=20)


SUITE_FILES = fixture_names(SUITE, "*.json") or ["<json-schema-test-suite missing>"]


@pytest.mark.slow
@pytest.mark.parametrize("name", SUITE_FILES)
def test_exact_suite_file(name: str, llama3: tokstream.Tokenizer) -> None:
    """On the suite's compiled groups: states along the Llama 3 ids of each valid
    instance (the constraint accepts it) and along a random walk."""
    groups = json.loads(fixture_file(f"{SUITE}/{name}").read_text(encoding="utf-8"))
    rng = random.Random(f"suite/{name}")
    checked = 0
    for g in groups:
        schema = g["schema"]
        try:
            base = Tracked(json_schema_constraint(llama3, schema, eos_id=EOS))
        except (UnsupportedSchemaError, TokstreamError):
            continue
        v = validator(schema)
        what = f"{name} / {g['description']}"
        states = list(walk_states(schema, rng, 2))
        for case in g["tests"]:
            if not case["valid"]:
                continue
            ids = llama3.encode(json.dumps(case["data"]))
            c = base.fork()
            if not all(c.accept(t) for t in ids[: rng.randrange(len(ids) + 1)]):
                continue  # a documented departure (test_json_schema_suite.py)
            states.append(c)
        for k, state in enumerate(rng.sample(states, min(4, len(states)))):
            check_state(state, v, rng, f"{what} state {k}", n_allowed=5, n_refused=10)
            checked += 1
    print(f"{name}: {checked} states checked")


@pytest.mark.parametrize(
    "draft", ["http://json-schema.org/draft-04/schema#", "https://json-schema.org/draft/2020-12/schema"]
)
@pytest.mark.parametrize("text", ["493", "493.0", "-0", "-0.0", "1e2", "1.5", "10.00"])
def test_integer_spellings_by_draft(draft: str, text: str, llama3: tokstream.Tokenizer) -> None:
    """``type: integer`` under the schema's draft: a spelling the constraint takes is
    an integer for ``jsonschema``'s validator of that draft (draft 4: no fraction
    part at all; from draft 6 on: any number with a zero fraction)."""
    schema = {"$schema": draft, "type": "integer"}
    c = json_schema_constraint(llama3, schema, eos_id=EOS)
    taken = all(c.accept(t) for t in llama3.encode(text)) and c.can_end
    if taken:
        check_valid(validator(schema), text.encode(), f"{draft} integer {text!r}")

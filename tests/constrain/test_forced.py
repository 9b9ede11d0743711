"""Fast-forward: ``Constraint.forced_bytes`` and ``Constraint.forced_ids``.

Every expectation comes from a reference, never from tokstream's own output:

- Bytes, regexes and Lark grammars: the Earley oracle (``grammar_oracle``: Python's own
  regex parser, Lark's own compiled BNF) says which next bytes are viable. Each forced
  byte must be the only viable one, the output must not be complete before it, and
  after the last one the output is complete or two bytes are viable (nothing more was
  forced). The output the random walk goes on to generate must start with the forced
  bytes of every state it passed.
- Bytes, JSON Schemas (hand-written, and the first compiling schemas of some splits of
  the JSONSchemaBench sample, a slow test): the same per byte against the masks (``allowed_ids``,
  the walker's code path, not ``ESet.step``), stepping with one-byte tokens: the
  allowed tokens' first bytes must be exactly the forced byte, and no EOS.
- Ids: the reference encoders (tiktoken for o200k_base, Hugging Face ``tokenizers``
  for Llama 3) encode the forced bytes' whole characters up to ``stable_boundary``
  (the documented rule); ``forced_ids`` must be exactly that, the reference's ids of
  that text plus any continuation (drawn, and the walk's own) must start with them,
  each must be accepted in turn, and after them the forced bytes are what was left.
- Prefix, choice and healing constraints, and the generic default: expectations
  written out by hand from the options' bytes and the pre-tokenizer's pieces.

The regexes and grammars written for forced runs run by default; the oracle's general
ones (``grammar_oracle.REGEXES`` / ``GRAMMARS``) and the benchmark's schemas are marked
slow (``pytest --run-slow``, as CI does).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from grammar_oracle import GRAMMARS, REGEXES, Oracle, lark_oracle, regex_oracle
from helpers import fixture_file, fixture_tokenizer, hf_reference, public_token_bytes, tiktoken_reference
from hypothesis import given
from hypothesis import strategies as st
from strategies import adversarial_text, hyp_settings

import tokstream
from tokstream.constrain.constraint import ChoiceConstraint, Constraint, PrefixConstraint
from tokstream.errors import TokstreamError

O200K = "o200k_base"
LLAMA3 = "hf/llama3_tokenizer.json"
TIDS = (O200K, LLAMA3)
EOS_NAMES = {O200K: "<|endoftext|>", LLAMA3: "<|end_of_text|>"}

#: Regexes with forced runs: literals between choices, a choice that splits inside a
#: character (本 E6 9C AC / 曜 E6 9B 9C; 👋 F0 9F 91 8B / 👍 F0 9F 91 8D), optional parts.
FORCED_REGEXES = {
    "record": r'\{"name": "[a-z]{1,8}", "age": [0-9]{1,3}\}',
    "split_char": r"(日本|日曜)(です|でした)?",
    "emoji": r"(👋|👍) (hello|help)",
    "url": r"https://(www\.)?example\.(com|org)/[a-z]{1,6}",
    "branches": r"(abc|abd)ef(g|h)+x",
    "call": r'get_weather\(city="[A-Z][a-z]{1,8}", unit="(celsius|fahrenheit)"\)',
}
ALL_REGEXES = {**REGEXES, **FORCED_REGEXES}

FORCED_GRAMMARS = {
    "sql": r"""
start: "SELECT " cols " FROM " NAME ";"
cols: NAME ("," " " NAME)*
NAME: /[a-z]{1,6}/
""",
    "tool": r"""
start: "<tool>" call "</tool>"
call: "{\"name\": \"" NAME "\", \"arguments\": {" [pair ("," " " pair)*] "}}"
pair: "\"" NAME "\": " NUMBER
NAME: /[a-z_]{1,8}/
NUMBER: /[0-9]{1,4}/
""",
}
ALL_GRAMMARS = {**GRAMMARS, **FORCED_GRAMMARS}

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 6},
        "age": {"type": "integer", "minimum": 0, "maximum": 130},
        "role": {"enum": ["admin", "author"]},
    },
    "required": ["name", "age", "role"],
    "additionalProperties": False,
}
BENCH_SPLITS = ("Github_easy", "Glaiveai2K", "Kubernetes")
BENCH_PER_SPLIT = 2
SINGLES = [bytes([b]) for b in range(256)]


# -- references ------------------------------------------------------------------------


def eos_of(tid: str) -> int:
    return int(fixture_tokenizer(tid).special_tokens[EOS_NAMES[tid]])


@functools.cache
def reference(tid: str) -> Callable[[str], list[int]]:
    """The reference library's ids of a text (no BOS; special tokens' literals as text)."""
    if tid == O200K:
        enc = tiktoken_reference(O200K)
        return lambda text: list(enc.encode(text, disallowed_special=()))
    ref = hf_reference(fixture_file(tid))
    return lambda text: list(ref.encode(text, add_special_tokens=False).ids)


@functools.cache
def first_bytes(tid: str) -> np.ndarray:
    """Per id: its first byte, 256 for an id without bytes (EOS and other specials)."""
    return np.array([t[0] if t else 256 for t in public_token_bytes(tid)], dtype=np.int16)


@functools.cache
def single_byte_ids(tid: str) -> dict[int, int]:
    """Byte value -> the id of the token made of that byte alone (byte-level vocabularies
    have all 256)."""
    out = {t[0]: i for i, t in enumerate(public_token_bytes(tid)) if len(t) == 1}
    assert len(out) == 256, f"{tid} lacks single-byte tokens"
    return out


def whole_chars(data: bytes) -> str:
    """The longest prefix of ``data`` that is whole UTF-8 characters, decoded."""
    for k in range(len(data), max(len(data) - 4, -1), -1):
        try:
            return data[:k].decode("utf-8")
        except UnicodeDecodeError:
            continue
    raise AssertionError(f"{data!r} does not start with whole characters")


@functools.lru_cache(maxsize=1 << 16)
def _viable_next(oracle: Oracle, data: bytes) -> tuple[int, ...]:
    """The bytes that may follow ``data`` (cached: the states of a walk, and of the
    examples, share their forced runs)."""
    return tuple(np.flatnonzero(oracle.viable_many(data, SINGLES)).tolist())


@functools.lru_cache(maxsize=1 << 16)
def _complete(oracle: Oracle, data: bytes) -> bool:
    return oracle.complete(data)


# -- the checks ------------------------------------------------------------------------


def check_bytes_by_oracle(c: Constraint[Any], oracle: Oracle, out: bytes) -> None:
    """``c.forced_bytes()`` at output ``out`` against the oracle (module notes)."""
    __tracebackhide__ = True
    forced = c.forced_bytes()
    complete = _complete(oracle, out)
    assert bool(c.can_end) == complete, (out, c.can_end)
    if complete:
        assert forced == b"", f"output {out!r} is complete, yet {forced!r} is forced"
        return
    for j in range(len(forced)):
        here = out + forced[:j]
        assert _viable_next(oracle, here) == (forced[j],), f"after {here!r}: byte {forced[j]:#x} is not the only one"
        assert j == 0 or not _complete(oracle, here), f"{here!r} is complete inside the forced {forced!r}"
    end = out + forced
    nxt = _viable_next(oracle, end)
    assert _complete(oracle, end) or len(nxt) >= 2, f"after {end!r} only {nxt} may follow: more is forced"


def check_bytes_by_mask(c: Constraint[Any], tid: str) -> None:
    """``c.forced_bytes()`` against the masks, stepping a fork byte by byte with
    one-byte tokens (module notes)."""
    __tracebackhide__ = True
    forced = c.forced_bytes()
    table = public_token_bytes(tid)
    first = first_bytes(tid)
    single = single_byte_ids(tid)
    if forced:
        # Every token allowed now is prefix-compatible with the forced bytes.
        for i in c.allowed_ids().tolist():
            t = table[i]
            assert t and t[: len(forced)] == forced[: len(t)], f"id {i} {t!r} is allowed against forced {forced!r}"
    probe = c.fork()
    for j, b in enumerate(forced):
        firsts = np.unique(first[probe.allowed_ids()]).tolist()
        assert firsts == [b], f"forced {forced!r}, byte {j}: the mask allows first bytes {firsts}"
        assert not probe.can_end
        assert probe.accept(single[b])
    firsts = np.unique(first[probe.allowed_ids()]).tolist()
    assert probe.can_end or probe.is_done or len(firsts) >= 2, f"after {forced!r} the mask allows only {firsts}"


def check_ids(c: Constraint[Any], tid: str, suffixes: list[str]) -> list[int]:
    """``c.forced_ids()`` against the reference encoder (module notes); returns them."""
    __tracebackhide__ = True
    forced = c.forced_bytes()
    ids = c.forced_ids()
    if not forced or 0x80 <= forced[0] < 0xC0:
        assert ids == [], f"forced {forced!r} gives ids {ids}"
        return ids
    text = whole_chars(forced)
    ref = reference(tid)
    cut = fixture_tokenizer(tid).stable_boundary(text, disallowed_special=())
    assert ids == (ref(text[:cut]) if cut else []), (forced, text[:cut])
    for s in suffixes:
        got = ref(text + s)
        assert got[: len(ids)] == ids, f"{text!r} + {s!r} encodes to {got}, which does not start with {ids}"
    table = public_token_bytes(tid)
    spelled = b"".join(table[i] for i in ids)
    assert forced.startswith(spelled)
    probe = c.fork()
    for i in ids:
        assert probe.accept(i), f"forced id {i} refused"
    assert probe.forced_bytes() == forced[len(spelled) :]
    assert probe.can_end or len(probe.allowed_ids()) > 0
    return ids


def walk(
    c: Constraint[Any], tid: str, data: st.DataObject, *, steps: int, eos: int | None
) -> tuple[list[tuple[Constraint[Any], bytes]], bytes, bool]:
    """A random walk drawn by hypothesis: at each step take the forced ids (when there
    are any and the draw says so, as a server would) or one allowed id. Returns the
    states passed (a fork and the output there), the final output and whether EOS
    ended it."""
    table = public_token_bytes(tid)
    states: list[tuple[Constraint[Any], bytes]] = []
    out = b""
    for _ in range(steps):
        states.append((c.fork(), out))
        if c.is_done:
            break
        forced = c.forced_ids()
        if forced and data.draw(st.booleans(), label="fast-forward"):
            for i in forced:
                assert c.accept(i)
                out += table[i]
            continue
        allowed = c.allowed_ids()
        pool = allowed[allowed != eos] if eos is not None else allowed
        if eos is not None and c.can_end and (not len(pool) or data.draw(st.integers(0, 2), label="eos") == 0):
            assert c.accept(eos)
            return states, out, True
        if not len(pool):
            break
        t = int(pool[data.draw(st.integers(0, len(pool) - 1), label="token")])
        assert c.accept(t)
        out += table[t]
    return states, out, False


def check_walk(states: list[tuple[Constraint[Any], bytes]], final: bytes, ended: bool, tid: str) -> None:
    """The walk's own output after each state starts with that state's forced bytes,
    and (a complete output) its reference ids start with the state's forced ids."""
    __tracebackhide__ = True
    for c, out in states:
        forced = c.forced_bytes()
        rest = final[len(out) :]
        assert rest.startswith(forced) or (not ended and forced.startswith(rest)), (out, forced, rest)
        ids = c.forced_ids()
        if ended and ids:
            got = reference(tid)(rest.decode("utf-8"))
            assert got[: len(ids)] == ids, f"the walk went on with {rest!r}: ids {got}, forced {ids}"


# -- regexes and grammars: the oracle ---------------------------------------------------


@functools.cache
def _regex_oracle(name: str) -> Oracle:
    return regex_oracle(ALL_REGEXES[name])


@functools.cache
def _lark_oracle(name: str) -> Oracle:
    return lark_oracle(ALL_GRAMMARS[name])


def _suffixes(data: st.DataObject) -> list[str]:
    return [data.draw(adversarial_text(max_fragments=4, surrogates_ok=False), label="suffix") for _ in range(2)]


def _names(forced: dict[str, str], general: dict[str, str]) -> list[Any]:
    """The forced-run cases by default; the oracle's general ones are slow (CI runs them)."""
    return [*sorted(forced), *(pytest.param(n, marks=pytest.mark.slow) for n in sorted(general))]


def _check_forced_walk(c: Constraint[Any], oracle: Oracle, tid: str, eos: int, data: st.DataObject) -> None:
    """A drawn walk of ``c``: at every state the forced bytes by the oracle and the
    forced ids by the tokenizer, then the walk's own checks."""
    states, final, ended = walk(c, tid, data, steps=10, eos=eos)
    suffixes = _suffixes(data)
    for state, out in states:
        check_bytes_by_oracle(state, oracle, out)
        check_ids(state, tid, suffixes)
    check_walk(states, final, ended, tid)


@pytest.mark.parametrize("tid", TIDS)
@pytest.mark.parametrize("name", _names(FORCED_REGEXES, REGEXES))
@given(data=st.data())
@hyp_settings(6)
def test_regex_forced(tid: str, name: str, data: st.DataObject) -> None:
    eos = eos_of(tid)
    c = tokstream.regex_constraint(fixture_tokenizer(tid), ALL_REGEXES[name], eos_id=eos)
    _check_forced_walk(c, _regex_oracle(name), tid, eos, data)


@pytest.mark.parametrize("tid", TIDS)
@pytest.mark.parametrize("name", _names(FORCED_GRAMMARS, GRAMMARS))
@given(data=st.data())
@hyp_settings(6)
def test_grammar_forced(tid: str, name: str, data: st.DataObject) -> None:
    eos = eos_of(tid)
    c = tokstream.grammar_constraint(fixture_tokenizer(tid), ALL_GRAMMARS[name], eos_id=eos)
    _check_forced_walk(c, _lark_oracle(name), tid, eos, data)


@pytest.mark.parametrize("tid", TIDS)
def test_regex_forced_without_eos(tid: str) -> None:
    """Without an eos_id a complete output forces nothing either (the caller may stop
    it); the oracle checks the rest."""
    tok = fixture_tokenizer(tid)
    pattern = r"ab(cd)?ef"
    oracle = regex_oracle(pattern)
    c = tokstream.regex_constraint(tok, pattern)
    check_bytes_by_oracle(c, oracle, b"")
    single = single_byte_ids(tid)
    out = b""
    for b in b"abcdef":
        assert c.accept(single[b])
        out += bytes([b])
        check_bytes_by_oracle(c, oracle, out)
    assert c.can_end and c.forced_bytes() == b"" and c.forced_ids() == []


# -- JSON Schemas: the masks --------------------------------------------------------------


@functools.cache
def bench_schemas() -> tuple[tuple[str, Any], ...]:
    from test_json_schema_generation import split_schemas

    return tuple(s for split in BENCH_SPLITS for s in split_schemas(split)[:BENCH_PER_SPLIT])


def _schema_cases() -> list[Any]:
    cases = [pytest.param("person", PERSON, None, id="person"), pytest.param("person", PERSON, "compact", id="compact")]
    n = len(BENCH_SPLITS) * BENCH_PER_SPLIT
    cases += [pytest.param("bench", k, None, id=f"bench{k}", marks=pytest.mark.slow) for k in range(n)]
    return cases


@pytest.mark.parametrize(("kind", "schema", "whitespace"), _schema_cases())
@given(data=st.data())
@hyp_settings(5)
def test_json_schema_forced(kind: str, schema: Any, whitespace: str | None, data: st.DataObject) -> None:
    tid = LLAMA3
    tok = fixture_tokenizer(tid)
    if kind == "bench":
        found = bench_schemas()
        if schema >= len(found):
            pytest.skip("fewer compiling schemas in the sample")
        schema = found[schema][1]
    eos = eos_of(tid)
    c = tokstream.json_schema_constraint(tok, schema, eos_id=eos, whitespace=whitespace)
    states, final, ended = walk(c, tid, data, steps=16, eos=eos)
    suffixes = _suffixes(data)
    for state, _ in states:
        check_bytes_by_mask(state, tid)
        check_ids(state, tid, suffixes)
    check_walk(states, final, ended, tid)


def test_json_schema_forced_by_hand() -> None:
    """Compact whitespace: the schema's first property is forced; with the default
    flexible whitespace only the brace (whitespace or a quote may follow it)."""
    tok = fixture_tokenizer(LLAMA3)
    compact = tokstream.json_schema_constraint(tok, PERSON, whitespace="compact")
    assert compact.forced_bytes() == b'{"name":"'
    flexible = tokstream.json_schema_constraint(tok, PERSON)
    assert flexible.forced_bytes() == b"{"
    # '{' is the last piece of '{': it may merge with a following '"' ('{"'): no id.
    assert flexible.forced_ids() == []


# -- prefix, choice, healing: by hand ---------------------------------------------------------


def _accept_text(c: Constraint[Any], tid: str, data: bytes) -> None:
    single = single_byte_ids(tid)
    for b in data:
        assert c.accept(single[b])


@pytest.mark.parametrize("tid", TIDS)
def test_choice_by_hand(tid: str) -> None:
    tok = fixture_tokenizer(tid)
    ref = reference(tid)
    eos = eos_of(tid)
    c = tokstream.choice_constraint(tok, ["yes", "yesterday", "no"], eos_id=eos)
    assert c.forced_bytes() == b""  # y or n
    _accept_text(c, tid, b"y")
    # yes and yesterday go on with "es"; then "yes" is complete (EOS may follow).
    assert c.forced_bytes() == b"es"
    assert c.forced_ids() == []  # "es" is one piece, the last: "esterday" would merge it
    _accept_text(c, tid, b"es")
    assert c.can_end and c.forced_bytes() == b""
    _accept_text(c, tid, b"t")
    assert c.forced_bytes() == b"erday"

    # The pieces of '{"name": "' are '{"', 'name', '":', ' "'; the last may merge with
    # what follows, the others are final.
    c = tokstream.choice_constraint(tok, ['{"name": "Ada"}', '{"name": "Bob"}'], eos_id=eos)
    assert c.forced_bytes() == b'{"name": "'
    want = ref('{"name":')
    assert c.forced_ids() == want
    assert ref('{"name": "Ada"}')[: len(want)] == want == ref('{"name": "Bob"}')[: len(want)]
    for i in want:
        assert c.accept(i)
    assert c.forced_bytes() == b' "' and c.forced_ids() == []

    # 日 is E6 97 A5, 本 E6 9C AC, 曜 E6 9B 9C: the lead byte E6 is forced too, and only
    # whole characters get ids ("日" alone is a last piece: none).
    c = tokstream.choice_constraint(tok, ["日本", "日曜"])
    assert c.forced_bytes() == b"\xe6\x97\xa5\xe6"
    assert c.forced_ids() == []
    _accept_text(c, tid, b"\xe6\x97\xa5")
    assert c.forced_bytes() == b"\xe6" and c.forced_ids() == []
    _accept_text(c, tid, b"\xe6")
    assert c.forced_bytes() == b""  # 9C or 9B
    # Inside a character, forced continuation bytes get no ids.
    c = tokstream.choice_constraint(tok, ["本"])
    _accept_text(c, tid, b"\xe6")
    assert c.forced_bytes() == b"\x9c\xac" and c.forced_ids() == []

    # Without an eos_id: a complete option that another extends forces nothing.
    c = tokstream.choice_constraint(tok, ["a", "ab"])
    assert c.forced_bytes() == b"a"
    _accept_text(c, tid, b"a")
    assert c.can_end and c.forced_bytes() == b""
    # Done (nothing restricted any more): nothing forced.
    c = tokstream.choice_constraint(tok, ["abc"])
    assert c.forced_bytes() == b"abc"
    _accept_text(c, tid, b"abc")
    assert c.is_done and c.forced_bytes() == b"" and c.forced_ids() == []


@pytest.mark.parametrize("tid", TIDS)
def test_prefix_by_hand(tid: str) -> None:
    tok = fixture_tokenizer(tid)
    ref = reference(tid)
    # The pieces are "Hello" and " wor"; " wor" may become " world".
    c = tokstream.prefix_constraint(tok, b"Hello wor")
    assert c.forced_bytes() == b"Hello wor"
    assert c.forced_ids() == ref("Hello")
    assert c.accept(ref("Hello")[0])
    assert c.forced_bytes() == b" wor" and c.forced_ids() == []
    assert c.accept(ref(" world")[0])
    assert c.is_done and c.forced_bytes() == b""

    # Ending inside 本: "Hello 日" are the whole characters; " 日" is the last piece.
    data = "Hello 日本".encode()[:-2]
    c = tokstream.prefix_constraint(tok, data)
    assert c.forced_bytes() == data
    assert c.forced_ids() == ref("Hello")

    # Met inside a character: the continuation bytes span a range, nothing is forced.
    c = tokstream.prefix_constraint(tok, "日".encode()[:2])
    _accept_text(c, tid, "日".encode()[:2])
    assert not c.is_done and c.forced_bytes() == b""


@pytest.mark.parametrize("tid", TIDS)
def test_healing_by_hand(tid: str) -> None:
    tok = fixture_tokenizer(tid)
    h = tokstream.heal(tok, tok.encode("Visit https://exa"), max_backoff=2)
    assert h.removed and h.prefix and b"https://exa".endswith(h.prefix)
    c = h.constraint()
    assert c.forced_bytes() == h.prefix
    # The removed bytes are the last piece of the text, or in it: never final.
    assert c.forced_ids() == []


def test_without_a_tokenizer() -> None:
    """A constraint built from a bare index computes its bytes; ids need the tokenizer."""
    tok = fixture_tokenizer(O200K)
    c = PrefixConstraint(tok.vocab.index, b"ab")
    assert c.forced_bytes() == b"ab"
    with pytest.raises(TokstreamError, match="without its tokenizer"):
        c.forced_ids()
    with pytest.raises(TokstreamError, match="does not have this constraint's vocabulary"):
        PrefixConstraint(tok.vocab.index, b"ab", tok=fixture_tokenizer(LLAMA3))


class _GenericChoice(ChoiceConstraint):
    """A choice constraint with the ABC's generic ``_forced`` (read from the masks)."""

    __slots__ = ()
    _forced = Constraint._forced


@pytest.mark.parametrize("tid", TIDS)
def test_generic_default_by_hand(tid: str) -> None:
    """The masks at the start allow every token that is a prefix of an option's rest:
    "h", "he", ..., so the generic rule goes on one common prefix at a time to
    "hello " and stops where "w" and "t" part."""
    tok = fixture_tokenizer(tid)
    index = tok.vocab.index
    eos = eos_of(tid)
    c = _GenericChoice(index, (b"hello world", b"hello there"), eos, tok=tok)
    assert c.forced_bytes() == b"hello "
    assert c.forced_ids() == reference(tid)("hello")
    _accept_text(c, tid, b"hello world")
    assert c.can_end and c.forced_bytes() == b""  # EOS is allowed: an id without bytes
    c = _GenericChoice(index, ("日本".encode(), "日曜".encode()), None, tok=tok)
    assert c.forced_bytes() == b"\xe6\x97\xa5\xe6"

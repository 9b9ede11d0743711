"""Regex and grammar constraints are exact: along seeded random walks, a token is
allowed if and only if the output plus its bytes is a viable prefix of the language
(``grammar_oracle``, an Earley recognizer sharing no code with the engine), ``eos_id``
is allowed exactly when the output is complete, and ``can_end`` says the same.

The oracle is first checked on its own (against ``re.fullmatch`` and Lark over every
short string of small alphabets). Then, on o200k_base, Llama 3, Mistral (byte
fallback) and BERT:

- random regexes over ``"abc"`` (hypothesis), the realistic regexes of
  ``grammar_oracle.REGEXES`` and the grammars of ``GRAMMARS``;
- what is compared per state: every id of the vocabulary when we allow fewer than
  ``FULL_BELOW`` ids (the oracle's sorted-prefix walk is then cheap); otherwise (a
  state inside a string, where nearly everything is allowed) ``SAMPLE`` random ids of
  the vocabulary plus ``SAMPLE`` random ids of those we allow. The first state of
  every walk is always compared in full.
- BERT spells only strings over its single-character tokens (no space, no capitals):
  the oracle's character sets are cut to that alphabet (``token_alphabet``), so its
  viability is viability by tokens. The random regexes use ``"abc"``, single tokens
  in BERT, so there viability by bytes and by tokens coincide.

Walks that end with EOS also check the generation property with ``re.fullmatch`` or
Lark (``parser="earley", lexer="dynamic_complete"``) directly.
"""

from __future__ import annotations

import itertools
import random
import re
from typing import Any

import pytest
from grammar_oracle import (
    EXACT_TIDS,
    GRAMMARS,
    REGEXES,
    alphabet_of,
    eos_of,
    lark_oracle,
    regex_oracle,
    walk,
)
from helpers import fixture_tokenizer, public_token_bytes
from hypothesis import given
from hypothesis import strategies as st
from strategies import hyp_settings

import tokstream

# -- the oracle on its own ----------------------------------------------------------------


@pytest.mark.parametrize(
    "pattern", [r"a(b|c)*", r"(ab|a)c?", r"a{2,4}b", r"[^a]b*", r"(a|b)*abb", r"", r"(?:ab)+|c", r"\d-\w", r"é|ü+"]
)
def test_oracle_matches_re_fullmatch(pattern: str) -> None:
    """Oracle membership equals ``re.fullmatch`` on every string of up to 5 characters
    over a small alphabet, and a string is viable when a member extends it."""
    o = regex_oracle(pattern)
    strings = ["".join(s) for n in range(6) for s in itertools.product("abcé-1", repeat=n)]
    members = [s for s in strings if re.fullmatch(pattern, s)]
    for s in strings:
        assert o.complete(s.encode()) == (s in members), (pattern, s)
        if len(s) <= 2 and any(m.startswith(s) for m in members):
            assert o.viable(s.encode()), (pattern, s)
    # bytes ending inside a character: viable exactly when a member continues them
    for m in members:
        data = m.encode()
        for j in range(len(data) + 1):
            assert o.viable(data[:j]), (pattern, data[:j])
    assert not o.viable(b"\xff") and not o.viable(b"\x80")


@pytest.mark.slow
def test_oracle_categories_match_re() -> None:
    """The oracle's ``\\d \\w \\s`` equal Python ``re``'s on a sample of code points."""
    rng = random.Random(5)
    cps = list(range(0x3000)) + [rng.randrange(0x110000) for _ in range(3000)]
    cps = [c for c in cps if not 0xD800 <= c <= 0xDFFF]
    for cls in (r"\d", r"\w", r"\s", r"\D", r"\W", r"\S", r"."):
        o = regex_oracle(cls)
        for c in cps:
            assert o.complete(chr(c).encode()) == bool(re.fullmatch(cls, chr(c))), (cls, hex(c))


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_oracle_matches_lark(name: str) -> None:
    """Oracle membership equals Lark's (earley, dynamic_complete) on every string of
    up to 4 characters over the grammar's characters."""
    lark = pytest.importorskip("lark")
    text = GRAMMARS[name]
    parser = lark.Lark(text, parser="earley", lexer="dynamic_complete")
    o = lark_oracle(text)
    alphabet = {"arith": "1+*( -.e", "lists": '[],a "'}[name]
    for n in range(5):
        for chars in itertools.product(alphabet, repeat=n):
            s = "".join(chars)
            try:
                parser.parse(s)
                ok = True
            except lark.exceptions.LarkError:
                ok = False
            assert o.complete(s.encode()) == ok, (name, s)


def test_oracle_by_tokens_on_bert() -> None:
    """BERT's tokens are strings of its single-character tokens, and the cut alphabet
    has no space and no capitals."""
    alphabet = alphabet_of("hf/bert_minilm_tokenizer.json")
    assert alphabet is not None
    o = regex_oracle(r"[A-Z ]|a", alphabet)
    assert not o.viable(b"A") and not o.viable(b" ") and o.viable(b"a")
    assert alphabet_of("o200k_base") is None and alphabet_of("hf/mistral_7b_v1_tokenizer.json") is None


# -- random regexes -----------------------------------------------------------------------------


def _regexes(alphabet: str) -> st.SearchStrategy[str]:
    """Random regexes over ``alphabet``: literals, classes, ``.``, concatenation,
    alternation and the quantifiers."""
    leaf = st.one_of(
        st.sampled_from(list(alphabet)),
        st.lists(st.sampled_from(list(alphabet)), min_size=1, max_size=2, unique=True).map(
            lambda cs: "[" + "".join(cs) + "]"
        ),
        st.sampled_from(list(alphabet)).map(lambda ch: f"[^{ch}]"),
        st.just("."),
    )

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.lists(inner, min_size=2, max_size=3).map("".join),
            st.lists(inner, min_size=2, max_size=3).map(lambda xs: "(?:" + "|".join(xs) + ")"),
            st.tuples(inner, st.sampled_from(["*", "+", "?", "{2}", "{1,3}", "{0,2}", "{2,}"])).map(
                lambda t: f"(?:{t[0]}){t[1]}"
            ),
        )

    return st.recursive(leaf, extend, max_leaves=8)


@pytest.mark.slow
@pytest.mark.parametrize("tid", EXACT_TIDS)
@hyp_settings(12)
@given(pattern=_regexes("abc"), seed=st.integers(0, 2**32 - 1))
def test_random_regexes_are_exact(tid: str, pattern: str, seed: int) -> None:
    """Random regexes over ``"abc"``: masks equal the oracle along a random walk."""
    tok = fixture_tokenizer(tid)
    oracle = regex_oracle(pattern, alphabet_of(tid))
    eos = eos_of(tid)
    c = tokstream.regex_constraint(tok, pattern, eos_id=eos)
    out, ended = walk(c, oracle, tid, seed, eos=eos, steps=8)
    if ended:
        assert re.fullmatch(pattern, out.decode()), (pattern, out)


# -- the realistic regexes and the grammars ------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("tid", EXACT_TIDS)
@pytest.mark.parametrize("name", sorted(REGEXES))
def test_realistic_regexes_are_exact(tid: str, name: str) -> None:
    """Dates, emails, numbers, quoted strings, a CJK alternative, words: masks equal
    the oracle along three seeded walks; an output ended by EOS fullmatches."""
    pattern = REGEXES[name]
    tok = fixture_tokenizer(tid)
    oracle = regex_oracle(pattern, alphabet_of(tid))
    eos = eos_of(tid)
    for seed in range(3):
        c = tokstream.regex_constraint(tok, pattern, eos_id=eos)
        out, ended = walk(c, oracle, tid, seed, eos=eos, steps=12)
        if ended:
            assert re.fullmatch(pattern, out.decode()), (pattern, out)


@pytest.mark.slow
@pytest.mark.parametrize("tid", EXACT_TIDS)
@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_grammars_are_exact(tid: str, name: str) -> None:
    """Arithmetic (left recursion, ``%ignore``) and nested lists: masks equal the
    oracle along three seeded walks; an output ended by EOS parses with Lark."""
    lark = pytest.importorskip("lark")
    text = GRAMMARS[name]
    tok = fixture_tokenizer(tid)
    oracle = lark_oracle(text, alphabet_of(tid))
    parser = lark.Lark(text, parser="earley", lexer="dynamic_complete")
    eos = eos_of(tid)
    for seed in range(3):
        c = tokstream.grammar_constraint(tok, text, eos_id=eos)
        out, ended = walk(c, oracle, tid, seed, eos=eos, steps=12)
        if ended:
            parser.parse(out.decode())


@pytest.mark.parametrize("tid", ["o200k_base", "hf/mistral_7b_v1_tokenizer.json"])
def test_regex_without_eos_and_with_prefix(tid: str) -> None:
    """Without ``eos_id`` no special id is ever allowed; with a ``prefix`` the output
    is the prefix, then the pattern (the oracle's language is ``prefix`` + pattern)."""
    tok = fixture_tokenizer(tid)
    pattern = REGEXES["number"]
    c = tokstream.regex_constraint(tok, pattern)
    walk(c, regex_oracle(pattern), tid, 1, eos=None, steps=6)
    prefix = b"x = "
    c = tokstream.regex_constraint(tok, pattern, eos_id=eos_of(tid), prefix=prefix)
    oracle = regex_oracle(re.escape(prefix.decode()) + "(?:" + pattern + ")")
    out, ended = walk(c, oracle, tid, 2, eos=eos_of(tid), steps=12)
    assert out.startswith(prefix) or prefix.startswith(out)
    if ended:
        assert re.fullmatch(pattern, out[len(prefix) :].decode()), out


# -- generation property: longer walks, judged by re and Lark only ------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("tid", ["o200k_base", "hf/llama3_tokenizer.json", "hf/mistral_7b_v1_tokenizer.json"])
@hyp_settings(20)
@given(data=st.data())
def test_generation_fullmatches(tid: str, data: Any) -> None:
    """Sampling random allowed ids until ``can_end``, then EOS with some probability:
    the text fullmatches the regex, or Lark parses it (no oracle involved)."""
    lark = pytest.importorskip("lark")
    tok = fixture_tokenizer(tid)
    eos = eos_of(tid)
    table = public_token_bytes(tid)
    kind = data.draw(st.sampled_from(["regex", "grammar"]))
    name = data.draw(st.sampled_from(sorted(REGEXES if kind == "regex" else GRAMMARS)))
    rng = random.Random(data.draw(st.integers(0, 2**32 - 1)))
    if kind == "regex":
        c = tokstream.regex_constraint(tok, REGEXES[name], eos_id=eos)
    else:
        c = tokstream.grammar_constraint(tok, GRAMMARS[name], eos_id=eos)
    out = b""
    for _ in range(60):
        allowed = [int(i) for i in c.allowed_ids() if i != eos]
        if c.can_end and (not allowed or rng.random() < 0.3):
            assert eos in c.allowed_ids().tolist()
            assert c.accept(eos)
            break
        assert allowed, f"{name}: nothing allowed and cannot end at {out!r}"
        t = rng.choice(allowed)
        assert c.accept(t)
        out += table[t]
    else:
        return  # no end within the budget: nothing to judge
    text = out.decode()
    if kind == "regex":
        assert re.fullmatch(REGEXES[name], text), (name, text)
    else:
        lark.Lark(GRAMMARS[name], parser="earley", lexer="dynamic_complete").parse(text)

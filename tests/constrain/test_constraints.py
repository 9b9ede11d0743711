"""Prefix and choice constraints and token healing, against brute force over the
tokens' bytes (``tok.token_bytes``, read id by id), for every fixture tokenizer, with
UTF-8 validity judged by Python's codec (``utf8_oracle``)."""

from __future__ import annotations

import random

import pytest
from helpers import TOKENIZER_IDS, fixture_tokenizer, public_token_bytes
from hypothesis import given
from hypothesis import strategies as st
from strategies import adversarial_text, hyp_settings
from utf8_oracle import heal_reference, prefix_allowed, prefix_refused, valid_prefix

import tokstream
from tokstream.constrain import choice_constraint, heal, prefix_constraint
from tokstream.errors import TokstreamError


def _bytes(tid: str) -> tuple[bytes, ...]:
    return public_token_bytes(tid)


def _brute_prefix(tid: str, prefix: bytes, context: bytes = b"") -> list[int]:
    return [int(i) for i in prefix_allowed(tid, context, prefix).nonzero()[0]]


PROMPTS = [
    "The quick brown fox jumped over the laz",  # mid-word
    "Hello, my name is ",  # after a space
    "See https://docs.python.org/3/libr",  # a URL
    "def main():\n    if x:\n        ",  # code indentation
    "東京は日本の首",  # CJK
    "Thanks 👍🏽 and 👨\u200d👩\u200d👧",  # emoji sequences
    "naïve café ",
    "<|endoftext|>",
]


@pytest.mark.slow
@pytest.mark.parametrize("tid", TOKENIZER_IDS)
@pytest.mark.parametrize("max_backoff", [1, 2, 3])
def test_heal_and_prefix_equal_brute_force(tid: str, max_backoff: int) -> None:
    tok = fixture_tokenizer(tid)
    for prompt in PROMPTS:
        ids = tok.encode(prompt, allowed_special="all")
        # Also cut mid-character: drop the last byte of a multi-byte character.
        cuts = [ids]
        for j in range(1, len(ids)):
            if len(tok.decode_bytes(ids[:j]).decode("utf-8", "ignore").encode()) != len(tok.decode_bytes(ids[:j])):
                cuts.append(ids[:j])
        for case in cuts:
            h = heal(tok, case, max_backoff=max_backoff)
            removed, prefix, context = heal_reference(tid, case, max_backoff)
            assert (h.removed, h.prefix) == (removed, prefix), (prompt, case)
            assert h.prompt_ids == case[: len(case) - removed]
            assert h.constraint().allowed_ids().tolist() == _brute_prefix(tid, prefix, context), (prompt, case)


@pytest.mark.slow
@pytest.mark.parametrize("tid", TOKENIZER_IDS)
def test_prefix_constraint_equals_brute_force_on_token_prefixes(tid: str) -> None:
    table = _bytes(tid)
    rng = random.Random(tid)
    texts = [b for b in table if len(b) >= 2]
    prefixes = [b" ", b"e", b" wor", b"http", b"    ", "的".encode()[:2], "👍".encode()[:3], b"\xff"]
    prefixes += [t[: rng.randint(1, len(t))] for t in rng.sample(texts, 25)]
    tok = fixture_tokenizer(tid)
    refused = 0
    for p in prefixes:
        if prefix_refused(tid, b"", p):
            refused += 1
            with pytest.raises(TokstreamError, match=r"not valid UTF-8|cannot be spelled"):
                prefix_constraint(tok, p)
            continue
        assert prefix_constraint(tok, p).allowed_ids().tolist() == _brute_prefix(tid, p), p
    assert refused < len(prefixes)  # b"\xff" at least is refused; most are not


def _walk(c, rng: random.Random, limit: int = 200) -> list[int]:
    """Accept random allowed ids until the constraint is done (or ``limit``)."""
    taken: list[int] = []
    while not c.is_done and len(taken) < limit:
        allowed = c.allowed_ids()
        assert len(allowed), "a constraint that is not done must allow something"
        i = int(rng.choice(allowed))
        assert c.accept(i)
        taken.append(i)
    return taken


@pytest.mark.slow
@pytest.mark.parametrize("tid", TOKENIZER_IDS)
@hyp_settings(60)
@given(text=adversarial_text(max_fragments=6), seed=st.integers(0, 2**32 - 1), backoff=st.integers(1, 3))
def test_generation_reproduces_the_prompt(tid: str, text: str, seed: int, backoff: int) -> None:
    tok = fixture_tokenizer(tid)
    ids = tok.encode(text, disallowed_special=())
    original = tok.decode_bytes(ids)
    h = heal(tok, ids, max_backoff=backoff)
    generated = _walk(h.constraint(), random.Random(seed))
    out = tok.decode_bytes(h.prompt_ids + generated)
    assert out.startswith(original)
    # What the constraint let through leaves valid UTF-8 behind the kept prompt.
    table = public_token_bytes(tid)
    if valid_prefix(original):
        assert valid_prefix(b"".join(table[i] for i in h.prompt_ids + generated)), (text, generated)


@pytest.mark.slow
@pytest.mark.parametrize("tid", ["cl100k_base", "hf/llama3_tokenizer.json", "spm/mistral_7b_v1_tokenizer.model"])
@hyp_settings(100)
@given(data=st.data())
def test_state_algebra(tid: str, data) -> None:
    tok = fixture_tokenizer(tid)
    table = _bytes(tid)
    target = data.draw(st.sampled_from([b for b in table if len(b) >= 3]))
    prefix = target + data.draw(st.sampled_from([b"", b"x", b" y"]))
    if prefix_refused(tid, b"", prefix):
        with pytest.raises(TokstreamError):
            prefix_constraint(tok, prefix)
        return
    c = prefix_constraint(tok, prefix)
    rng = random.Random(data.draw(st.integers(0, 999)))
    history = [c.allowed_ids().tolist()]
    steps = 0
    while not c.is_done and steps < 6:
        before = c.allowed_ids().tolist()
        # A refused id changes nothing.
        bad = next((i for i in range(tok.n_vocab) if i not in set(before)), None)
        if bad is not None:
            assert not c.accept(bad)
            assert c.allowed_ids().tolist() == before
        fork = c.fork()
        assert c.accept(int(rng.choice(before)))
        steps += 1
        history.append(c.allowed_ids().tolist())
        assert fork.allowed_ids().tolist() == before  # the fork did not move
    for back in range(steps, -1, -1):
        probe = c.fork()
        probe.rollback(steps - back)
        assert probe.allowed_ids().tolist() == history[back]
    c.rollback(0)
    assert c.allowed_ids().tolist() == history[-1]
    with pytest.raises(ValueError, match="only"):
        c.rollback(steps + 1)
    assert c.allowed_ids().tolist() == history[-1]


def test_rollback_under_speculation() -> None:
    """Prefix b" worl", draft [" wor", "ld"], rejected at position 1: the remaining
    prefix after rolling back is b"l"."""
    tok = tokstream.load("cl100k_base")
    (wor,), (ld,) = tok.encode(" wor"), tok.encode("ld")
    c = prefix_constraint(tok, b" worl")
    assert c.accept(wor) and c.remaining == b"l"
    assert c.accept(ld) and c.is_done
    c.rollback(1)
    assert c.remaining == b"l" and not c.is_done
    assert c.accepted == 1


def test_specials_wait_until_the_prefix_is_met() -> None:
    tok = tokstream.load("cl100k_base")
    eot = tok.special_tokens["<|endoftext|>"]
    c = prefix_constraint(tok, b" wor")
    assert eot not in c.allowed_ids()
    assert not c.accept(eot)
    assert c.accept(tok.encode(" world")[0])
    assert c.is_done and eot in c.allowed_ids() and c.accept(eot)


def test_bad_input() -> None:
    tok = tokstream.load("cl100k_base")
    with pytest.raises(TypeError):
        prefix_constraint(tok, "text")  # type: ignore[arg-type]
    c = prefix_constraint(tok, b"x")
    with pytest.raises(ValueError, match="out of range"):
        c.accept(tok.n_vocab)
    with pytest.raises(ValueError):
        c.rollback(-1)
    with pytest.raises(ValueError, match="out of range"):
        heal(tok, [1, 2, 10**9])
    with pytest.raises(ValueError):
        heal(tok, [1], max_backoff=-1)
    with pytest.raises(ValueError):
        choice_constraint(tok, [])
    with pytest.raises(ValueError):
        choice_constraint(tok, ["a", ""])
    with pytest.raises(TypeError):
        choice_constraint(tok, "yes")


def test_nothing_to_heal_leaves_the_prompt() -> None:
    tok = tokstream.load("cl100k_base")
    eot = tok.special_tokens["<|endoftext|>"]
    ids = tok.encode("hello<|endoftext|>", allowed_special="all")
    h = heal(tok, ids, max_backoff=3)
    assert (h.prompt_ids, h.prefix, h.removed) == (ids, b"", 0) and ids[-1] == eot
    assert h.constraint().is_done
    assert heal(tok, [], max_backoff=2).prompt_ids == []


OPTIONS = [
    ["yes", "no"],
    ["yes", "yes sir", "ye"],  # prefixes of one another
    ["日本", "日本語", "中文", "👍🏽", "naïve"],  # multi-byte characters
    [" the", "the", "The end."],
]


@pytest.mark.parametrize("tid", TOKENIZER_IDS)
@pytest.mark.parametrize("options", OPTIONS, ids=["yes-no", "prefixes", "multibyte", "spaces"])
def test_choice_sampling_yields_an_option(tid: str, options: list[str]) -> None:
    tok = fixture_tokenizer(tid)
    table = _bytes(tid)

    # Keep the options this vocabulary can spell (BERT has no "ï", botchan no "日"); the
    # others must be refused up front.
    def spellable(o: bytes) -> bool:
        ok = {len(o)}
        for j in range(len(o) - 1, -1, -1):
            if any(b and o.startswith(b, j) and j + len(b) in ok for b in table):
                ok.add(j)
        return 0 in ok

    for o in options:
        if not spellable(o.encode()):
            with pytest.raises(ValueError, match="cannot be spelled"):
                choice_constraint(tok, [o])
    options = [o for o in options if spellable(o.encode())]
    if not options:
        return
    eos = tok.n_vocab - 1 if not tok.special_tokens else min(tok.special_tokens.values())
    rng = random.Random(tid + "".join(options))
    wanted = {o.encode() for o in options}
    seen = set()
    for _ in range(40):
        c = choice_constraint(tok, options, eos_id=eos)
        taken = _walk(c, rng)
        assert taken[-1] == eos
        out = tok.decode_bytes([i for i in taken[:-1]])
        assert out in wanted, out
        seen.add(out)
    assert seen  # sampling reached at least one option


@pytest.mark.slow
@pytest.mark.parametrize(
    "tid", ["o200k_base", "hf/bert_minilm_tokenizer.json", "spm/spm_botchan_en_unigram_1000.model"]
)
def test_choice_allowed_equals_brute_force(tid: str) -> None:
    tok = fixture_tokenizer(tid)
    table = _bytes(tid)
    options = ["yes", "yes sir", "日本語", "naïve"]
    opts = [o.encode() for o in options]
    # Offsets from which tokens can spell the rest of each option (brute force).
    spell = []
    for o in opts:
        ok = {len(o)}
        for j in range(len(o) - 1, -1, -1):
            if any(b and o.startswith(b, j) and j + len(b) in ok for b in table):
                ok.add(j)
        spell.append(ok)
    options = [x for x, ok in zip(options, spell) if 0 in ok]
    spell = [ok for ok in spell if 0 in ok]
    opts = [o.encode() for o in options]
    eos = 0
    rng = random.Random(1)
    for _ in range(30):
        c = choice_constraint(tok, options, eos_id=eos)
        done = b""
        while not c.is_done:
            want = {
                i
                for i, b in enumerate(table)
                if b and any(o.startswith(done + b) and len(done + b) in ok for o, ok in zip(opts, spell))
            }
            if done in opts:
                want.add(eos)
            got = c.allowed_ids().tolist()
            assert got == sorted(want)
            i = int(rng.choice(got))
            assert c.accept(i)
            done = done if i == eos else done + table[i]
    if "yes sir" not in options:  # BERT's tokens hold no spaces
        return
    # Without an EOS id, "yes" cannot end the output while "yes sir" extends it.
    choice = choice_constraint(tok, ["yes", "yes sir"])
    done = b""
    while done != b"yes":
        i = next(int(i) for i in choice.allowed_ids() if b"yes".startswith(done + table[int(i)]))
        assert choice.accept(i)
        done += table[i]
    assert not choice.is_done


@pytest.mark.parametrize("seed", range(4))
def test_can_end_follows_its_definition(seed: int) -> None:
    """``can_end`` on the prefix and choice constraints, along random walks, against
    its definition read off the generated bytes: a prefix constraint can end once the
    bytes start with the prefix and are whole UTF-8 (the prefix is met at a character
    boundary); a choice once the bytes are one of the options (and EOS is then
    allowed, and refused before)."""
    tok = fixture_tokenizer("hf/llama3_tokenizer.json")
    table = public_token_bytes("hf/llama3_tokenizer.json")
    rng = random.Random(seed)
    prefix = "的 wor".encode()
    c = prefix_constraint(tok, prefix)
    out = b""
    for _ in range(6):
        assert c.can_end == (out.startswith(prefix) and _whole_utf8(out)), out
        t = int(rng.choice(list(c.allowed_ids())[:5000]))
        assert c.accept(t)
        out += table[t]
    eos = tok.special_tokens["<|end_of_text|>"]
    options = ["yes", "yes please", "no"]
    c = choice_constraint(tok, options, eos_id=eos)
    out = b""
    for _ in range(8):
        complete = out.decode("utf-8", "replace") in options
        assert c.can_end == complete, out
        allowed = set(c.allowed_ids().tolist())
        assert (eos in allowed) == complete, out
        allowed.discard(eos)
        if not allowed:
            break
        t = rng.choice(sorted(allowed))
        assert c.accept(t)
        out += table[t]


def _whole_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True

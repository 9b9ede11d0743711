"""Constraints keep the output valid UTF-8 (``tokstream.constrain.utf8``).

References, none computed by the code under test: Python's UTF-8 codec
(``utf8_oracle``: the incremental decoder, pending bytes completed by trial), the
brute-force prefix and healing references of ``utf8_oracle`` over every token's bytes
read id by id, and llguidance's token masks for the regex ``<prefix>(?s:.*)``.
"""

from __future__ import annotations

import itertools
import random
import re
import threading

import numpy as np
import pytest
from helpers import fixture_file, fixture_tokenizer, public_token_bytes, tiktoken_reference
from hypothesis import given
from hypothesis import strategies as st
from strategies import hyp_settings
from utf8_oracle import pending_bytes, prefix_allowed, prefix_refused, valid_prefix

import tokstream
from tokstream.constrain import choice_constraint, heal, prefix_constraint, unreachable_tokens
from tokstream.constrain.masks import TokenMasker, pack_bitmask
from tokstream.constrain.utf8 import ACCEPT, REJECT, TABLE, run, utf8_index
from tokstream.errors import InvalidTokenIdError, TokstreamError

BYTE_LEVEL = ("hf/llama3_tokenizer.json", "o200k_base")
LLAMA3 = "hf/llama3_tokenizer.json"

#: One context per live state of the automaton (a byte string that leaves it open).
STATE_CONTEXTS = (b"", b"\xc3", b"\xe0", b"\xe1", b"\xed", b"\xf0", b"\xf1", b"\xf4")


def _id_of(tid: str, data: bytes) -> int:
    """The lowest id whose bytes are exactly ``data`` (read through the public API)."""
    return public_token_bytes(tid).index(data)


# -- the automaton against Python's codec -----------------------------------------------------

#: The byte values where UTF-8's rules change, for exhaustive short strings.
EDGES = (0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED)
EDGES += (0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF)


def test_automaton_on_every_one_and_two_byte_string() -> None:
    for a in range(256):
        assert (run(ACCEPT, bytes([a])) != REJECT) == valid_prefix(bytes([a])), hex(a)
        for b in range(256):
            data = bytes([a, b])
            assert (run(ACCEPT, data) != REJECT) == valid_prefix(data), data


def test_automaton_on_edge_bytes_up_to_four() -> None:
    for n in (3, 4):
        for combo in itertools.product(EDGES, repeat=n):
            data = bytes(combo)
            ours = run(ACCEPT, data)
            assert (ours != REJECT) == valid_prefix(data), data
            if ours != REJECT:  # the state is a boundary exactly when nothing is pending
                assert (ours == ACCEPT) == (pending_bytes(data) == b""), data


@hyp_settings(300)
@given(data=st.binary(max_size=16))
def test_automaton_on_random_bytes(data: bytes) -> None:
    assert (run(ACCEPT, data) != REJECT) == valid_prefix(data)


def test_state_contexts_reach_each_state() -> None:
    assert [run(ACCEPT, c) for c in STATE_CONTEXTS] == list(range(8))
    assert TABLE.shape == (9, 256) and (TABLE[REJECT] == REJECT).all()


@pytest.mark.slow
@pytest.mark.parametrize("tid", [*BYTE_LEVEL, "spm/mistral_7b_v1_tokenizer.model", "hf/bert_minilm_tokenizer.json"])
def test_token_classes_against_the_codec(tid: str) -> None:
    """Every token from every live state: valid iff the codec says so."""
    tok = fixture_tokenizer(tid)
    u = utf8_index(tok.vocab.index)
    table = public_token_bytes(tid)
    for s, context in enumerate(STATE_CONTEXTS):
        want = np.array([bool(b) and valid_prefix(context + b) for b in table])
        got = u.end[s] != REJECT
        bad = np.flatnonzero(got != want)[:5].tolist()
        assert not bad, f"{tid} state {s}: ids {bad} {[table[i] for i in bad]}"


# -- exactness of the masks, both ways, over whole vocabularies ---------------------------------

#: (prefix, context): context is what the output starts after (a healed prompt's open
#: character); then every state along the prefix is checked.
CASES = [
    ("的".encode(), b""),  # the issue's case: E7 9A then 84 96 must be refused
    (" 👍🏽".encode(), b""),
    ("naïve café".encode(), b""),
    ("\U0010ffff\ud7ff\ue000".encode(), b""),  # the edges of the code space
    ("的".encode()[:2], b""),  # a prefix ending inside a character
    (b" ", b""),
    ("的".encode()[1:], b"\xe7"),  # healing: the lead byte stays in the prompt
    (b"\x84", "的".encode()[:2]),
]


def _walk_states(tid: str, prefix: bytes, context: bytes) -> list[tuple[object, int]]:
    """``(constraint, done)`` at each offset of ``prefix`` reached by single-byte
    tokens, plus, after the prefix, the states the longest extension leaves open."""
    tok = fixture_tokenizer(tid)
    index = tok.vocab.index
    state = run(ACCEPT, context)
    from tokstream.constrain.constraint import PrefixConstraint

    c = PrefixConstraint(index, prefix, state)
    out: list[tuple[object, int]] = [(c.fork(), 0)]
    for j in range(len(prefix) - 1):
        assert c.accept(_id_of(tid, prefix[j : j + 1]))
        out.append((c.fork(), j + 1))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("tid", BYTE_LEVEL)
@pytest.mark.parametrize(("prefix", "context"), CASES)
def test_masks_are_exact_against_the_codec(tid: str, prefix: bytes, context: bytes) -> None:
    """Every allowed token leaves a valid UTF-8 prefix that satisfies the constraint,
    and every token that does so (and can be completed) is allowed: mask, bitmask,
    allowed_ids and accept against ``utf8_oracle.prefix_allowed``."""
    tok = fixture_tokenizer(tid)
    masker = TokenMasker(tok)
    table = public_token_bytes(tid)
    for c, done in _walk_states(tid, prefix, context):
        want = prefix_allowed(tid, context, prefix, done)
        got = masker.mask(c)
        bad = np.flatnonzero(got != want)[:5].tolist()
        assert not bad, f"{prefix!r} after {context + prefix[:done]!r}: ids {bad} {[table[i] for i in bad]}"
        assert np.array_equal(masker.bitmask(c), pack_bitmask(want))
        assert np.array_equal(c.allowed_ids(), np.flatnonzero(want))
        for i in np.flatnonzero(want).tolist():  # allowed ones leave valid UTF-8 behind
            data = table[i]
            assert valid_prefix(context + prefix[:done] + data), data
        # accept agrees with the mask on every allowed id and a sample of the others
        refused = np.flatnonzero(~want).tolist()
        sample = np.flatnonzero(want).tolist()[:300] + random.Random(done).sample(refused, 300)
        for i in sample:
            assert c.fork().accept(i) == bool(want[i]), (done, i, table[i])


def test_the_issue_case_on_llama3() -> None:
    tok = fixture_tokenizer(LLAMA3)
    c = prefix_constraint(tok, "的".encode())
    assert c.accept(_id_of(LLAMA3, b"\xe7\x9a"))
    bad = _id_of(LLAMA3, b"\x84\x96")
    assert not c.fork().accept(bad)
    assert not TokenMasker(tok).mask(c)[bad]
    assert c.accept(_id_of(LLAMA3, b"\x84"))
    assert c.is_done


@pytest.mark.parametrize("tid", BYTE_LEVEL)
def test_a_prefix_met_inside_a_character_finishes_it_first(tid: str) -> None:
    tok = fixture_tokenizer(tid)
    table = public_token_bytes(tid)
    # A token that meets the prefix b" " and ends inside a character (b" \xe7", ...).
    i = next(i for i, b in enumerate(table) if b.startswith(b" ") and pending_bytes(b))
    c = prefix_constraint(tok, b" ")
    assert c.accept(i) and c.remaining == b"" and not c.is_done
    allowed = [int(j) for j in c.allowed_ids()]
    assert allowed and all(0x80 <= table[j][0] < 0xC0 and valid_prefix(table[i] + table[j]) for j in allowed)
    assert not c.fork().accept(_id_of(tid, b"a"))
    assert not c.fork().accept(min(tok.special_tokens.values()))
    whole = next(j for j in allowed if pending_bytes(table[i] + table[j]) == b"")
    assert c.accept(whole) and c.is_done  # a boundary: nothing restricted any more


# -- llguidance as a reference ----------------------------------------------------------------


def _llguidance_tokenizer(tid: str):  # type: ignore[no-untyped-def]
    llg = pytest.importorskip("llguidance")
    if tid == "o200k_base":
        from llguidance.tiktoken import lltokenizer_from_encoding

        return lltokenizer_from_encoding(tiktoken_reference("o200k_base"))
    return llg.LLTokenizer(str(fixture_file(tid)))


_LLG: dict[str, object] = {}


@pytest.mark.slow
@pytest.mark.parametrize("tid", BYTE_LEVEL)
@pytest.mark.parametrize("text", ["的", " 👍🏽", "naïve café", "東京"])
def test_masks_equal_llguidance_before_the_prefix_is_met(tid: str, text: str) -> None:
    """llguidance's mask for the regex ``<text>(?s:.*)``, at every state before the
    prefix is done (after it, llguidance still requires valid UTF-8 and allows EOS; a
    done prefix constraint restricts nothing): on the tokens that extend the rest of
    the prefix, where UTF-8 decides, the same set; overall, nothing llguidance allows
    is refused. (llguidance also drops some tokens that are proper prefixes of forced
    bytes: under ``" 👍🏽"`` on Llama 3 it allows only ``b" \xf0\x9f\x91"`` first,
    not ``b" "``; that is its tokenization heuristic, not a UTF-8 rule.)"""
    llg = pytest.importorskip("llguidance")
    if tid not in _LLG:
        _LLG[tid] = _llguidance_tokenizer(tid)
    lt = _LLG[tid]
    tok = fixture_tokenizer(tid)
    masker = TokenMasker(tok)
    n = tok.n_vocab
    text_ids = np.zeros(n, dtype=bool)
    table = public_token_bytes(tid)
    text_ids[[i for i, b in enumerate(table) if b]] = True
    matcher = llg.LLMatcher(lt, llg.LLMatcher.grammar_from_regex(text + "(?s:.*)"), log_level=0)
    assert not matcher.is_error(), matcher.get_error()
    prefix = text.encode()
    c = prefix_constraint(tok, prefix)
    for j in range(len(prefix)):
        bits = np.frombuffer(matcher.compute_bitmask(), dtype=np.uint8)
        theirs = np.unpackbits(bits, bitorder="little")[:n].astype(bool) & text_ids
        ours = masker.mask(c)
        missing = np.flatnonzero(theirs & ~ours)[:5].tolist()
        assert not missing, f"{text!r} at byte {j}: llguidance allows ids {missing}, we refuse them"
        extends = np.array([b.startswith(prefix[j:]) for b in table])
        diff = np.flatnonzero((ours != theirs) & extends)[:5].tolist()
        assert not diff, f"{text!r} at byte {j}: ids {diff} {[table[i] for i in diff]} ours {ours[diff].tolist()}"
        i = _id_of(tid, prefix[j : j + 1])
        assert c.accept(i) and matcher.consume_token(i)


# -- healing a prompt that ends inside a character ----------------------------------------------


def test_heal_starts_from_the_prompts_open_character() -> None:
    tid = LLAMA3
    tok = fixture_tokenizer(tid)
    ids = [*tok.encode("Hi "), _id_of(tid, b"\xe7"), _id_of(tid, b"\x9a")]
    h = heal(tok, ids, max_backoff=1)
    assert (h.removed, h.prefix) == (1, b"\x9a")
    want = prefix_allowed(tid, tok.decode_bytes(ids[:-1]), b"\x9a")
    assert want.any() and np.array_equal(TokenMasker(tok).mask(h.constraint()), want)


def test_heal_does_not_back_off_into_invalid_bytes() -> None:
    """A prompt ending in an orphan continuation byte: nothing valid can reproduce it."""
    tid = LLAMA3
    tok = fixture_tokenizer(tid)
    ids = [*tok.encode("Hi a"), _id_of(tid, b"\x84")]
    h = heal(tok, ids, max_backoff=1)
    assert h.removed == 0 and h.constraint().is_done


# -- refused prefixes and options ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("prefix", "where"),
    [
        (b"\x84", "byte 0 (0x84)"),
        (b"\xff", "byte 0 (0xFF)"),
        (b"ab\xc0\x80", "byte 2 (0xC0)"),
        (b"\xed\xa0\x80", "byte 1 (0xA0)"),  # a surrogate
        (b"\xf4\x90\x80\x80", "byte 1 (0x90)"),  # above U+10FFFF
        (b"\xe0\x80\x80", "byte 1 (0x80)"),  # overlong
        ("的".encode() + b"\x96", "byte 3 (0x96)"),
    ],
)
def test_an_invalid_prefix_is_refused_at_construction(prefix: bytes, where: str) -> None:
    assert not valid_prefix(prefix)
    with pytest.raises(TokstreamError, match="not valid UTF-8: " + re.escape(where)):
        prefix_constraint(fixture_tokenizer("cl100k_base"), prefix)


def test_a_valid_unfinished_prefix_is_accepted() -> None:
    c = prefix_constraint(fixture_tokenizer("cl100k_base"), "的".encode()[:2])
    assert len(c.allowed_ids()) > 0


@pytest.mark.parametrize(
    ("tid", "prefix"),
    [("hf/bert_minilm_tokenizer.json", b" "), ("spm/spm_botchan_en_unigram_1000.model", "日本".encode())],
)
def test_a_prefix_no_token_can_spell_raises_like_a_choice(tid: str, prefix: bytes) -> None:
    tok = fixture_tokenizer(tid)
    assert prefix_refused(tid, b"", prefix)
    with pytest.raises(TokstreamError, match="cannot be spelled with this vocabulary") as prefix_error:
        prefix_constraint(tok, prefix)
    with pytest.raises(TokstreamError, match="cannot be spelled with this vocabulary") as choice_error:
        choice_constraint(tok, [prefix.decode()])
    assert type(prefix_error.value) is type(choice_error.value)


def test_an_option_with_a_lone_surrogate_is_refused() -> None:
    with pytest.raises(TokstreamError, match="lone surrogate at offset 1"):
        choice_constraint(fixture_tokenizer("cl100k_base"), ["a\ud800"])


# -- bool is not an id --------------------------------------------------------------------------


def test_bool_is_not_an_id() -> None:
    tok = fixture_tokenizer("cl100k_base")
    c = prefix_constraint(tok, b" wor")
    masker = TokenMasker(tok)
    for flag in (True, False, np.bool_(True)):
        with pytest.raises(InvalidTokenIdError, match="a bool is not a token id"):
            c.accept(flag)  # type: ignore[arg-type]
        with pytest.raises(InvalidTokenIdError, match="a bool is not a token id"):
            heal(tok, [*tok.encode("hi"), flag])  # type: ignore[list-item]
        with pytest.raises(InvalidTokenIdError, match="a bool is not a token id"):
            choice_constraint(tok, ["yes"], eos_id=flag)  # type: ignore[arg-type]
        with pytest.raises(InvalidTokenIdError, match="a bool is not a token id"):
            masker.draft_masks(c, [flag])  # type: ignore[list-item]
        with pytest.raises(InvalidTokenIdError, match="a bool is not a token id"):
            tokstream.constrain.token_witness(tok, flag)  # type: ignore[arg-type]
        with pytest.raises(TokstreamError, match="max_backoff needs an int"):
            heal(tok, tok.encode("hi"), max_backoff=flag)  # type: ignore[arg-type]
        with pytest.raises(TokstreamError, match="rollback needs an int"):
            c.rollback(flag)  # type: ignore[arg-type]
        with pytest.raises(TokstreamError, match="needs an int row"):
            masker.fill_bitmask(c, np.zeros((2, masker.n_words), dtype=np.int32), flag)  # type: ignore[arg-type]
    assert c.accepted == 0 and c.remaining == b" wor"
    assert c.accept(np.int64(tok.encode(" world")[0]))  # numpy integers are ids


# -- thread safety of the lazily built caches ---------------------------------------------------


def _mask_workload(tok: tokstream.Tokenizer) -> list[np.ndarray]:
    masker = TokenMasker(tok)
    eos = tok.special_tokens["<|end_of_text|>"]
    out = []
    cs = [prefix_constraint(tok, p) for p in (b" ", "的".encode(), b" wor", b"\xe7\x9a")]
    cs.append(choice_constraint(tok, ["yes", "東京"], eos_id=eos))
    mid = prefix_constraint(tok, "的".encode())
    mid.accept(_id_of(LLAMA3, b"\xe7\x9a"))
    cs.append(mid)
    for c in cs:
        out += [masker.mask(c), masker.bitmask(c), c.allowed_ids()]
    out.append(masker.draft_masks(cs[1], [_id_of(LLAMA3, b"\xe7"), _id_of(LLAMA3, b"\x9a")]))
    return out


def test_masks_from_eight_threads_on_a_fresh_tokenizer() -> None:
    path = fixture_file(LLAMA3)
    want = _mask_workload(tokstream.Tokenizer.from_file(path))
    fresh = tokstream.Tokenizer.from_file(path)  # nothing built yet: index, tables, UTF-8 classes
    barrier = threading.Barrier(8)
    results: list[object] = [None] * 8

    def work(k: int) -> None:
        barrier.wait()
        try:
            results[k] = (_mask_workload(fresh), TokenMasker(fresh)._tables, utf8_index(fresh.vocab.index))
        except BaseException as e:  # reported below
            results[k] = e

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        assert isinstance(r, tuple), r
        got, tables, u = r
        assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))
        # built once: every thread got the same cached objects
        assert tables is results[0][1] and u is results[0][2]  # type: ignore[index]


def test_unreachable_tokens_from_eight_threads() -> None:
    tid = "spm/spm_botchan_en_bpe_1000.model"
    want = unreachable_tokens(fixture_tokenizer(tid))
    fresh = tokstream.Tokenizer.from_sentencepiece(fixture_file(tid))
    barrier = threading.Barrier(8)
    results: list[object] = [None] * 8

    def work(k: int) -> None:
        barrier.wait()
        results[k] = unreachable_tokens(fresh)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == want for r in results)

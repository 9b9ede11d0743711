"""TokenMasker.fill_bitmask_batch: a batch's bitmask rows in one call.

Each row is held to something the batch code does not compute: ``fill_bitmask`` of
its constraint alone, ``allowed_ids()`` packed by a plain-Python bit packer, or the
rows of the same constraints built on a second, independent ``Tokenizer`` of the same
file (its own vocabulary index, compiled grammars and cached masks) filled one by one
in one thread. The concurrency tests fill cold grammars from several threads at once
(rows sharing a compiled grammar, the same constraint in two rows, two callers sharing
the pool) and compare with that serial oracle.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
import pytest
from helpers import fixture_file, fixture_tokenizer

import tokstream
from tokstream.constrain import (
    Allowed,
    Constraint,
    choice_constraint,
    grammar_constraint,
    json_schema_constraint,
    prefix_constraint,
    regex_constraint,
)
from tokstream.constrain.masks import TokenMasker
from tokstream.errors import TokstreamError

LLAMA3 = "hf/llama3_tokenizer.json"
EOS = 128009  # <|eot_id|>
SENTINEL = 0x5A5A5A5A

#: Per test, a schema no other test compiles (the property names), so its compiled
#: grammar and masks are cold when the threads meet them.
SCHEMA_TEXTS = (
    (
        {
            "type": "object",
            "properties": {
                "batch_test_name": {"type": "string", "maxLength": 12},
                "batch_test_tags": {"type": "array", "items": {"enum": ["alpha", "beta", "gamma"]}},
                "batch_test_n": {"type": "integer"},
            },
            "required": ["batch_test_name"],
        },
        '{"batch_test_name": "héllo wörld", "batch_test_tags": ["alpha", "gamma"], "batch_test_n": -42}',
    ),
    (
        {
            "type": "array",
            "items": {"type": "object", "properties": {"batch_k": {"type": "number"}, "batch_v": {"type": "boolean"}}},
            "minItems": 2,
        },
        '[{"batch_k": 1.5e3, "batch_v": true}, {"batch_k": -0.25}, {}]',
    ),
)


@cache
def _masker(tid: str) -> TokenMasker:
    return TokenMasker(fixture_tokenizer(tid))


def _pack_reference(ids: Sequence[int], n_words: int) -> np.ndarray:
    """xgrammar's layout, bit by bit in plain Python: id i -> bit i % 32 of word i // 32."""
    words = [0] * n_words
    for i in ids:
        words[i // 32] |= 1 << (i % 32)
    return np.array([w - (1 << 32) if w >= 1 << 31 else w for w in words], dtype=np.int32)


def _single(masker: TokenMasker, c: Constraint[Any], width: int) -> np.ndarray:
    """``fill_bitmask`` of ``c`` alone into a fresh row of ``width`` words."""
    row = np.full(width, SENTINEL, dtype=np.int32)
    masker.fill_bitmask(c, row)
    return row


def _walk_forks(c: Constraint[Any], ids: Sequence[int]) -> list[Constraint[Any]]:
    """``c`` forked after each prefix of ``ids`` (the empty one included)."""
    out = [c.fork()]
    cur = c.fork()
    for t in ids:
        assert cur.accept(t)
        out.append(cur.fork())
    return out


def _mixed(tok: tokstream.Tokenizer) -> list[Constraint[Any]]:
    """Constraints of every kind and in many states: a prefix (one big slice, a
    UTF-8 state, nothing restricted), a choice with EOS, a regex, a grammar, a schema."""
    cjk2 = "的".encode()[:2]
    cs: list[Constraint[Any]] = [prefix_constraint(tok, p) for p in (b" ", b"e", b" wor", cjk2, b"")]
    choice = choice_constraint(tok, ["yes", "no", "maybe"], eos_id=EOS)
    cs += _walk_forks(choice, tok.encode("maybe"))
    date = regex_constraint(tok, r"[0-9]{4}-[0-9]{2}-[0-9]{2}", eos_id=EOS)
    cs += _walk_forks(date, tok.encode("2024-12-31"))
    lists = grammar_constraint(tok, 'start: "[" [start ("," start)*] "]"', eos_id=EOS)
    cs += _walk_forks(lists, tok.encode("[[],[[]]]"))
    schema = json_schema_constraint(tok, {"type": "object", "properties": {"a": {"type": "string"}}}, eos_id=EOS)
    cs += _walk_forks(schema, tok.encode('{"a": "naïve 👋"}') + [EOS])
    return cs


# -- rows equal single fills ----------------------------------------------------------------------


@pytest.mark.parametrize("threads", [None, 1, 2, 4])
def test_rows_equal_single_fills(threads: int | None) -> None:
    tok = fixture_tokenizer(LLAMA3)
    masker = _masker(LLAMA3)
    cs = _mixed(tok)
    w = masker.n_words
    out = np.full((len(cs) + 3, w + 5), SENTINEL, dtype=np.int32)  # padded words, spare rows
    masker.fill_bitmask_batch(cs, out, threads=threads)
    for r, c in enumerate(cs):
        assert np.array_equal(out[r, :w], _single(masker, c, w)), f"row {r}"
        assert np.array_equal(out[r, :w], _pack_reference(c.allowed_ids().tolist(), w)), f"row {r}"
    assert (out[: len(cs), w:] == 0).all()  # padded ids stay disallowed
    assert (out[len(cs) :] == SENTINEL).all()  # rows not named are untouched


def test_rows_equal_single_fills_torch() -> None:
    torch = pytest.importorskip("torch")
    tok = fixture_tokenizer(LLAMA3)
    masker = _masker(LLAMA3)
    cs = _mixed(tok)[:24]
    w = masker.n_words
    out = torch.full((len(cs) + 1, w + 1), SENTINEL, dtype=torch.int32)
    masker.fill_bitmask_batch(cs, out, indices=list(range(1, len(cs) + 1)), threads=2)
    got = out.numpy()
    for r, c in enumerate(cs):
        assert np.array_equal(got[r + 1, :w], _single(masker, c, w)), f"row {r}"
    assert (got[1:, w] == 0).all() and (got[0] == SENTINEL).all()
    # A non-contiguous view is written through.
    wide = torch.zeros((len(cs), 2 * w), dtype=torch.int32)
    masker.fill_bitmask_batch(cs, wide[:, ::2])
    assert np.array_equal(wide.numpy()[:, ::2][:, :w], got[1:, :w])
    with pytest.raises(TokstreamError, match="int32"):
        masker.fill_bitmask_batch(cs, torch.zeros((len(cs), w), dtype=torch.int64))
    if torch.cuda.is_available():  # pragma: no cover - CPU-only CI
        with pytest.raises(TokstreamError, match="CPU"):
            masker.fill_bitmask_batch(cs, torch.zeros((len(cs), w), dtype=torch.int32, device="cuda"))


def test_llguidance_and_xgrammar_read_the_rows() -> None:
    """The rows are in the layout the peers' apply functions read."""
    lln = pytest.importorskip("llguidance.numpy")
    tok = fixture_tokenizer(LLAMA3)
    masker = _masker(LLAMA3)
    cs = [prefix_constraint(tok, b" wor"), choice_constraint(tok, ["yes", "no"], eos_id=EOS)]
    out = np.zeros((2, masker.n_words), dtype=np.int32)
    masker.fill_bitmask_batch(cs, out)
    logits = np.zeros((2, tok.n_vocab), dtype=np.float32)
    lln.apply_token_bitmask_inplace(logits, out)
    for r, c in enumerate(cs):
        assert np.array_equal(np.flatnonzero(logits[r] == 0), c.allowed_ids())


# -- indices and empty batches --------------------------------------------------------------------


def test_indices_subset_and_negative() -> None:
    tok = fixture_tokenizer(LLAMA3)
    masker = _masker(LLAMA3)
    cs = [prefix_constraint(tok, p) for p in (b" ", b"http", b"e")]
    w = masker.n_words
    out = np.full((8, w), SENTINEL, dtype=np.int32)
    masker.fill_bitmask_batch(cs, out, indices=[5, 0, -1], threads=2)
    for r, c in zip([5, 0, 7], cs):
        assert np.array_equal(out[r], _single(masker, c, w))
    assert (out[[1, 2, 3, 4, 6]] == SENTINEL).all()
    # numpy indices; and fewer rows in `out` than constraints is fine with indices
    small = np.full((3, w), SENTINEL, dtype=np.int32)
    masker.fill_bitmask_batch(cs, small, indices=np.array([2, 1, 0]))
    assert np.array_equal(small[::-1], out[[5, 0, 7]])


def test_empty_batch() -> None:
    masker = _masker(LLAMA3)
    w = masker.n_words
    out = np.full((2, w), SENTINEL, dtype=np.int32)
    masker.fill_bitmask_batch([], out)
    masker.fill_bitmask_batch([], out, indices=[], threads=4)
    masker.fill_bitmask_batch((), np.zeros((0, w), dtype=np.int32))
    assert (out == SENTINEL).all()


# -- errors ---------------------------------------------------------------------------------------


def test_shape_dtype_and_argument_errors() -> None:
    tok = fixture_tokenizer(LLAMA3)
    masker = _masker(LLAMA3)
    cs = [prefix_constraint(tok, b" "), prefix_constraint(tok, b"e")]
    w = masker.n_words
    ok = np.zeros((2, w), dtype=np.int32)
    cases: list[tuple[dict[str, Any], str]] = [
        ({"out": np.zeros((2, w), dtype=np.int64)}, "int32"),
        ({"out": np.zeros((2, w), dtype=np.uint32)}, "int32"),
        ({"out": np.zeros(w, dtype=np.int32)}, "2-D"),
        ({"out": np.zeros((1, 2, w), dtype=np.int32)}, "2-D"),
        ({"out": np.zeros((2, w - 1), dtype=np.int32)}, f"fewer than the {w}"),
        ({"out": np.zeros((1, w), dtype=np.int32)}, "1 rows, fewer than the 2 constraints"),
        ({"indices": [0]}, "1 indices for 2 constraints"),
        ({"indices": [0, 2]}, "index 2 is out of range"),
        ({"indices": [-3, 0]}, "index -3 is out of range"),
        ({"indices": [1, -1]}, "row 1 twice"),
        ({"indices": [0, 1.0]}, "ints"),
        ({"indices": [True, 0]}, "ints"),
        ({"indices": 1}, "sequence"),
        ({"threads": 0}, "threads"),
        ({"threads": -2}, "threads"),
        ({"threads": True}, "threads"),
        ({"threads": 1.5}, "threads"),
    ]
    for kw, message in cases:
        out = kw.pop("out", ok)
        before = out.copy()
        with pytest.raises(TokstreamError, match=message):
            masker.fill_bitmask_batch(cs, out, **kw)
        assert np.array_equal(out, before), f"{kw}: a row was written before the error"
    read_only = np.zeros((2, w), dtype=np.int32)
    read_only.flags.writeable = False
    with pytest.raises(TokstreamError, match="writable"):
        masker.fill_bitmask_batch(cs, read_only)
    with pytest.raises(TypeError, match="numpy int32 array"):
        masker.fill_bitmask_batch(cs, ok.tolist())
    with pytest.raises(TypeError, match="sequence of constraints"):
        masker.fill_bitmask_batch(cs[0], ok)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="expected a Constraint"):
        masker.fill_bitmask_batch([cs[0], "e"], ok)  # type: ignore[list-item]
    other = prefix_constraint(tokstream.load("cl100k_base"), b" ")
    with pytest.raises(ValueError, match="another tokenizer"):
        masker.fill_bitmask_batch([cs[0], other], ok)
    assert (ok == 0).all()


class _Failing(Constraint[int]):
    """Test-only: ``allowed()`` raises (a row's own error, met while filling)."""

    __slots__ = ("error",)

    def __init__(self, index: Any, error: Exception) -> None:
        super().__init__(index, 0)
        self.error = error

    def _allowed(self, value: int) -> Allowed:
        raise self.error

    def _step(self, value: int, token_id: int) -> int | None:
        return None

    def _done(self, value: int) -> bool:
        return False


@pytest.mark.parametrize("threads", [1, 2])
def test_a_row_error_is_the_first_rows(threads: int) -> None:
    tok = fixture_tokenizer(LLAMA3)
    masker = _masker(LLAMA3)
    first, second = RuntimeError("first"), RuntimeError("second")
    good = [prefix_constraint(tok, p) for p in (b" ", b"e", b"http", b"x")]
    cs: list[Constraint[Any]] = [good[0], _Failing(tok.vocab.index, first), good[1], _Failing(tok.vocab.index, second)]
    cs += good[2:]
    out = np.zeros((len(cs), masker.n_words), dtype=np.int32)
    with pytest.raises(RuntimeError, match="first"):
        masker.fill_bitmask_batch(cs, out, threads=threads)
    assert np.array_equal(out[0], _single(masker, good[0], masker.n_words))  # claimed before the error
    masker.fill_bitmask_batch(good, out)  # the pool still works afterwards


# -- threads and shared compiled grammars -----------------------------------------------------------


class _Meeting(Constraint[int]):
    """Test-only: ``allowed()`` waits until ``parties`` rows are being computed at
    once, so a batch of them finishes only if that many threads work together."""

    __slots__ = ("barrier",)

    def __init__(self, index: Any, barrier: threading.Barrier) -> None:
        super().__init__(index, 0)
        self.barrier = barrier

    def _allowed(self, value: int) -> Allowed:
        self.barrier.wait(timeout=30)
        return Allowed(everything=True)

    def _step(self, value: int, token_id: int) -> int | None:
        return value

    def _done(self, value: int) -> bool:
        return True


def test_threads_compute_rows_together() -> None:
    from tokstream.constrain.masks import _cores

    if _cores() < 2:
        pytest.skip("one core: threads are capped at one")
    tok = fixture_tokenizer(LLAMA3)
    masker = _masker(LLAMA3)
    barrier = threading.Barrier(2)
    cs = [_Meeting(tok.vocab.index, barrier) for _ in range(4)]
    out = np.zeros((4, masker.n_words), dtype=np.int32)
    masker.fill_bitmask_batch(cs, out, threads=2)  # a BrokenBarrierError if one thread did it all
    assert (out[:, :-1] == -1).all()


@cache
def _second_llama3() -> tokstream.Tokenizer:
    """Another Tokenizer of the same file: its own vocabulary index, so its compiled
    grammars and cached masks are its own (the oracle of the concurrency tests)."""
    return tokstream.Tokenizer.from_file(fixture_file(LLAMA3))


@pytest.mark.parametrize("case", range(len(SCHEMA_TEXTS)))
def test_concurrent_fills_over_forks_of_one_constraint(case: int) -> None:
    schema, text = SCHEMA_TEXTS[case]
    tok, ref_tok = fixture_tokenizer(LLAMA3), _second_llama3()
    masker, ref_masker = _masker(LLAMA3), TokenMasker(ref_tok)
    ids = tok.encode(text) + [EOS]
    # Cold: compiled here, first masks computed by the threads below.
    c = json_schema_constraint(tok, schema, eos_id=EOS)
    forks = _walk_forks(c, ids)
    # Every state twice (two forks), and one fork object in two rows.
    cs = forks + _walk_forks(c, ids) + [forks[3]]
    w = masker.n_words
    outs = [np.zeros((len(cs), w), dtype=np.int32) for _ in range(3)]
    # Two callers at once (the pool shared), each with threads, over the same constraints.
    errors: list[BaseException] = []

    def call(out: np.ndarray) -> None:
        try:
            masker.fill_bitmask_batch(cs, out, threads=4)
        except BaseException as e:
            errors.append(e)

    callers = [threading.Thread(target=call, args=(outs[k],)) for k in range(2)]
    for t in callers:
        t.start()
    masker.fill_bitmask_batch(cs[::-1], outs[2], indices=list(range(len(cs)))[::-1], threads=2)
    for t in callers:
        t.join()
    assert not errors
    ref = json_schema_constraint(ref_tok, schema, eos_id=EOS)
    want = np.stack([_single(ref_masker, f, w) for f in _walk_forks(ref, ids)])
    want = np.concatenate([want, want, want[3:4]])
    for k, out in enumerate(outs):
        for r in range(len(cs)):
            assert np.array_equal(out[r], want[r]), f"caller {k}, row {r}: differs from the serial oracle"
    # and from each row's single fill, now that the caches are warm
    assert all(np.array_equal(outs[0][r], _single(masker, f, w)) for r, f in enumerate(cs))

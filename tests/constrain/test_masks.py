"""TokenMasker: bool masks, int32 bitmasks, apply, batches and draft masks.

Every expectation comes from something other than the code under test: a brute-force
scan over the tokens' bytes (``tok.token_bytes``, id by id, UTF-8 judged by Python's
codec: ``utf8_oracle``), ``allowed_ids()`` turned into a mask by plain numpy, a
plain-Python bit packer, or hand-written words.
"""

from __future__ import annotations

import doctest
import importlib
import random
from collections.abc import Sequence
from functools import cache

import numpy as np
import pytest
from helpers import TOKENIZER_IDS, fixture_tokenizer, public_token_bytes
from hypothesis import given
from hypothesis import strategies as st
from strategies import hyp_settings
from utf8_oracle import prefix_allowed, prefix_refused

from tokstream.constrain import (
    Allowed,
    Constraint,
    choice_constraint,
    heal,
    prefix_constraint,
)
from tokstream.constrain.masks import TokenMasker, pack_bitmask, unpack_bitmask
from tokstream.errors import TokstreamError

CJK2 = "的".encode()[:2]
EMOJI3 = "👍".encode()[:3]
FIXED_PREFIXES = (b" ", b"e", b" wor", b"http", b"    ", CJK2, EMOJI3, "的".encode())


# -- references ----------------------------------------------------------------------------


def _bytes(tid: str) -> tuple[bytes, ...]:
    return public_token_bytes(tid)


@cache
def _brute_prefix(tid: str, prefix: bytes) -> np.ndarray:
    """Allowed by ``prefix_constraint(tok, prefix)``, by a scan of every token."""
    return prefix_allowed(tid, b"", prefix)


def _pack_reference(mask: np.ndarray) -> np.ndarray:
    """xgrammar's layout, bit by bit in plain Python: id i -> bit i % 32 of word i // 32."""
    words = [0] * ((len(mask) + 31) // 32)
    for i in np.flatnonzero(mask).tolist():
        words[i // 32] |= 1 << (i % 32)
    return np.array([w - (1 << 32) if w >= 1 << 31 else w for w in words], dtype=np.int32)


def _mask_of_ids(n: int, ids: Sequence[int] | np.ndarray) -> np.ndarray:
    m = np.zeros(n, dtype=bool)
    m[np.asarray(ids, dtype=np.int64)] = True
    return m


def _reference_mask(c: Constraint) -> np.ndarray:
    """``allowed_ids()`` as a bool mask."""
    return _mask_of_ids(c.index.n_vocab, c.allowed_ids())


class _Given(Constraint[int]):
    """Test-only: allows one fixed ``Allowed`` at every step (any slices, any ids), so
    the mask builders meet slices our constraints never produce (overlaps, block edges)."""

    __slots__ = ("given", "ok")

    def __init__(self, index, allowed: Allowed) -> None:  # type: ignore[no-untyped-def]
        super().__init__(index, 0)
        self.given = allowed
        ids = index.ids(list(allowed.slices)).tolist() + list(allowed.ids)
        self.ok = frozenset(ids)

    def _allowed(self, value: int) -> Allowed:
        return self.given

    def _step(self, value: int, token_id: int) -> int | None:
        return value + 1 if self.given.everything or token_id in self.ok else None

    def _done(self, value: int) -> bool:
        return self.given.everything


def _random_prefixes(tid: str, k: int = 6) -> list[bytes]:
    """Prefixes of random tokens' bytes (seeded by the tokenizer id) that a prefix
    constraint accepts (valid UTF-8 the vocabulary can spell)."""
    rng = random.Random(f"masks-{tid}")
    table = [b for b in _bytes(tid) if b]
    out: list[bytes] = []
    while len(out) < k:
        data = rng.choice(table)
        p = data[: rng.randint(1, len(data))]
        if not prefix_refused(tid, b"", p):
            out.append(p)
    return out


@cache
def _masker(tid: str) -> TokenMasker:
    return TokenMasker(fixture_tokenizer(tid))


# -- 1. masks against brute force -------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("tid", TOKENIZER_IDS)
def test_prefix_masks_match_brute_force(tid: str) -> None:
    tok = fixture_tokenizer(tid)
    masker = _masker(tid)
    n = tok.n_vocab
    w = (n + 31) // 32
    for prefix in (b"", *FIXED_PREFIXES, *_random_prefixes(tid)):
        if prefix_refused(tid, b"", prefix):  # BERT spells no b" ", botchan no CJK
            with pytest.raises(TokstreamError, match="cannot be spelled"):
                prefix_constraint(tok, prefix)
            continue
        c = prefix_constraint(tok, prefix)
        want = _brute_prefix(tid, prefix)
        got = masker.mask(c)
        assert got.dtype == np.bool_ and got.shape == (n,)
        if not np.array_equal(got, want):
            diff = np.flatnonzero(got != want)[:5].tolist()
            pytest.fail(f"{tid} {prefix!r}: mask differs at ids {diff} (ours {got[diff].tolist()})")
        bits = masker.bitmask(c)
        assert bits.dtype == np.int32 and bits.shape == (w,)
        assert np.array_equal(bits, _pack_reference(want)), f"{tid} {prefix!r}: bitmask"
        # The mask agrees with accept, id by id, on a sample (specials included).
        rng = random.Random(f"{tid}-{prefix!r}")
        allowed, refused = np.flatnonzero(want).tolist(), np.flatnonzero(~want).tolist()
        sample = rng.sample(allowed, min(20, len(allowed))) + rng.sample(refused, min(20, len(refused)))
        sample += sorted(tok.special_tokens.values())[:5]
        for i in sample:
            assert c.fork().accept(i) == bool(got[i]), f"{tid} {prefix!r}: id {i}"


@pytest.mark.parametrize(
    "tid", ["cl100k_base", "o200k_base", "hf/llama3_tokenizer.json", "spm/spm_botchan_en_bpe_1000.model"]
)
def test_choice_masks_match_allowed_ids(tid: str) -> None:
    tok = fixture_tokenizer(tid)
    masker = _masker(tid)
    eos = max(tok.special_tokens.values()) if tok.special_tokens else None
    options = ["yes", "no", "nothing", " maybe"] + ([] if "botchan" in tid else ["東京"])  # botchan spells no CJK
    c = choice_constraint(tok, options, eos_id=eos)
    table = _bytes(tid)
    saw_eos = False
    for _ in range(8):  # walk the longest allowed token each step, comparing every mask
        want = _reference_mask(c)
        assert np.array_equal(masker.mask(c), want)
        assert np.array_equal(masker.bitmask(c), _pack_reference(want))
        if c.is_done:
            break
        allowed = c.allowed_ids().tolist()
        saw_eos |= eos in allowed
        assert c.accept(max(allowed, key=lambda i: len(table[i])))
    assert c.is_done and (eos is None or saw_eos)


def test_healed_constraint_mask() -> None:
    tok = fixture_tokenizer("cl100k_base")
    h = heal(tok, tok.encode("Visit https://exa"))
    assert h.removed == 1
    assert np.array_equal(_masker("cl100k_base").mask(h.constraint()), _brute_prefix("cl100k_base", h.prefix))


# -- 2. bit layout ------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 31, 32, 33, 63, 64, 65])
def test_pack_bitmask_single_ids(size: int) -> None:
    words = (size + 31) // 32
    for i in sorted({0, 30, 31, 32, size - 1} & set(range(size))):
        mask = np.zeros(size, dtype=bool)
        mask[i] = True
        want = [0] * words
        want[i // 32] = -(2**31) if i % 32 == 31 else 1 << (i % 32)
        got = pack_bitmask(mask)
        assert got.dtype == np.int32 and got.tolist() == want, (size, i)
        assert unpack_bitmask(got, size).tolist() == mask.tolist()


def test_pack_bitmask_hand_written_words() -> None:
    assert pack_bitmask([True] * 31).tolist() == [2**31 - 1]  # tail bit 31 stays zero
    assert pack_bitmask([True] * 32).tolist() == [-1]
    assert pack_bitmask([True] * 33).tolist() == [-1, 1]
    assert pack_bitmask([False] * 33).tolist() == [0, 0]
    assert pack_bitmask([True, False, True, True] + [False] * 28 + [False, True]).tolist() == [0b1101, 0b10]
    rows = pack_bitmask(np.array([[True] * 33, [False] * 32 + [True]]))
    assert rows.shape == (2, 2) and rows.tolist() == [[-1, 1], [0, 1]]
    with pytest.raises(ValueError):
        unpack_bitmask([0], 33)


@given(st.lists(st.booleans(), min_size=1, max_size=200))
@hyp_settings(200)
def test_pack_bitmask_matches_reference(bits: list[bool]) -> None:
    mask = np.array(bits, dtype=bool)
    assert np.array_equal(pack_bitmask(mask), _pack_reference(mask))
    assert np.array_equal(unpack_bitmask(pack_bitmask(mask), len(bits)), mask)


@pytest.mark.parametrize("tid", TOKENIZER_IDS)
def test_bitmask_layout_on_fixture_sizes(tid: str) -> None:
    tok = fixture_tokenizer(tid)
    masker = _masker(tid)
    index = tok.vocab.index
    n = tok.n_vocab
    w = (n + 31) // 32
    # Everything: every full word is -1, the tail word has only its n % 32 low bits.
    everything = masker.bitmask(prefix_constraint(tok, b""))
    tail = n % 32
    assert everything[:-1].tolist() == [-1] * (w - 1)
    assert int(everything[-1]) == (-1 if tail == 0 else (1 << tail) - 1)
    # Single ids land on their word and bit.
    for i in sorted({31, 32, n - 1} & set(range(n))):
        bits = masker.bitmask(_Given(index, Allowed(everything=False, ids=(i,))))
        want = np.zeros(w, dtype=np.int64)
        want[i // 32] = 1 << (i % 32)
        assert bits.tolist() == want.astype(np.uint32).view(np.int32).tolist(), (tid, i)
        assert masker.mask(_Given(index, Allowed(everything=False, ids=(i,)))).nonzero()[0].tolist() == [i]


# -- slices of every shape, through a test-only constraint --------------------------------


def _slice_strategy(t: int) -> st.SearchStrategy[tuple[int, int]]:
    # Near block boundaries (the prefix bitmasks' rounding), and anywhere.
    near = st.builds(lambda k, d: min(max(k * 1024 + d, 0), t), st.integers(0, t // 1024 + 1), st.integers(-3, 3))
    point = st.one_of(near, st.integers(0, t), st.sampled_from([0, t]))
    return st.tuples(point, point).map(lambda p: (min(p), max(p)))


@pytest.mark.parametrize("tid", ["o200k_base", "r50k_base", "spm/spm_botchan_en_unigram_1000.model"])
@hyp_settings(40)
@given(data=st.data())
def test_arbitrary_slices_match_scatter(tid: str, data: st.DataObject) -> None:
    tok = fixture_tokenizer(tid)
    masker = _masker(tid)
    index = tok.vocab.index
    n, t = tok.n_vocab, len(index.order)
    slices = data.draw(st.lists(_slice_strategy(t), max_size=4), label="slices")
    ids = data.draw(st.lists(st.integers(0, n - 1), max_size=4), label="ids")
    c = _Given(index, Allowed(everything=False, slices=tuple(slices), ids=tuple(ids)))
    want = np.zeros(n, dtype=bool)
    for lo, hi in slices:
        want[index.order[lo:hi]] = True
    want[ids] = True
    assert np.array_equal(masker.mask(c), want)
    assert np.array_equal(masker.bitmask(c), _pack_reference(want))
    logits = np.linspace(-3, 3, n + 7).astype(np.float32)
    out = masker.apply(logits.copy(), c)
    assert np.array_equal(out[:n][want], logits[:n][want])
    assert np.isneginf(out[:n][~want]).all() and np.isneginf(out[n:]).all()


# -- 3. other libraries' readers (optional) -----------------------------------------------------


def _interop_case() -> tuple[TokenMasker, Constraint, np.ndarray]:
    tok = fixture_tokenizer("cl100k_base")
    c = prefix_constraint(tok, b" ")
    return _masker("cl100k_base"), c, _brute_prefix("cl100k_base", b" ")


def test_llguidance_reads_our_bitmask() -> None:
    pytest.importorskip(
        "llguidance", reason="llguidance not installed; the layout is checked against hand-written words"
    )
    lln = importlib.import_module("llguidance.numpy")
    masker, c, want = _interop_case()
    logits = np.zeros((1, masker.n_vocab), dtype=np.float32)
    lln.apply_token_bitmask_inplace(logits, masker.bitmask_batch([c]))
    assert np.array_equal(np.isneginf(logits[0]), ~want)


def test_xgrammar_reads_our_bitmask() -> None:
    xgr = pytest.importorskip(
        "xgrammar", reason="xgrammar not installed; the layout is checked against hand-written words"
    )
    torch = pytest.importorskip("torch")
    masker, c, want = _interop_case()
    logits = torch.zeros(masker.n_vocab, dtype=torch.float32)
    xgr.apply_token_bitmask_inplace(logits, torch.from_numpy(masker.bitmask(c)))
    assert np.array_equal(torch.isneginf(logits).numpy(), ~want)


# -- 4. apply -------------------------------------------------------------------------------------


@pytest.mark.parametrize("prefix", [b" ", b" wor", b""])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_apply_numpy_1d(prefix: bytes, dtype: type) -> None:
    tid = "o200k_base"  # b" " allows 100k ids: the bitmask path; b" wor" the few-ids path
    tok = fixture_tokenizer(tid)
    masker = _masker(tid)
    n = tok.n_vocab
    want = _brute_prefix(tid, prefix)
    logits = np.random.default_rng(1).standard_normal(n + 64).astype(dtype)
    logits[5] = np.inf  # extreme values survive when allowed
    before = logits.copy()
    out = masker.apply(logits, prefix_constraint(tok, prefix))
    assert out is logits
    assert np.array_equal(logits[:n][want], before[:n][want])
    assert np.isneginf(logits[:n][~want]).all()
    assert np.isneginf(logits[n:]).all()  # padded columns: masked even when everything is allowed


@pytest.mark.parametrize("prefix", [b" ", b" wor"])
def test_apply_nan_logits_fail_closed(prefix: bytes) -> None:
    """A NaN at a disallowed id becomes -inf; one at an allowed id is left as it was."""
    tid = "o200k_base"
    tok = fixture_tokenizer(tid)
    want = _brute_prefix(tid, prefix)
    logits = np.random.default_rng(2).standard_normal(tok.n_vocab).astype(np.float32)
    bad, good = int(np.flatnonzero(~want)[7]), int(np.flatnonzero(want)[3])
    logits[[bad, good]] = np.nan
    _masker(tid).apply(logits, prefix_constraint(tok, prefix))
    assert np.isneginf(logits[bad]) and np.isnan(logits[good])
    assert np.isneginf(logits[~want]).all()


def test_apply_numpy_2d_and_errors() -> None:
    tid = "cl100k_base"
    tok = fixture_tokenizer(tid)
    masker = _masker(tid)
    n = tok.n_vocab
    cs = [prefix_constraint(tok, p) for p in (b" ", b"e", b"")]
    done = prefix_constraint(tok, b" wor")
    assert done.accept(tok.encode(" world")[0]) and done.is_done
    cs.append(done)
    logits = np.random.default_rng(2).standard_normal((len(cs), n + 64))
    before = logits.copy()
    assert masker.apply(logits, cs) is logits
    for r, c in enumerate(cs):
        want = _reference_mask(c)
        assert np.array_equal(logits[r, :n][want], before[r, :n][want])
        assert np.isneginf(logits[r, :n][~want]).all() and np.isneginf(logits[r, n:]).all()
    with pytest.raises(ValueError, match="fewer than the tokenizer's n_vocab"):
        masker.apply(np.zeros(n - 1, dtype=np.float32), cs[0])
    with pytest.raises(ValueError, match="rows"):
        masker.apply(np.zeros((2, n)), cs)
    with pytest.raises(TypeError):
        masker.apply(np.zeros((2, n)), cs[0])
    with pytest.raises(TypeError):
        masker.apply(np.zeros(n), cs)
    with pytest.raises(TypeError, match="floating-point"):
        masker.apply(np.zeros(n, dtype=np.int32), cs[0])
    with pytest.raises(ValueError, match="another tokenizer"):
        masker.apply(np.zeros(n), prefix_constraint(fixture_tokenizer("r50k_base"), b" "))


def test_apply_torch() -> None:
    torch = pytest.importorskip("torch")
    tid = "cl100k_base"
    tok = fixture_tokenizer(tid)
    masker = _masker(tid)
    n = tok.n_vocab
    c = prefix_constraint(tok, b" ")
    want = torch.from_numpy(_brute_prefix(tid, b" "))
    logits = torch.randn(2, n + 64)
    before = logits.clone()
    assert masker.apply(logits, [c, prefix_constraint(tok, b"")]) is logits
    assert torch.equal(logits[0, :n][want], before[0, :n][want])
    assert torch.isneginf(logits[0, :n][~want]).all() and torch.isneginf(logits[:, n:]).all()
    assert torch.equal(logits[1, :n], before[1, :n])
    one = torch.randn(n, dtype=torch.float16)
    masker.apply(one, c)
    assert torch.equal(torch.isneginf(one), ~want)
    with pytest.raises(ValueError):
        masker.apply(torch.zeros(n - 1), c)


# -- 5. draft masks ---------------------------------------------------------------------------------


def _draft_reference(c: Constraint, draft: Sequence[int]) -> np.ndarray:
    """Sequential fork / accept, each row from allowed_ids(); all False after a refusal."""
    n = c.index.n_vocab
    rows = np.zeros((len(draft) + 1, n), dtype=bool)
    f = c.fork()
    for j in range(len(draft) + 1):
        rows[j] = _reference_mask(f)
        if j == len(draft):
            break
        if not (0 <= draft[j] < n and f.accept(draft[j])):
            break
    return rows


def test_draft_masks_sequential_and_fail_closed() -> None:
    tid = "cl100k_base"
    tok = fixture_tokenizer(tid)
    masker = _masker(tid)
    n = tok.n_vocab
    c = prefix_constraint(tok, b" wor")
    good = tok.encode(" world is big")
    rows = masker.draft_masks(c, good)
    assert rows.shape == (len(good) + 1, n) and rows.dtype == np.bool_
    assert np.array_equal(rows, _draft_reference(c, good))
    assert rows[1:].all()  # done after " world": everything
    bad = tok.encode(" hello")[0]
    rows = masker.draft_masks(c, [bad, *good])
    assert np.array_equal(rows[0], _brute_prefix(tid, b" wor")) and not rows[1:].any()
    # A multi-step prefix: " w" then "or..." stays restricted, then a refusal.
    w = tok.encode(" w")[0]
    rows = masker.draft_masks(c, [w, bad, w])
    assert np.array_equal(rows, _draft_reference(c, [w, bad, w]))
    assert rows[1].any() and not rows[2:].any()
    # Ids outside the vocabulary (a padded model vocabulary) fail closed too.
    rows = masker.draft_masks(c, [n + 3, w])
    assert rows[0].any() and not rows[1:].any()
    assert masker.draft_masks(c, []).shape == (1, n)
    assert np.array_equal(masker.draft_masks(c, np.array(good)), _draft_reference(c, good))
    # The caller's constraint is untouched.
    assert c.accepted == 0 and c.remaining == b" wor"
    with pytest.raises(TypeError):
        masker.draft_masks(c, [1.5])  # type: ignore[list-item]


def test_draft_masks_eos_inside_the_window() -> None:
    tid = "cl100k_base"
    tok = fixture_tokenizer(tid)
    masker = _masker(tid)
    eos = tok.special_tokens["<|endoftext|>"]
    c = choice_constraint(tok, ["yes", "no"], eos_id=eos)
    yes = tok.encode("yes")
    draft = [*yes, eos, tok.encode(" extra")[0]]
    rows = masker.draft_masks(c, draft)
    assert np.array_equal(rows, _draft_reference(c, draft))
    assert rows[len(yes)].tolist() == _mask_of_ids(tok.n_vocab, [eos]).tolist()  # only EOS after "yes"
    assert rows[len(yes) + 1 :].all()  # EOS accepted: the constraint is done
    # Without the EOS the extra token is refused right after "yes".
    rows = masker.draft_masks(c, [*yes, tok.encode(" extra")[0], eos])
    assert not rows[len(yes) + 1 :].any()
    assert c.accepted == 0


@pytest.mark.parametrize("tid", ["cl100k_base", "hf/llama3_tokenizer.json"])
@hyp_settings(40)
@given(data=st.data())
def test_draft_masks_property(tid: str, data: st.DataObject) -> None:
    tok = fixture_tokenizer(tid)
    masker = _masker(tid)
    n = tok.n_vocab
    eos = max(tok.special_tokens.values())
    kind = data.draw(st.sampled_from(["prefix", "choice"]), label="kind")
    if kind == "prefix":
        c = prefix_constraint(tok, data.draw(st.sampled_from(FIXED_PREFIXES), label="prefix"))
    else:
        c = choice_constraint(tok, ["yes", "no", "nothing", "的确"], eos_id=eos)
    # Walk a random allowed prefix first, so drafts start mid-constraint too.
    for _ in range(data.draw(st.integers(0, 2), label="walk")):
        allowed = c.allowed_ids()
        if len(allowed):
            c.accept(int(allowed[data.draw(st.integers(0, len(allowed) - 1))]))
    before = (c.accepted, c.allowed())
    f = c.fork()
    draft: list[int] = []
    for _ in range(data.draw(st.integers(0, 6), label="k")):
        allowed = f.allowed_ids()
        if len(allowed) and data.draw(st.integers(0, 9)) < 8:  # mostly allowed ids
            i = int(allowed[data.draw(st.integers(0, len(allowed) - 1))])
        else:
            i = data.draw(st.integers(0, n + 10))
        draft.append(i)
        if 0 <= i < n:
            f.accept(i)
    rows = masker.draft_masks(c, draft)
    assert np.array_equal(rows, _draft_reference(c, draft))
    assert (c.accepted, c.allowed()) == before


# -- 6. batches and fill_bitmask ---------------------------------------------------------------------


def test_batches_equal_stacked_rows() -> None:
    tid = "o200k_base"
    tok = fixture_tokenizer(tid)
    masker = _masker(tid)
    cs = [prefix_constraint(tok, p) for p in (b" ", b"", b" wor", CJK2)]
    cs.append(choice_constraint(tok, ["yes", "no"], eos_id=tok.special_tokens["<|endoftext|>"]))
    masks = masker.mask_batch(cs)
    bits = masker.bitmask_batch(cs)
    assert masks.shape == (len(cs), tok.n_vocab) and bits.shape == (len(cs), (tok.n_vocab + 31) // 32)
    assert np.array_equal(masks, np.stack([_reference_mask(c) for c in cs]))
    assert np.array_equal(bits, np.stack([_pack_reference(_reference_mask(c)) for c in cs]))
    assert masker.mask_batch([]).shape == (0, tok.n_vocab)
    with pytest.raises(TypeError):
        masker.mask_batch(cs[0])  # type: ignore[arg-type]


def test_fill_bitmask_into_padded_buffer() -> None:
    tid = "cl100k_base"
    tok = fixture_tokenizer(tid)
    masker = _masker(tid)
    w = (tok.n_vocab + 31) // 32
    c = prefix_constraint(tok, b"e")
    out = np.full((3, w + 3), 12345, dtype=np.int32)  # a padded model vocabulary
    masker.fill_bitmask(c, out, 1)
    assert np.array_equal(out[1, :w], _pack_reference(_brute_prefix(tid, b"e")))
    assert out[1, w:].tolist() == [0, 0, 0]
    assert (out[[0, 2]] == 12345).all()  # other rows untouched
    one = np.full(w, 7, dtype=np.int32)
    masker.fill_bitmask(prefix_constraint(tok, b""), one)
    assert np.array_equal(one, _pack_reference(np.ones(tok.n_vocab, dtype=bool)))
    with pytest.raises(ValueError, match="fewer than"):
        masker.fill_bitmask(c, np.zeros((1, w - 1), dtype=np.int32))
    with pytest.raises(TypeError, match="int32"):
        masker.fill_bitmask(c, np.zeros((1, w), dtype=np.int64))
    with pytest.raises(IndexError):
        masker.fill_bitmask(c, out, 3)


# -- caching, freshness, docs ---------------------------------------------------------------------


def test_results_are_fresh_and_tables_shared() -> None:
    tok = fixture_tokenizer("cl100k_base")
    a, b = TokenMasker(tok), TokenMasker(tok)
    assert a._tables is b._tables and a.index is b.index
    everything = prefix_constraint(tok, b"")
    m = a.mask(everything)
    m[:] = False
    bits = a.bitmask(everything)
    bits[:] = 0
    assert a.mask(everything).all() and (a.bitmask(everything)[:-1] == -1).all()
    big = prefix_constraint(tok, b" ")
    m = a.mask(big)
    m[:] = True
    assert np.array_equal(a.mask(big), _brute_prefix("cl100k_base", b" "))


def test_docstring_examples() -> None:
    result = doctest.testmod(importlib.import_module("tokstream.constrain.masks"))
    assert result.attempted > 0 and result.failed == 0


def test_public_tokenizer_bytes_agree_with_index() -> None:
    # The brute-force reference reads tok.token_bytes; the masks read the index.
    for tid in ("cl100k_base", "hf/bert_minilm_tokenizer.json", "spm/mistral_7b_v1_tokenizer.model"):
        assert tuple(fixture_tokenizer(tid).vocab.index.token_bytes) == _bytes(tid)

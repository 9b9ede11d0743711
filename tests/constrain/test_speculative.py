"""verify_draft: speculative-sampling verification under a constraint.

The claim under test: the ids ``verify_draft`` returns are distributed exactly as ids
sampled one at a time from the masked, renormalized target. Every expectation here is
computed independently of the code under test: the exact masked-target probabilities
by enumeration, and a chi-square goodness-of-fit test at alpha = 0.001 whose critical
value comes from the exact upper-tail series below (checked against a printed table,
and against scipy when it is installed). Seeds are fixed, so the outcomes are
deterministic. Two deliberately biased verifiers run the same test and must fail it,
which shows that the test can see the bugs it is meant to catch.

Greedy mode is compared id for id with greedy constrained decoding without
speculation, on the embedded o200k_base tokenizer with real constraints and
``TokenMasker.draft_masks``.
"""

from __future__ import annotations

import doctest
import importlib
import math
from collections import Counter
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import numpy as np
import pytest

import tokstream
from tokstream.constrain import Constraint, TokenMasker, choice_constraint, heal
from tokstream.constrain.speculative import SUM_TOLERANCE, verify_draft
from tokstream.errors import InvalidTokenIdError

ALPHA = 0.001
TRIALS = 20_000

# -- chi-square ------------------------------------------------------------------------------


def chi2_sf(x: float, df: int) -> float:
    """P(X > x) for X ~ chi-square(df), df a positive integer: the exact finite series.

    From Q(x; v + 2) = Q(x; v) + (x/2)^(v/2) e^(-x/2) / Gamma(v/2 + 1) (integration by
    parts of the incomplete gamma function), with Q(x; 2) = e^(-x/2) and
    Q(x; 1) = erfc(sqrt(x/2)):

    - even df = 2m: Q = sum_{i<m} e^(-x/2) (x/2)^i / i!
    - odd df = 2m+1: Q = erfc(sqrt(x/2)) + sum_{i<m} e^(-x/2) (x/2)^(i+1/2) / Gamma(i+3/2)

    Terms are summed in log space (lgamma), so large x and df do not overflow.
    """
    if df < 1 or x < 0:
        raise ValueError("chi2_sf needs df >= 1 and x >= 0")
    if x == 0:
        return 1.0
    h = x / 2
    if df % 2 == 0:
        return sum(math.exp(-h + i * math.log(h) - math.lgamma(i + 1)) for i in range(df // 2))
    head = math.erfc(math.sqrt(h))
    return head + sum(math.exp(-h + (i + 0.5) * math.log(h) - math.lgamma(i + 1.5)) for i in range(df // 2))


@cache
def chi2_critical(df: int, alpha: float = ALPHA) -> float:
    """The x with P(X > x) = alpha, by bisection on the monotone ``chi2_sf``."""
    lo, hi = 0.0, 1.0
    while chi2_sf(hi, df) > alpha:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if chi2_sf(mid, df) > alpha:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def chi_square(observed: Counter[tuple[int, ...]], probs: dict[tuple[int, ...], float], n: int) -> tuple[float, int]:
    """Pearson's statistic and its degrees of freedom for ``n`` draws against the exact
    cell probabilities ``probs``. Cells expected fewer than 5 times are pooled into one
    (the usual validity rule); an observation in a cell of probability 0 gives an
    infinite statistic (an impossible outcome happened)."""
    if any(probs.get(key, 0.0) == 0.0 for key in observed):
        return math.inf, max(1, sum(p > 0 for p in probs.values()) - 1)
    cells: list[tuple[float, int]] = []
    pooled_exp, pooled_obs = 0.0, 0
    for key, p in probs.items():
        if p == 0:
            continue
        expected = n * p
        if expected < 5:
            pooled_exp += expected
            pooled_obs += observed.get(key, 0)
        else:
            cells.append((expected, observed.get(key, 0)))
    if pooled_exp > 0:
        cells.append((pooled_exp, pooled_obs))
    stat = sum((o - e) ** 2 / e for e, o in cells)
    return stat, len(cells) - 1


# Upper 0.1% points of chi-square, from the standard table (NIST/SEMATECH e-Handbook
# of Statistical Methods, 1.3.6.7.4, "Critical Values of the Chi-Square Distribution").
TABLE_0_001 = {1: 10.828, 2: 13.816, 3: 16.266, 4: 18.467, 5: 20.515, 10: 29.588, 20: 45.315, 50: 86.661}


def test_chi2_critical_values_match_the_table() -> None:
    for df, value in TABLE_0_001.items():
        assert chi2_critical(df) == pytest.approx(value, abs=2e-3), df


def test_chi2_sf_matches_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    for df in (1, 2, 3, 7, 8, 25, 60):
        for x in (0.01, 0.5, 3.0, 12.0, 40.0, 150.0):
            assert chi2_sf(x, df) == pytest.approx(float(stats.chi2.sf(x, df)), rel=1e-9, abs=1e-300)
        assert chi2_critical(df) == pytest.approx(float(stats.chi2.isf(ALPHA, df)), rel=1e-9)


# -- verifiers: the real one and two deliberately biased ones ---------------------------------

Verifier = Callable[..., list[int]]


def _sample(row: np.ndarray, rng: np.random.Generator) -> int:
    cdf = np.cumsum(row)
    return min(int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right")), len(row) - 1)


def _biased(variant: str) -> Verifier:
    """A plain-Python speculative verifier with one deliberate bug:

    - ``"resample"``: after a rejection it samples from the masked target p instead of
      the residual max(0, p - q);
    - ``"unmasked_ratio"``: it accepts with min(1, p_raw[x] / q[x]), the target before
      the mask (the residual still uses the masked p).
    """

    def verify(draft_ids, draft_probs, target_probs, *, rng, masks=None):  # type: ignore[no-untyped-def]
        out: list[int] = []
        for i, x in enumerate(draft_ids):
            raw = np.asarray(target_probs[i], dtype=float)
            p = raw * masks[i] if masks is not None else raw.copy()
            p = p / p.sum()
            q = np.asarray(draft_probs[i], dtype=float)
            ratio_p = raw if variant == "unmasked_ratio" else p
            if rng.random() < ratio_p[x] / q[x]:
                out.append(x)
                continue
            if variant == "resample":
                return [*out, _sample(p, rng)]
            return [*out, _sample(np.maximum(p - q, 0.0), rng)]
        last = np.asarray(target_probs[len(draft_ids)], dtype=float)
        if masks is not None:
            last = last * masks[len(draft_ids)]
        return [*out, _sample(last / last.sum(), rng)]

    return verify


# -- a toy world: context-dependent target, draft and constraint -------------------------------

START = -1  # the "last id" before any id


class World:
    """``V`` ids; the target and draft rows and the mask depend on the last id. The
    mask: no id twice in a row, and id ``V - 1`` is not allowed first. The draft puts
    mass on forbidden ids unless ``masked_draft``."""

    def __init__(self, v: int = 4, seed: int = 7, masked_draft: bool = False) -> None:
        rng = np.random.default_rng(seed)
        self.v = v
        self.target = {last: rng.dirichlet(np.ones(v)) for last in (START, *range(v))}
        # A draft that disagrees with the target on purpose (more rejections).
        self.draft_raw = {last: rng.dirichlet(np.full(v, 0.7)) for last in (START, *range(v))}
        # Every row depends on the last id only: build them once.
        self.masks: dict[int, np.ndarray] = {}
        self.draft: dict[int, np.ndarray] = {}
        for last in (START, *range(v)):
            m = np.ones(v, dtype=bool)
            m[v - 1 if last == START else last] = False
            self.masks[last] = m
            q = self.draft_raw[last] * m if masked_draft else self.draft_raw[last]
            self.draft[last] = q / q.sum()

    def mask(self, ctx: Sequence[int]) -> np.ndarray:
        return self.masks[ctx[-1] if ctx else START]

    def target_row(self, ctx: Sequence[int]) -> np.ndarray:
        return self.target[ctx[-1] if ctx else START]

    def draft_row(self, ctx: Sequence[int]) -> np.ndarray:
        return self.draft[ctx[-1] if ctx else START]

    def exact(self, length: int) -> dict[tuple[int, ...], float]:
        """P(first ``length`` ids = s) under masked-target sampling, by enumeration."""
        probs: dict[tuple[int, ...], float] = {(): 1.0}
        for _ in range(length):
            nxt: dict[tuple[int, ...], float] = {}
            for seq, ps in probs.items():
                p = self.target_row(seq) * self.mask(seq)
                p = p / p.sum()
                for t in range(self.v):
                    nxt[(*seq, t)] = ps * float(p[t])
            probs = nxt
        return probs

    def generate(
        self, verify: Verifier, k: int, length: int, rng: np.random.Generator
    ) -> tuple[tuple[int, ...], int, int]:
        """Speculative generation of ``length`` ids: ``(ids, drafts accepted, calls)``."""
        ctx: list[int] = []
        accepted = calls = 0
        while len(ctx) < length:
            draft: list[int] = []
            q_rows = []
            for _ in range(k):
                q = self.draft_row(ctx + draft)
                draft.append(_sample(q, rng))
                q_rows.append(q)
            seqs = [ctx + draft[:j] for j in range(k + 1)]
            target = np.stack([self.target_row(s) for s in seqs])
            masks = np.stack([self.mask(s) for s in seqs])
            out = verify(draft, np.stack(q_rows), target, rng=rng, masks=masks)
            assert 1 <= len(out) <= k + 1 and out[:-1] == draft[: len(out) - 1]
            accepted += len(out) - 1
            calls += 1
            ctx += out
        return tuple(ctx[:length]), accepted, calls


def run_world(
    verify: Verifier, *, k: int, length: int, masked_draft: bool, seed: int, trials: int = TRIALS
) -> tuple[float, float, int, float]:
    """``(statistic, critical value, df, acceptance rate)`` of the first ``length`` ids
    of ``trials`` speculative generations against the exact masked-target joint."""
    world = World(masked_draft=masked_draft)
    rng = np.random.default_rng(seed)
    counts: Counter[tuple[int, ...]] = Counter()
    accepted = drafted = 0
    for _ in range(trials):
        seq, acc, calls = world.generate(verify, k, length, rng)
        counts[seq] += 1
        accepted += acc
        drafted += calls * k
    stat, df = chi_square(counts, world.exact(length), trials)
    return stat, chi2_critical(df), df, accepted / drafted


# -- the issue's example: V = {a, b, c}, p = (.4, .4, .2) masked to {a, b}, q = (.5, 0, .5) --------

ISSUE_P = np.array([[0.4, 0.4, 0.2], [0.2, 0.3, 0.5]])
ISSUE_Q = np.array([0.5, 0.0, 0.5])
ISSUE_MASKS = np.array([[True, True, False], [True, True, True]])


def run_issue(verify: Verifier, seed: int, trials: int = TRIALS) -> tuple[float, float, dict[int, float]]:
    """The first id after a one-id draft x ~ q: ``(statistic, critical, frequencies)``;
    the correct distribution is (.5, .5, 0)."""
    rng = np.random.default_rng(seed)
    counts: Counter[tuple[int, ...]] = Counter()
    for _ in range(trials):
        x = _sample(ISSUE_Q, rng)
        out = verify([x], ISSUE_Q[None, :], ISSUE_P, rng=rng, masks=ISSUE_MASKS)
        counts[(out[0],)] += 1
    stat, df = chi_square(counts, {(0,): 0.5, (1,): 0.5, (2,): 0.0}, trials)
    freqs = {t: counts[(t,)] / trials for t in range(3)}
    return stat, chi2_critical(df), freqs


def test_issue_example_first_id_is_the_masked_target() -> None:
    stat, crit, freqs = run_issue(verify_draft, seed=1)
    assert stat < crit, (stat, crit, freqs)
    assert freqs[2] == 0.0  # the forbidden id never comes out


def test_issue_example_controls_fail() -> None:
    # Resampling from p after a rejection: (.75, .25) instead of (.5, .5).
    stat, crit, freqs = run_issue(_biased("resample"), seed=1)
    assert stat > crit, (stat, crit, freqs)
    assert freqs[0] == pytest.approx(0.75, abs=0.02)
    # The unmasked acceptance ratio accepts the forbidden draft 'c' 40% of the time.
    stat, crit, freqs = run_issue(_biased("unmasked_ratio"), seed=1)
    assert stat > crit and freqs[2] == pytest.approx(0.2, abs=0.02), (stat, crit, freqs)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("k", "length", "masked_draft"),
    [(1, 2, False), (1, 2, True), (4, 3, False), (4, 3, True)],
    ids=["k1-unmasked-draft", "k1-masked-draft", "k4-unmasked-draft", "k4-masked-draft"],
)
def test_joint_distribution_is_the_masked_target(k: int, length: int, masked_draft: bool) -> None:
    """The joint of the first ids of whole generations (so the ids after an accepted
    draft, the corrected id and the bonus id all count) fits the exact masked target."""
    stat, crit, df, rate = run_world(verify_draft, k=k, length=length, masked_draft=masked_draft, seed=11 + k)
    assert stat < crit, (stat, crit, df)
    assert 0.2 < rate < 0.95  # drafts are both accepted and rejected: every path runs


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["resample", "unmasked_ratio"])
def test_joint_controls_fail(variant: str) -> None:
    stat, crit, df, _ = run_world(_biased(variant), k=4, length=3, masked_draft=False, seed=15, trials=TRIALS // 2)
    assert stat > crit, (variant, stat, crit, df)


def test_acceptance_rate_is_the_overlap() -> None:
    """k = 1: a draft is accepted with probability sum_x min(p(x), q(x)) (Leviathan et
    al., Definition 3.1), p the masked target."""
    world = World()
    p = world.target_row(()) * world.mask(())
    p = p / p.sum()
    alpha = float(np.minimum(p, world.draft_row(())).sum())
    rng = np.random.default_rng(3)
    n, hits = TRIALS, 0
    q = world.draft_row(())[None, :]
    for _ in range(n):
        x = _sample(q[0], rng)
        target = np.stack([world.target_row(()), world.target_row((x,))])
        masks = np.stack([world.mask(()), world.mask((x,))])
        hits += len(verify_draft([x], q, target, rng=rng, masks=masks)) == 2
    sigma = math.sqrt(alpha * (1 - alpha) / n)
    assert abs(hits / n - alpha) < 5 * sigma, (hits / n, alpha)


# -- greedy mode: equal to greedy constrained decoding without speculation ---------------------


@cache
def _tok() -> tokstream.Tokenizer:
    return tokstream.load("default")


class ToyLM:
    """Full (V,) probability rows of a made-up model: a fixed random base plus boosts
    that depend on the last two ids (deterministically), some of them on the ids that
    spell the constraint's options, so that the constraint and the model interact.
    ``jitter`` > 0 makes a draft model: the same rows with context-dependent noise of
    that scale on the logits, so it agrees with the target only part of the time."""

    def __init__(self, seed: int, focus: Sequence[int], n: int, jitter: float = 0.0) -> None:
        rng = np.random.default_rng(seed)
        self.seed = seed
        self.n = n
        self.base = rng.normal(0.0, 1.0, n)
        self.focus = np.asarray(focus, dtype=np.intp)
        self.jitter = jitter

    def probs(self, ctx: Sequence[int]) -> np.ndarray:
        rng = np.random.default_rng([self.seed, *ctx[-2:]])
        logits = self.base.copy()
        logits[rng.integers(0, self.n, 64)] += rng.normal(6.0, 2.0, 64)
        logits[self.focus] += rng.normal(4.0, 3.0, len(self.focus))
        if self.jitter:
            noise = np.random.default_rng([self.seed, 1, *ctx[-2:]])
            logits += noise.normal(0.0, self.jitter, self.n)
        p = np.exp(logits - logits.max())
        out: np.ndarray = p / p.sum()
        return out


def _focus_ids(tok: tokstream.Tokenizer, texts: Sequence[str]) -> list[int]:
    ids: set[int] = set()
    for t in texts:
        ids.update(tok.encode(t))
        ids.update(tok.encode(t.strip()))
        for ch in t:
            ids.update(tok.encode(ch))
    return sorted(ids)


def _scenarios(tok: tokstream.Tokenizer) -> dict[str, Callable[[], tuple[list[int], Constraint[Any]]]]:
    eos = tok.special_tokens["<|endoftext|>"]
    options = ["yes", "no", "perhaps", "not at all"]

    def choice() -> tuple[list[int], Constraint[Any]]:
        return tok.encode("Is it raining? Answer:"), choice_constraint(tok, [" " + o for o in options], eos_id=eos)

    def healing() -> tuple[list[int], Constraint[Any]]:
        h = heal(tok, tok.encode("Visit https://exa"), max_backoff=2)
        return h.prompt_ids, h.constraint()

    return {"choice": choice, "heal": healing}


@pytest.mark.parametrize("scenario", ["choice", "heal"])
@pytest.mark.parametrize("draft_mode", ["unmasked", "masked"])
def test_greedy_equals_greedy_constrained_decoding(scenario: str, draft_mode: str) -> None:
    tok = _tok()
    masker = TokenMasker(tok)
    n = tok.n_vocab
    focus = _focus_ids(tok, [" yes", " no", " perhaps", " not at all", "example.com", "exa"])
    target = ToyLM(1, focus, n)
    draft = ToyLM(1, focus, n, jitter=1.5)  # a noisy copy: it agrees with the target only sometimes
    prompt, _ = _scenarios(tok)[scenario]()
    steps, k = 10, 3

    # Greedy constrained decoding, one target call per id.
    _, c = _scenarios(tok)[scenario]()
    plain: list[int] = []
    while len(plain) < steps:
        m = masker.mask(c)
        t = int(np.argmax(np.where(m, target.probs(prompt + plain), -1.0)))
        assert c.accept(t)
        plain.append(t)

    # Greedy speculative decoding: k greedy draft ids, one verification.
    _, c = _scenarios(tok)[scenario]()
    spec: list[int] = []
    calls = accepted_total = 0
    while len(spec) < steps:
        fork = c.fork()
        drafts: list[int] = []
        for _ in range(k):
            q = draft.probs(prompt + spec + drafts)
            if draft_mode == "masked":
                q = np.where(masker.mask(fork), q, -1.0)
            drafts.append(int(np.argmax(q)))
            fork.accept(drafts[-1])  # refused ids simply leave the fork as it was
        rows = np.stack([target.probs(prompt + spec + drafts[:j]) for j in range(k + 1)])
        masks = masker.draft_masks(c, drafts)
        out = verify_draft(drafts, None, rows, masks=masks, greedy=True)
        calls += 1
        accepted_total += len(out) - 1
        for t in out:
            assert c.accept(t)
        spec += out
    assert spec[:steps] == plain
    assert 0 < accepted_total < calls * k  # some drafts were accepted, some rejected


def test_greedy_ties_go_to_the_lowest_id_and_draft_probs_are_optional() -> None:
    p = np.array([[0.1, 0.4, 0.1, 0.4], [0.25, 0.25, 0.25, 0.25]])
    assert verify_draft([3], None, p, greedy=True) == [1]  # 3 ties with 1: the lowest wins
    assert verify_draft([1], None, p, greedy=True) == [1, 0]
    m = np.array([[True, False, True, True], [False, True, True, True]])
    assert verify_draft([3], None, p, masks=m, greedy=True) == [3, 1]
    q = np.array([[0.0, 0.0, 0.0, 1.0]])
    assert verify_draft([3], q, p, masks=m, greedy=True) == [3, 1]  # checked, not used


# -- sampling with a real tokenizer and constraint -------------------------------------------


def test_sampling_with_draft_masks_never_leaves_the_constraint() -> None:
    """Drafts the constraint refuses (the masks then fail closed) are rejected, never
    an error, and every returned id is accepted by the constraint."""
    tok = _tok()
    masker = TokenMasker(tok)
    focus = _focus_ids(tok, [" yes", " no", " perhaps", " not at all"])
    target, draft = ToyLM(3, focus, tok.n_vocab), ToyLM(3, focus, tok.n_vocab, jitter=1.0)
    rng = np.random.default_rng(5)
    prompt, c0 = _scenarios(tok)["choice"]()
    answers: Counter[str] = Counter()
    for trial in range(12):
        c = c0.fork()
        out_ids: list[int] = []
        while not c.is_done:
            drafts: list[int] = []
            q_rows = []
            for _ in range(3):
                q = draft.probs(prompt + out_ids + drafts)  # unmasked: often refused
                drafts.append(_sample(q, rng))
                q_rows.append(q)
            rows = np.stack([target.probs(prompt + out_ids + drafts[:j]) for j in range(4)])
            masks = masker.draft_masks(c, drafts)
            out = verify_draft(drafts, np.stack(q_rows), rows, rng=rng, masks=masks)
            for t in out:
                assert c.accept(t), (trial, t)
                out_ids.append(t)
                if c.is_done:
                    break
        answers[tok.decode(out_ids)] += 1
    assert set(answers) <= {f" {o}<|endoftext|>" for o in ("yes", "no", "perhaps", "not at all")}


# -- edge cases ------------------------------------------------------------------------------


class FixedRng(np.random.Generator):
    """A Generator whose ``random()`` always returns ``u`` (to reach rounding edges)."""

    def __init__(self, u: float) -> None:
        super().__init__(np.random.PCG64(0))
        self.u = u

    def random(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        return self.u


def test_k0_samples_one_id_and_zero_weight_ids_never_come_out() -> None:
    p = np.array([[0.0, 0.5, 0.0, 0.5]])
    seen = {verify_draft([], np.zeros((0, 4)), p, rng=np.random.default_rng(s))[0] for s in range(200)}
    assert seen == {1, 3}
    assert verify_draft([], [], p, rng=FixedRng(0.0)) == [1]  # not id 0 (weight 0)
    assert verify_draft([], [], p, rng=FixedRng(1 - 2**-53)) == [3]  # not past the end
    m = np.array([[True, False, False, False]])
    with pytest.raises(ValueError, match="puts no probability"):
        verify_draft([], [], p, masks=m)


def test_masked_ids_are_never_returned_and_the_output_is_valid() -> None:
    rng = np.random.default_rng(9)
    world = World(v=5)
    for _ in range(300):
        q = world.draft_row(())  # unmasked: mass on the forbidden id 4
        x = _sample(q, rng)
        target = np.stack([world.target_row(()), world.target_row((x,))])
        masks = np.stack([world.mask(()), world.mask((x,))])
        out = verify_draft([x], q[None, :], target, rng=rng, masks=masks)
        assert out[0] != 4
        if len(out) == 2:
            assert out[1] != out[0]
        assert all(type(t) is int for t in out)


def test_residual_of_equal_rows_falls_back_to_p() -> None:
    # p and q differ only by rounding: the ratio is just below 1, a draw of u ~ 1
    # rejects, and the residual is pure noise; the fallback samples from p.
    p = np.array([[0.5, 0.5], [0.5, 0.5]])
    q = np.array([[0.5000000000000001, 0.4999999999999999]])
    out = verify_draft([0], q, p, rng=FixedRng(1 - 2**-53))
    assert len(out) == 1 and out[0] in (0, 1)
    # Exactly equal rows: always accepted (ratio 1), whatever u.
    assert verify_draft([0], p[:1], p, rng=FixedRng(1 - 2**-53))[0] == 0


def test_unreachable_empty_mask_rows_are_fine_reachable_ones_raise() -> None:
    p = np.full((3, 3), 1 / 3)
    q = np.full((2, 3), 1 / 3)
    # Draft id 2 is forbidden at row 0, so rows 1 and 2 (all False, as draft_masks
    # writes them after a refused id) are never reached.
    m = np.array([[True, True, False], [False] * 3, [False] * 3])
    for seed in range(20):
        out = verify_draft([2, 0], q, p, rng=np.random.default_rng(seed), masks=m)
        assert len(out) == 1 and out[0] in (0, 1)
    # Here draft id 0 may be accepted, so row 1 is reachable: an error for every seed.
    m = np.array([[True, True, False], [False] * 3, [True] * 3])
    for seed in range(5):
        with pytest.raises(ValueError, match="mask row 1 allows no token"):
            verify_draft([0, 1], q, p, rng=np.random.default_rng(seed), masks=m)
    with pytest.raises(ValueError, match="mask row 0 allows no token"):
        verify_draft([0], q[:1], p[:2], masks=np.zeros((2, 3), dtype=bool))
    with pytest.raises(ValueError, match="mask row 0 allows no token"):
        verify_draft([0], None, p[:2], masks=np.zeros((2, 3), dtype=bool), greedy=True)


def test_narrow_masks_are_padded_as_disallowed() -> None:
    p = np.array([[0.2, 0.2, 0.6]])  # column 2: a padded-vocabulary id
    m = np.array([[True, True]])
    seen = {verify_draft([], [], p, masks=m, rng=np.random.default_rng(s))[0] for s in range(100)}
    assert seen == {0, 1}


def test_small_sum_errors_are_renormalized() -> None:
    p = np.array([[0.5, 0.5 + 0.9 * SUM_TOLERANCE]], dtype=np.float32)
    assert verify_draft([], [], p, rng=np.random.default_rng(0))[0] in (0, 1)


def test_same_seed_same_output() -> None:
    world = World()
    q = np.stack([world.draft_row(()), world.draft_row((1,))])
    t = np.stack([world.target_row(()), world.target_row((1,)), world.target_row((1, 2))])
    runs = [verify_draft([1, 2], q, t, rng=np.random.default_rng(42)) for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]


V3 = np.full((2, 3), 1 / 3)  # two uniform rows over V = 3
Q1 = V3[:1]  # one draft row
ROW = [1 / 3] * 3
ERROR_CASES: list[tuple[list[Any] | np.ndarray, Any, Any, dict[str, Any], type[Exception], str]] = [
    # (draft_ids, draft_probs, target_probs, other arguments, error, message)
    ([0], V3, V3, {}, ValueError, r"draft_probs must have shape \(1, 3\)"),
    ([0], Q1, Q1, {}, ValueError, r"target_probs must have shape \(2, V\)"),
    ([0], np.full((1, 4), 0.25), V3, {}, ValueError, "same vocabulary"),
    ([0], V3[0], V3, {}, ValueError, "draft_probs must have shape"),
    ([0], Q1, V3, {"masks": np.ones((1, 3), bool)}, ValueError, r"masks must have shape \(2, 3\)"),
    ([0], Q1, V3, {"masks": np.ones((2, 4), bool)}, ValueError, "masks must have shape"),
    ([0], Q1, V3, {"masks": np.ones((2, 3))}, TypeError, "masks must be bool"),
    ([[0]], Q1, V3, {}, TypeError, r"draft_ids\[0\] must be an int"),
    (np.array([[0]]), Q1, V3, {}, ValueError, "draft_ids must be 1-D"),
    ([0.0], Q1, V3, {}, TypeError, "must be an int"),
    ([True], Q1, V3, {}, TypeError, "must be an int"),
    ([3], Q1, V3, {}, InvalidTokenIdError, r"token id 3 is out of range for 'draft_ids\[0\]' \(n_vocab=3\)"),
    ([-1], Q1, V3, {}, InvalidTokenIdError, "token id -1"),
    ([0], None, V3, {}, ValueError, "draft_probs is required"),
    ([0], Q1, V3, {"rng": 0}, TypeError, "numpy.random.Generator"),
    ([0], Q1, V3, {"rng": np.random.RandomState(0)}, TypeError, "Generator"),
    ([0], Q1, [[np.nan, 0.5, 0.5], ROW], {}, ValueError, "target_probs row 0 contains NaN"),
    ([0], Q1, [ROW, [np.inf, 0, 0]], {}, ValueError, "target_probs row 1 contains an infinite value"),
    ([0], [[np.nan, 0.5, 0.5]], V3, {}, ValueError, "draft_probs row 0 contains NaN"),
    ([0], Q1, [[-0.1, 0.6, 0.5], ROW], {}, ValueError, "negative probability"),
    ([0], Q1, [[2.0, -1.0, 0.5], ROW], {}, ValueError, "negative"),
    ([0], Q1, [[1.5, 2.0, 0.3], ROW], {}, ValueError, r"target_probs row 0 sums to 3\.8, not 1"),
    ([0], [[0.5, 0.4, 0.0]], V3, {}, ValueError, "draft_probs row 0 sums to 0.9"),
    ([1], [[0.5, 0.0, 0.5]], V3, {}, ValueError, r"draft_ids\[0\] = 1 has probability 0 in draft_probs row 0"),
    ([0], Q1, [["a", "b", "c"]] * 2, {}, TypeError, "must hold probabilities"),
]


@pytest.mark.parametrize(("ids", "draft_probs", "target_probs", "kwargs", "error", "match"), ERROR_CASES)
def test_errors(
    ids: Any, draft_probs: Any, target_probs: Any, kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        verify_draft(ids, draft_probs, target_probs, **kwargs)


def test_errors_are_value_errors_and_name_the_position() -> None:
    q = np.array([[0.5, 0.5, 0.0], [0.5, 0.0, 0.5]])
    t = np.full((3, 3), 1 / 3)
    with pytest.raises(ValueError, match=r"draft_ids\[1\] = 1 has probability 0 in draft_probs row 1"):
        verify_draft([0, 1], q, t)
    with pytest.raises(ValueError):  # InvalidTokenIdError is a ValueError
        verify_draft([0, 9], q, t)


def test_doctests() -> None:
    module = importlib.import_module("tokstream.constrain.speculative")
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0

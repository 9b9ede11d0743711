"""Speculative decoding under a constraint, exact and offline, on the CPU.

    python examples/speculative_decoding.py            # quick: ~15-30 s
    python examples/speculative_decoding.py --full     # the whole corpus, 2000 samples: ~1.5 min

Two toy language models over o200k_base token ids stand in for an LLM pair: a small
draft model (a bigram) proposes ``k`` ids, the larger target model (a trigram) scores
all ``k + 1`` positions in one pass, and ``verify_draft`` keeps a prefix of the draft
plus one id of its own. Constraints work as in plain constrained sampling:

1. the prompt ends mid-word ("...in the mi"); ``heal`` backs off the last token and
   its constraint makes the generation start by reproducing " mi";
2. after a question, a ``choice_constraint`` forces the answer to be one of a few
   strings, then ``<|endoftext|>``.

Per step, ``TokenMasker.draft_masks`` gives the constraint's mask at every draft
position, ``verify_draft`` applies them to the target rows, and the verified ids are
accepted by the constraint and streamed through a ``StreamDecoder`` with a stop string.

The output is distributed exactly as plain constrained sampling from the target. The
script checks it: it samples the first ids many times with both samplers and runs a
chi-square goodness-of-fit test of each against the exact probabilities (computed by
enumerating the constrained tree), printing PASS or FAIL.

Speed: a toy n-gram row costs about as much as verifying it, so on the CPU the
speculative loop is not faster here; what it saves is *target passes*, which is what
costs with a real model (one forward pass scores k + 1 positions for about the price
of one). The summary prints both, and a modeled time with an assumed pass latency.

The models are trained on a window of Shakespeare's works around Hamlet when the
repository's fixture corpus is present (``../shared/fixtures/corpora`` from the
repository root, or ``$TOKSTREAM_FIXTURES/corpora``), else on the short excerpt below.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

import tokstream
from tokstream.constrain import Constraint, TokenMasker, choice_constraint, heal

try:  # exported from tokstream itself in newer versions
    from tokstream import verify_draft  # type: ignore[attr-defined,unused-ignore]
except ImportError:
    from tokstream.constrain.speculative import verify_draft

FloatArray = npt.NDArray[np.float64]

# Hamlet, Act 3 Scene 1 and Act 2 Scene 2 (Project Gutenberg text, public domain): the
# corpus when the fixture file is absent.
EXCERPT = """\
Ham.
To be, or not to be,--that is the question:--
Whether 'tis nobler in the mind to suffer
The slings and arrows of outrageous fortune
Or to take arms against a sea of troubles,
And by opposing end them?--To die,--to sleep,--
No more; and by a sleep to say we end
The heartache, and the thousand natural shocks
That flesh is heir to,--'tis a consummation
Devoutly to be wish'd. To die,--to sleep;--
To sleep! perchance to dream:--ay, there's the rub;
For in that sleep of death what dreams may come,
When we have shuffled off this mortal coil,
Must give us pause: there's the respect
That makes calamity of so long life;

Pol.
How does my good Lord Hamlet?

Ham.
Well, God-a-mercy.

Pol.
Do you know me, my lord?

Ham.
Excellent well; you're a fishmonger.

Pol.
Will you walk out of the air, my lord?

Ham.
Into my grave?

Pol.
Indeed, that is out o' the air.
"""

PROMPT = "Ham.\nTo be, or not to be,--that is the question:--\nWhether 'tis nobler in the mi"
QUESTION = "Pol.\nWill you walk out of the air, my lord?\n\nHam.\n"
# The constraint accepts every tokenization of an answer; a model forced on after a
# likely first piece ("I", then "n", "t", "o" for "Into") puts real mass on odd ones,
# so the distribution check counts each tokenization as its own outcome.
ANSWERS = ["Yes.", "No.", "Perhaps.", "Into my grave?"]
STOP = ["\n\n"]  # a blank line ends a speech
#: At most this many ids for an answer (enough for any tokenization of ANSWERS + EOS
#: the sampler is likely to draw: the constraint allows all of them, even " I|n|to").
ANSWER_LIMIT = 24


def load_corpus(max_chars: int | None) -> tuple[str, str]:
    """``(text, where it came from)``: a window of the Shakespeare fixture that starts
    at Hamlet, or the embedded excerpt."""
    root = os.environ.get("TOKSTREAM_FIXTURES")
    base = Path(root) if root else Path(__file__).resolve().parents[2] / "shared" / "fixtures"
    path = base / "corpora" / "shakespeare_gutenberg_modern.txt"
    if not path.is_file():
        return EXCERPT, "the embedded Hamlet excerpt"
    text = path.read_text(encoding="utf-8")
    start = max(0, text.find("HAMLET, PRINCE OF DENMARK"))
    if max_chars is not None:
        text = text[start : start + max_chars]
    return text, f"{path.name} ({len(text):,} characters)"


# -- the models -------------------------------------------------------------------------------


class NgramLM:
    """An interpolated n-gram model over token ids with full ``(V,)`` probability rows.

    Witten-Bell smoothing: ``p_n(w | h) = (c(h, w) + T(h) p_{n-1}(w | h')) / (c(h) +
    T(h))`` with ``T(h)`` the number of distinct ids seen after ``h``, down to an
    add-k unigram, so every id has probability > 0. A row costs one copy of the
    unigram plus one scaling per matched order: O(order x V), about 0.3 ms for V =
    200k. Counts live in sorted numpy arrays (one slice per context)."""

    def __init__(self, ids: Sequence[int], n_vocab: int, order: int, add_k: float = 0.01) -> None:
        arr = np.asarray(ids, dtype=np.int64)
        self.order = order
        counts = np.bincount(arr, minlength=n_vocab).astype(np.float64)
        self.unigram: FloatArray = (counts + add_k) / (counts.sum() + add_k * n_vocab)
        self.levels: list[tuple[dict[tuple[int, ...], int], Any, Any, Any]] = []
        for n in range(2, order + 1):
            m = len(arr) - n + 1
            if m <= 0:
                break
            contexts = np.stack([arr[i : i + m] for i in range(n - 1)], axis=1)
            unique, inverse = np.unique(contexts, axis=0, return_inverse=True)
            keys = inverse.reshape(-1).astype(np.int64) * n_vocab + arr[n - 1 :]
            ukeys, cnt = np.unique(keys, return_counts=True)
            starts = np.searchsorted(ukeys // n_vocab, np.arange(len(unique) + 1))
            lookup = {tuple(c): j for j, c in enumerate(unique.tolist())}
            self.levels.append((lookup, starts, ukeys % n_vocab, cnt.astype(np.float64)))

    def probs(self, history: Sequence[int]) -> FloatArray:
        """The distribution of the next id after ``history``."""
        row = self.unigram.copy()
        for n, (lookup, starts, nxt, cnt) in enumerate(self.levels, start=2):
            if len(history) < n - 1:
                break
            j = lookup.get(tuple(history[len(history) - n + 1 :]))
            if j is None:  # unseen context: the longer ones are unseen too
                break
            lo, hi = int(starts[j]), int(starts[j + 1])
            c = cnt[lo:hi]
            denom = float(c.sum()) + (hi - lo)
            row *= (hi - lo) / denom
            row[nxt[lo:hi]] += c / denom
        return row


def constrained(row: FloatArray, masker: TokenMasker, constraint: Constraint[Any] | None) -> FloatArray:
    """``row`` restricted to the ids ``constraint`` allows, renormalized."""
    if constraint is None or constraint.is_done:
        return row
    masked = np.where(masker.mask(constraint), row, 0.0)
    out: FloatArray = masked / masked.sum()
    return out


def sample(row: FloatArray, rng: np.random.Generator) -> int:
    cdf = np.cumsum(row)
    return min(int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right")), len(row) - 1)


# -- the two samplers ----------------------------------------------------------------------


@dataclass
class Stats:
    tokens: int = 0  # ids produced
    target_passes: int = 0  # target forward passes (one per plain id; one per speculative step)
    draft_calls: int = 0  # draft forward passes (one per draft id)
    drafted: int = 0  # draft ids proposed
    verified: int = 0  # draft ids the target looked at (up to and including a rejection)
    accepted: int = 0
    seconds: float = 0.0


def _finish(ids: list[int], out: Sequence[int], constraint: Constraint[Any] | None, eos_id: int | None) -> bool:
    """Append ``out``, advancing the constraint; True when EOS ended the generation."""
    for t in out:
        if constraint is not None and not constraint.accept(t):
            raise RuntimeError(f"id {t} violates the constraint: the sampler is broken")
        ids.append(t)
        if t == eos_id:
            return True
    return False


def plain_sample(
    target: NgramLM,
    masker: TokenMasker,
    prompt_ids: Sequence[int],
    constraint: Constraint[Any] | None,
    *,
    rng: np.random.Generator,
    max_new_tokens: int,
    eos_id: int | None = None,
    decoder: tokstream.StreamDecoder | None = None,
    on_text: Callable[[str], object] | None = None,
    stats: Stats | None = None,
) -> list[int]:
    """Constrained sampling: one target pass per id."""
    st = stats if stats is not None else Stats()
    t0 = time.perf_counter()
    ids: list[int] = []
    while len(ids) < max_new_tokens:
        row = constrained(target.probs([*prompt_ids, *ids]), masker, constraint)
        st.target_passes += 1
        t = sample(row, rng)
        ended = _finish(ids, [t], constraint, eos_id)
        if decoder is not None:
            text = decoder.step(t)
            if on_text is not None and text:
                on_text(text)
            if decoder.stopped:
                break
        if ended:
            break
    st.tokens += len(ids)
    st.seconds += time.perf_counter() - t0
    return ids


def speculative_sample(
    draft: NgramLM,
    target: NgramLM,
    masker: TokenMasker,
    prompt_ids: Sequence[int],
    constraint: Constraint[Any] | None,
    *,
    k: int,
    rng: np.random.Generator,
    max_new_tokens: int,
    eos_id: int | None = None,
    masked_draft: bool = True,
    decoder: tokstream.StreamDecoder | None = None,
    on_text: Callable[[str], object] | None = None,
    stats: Stats | None = None,
) -> list[int]:
    """Speculative sampling: the draft proposes up to ``k`` ids, one target pass scores
    them, ``verify_draft`` keeps what the target would have sampled."""
    st = stats if stats is not None else Stats()
    t0 = time.perf_counter()
    ids: list[int] = []
    while len(ids) < max_new_tokens:
        context = [*prompt_ids, *ids]
        # 1. Draft up to k ids (no more than are still wanted), under a fork of the
        #    constraint when masked_draft: drafts the constraint refuses would only be
        #    rejected. q_rows are the distributions the drafts were sampled from.
        fork = constraint.fork() if constraint is not None and masked_draft else None
        drafts: list[int] = []
        q_rows: list[FloatArray] = []
        for _ in range(min(k, max_new_tokens - len(ids) - 1)):
            q = constrained(draft.probs(context + drafts), masker, fork)
            st.draft_calls += 1
            drafts.append(sample(q, rng))
            q_rows.append(q)
            if fork is not None:
                fork.accept(drafts[-1])
            if drafts[-1] == eos_id:
                break  # nothing follows EOS
        # 2. One target pass: the rows after context + drafts[:j] for j = 0..len(drafts).
        target_rows = np.stack([target.probs(context + drafts[:j]) for j in range(len(drafts) + 1)])
        st.target_passes += 1
        # 3. The constraint's mask at every draft position (rows after a draft id it
        #    refuses are all False; that id is rejected first, so they are never used).
        masks = masker.draft_masks(constraint, drafts) if constraint is not None else None
        q_arr = np.stack(q_rows) if q_rows else np.zeros((0, target_rows.shape[1]))
        out = verify_draft(drafts, q_arr, target_rows, rng=rng, masks=masks)
        st.drafted += len(drafts)
        st.accepted += len(out) - 1
        st.verified += min(len(out), len(drafts))  # the accepted ones plus a rejected one
        # 4. Accept the verified ids (the constraint moves on; nothing to roll back,
        #    draft_masks worked on a fork) and stream them. len(out) <= the ids still
        #    wanted, since at most that many minus one were drafted.
        n_before = len(ids)
        ended = _finish(ids, out, constraint, eos_id)
        if decoder is not None:
            text = decoder.push(ids[n_before:])
            if on_text is not None and text:
                on_text(text)
            if decoder.stopped:
                break
        if ended:
            break
    st.tokens += len(ids)
    st.seconds += time.perf_counter() - t0
    return ids


# -- the distribution check --------------------------------------------------------------------


def chi2_sf(x: float, df: int) -> float:
    """P(X > x) for X ~ chi-square(df), integer df: the exact finite series (even df:
    a Poisson tail; odd df: erfc plus half-integer terms)."""
    if x <= 0:
        return 1.0
    h = x / 2
    if df % 2 == 0:
        return sum(math.exp(-h + i * math.log(h) - math.lgamma(i + 1)) for i in range(df // 2))
    return math.erfc(math.sqrt(h)) + sum(
        math.exp(-h + (i + 0.5) * math.log(h) - math.lgamma(i + 1.5)) for i in range(df // 2)
    )


def chi2_critical(df: int, alpha: float) -> float:
    lo, hi = 0.0, 1.0
    while chi2_sf(hi, df) > alpha:
        hi *= 2
    for _ in range(100):
        lo, hi = (lo, (lo + hi) / 2) if chi2_sf((lo + hi) / 2, df) <= alpha else ((lo + hi) / 2, hi)
    return hi


Outcome = tuple[int, ...]


def exact_outcomes(
    target: NgramLM,
    masker: TokenMasker,
    prompt_ids: Sequence[int],
    make_constraint: Callable[[], Constraint[Any] | None],
    *,
    length: int,
    eos_id: int | None,
    min_prob: float,
) -> dict[Outcome, float]:
    """The exact probability, under plain constrained sampling, of every outcome (the
    first ``length`` ids, or fewer ending in EOS) whose probability is at least
    ``min_prob``: a walk of the constrained tree that skips branches below it."""
    found: dict[Outcome, float] = {}
    stack: list[tuple[Outcome, float, Constraint[Any] | None]] = [((), 1.0, make_constraint())]
    while stack:
        seq, p, c = stack.pop()
        if len(seq) == length or (seq and seq[-1] == eos_id):
            found[seq] = p
            continue
        row = constrained(target.probs([*prompt_ids, *seq]), masker, c)
        for t in np.flatnonzero(row * p >= min_prob).tolist():
            child = c.fork() if c is not None else None
            if child is not None:
                child.accept(t)
            stack.append(((*seq, t), p * float(row[t]), child))
    return found


@dataclass
class Check:
    name: str
    stat: float
    df: int
    critical: float
    p_value: float

    @property
    def passed(self) -> bool:
        return self.stat < self.critical


def goodness_of_fit(name: str, samples: Sequence[Outcome], exact: dict[Outcome, float], alpha: float) -> Check:
    """Pearson's chi-square of ``samples`` against ``exact`` plus one cell for every
    other outcome (expected ``1 - sum(exact)``)."""
    n = len(samples)
    counts = Counter(s if s in exact else None for s in samples)
    cells = [(n * p, counts.get(s, 0)) for s, p in exact.items()]
    other = max(0.0, 1.0 - sum(exact.values()))
    if other * n > 1e-9:
        cells.append((n * other, counts.get(None, 0)))
    elif counts.get(None, 0):
        return Check(name, math.inf, len(cells) - 1, chi2_critical(len(cells) - 1, alpha), 0.0)
    stat = sum((o - e) ** 2 / e for e, o in cells)
    df = len(cells) - 1
    return Check(name, stat, df, chi2_critical(df, alpha), chi2_sf(stat, df))


def total_variation(a: Sequence[Outcome], b: Sequence[Outcome], cells: dict[Outcome, float]) -> float:
    """Between two samples' empirical distributions over ``cells`` plus "other"."""
    ca = Counter(s if s in cells else None for s in a)
    cb = Counter(s if s in cells else None for s in b)
    return 0.5 * sum(abs(ca[key] / len(a) - cb[key] / len(b)) for key in ca.keys() | cb.keys())


def distribution_check(
    tok: tokstream.Tokenizer,
    draft: NgramLM,
    target: NgramLM,
    masker: TokenMasker,
    *,
    k: int,
    samples: int,
    seed: int,
    alpha: float = 0.001,
    masked_draft: bool = True,
    show: Callable[[str], object] = print,
) -> list[tuple[Check, Check, float]]:
    """Sample two constrained setups ``samples`` times with each sampler and test both
    against the exact distribution: ``[(speculative, plain, total variation)]``."""
    eos = tok.special_tokens["<|endoftext|>"]
    healing = heal(tok, tok.encode(PROMPT), max_backoff=2)
    setups: list[tuple[str, list[int], Callable[[], Constraint[Any] | None], int]] = [
        ("first 3 ids after the healed prompt", healing.prompt_ids, healing.constraint, 3),
        (
            "the whole constrained answer",
            tok.encode(QUESTION),
            lambda: choice_constraint(tok, ANSWERS, eos_id=eos),
            ANSWER_LIMIT,
        ),
    ]
    results = []
    for label, prompt_ids, make, length in setups:
        exact = exact_outcomes(target, masker, prompt_ids, make, length=length, eos_id=eos, min_prob=5 / samples)
        runs: dict[str, list[Outcome]] = {}
        for name in ("speculative", "plain"):
            rng = np.random.default_rng([seed, len(runs)])
            outs = []
            for _ in range(samples):
                if name == "plain":
                    ids = plain_sample(target, masker, prompt_ids, make(), rng=rng, max_new_tokens=length, eos_id=eos)
                else:
                    ids = speculative_sample(
                        draft,
                        target,
                        masker,
                        prompt_ids,
                        make(),
                        k=k,
                        rng=rng,
                        max_new_tokens=length,
                        eos_id=eos,
                        masked_draft=masked_draft,
                    )
                outs.append(tuple(ids))
            runs[name] = outs
        spec = goodness_of_fit("speculative", runs["speculative"], exact, alpha)
        plain = goodness_of_fit("plain", runs["plain"], exact, alpha)
        tv = total_variation(runs["speculative"], runs["plain"], exact)
        # Sampling noise alone: per cell, f - g has variance 2 p (1 - p) / n, and
        # E|f - g| = sqrt(2 / pi) times its standard deviation.
        cells = [*exact.values(), max(0.0, 1 - sum(exact.values()))]
        noise = 0.5 * sum(math.sqrt(4 * p * (1 - p) / (math.pi * samples)) for p in cells)
        top = sorted(exact.items(), key=lambda kv: -kv[1])[:3]
        covered = sum(exact.values())
        show(f"  {label}: {len(exact)} outcomes of p >= {5 / samples:.3g} cover {covered:.3f}; most likely:")
        for seq, p in top:
            freq = sum(s == seq for s in runs["speculative"]) / samples
            pieces = "|".join(tok.decode([t]) for t in seq)
            show(f"      {pieces!r:40}  exact {p:.3f}  speculative {freq:.3f}")
        for c in (spec, plain):
            verdict = "PASS" if c.passed else "FAIL"
            show(
                f"    {c.name:11}  chi2 = {c.stat:7.2f}  df = {c.df:2}  critical(alpha={alpha}) = {c.critical:6.2f}"
                f"  p = {c.p_value:.3f}  {verdict}"
            )
        show(
            f"    total variation between the two samplers over these cells: {tv:.3f} "
            f"(sampling noise alone: about {noise:.3f})"
        )
        results.append((spec, plain, tv))
    return results


# -- the demo ------------------------------------------------------------------------------


def build(
    corpus_chars: int | None, target_order: int = 3
) -> tuple[tokstream.Tokenizer, NgramLM, NgramLM, TokenMasker, str]:
    """The tokenizer, the bigram draft, the target n-gram, a masker and the corpus name."""
    tok = tokstream.load("default")  # o200k_base, embedded
    text, source = load_corpus(corpus_chars)
    ids = tok.encode(text)
    draft = NgramLM(ids, tok.n_vocab, order=2)
    target = NgramLM(ids, tok.n_vocab, order=target_order)
    return tok, draft, target, TokenMasker(tok), f"{source}, {len(ids):,} ids"


def demo(
    tok: tokstream.Tokenizer,
    draft: NgramLM,
    target: NgramLM,
    masker: TokenMasker,
    *,
    k: int,
    max_new_tokens: int,
    seed: int,
    masked_draft: bool,
    runs: int,
    show: Callable[[str], object] = print,
) -> tuple[Stats, Stats]:
    """Generate a healed continuation and a constrained answer with both samplers;
    return ``(speculative stats, plain stats)``. The first run's texts (joined from the
    decoder's pieces) are shown."""
    eos = tok.special_tokens["<|endoftext|>"]
    prompt_ids = tok.encode(PROMPT)
    healing = heal(tok, prompt_ids, max_backoff=2)
    show(f"prompt: {PROMPT!r}")
    show(f"  healing: backed off {healing.removed} id(s); the generation must start with {healing.prefix!r}")
    spec_stats, plain_stats = Stats(), Stats()
    for run in range(runs):
        for name in ("speculative", "plain"):
            rng = np.random.default_rng([seed, run, name == "plain"])
            st = spec_stats if name == "speculative" else plain_stats
            chunks: list[str] = []
            emit = chunks.append
            jobs: list[tuple[list[int], Constraint[Any], int, Sequence[str]]] = [
                (healing.prompt_ids, healing.constraint(), max_new_tokens, STOP),
                (tok.encode(QUESTION), choice_constraint(tok, ANSWERS, eos_id=eos), ANSWER_LIMIT, ()),
            ]
            texts = []
            for job_prompt, constraint, limit, stop in jobs:
                chunks.clear()
                decoder = tokstream.StreamDecoder(tok, stop=stop, prefix_ids=job_prompt, skip_special_tokens=True)
                if name == "speculative":
                    speculative_sample(
                        draft,
                        target,
                        masker,
                        job_prompt,
                        constraint,
                        k=k,
                        rng=rng,
                        max_new_tokens=limit,
                        eos_id=eos,
                        masked_draft=masked_draft,
                        decoder=decoder,
                        on_text=emit,
                        stats=st,
                    )
                else:
                    plain_sample(
                        target,
                        masker,
                        job_prompt,
                        constraint,
                        rng=rng,
                        max_new_tokens=limit,
                        eos_id=eos,
                        decoder=decoder,
                        on_text=emit,
                        stats=st,
                    )
                emit(decoder.finish())
                texts.append("".join(chunks))
            if run == 0:
                show(f"  {name}: {PROMPT[-24:]!r} -> {texts[0]!r}")
                show(f"  {name}: {QUESTION!r} -> {texts[1]!r}")
    return spec_stats, plain_stats


def summary(
    spec: Stats,
    plain: Stats,
    *,
    k: int,
    target_order: int,
    target_ms: float,
    draft_ms: float,
    show: Callable[[str], object] = print,
) -> dict[str, float]:
    """Print and return the acceptance rate, ids per target pass and the speed-ups."""
    alpha = spec.accepted / max(1, spec.verified)
    per_pass = spec.tokens / max(1, spec.target_passes)
    plain_per_pass = plain.tokens / max(1, plain.target_passes)
    # Leviathan et al., equation (1): expected ids per pass for a constant alpha.
    expected = (1 - alpha ** (k + 1)) / (1 - alpha) if alpha < 1 else k + 1.0
    # Per id: what a real model pair would spend, with these counts and the assumed latencies.
    modeled_spec = (spec.target_passes * target_ms + spec.draft_calls * draft_ms) / max(1, spec.tokens)
    modeled_plain = plain.target_passes * target_ms / max(1, plain.tokens)
    wall_spec = spec.seconds / max(1, spec.tokens) * 1e3
    wall_plain = plain.seconds / max(1, plain.tokens) * 1e3
    show(
        f"acceptance rate: {alpha:.2f} of the draft ids the target verified ({spec.accepted} of {spec.verified}); "
        f"{spec.accepted} of all {spec.drafted} drafted ids kept (k = {k})"
    )
    if alpha < 0.5:
        show(
            f"  that is low: the bigram draft sees one id of context, the {target_order}-gram target "
            f"{target_order - 1}; where the target knows the longer context it is confident about continuations "
            "the draft spreads thin, and those drafts are rejected. A draft trained to imitate the target "
            "(distillation) accepts more; --target-order 3 is closer to the draft than 4."
        )
    show(
        f"ids per target pass: speculative {per_pass:.2f} ({spec.tokens} ids, {spec.target_passes} passes; "
        f"{expected:.2f} expected from the acceptance rate), plain {plain_per_pass:.2f}: "
        f"{per_pass / plain_per_pass:.2f}x fewer target passes"
    )
    show(
        f"wall time per id, measured on these toy models: speculative {wall_spec:.2f} ms, plain {wall_plain:.2f} ms "
        f"({wall_plain / wall_spec:.2f}x): an n-gram row costs no more than verifying it, so nothing is saved here"
    )
    show(
        f"modeled time per id with a {target_ms:g} ms target pass and a {draft_ms:g} ms draft pass: "
        f"speculative {modeled_spec:.1f} ms, plain {modeled_plain:.1f} ms ({modeled_plain / modeled_spec:.2f}x speed-up)"
    )
    return {
        "acceptance_rate": alpha,
        "ids_per_target_pass": per_pass,
        "pass_speedup": per_pass / plain_per_pass,
        "modeled_speedup": modeled_plain / modeled_spec,
        "wall_speedup": wall_plain / wall_spec,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", type=int, default=4, help="draft ids per target pass (default 4)")
    parser.add_argument("--max-new-tokens", type=int, default=40, help="ids of the healed continuation (default 40)")
    parser.add_argument("--runs", type=int, default=3, help="generations per sampler for the speed figures (default 3)")
    parser.add_argument(
        "--samples", type=int, default=400, help="samples per sampler and setup in the distribution check"
    )
    parser.add_argument(
        "--corpus-chars", type=int, default=300_000, help="characters of the corpus window (default 300k)"
    )
    parser.add_argument("--full", action="store_true", help="the whole corpus, 2000 samples, 10 runs (~1.5 minutes)")
    parser.add_argument("--target-order", type=int, default=3, help="n of the target n-gram (default 3)")
    parser.add_argument("--unmasked-draft", action="store_true", help="draft without the constraint (lower acceptance)")
    parser.add_argument("--target-ms", type=float, default=30.0, help="assumed latency of one target pass (default 30)")
    parser.add_argument("--draft-ms", type=float, default=3.0, help="assumed latency of one draft pass (default 3)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.full:
        args.corpus_chars, args.samples, args.runs = None, 2000, 10
    if args.k < 1:
        parser.error("--k must be at least 1")
    if args.target_order < 2:
        parser.error("--target-order must be at least 2")

    t0 = time.perf_counter()
    tok, draft, target, masker, source = build(args.corpus_chars, args.target_order)
    print(
        f"models: bigram draft, {args.target_order}-gram target, over {tok.name} ids of {source} "
        f"({time.perf_counter() - t0:.1f} s)"
    )
    print()
    spec, plain = demo(
        tok,
        draft,
        target,
        masker,
        k=args.k,
        max_new_tokens=args.max_new_tokens,
        seed=args.seed,
        masked_draft=not args.unmasked_draft,
        runs=args.runs,
    )
    print()
    summary(spec, plain, k=args.k, target_order=args.target_order, target_ms=args.target_ms, draft_ms=args.draft_ms)
    print()
    print(f"distribution check ({args.samples} samples per sampler; exact probabilities by enumeration):")
    results = distribution_check(
        tok,
        draft,
        target,
        masker,
        k=args.k,
        samples=args.samples,
        seed=args.seed,
        masked_draft=not args.unmasked_draft,
    )
    ok = all(spec_check.passed for spec_check, _, _ in results)
    print(f"distribution check: {'PASS' if ok else 'FAIL'} (speculative output matches constrained sampling)")
    print(f"total time {time.perf_counter() - t0:.1f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

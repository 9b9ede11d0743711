"""Speculative-sampling verification under a constraint: ``verify_draft``.

A cheap draft model proposes ``k`` ids; the target model scores the ``k + 1``
positions in one pass; ``verify_draft`` keeps a prefix of the draft and adds one id
of its own, so that the ids it returns are distributed *exactly* as sampling them
one by one from the (masked) target. This is the rejection scheme of Leviathan,
Kalman and Matias, "Fast Inference from Transformers via Speculative Decoding"
(ICML 2023, Algorithm 1 and Appendix A.1) and, independently, Chen et al.,
"Accelerating Large Language Model Decoding with Speculative Sampling" (2023).

The algorithm, with ``q_i`` the draft row ``i`` (the distribution ``x_i`` was sampled
from) and ``p_i`` target row ``i`` with the disallowed ids of mask row ``i`` set to 0
and renormalized:

1. for ``i = 0 .. k-1``: accept ``x_i`` with probability ``min(1, p_i[x_i] / q_i[x_i])``;
2. on the first rejection, sample one id from the residual
   ``normalize(max(0, p_i - q_i))`` and stop;
3. if all ``k`` are accepted, sample a bonus id from ``p_k``.

Why the masked target: a constraint is part of the *target* distribution (constrained
sampling draws from ``p`` masked and renormalized), so the acceptance ratio and the
residual must use the masked ``p``. A draft may put mass on ids the mask forbids
(an unmasked draft model): such an ``x_i`` has ``p_i[x_i] = 0`` and is always
rejected, and the residual ``max(0, p_i - q_i)`` is 0 there, so a forbidden id is never
returned. The two tempting shortcuts are both wrong, and the tests show it with a
chi-square test: resampling from ``p_i`` instead of the residual after a rejection
(for ``p = (.5, .5, 0)``, ``q = (.5, 0, .5)`` it yields ``(.75, .25, 0)``), and an
acceptance ratio computed with the unmasked target (it returns forbidden ids).

``greedy=True`` is the temperature-0 limit: accept ``x_i`` iff it is the argmax of the
masked target row ``i`` (ties: the lowest id, as ``numpy.argmax``), else return that
argmax and stop; the bonus is the masked argmax of row ``k``. The result equals greedy
constrained decoding without speculation, id for id. ``draft_probs`` is not needed
then (it may be None). Other temperatures, top-k or top-p are applied by the caller
to both models' rows before the call: the drafts must have been sampled from exactly
``draft_probs``, and the output follows exactly ``target_probs``.

With ``TokenMasker.draft_masks``: row ``j`` is the constraint's mask after accepting
``draft_ids[:j]``; after a draft id the constraint refuses, the later rows are all
False (fail closed). Those rows are never reached: the refused id has ``p = 0`` and is
rejected with certainty, so ``verify_draft`` checks "the mask allows some id" only
for rows the draft can reach (row 0, and row ``j + 1`` when ``p_j[x_j] > 0``; in greedy
mode when ``x_j`` is the argmax). Every check is deterministic: no error depends on the
random draws.

It leaves out: batches (call it per sequence), tree drafts (SpecInfer, Medusa),
typical-acceptance and other lossy variants, and GPU kernels: this is the exact
reference on numpy rows, the algorithm an engine's fused kernel implements.

Cost. The input arrays are not copied (a float32 row is converted only when it is
masked or sampled); sums accumulate in float64. Validation is two reductions per
array: float64 row sums (NaN and inf make a sum non-finite) and row minima, ``O(k V)``. Each
reachable target row is then masked once: a row that allows everything reuses its
sum; one that allows at most ``V / 16`` ids (a constraint's usual case) gathers those
ids (``flatnonzero``, then ``O(allowed)``); a denser one is multiplied out, ``O(V)``.
Each verified position is ``O(1)`` (or a binary search among the allowed ids), and
the one sampled row costs a residual, a cumulative sum and a binary search over the
allowed ids. Measured on the shared 2-core machine (a timing loop, p50), o200k_base
(V = 200,019), k = 4, float64 rows: 2.7 ms without masks, 1.7 ms with masks of 500
allowed ids, 4.5 ms with half the vocabulary allowed, 1.3 ms greedy; ~30 us for V = 3.
For scale: one dense n-gram row of ``examples/speculative_decoding.py`` costs ~0.3 ms,
and an LLM forward pass far more.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InvalidTokenIdError

__all__ = ["SUM_TOLERANCE", "verify_draft"]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.intp]

#: A mask row allowing at most V / _FEW ids is handled by gathering those ids (a
#: constraint usually allows a few); denser rows are multiplied out.
_FEW = 16

#: A probability row may sum to 1 +- this (float32 / bfloat16 softmax rounding); it
#: is renormalized. Farther off, the row is not a distribution (logits, a forgotten
#: renormalization after top-k) and ``verify_draft`` raises ``ValueError``.
SUM_TOLERANCE = 1e-3


def verify_draft(
    draft_ids: Sequence[int] | npt.NDArray[np.integer[Any]],
    draft_probs: npt.ArrayLike | None,
    target_probs: npt.ArrayLike,
    *,
    rng: np.random.Generator | None = None,
    masks: npt.ArrayLike | None = None,
    greedy: bool = False,
) -> list[int]:
    """Verify a speculative draft against the target model (module notes); return the
    accepted draft ids plus one corrected or bonus id (``1 .. k + 1`` ids).

    ``draft_ids``: the ``k`` ids the draft model sampled (``k = 0`` is allowed: one id
    is sampled from ``target_probs[0]``). ``draft_probs``: ``(k, V)``, row ``i`` the
    distribution ``draft_ids[i]`` was sampled from (it may put mass on ids the mask
    forbids). ``target_probs``: ``(k + 1, V)``, row ``j`` the target's distribution
    after ``draft_ids[:j]``. ``masks``: ``(k + 1, V)`` bool, True where the id is
    allowed, applied to the target rows (which are then renormalized); a mask may be
    narrower than ``V`` (a tokenizer's ``n_vocab`` below the model's padded
    vocabulary): the extra columns are disallowed. ``rng``: a
    ``numpy.random.Generator`` (a fresh ``np.random.default_rng()`` when None); one
    uniform draw per verified position and one per sampled id. ``greedy``: the
    temperature-0 rule (module notes); ``draft_probs`` may be None.

    The returned ids are distributed exactly as ids sampled one at a time from the
    masked target (greedy: equal to masked-argmax decoding). Rows may sum to 1 within
    ``SUM_TOLERANCE`` and are renormalized.

    Raises ``ValueError`` for: wrong shapes (naming the expected one), NaN, infinite or
    negative probabilities, a row whose sum is not 1, a draft id its draft row gives
    probability 0 (the draft could not have sampled it), a reachable mask row that
    allows no id (``"mask row j allows no token"``) or whose allowed ids all have target
    probability 0; ``InvalidTokenIdError`` (a ``ValueError``) for a draft id outside
    ``[0, V)``; ``TypeError`` for non-integer ids, a non-bool mask, or an ``rng`` that
    is not a ``Generator``.

    >>> import numpy as np
    >>> p = [[.4, .4, .2], [.1, .1, .8]]  # target rows after () and after (0,)
    >>> m = [[True, True, False], [True, True, True]]  # id 2 forbidden first
    >>> verify_draft([0], [[.5, 0., .5]], p, masks=m, rng=np.random.default_rng(0))
    [0, 2]
    >>> verify_draft([1], None, p, masks=m, greedy=True)  # argmax of (.4, .4): id 0
    [0]
    """
    if rng is None:
        rng = np.random.default_rng()
    elif not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got {type(rng).__name__}")
    ids = _draft_id_list(draft_ids)
    k = len(ids)
    target, target_sums = _prob_rows(target_probs, "target_probs", k, k + 1, None)
    n = target.shape[1]
    for i, x in enumerate(ids):
        if not 0 <= x < n:
            raise InvalidTokenIdError(x, f"draft_ids[{i}]", n)
    mask = None if masks is None else _mask_rows(masks, k + 1, n)
    if greedy:
        if draft_probs is not None:
            _prob_rows(draft_probs, "draft_probs", k, k, n)  # checked, not needed
        return _greedy(ids, target, target_sums, mask)

    q, q_sums = _prob_rows(draft_probs, "draft_probs", k, k, n)
    for i, x in enumerate(ids):
        if not q[i, x] > 0:
            raise ValueError(
                f"draft_ids[{i}] = {x} has probability 0 in draft_probs row {i}: the draft could not have "
                "sampled it; pass the distribution each draft id was sampled from"
            )

    # The masked rows the draft can reach (deterministic: row j + 1 is reachable iff
    # row j is and p_j[x_j] > 0), so an empty mask row raises whatever the draws.
    rows: list[_Masked] = []
    for j in range(k + 1):
        rows.append(_masked(target, target_sums, mask, j))
        if j < k and rows[j].prob(ids[j]) == 0:
            break

    for i, x in enumerate(ids):
        row = rows[i]
        qx = float(q[i, x]) / q_sums[i]
        # Accept with probability min(1, p[x] / q[x]): u is in [0, 1), so p[x] >= q[x]
        # always accepts and p[x] == 0 never does.
        if rng.random() < row.prob(x) / qx:
            continue
        p = row.probs()
        residual = np.maximum(p - row.take(q[i]) / q_sums[i], 0.0)
        # The residual's mass is the rejection probability, so a rejection with a
        # (numerically) empty residual has probability ~0; p == q exactly gives 0/0.
        # Below the rounding noise of the sums, fall back to p itself.
        if not float(residual.sum()) > _noise(len(p)):
            residual = p
        return [*ids[:i], row.id_at(_sample(residual, rng))]
    row = rows[k]
    return [*ids, row.id_at(_sample(row.probs(), rng))]


# -- masked rows ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Masked:
    """Target row ``j`` restricted to the ids its mask allows: ``weights`` (float64
    target probabilities, not renormalized) at ``ids``, or at every id when ``ids`` is
    None (then disallowed ids have weight 0); ``total`` is their sum (> 0)."""

    ids: IntArray | None
    weights: FloatArray
    total: float

    def prob(self, x: int) -> float:
        """The masked, renormalized probability of id ``x``."""
        if self.ids is None:
            return float(self.weights[x]) / self.total
        pos = int(np.searchsorted(self.ids, x))
        if pos < len(self.ids) and self.ids[pos] == x:
            return float(self.weights[pos]) / self.total
        return 0.0

    def probs(self) -> FloatArray:
        """The renormalized weights."""
        out: FloatArray = self.weights / self.total
        return out

    def take(self, row: npt.NDArray[Any]) -> FloatArray:
        """``row`` (another ``(V,)`` row) at the same positions as ``weights``."""
        out: FloatArray = np.asarray(row if self.ids is None else row[self.ids], dtype=np.float64)
        return out

    def id_at(self, pos: int) -> int:
        return pos if self.ids is None else int(self.ids[pos])

    def argmax(self) -> int:
        """The allowed id of the largest weight; ties go to the lowest id (the weights
        are the raw target values, so no renormalization rounding can merge them)."""
        return self.id_at(int(np.argmax(self.weights)))


def _masked(target: npt.NDArray[Any], sums: FloatArray, mask: BoolArray | None, j: int) -> _Masked:
    """Target row ``j`` under mask row ``j``; raises when the mask leaves no mass."""
    row = target[j]
    n = row.shape[0]
    if mask is None:
        return _Masked(None, row.astype(np.float64, copy=False), float(sums[j]))
    allowed = mask[j]
    count = int(np.count_nonzero(allowed))
    if count == 0:
        raise ValueError(
            f"mask row {j} allows no token: the constraint has no continuation there (a dead end), "
            "so there is no distribution to sample from"
        )
    if count == n:
        return _Masked(None, row.astype(np.float64, copy=False), float(sums[j]))
    ids: IntArray | None
    if count <= n // _FEW:  # a constraint's usual case: gather the few allowed ids
        ids = np.flatnonzero(allowed)
        weights = row[ids].astype(np.float64)
    else:
        ids = None
        weights = np.multiply(row, allowed, dtype=np.float64)
    total = float(weights.sum())
    if not total > 0:
        raise ValueError(
            f"target_probs row {j} puts no probability on the {count} ids mask row {j} allows (underflow?); "
            "mask the logits before the softmax (TokenMasker.apply) so the allowed ids keep their weights"
        )
    return _Masked(ids, weights, total)


def _greedy(ids: list[int], target: npt.NDArray[Any], sums: FloatArray, mask: BoolArray | None) -> list[int]:
    j = 0
    while True:
        best = _masked(target, sums, mask, j).argmax()  # raises for an empty row
        if j == len(ids) or ids[j] != best:
            return [*ids[:j], best]
        j += 1


def _noise(n: int) -> float:
    """The rounding noise of a residual's sum over ``n`` float64 terms."""
    return 8.0 * n * float(np.finfo(np.float64).eps)


def _sample(weights: FloatArray, rng: np.random.Generator) -> int:
    """A position ``i`` with probability ``weights[i] / sum(weights)`` (inverse CDF).

    ``searchsorted(side="right")`` returns the first ``i`` with ``cdf[i] > u``, and
    ``cdf[i] > cdf[i - 1]`` implies ``weights[i] > 0``: a position of weight 0 (a
    masked id, or id 0 of a row of zeros) is never returned."""
    cdf = np.cumsum(weights)
    u = rng.random() * float(cdf[-1])
    i = int(np.searchsorted(cdf, u, side="right"))
    if i >= len(cdf):  # u rounded up to cdf[-1]: the last position with weight
        i = int(np.flatnonzero(weights > 0)[-1])
    return i


# -- validation ----------------------------------------------------------------------------


def _draft_id_list(draft_ids: Sequence[int] | npt.NDArray[np.integer[Any]]) -> list[int]:
    if isinstance(draft_ids, (str, bytes)):
        raise TypeError("draft_ids must be a sequence of ints")
    if isinstance(draft_ids, np.ndarray):
        if draft_ids.ndim != 1:
            raise ValueError(f"draft_ids must be 1-D, got shape {draft_ids.shape}")
        if draft_ids.size and draft_ids.dtype.kind not in "iu":
            raise TypeError(f"draft_ids must be integers, got dtype {draft_ids.dtype}")
        return [int(x) for x in draft_ids.tolist()]
    # torch tensors and other array types: their items as Python ints
    items = draft_ids.tolist() if hasattr(draft_ids, "tolist") else list(draft_ids)
    out: list[int] = []
    for i, x in enumerate(items):
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
            raise TypeError(f"draft_ids[{i}] must be an int, got {type(x).__name__}")
        out.append(int(x))
    return out


def _prob_rows(
    probs: npt.ArrayLike | None, name: str, k: int, rows: int, n: int | None
) -> tuple[npt.NDArray[Any], FloatArray]:
    """``probs`` as an array ``(rows, n)`` (its own float dtype, no copy) and its row
    sums in float64, checked: finite, >= 0, each row summing to 1."""
    want = f"({rows}, {'V' if n is None else n})"
    if probs is None:
        raise ValueError(f"{name} is required (shape {want}) unless greedy=True")
    arr = np.asarray(probs)
    if rows == 0 and arr.size == 0 and arr.ndim <= 2:
        return np.zeros((0, n or 0), dtype=np.float64), np.zeros(0)  # k = 0: no draft rows
    if arr.ndim != 2 or arr.shape[0] != rows or (n is not None and arr.shape[1] != n) or arr.shape[1] == 0:
        extra = "" if n is None else "; both models must score the same vocabulary"
        raise ValueError(f"{name} must have shape {want} for {k} draft ids, got {arr.shape}{extra}")
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"{name} must hold probabilities (floats), got dtype {arr.dtype}")
    sums: FloatArray = arr.sum(axis=1, dtype=np.float64)  # NaN and inf make a sum non-finite
    mins = arr.min(axis=1)
    for j in range(rows):
        s = float(sums[j])
        if not np.isfinite(s):
            what = "NaN" if np.isnan(arr[j]).any() else "an infinite value"
            raise ValueError(f"{name} row {j} contains {what}; pass finite probabilities")
        if mins[j] < 0:
            i = int(np.argmin(arr[j]))
            raise ValueError(
                f"{name} row {j} has a negative probability ({float(arr[j, i]):.6g} at id {i}); pass "
                "probabilities (a softmax), not logits"
            )
        if abs(s - 1.0) > SUM_TOLERANCE:
            raise ValueError(
                f"{name} row {j} sums to {s:.6g}, not 1 (tolerance {SUM_TOLERANCE}); pass probabilities "
                "(a softmax), not logits, and renormalize after top-k / top-p"
            )
    return arr, sums


def _mask_rows(masks: npt.ArrayLike, rows: int, n: int) -> BoolArray:
    arr = np.asarray(masks)
    if arr.size and arr.dtype != np.bool_:
        raise TypeError(
            f"masks must be bool (True = allowed), got dtype {arr.dtype}; for an additive -inf bias b, "
            "pass np.isfinite(b)"
        )
    if arr.ndim != 2 or arr.shape[0] != rows or arr.shape[1] > n:
        raise ValueError(
            f"masks must have shape ({rows}, {n}) (k + 1 rows, one per target row; fewer columns are "
            f"padded as disallowed), got {arr.shape}"
        )
    mask = arr.astype(np.bool_, copy=False)
    if mask.shape[1] < n:
        mask = np.concatenate([mask, np.zeros((rows, n - mask.shape[1]), dtype=np.bool_)], axis=1)
    return mask

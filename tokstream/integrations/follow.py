"""``Follower``: one generation row's constraint, fed the ids the row generated (the
package notes explain how the adapters use it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..constrain.constraint import Constraint

__all__ = ["Follower", "banned_by_earlier"]


class Follower:
    """One row's constraint and the ids it has accepted (module notes)."""

    __slots__ = ("constraint", "fed")

    def __init__(self, constraint: Constraint[Any]) -> None:
        self.constraint = constraint
        #: The ids accepted by ``constraint``, in order (none once it is done).
        self.fed: list[int] = []

    def sync(self, generated: Sequence[int], where: str) -> None:
        """Bring the constraint to the state after ``generated`` (the ids produced
        after the prompt), or raise ``ValueError`` naming ``where`` and the refused id."""
        fed = self.fed
        k = len(fed)
        if fed != list(generated[:k]):
            # The first difference; when one is a prefix of the other, the shorter length.
            p = next((i for i, (a, b) in enumerate(zip(fed, generated)) if a != b), min(k, len(generated)))
            self.constraint.rollback(k - p)
            del fed[p:]
            k = p
        c = self.constraint
        n_vocab = c.index.n_vocab
        for pos in range(k, len(generated)):
            if c.is_done:
                break  # nothing is restricted any more: later ids need not be fed
            t = int(generated[pos])
            if not 0 <= t < n_vocab:
                raise ValueError(
                    f"{where}: generated id {t} (position {pos} after the prompt) is outside the tokenizer's "
                    f"vocabulary (n_vocab={n_vocab}), though the mask set its score to -inf; a processor after "
                    "this one changed the scores (put the constraint processor last), or the model's "
                    "tokenizer is not this one"
                )
            if not c.accept(t):
                raise ValueError(
                    f"{where}: generated id {t} (position {pos} after the prompt) is refused by the constraint, "
                    "though the mask set its score to -inf; a processor after this one changed the scores "
                    "(put the constraint processor last), or the ids do not come from the masked scores "
                    "(e.g. an unconstrained draft model)"
                )
            fed.append(t)


def banned_by_earlier(where: str, constraint: Constraint[Any]) -> str:
    """The message for a row whose scores are all ``-inf`` after the mask although
    ``constraint`` allows some ids: a processor that ran before the mask (``generate``
    runs its own first) had already set every allowed id to ``-inf``."""
    allowed = constraint.allowed_ids()
    shown = ", ".join(str(int(i)) for i in allowed[:5]) + (", ..." if len(allowed) > 5 else "")
    return (
        f"{where}: the constraint allows {len(allowed)} id(s) ({shown}), but a logits processor that ran "
        "before it had set all of them to -inf, so no id can be picked (sampling would fail with "
        "'probability tensor contains inf/nan'); generate runs its own processors first: min_new_tokens / "
        "min_length ban EOS (the only id left once a constraint with eos_id is complete), "
        "no_repeat_ngram_size bans repeats, and bad_words_ids, suppress_tokens ban ids; drop or lower "
        "that option, or loosen the constraint (e.g. allow more text before EOS)"
    )

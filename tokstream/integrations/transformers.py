"""Constraints and token healing for Hugging Face ``transformers``' ``generate``.

``ConstraintLogitsProcessor`` is a logits processor: ``generate`` calls each processor
in its ``logits_processor`` list as ``processor(input_ids, scores) -> scores``, with
``input_ids`` the ``(batch, seq)`` ids so far (prompt included) and ``scores`` the
``(batch, vocab_size)`` next-token scores. It follows each row's constraint through the
ids generated since the prompt (``tokstream.integrations`` notes) and sets the scores
of disallowed ids, and of the padded columns past the tokenizer's ``n_vocab``, to
``-inf`` in place with ``TokenMasker.apply``. ``heal_for_generate`` trims a prompt
with ``heal`` and returns the processor that makes the output reproduce the trimmed
bytes.

No subclass of ``transformers.LogitsProcessor`` is needed, and neither torch nor
transformers is imported here. Checked against transformers 5.24.0
(``generation/logits_process.py``): ``LogitsProcessorList`` is a plain ``list``
whose ``__call__`` loops over its items; for each it reads
``inspect.signature(processor.__call__)`` and, with more than two parameters, demands
that every extra one be passed as a keyword (``ValueError`` otherwise), else calls
``processor(input_ids, scores)``. So ``__call__`` here takes exactly two parameters
(no ``**kwargs``). ``LogitsProcessor`` itself is a plain class whose ``__call__``
raises ``NotImplementedError``.

Which row is which: ``generate`` repeats each prompt row ``num_beams`` or
``num_return_sequences`` times with ``repeat_interleave``, so with ``b`` constraints
and ``b * k`` rows, row ``r`` follows a fork of constraint ``r // k``. The prompt
length is the ``input_ids`` length of the first call unless given (for an
encoder-decoder model that is the decoder's start ids). Beam search reorders rows
between steps; the processor notices and rolls back (exact, not a heuristic).

It leaves out: reuse across ``generate`` calls (make one processor per call: a call
with another batch size raises, and a new prompt of the same shape is not detected),
and an unconstrained assistant model in assisted generation (its refused candidates
raise). Put the processor last: a warper after it cannot bring back a ``-inf``, but a
processor that adds to scores could, and then a refused id raises.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..constrain.constraint import Constraint
from ..constrain.healing import heal
from ..constrain.masks import TokenMasker
from .follow import Follower

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["ConstraintLogitsProcessor", "heal_for_generate"]


class ConstraintLogitsProcessor:
    """A ``transformers`` logits processor that keeps each row inside a ``Constraint``.

    ``constraints``: one constraint for every row, or a sequence of ``b`` (one per
    prompt; rows ``r`` with ``r // k == i`` follow constraint ``i`` when there are
    ``b * k`` rows). The constraints passed in are not changed: each row follows a
    ``fork``, and ``constraints`` (the property) gives the rows' current states.
    ``prompt_length``: where generated ids start in ``input_ids``; by default the
    ``input_ids`` length of the first call.

    A call ``processor(input_ids, scores)`` feeds each row's constraint the ids
    generated since the previous call, then sets disallowed scores and padded columns
    past ``n_vocab`` to ``-inf`` in place and returns ``scores``. A generated id the
    constraint refuses raises ``ValueError`` (the mask forbade it; module notes).

    Usage sketch (``model`` and ``hf_tok`` the model's, ``tok`` the same vocabulary in
    tokstream)::

        from transformers import LogitsProcessorList
        c = tokstream.choice_constraint(tok, ["yes", "no"], eos_id=hf_tok.eos_token_id)
        processor = ConstraintLogitsProcessor(tok, c)
        out = model.generate(input_ids, logits_processor=LogitsProcessorList([processor]),
                             max_new_tokens=8)

    Cost per call: the rows' ids after the prompt are copied to Python once
    (``tolist``), compared with what each constraint was fed (O(batch x generated)),
    and ``TokenMasker.apply`` builds the bool masks on the CPU and moves them to the
    scores' device (``TokenMasker`` notes).

    >>> import numpy as np, tokstream
    >>> tok = tokstream.load("cl100k_base")
    >>> p = ConstraintLogitsProcessor(tok, tokstream.prefix_constraint(tok, b" wor"))
    >>> scores = p(np.array([[9906, 11]]), np.zeros((1, 100300), dtype=np.float32))
    >>> bool(np.isinf(scores[0, tok.encode(" hello")[0]])), bool(np.isinf(scores[0, tok.encode(" world")[0]]))
    (True, False)
    """

    __slots__ = ("_masker", "_rows", "_sources", "prompt_length")

    def __init__(
        self,
        tok: Tokenizer,
        constraints: Constraint[Any] | Sequence[Constraint[Any]],
        *,
        prompt_length: int | None = None,
    ) -> None:
        self._masker = TokenMasker(tok)
        sources = [constraints] if isinstance(constraints, Constraint) else list(constraints)
        if not sources:
            raise ValueError("ConstraintLogitsProcessor needs at least one constraint")
        for c in sources:
            self._masker.check(c)
        if prompt_length is not None and (not isinstance(prompt_length, int) or prompt_length < 0):
            raise ValueError(f"prompt_length must be an int >= 0 or None, got {prompt_length!r}")
        self._sources: list[Constraint[Any]] = sources
        self._rows: list[Follower] | None = None
        #: Where generated ids start in ``input_ids`` (set by the first call if None).
        self.prompt_length = prompt_length

    @property
    def constraints(self) -> list[Constraint[Any]]:
        """Each row's constraint in its current state (the sources' forks before the
        first call; fresh forks, so the caller may advance them freely)."""
        if self._rows is None:
            return [c.fork() for c in self._sources]
        return [row.constraint.fork() for row in self._rows]

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        """Follow the rows' new ids, mask ``scores`` in place and return it (class notes)."""
        shape = tuple(input_ids.shape)
        if len(shape) != 2:
            raise ValueError(f"input_ids must be (batch, seq), got shape {shape}")
        batch, seq = shape
        rows = self._rows
        if rows is None:
            b = len(self._sources)
            if batch % b:
                raise ValueError(
                    f"input_ids have {batch} rows, not a multiple of the {b} constraints "
                    "(pass one per prompt, or one for every row)"
                )
            k = batch // b
            rows = self._rows = [Follower(self._sources[r // k].fork()) for r in range(batch)]
            if self.prompt_length is None:
                self.prompt_length = seq
        elif len(rows) != batch:
            raise ValueError(
                f"input_ids have {batch} rows, but this processor follows {len(rows)}; "
                "make a new ConstraintLogitsProcessor for each generate call"
            )
        start = self.prompt_length if self.prompt_length is not None else seq
        if seq < start:
            raise ValueError(
                f"input_ids have {seq} columns, fewer than prompt_length={start}; "
                "make a new ConstraintLogitsProcessor for each generate call"
            )
        generated = input_ids[:, start:].tolist()
        for r, row in enumerate(rows):
            row.sync(generated[r], f"row {r}")
        return self._masker.apply(scores, [row.constraint for row in rows])


def heal_for_generate(
    tok: Tokenizer, prompt_ids: Sequence[int], *, max_backoff: int = 1
) -> tuple[list[int], ConstraintLogitsProcessor]:
    """Token healing for ``generate``: the trimmed prompt and the processor that makes
    the output start with the trimmed bytes.

    ``heal(tok, prompt_ids, max_backoff=max_backoff)`` removes up to ``max_backoff``
    final tokens (``tokstream.constrain.healing``); the processor follows its prefix
    constraint, which is done at once when nothing was removed (then only padded
    columns are masked). For a batch of prompts, heal each and pass
    ``[h.constraint() for h in heals]`` to ``ConstraintLogitsProcessor`` (left-pad the
    trimmed prompts; the prompt length is then the padded width).

    Usage sketch::

        ids, processor = heal_for_generate(tok, tok.encode("Visit https://exa"), max_backoff=2)
        out = model.generate(torch.tensor([ids]), logits_processor=LogitsProcessorList([processor]))
        text = tok.decode(out[0].tolist())   # "Visit https://exa..." again, healed

    >>> import tokstream
    >>> tok = tokstream.load("cl100k_base")
    >>> ids, processor = heal_for_generate(tok, tok.encode("Visit https://exa"), max_backoff=2)
    >>> tok.decode(ids), processor.constraints[0].remaining
    ('Visit https://', b'exa')
    """
    h = heal(tok, prompt_ids, max_backoff=max_backoff)
    # The prompt length comes from the first call, so a BOS the caller prepends (or
    # left padding) does not shift where generated ids start.
    processor = ConstraintLogitsProcessor(tok, h.constraint())
    return h.prompt_ids, processor

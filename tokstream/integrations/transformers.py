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

Processors that run before it: ``generate`` puts its own processors first
(``min_new_tokens``, ``no_repeat_ngram_size``, ``bad_words_ids``, ...), and one of them
may already have set every id the constraint allows to ``-inf`` (``min_new_tokens``
banning EOS when a constraint with ``eos_id`` is complete). No id could then be picked
(sampling fails on NaN probabilities, greedy picks id 0), so the processor checks
each call, in one vectorised pass over the masked scores, that every restricted row
keeps a finite score, and otherwise raises ``ValueError`` naming the row, the allowed
ids and the likely options.

One processor per ``generate`` call: it follows the rows of one call, and a call of
another one raises ``ValueError`` (make a new processor; that is cheap: the
constraints are forked, not rebuilt). Detected: another batch size; fewer columns than
the prompt; ``input_ids`` more than one column longer than at the previous call
(``generate`` adds one per step and assisted generation only goes back, so that is a
new, longer prompt, e.g. the previous output plus a new turn); other prompt ids. For
those, the first call's prompt columns are kept; each call compares the prompt's last
column with them (O(batch)), and the whole prompt only when ``input_ids`` got shorter
(assisted generation, or a new call) or an id is refused. Re-arming on a new prompt
was not chosen: ``generate`` gives no sure sign of a new call (assisted generation
shortens ``input_ids`` between calls), so a silent restart could hide a misuse, and a
call with another batch size raises already. Not detected: a new prompt exactly one
column longer than the previous call's ``input_ids`` whose last prompt id is the
same (if all of its ids pass the constraints, the rows go on from their state).

It leaves out an unconstrained assistant model in assisted generation (its refused
candidates raise). Put the processor last: a warper after it cannot bring back a
``-inf``, but a processor that adds to scores could, and then a refused id raises.

Fast-forward (``Constraint.forced_ids``): a logits processor cannot skip forward
passes. ``generate`` runs the model once per new token and the processor only edits
that step's scores; it cannot append ids (``LogitsProcessor`` returns scores, nothing
else). What it can do, with ``pin_forced=True``: where the constraint forces ids, allow
only the first of them, so the forced text comes out in the tokenizer's canonical
tokens (the plain mask allows every spelling of it, ``{`` then ``"`` as well as
``{"``). That is one token per step all the same: it changes which tokens, not how
many passes. ``generate_with_fast_forward`` does skip them: a plain decoding loop over
the model's KV cache that appends the forced ids without scoring them and feeds them,
with the last sampled id, in the next single forward pass (k forced ids cost one pass
instead of k).
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..constrain.constraint import Constraint
from ..constrain.healing import heal
from ..constrain.masks import TokenMasker
from ..stream.decoder import FinishReason, StreamDecoder
from .follow import Follower, banned_by_earlier

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = [
    "ConstraintLogitsProcessor",
    "StreamerStoppingCriteria",
    "TokstreamIteratorStreamer",
    "TokstreamStreamer",
    "generate_with_fast_forward",
    "heal_for_generate",
]


class ConstraintLogitsProcessor:
    """A ``transformers`` logits processor that keeps each row inside a ``Constraint``.

    ``constraints``: one constraint for every row, or a sequence of ``b`` (one per
    prompt; rows ``r`` with ``r // k == i`` follow constraint ``i`` when there are
    ``b * k`` rows). The constraints passed in are not changed: each row follows a
    ``fork``, and ``constraints`` (the property) gives the rows' current states.
    ``prompt_length``: where generated ids start in ``input_ids``; by default the
    ``input_ids`` length of the first call. ``pin_forced``: where a row's constraint
    forces ids (``forced_ids``), allow only the first of them (module notes,
    "Fast-forward": the canonical tokens of forced text; no forward pass is saved).

    A call ``processor(input_ids, scores)`` feeds each row's constraint the ids
    generated since the previous call, then sets disallowed scores and padded columns
    past ``n_vocab`` to ``-inf`` in place and returns ``scores``. A generated id the
    constraint refuses raises ``ValueError`` (the mask forbade it; module notes), as do
    a row left with no finite score (an earlier processor banned every allowed id) and
    a call of another ``generate`` (another prompt or batch size: one processor per
    call; module notes).

    Usage sketch (``model`` and ``hf_tok`` the model's, ``tok`` the same vocabulary in
    tokstream)::

        from transformers import LogitsProcessorList
        c = tokstream.choice_constraint(tok, ["yes", "no"], eos_id=hf_tok.eos_token_id)
        processor = ConstraintLogitsProcessor(tok, c)
        out = model.generate(input_ids, logits_processor=LogitsProcessorList([processor]),
                             max_new_tokens=8)

    Cost per call: the rows' ids after the prompt are copied to Python once
    (``tolist``, with the prompt's last column), compared with what each constraint was
    fed (O(batch x generated)), one pass over the masked scores finds rows with no
    finite score, and ``TokenMasker.apply`` builds the bool masks on the CPU and moves them to the
    scores' device (``TokenMasker`` notes).

    >>> import numpy as np, tokstream
    >>> tok = tokstream.load("cl100k_base")
    >>> p = ConstraintLogitsProcessor(tok, tokstream.prefix_constraint(tok, b" wor"))
    >>> scores = p(np.array([[9906, 11]]), np.zeros((1, 100300), dtype=np.float32))
    >>> bool(np.isinf(scores[0, tok.encode(" hello")[0]])), bool(np.isinf(scores[0, tok.encode(" world")[0]]))
    (True, False)
    """

    __slots__ = ("_masker", "_prompt", "_rows", "_seq", "_sources", "pin_forced", "prompt_length")

    def __init__(
        self,
        tok: Tokenizer,
        constraints: Constraint[Any] | Sequence[Constraint[Any]],
        *,
        prompt_length: int | None = None,
        pin_forced: bool = False,
    ) -> None:
        self._masker = TokenMasker(tok)
        sources = [constraints] if isinstance(constraints, Constraint) else list(constraints)
        if not sources:
            raise ValueError("ConstraintLogitsProcessor needs at least one constraint")
        for c in sources:
            self._masker.check(c)
            if pin_forced:
                c.forced_ids()  # a constraint without its tokenizer raises here, not mid-generate
        if prompt_length is not None and (not isinstance(prompt_length, int) or prompt_length < 0):
            raise ValueError(f"prompt_length must be an int >= 0 or None, got {prompt_length!r}")
        self._sources: list[Constraint[Any]] = sources
        self._rows: list[Follower] | None = None
        self._prompt: list[list[int]] = []  # the first call's input_ids[:, :prompt_length]
        self._seq = -2  # the last call's seq: the next is expected to be one more
        #: Where generated ids start in ``input_ids`` (set by the first call if None).
        self.prompt_length = prompt_length
        #: Allow only the first forced id where a row's constraint forces some.
        self.pin_forced = bool(pin_forced)

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
            if self.prompt_length > seq:
                raise ValueError(
                    f"prompt_length={self.prompt_length} exceeds the {seq} columns of the first call's input_ids"
                )
            # Kept to tell a new prompt (another generate call) from this one's (class notes).
            self._prompt = input_ids[:, : self.prompt_length].tolist()
            self._seq = seq - 1
        elif len(rows) != batch:
            raise ValueError(
                f"input_ids have {batch} rows, but this processor follows {len(rows)}; "
                "make a new ConstraintLogitsProcessor for each generate call"
            )
        start = self.prompt_length if self.prompt_length is not None else seq
        if seq < start:
            raise ValueError(
                f"input_ids have {seq} columns, fewer than prompt_length={start} (the prompt of the first call): "
                "another generate call with a shorter prompt? make a new ConstraintLogitsProcessor for each "
                "generate call"
            )
        if seq > self._seq + 1:
            # generate adds one column per step, and assisted generation goes back, never
            # forward by more: this is another call, whose prompt is longer.
            raise ValueError(
                f"input_ids have {seq} columns, {seq - self._seq} more than at the previous call (generate adds "
                "one per step): this processor is being reused for another generate call with a longer prompt "
                "(e.g. the previous output plus more ids); make a new ConstraintLogitsProcessor for each "
                "generate call (cheap: the constraints are forked, not rebuilt)"
            )
        if start:
            # One column more than the generated ids: the prompt's last id, compared per row
            # with the first call's (O(batch)); the whole prompt only when seq went back
            # (assisted generation, or a new call) or an id is refused (module notes).
            tails = input_ids[:, start - 1 :].tolist()
            if seq <= self._seq or any(t[0] != p[-1] for t, p in zip(tails, self._prompt)):
                self._check_prompt(input_ids)
            generated = [t[1:] for t in tails]
        else:
            generated = input_ids.tolist()
        self._seq = seq
        for r, row in enumerate(rows):
            try:
                row.sync(generated[r], f"row {r}")
            except ValueError:
                if start:
                    self._check_prompt(input_ids)  # a new prompt explains a refused id best
                raise
        constraints = [row.constraint for row in rows]
        self._masker.apply(scores, constraints)
        if self.pin_forced:
            for r, c in enumerate(constraints):
                forced = c.forced_ids()
                if forced:
                    # Everything but the first forced id to -inf; its score stays (an
                    # earlier processor's -inf there is reported below).
                    t = forced[0]
                    keep = scores[r, t].clone() if hasattr(scores, "clone") else scores[r, t].copy()
                    scores[r, :] = float("-inf")
                    scores[r, t] = keep
        # A processor before this one may have set every allowed id to -inf: then no id
        # can be picked (sampling fails on NaN probabilities, greedy picks id 0). One
        # vectorised pass (torch or numpy) finds such rows; the message names the cause.
        dead = (scores == float("-inf")).all(-1)
        if dead.any():
            for r, is_dead in enumerate(dead.tolist()):
                if is_dead and not constraints[r].is_done:  # a done row is not restricted: not ours
                    raise ValueError(
                        banned_by_earlier(f"row {r} (position {len(generated[r])} after the prompt)", constraints[r])
                    )
        return scores

    def _check_prompt(self, input_ids: Any) -> None:
        """Raise ``ValueError`` when ``input_ids``' prompt columns are not the first call's."""
        start = self.prompt_length or 0
        prompt = input_ids[:, :start].tolist()
        if prompt != self._prompt:
            r = next(r for r, (a, b) in enumerate(zip(prompt, self._prompt)) if a != b)
            raise ValueError(
                f"row {r}: input_ids[:, :{start}] differ from the prompt of this processor's first call: it is "
                "being reused for another generate call (another prompt); make a new ConstraintLogitsProcessor "
                "for each generate call (cheap: the constraints are forked, not rebuilt)"
            )


def generate_with_fast_forward(
    model: Any,
    tok: Tokenizer,
    prompt_ids: Sequence[int],
    constraint: Constraint[Any],
    *,
    max_new_tokens: int,
    eos_token_id: int | None = None,
    do_sample: bool = False,
    temperature: float = 1.0,
    generator: Any = None,
) -> list[int]:
    """Decode one sequence from ``model`` under ``constraint``, appending its forced ids
    without scoring them (module notes, "Fast-forward"); returns the new ids (EOS
    included when it ended the output).

    ``model`` is a ``transformers`` causal LM: ``model(input_ids=..., cache=...,
    use_cache=True)`` returning ``.logits`` and ``.cache`` (transformers 5.25; earlier
    releases name the cache ``past_key_values``: the one the model's ``forward`` takes
    is used, and ``logits_to_keep=1`` where it takes that), ``tok`` the
    same vocabulary in tokstream (``constraint`` must be built with it: ``forced_ids``
    encodes with it). The constraint passed in is not changed (a fork is followed).
    Each step: the forced ids (``constraint.forced_ids()``) are appended, up to
    ``max_new_tokens``, and fed to the model with the previous new id in the next single
    forward pass; the last position's scores are masked (``TokenMasker.apply``, padded
    columns included) and an id is picked: the arg max, or with ``do_sample`` a sample
    of ``softmax(scores / temperature)`` (``generator``: a ``torch.Generator``). It stops
    after ``eos_token_id`` (if given) or ``max_new_tokens`` ids. One sequence, no
    beams, none of ``generate``'s other processors; a row whose masked scores are all
    ``-inf`` raises ``ValueError``.

    Usage sketch (``model`` the model, ``tok`` its tokenizer in tokstream)::

        c = tokstream.json_schema_constraint(tok, schema, eos_id=eos)
        new_ids = generate_with_fast_forward(model, tok, tok.encode(prompt), c, max_new_tokens=200, eos_token_id=eos)
    """
    import inspect

    import torch

    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 0:
        raise ValueError(f"max_new_tokens must be an int >= 0, got {max_new_tokens!r}")
    if not prompt_ids:
        raise ValueError("generate_with_fast_forward needs at least one prompt id (a BOS id, for an empty prompt)")
    masker = TokenMasker(tok)
    masker.check(constraint)
    c = constraint.fork()
    out: list[int] = []
    pending = [int(i) for i in prompt_ids]  # ids the model has not seen yet
    past = None
    device = getattr(model, "device", None)
    params = inspect.signature(model.forward).parameters
    cache_name = "cache" if "cache" in params else "past_key_values"
    extra: dict[str, Any] = {"logits_to_keep": 1} if "logits_to_keep" in params else {}
    with torch.inference_mode():
        while len(out) < max_new_tokens:
            forced = c.forced_ids()[: max_new_tokens - len(out)]
            for t in forced:
                if not c.accept(t):  # pragma: no cover - forced_ids checks each id
                    raise RuntimeError(f"the constraint refused its own forced id {t}")
            out += forced
            pending += forced
            if len(out) >= max_new_tokens:
                break
            ids = torch.tensor([pending], device=device)
            step = model(input_ids=ids, use_cache=True, **{cache_name: past}, **extra)
            past = getattr(step, cache_name)
            scores = step.logits[0, -1].float()
            masker.apply(scores, c)
            if bool(torch.isneginf(scores).all()):
                raise ValueError(
                    f"position {len(out)} after the prompt: the model scores every id the constraint allows "
                    f"as -inf ({len(c.allowed_ids())} allowed), so none can be picked"
                )
            if do_sample:
                probs = torch.softmax(scores / temperature, dim=-1)
                t = int(torch.multinomial(probs, 1, generator=generator))
            else:
                t = int(torch.argmax(scores))
            out.append(t)
            pending = [t]
            if eos_token_id is not None and t == eos_token_id:
                break
            if not c.is_done and not c.accept(t):  # pragma: no cover - the mask allowed it
                raise RuntimeError(f"the constraint refused id {t}, which its mask allowed")
    return out


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


# ----------------------------------------------------------------------- streamers


def _put_ids(value: Any) -> list[int]:
    """The ids of one ``put``: a tensor (or array, or list) of shape ``(seq,)``, ``(1,
    seq)`` or ``()``; more than one row raises (one stream per streamer)."""
    data = value.tolist() if hasattr(value, "tolist") else list(value)
    if isinstance(data, int):
        return [data]
    if data and isinstance(data[0], list):
        if len(data) != 1:
            raise ValueError(
                f"TokstreamStreamer streams one sequence, got {len(data)} rows (batch size or "
                "num_return_sequences > 1); generate one prompt at a time, as with TextStreamer"
            )
        data = data[0]
    return [int(i) for i in data]


class TokstreamStreamer:
    """A streamer for ``model.generate(..., streamer=...)`` whose text is exactly
    ``tok.decode`` of the ids (``StreamDecoder``), prompt boundary included.

    ``generate`` calls ``put(prompt_ids)`` first, then ``put(new_ids)`` after each step,
    and ``end()`` at the end; ``put`` takes a tensor, array or list of shape ``(1, n)``
    or ``(n,)`` (one sequence: more rows raise ``ValueError``, as ``TextStreamer``).
    Each piece of text that became final goes to ``on_text(text, final=False)``, and
    ``end()`` calls ``on_text(rest, final=True)`` once (``rest`` may be ``""``), like
    ``TextStreamer.on_finalized_text``. ``on_text`` calls ``callback(text, final)``
    when one was given, else prints like ``TextStreamer`` (a newline at the end);
    override it in a subclass for anything else. After ``end()`` the next ``put`` is a
    prompt again, so a streamer serves one ``generate`` call after another.

    Text: ``skip_prompt=True`` emits only the continuation, exactly
    ``tok.decode(prompt + generated)`` minus the prompt's text (``StreamDecoder`` with
    ``prefix_ids``, module notes): a SentencePiece model's leading ``"▁"`` of the first
    generated token stays a space, which ``TextStreamer`` (decoding the generated ids
    alone) drops. ``skip_prompt=False`` emits the prompt's text first, and all the
    text joins to ``tok.decode(prompt + generated)``. ``skip_special_tokens`` as in
    ``tok.decode``.

    ``stop`` (strings) and ``stop_token_ids`` (e.g. ``[eos_id]``, whose text is then
    not emitted) are looked for in the generated part only (``StreamDecoder``): after
    one, nothing more is emitted (``stopped``; ``stop_reason`` says which).
    ``include_stop`` emits the stop string too. ``generate`` itself goes on, unless
    paired with a stopping criterion: ``stopping_criteria()`` (ends generation on the
    step that completed the stop), or transformers' ``stop_strings=`` (with
    ``tokenizer=``; its output keeps the stop string, this text does not).
    Caveat: with ``skip_prompt=False`` and a stop, the prompt's text is what a
    ``StreamDecoder`` emits for it; for a tokenizer whose decoder cannot stream at all
    (``StreamDecoder`` notes, "hold") that is ``""``, so the prompt's text is missing.

    Usage sketch::

        streamer = TokstreamStreamer(tok, skip_prompt=True, stop=["\\n\\n"], callback=send)
        model.generate(input_ids, streamer=streamer, max_new_tokens=200,
                       stopping_criteria=StoppingCriteriaList([streamer.stopping_criteria()]))

    No subclass of ``transformers.BaseStreamer`` is needed (checked against
    transformers 5.24.0: ``generate`` only calls ``put`` and ``end``, and
    ``BaseStreamer`` is a plain class with those two methods raising
    ``NotImplementedError``; nothing tests ``isinstance``), so neither transformers
    nor torch is imported here. Cost per id: ``StreamDecoder.push`` on a short list
    (module notes of ``tokstream.stream.decoder``), one ``tolist``.
    """

    def __init__(
        self,
        tok: Tokenizer,
        *,
        skip_prompt: bool = False,
        skip_special_tokens: bool = False,
        stop: str | Sequence[str] = (),
        include_stop: bool = False,
        stop_token_ids: Sequence[int] = (),
        callback: Callable[[str, bool], object] | None = None,
    ) -> None:
        self._tok = tok
        self.skip_prompt = skip_prompt
        self._options: dict[str, Any] = {
            "skip_special_tokens": skip_special_tokens,
            "stop": (stop,) if isinstance(stop, str) else tuple(stop),
            "include_stop": include_stop,
            "stop_token_ids": tuple(stop_token_ids),
        }
        StreamDecoder(tok, **self._options)  # raises now for a bad option
        self._callback = callback
        self._decoder: StreamDecoder | None = None  # None: the next put is a prompt
        self._last: StreamDecoder | None = None  # the previous call's, for the properties
        self._n_put = 0  # generated ids received by put
        self._n_fed = 0  # generated ids fed to the decoder (put, or the criterion ahead of it)
        #: The prompt of the current (or last) generate call.
        self.prompt_ids: list[int] = []
        #: The ids generated after the prompt, as fed to the decoder (up to the one that
        #: completed a stop, included; later ones are not looked at).
        self.generated_ids: list[int] = []
        self._parts: list[str] = []

    # ------------------------------------------------------------ BaseStreamer

    def put(self, value: Any) -> None:
        """Take the prompt (first call after construction or ``end``) or new ids."""
        ids = _put_ids(value)
        if self._decoder is None:
            self._start(ids)
            return
        at = self._n_put
        self._n_put += len(ids)
        self._feed(ids, at)

    def end(self) -> None:
        """The end of generation: emit what was held back, then ``on_text(.., final=True)``."""
        decoder = self._decoder
        rest = decoder.finish() if decoder is not None else ""
        self._last, self._decoder = decoder or self._last, None
        if rest:
            self._parts.append(rest)
        self.on_text(rest, True)

    def on_text(self, text: str, final: bool) -> None:
        """Called with each new piece of final text, and once with ``final=True`` at the
        end: ``callback(text, final)`` if given, else print (like ``TextStreamer``)."""
        if self._callback is not None:
            self._callback(text, final)
        else:
            print(text, end="\n" if final else "", flush=True)

    # ------------------------------------------------------------------ state

    @property
    def text(self) -> str:
        """All text emitted for the current (or last) generate call."""
        return "".join(self._parts)

    @property
    def stopped(self) -> bool:
        """Whether a stop string or stop id ended the text (``StreamDecoder.stopped``)."""
        d = self._decoder or self._last
        return d is not None and d.stopped

    @property
    def finish_reason(self) -> FinishReason | None:
        """The decoder's ``StreamDecoder.finish_reason`` (None before the first prompt)."""
        d = self._decoder or self._last
        return d.finish_reason if d is not None else None

    @property
    def stop_reason(self) -> str | int | None:
        """The decoder's ``StreamDecoder.stop_reason``: the stop string or stop id, or None."""
        d = self._decoder or self._last
        return d.stop_reason if d is not None else None

    def stopping_criteria(self) -> StreamerStoppingCriteria:
        """A stopping criterion for ``generate`` (put it in ``stopping_criteria=``'s
        ``StoppingCriteriaList``) that ends generation on the step whose id completes a
        stop string or is a stop id; pass this streamer as ``streamer=`` too."""
        return StreamerStoppingCriteria(self)

    # ---------------------------------------------------------------- private

    def _start(self, ids: list[int]) -> None:
        tok, options = self._tok, self._options
        self.prompt_ids, self.generated_ids, self._parts = ids, [], []
        self._n_put = self._n_fed = 0
        if self.skip_prompt or options["stop"] or options["stop_token_ids"]:
            # Stops are looked for after the prompt only: the prompt primes the decoder.
            self._decoder = StreamDecoder(tok, prefix_ids=ids, **options)
            skip = options["skip_special_tokens"]
            head = "" if self.skip_prompt else StreamDecoder(tok, skip_special_tokens=skip).push(ids)
        else:
            self._decoder = StreamDecoder(tok, **options)
            head = self._decoder.push(ids)
        self._emit(head)

    def _feed(self, ids: list[int], at: int) -> None:
        """Feed the generated ids ``ids`` (positions ``at``.. after the prompt) that the
        decoder has not had yet."""
        decoder = self._decoder
        new = ids[self._n_fed - at :] if self._n_fed > at else ids
        if decoder is None or not new or decoder.stopped:
            return
        self._n_fed += len(new)
        self.generated_ids += new
        self._emit(decoder.push(new))

    def _emit(self, text: str) -> None:
        if text:
            self._parts.append(text)
            self.on_text(text, False)


class StreamerStoppingCriteria:
    """``generate``'s stopping criterion for a ``TokstreamStreamer`` (its
    ``stopping_criteria()``): True once the streamer's text has stopped.

    ``generate`` calls the criteria after appending each step's id and before handing
    it to the streamer, so the criterion feeds the streamer the new ids of
    ``input_ids`` itself (the streamer's ``put`` then skips them), and generation ends
    on the step that completed the stop, not one later. One sequence only, like the
    streamer. Duck-typed like ``StoppingCriteria``: ``StoppingCriteriaList`` only calls
    ``criteria(input_ids, scores, **kwargs)`` and ors the bool tensors.
    """

    __slots__ = ("streamer",)

    def __init__(self, streamer: TokstreamStreamer) -> None:
        self.streamer = streamer

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        """A ``(batch,)`` bool tensor: whether the streamer's text has stopped."""
        import torch  # generate calls this, so torch is there

        s = self.streamer
        if s._decoder is None:
            raise ValueError(
                "the streamer has not seen the prompt: pass the same TokstreamStreamer to generate as "
                "streamer= too (its stopping_criteria() follows it)"
            )
        batch = int(input_ids.shape[0])
        if batch != 1:
            raise ValueError(f"TokstreamStreamer streams one sequence, got {batch} rows")
        start = len(s.prompt_ids) + s._n_fed
        s._feed(input_ids[0, start:].tolist(), s._n_fed)
        return torch.full((batch,), s.stopped, dtype=torch.bool, device=input_ids.device)


class TokstreamIteratorStreamer(TokstreamStreamer):
    """A ``TokstreamStreamer`` to iterate over from another thread, like
    ``TextIteratorStreamer``: run ``generate`` in a thread and iterate here; each item
    is a non-empty piece of text, and iteration ends at ``end()``.

    The pieces go through a thread-safe ``queue.Queue``. ``timeout`` (seconds, None
    to wait forever) bounds the wait for each piece: ``queue.Empty`` is raised when it
    passes, e.g. because ``generate`` raised in its thread and never called ``end()``.
    Other options as ``TokstreamStreamer`` (no ``callback``: ``on_text`` queues).

    Usage sketch::

        streamer = TokstreamIteratorStreamer(tok, skip_prompt=True, timeout=30)
        Thread(target=model.generate, kwargs=dict(input_ids=ids, streamer=streamer)).start()
        for piece in streamer:
            send(piece)
    """

    def __init__(
        self,
        tok: Tokenizer,
        *,
        skip_prompt: bool = False,
        skip_special_tokens: bool = False,
        stop: str | Sequence[str] = (),
        include_stop: bool = False,
        stop_token_ids: Sequence[int] = (),
        timeout: float | None = None,
    ) -> None:
        super().__init__(
            tok,
            skip_prompt=skip_prompt,
            skip_special_tokens=skip_special_tokens,
            stop=stop,
            include_stop=include_stop,
            stop_token_ids=stop_token_ids,
        )
        self.timeout = timeout
        self._queue: queue.Queue[str | None] = queue.Queue()

    def on_text(self, text: str, final: bool) -> None:
        """Queue ``text`` (when not empty), and the end marker when ``final``."""
        if text:
            self._queue.put(text)
        if final:
            self._queue.put(None)

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        item = self._queue.get(timeout=self.timeout)
        if item is None:
            raise StopIteration
        return item

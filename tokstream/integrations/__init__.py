"""Glue between ``tokstream.constrain`` and generation loops: Hugging Face
``transformers`` (``integrations.transformers``) and vLLM (``integrations.vllm``).

Neither torch, transformers nor vLLM is imported here or by the submodules at import
time: torch is imported on the first call with a tensor (``TokenMasker.apply``), and
the two frameworks are never imported (their processors are duck-typed callables).

Both adapters follow a generation the same way (``follow.Follower``): they are handed the
ids generated so far, not the newest id, so each keeps the ids it has fed its
constraint and, per call, feeds the new tail. When the ids it fed are no longer a
prefix of what it is handed (beam search reorders rows; assisted generation drops
rejected candidates), it rolls the constraint back to the common prefix first: a
constraint's state depends only on the ids it accepted, so that is exact. An id the
constraint refuses raises ``ValueError``: the mask forbade it, so something after the
mask changed the scores, or the ids did not come from the masked scores.

Cost per call and row: one comparison of the fed ids with the generated ids (O(L) in
C, L the generated length), ``accept`` per new id, then ``TokenMasker.apply``.
"""

from __future__ import annotations

__all__: list[str] = []

"""Token healing: back off a prompt's last tokens, and constrain generation to
reproduce the bytes they stood for.

A prompt that ends mid-word (``"https://exa"``), after a space or mid-character is
cut at a token boundary that training rarely saw. ``heal`` removes up to
``max_backoff`` final tokens, but only as many as some single token strictly
extends (``" wor"`` -> ``" world"``), never a special token or anything before one;
``Healing.constraint()`` then requires the generation's bytes to start with the
removed bytes. Everything works on token bytes, so the byte-level ``Ġ`` proxy,
SentencePiece's ``▁`` and ``<0xXX>`` pieces and a UTF-8 character split across
tokens need no special case, and a trailing space is never stripped: it moves into
the constraint.

Cost: one binary search of the vocabulary index per token backed off (O(k log V)).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InvalidTokenIdError
from ..vocab import VocabIndex
from .constraint import PrefixConstraint

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["Healing", "heal"]


@dataclass(frozen=True)
class Healing:
    """The result of ``heal``: ``prompt_ids`` (the prompt without the removed tokens),
    ``prefix`` (the removed tokens' bytes, which the generation must reproduce) and
    ``removed`` (how many tokens were backed off; 0 leaves the prompt unchanged)."""

    prompt_ids: list[int]
    prefix: bytes
    removed: int
    index: VocabIndex

    def constraint(self) -> PrefixConstraint:
        """A fresh ``prefix_constraint`` for ``prefix`` (done at once when empty)."""
        return PrefixConstraint(self.index, self.prefix)


def heal(tok: Tokenizer, prompt_ids: Sequence[int], *, max_backoff: int = 1) -> Healing:
    """Back off up to ``max_backoff`` of the prompt's last tokens (module notes).

    The largest ``k <= max_backoff`` is taken for which the last ``k`` tokens hold no
    special token and some token's bytes strictly extend theirs; with none, nothing
    is removed.

    >>> import tokstream
    >>> tok = tokstream.load("cl100k_base")
    >>> h = heal(tok, tok.encode("Visit https://exa"), max_backoff=2)
    >>> h.prefix, tok.decode(h.prompt_ids)
    (b'exa', 'Visit https://')
    """
    if not isinstance(max_backoff, int) or max_backoff < 0:
        raise ValueError(f"max_backoff must be an int >= 0, got {max_backoff!r}")
    ids = list(prompt_ids)
    index = tok.vocab.index
    n = index.n_vocab
    for i in ids:
        if not isinstance(i, (int, np.integer)) or not 0 <= i < n:
            raise InvalidTokenIdError(i, tok.name, n)
    best, best_data = 0, b""
    data = b""
    for k in range(1, min(max_backoff, len(ids)) + 1):
        piece = index.token_bytes[ids[-k]]
        if not piece:  # a special token (or an id without text): never heal across it
            break
        data = piece + data
        lo, hi = index.extensions(data)
        # Sorted by bytes, the slice ends with its longest member unless all equal data.
        if hi > lo and index.token_bytes[int(index.order[hi - 1])] != data:
            best, best_data = k, data
    return Healing([int(i) for i in ids[: len(ids) - best]], best_data, best, index)

"""Token healing: back off a prompt's last tokens, and constrain generation to
reproduce the bytes they stood for.

A prompt that ends mid-word (``"https://exa"``), after a space or mid-character is
cut at a token boundary that training rarely saw. ``heal`` removes up to
``max_backoff`` final tokens, but only as many as some single token strictly
extends (``" wor"`` -> ``" world"``), never a special token or anything before one;
``Healing.constraint()`` then requires the generation's bytes to start with the
removed bytes. Everything works on token bytes, so the byte-level ``Ġ`` proxy,
SentencePiece's ``▁`` and ``<0xXX>`` pieces need no special case, and a trailing
space is never stripped: it moves into the constraint.

UTF-8 (``utf8``): the constraint allows only valid UTF-8 (``constraint`` module
notes). A character split across tokens may put its lead byte in the kept prompt and
its continuation bytes in the removed ones (Llama 3 encodes some CJK text so), so the
constraint starts from the character the kept prompt leaves open: its last character,
read from its lead byte (earlier invalid bytes in the prompt are not the generation's
business; after a special token, a boundary). Tokens are backed off only as far as
some single token strictly extends them *and* may follow that open character: a
prompt ending in bytes no UTF-8 holds (an orphan continuation byte, ``0xFF``) is not
healed across them.

Cost: one binary search of the vocabulary index per token backed off (O(k log V)),
plus a scan of the UTF-8 class of the extending tokens (``utf8``; usually a few).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..vocab import VocabIndex
from .constraint import PrefixConstraint, check_count, check_id
from .utf8 import ACCEPT, REJECT, run, utf8_index

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["Healing", "heal"]


@dataclass(frozen=True)
class Healing:
    """The result of ``heal``: ``prompt_ids`` (the prompt without the removed tokens),
    ``prefix`` (the removed tokens' bytes, which the generation must reproduce),
    ``removed`` (how many tokens were backed off; 0 leaves the prompt unchanged) and
    ``utf8_state``, the UTF-8 automaton state the kept prompt leaves open
    (``utf8.ACCEPT`` at a character boundary); ``tok``, the tokenizer (for the
    constraint's ``forced_ids``)."""

    prompt_ids: list[int]
    prefix: bytes
    removed: int
    index: VocabIndex
    utf8_state: int = ACCEPT
    tok: Tokenizer | None = field(default=None, repr=False, compare=False)

    def constraint(self) -> PrefixConstraint:
        """A fresh prefix constraint for ``prefix`` from the kept prompt's open
        character (``prefix_constraint`` when that is a boundary; done at once when
        nothing was removed)."""
        return PrefixConstraint(self.index, self.prefix, self.utf8_state, tok=self.tok)


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
    max_backoff = check_count(max_backoff, "max_backoff")
    index = tok.vocab.index
    n = index.n_vocab
    ids = list(prompt_ids)
    for i in ids:
        if type(i) is not int or not 0 <= i < n:  # numpy ints, bools, bad ids: checked
            ids = [check_id(i, tok.name, n) for i in ids]
            break
    u = utf8_index(index)
    best, best_data, best_state = 0, b"", ACCEPT  # nothing removed: nothing to reproduce
    data = b""
    for k in range(1, min(max_backoff, len(ids)) + 1):
        piece = index.token_bytes[ids[-k]]
        if not piece:  # a special token (or an id without text): never heal across it
            break
        data = piece + data
        state = _open_state(index, ids, len(ids) - k)
        if state == REJECT:
            continue
        # The tokens strictly longer than data that start with it: sorted by bytes,
        # they follow the ones equal to data, from the first string above data.
        lo, hi = index.extensions(data + b"\x00")[0], index.extensions(data)[1]
        if hi > lo and u.any_ok(state, lo, hi):
            best, best_data, best_state = k, data, state
    return Healing(ids[: len(ids) - best], best_data, best, index, best_state, tok)


def _open_state(index: VocabIndex, ids: list[int], stop: int) -> int:
    """The UTF-8 automaton state the bytes of ``ids[:stop]`` leave open (module
    notes): their last character read from its lead byte; ``ACCEPT`` when empty or
    after a special token, ``REJECT`` when they end in bytes no character holds."""
    tail = b""
    for k in range(stop - 1, -1, -1):
        piece = index.token_bytes[ids[k]]
        if not piece:
            break
        tail = piece + tail
        if len(tail) >= 4:
            break
    tail = tail[-4:]  # a character is at most 4 bytes
    for k in range(len(tail) - 1, -1, -1):
        if tail[k] & 0xC0 != 0x80:  # not a continuation byte: the last lead
            return run(ACCEPT, tail[k:])
    return REJECT if tail else ACCEPT

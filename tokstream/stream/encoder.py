"""Encode text that arrives in chunks, emitting only ids that can no longer change.

``push`` appends a chunk and, once ``batch`` characters are pending, encodes the
pending text up to its stable boundary (``Tokenizer.stable_encoder``: the one
cut-and-encode call the prefix-cache planner's ``encode_stable`` shares); the ids of the
text before the boundary are final and are returned, the rest stays pending. ``finish`` encodes what is left. The concatenated output equals
``tok.encode(full_text)`` with the same options under every chunking.

Cost: a push that does not reach ``batch`` pending characters appends to a list
(~0.3 us). A scan costs O(pending text) plus the encoding of the text before the
cut, ~10 us of fixed work on top; on prose the pending text after a scan is the
last word or two. Pending text is scanned again only while it is short (``_EAGER``
characters) or once it has doubled since the last scan, so a run with no cut (a
million ``'a'``, a line of Japanese under a SentencePiece model) costs O(n) in
total, not O(n^2). ``batch`` trades latency for throughput: 64 (the default)
returns ids after every 64-character chunk; larger batches amortize the fixed cost
over more text (``bench/stream.py`` measures both).
"""

from __future__ import annotations

import re

from ..specials import SpecialSet
from ..tokenizer import Tokenizer, check_text

#: Pending text up to this long is scanned for a cut at every scan; longer pending
#: text only when it has doubled since the last scan (linear total cost).
_EAGER = 512


class StreamEncoder:
    """Incremental ``encode``: ``push(text)`` returns ids that no later text can
    change, ``finish()`` the rest.

    ``allowed_special`` / ``disallowed_special`` are ``encode``'s. A disallowed
    special token's literal raises ``SpecialTokenError`` from the ``push`` that
    completes it (its ``offset`` counts from the start of the stream), also when the
    literal is split across chunks; the rejected chunk is not kept, so the stream
    stays usable. ``batch``: pending characters that trigger a scan for final ids
    (1 scans at every push); with the default 64, after each 64-character chunk of
    prose only the last word or two are pending.

    >>> import tokstream
    >>> tok = tokstream.load("cl100k_base")
    >>> enc = StreamEncoder(tok)
    >>> ids = enc.push("Streaming text is encoded as it arrives, and only the ids that ")
    >>> ids += enc.push("no continuation can change are returned.")
    >>> ids += enc.finish()
    >>> ids == tok.encode("Streaming text is encoded as it arrives, and only the ids that "
    ...                   "no continuation can change are returned.")
    True
    """

    __slots__ = (
        "_batch",
        "_chunks",
        "_continued",
        "_enders",
        "_finished",
        "_longest",
        "_offset",
        "_pending",
        "_policy",
        "_scanned",
        "_stable",
    )

    def __init__(
        self,
        tok: Tokenizer,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
        batch: int = 64,
    ) -> None:
        self._stable = tok.stable_encoder(allowed_special=allowed_special, disallowed_special=disallowed_special)
        self._policy = self._stable.policy
        disallowed = self._policy.disallowed
        self._longest = max(map(len, disallowed), default=0)
        # A literal can only complete in a chunk holding its last character.
        enders = sorted({lit[-1] for lit in disallowed if lit})
        self._enders = re.compile("[" + "".join(map(re.escape, enders)) + "]") if enders else None
        if batch < 1:
            raise ValueError(f"batch must be at least 1, got {batch}")
        self._batch = batch
        self._chunks: list[str] = []
        self._pending = 0  # characters in _chunks
        self._offset = 0  # characters of the stream before _chunks
        self._continued = False  # _chunks continues a section (no start rules)
        self._scanned = 0  # pending length at the last scan
        self._finished = False

    @property
    def pending_text(self) -> str:
        """The text pushed whose ids are not final yet."""
        return "".join(self._chunks)

    def push(self, text: str) -> list[int]:
        """Append ``text``; return the ids that became final (possibly none)."""
        if type(text) is not str:
            check_text(text)
        if self._finished:
            raise ValueError("push() after finish(): start a new StreamEncoder")
        if self._enders is not None and self._enders.search(text) is not None:
            self._check(text)
        self._chunks.append(text)
        n = self._pending = self._pending + len(text)
        if n < self._batch or (n > _EAGER and n < 2 * self._scanned):
            return []
        return self._emit()

    def finish(self) -> list[int]:
        """The ids of the pending text; the stream is then closed (a second call
        returns ``[]``)."""
        if self._finished:
            return []
        self._finished = True
        text = "".join(self._chunks)
        self._chunks = []
        self._pending = 0
        return self._stable.encode_rest(text, continued=self._continued) if text else []

    def _emit(self) -> list[int]:
        text = "".join(self._chunks)
        found = self._stable.encode(text, continued=self._continued, tail=False)
        cut = found.boundary
        if cut == 0:
            self._chunks = [text]
            self._scanned = len(text)
            return []
        rest = text[cut:]
        self._chunks = [rest] if rest else []
        self._pending = len(rest)
        self._offset += cut
        self._continued = found.continued
        self._scanned = len(rest)
        return found.ids

    def _check(self, text: str) -> None:
        """Raise where ``encode`` would: a disallowed literal ending in ``text``,
        possibly begun in the pending text."""
        back = min(self._pending, self._longest - 1)
        parts: list[str] = []
        need = back
        for chunk in reversed(self._chunks):  # only the last few chunks: O(literal)
            if need <= 0:
                break
            parts.append(chunk[-need:])
            need -= len(chunk)
        tail = "".join(reversed(parts))
        self._policy.check(tail + text, self._offset + self._pending - back)

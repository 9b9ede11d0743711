"""Encode text that arrives in chunks, emitting only ids that can no longer change.

``push`` appends a chunk and returns every id that became final with it: the ids of
the text before the stream's last cut (``stability``: an offset no appended text can
move ids across). There is no batch threshold: whatever the chunk size, a push whose
chunk moves the cut returns the ids before it. ``finish`` encodes what is left. The
concatenated output equals ``tok.encode(full_text)`` with the same options under
every chunking.

Two ways to find the cut:

- *Safe spaces* (``StableEncoder.safe_spaces``: a named regex pattern, no normalizer,
  no prefix space, no added token matched: tiktoken's encodings, Llama 3, GPT-2
  ``tokenizer.json``). A space that follows a non-space character is always a cut
  (``pre_tokenizers.patterns``), so the cut is the last such space in the new chunk,
  found with ``rfind``; for cl100k, o200k and Llama 3 also the place after the last
  newline before a character that is neither whitespace nor ``/``
  (``StableEncoder.line_cuts``), and, when a chunk ends a line, the place before the
  line's closing ASCII punctuation after a letter or digit (``.`` in ``"COUNTESS.\\n"``).
  The text between two cuts is encoded part by part from the pipeline's part cache
  (``StableEncoder.encode_segment``), no regex for text seen before. This is a little
  less than the full rule proves: the last word and the punctuation after it stay
  pending (``bench/stream.py`` prints the pending ids).
- Otherwise, and when a chunk holds no such place: the full stability rule
  (``Tokenizer.stable_encoder``, the one cut-and-encode call the prefix-cache
  planner's ``encode_stable`` shares) on the pending text.

Cost: a push on the safe-space path is an ``rfind`` or two, a ``split(" ")`` and one
C-level ``map`` over the part cache (~4 us per 16-character chunk of prose, ~7x a
one-shot encode of the same text: ``bench/stream.py``); a full
scan costs O(pending text) plus the encoding of the text before the cut, ~10 us of
fixed work on top. A full scan runs at every push while the pending text is short
(``_EAGER`` characters; on the safe-space path only once ``_SPACED_SCAN`` characters
hold no safe space), then only once it has doubled since the last scan, so a run with
no cut (a million ``'a'``, a line of Japanese under a SentencePiece model) costs O(n)
in total, not O(n^2).
"""

from __future__ import annotations

import re
from itertools import chain

from ..specials import SpecialSet
from ..stability import WHITESPACE
from ..tokenizer import Tokenizer, check_text

#: Pending text up to this long is scanned for a cut at every push; longer pending
#: text only when it has doubled since the last scan (linear total cost).
_EAGER = 512
#: On the safe-space path, pending text with no safe space is scanned in full once it
#: is this long (then at each doubling).
_SPACED_SCAN = 64
#: ASCII punctuation that may close a line after a letter or digit at a cut: every
#: printable ASCII character but letters and digits (an apostrophe there is followed
#: by punctuation or the newline, so it starts no contraction).
_CLOSING = "".join(c for c in map(chr, range(0x21, 0x7F)) if not c.isalnum())
#: The same without the apostrophe, for punctuation that ends a chunk.
_TRAILING = _CLOSING.replace("'", "")


class StreamEncoder:
    """Incremental ``encode``: ``push(text)`` returns every id that became final
    (that no later text can change), ``finish()`` the rest.

    ``allowed_special`` / ``disallowed_special`` are ``encode``'s. A disallowed
    special token's literal raises ``SpecialTokenError`` from the ``push`` that
    completes it (its ``offset`` counts from the start of the stream), also when the
    literal is split across chunks; the rejected chunk is not kept, so the stream
    stays usable.

    ``batch`` is deprecated and has no effect (it must still be at least 1): it used to
    hold ids back until that many characters were pending. Every push now returns
    every final id.

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
        "_back",
        "_chunks",
        "_continued",
        "_enders",
        "_finished",
        "_get",
        "_lines",
        "_longest",
        "_offset",
        "_pending",
        "_policy",
        "_scanned",
        "_segment",
        "_segment_ids",
        "_stable",
        "_word",
    )

    def __init__(
        self,
        tok: Tokenizer,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
        batch: int = 64,
    ) -> None:
        self._stable = stable = tok.stable_encoder(
            allowed_special=allowed_special, disallowed_special=disallowed_special
        )
        self._policy = stable.policy
        disallowed = self._policy.disallowed
        self._longest = max(map(len, disallowed), default=0)
        # A literal can only complete in a chunk holding its last character.
        enders = sorted({lit[-1] for lit in disallowed if lit})
        self._enders = re.compile("[" + "".join(map(re.escape, enders)) + "]") if enders else None
        if batch < 1:
            raise ValueError(f"batch must be at least 1, got {batch}")
        self._segment = stable.encode_segment if stable.safe_spaces else None
        self._get = stable.part_ids
        self._segment_ids = stable.segment_ids
        self._lines = stable.line_cuts
        # The pending text is " " + _word when _word is not None (right after a cut
        # at a safe space: the hot path), else the concatenation of _chunks.
        self._word: str | None = None
        self._chunks: list[str] = []
        self._pending = 0  # characters in _chunks
        self._offset = 0  # characters of the stream before the pending text
        self._continued = False  # the pending text continues a section (no start rules)
        self._scanned = 0  # pending length at the last full scan
        self._finished = False
        self._back = ""  # the last (longest literal - 1) characters emitted (_keep)

    @property
    def pending_text(self) -> str:
        """The text pushed whose ids are not final yet."""
        word = self._word
        return "".join(self._chunks) if word is None else " " + word

    def push(self, text: str) -> list[int]:
        """Append ``text``; return every id that became final (possibly none)."""
        if type(text) is not str:
            check_text(text)
        if self._finished:
            raise ValueError("push() after finish(): start a new StreamEncoder")
        if self._enders is not None and self._enders.search(text) is not None:
            self._check(text)
        word = self._word
        if word is not None:
            # The hot path: the last space of the chunk follows a non-space, no line
            # or punctuation cut may lie after it, and every part was seen (one
            # C-level map).
            j = text.rfind(" ")
            if j > 0 and text[j - 1] not in WHITESPACE and text.find("\n", j) < 0 and text[-1] not in _TRAILING:
                head = word + text[:j]
                self._word = text[j + 1 :]
                self._offset += len(head) + 1
                if self._enders is not None:
                    self._keep(" " + head)
                try:
                    if self._segment_ids is not None:  # the compiled encoder: one call
                        return self._segment_ids(" " + head)
                    return list(chain.from_iterable(map(self._get, head.split(" "))))  # type: ignore[arg-type]
                except Exception:  # a part not seen, unclean, or with surrogates (a long
                    # part is computed in the cache): encode_segment's slow way
                    return self._segment(" " + head)  # type: ignore[misc]
        return self._push(text) if text else []

    def finish(self) -> list[int]:
        """The ids of the pending text; the stream is then closed (a second call
        returns ``[]``)."""
        if self._finished:
            return []
        self._finished = True
        text = self.pending_text
        self._word = None
        self._chunks = []
        self._pending = 0
        return self._stable.encode_rest(text, continued=self._continued) if text else []

    def _push(self, text: str) -> list[int]:
        """``push`` off the hot path: find a cut in ``text`` or scan in full."""
        if self._word is not None:  # back to chunks
            self._chunks = [" " + self._word]
            self._pending = len(self._word) + 1
            self._word = None
        # GPT-2's pattern has no line cut: a chunk with a newline gets the full rule.
        if self._segment is not None and (self._lines or "\n" not in text):
            j = self._cut_in(text)
            if j >= 0:
                return self._cut(text, j)
            self._chunks.append(text)
            n = self._pending = self._pending + len(text)
            # No cut in the chunk. With line cuts, a full scan only once the pending
            # text is long (a line with no space, a run with no cut), then at each
            # doubling; without (GPT-2), the full rule as below.
            if n < 2 * self._scanned and (self._lines or n > _EAGER):
                return []
            if self._lines and n < _SPACED_SCAN:
                return []
            return self._emit()
        self._chunks.append(text)
        n = self._pending = self._pending + len(text)
        if n > _EAGER and n < 2 * self._scanned:
            return []
        return self._emit()

    def _cut_in(self, text: str) -> int:
        """The last cut that the safe-space rules find in ``text`` (module notes), -1
        when there is none; 0 is a cut when the pending text ends in a non-space and
        ``text`` starts with a space."""
        j = text.rfind(" ")
        while j > 0 and text[j - 1] in WHITESPACE:
            j = text.rfind(" ", 0, j)
        if j == 0 and not (self._chunks and self._chunks[-1] and self._chunks[-1][-1] not in WHITESPACE):
            j = -1
        nl = text.rfind("\n")
        if nl >= 0:
            # Before the line's closing punctuation (maybe none) after a letter or
            # digit: ``"COUNTESS" | ".\n"``, ``"be" | "\n      wasting"``.
            word = text[:nl].rstrip("\r\n").rstrip(_CLOSING)
            if word and j < len(word) and word[-1].isascii() and word[-1].isalnum():
                j = len(word)
            # After the newline, when a non-space character ends the whitespace after
            # it (no "\r" in it: no newline piece can go on past the newline), and is
            # not "/" right after it (o200k's punctuation takes "\n/").
            if self._lines and j <= nl:
                rest = text[nl + 1 :]
                run = len(rest) - len(rest.lstrip(WHITESPACE))
                if run < len(rest) and (rest[0] != "/" if run == 0 else "\r" not in rest[:run]):
                    j = nl + 1
        if text[-1] in _TRAILING:
            # Before punctuation that ends the chunk after a letter or digit (no
            # apostrophe: it may start a contraction): ``"By-the-bye" | ","``.
            word = text.rstrip(_TRAILING)
            if word and j < len(word) and word[-1].isascii() and word[-1].isalnum():
                j = len(word)
        return j

    def _cut(self, text: str, j: int) -> list[int]:
        """Emit the pending text and ``text[:j]``, ``j`` a cut (``_cut_in``)."""
        chunks = self._chunks
        if len(chunks) == 1:
            head = chunks[0] + text[:j]
        elif chunks:
            chunks.append(text[:j])
            head = "".join(chunks)
        else:
            head = text[:j]
        if text[j] == " ":  # a safe space: the hot path's state
            self._word = text[j + 1 :]
            self._chunks = []
        else:
            self._chunks = [text[j:]]
            self._pending = len(text) - j
        self._offset += len(head)
        if self._enders is not None:
            self._keep(head)
        self._scanned = 0
        self._continued = True
        return self._segment(head) if head else []  # type: ignore[misc]  # set on this path

    def _emit(self) -> list[int]:
        """A full scan of the pending text (``_chunks``) with the stability rule."""
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
        if self._enders is not None:
            self._keep(text[:cut])
        self._continued = found.continued
        self._scanned = len(rest)
        return found.ids

    def _keep(self, emitted: str) -> None:
        """Remember the end of the text emitted: a disallowed literal may have begun
        there (a line or punctuation cut may fall inside ``"<|endoftext|>"``)."""
        self._back = (self._back + emitted)[1 - self._longest :] if self._longest > 1 else ""

    def _check(self, text: str) -> None:
        """Raise where ``encode`` would: a disallowed literal ending in ``text``,
        possibly begun in the pending text or in the text emitted before it."""
        word = self._word
        chunks = [self._back, *self._chunks] if word is None else [self._back, " " + word]
        pending = (self._pending if word is None else len(word) + 1) + len(self._back)
        back = min(pending, self._longest - 1)
        parts: list[str] = []
        need = back
        for chunk in reversed(chunks):  # only the last few chunks: O(literal)
            if need <= 0:
                break
            parts.append(chunk[-need:])
            need -= len(chunk)
        tail = "".join(reversed(parts))
        self._policy.check(tail + text, self._offset + pending - len(self._back) - back)

"""Streaming decode: ids arrive one (or a few) at a time, final text comes out at once.

``StreamDecoder`` returns, after each id, exactly the text that no later id can change,
so the pieces it returns join to ``tok.decode(ids)`` (``skip_special_tokens`` as there).
It never decodes single tokens to strings: text comes from token bytes through one
incremental UTF-8 decoder, or, for decoders that are not byte-local, from a small
per-tokenizer rule that knows what a token boundary does.

Decoder kinds and what each holds back
--------------------------------------
Chosen once per tokenizer from its decoder (``_plan_for``):

- **bytes** (rank files; ``tokenizer.json`` whose decoder is ``ByteLevel``): text is the
  UTF-8 decoding of the joined token bytes with U+FFFD for invalid bytes, so a per-id
  bytes table and ``codecs``' incremental decoder are exact. Held back: an unfinished
  UTF-8 sequence, at most 3 bytes. Invalid bytes come out as U+FFFD as soon as
  CPython's decoder knows them to be invalid (it waits for the third byte of ``ED A0``
  .. ``ED BF``, a UTF-16 surrogate; we keep its timing, so the output after every id is
  ``codecs.getincrementaldecoder("utf-8")("replace").decode(decode_bytes(ids), final=False)``).
- **pieces** (``tokenizer.json`` decoders built from ``Replace``, ``Strip``,
  ``Metaspace``, ``WordPiece``, ``BPEDecoder``, then optionally ``ByteFallback`` and
  token-wise stages after it, then ``Fuse`` and ``Strip`` of the fused text; or no
  decoder, which joins with spaces). The
  token-wise stages map each token string on its own, knowing only whether it is the
  first (``Metaspace`` drops its ``▁``, ``WordPiece`` adds no space and keeps ``##``) or
  the last token (``BPEDecoder``'s suffix). A token's text is therefore computed once
  per id and position by running those stages on a two- or three-token list, and
  cached. ``WordPiece``'s cleanup (``" ."`` -> ``"."``, ``" n't"``) is applied per token
  by ``tokenizers`` too, so it never waits for the next token. Held back:
  nothing, except a byte-fallback run (``<0xE5><0x90><0xBE>``), held whole while it is
  valid UTF-8 so far, because ``tokenizers`` turns the *whole* run into one U+FFFD per
  byte if any part is invalid (once it is invalid, each byte is emitted at once;
  ``ED A0``..``ED BF``, a surrogate's start, is invalid at its second byte; a run's
  leading U+FFFD characters, spelled ``EF BF BD``, are final either way). So a complete
  character inside a run comes out when the run ends, one token later than
  ``tokenizers``' ``DecodeStream`` shows it: a later ``<0xFF>`` in the same run would
  turn it into U+FFFD in ``tok.decode``, and the stream's output must join to that;
  trailing spaces a fused ``Strip(stop=k)`` may remove (at most k); the last token
  when a ``BPEDecoder`` suffix depends on whether another token follows. A fused
  ``Strip(start=k)`` drops up to k spaces at the very start and then passes everything.
  Token-wise stages after ``ByteFallback`` (``[ByteFallback, Metaspace]``) see a valid
  run as one token and an invalid run as one U+FFFD token per byte, so they run on a
  run's text when it ends (not ``BPEDecoder``, whose suffix needs the last token: hold).
- **sentencepiece** (``.model`` files): ``SentencePieceDecoder``'s state machine run one
  piece at a time (dummy-prefix ``▁`` removal, control pieces, the unknown surface);
  byte pieces are decoded incrementally with one U+FFFD per invalid byte, as
  sentencepiece does. Held back: an unfinished UTF-8 sequence of byte pieces.
- **hold** (any other decoder: a stage after ``Fuse`` other than ``Strip``,
  ``BPEDecoder`` after ``ByteFallback``, ``ByteLevel`` mixed with other stages, a
  custom class): nothing is known to be final before the end, so ``finish`` decodes
  everything at once. Exact, but nothing streams: O(n) memory for the ids and one
  ``tok.decode`` at the end. With a prompt, ``P`` (below) is the longest common prefix of
  ``tok.decode(prefix_ids)`` and the full decode.

Prompts (``prefix_ids``)
------------------------
The stream starts after a prompt. Its ids prime the state (the UTF-8 decoder, the
first-token rules, an open byte run) and the text they finalize is discarded. Exactly:
let ``P`` be the text a fresh ``StreamDecoder`` would emit for ``prefix_ids`` before
``finish``; then the concatenated output is ``tok.decode(prefix_ids + ids)[len(P):]``
(that string starts with ``P``). If the prompt ends inside a UTF-8 character, ``P`` does
not show that character, so its whole text comes out with the first generated id
that completes it. Stop strings are matched in the generated text only.

Cost (per id)
-------------
Measured on Alice in Wonderland, step by step, on the shared 2-core machine:

- bytes, no stops: one list index, one call of the C incremental decoder, one list
  append: 0.34 us per id (o200k_base); ``push`` joins the bytes and decodes once.
  The per-id bytes table is built once per tokenizer, O(V) (0.03 s for o200k_base,
  0.07 s for Llama 3), and kept for the tokenizer's lifetime.
- pieces / sentencepiece: an id check (a dict lookup), the token's cached text (the
  token-wise stages run once per distinct id and position) and a few branches:
  0.43 us (BERT) to 0.6 us (Mistral tokenizer.json) per id.
- stops: ``StopMatcher.feed`` on the new text (``stops`` module notes): one set scan
  per id while nothing is held, one dict step per character otherwise. Two stops
  (``"\\n\\nTHE END"``, ``"<|im_end|>"``): 0.61 us per id for o200k_base (1.8x), 1.3x for
  the other kinds. No stops: no matcher call at all.
- ``fork``: O(1) plus copying the held bytes (at most a byte run) and collapsing
  ``text`` into one string (amortized O(1) per character).
"""

from __future__ import annotations

import codecs
import re
import weakref
from collections.abc import Iterable, Sequence
from typing import Final, Literal

from ..decoders import Decoder, SentencePieceDecoder, StreamKind, Strip, byte_local
from ..errors import InvalidTokenIdError, TokstreamError
from ..tokenizer import Tokenizer
from .stops import StopMatcher

__all__ = ["StreamDecoder"]

_FFFD: Final = "\ufffd"
_SPACE: Final = "\u2581"
#: ByteFallback's test for a byte token (``decoders.ByteFallback``: 6 characters, hex).
_BYTE_TOKEN: Final = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def _fffd_per_byte(err: UnicodeError) -> tuple[str, int]:
    # sentencepiece reads byte pieces one character at a time and gives each invalid
    # byte its own U+FFFD; CPython's "replace" gives one per maximal invalid part. A
    # maximal invalid part is a lead byte plus continuation bytes, none of which can
    # start a character, so one U+FFFD per byte of it is exactly sentencepiece's rule
    # (checked against decoders._decode_bytes on every sequence of up to 4 bytes
    # drawn from the UTF-8 boundary values; the tests decode random byte runs).
    if not isinstance(err, UnicodeDecodeError):
        raise err
    return _FFFD * (err.end - err.start), err.end


codecs.register_error("tokstream.fffd_per_byte", _fffd_per_byte)
_Utf8: Final = codecs.getincrementaldecoder("utf-8")


def _copy_utf8(dec: codecs.BufferedIncrementalDecoder) -> codecs.BufferedIncrementalDecoder:
    other = _Utf8(dec.errors)
    other.setstate(dec.getstate())
    return other


# ---------------------------------------------------------------------- plans


class _BytesPlan:
    """Byte-local decode: a per-id bytes table (specials b"" when skipped)."""

    def __init__(self, table: list[bytes | None]) -> None:
        self.table = table
        self.known: frozenset[int] = frozenset()  # step() checks ids against the table

    def new_core(self, tok: Tokenizer) -> _Core:
        return _BytesCore(self.table)


#: A token's contribution in a pieces plan: text, or one byte of a byte-fallback run.
_Unit = str | int


class _PiecesPlan:
    """Token-wise stages, optional ByteFallback, optional fused ``Strip``s.

    ``stages`` None means "no decoder" (``tokenizers`` joins tokens with a space).
    """

    def __init__(
        self,
        spellings: Sequence[str | None],
        stages: list[Decoder] | None,
        *,
        byte_fallback: bool,
        fused_strips: list[Strip],
        skip: frozenset[int],
        after_bytes: Sequence[Decoder] = (),
    ) -> None:
        self.spellings = spellings
        self.known = _known(spellings)
        self.stages = stages
        self.byte_fallback = byte_fallback
        self.fused_strips = fused_strips
        #: Token-wise stages after ByteFallback (before any Fuse): they see a valid run as
        #: one token and an invalid run as one U+FFFD token per byte.
        self.after_bytes = list(after_bytes)
        self.skip = skip
        self.last_sensitive = stages is not None and any(s.depends_on_last for s in stages)
        # unit cache per position: [first][last]
        self._units: list[list[dict[int, _Unit]]] = [[{}, {}], [{}, {}]]

    def new_core(self, tok: Tokenizer) -> _Core:
        return _PiecesCore(self)

    def unit(self, tid: int, first: bool, last: bool) -> _Unit:
        cache = self._units[first][last]
        u = cache.get(tid)
        if u is None:
            u = cache[tid] = self._compute(tid, first, last)
        return u

    def _compute(self, tid: int, first: bool, last: bool) -> _Unit:
        token = self.spellings[tid] or ""
        if self.stages is None:
            text = token if first else " " + token
        else:
            # The stages are token-wise: a token's output depends on its own string and
            # on being first / last only, so any neighbour ("x") gives the same result.
            tokens = ([] if first else ["x"]) + [token]
            if self.last_sensitive and not last:
                tokens.append("x")
            for stage in self.stages:
                tokens = stage.decode_chain(tokens)
            text = tokens[0 if first else 1]
        if self.byte_fallback and len(text) == 6:
            m = _BYTE_TOKEN.fullmatch(text)
            if m is not None:
                return int(m.group(1), 16)
        # A token that is not a byte is ByteFallback's first output exactly when it is
        # the first token (a run before it gives at least one output).
        return self.after_run(text, first) if self.after_bytes else text

    def after_run(self, text: str, first: bool) -> str:
        """``text`` as one of ByteFallback's outputs through the stages after it."""
        tokens = ([] if first else ["x"]) + [text]
        for stage in self.after_bytes:
            tokens = stage.decode_chain(tokens)
        return tokens[-1]


class _SentencePiecePlan:
    """``decoders.SentencePieceDecoder``'s rules, one piece at a time."""

    def __init__(self, spellings: Sequence[str | None], decoder: SentencePieceDecoder, skip: frozenset[int]) -> None:
        self.spellings = spellings
        self.known = _known(spellings)
        self.control: frozenset[str] = frozenset(decoder.control)
        self.unk: str = decoder.unk
        self.unk_surface: str = decoder.unk_surface
        self.byte_value: dict[str, bytes] = {t: bytes((int(t[3:5], 16),)) for t in decoder.byte_pieces}
        self.strip: bool = bool(decoder.add_dummy_prefix or decoder.remove_extra_whitespaces)
        self.remove_extra_whitespaces: bool = bool(decoder.remove_extra_whitespaces)
        self.skip = skip

    def new_core(self, tok: Tokenizer) -> _Core:
        return _SentencePieceCore(self)


def _known(spellings: Sequence[str | None]) -> frozenset[int]:
    """The ids with a spelling: what a core may be fed (others raise before)."""
    return frozenset(i for i, s in enumerate(spellings) if s is not None)


class _HoldPlan:
    """An unknown decoder: decode everything at ``finish``."""

    def __init__(self, skip_special_tokens: bool) -> None:
        self.skip_special_tokens = skip_special_tokens

    def new_core(self, tok: Tokenizer) -> _Core:
        return _HoldCore(tok, self.skip_special_tokens)


_Plan = _BytesPlan | _PiecesPlan | _SentencePiecePlan | _HoldPlan
_PLANS: weakref.WeakKeyDictionary[Tokenizer, dict[bool, _Plan]] = weakref.WeakKeyDictionary()


def _plan_for(tok: Tokenizer, skip_special_tokens: bool) -> _Plan:
    """The decode plan of ``tok`` (built once per tokenizer and skip flag)."""
    plans = _PLANS.setdefault(tok, {})
    plan = plans.get(skip_special_tokens)
    if plan is None:
        plan = plans[skip_special_tokens] = _build_plan(tok, skip_special_tokens)
    return plan


def _build_plan(tok: Tokenizer, skip_special_tokens: bool) -> _Plan:
    """The plan the decoder's stages declare they allow (``decoders.StreamKind``)."""
    skip = frozenset(tok.vocab.special_ids) if skip_special_tokens else frozenset()
    decoder = tok.decoder
    if byte_local(decoder):
        # A lone ByteLevel decoder (rank files): decode is the joined token bytes, which
        # the vocabulary's own table already holds (None marks a hole).
        return _BytesPlan([b"" if i in skip and data is not None else data for i, data in enumerate(tok.vocab.table)])
    spellings = tok.vocab.spellings
    if decoder is None:
        return _PiecesPlan(spellings, None, byte_fallback=False, fused_strips=[], skip=skip)
    stages = decoder.stages()
    if len(stages) == 1 and isinstance(stages[0], SentencePieceDecoder):
        return _SentencePiecePlan(spellings, stages[0], skip)
    shape = _pieces_shape(stages)
    if shape is not None:
        token_wise, byte_fallback, after_bytes, fused_strips = shape
        return _PiecesPlan(
            spellings,
            token_wise,
            byte_fallback=byte_fallback,
            fused_strips=fused_strips,
            skip=skip,
            after_bytes=after_bytes,
        )
    return _HoldPlan(skip_special_tokens)


def _pieces_shape(stages: list[Decoder]) -> tuple[list[Decoder], bool, list[Decoder], list[Strip]] | None:
    """``(token_wise, byte_fallback, after_bytes, fused_strips)`` when ``stages`` are
    token-wise stages, then optionally ``ByteFallback`` and token-wise stages that do not
    depend on the last token, then optionally ``Fuse`` and ``Strip``s of the fused text;
    None for any other shape."""
    i, n = 0, len(stages)
    token_wise = (StreamKind.TOKEN_WISE, StreamKind.STRIP)
    while i < n and stages[i].stream_kind in token_wise:
        i += 1
    before = stages[:i]
    byte_fallback = i < n and stages[i].stream_kind is StreamKind.BYTE_FALLBACK
    i += byte_fallback
    after: list[Decoder] = []
    while byte_fallback and i < n and stages[i].stream_kind in token_wise and not stages[i].depends_on_last:
        after.append(stages[i])
        i += 1
    fused = False
    while i < n and stages[i].stream_kind is StreamKind.FUSE:
        fused, i = True, i + 1
    strips: list[Strip] = []
    while fused and i < n:
        stage = stages[i]
        if not isinstance(stage, Strip):
            break
        strips.append(stage)
        i += 1
    return (before, byte_fallback, after, strips) if i == n else None


# ---------------------------------------------------------------------- cores
# A core turns valid ids into final text; it owns all decoding state, so ``fork`` is a
# core copy. ``feed`` takes an id already validated by StreamDecoder.


class _Core:
    __slots__ = ()

    def feed(self, tid: int) -> str:
        raise NotImplementedError

    def finish(self) -> str:
        raise NotImplementedError

    def copy(self) -> _Core:
        raise NotImplementedError

    def prime(self, ids: Sequence[int]) -> None:
        for tid in ids:
            self.feed(tid)


class _BytesCore(_Core):
    __slots__ = ("table", "utf8")

    def __init__(self, table: list[bytes | None]) -> None:
        self.table = table
        self.utf8 = _Utf8("replace")

    def feed(self, tid: int) -> str:
        return self.utf8.decode(self.table[tid] or b"")  # never None: tid was checked

    def finish(self) -> str:
        return self.utf8.decode(b"", final=True)

    def copy(self) -> _Core:
        other = _BytesCore.__new__(_BytesCore)
        other.table, other.utf8 = self.table, _copy_utf8(self.utf8)
        return other


class _StripFused:
    """``decoders.Strip`` applied to the fused text, streamed: up to ``start`` leading
    ``content`` characters of the whole text are dropped, the last ``stop`` are held
    until more text shows they are not trailing (and dropped at the end)."""

    __slots__ = ("content", "lead", "stop", "tail")

    def __init__(self, strip: Strip) -> None:
        self.content: str = strip.content
        self.lead: int = strip.start
        self.stop: int = strip.stop
        self.tail = ""

    def feed(self, text: str) -> str:
        if self.lead and text:
            i = 0
            while i < len(text) and i < self.lead and text[i] == self.content:
                i += 1
            self.lead = 0 if i < len(text) else self.lead - i
            text = text[i:]
        if self.stop:
            text = self.tail + text
            j = len(text)
            while j and len(text) - j < self.stop and text[j - 1] == self.content:
                j -= 1
            self.tail, text = text[j:], text[:j]
        return text

    def flush(self) -> str:
        self.tail = ""  # the trailing characters Strip removes
        return ""

    def copy(self) -> _StripFused:
        other = _StripFused.__new__(_StripFused)
        other.content, other.lead, other.stop, other.tail = self.content, self.lead, self.stop, self.tail
        return other


class _PiecesCore(_Core):
    __slots__ = (
        "count",
        "held",
        "plan",
        "run_bad",
        "run_ed",
        "run_first",
        "run_len",
        "run_shown",
        "run_text",
        "run_utf8",
        "strips",
    )

    def __init__(self, plan: _PiecesPlan) -> None:
        self.plan = plan
        self.count = 0  # tokens seen (after skipping): the first one decodes differently
        self.held: int | None = None  # the last id, while its "last" form is undecided
        # The open byte-fallback run: its length, whether it is known invalid, and its
        # text so far (strict decoder: any error makes the whole run U+FFFD per byte).
        self.run_len = 0
        self.run_bad = False
        self.run_text: list[str] = []
        self.run_utf8 = _Utf8("strict")
        # The run's leading U+FFFDs already emitted (not with stages after ByteFallback:
        # they see a valid run as one token, an invalid one per byte).
        self.run_shown = 0
        self.run_ed = False  # the last byte was an ED lead byte
        self.run_first = False  # the run is ByteFallback's first output
        self.strips = [_StripFused(s) for s in plan.fused_strips]

    def feed(self, tid: int) -> str:
        if tid in self.plan.skip:
            return ""
        if self.plan.last_sensitive:
            # Decide the previous token's text now that it is known not to be last.
            prev, self.held = self.held, tid
            return "" if prev is None else self._fused(self._token(prev, last=False))
        return self._fused(self._token(tid, last=False))

    def finish(self) -> str:
        text = ""
        if self.held is not None:
            text = self._token(self.held, last=True)
            self.held = None
        text += self._close_run()
        for s in self.strips:
            text = s.feed(text) + s.flush()
        return text

    def _token(self, tid: int, last: bool) -> str:
        first = self.count == 0
        unit = self.plan.unit(tid, first, last)
        self.count += 1
        if isinstance(unit, str):
            return self._close_run() + unit if self.run_len else unit
        if not self.run_len:
            self.run_first = first
        self.run_len += 1
        if self.run_bad:
            return self._invalid(self.run_len - 1, 1)
        try:
            text = self.run_utf8.decode(bytes((unit,)))
        except UnicodeDecodeError:
            text = None
        if not text:
            if text is not None:
                if not self.run_ed:
                    if unit == 0xED:
                        self.run_ed = True
                    return ""
                self.run_ed = False
                if not 0xA0 <= unit <= 0xBF:
                    return ""
                # ED A0..ED BF starts a UTF-16 surrogate: invalid whatever follows, so
                # the run's U+FFFDs are final now (CPython's decoder says so a byte later).
            self.run_bad = True
            return self._invalid(self.run_shown, self.run_len - self.run_shown)  # the rest was held
        self.run_text.append(text)  # (run_ed is False: ED's next byte gives no text)
        if text[0] != _FFFD:
            return ""
        # U+FFFD itself (EF BF BD). If the run's text so far is U+FFFD only, valid or
        # not the run's text starts with those, so they are final.
        shown = self.run_shown
        if self.plan.after_bytes or len(self.run_text) - 1 != shown:  # one character per piece
            return ""
        self.run_shown = shown + 1
        return _FFFD

    def _close_run(self) -> str:
        if not self.run_len:
            return ""
        n, bad, shown = self.run_len, self.run_bad, self.run_shown
        text = "".join(self.run_text)
        if shown:
            text = text[shown:]
        try:
            if not bad:
                text += self.run_utf8.decode(b"", final=True)
                after = self.plan.after_bytes
                return self.plan.after_run(text, self.run_first) if after else text
        except UnicodeDecodeError:
            return self._invalid(shown, n - shown)  # ends inside a character: all invalid
        finally:
            self.run_utf8.reset()
            self.run_len, self.run_bad, self.run_text = 0, False, []
            self.run_shown, self.run_ed = 0, False
        return ""  # already emitted, one U+FFFD per byte

    def _invalid(self, start: int, count: int) -> str:
        """The U+FFFD tokens ``start`` .. ``start + count - 1`` of an invalid run."""
        if not self.plan.after_bytes:
            return _FFFD * count
        after_run, first = self.plan.after_run, self.run_first
        return "".join(after_run(_FFFD, first and k == 0) for k in range(start, start + count))

    def _fused(self, text: str) -> str:
        for s in self.strips:
            text = s.feed(text)
        return text

    def copy(self) -> _Core:
        other = _PiecesCore.__new__(_PiecesCore)
        other.plan, other.count, other.held = self.plan, self.count, self.held
        other.run_len, other.run_bad, other.run_text = self.run_len, self.run_bad, list(self.run_text)
        other.run_utf8 = _copy_utf8(self.run_utf8)
        other.run_shown, other.run_ed = self.run_shown, self.run_ed
        other.run_first = self.run_first
        other.strips = [s.copy() for s in self.strips]
        return other


class _SentencePieceCore(_Core):
    """``SentencePieceDecoder.decode_chain`` unrolled into a per-piece step."""

    __slots__ = ("bos_ws", "consumed", "empty", "plan", "run_open", "utf8")

    def __init__(self, plan: _SentencePiecePlan) -> None:
        self.plan = plan
        self.utf8 = _Utf8("tokstream.fffd_per_byte")
        self.run_open = False
        self.bos_ws = True  # may the next piece lose its leading "▁"?
        self.consumed = False  # did the last piece lose one?
        self.empty = True  # nothing output yet

    def feed(self, tid: int) -> str:
        p = self.plan
        if tid in p.skip:
            return ""
        t = p.spellings[tid] or ""
        byte = p.byte_value.get(t)
        if byte is not None:
            self.run_open = True
            return self.utf8.decode(byte)
        out = ""
        if self.run_open:
            out = self.utf8.decode(b"", final=True)
            self.utf8.reset()
            self.run_open, self.empty = False, False
        if self.consumed or not self.empty:
            self.bos_ws = False
        self.consumed = False
        if t in p.control:
            return out
        if t == p.unk:
            piece = p.unk_surface
        else:
            if self.bos_ws and p.strip and t.startswith(_SPACE):
                t = t[1:]
                self.consumed = not p.remove_extra_whitespaces
            piece = t.replace(_SPACE, " ")
        if piece:
            self.empty = False
        return out + piece

    def finish(self) -> str:
        out = self.utf8.decode(b"", final=True) if self.run_open else ""
        self.utf8.reset()
        self.run_open = False
        return out

    def copy(self) -> _Core:
        other = _SentencePieceCore.__new__(_SentencePieceCore)
        other.plan, other.utf8, other.run_open = self.plan, _copy_utf8(self.utf8), self.run_open
        other.bos_ws, other.consumed, other.empty = self.bos_ws, self.consumed, self.empty
        return other


class _HoldCore(_Core):
    __slots__ = ("ids", "n_prefix", "skip_special_tokens", "tok")

    def __init__(self, tok: Tokenizer, skip_special_tokens: bool) -> None:
        self.tok, self.skip_special_tokens = tok, skip_special_tokens
        self.ids: list[int] = []
        self.n_prefix = 0

    def prime(self, ids: Sequence[int]) -> None:
        self.ids += ids
        self.n_prefix = len(self.ids)

    def feed(self, tid: int) -> str:
        self.ids.append(tid)
        return ""

    def finish(self) -> str:
        text = self.tok.decode(self.ids, skip_special_tokens=self.skip_special_tokens)
        if not self.n_prefix:
            return text
        # Nothing of the prompt was known to be final, so P is its decode, as far as
        # the full decode agrees with it.
        prompt = self.tok.decode(self.ids[: self.n_prefix], skip_special_tokens=self.skip_special_tokens)
        k = 0
        while k < min(len(text), len(prompt)) and text[k] == prompt[k]:
            k += 1
        return text[k:]

    def copy(self) -> _Core:
        other = _HoldCore(self.tok, self.skip_special_tokens)
        other.ids, other.n_prefix = list(self.ids), self.n_prefix
        return other


# ---------------------------------------------------------------------- public


#: Why a ``StreamDecoder`` ended (OpenAI's and vLLM's ``finish_reason``, with the end of
#: the ids, "eos", told apart from a stop).
FinishReason = Literal["stop", "eos", "length"]


def _stop_id(tok: Tokenizer, tid: object) -> int:
    """A ``stop_token_ids`` entry as an int (numpy ints too), checked against ``tok``."""
    value: int | None = tid.__index__() if hasattr(tid, "__index__") and not isinstance(tid, bool) else None
    if value is None or not 0 <= value < tok.n_vocab:
        raise InvalidTokenIdError(tid, tok.name, tok.n_vocab)
    return value


class StreamDecoder:
    """Decode ids as they arrive; each call returns only text that is now final.

    ``step(id)`` and ``push(ids)`` return the new final text (``""`` when there is none),
    ``finish()`` the rest: an unfinished UTF-8 sequence at the end becomes U+FFFD,
    as in ``tok.decode``. All returned pieces join to ``tok.decode(ids)`` (with the same
    ``skip_special_tokens``), up to a stop string. ``push(ids)`` equals the steps joined
    (use it for the several ids a speculative step accepts).

    A complete character comes out with the id that completes it; invalid bytes come
    out as U+FFFD as soon as they are known invalid. What each kind of decoder holds
    back (an unfinished UTF-8 tail, a byte-fallback run, trailing spaces a ``Strip``
    may remove) is listed in the module notes.

    ``stop`` (a string or strings): the stream ends at the stop string that completes
    first in the generated text (ties: the one listed first); the text before it is
    returned, plus the stop itself with ``include_stop=True``, and ``stopped``,
    ``stop_reason`` tell which. Later calls return ``""`` (their ids are not looked
    at). Only a suffix that may still grow into a stop is held back; with no stops,
    nothing is. Empty stop strings raise ``ValueError``.

    ``stop_token_ids``: ids that end the stream (``<|im_end|>``, or EOS when the model
    runs on), as vLLM's ``SamplingParams.stop_token_ids``: the id's own text is not
    returned, and what was held back is returned at once, as ``finish()`` would.
    ``max_tokens``: the stream ends after that many ids (those of ``prefix_ids`` do not
    count; a stop id does), the last one's text and what was held back included: the
    pieces join to ``tok.decode(ids[:max_tokens])``, cut as above.

    ``finish_reason`` says why the stream ended, as OpenAI's and vLLM's do: ``"stop"``
    (a stop string or stop id; ``stop_reason`` is the string or the id), ``"length"``
    (``max_tokens``), ``"eos"`` (``finish()`` with neither: the ids ran out, which for
    a model means it ended its sequence), ``None`` while the stream runs.

    ``prefix_ids``: a prompt the stream continues. Its text is not returned, but it
    primes the decoder; output = ``tok.decode(prefix_ids + ids)`` minus the text a
    stream would have returned for ``prefix_ids`` alone (module notes, Prompts), so a
    prompt that ends inside a character yields that whole character when it completes.

    An invalid id (negative, ``>= n_vocab``, a hole, not an int) raises
    ``InvalidTokenIdError`` (a ``ValueError``) and changes nothing; ``push`` checks
    every id before using any. After ``finish``, ``step``/``push`` raise
    ``TokstreamError`` and ``finish`` returns ``""``.

    Example, o200k_base, ``"👋"`` split over two byte tokens (ids from tiktoken):
    ``d = StreamDecoder(tok)``; ``d.step(61138)`` returns ``" "`` (the emoji's first
    three bytes are held), ``d.step(233)`` returns ``"👋"``, ``d.finish()`` ``""``.

    Cost: module notes; ``fork()`` is O(1) and gives an independent stream.
    """

    __slots__ = (
        "_core",
        "_finish_reason",
        "_finished",
        "_include_stop",
        "_known",
        "_left",
        "_parts",
        "_stop_ids",
        "_stop_token_id",
        "_stopped",
        "_stops",
        "_table",
        "_tok",
        "_utf8",
    )

    def __init__(
        self,
        tok: Tokenizer,
        *,
        skip_special_tokens: bool = False,
        stop: str | Iterable[str] = (),
        include_stop: bool = False,
        prefix_ids: Sequence[int] = (),
        stop_token_ids: Iterable[int] = (),
        max_tokens: int | None = None,
    ) -> None:
        matcher = StopMatcher(stop)
        prefix_ids = list(prefix_ids)
        for tid in prefix_ids:
            tok.token_bytes(tid)  # raises InvalidTokenIdError
        if isinstance(stop_token_ids, int):
            raise TypeError("stop_token_ids must be a collection of ids, e.g. [eos_id], not an int")
        stop_ids = frozenset(_stop_id(tok, tid) for tid in stop_token_ids)
        if max_tokens is not None and (type(max_tokens) is not int or max_tokens < 1):
            raise ValueError(f"max_tokens must be an int >= 1 or None, got {max_tokens!r}")
        self._stop_ids = stop_ids
        self._left = max_tokens
        self._finish_reason: FinishReason | None = None
        self._stop_token_id: int | None = None
        self._tok = tok
        self._core = _plan_for(tok, skip_special_tokens).new_core(tok)
        self._core.prime(prefix_ids)
        self._stops: StopMatcher | None = matcher if matcher.stops else None
        self._include_stop = include_stop
        self._parts: list[str] = []
        self._stopped = False
        self._finished = False
        self._set_fast_path()

    def _set_fast_path(self) -> None:
        # step() inlines the bytes core (``_table`` set) while the stream is live; other
        # cores check ids against ``_known`` (their id -> token map) before feeding.
        core = self._core
        # Stop ids and a length budget take the checked path (``_feed``): one set test
        # and one decrement per id, so the inlined path stays as it was without them.
        live = not (self._stopped or self._finished) and not self._stop_ids and self._left is None
        self._table = core.table if isinstance(core, _BytesCore) and live else None
        self._utf8 = core.utf8 if isinstance(core, _BytesCore) else _Utf8("replace")  # unused
        self._known = core.plan.known if isinstance(core, (_PiecesCore, _SentencePieceCore)) else frozenset()

    # ------------------------------------------------------------------ stream

    def step(self, token_id: int) -> str:
        """Add one id; return the text that became final (often ``""``)."""
        table = self._table
        if table is not None and type(token_id) is int and token_id >= 0:
            try:
                data = table[token_id]
            except IndexError:
                data = None
            if data is not None:
                text: str = self._utf8.decode(data)
                if not text:
                    return text
                stops = self._stops
                # StopMatcher.feed's own first test, inlined: nothing held and no
                # character that starts a stop is the common case, one C set scan.
                if stops is not None and (stops.state or not stops.first_chars.isdisjoint(text)):
                    return self._emit(text)
                self._parts.append(text)
                return text
        if self._stopped:
            return ""
        self._check_live()
        if type(token_id) is not int or token_id not in self._known:
            self._tok.token_bytes(token_id)  # raises InvalidTokenIdError
        return self._feed(token_id)

    def push(self, ids: Iterable[int]) -> str:
        """Add several ids (e.g. the accepted draft of a speculative step); the same
        text as calling ``step`` on each and joining, but every id is checked first."""
        if self._stopped:
            return ""
        self._check_live()
        ids = list(ids)
        table = self._table
        if table is not None and self._stops is None:
            try:
                chunks = [table[i] if type(i) is int and i >= 0 else None for i in ids]
            except IndexError:
                chunks = [None]
            if None in chunks:  # a bad id, or an id of another int type (numpy, bool)
                for i in ids:
                    self._tok.token_bytes(i)  # raises for the first bad id
                chunks = [table[int(i)] for i in ids]
            text: str = self._utf8.decode(b"".join(chunks))  # type: ignore[arg-type]
            if text:
                self._parts.append(text)
            return text
        check = self._tok.token_bytes
        for i in ids:
            check(i)
        out = []
        for i in ids:
            out.append(self._feed(i))
            if self._stopped:
                break
        return "".join(out)

    def _feed(self, tid: int) -> str:
        """One checked id through the core, with the stop ids and the length budget."""
        if tid in self._stop_ids:
            self._stop_token_id = tid
            return self._end("stop")
        text = self._emit(self._core.feed(tid))
        left = self._left
        if left is not None and not self._stopped:
            self._left = left = left - 1
            if left == 0:
                text += self._end("length")
        return text

    def _end(self, reason: FinishReason) -> str:
        """The stream ends itself (a stop id, the length budget): the rest, as finish."""
        text = self.finish()
        if self._stops is None or self._stops.matched is None:  # else a stop string ended it
            self._finish_reason = reason
        self._stopped = True
        return text

    def finish(self) -> str:
        """End of the stream: return the rest (an unfinished character as U+FFFD)."""
        if self._stopped or self._finished:
            return ""
        self._finished = True
        self._table = None
        text = self._emit(self._core.finish())
        if self._stops is not None and not self._stopped:
            rest = self._stops.flush()
            if rest:
                self._parts.append(rest)
                text += rest
        if self._finish_reason is None:
            self._finish_reason = "eos"  # _end overrides it for a stop id or the budget
        return text

    def _emit(self, text: str) -> str:
        stops = self._stops
        if stops is not None and text:
            text = stops.feed(text)
            if stops.matched is not None:
                self._stopped = True
                self._finish_reason = "stop"
                self._table = None
                if self._include_stop:
                    text += stops.matched
        if text:
            self._parts.append(text)
        return text

    def _check_live(self) -> None:
        if self._finished:
            raise TokstreamError("this StreamDecoder is finished; start a new one (or fork() before finish())")

    # ------------------------------------------------------------------ state

    @property
    def text(self) -> str:
        """All text returned so far."""
        parts = self._parts
        if len(parts) > 1:
            parts[:] = ["".join(parts)]
        return parts[0] if parts else ""

    @property
    def stopped(self) -> bool:
        """Whether the stream ended itself: a stop string, a stop id or ``max_tokens``."""
        return self._stopped

    @property
    def finish_reason(self) -> FinishReason | None:
        """Why the stream ended: ``"stop"`` (a stop string or stop id), ``"length"``
        (``max_tokens``), ``"eos"`` (a plain ``finish()``), None while it runs."""
        return self._finish_reason

    @property
    def stop_reason(self) -> str | int | None:
        """The stop string that matched or the stop id that arrived, or None."""
        if self._stop_token_id is not None:
            return self._stop_token_id
        return self._stops.matched if self._stops is not None else None

    def fork(self) -> StreamDecoder:
        """An independent stream in the same state (e.g. for each branch of a beam or
        a speculative draft); feeding one does not affect the other."""
        other = StreamDecoder.__new__(StreamDecoder)
        other._tok = self._tok
        other._core = self._core.copy()
        other._stops = self._stops.copy() if self._stops is not None else None
        other._include_stop = self._include_stop
        other._stop_ids, other._left = self._stop_ids, self._left
        other._finish_reason, other._stop_token_id = self._finish_reason, self._stop_token_id
        other._parts = [self.text] if self._parts else []
        other._stopped, other._finished = self._stopped, self._finished
        other._set_fast_path()
        return other

    def __repr__(self) -> str:
        state = "stopped" if self._stopped else "finished" if self._finished else "live"
        return f"<StreamDecoder {self._tok.name!r} {state} text={self.text[-40:]!r}>"

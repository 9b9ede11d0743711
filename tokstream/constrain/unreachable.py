r"""Unreachable tokens: the vocabulary entries that the tokenizer's own encoder never
emits, found by searching for a *witness* text whose encoding holds each token.

A token is **reachable** when some text's encoding (``tok.encode_ordinary``, specials
as plain text) contains its id. ``unreachable_tokens(tok)`` lists the non-special
tokens with text for which no witness is found among these candidates, tried in order:

- *whole-character tokens* (their bytes are valid UTF-8, text ``s``): ``s`` itself,
  then ``left + s + right`` for the short contexts ``_LEFT`` x ``_RIGHT``;
- *partial tokens* (bytes that are not valid UTF-8 on their own: byte tokens such as
  ``b"\xe4"``, ``b" \xf0\x9f\x91"``): each way of completing the cut characters at
  both ends to whole ones (up to ``_COMPLETIONS`` of them, varied), alone or after
  ``" "`` or ``"x"``. Bytes that no UTF-8 text holds (``0xC0``, ``0xC1``, ``0xF5``-
  ``0xFF``, a continuation byte after an ASCII one, ...) have no candidate at all.

Every unreachable token is listed: an id left out has a witness (``token_witness``
returns it), so it is certainly emitted for some text. A listed id is one that no
candidate produces: a proof for the shapes named below, a strong search result
elsewhere (a text of a kind the candidates do not cover could still emit it).

Why not just "``encode(decode(id)) != [id]``", the usual glitch-token test: it lists
tokens that do occur, and has no answer for partial ones.

- Some tokens only occur next to other text: o200k_base's ``" I'"`` (in ``" I'M"``),
  ``"\n//"`` (in ``"$\n//"``) and ``"亚洲AV"`` (in ``"亚洲AVs"``): the pre-tokenizer
  never cuts a piece that is exactly their text, but BPE forms them inside longer
  pieces. So do all WordPiece continuations (``"##ing"``, bytes ``b"ing"``, comes
  out of ``"xing"``) and the word-internal pieces of SentencePiece models, whose
  dummy prefix turns ``"ing"`` alone into ``"▁ing"``: a left context covers both
  without a rule per pipeline.
- Partial tokens have no text of their own, yet most of them are emitted (the last
  byte of an emoji) and some never are.

What gets listed on the fixture tokenizers (tests/constrain/test_unreachable.py):

- byte-level BPE (the tiktoken encodings, GPT-2, Llama 3): partial tokens only: the
  13 bytes that no UTF-8 text holds, plus a few pieces of characters whose bytes
  always merge otherwise (o200k_base's ``b"\xd0\xbe\xd0"``, Llama 3's ``b"\xc2"``).
  Tails that look dead are often not: GPT-2's ``b"\xbf\xbd"`` (the end of U+FFFD)
  comes out of U+0FFD, as ``b"\xe0"``, ``b"\xbf\xbd"``.
- BERT: the ``[unusedN]`` entries, ``"..."`` and the continuations of punctuation
  and CJK characters, which its pre-tokenizer (punctuation) and normalizer (spaces
  around CJK characters) always make words of their own.
- Llama 2 / Mistral (SentencePiece, byte fallback): the byte tokens of the ASCII
  characters that have a piece (``<0x41>`` for ``"A"``) and of the lead bytes that
  no character without a piece starts with.

The proofs behind those: a byte-level tokenizer emits bytes of the text's UTF-8, so
a token whose bytes no UTF-8 text holds never occurs; a byte-fallback token occurs
only inside a character that has no piece; WordPiece never continues a word with a
character that normalizer and pre-tokenizer always make a word of its own.

Not handled: special tokens and ids without bytes (not text; see
``VocabIndex.special``), ``add_special_tokens`` templates, BPE dropout (encoding
without a generator is deterministic, and that is what is judged).

Performance notes
-----------------
Almost every token is its own witness, so the first pass is one ``encode_ordinary``
per token, which hits the encoders' piece caches (~0.8 s for o200k_base's 200k
tokens). Only tokens without that witness go on to the contexts (at most
``len(_CONTEXTS)`` encodes) or completions (at most ``3 x _COMPLETIONS``; a reachable
partial token needs ~5 on average). Batching the first pass through
``encode_batch`` was tried: it is the same loop plus a list, no faster.

Cost: O(V) short encodes plus, per listed token, ``len(_CONTEXTS)`` (56) encodes, or
up to ``3 x _COMPLETIONS`` for a partial one whose characters are long enough to have
64 completions on each side (none on the fixtures has more than 64 in all). From
cold, vocabulary index included: o200k_base ~1.2 s, Llama 3 ~0.9 s, BERT ~0.7 s
(1.3k listed ids). The result is cached per tokenizer (a ``WeakKeyDictionary``, like
``vocab_index``; built once under a per-tokenizer lock); ``token_witness`` is not cached (one search, usually one encode).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator
from itertools import islice, product
from typing import TYPE_CHECKING, Final

from ..errors import TokstreamError
from .constraint import check_id

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["token_witness", "unreachable_tokens"]

#: Context put before / after a whole-character token's text. Each earns its place on a
#: fixture: "x" (a word-internal piece: WordPiece "##", SentencePiece "ing"), "$" and
#: "\n" (o200k's "\n//" only after punctuation), "0" (BERT "##2"), "s" and "M" (o200k's
#: "亚洲AV" before a lowercase letter, " I'" before an uppercase contraction).
_LEFT: Final = ("", "x", " ", "$", "0", "\n", "é")
_RIGHT: Final = ("", "s", "M", "x", " ", ".", "\n", "é")
#: (left, right) pairs: the bare text, then a left context alone (what word-internal
#: pieces need: ~28k of Mistral's 32k), then a right one alone, then both.
_CONTEXTS: Final = (
    *((a, "") for a in _LEFT),
    *(("", b) for b in _RIGHT[1:]),
    *((a, b) for a in _LEFT[1:] for b in _RIGHT[1:]),
)
#: At most this many completions of a partial token's cut characters are tried: 64
#: ways to complete the first character x 64 for the last, interleaved.
_SIDE: Final = 64
_COMPLETIONS: Final = _SIDE * _SIDE
#: Left context of a completed partial token.
_PARTIAL_LEFT: Final = ("", " ", "x")

_CONT: Final = range(0x80, 0xC0)
#: The lead bytes of UTF-8 characters of each length.
_LEADS: Final = {2: range(0xC2, 0xE0), 3: range(0xE0, 0xF0), 4: range(0xF0, 0xF5)}

_Encode = Callable[[str], list[int]]


def unreachable_tokens(tok: Tokenizer, *, include_partial: bool = True) -> list[int]:
    """The ids of the text tokens that no text encodes to, ascending (module notes).

    A token is listed when none of its witness candidates encodes (as
    ``tok.encode_ordinary``) to ids that hold it: for a token with whole-character
    text ``s``, ``s`` itself and ``s`` between short contexts; for a *partial* token
    (bytes that are not valid UTF-8 alone, like byte tokens), the texts that
    complete its cut characters. Every id not listed is emitted for some text
    (``token_witness`` gives one). Special tokens and ids without text are never
    listed. ``include_partial=False`` leaves partial tokens out (the usual scope of
    glitch-token audits that decode each token). Cached per tokenizer.

    >>> import tokstream
    >>> tok = tokstream.load("cl100k_base")
    >>> unreachable_tokens(tok, include_partial=False)
    []
    >>> [tok.token_bytes(i) for i in unreachable_tokens(tok)][:4]
    [b'\\xc0', b'\\xc1', b'\\xf5', b'\\xf6']
    """
    with _CACHE_LOCK:
        entry = _CACHE.get(tok)
        if entry is None:
            entry = _CACHE[tok] = _Entry()
    # One search per tokenizer and kind: concurrent first calls wait for it (the
    # tokenizer's own lock, so other tokenizers' searches run meanwhile).
    with entry.lock:
        if entry.whole is None:
            entry.whole = _search(tok, partial=False)
        if not include_partial:
            return list(entry.whole)
        if entry.partial is None:
            entry.partial = _search(tok, partial=True)
        return sorted(entry.whole + entry.partial)


def token_witness(tok: Tokenizer, token_id: int) -> str | None:
    """A text whose ``encode_ordinary`` ids hold ``token_id``, or None when the search
    of ``unreachable_tokens`` finds none (then the id is listed there). None also
    for special tokens and ids without text, which are outside that search.

    >>> import tokstream
    >>> tok = tokstream.load("o200k_base")
    >>> i = tok.encode(" I'M")[0]
    >>> tok.token_bytes(i), tok.encode(" I'") == [i], token_witness(tok, i)
    (b" I'", False, " I'M")
    """
    index = tok.vocab.index
    token_id = check_id(token_id, tok.name, index.n_vocab)
    data = index.token_bytes[token_id]
    if not data:
        return None
    return _witness(tok.encode_ordinary, token_id, data)


class _Entry:
    """One tokenizer's cached search results, and the lock that builds them once."""

    __slots__ = ("lock", "partial", "whole")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.whole: list[int] | None = None
        self.partial: list[int] | None = None


_CACHE: weakref.WeakKeyDictionary[Tokenizer, _Entry] = weakref.WeakKeyDictionary()
_CACHE_LOCK = threading.Lock()


def _search(tok: Tokenizer, *, partial: bool) -> list[int]:
    """The listed ids among the whole-character tokens, or among the partial ones."""
    encode = tok.encode_ordinary
    out: list[int] = []
    for token_id, data in enumerate(tok.vocab.index.token_bytes):
        if not data:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            if partial and _witness(encode, token_id, data) is None:
                out.append(token_id)
            continue
        # The first candidate, inlined: nearly every token is its own witness.
        if partial or token_id in _ids(encode, text):
            continue
        if _witness(encode, token_id, data) is None:
            out.append(token_id)
    return out


def _witness(encode: _Encode, token_id: int, data: bytes) -> str | None:
    for text in _candidates(data):
        if token_id in _ids(encode, text):
            return text
    return None


def _ids(encode: _Encode, text: str) -> list[int]:
    try:
        return encode(text)
    except TokstreamError:  # e.g. a Unigram model with no unk piece: no ids, no witness
        return []


def _candidates(data: bytes) -> Iterator[str]:
    """The witness candidates of a token's bytes, in the order they are tried."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        for whole in _completions(data):
            for left in _PARTIAL_LEFT:
                yield left + whole
        return
    for left, right in _CONTEXTS:
        yield left + text + right


def _completions(data: bytes) -> Iterator[str]:
    """Texts ``head + data + tail``: ``head`` completes the character whose
    continuation bytes ``data`` starts with, ``tail`` the one it ends inside. Up to
    ``_SIDE`` of each, interleaved so that both vary early; none when no UTF-8 text
    holds ``data``."""
    split = _split_partial(data)
    if split is None:
        return
    lead_conts, pending = split
    heads = list(islice(_heads(lead_conts, data[0]), _SIDE))
    tails = list(islice(_tails(pending), _SIDE))
    for h, t in _shells(len(heads), len(tails)):
        try:
            yield (heads[h] + data + tails[t]).decode("utf-8")
        except UnicodeDecodeError:  # pragma: no cover - the byte rules above exclude it
            continue


def _char_len(lead: int) -> int:
    """The length of a UTF-8 character from its first byte; 0 when none starts so."""
    if lead < 0x80:
        return 1
    for n, leads in _LEADS.items():
        if lead in leads:
            return n
    return 0


def _second_ok(lead: int, second: int) -> bool:
    """Whether ``second`` may follow ``lead`` (no overlong forms, surrogates or code
    points above U+10FFFF)."""
    if lead == 0xE0:
        return second >= 0xA0
    if lead == 0xED:
        return second < 0xA0
    if lead == 0xF0:
        return second >= 0x90
    if lead == 0xF4:
        return second < 0x90
    return True


def _split_partial(data: bytes) -> tuple[int, bytes] | None:
    """``(k, pending)``: ``data`` opens with ``k`` (at most 3) continuation bytes, then
    whole characters, then ``pending``, the first bytes of one more character (may be
    empty). None when no UTF-8 text holds ``data``."""
    k = 0
    while k < min(3, len(data)) and data[k] in _CONT:
        k += 1
    i = k
    while i < len(data):
        n = _char_len(data[i])
        if n == 0:
            return None
        chunk = data[i : i + n]
        if any(b not in _CONT for b in chunk[1:]):
            return None
        if len(chunk) > 1 and not _second_ok(chunk[0], chunk[1]):
            return None
        if len(chunk) < n:
            return k, chunk
        i += n
    return k, b""


def _heads(k: int, first: int) -> Iterator[bytes]:
    """Byte strings that ``k`` continuation bytes (the first being ``first``)
    complete to a character: shortest characters first, lead bytes varying fastest."""
    if k == 0:
        yield b""
        return
    for n in range(k + 1, 5):
        for mids in product(_CONT, repeat=n - 1 - k):
            for lead in _LEADS[n]:
                if _second_ok(lead, mids[0] if mids else first):
                    yield bytes((lead, *mids))


def _tails(pending: bytes) -> Iterator[bytes]:
    """The continuation bytes that complete ``pending`` to a character, the first
    missing byte varying fastest."""
    if not pending:
        yield b""
        return
    need = _char_len(pending[0]) - len(pending)
    for rest in product(_CONT, repeat=need):
        tail = bytes(reversed(rest))
        if len(pending) > 1 or _second_ok(pending[0], tail[0]):
            yield tail


def _shells(n: int, m: int) -> Iterator[tuple[int, int]]:
    """The pairs of ``range(n) x range(m)`` by increasing ``max(i, j)``."""
    for s in range(max(n, m)):
        if s < n:
            for j in range(min(s, m)):
                yield s, j
        if s < m:
            for i in range(min(s + 1, n)):
                yield i, s

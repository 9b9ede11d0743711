"""Constraints on generated token ids: values with a small immutable state.

A ``Constraint`` answers "which ids may come next?" (``allowed_ids``, or ``allowed``
for mask builders) and moves on with ``accept(id)``. Its state is a persistent stack:
each accepted id pushes one immutable node ``(value, parent, depth)``, so

- ``accept`` is O(1) plus the step rule, and a refused id leaves the state untouched;
- ``rollback(n)`` pops n nodes (O(n)), e.g. the rejected tail of a speculative draft;
- ``fork()`` shares the current node (O(1)); the two constraints then move apart
  without copying anything.

Every constraint keeps the output valid UTF-8 (``utf8``, the prefix automaton): a
token is allowed only if the bytes generated so far plus its bytes are a valid UTF-8
prefix (some continuation makes them valid UTF-8) *and* the vocabulary can still
finish the character they leave open, as llguidance, xgrammar and outlines-core do.
Under the prefix ``"的"`` (``E7 9A 84``) on Llama 3, after ``E7 9A`` the token ``84
96`` satisfies the prefix but leaves ``96``, which starts no character: refused.

``prefix_constraint``: the output's bytes must start with a byte string. Allowed are
the tokens whose bytes extend the remaining prefix (one slice of the vocabulary
index, filtered by the UTF-8 state the prefix leaves open: ``Allowed.utf8_state``)
and the non-empty tokens that are proper prefixes of it (a trie walk, at most one key
per byte of the prefix) after which the vocabulary can still spell the rest. Special
tokens are not allowed until the prefix is met. Met, the constraint is done
(``is_done``: nothing restricted) at the next character boundary: a token that meets
the prefix but ends inside a character (``E7 9A 84 E4``) leaves the constraint asking
for that character's continuation bytes first. After that the output is the model's
again, as without a constraint (keeping *all* output valid UTF-8 is a grammar's job).

The prefix itself must be a valid UTF-8 prefix: ``b"\xe7\x9a"`` (a character cut
short) is fine, ``b"\x84"`` (no lead byte), ``b"\xff"`` or ``b"\xed\xa0\x80"`` (a
surrogate) raise ``TokstreamError`` at construction, naming the byte. That is the
only consistent choice: a constraint that allows no invalid UTF-8 cannot be satisfied
by such a prefix, and llguidance has no equivalent to copy (its grammars are UTF-8
text, so an invalid literal cannot be written). A prefix that no tokens can spell
(the vocabulary lacks its characters) raises, as an unspellable choice does. Token
healing (``heal``) backs off tokens that may start inside a character whose lead
byte stays in the prompt; its constraint starts from that open character instead of
a boundary.

``choice_constraint``: the output is exactly one of some strings, through any
tokenization, then ``eos_id`` if given. Allowed are, for each option that continues
what has been generated, the tokens that are prefixes of the option's rest (the same
trie walk) after which the vocabulary can still spell the rest (so sampling never
reaches a dead end; an option no tokens can spell is refused up front), and
``eos_id`` once an option is complete. The options are ``str``, so each is valid
UTF-8 and so is every piece of it: the UTF-8 rule restricts nothing more (an option
with a lone surrogate, which has no UTF-8, is refused).

Fast-forward (``forced_bytes``, ``forced_ids``): the bytes every valid continuation
of the output starts with, and the ids a server may append for them without a forward
pass. Nothing is forced once the output can end (``can_end``: ending is a valid
continuation, with or without an ``eos_id``; a caller may stop a complete output by
other means) or is done, nor where two next bytes are possible. Each constraint
computes it from its own rule (``_forced``): a prefix constraint forces the rest of its
prefix, a choice the common prefix of the options still open, a grammar every byte
that is the only one its Earley set survives (``grammar.constraint``). The forced
bytes may end inside a UTF-8 character (``"日本"`` / ``"日曜"`` force ``"日"`` and the
lead byte ``E6``).

``forced_ids`` is the tokenizer's own encoding of the forced text (the constraint
remembers the tokenizer it was built with), cut to what no continuation can change:

1. the text is the forced bytes' whole characters (an unfinished last character is
   left to the model: its bytes may merge with the rest of it, or a byte-fallback
   vocabulary may spell it as ``<0xXX>`` pieces, and which depends on the character);
   forced bytes that start inside a character (the output ends inside one) give none;
2. it is encoded as a continuation, not a fresh text (``Tokenizer.encode_stable`` with
   ``continued=True``: no dummy prefix or prefix space), special tokens' literals as
   plain text, and only the ids before its stable boundary are kept
   (``Tokenizer.stable_boundary``: ``encode(text[:b])`` is a prefix of
   ``encode(text + s)`` for every ``s``), so the last piece, which may merge with what
   the model writes next (``{"name`` + ``":``), is never emitted;
3. each id must spell the next bytes of the forced text and be accepted, in turn, by a
   fork of the constraint; the first that is not (a normalizer changed the bytes, the
   constraint refuses that split) ends the list.

So the ids are the canonical ids of the forced text on its own: the ids already
generated stay as they were (``"{"`` sampled, then forced ``"name"`` gives the ids of
``"name"``, not of ``{"name``). EOS is never among them: when it is the only id
left, ``allowed_ids`` says so.

Cost per step: ``allowed`` is O(log V + len(prefix)) for a prefix constraint and
O(options x len(option)) for a choice; the mask itself is ``masks.TokenMasker``'s
(plus one ``&`` with the UTF-8 class of the state, ``utf8``). Construction of a prefix
constraint is one trie walk per byte of the prefix (which offsets can be spelled);
the first UTF-8 question about a tokenizer builds its ``utf8.Utf8Index`` (~30-80 ms).
``forced_bytes`` is O(len(prefix)) for a prefix, O(options x len(option)) for a choice
(the generic default: one ``allowed_ids`` per token stepped through); ``forced_ids``
adds one ``encode_stable`` of the forced text and one ``accept`` per id. Both are
cached for the current state (one entry: a server asks for the bytes, then the ids).
"""

from __future__ import annotations

import codecs
import copy
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from ..errors import InvalidTokenIdError, TokstreamError
from ..vocab import Slice, VocabIndex
from .bitmask import unpack_bitmask
from .utf8 import ACCEPT, REJECT, Utf8Index, describe_invalid, first_byte_range, states_along, utf8_index

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["Allowed", "Constraint", "choice_constraint", "prefix_constraint"]

V = TypeVar("V")
C = TypeVar("C", bound="Constraint[Any]")


@dataclass(frozen=True)
class Allowed:
    """What a constraint allows next: ``everything`` (every id, specials included),
    else the ids in ``slices`` of the vocabulary index's ``order`` plus ``ids`` plus
    the ids set in ``words``.

    ``utf8_state``, when not None, narrows the slices (not ``ids``, not ``words``) to
    the tokens that may follow that state of the UTF-8 automaton
    (``utf8.Utf8Index.ok``). ``words``, when not None, is a packed bitmask in
    ``TokenMasker.bitmask``'s layout (``ceil(n_vocab / 32)`` int32 words): the grammar
    constraints cache one per parser state. It is shared: read it, never write it."""

    everything: bool
    slices: tuple[Slice, ...] = ()
    ids: tuple[int, ...] = ()
    utf8_state: int | None = None
    words: npt.NDArray[np.int32] | None = None


#: A node of the persistent state stack: (value, parent node, number of accepts).
_Node = tuple[Any, Any, int]


class Constraint(ABC, Generic[V]):
    """A constraint on the next token ids (module notes): ``allowed_ids()``,
    ``accept(id) -> bool``, ``rollback(n=1)``, ``fork()``, ``is_done`` (nothing is
    restricted any more), ``can_end`` (the output so far is complete) and the
    fast-forward pair ``forced_bytes()`` / ``forced_ids()``.

    ``tok``: the tokenizer whose vocabulary ``index`` is, which ``forced_ids`` encodes
    with (the ``*_constraint`` functions and ``heal`` pass it)."""

    __slots__ = ("_memo", "_node", "_tok", "index")

    #: ``forced_bytes`` stops after this many bytes (a bound, not a limit met in
    #: practice: a forced run ends where the output may end or branch).
    _MAX_FORCED: ClassVar[int] = 4096

    def __init__(self, index: VocabIndex, value: V, *, tok: Tokenizer | None = None) -> None:
        self.index = index
        self._node: _Node = (value, None, 0)
        self._tok: Tokenizer | None = None
        #: (node, forced bytes, forced ids or None): the last state asked about.
        self._memo: tuple[_Node, bytes, list[int] | None] | None = None
        if tok is not None:
            self._bind(tok)

    def _bind(self: C, tok: Tokenizer) -> C:
        """Remember ``tok`` for ``forced_ids`` (for subclasses whose constructor takes no
        tokenizer); ``TokstreamError`` when its vocabulary is not this constraint's."""
        if tok.vocab.index is not self.index:
            raise TokstreamError(f"the tokenizer {tok.name!r} does not have this constraint's vocabulary")
        self._tok = tok
        return self

    # -- the rule, per subclass ------------------------------------------------------

    @abstractmethod
    def _allowed(self, value: V) -> Allowed:
        """What ``value`` allows next."""

    @abstractmethod
    def _step(self, value: V, token_id: int) -> V | None:
        """The value after ``token_id``, or None when it is not allowed."""

    @abstractmethod
    def _done(self, value: V) -> bool:
        """Whether ``value`` restricts nothing any more."""

    def _can_end(self, value: V) -> bool:
        """Whether the output so far is complete under ``value`` (by default: when
        nothing is restricted any more)."""
        return self._done(value)

    def _forced(self, value: V) -> bytes:
        """The bytes every valid continuation from ``value`` starts with (module
        notes). This generic default reads the masks: while the output cannot end,
        the allowed tokens' bytes share a non-empty common prefix and no id without
        bytes is allowed, that prefix is forced; it goes on from the state after a
        token spelling exactly that prefix (and stops where there is none, so it may
        force less than a subclass's own rule). It assumes that the state after a token
        depends only on the bytes so far, as in every byte-level rule. The shipped
        constraints override it."""
        out = b""
        table = self.index.token_bytes
        while len(out) < self._MAX_FORCED and not self._done(value) and not self._can_end(value):
            a = self._allowed(value)
            if a.everything:
                break
            pieces = [(table[i], i) for i in self._ids(a).tolist()]
            if not pieces or any(not data for data, _ in pieces):
                break  # nothing allowed, or an id that is no text (a special token)
            # The common prefix of a set of strings is that of its least and greatest.
            common = _common_prefix(min(pieces)[0], max(pieces)[0])
            if not common:
                break
            out += common
            exact = next((i for data, i in pieces if data == common), None)
            nxt = None if exact is None else self._step(value, exact)
            if nxt is None:
                break
            value = nxt
        return out[: self._MAX_FORCED]

    # -- the public surface ------------------------------------------------------------

    @property
    def is_done(self) -> bool:
        """True when the constraint restricts nothing any more."""
        return self._done(self._node[0])

    @property
    def can_end(self) -> bool:
        """True when the output so far is complete: the constraint's ``eos_id`` (if it
        has one) is allowed now, and generation may stop here."""
        return self._can_end(self._node[0])

    @property
    def accepted(self) -> int:
        """How many ids have been accepted (and not rolled back)."""
        return self._node[2]

    def allowed(self) -> Allowed:
        """What may come next, as slices of the vocabulary index (for mask builders)."""
        return self._allowed(self._node[0])

    def allowed_ids(self) -> npt.NDArray[np.int64]:
        """The ids that may come next, sorted ascending."""
        return self._ids(self.allowed())

    def _ids(self, a: Allowed) -> npt.NDArray[np.int64]:
        """The ids ``a`` allows, sorted ascending."""
        if a.everything:
            return np.arange(self.index.n_vocab, dtype=np.int64)
        keep = None if a.utf8_state is None else utf8_index(self.index).ok[a.utf8_state]
        ids = self.index.ids(a.slices, keep).astype(np.int64)
        if a.ids:
            ids = np.concatenate([ids, np.asarray(a.ids, dtype=np.int64)])
        if a.words is not None:
            ids = np.concatenate([ids, np.flatnonzero(unpack_bitmask(a.words, self.index.n_vocab))])
        return np.unique(ids)

    def forced_bytes(self) -> bytes:
        """The longest byte string that every valid continuation of the output starts
        with (module notes, "Fast-forward"): ``b""`` when the output can end here
        (``can_end``), when the constraint is done, or when two next bytes are
        possible. It may end inside a UTF-8 character.

        >>> import tokstream
        >>> tok = tokstream.load("cl100k_base")
        >>> c = tokstream.choice_constraint(tok, ['{"name": "Ada"}', '{"name": "Bob"}'])
        >>> c.forced_bytes()
        b'{"name": "'
        """
        return self._forced_memo()[1]

    def forced_ids(self) -> list[int]:
        """Ids a server may append without a forward pass: the tokenizer's own ids of
        ``forced_bytes()``'s whole characters, encoded as a continuation, up to the
        text's stable boundary, each accepted in turn by the constraint (module notes,
        "Fast-forward", for the rule). The constraint itself does not move: ``accept``
        them. ``TokstreamError`` when the constraint was built without its tokenizer
        (a subclass constructed from a bare vocabulary index).

        >>> import tokstream
        >>> tok = tokstream.load("cl100k_base")
        >>> c = tokstream.choice_constraint(tok, ['{"name": "Ada"}', '{"name": "Bob"}'])
        >>> [tok.decode([i]) for i in c.forced_ids()]  # ' "' may merge with "Ada" / "Bob"
        ['{"', 'name', '":']
        """
        node, data, ids = self._forced_memo()
        if ids is None:
            ids = self._canonical(data)
            self._memo = (node, data, ids)
        return list(ids)

    def _forced_memo(self) -> tuple[_Node, bytes, list[int] | None]:
        """The memo for the current node, computing the forced bytes on a miss."""
        node = self._node
        memo = self._memo
        if memo is None or memo[0] is not node:
            memo = self._memo = (node, self._forced(node[0]), None)
        return memo

    def _canonical(self, data: bytes) -> list[int]:
        """``forced_ids`` of the forced bytes ``data`` (module notes: the three steps)."""
        tok = self._tok
        if tok is None:
            raise TokstreamError(
                f"{type(self).__name__} was built without its tokenizer, so forced_ids() cannot encode; "
                "build it with prefix_constraint, choice_constraint, regex_constraint, grammar_constraint, "
                "json_schema_constraint or heal, or pass tok= to its constructor"
            )
        if not data or 0x80 <= data[0] < 0xC0:
            return []  # nothing forced, or the output ends inside a character
        try:
            # The whole characters only: the incremental decoder keeps an unfinished one.
            text = codecs.getincrementaldecoder("utf-8")().decode(data, final=False)
        except UnicodeDecodeError:
            return []  # not UTF-8 (no shipped constraint forces such bytes)
        if not text:
            return []
        stable = tok.encode_stable(text, disallowed_special=(), continued=True, tail=False)
        table = self.index.token_bytes
        probe = self.fork()
        out: list[int] = []
        pos = 0
        for i in stable.ids[: stable.stable_len]:
            piece = table[i]
            if not piece or not data.startswith(piece, pos) or not probe.accept(i):
                break
            pos += len(piece)
            out.append(i)
        return out

    def accept(self, token_id: int) -> bool:
        """Take ``token_id`` if it is allowed (True); otherwise return False and change
        nothing. An id outside the vocabulary, a non-integer or a ``bool``
        (``accept(True)`` is a bug, not id 1) raises ``InvalidTokenIdError``."""
        token_id = check_id(token_id, "constraint", self.index.n_vocab)
        value, _, depth = node = self._node
        nxt = self._step(value, token_id)
        if nxt is None:
            return False
        self._node = (nxt, node, depth + 1)
        return True

    def rollback(self, n: int = 1) -> None:
        """Undo the last ``n`` accepted ids (``rollback(0)`` does nothing); rolling
        back more than were accepted, a negative count or a non-int (a ``bool``
        included) raises ``TokstreamError`` (a ``ValueError``) and changes nothing."""
        n = check_count(n, "rollback")
        if n > self._node[2]:
            raise TokstreamError(f"cannot roll back {n} ids: only {self._node[2]} were accepted")
        node = self._node
        for _ in range(n):
            node = node[1]
        self._node = node

    def fork(self) -> Constraint[V]:
        """An independent copy in the same state (O(1): the state is shared, immutably)."""
        return copy.copy(self)  # shallow: the node, the index and the tokenizer are shared


#: A prefix constraint's value: (the bytes still to produce, the UTF-8 automaton's
#: state after the bytes produced so far).
_Prefix = tuple[bytes, int]


class PrefixConstraint(Constraint[_Prefix]):
    """The output's bytes must start with a byte string, in valid UTF-8 (module notes).

    ``PrefixConstraint(index, prefix, utf8_state, *, tok=None)``: ``utf8_state`` is
    the UTF-8 automaton state the output starts in (``utf8.ACCEPT``, a character
    boundary, unless the prompt leaves a character open: ``heal``); ``tok`` the
    tokenizer ``forced_ids`` encodes with. Raises ``TokstreamError`` when ``prefix``
    is not a valid UTF-8 continuation of that state, or when no tokens can spell it."""

    __slots__ = ("_spellable", "_states", "_utf8", "prefix")

    def __init__(
        self, index: VocabIndex, prefix: bytes, utf8_state: int = ACCEPT, *, tok: Tokenizer | None = None
    ) -> None:
        super().__init__(index, (prefix, utf8_state), tok=tok)
        self.prefix = prefix
        self._utf8 = u = utf8_index(index)
        states = states_along(utf8_state, prefix)  # after prefix[:j], for every j
        if states[-1] == REJECT:
            raise TokstreamError(
                f"the prefix {prefix!r} is not valid UTF-8: {describe_invalid(utf8_state, prefix)}; a constraint "
                "allows only output that valid UTF-8 can continue (to continue a prompt that ends inside a "
                "character, use heal(tok, prompt_ids).constraint(), which starts from that character)"
            )
        self._states = states
        self._spellable = _prefix_spellable_from(index, u, prefix, states)
        if prefix and 0 not in self._spellable:
            raise TokstreamError(
                f"the prefix {prefix.decode('utf-8', 'replace')!r} cannot be spelled with this vocabulary"
            )

    @property
    def remaining(self) -> bytes:
        """The bytes the output must still produce."""
        value: _Prefix = self._node[0]
        return value[0]

    def _allowed(self, value: _Prefix) -> Allowed:
        rest, state = value
        index = self.index
        if not rest:
            if state == ACCEPT:
                return Allowed(everything=True)
            # Met inside a character: its continuation bytes first. The tokens that
            # open with a byte in the range the state needs are one slice of `order`.
            lo, hi = first_byte_range(state)
            span = (index.extensions(bytes((lo,)))[0], index.extensions(bytes((hi,)))[0])
            return Allowed(everything=False, slices=(span,), utf8_state=state)
        # Extensions of the rest (filtered by the UTF-8 state), and proper prefixes of
        # it after which the rest can still be spelled (the trie gives every non-empty
        # prefix including the whole; the whole is inside the extensions). The proper
        # prefixes are pieces of a valid prefix, so the UTF-8 filter keeps them all.
        start = len(self.prefix) - len(rest)
        ok = self._spellable
        lo, hi = index.extensions(rest)
        slices = [(lo, hi)] if hi > lo else []
        slices += [piece for size, piece in index.sized_prefixes(rest[:-1]) if start + size in ok]
        # Most extension slices need no UTF-8 filter (an O(1) check): leave it out then.
        check = None if self._utf8.all_ok(state, lo, hi) else state
        return Allowed(everything=False, slices=tuple(slices), utf8_state=check)

    def _step(self, value: _Prefix, token_id: int) -> _Prefix | None:
        rest, state = value
        if not rest and state == ACCEPT:
            return value
        data = self.index.token_bytes[token_id]
        if not data:
            return None  # a special token or an id without text
        u = self._utf8
        if not rest or data.startswith(rest):
            end = int(u.end[state, token_id])
            return (b"", end) if u.finishable[end] else None
        if rest.startswith(data):
            j = len(self.prefix) - len(rest) + len(data)
            return (rest[len(data) :], self._states[j]) if j in self._spellable else None
        return None

    def _done(self, value: _Prefix) -> bool:
        # Met at a character boundary: anything (or nothing) may follow, so this is
        # also when the output can end (the inherited ``_can_end``).
        return not value[0] and value[1] == ACCEPT

    def _forced(self, value: _Prefix) -> bytes:
        # The rest of the prefix, every byte of it. Met inside a character, the
        # continuation bytes it needs span a range of 16 or more values (``utf8``), so
        # by bytes nothing more is forced; the generic rule reads the masks there in
        # case the vocabulary can finish the character with only one byte.
        rest, state = value
        if self._done(value):
            return b""
        end = self._states[-1] if rest else state
        return rest + (super()._forced((b"", end)) if end != ACCEPT else b"")


def _common_prefix(a: bytes, b: bytes) -> bytes:
    """The longest common prefix of ``a`` and ``b`` (of a set of byte strings: of its
    least and greatest)."""
    n = min(len(a), len(b))
    k = next((j for j in range(n) if a[j] != b[j]), n)
    return a[:k]


def _prefix_spellable_from(index: VocabIndex, u: Utf8Index, prefix: bytes, states: list[int]) -> frozenset[int] | range:
    """The offsets ``j`` of ``prefix`` from which tokens can produce ``prefix[j:]``
    (and go on in valid UTF-8): one token extending it that may follow ``states[j]``,
    or a token that is a proper prefix of it followed by such an offset. Dynamic
    programming from the end; the cheap witnesses (an exact token, a piece) first,
    the UTF-8 filter over the extensions' slice only when they fail."""
    n = len(prefix)
    finish = bool(u.finishable[states[n]])
    single = u.single_bytes
    if finish and all(b in single for b in prefix):
        return range(n)  # byte by byte (every byte-level vocabulary): every offset
    ok: set[int] = set()
    trie = index.trie
    for j in range(n - 1, -1, -1):
        rest = prefix[j:]
        # A one-byte token and a spellable rest is the usual witness (byte-level
        # vocabularies have every byte); then any other token piece; then the
        # extensions' slice.
        if (j + 1 in ok and rest[:1] in trie) or any(
            finish if j + len(key) == n else j + len(key) in ok for key in trie.prefixes(rest)
        ):
            ok.add(j)
        elif u.any_ok(states[j], *index.extensions(rest)):
            ok.add(j)
    return frozenset(ok)


def prefix_constraint(tok: Tokenizer, prefix: bytes) -> PrefixConstraint:
    """A constraint: the generated bytes must start with ``prefix``, in valid UTF-8
    (module notes).

    ``prefix`` must be a valid UTF-8 prefix (it may end inside a character) that the
    vocabulary can spell; otherwise ``TokstreamError`` names the problem.

    >>> import tokstream
    >>> tok = tokstream.load("cl100k_base")
    >>> c = prefix_constraint(tok, b" wor")
    >>> c.accept(tok.encode(" world")[0]), c.is_done
    (True, True)
    """
    if not isinstance(prefix, (bytes, bytearray)):
        raise TypeError(f"prefix must be bytes, not {type(prefix).__name__}")
    return PrefixConstraint(tok.vocab.index, bytes(prefix), tok=tok)


#: A choice's value: (bytes generated so far, whether EOS was accepted).
_Choice = tuple[bytes, bool]


class ChoiceConstraint(Constraint[_Choice]):
    """The output is exactly one of ``options`` (as UTF-8), then ``eos_id`` if given;
    ``tok`` is the tokenizer ``forced_ids`` encodes with."""

    __slots__ = ("_spellable", "eos_id", "options")

    def __init__(
        self, index: VocabIndex, options: tuple[bytes, ...], eos_id: int | None, *, tok: Tokenizer | None = None
    ) -> None:
        super().__init__(index, (b"", False), tok=tok)
        self.options = options
        self.eos_id = eos_id
        # For each option, the offsets from which the vocabulary can spell the rest:
        # a token is allowed only if it leads to one, so sampling never gets stuck.
        self._spellable = [_spellable_from(index, o) for o in options]
        for o, ok in zip(options, self._spellable):
            if 0 not in ok:
                raise TokstreamError(
                    f"the option {o.decode('utf-8', 'replace')!r} cannot be spelled with this vocabulary"
                )

    def _allowed(self, value: _Choice) -> Allowed:
        done, ended = value
        if ended or self._done(value):
            return Allowed(everything=True)
        index = self.index
        slices: set[Slice] = set()
        complete = False
        start = len(done)
        for option, ok in zip(self.options, self._spellable):
            if option.startswith(done):
                rest = option[start:]
                if rest:
                    slices.update(
                        s
                        for s in index.prefixes(rest)
                        if s[1] > s[0] and start + len(index.token_bytes[int(index.order[s[0]])]) in ok
                    )
                else:
                    complete = True
        ids = (self.eos_id,) if complete and self.eos_id is not None else ()
        return Allowed(everything=False, slices=tuple(sorted(slices)), ids=ids)

    def _step(self, value: _Choice, token_id: int) -> _Choice | None:
        done, ended = value
        if ended or self._done(value):
            return value
        if token_id == self.eos_id:
            return (done, True) if done in self.options else None
        data = self.index.token_bytes[token_id]
        if not data:
            return None
        nxt = done + data
        if any(o.startswith(nxt) and len(nxt) in ok for o, ok in zip(self.options, self._spellable)):
            return (nxt, False)
        return None

    def _can_end(self, value: _Choice) -> bool:
        done, ended = value
        return ended or done in self.options

    def _done(self, value: _Choice) -> bool:
        done, ended = value
        if ended:
            return True
        # Without an EOS id, a complete option that no other option extends ends it.
        return (
            self.eos_id is None
            and done in self.options
            and not any(o != done and o.startswith(done) for o in self.options)
        )

    def _forced(self, value: _Choice) -> bytes:
        # The common prefix of the rests of the options still open: those that start
        # with the output and that tokens can spell on from here (``_step`` keeps to
        # them), each of which some token sequence the constraint allows completes.
        done, ended = value
        if ended or self._can_end(value):
            return b""
        start = len(done)
        rests = [o[start:] for o, ok in zip(self.options, self._spellable) if o.startswith(done) and start in ok]
        return _common_prefix(min(rests), max(rests)) if rests else b""


def _spellable_from(index: VocabIndex, option: bytes) -> frozenset[int]:
    """The offsets ``j`` of ``option`` from which tokens can spell ``option[j:]``
    (dynamic programming from the end; one trie walk per offset)."""
    ok = {len(option)}
    for j in range(len(option) - 1, -1, -1):
        for lo, hi in index.prefixes(option[j:]):
            if hi > lo and j + len(index.token_bytes[int(index.order[lo])]) in ok:
                ok.add(j)
                break
    return frozenset(ok)


def choice_constraint(tok: Tokenizer, options: Iterable[str], *, eos_id: int | None = None) -> ChoiceConstraint:
    """A constraint: the output is exactly one of ``options``, through any
    tokenization of it, then ``eos_id`` if given (module notes). With ``eos_id`` None,
    an option that another option extends cannot end the output there.

    >>> import tokstream
    >>> tok = tokstream.load("cl100k_base")
    >>> c = choice_constraint(tok, ["yes", "no"], eos_id=100257)
    >>> [tok.decode([i]) for i in c.allowed_ids()]
    ['n', 'y', 'no', 'ye', 'yes']
    """
    if isinstance(options, (str, bytes)):
        raise TypeError("options must be a collection of strings, not one string")
    opts: list[bytes] = []
    for o in options:
        if not isinstance(o, str):
            raise TypeError(f"options must be strings, got {type(o).__name__}")
        if not o:
            raise TokstreamError("an empty option would allow only EOS; remove it")
        try:
            opts.append(o.encode("utf-8"))
        except UnicodeEncodeError as e:
            raise TokstreamError(
                f"the option {o!r} holds a lone surrogate at offset {e.start}, which has no UTF-8; "
                "a constraint allows only valid UTF-8"
            ) from e
    if not opts:
        raise TokstreamError("choice_constraint needs at least one option")
    index = tok.vocab.index
    if eos_id is not None:
        eos_id = check_id(eos_id, tok.name, index.n_vocab)
    return ChoiceConstraint(index, tuple(dict.fromkeys(opts)), eos_id, tok=tok)


def check_id(token_id: object, name: str, n_vocab: int) -> int:
    """``token_id`` as an ``int`` if it is an id in ``[0, n_vocab)``; otherwise
    ``InvalidTokenIdError``, as ``Tokenizer.decode`` raises for a non-integer. A
    ``bool`` is refused: ``True`` is an ``int`` to Python, and a mask or flag passed
    where an id belongs would otherwise be read as id 1."""
    if isinstance(token_id, (bool, np.bool_)):
        raise InvalidTokenIdError(token_id, f"{name}; a bool is not a token id", n_vocab)
    if not isinstance(token_id, (int, np.integer)) or not 0 <= token_id < n_vocab:
        raise InvalidTokenIdError(token_id, name, n_vocab)
    return int(token_id)


def check_count(n: object, what: str) -> int:
    """``n`` as an ``int`` >= 0, or ``TokstreamError`` (a ``bool`` is refused)."""
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 0:
        raise TokstreamError(f"{what} needs an int >= 0, got {n!r}")
    return int(n)

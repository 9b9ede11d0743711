"""Constraints on generated token ids: values with a small immutable state.

A ``Constraint`` answers "which ids may come next?" (``allowed_ids``, or ``allowed``
for mask builders) and moves on with ``accept(id)``. Its state is a persistent stack:
each accepted id pushes one immutable node ``(value, parent, depth)``, so

- ``accept`` is O(1) plus the step rule, and a refused id leaves the state untouched;
- ``rollback(n)`` pops n nodes (O(n)), e.g. the rejected tail of a speculative draft;
- ``fork()`` shares the current node (O(1)); the two constraints then move apart
  without copying anything.

``prefix_constraint``: the output's bytes must start with a byte string. Allowed are
the tokens whose bytes extend the remaining prefix (one slice of the vocabulary
index) and the non-empty tokens that are proper prefixes of it (a trie walk, at most
one key per byte of the prefix); special tokens are not allowed until the prefix is
met, then nothing is restricted (``is_done``).

``choice_constraint``: the output is exactly one of some strings, through any
tokenization, then ``eos_id`` if given. Allowed are, for each option that continues
what has been generated, the tokens that are prefixes of the option's rest (the same
trie walk) after which the vocabulary can still spell the rest (so sampling never
reaches a dead end; an option no tokens can spell is refused up front), and
``eos_id`` once an option is complete.

Cost per step: ``allowed`` is O(log V + len(prefix)) for a prefix constraint and
O(options x len(option)) for a choice; the mask itself is ``masks.TokenMasker``'s.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from ..errors import InvalidTokenIdError
from ..vocab import Slice, VocabIndex

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["Allowed", "Constraint", "choice_constraint", "prefix_constraint"]

V = TypeVar("V")


@dataclass(frozen=True)
class Allowed:
    """What a constraint allows next: ``everything`` (every id, specials included),
    else the ids in ``slices`` of the vocabulary index's ``order`` plus ``ids``."""

    everything: bool
    slices: tuple[Slice, ...] = ()
    ids: tuple[int, ...] = ()


#: A node of the persistent state stack: (value, parent node, number of accepts).
_Node = tuple[Any, Any, int]


class Constraint(ABC, Generic[V]):
    """A constraint on the next token ids (module notes): ``allowed_ids()``,
    ``accept(id) -> bool``, ``rollback(n=1)``, ``fork()``, ``is_done``."""

    __slots__ = ("_node", "index")

    def __init__(self, index: VocabIndex, value: V) -> None:
        self.index = index
        self._node: _Node = (value, None, 0)

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

    # -- the public surface ------------------------------------------------------------

    @property
    def is_done(self) -> bool:
        """True when the constraint restricts nothing any more."""
        return self._done(self._node[0])

    @property
    def accepted(self) -> int:
        """How many ids have been accepted (and not rolled back)."""
        return self._node[2]

    def allowed(self) -> Allowed:
        """What may come next, as slices of the vocabulary index (for mask builders)."""
        return self._allowed(self._node[0])

    def allowed_ids(self) -> npt.NDArray[np.int64]:
        """The ids that may come next, sorted ascending."""
        a = self.allowed()
        if a.everything:
            return np.arange(self.index.n_vocab, dtype=np.int64)
        ids = self.index.ids(list(a.slices)).astype(np.int64)
        if a.ids:
            ids = np.concatenate([ids, np.asarray(a.ids, dtype=np.int64)])
        return np.unique(ids)

    def accept(self, token_id: int) -> bool:
        """Take ``token_id`` if it is allowed (True); otherwise return False and change
        nothing. An id outside the vocabulary raises ``InvalidTokenIdError``."""
        if not isinstance(token_id, (int, np.integer)) or not 0 <= token_id < self.index.n_vocab:
            raise InvalidTokenIdError(token_id, "constraint", self.index.n_vocab)
        value, _, depth = node = self._node
        nxt = self._step(value, int(token_id))
        if nxt is None:
            return False
        self._node = (nxt, node, depth + 1)
        return True

    def rollback(self, n: int = 1) -> None:
        """Undo the last ``n`` accepted ids (``rollback(0)`` does nothing); rolling
        back more than were accepted raises ``ValueError`` and changes nothing."""
        if not isinstance(n, int) or n < 0:
            raise ValueError(f"rollback needs a count >= 0, got {n!r}")
        if n > self._node[2]:
            raise ValueError(f"cannot roll back {n} ids: only {self._node[2]} were accepted")
        node = self._node
        for _ in range(n):
            node = node[1]
        self._node = node

    def fork(self) -> Constraint[V]:
        """An independent copy in the same state (O(1): the state is shared, immutably)."""
        return copy.copy(self)  # shallow: the node and the index are shared


class PrefixConstraint(Constraint[bytes]):
    """The output's bytes must start with a byte string; its value is what remains of
    that string (``b""``: met, nothing restricted)."""

    __slots__ = ()

    @property
    def remaining(self) -> bytes:
        """The bytes the output must still produce."""
        value: bytes = self._node[0]
        return value

    def _allowed(self, value: bytes) -> Allowed:
        if not value:
            return Allowed(everything=True)
        index = self.index
        # Extensions of the rest, and proper prefixes of it (the trie gives every
        # non-empty prefix including the whole; the whole is inside the extensions).
        slices = [index.extensions(value), *index.prefixes(value[:-1])]
        return Allowed(everything=False, slices=tuple(s for s in slices if s[1] > s[0]))

    def _step(self, value: bytes, token_id: int) -> bytes | None:
        if not value:
            return value
        data = self.index.token_bytes[token_id]
        if not data:
            return None  # a special token or an id without text
        if data.startswith(value):
            return b""
        if value.startswith(data):
            return value[len(data) :]
        return None

    def _done(self, value: bytes) -> bool:
        return not value


def prefix_constraint(tok: Tokenizer, prefix: bytes) -> PrefixConstraint:
    """A constraint: the generated bytes must start with ``prefix`` (module notes).

    >>> import tokstream
    >>> tok = tokstream.load("cl100k_base")
    >>> c = prefix_constraint(tok, b" wor")
    >>> c.accept(tok.encode(" world")[0]), c.is_done
    (True, True)
    """
    if not isinstance(prefix, (bytes, bytearray)):
        raise TypeError(f"prefix must be bytes, not {type(prefix).__name__}")
    return PrefixConstraint(tok.vocab.index, bytes(prefix))


#: A choice's value: (bytes generated so far, whether EOS was accepted).
_Choice = tuple[bytes, bool]


class ChoiceConstraint(Constraint[_Choice]):
    """The output is exactly one of ``options`` (as UTF-8), then ``eos_id`` if given."""

    __slots__ = ("_spellable", "eos_id", "options")

    def __init__(self, index: VocabIndex, options: tuple[bytes, ...], eos_id: int | None) -> None:
        super().__init__(index, (b"", False))
        self.options = options
        self.eos_id = eos_id
        # For each option, the offsets from which the vocabulary can spell the rest:
        # a token is allowed only if it leads to one, so sampling never gets stuck.
        self._spellable = [_spellable_from(index, o) for o in options]
        for o, ok in zip(options, self._spellable):
            if 0 not in ok:
                raise ValueError(f"the option {o.decode('utf-8', 'replace')!r} cannot be spelled with this vocabulary")

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
            raise ValueError("an empty option would allow only EOS; remove it")
        opts.append(o.encode("utf-8"))
    if not opts:
        raise ValueError("choice_constraint needs at least one option")
    index = tok.vocab.index
    if eos_id is not None and not 0 <= eos_id < index.n_vocab:
        raise InvalidTokenIdError(eos_id, tok.name, index.n_vocab)
    return ChoiceConstraint(index, tuple(dict.fromkeys(opts)), eos_id)

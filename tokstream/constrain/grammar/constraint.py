"""Regex and grammar constraints: exact token masks from the Earley sets of ``earley``.

``regex_constraint(tok, pattern)`` and ``grammar_constraint(tok, grammar)`` return
``Constraint``s whose state is an Earley set (``earley.ESet``) plus "EOS taken". A
token is allowed iff the set after its bytes is not dead, which (``earley``) is iff
some continuation completes a valid output: nothing less, nothing more, at byte
level, tokens ending inside a UTF-8 character included.

The mask of a set is built from its *scan pairs* ``(terminal, DFA state)``:

- *Walks* (``_Walker.walk``, cached per pair and token slice for the compiled
  grammar): every token's bytes run through the terminal's DFA from that state at
  once, in numpy, over the token bytes flattened in the vocabulary index's sorted
  order, longest token first: a step is one gather ``table[state * 256 + byte]``
  over the tokens still alive; the tokens that end are a tail slice, the dead ones
  are compacted out (most die on their first byte: a walk from the top starts from
  the slices of the first bytes the state takes). A token alive to its end is
  allowed by this pair alone (the lexeme goes on: no parser needed); a token that
  passes an accepting state strictly inside is a *crossing* candidate.
- *Crossings*: only they need the parser. Candidates are grouped by their bytes up
  to the lexeme end (tokens sorted by bytes share a prefix in runs of the ``lcp``
  array); a group runs its prefix through the parser once (``ESet.run``, memoised per
  byte on hash-consed sets) and then recurses: the tokens of the prefix's slice are
  walked from the new set's pairs, from byte ``q`` on. A group of a few candidates
  runs them one by one instead. A regex is one lexeme that nothing follows: no
  crossings are collected.

The set's mask (packed int32 words, ``TokenMasker.bitmask``'s layout) is cached on
the set; ``Allowed.words`` hands it to ``TokenMasker`` (one copy, ~13 us on
o200k_base). EOS is added when the start rule is complete (``can_end``).

Vocabularies that cannot spell every byte (WordPiece: BERT has no space, no
uppercase in the uncased model) restrict every terminal to the characters the
vocabulary spells as single tokens (``_Walker.alphabet``); a byte-complete
vocabulary (byte-level BPE, byte fallback) restricts nothing. The masks are exact
when every character of every token is itself spellable (true of the vocabularies
tested); otherwise they can only refuse more, never allow a dead end.

Cost (``bench/grammar.py``, o200k_base): the walker, once per vocabulary index
(~0.2 s: the flattened bytes, ~B bytes plus 24 bytes per token, and the ``lcp``
array); compile O(grammar) (``automaton``; 1-7 ms for the bench's regexes). A walk is
O(the alive tokens' alive bytes): 2-5 ms for a narrow state, 20-35 ms for one that
takes nearly every token (``[^"]*``), then a dict hit. A regex's new DFA state costs
one walk; a grammar's new parser state costs its pairs' cached walks plus the
crossing groups (10-60 ms when tokens hold many lexeme ends: runs of spaces under
``%ignore``, ``------`` under unary minus, each level a new Earley set), and its
first state warms every walk it reaches (0.1-1.5 s). Tried and measured on the
arithmetic grammar's random walks (p90 of a new state): running every crossing
candidate through the parser, 230 ms; grouping every group, 130 ms; the kept mix
(groups, and a few candidates one by one from their group's prefix), 60 ms. What
would close the gap: the walks and the Earley steps in compiled code (issue 18), and
masks cached across parser states that differ only below the top of their stacks
(xgrammar's context-independent tokens). Memory: a walk's ended ranks and crossing
groups per (pair, slice); the sets a compiled grammar has reached (held while
reachable from its start set; ``_CACHE_SIZE`` compiled grammars per vocabulary).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, TypeVar

import numpy as np
import numpy.typing as npt

from ...errors import TokstreamError, UnsupportedGrammarError
from ...vocab import PerIndex, VocabIndex
from ..bitmask import pack_bitmask
from ..constraint import Allowed, Constraint, check_id
from ..healing import Healing
from ..utf8 import ACCEPT, REJECT, describe_invalid, states_along
from .automaton import Dfa
from .charset import normalize
from .earley import ESet, Grammar

if TYPE_CHECKING:
    from ...tokenizer import Tokenizer

__all__ = ["GrammarConstraint", "grammar_constraint", "regex_constraint"]

Int32Array = npt.NDArray[np.int32]
IntpArray = npt.NDArray[np.intp]

#: At most this many crossing candidates are run one by one; more are grouped by
#: the prefix up to the lexeme end and walked per group (module notes).
_FEW_CROSSINGS: Final = 8
#: At most this many crossing candidates of a walk are grouped in Python.
_FEW_GROUPED: Final = 64
#: Compiled grammars kept per vocabulary index (a server reuses a few patterns).
_CACHE_SIZE: Final = 64


class _Walker:
    """Per vocabulary index: the text tokens' bytes flattened in sorted order, for
    numpy walks through a DFA (module notes), and the spellable alphabet."""

    def __init__(self, index: VocabIndex) -> None:
        self.n_vocab = index.n_vocab
        self.extensions = index.extensions
        self.order: IntpArray = index.order.astype(np.intp)
        data = [index.token_bytes[i] for i in self.order]
        self.data = data
        n = len(data)
        self.lens: IntpArray = np.fromiter((len(b) for b in data), dtype=np.intp, count=n)
        self.offs: IntpArray = np.zeros(n, dtype=np.intp)
        if n > 1:
            np.cumsum(self.lens[:-1], out=self.offs[1:])
        self.flat = np.frombuffer(b"".join(data), dtype=np.uint8)
        # Every rank, longest token first (walks slice off the tokens that end).
        self.by_length: IntpArray = np.argsort(-self.lens, kind="stable").astype(np.intp)
        self.alphabet = _spellable(index)
        # lcp[r]: the bytes token r shares with token r - 1 (sorted order), so tokens
        # sharing a q-byte prefix are the runs with lcp >= q.
        lcp = np.zeros(n, dtype=np.intp)
        if n > 1:
            idx = np.arange(1, n)
            k = 0
            while idx.size:
                a, b = idx - 1, idx
                ok = (self.lens[a] > k) & (self.lens[b] > k)
                idx = idx[ok]
                same = self.flat[self.offs[idx - 1] + k] == self.flat[self.offs[idx] + k]
                idx = idx[same]
                lcp[idx] += 1
                k += 1
        self.lcp = lcp

    def walk(
        self, dfa: Dfa, state: int, lo: int, hi: int, off: int, *, crossings: bool = True
    ) -> tuple[IntpArray, IntpArray, IntpArray]:
        """The tokens of ranks ``[lo, hi)`` (all of them extend the same ``off``
        bytes) walked through ``dfa`` from ``state`` starting at byte ``off``:
        ``(ranks alive to their end, crossing ranks, crossing positions)``, a
        crossing being an accepting state strictly inside the token (module notes;
        none collected with ``crossings=False``).

        The tokens go longest first, so those that end at a step are a tail (a
        slice, not a boolean selection); only tokens that die are compacted out."""
        trans, accepting, lens, flat, offs = dfa.trans, dfa.accepting, self.lens, self.flat, self.offs
        ended: list[IntpArray] = []
        row = trans[state]
        if off == 0 and lo == 0 and hi == len(lens):
            idx = self.by_length
        else:
            idx = np.arange(lo, hi, dtype=np.intp)
            if off and idx.size and lens[lo] == off:
                ended.append(idx[:1])  # the token that is exactly the prefix (sorted first)
                idx = idx[1:]
            idx = idx[np.argsort(-lens[idx], kind="stable")]
        pos = offs[idx] + off  # each token's next byte in `flat`
        st = row[flat[pos]].astype(np.intp)
        alive = st >= 0
        idx, st, pos = idx[alive], st[alive], pos[alive]
        neg = -lens[idx]  # ascending: the lengths descending
        table = trans.reshape(-1)  # state s, byte b -> table[s * 256 + b]
        cross_r: list[IntpArray] = []
        cross_q: list[IntpArray] = []
        p = off + 1
        while idx.size:
            k = int(np.searchsorted(neg, -p))  # how many are longer than p
            if k < idx.size:
                ended.append(idx[k:])
                idx, st, neg, pos = idx[:k], st[:k], neg[:k], pos[:k]
                if not k:
                    break
            acc = accepting[st] if crossings else None
            if acc is not None and acc.any():
                cross_r.append(idx[acc])
                cross_q.append(np.full(int(acc.sum()), p, dtype=np.intp))
            pos += 1
            st <<= 8
            st += flat[pos]
            st = table[st].astype(np.intp)
            alive = st >= 0
            if not alive.all():
                idx, st, neg, pos = idx[alive], st[alive], neg[alive], pos[alive]
            p += 1
        empty = np.zeros(0, dtype=np.intp)
        return (
            np.concatenate(ended) if ended else empty,
            np.concatenate(cross_r) if cross_r else empty,
            np.concatenate(cross_q) if cross_q else empty,
        )

    def group_cuts(self, ranks: IntpArray, q: int) -> IntpArray:
        """For sorted distinct ``ranks``: the positions ``i`` where ``ranks[i]`` does
        not share its first ``q`` bytes with ``ranks[i - 1]`` (some token between
        them, or itself, has a shorter common prefix with its predecessor)."""
        if ranks.size < 2:
            return np.zeros(0, dtype=np.intp)
        span = self.lcp[1 : int(ranks[-1]) + 1]  # span[j] = lcp[j + 1]
        low = np.minimum.reduceat(span, ranks[:-1])
        return np.flatnonzero(low < q) + 1


def _spellable(index: VocabIndex) -> tuple[tuple[int, int], ...] | None:
    """The characters the vocabulary can spell (module notes): None (all) when every
    byte a UTF-8 text can hold is a one-byte token; else the characters that are
    whole tokens by themselves."""
    trie = index.trie
    if all(bytes((b,)) in trie for b in range(0xF5) if b not in (0xC0, 0xC1)):
        return None
    chars: set[int] = set()
    for data in index.token_bytes:
        if 0 < len(data) <= 4:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                continue
            if len(text) == 1:
                chars.add(ord(text))
    return normalize((c, c) for c in chars)


_walkers: Final = PerIndex(_Walker)


#: Crossing candidates of one walk, grouped by the prefix up to the lexeme end:
#: (prefix length q, the prefix's slice [lo, hi) of ranks, the candidates' ranks).
_Group = tuple[int, int, int, IntpArray]


class _Compiled:
    """A grammar compiled for one vocabulary: the parser, the walker, the walk cache
    and whether crossings can matter (not for a single lexeme)."""

    def __init__(self, grammar: Grammar, walker: _Walker, *, single_lexeme: bool) -> None:
        self.grammar = grammar
        self.walker = walker
        self.single_lexeme = single_lexeme
        self._walks: dict[tuple[int, int, int, int, int], tuple[IntpArray, list[_Group]]] = {}

    def walk(self, terminal: int, state: int, lo: int, hi: int, off: int) -> tuple[IntpArray, list[_Group]]:
        """The walker's walk, cached, with its crossing candidates grouped by prefix."""
        key = (terminal, state, lo, hi, off)
        found = self._walks.get(key)
        if found is None:
            # Two threads may both compute it: the same value, so no lock.
            w = self.walker
            ended, cr, cq = w.walk(self.grammar.dfas[terminal], state, lo, hi, off, crossings=not self.single_lexeme)
            groups: list[_Group] = []
            if self.single_lexeme:
                pass
            elif cr.size <= _FEW_GROUPED:
                # Few: group in Python (numpy's per-call cost would dominate).
                by_prefix: dict[bytes, list[int]] = {}
                for r, q in zip(cr.tolist(), cq.tolist()):
                    by_prefix.setdefault(w.data[r][:q], []).append(r)
                for prefix, members in by_prefix.items():
                    glo, ghi = w.extensions(prefix)
                    groups.append((len(prefix), glo, ghi, np.asarray(sorted(set(members)), dtype=np.intp)))
            else:
                for q in np.unique(cq).tolist():
                    rs = np.unique(cr[cq == q])
                    for part in np.split(rs, w.group_cuts(rs, q)):
                        glo, ghi = w.extensions(w.data[int(part[0])][:q])
                        groups.append((q, glo, ghi, part))
            found = self._walks[key] = (ended, groups)
        return found

    def words(self, s: ESet) -> Int32Array:
        """The packed mask of the tokens allowed after set ``s`` (EOS aside), cached."""
        cached = s.cache
        if isinstance(cached, np.ndarray):
            return cached
        w = self.walker
        allowed = np.zeros(len(w.order), dtype=np.bool_)
        self._resolve(s, allowed, 0, len(w.order), 0, set())
        mask = np.zeros(w.n_vocab, dtype=np.bool_)
        mask[w.order[allowed]] = True
        words = pack_bitmask(mask)
        s.cache = words
        return words

    def _resolve(
        self, s: ESet, allowed: npt.NDArray[np.bool_], lo: int, hi: int, off: int, seen: set[tuple[int, int, int]]
    ) -> None:
        """Mark in ``allowed`` (per rank) the tokens of ``[lo, hi)``, which share
        their first ``off`` bytes, whose remaining bytes set ``s`` (the set after those
        bytes) takes without dying. Tokens alive through one lexeme come from the
        cached walks; crossing candidates come grouped by the prefix up to the lexeme
        end, and a group recurses from the set after its prefix (one ``ESet.run`` per
        group, not per token); a small group runs its candidates one by one."""
        groups: list[_Group] = []
        for terminal, state in s.pairs:
            ended, g = self.walk(terminal, state, lo, hi, off)
            allowed[ended] = True
            groups.extend(g)
        data = self.walker.data
        for q, glo, ghi, cands in groups:
            todo = cands[~allowed[cands]]
            if not todo.size:
                continue
            nxt = s.run(data[glo][off:q])  # the group's shared prefix, once
            if nxt is None:
                continue
            if todo.size <= _FEW_CROSSINGS:
                for t in todo.tolist():
                    if nxt.run(data[t][q:]) is not None:
                        allowed[t] = True
                continue
            # The same set and group via another pair or lexeme split: once.
            key = (id(nxt), glo, q)
            if key not in seen:
                seen.add(key)
                self._resolve(nxt, allowed, glo, ghi, q, seen)


#: A grammar constraint's value: (the Earley set, whether EOS was accepted).
_GState = tuple[ESet, bool]


class GrammarConstraint(Constraint[_GState]):
    """The output, as UTF-8, is a text of a regex or grammar, then ``eos_id`` if given
    (module notes). ``can_end``: the output so far is complete."""

    __slots__ = ("_compiled", "eos_id")

    def __init__(self, index: VocabIndex, compiled: _Compiled, eos_id: int | None) -> None:
        super().__init__(index, (compiled.grammar.initial, False))
        self._compiled = compiled
        self.eos_id = eos_id

    def _allowed(self, value: _GState) -> Allowed:
        s, ended = value
        if ended or self._done(value):
            return Allowed(everything=True)
        ids = (self.eos_id,) if s.can_end and self.eos_id is not None else ()
        return Allowed(everything=False, ids=ids, words=self._compiled.words(s))

    def _step(self, value: _GState, token_id: int) -> _GState | None:
        s, ended = value
        if ended or self._done(value):
            return value
        if token_id == self.eos_id:
            return (s, True) if s.can_end else None
        data = self.index.token_bytes[token_id]
        if not data:
            return None  # a special token, or an id without text
        nxt = s.run(data)
        return None if nxt is None else (nxt, False)

    def _done(self, value: _GState) -> bool:
        s, ended = value
        # Without an EOS id, a complete output that nothing can extend ends it.
        return ended or (self.eos_id is None and s.can_end and not s.scans)

    def _can_end(self, value: _GState) -> bool:
        return value[0].can_end


class _Compiler:
    """Per vocabulary index: an LRU of compiled grammars keyed by their source."""

    def __init__(self, index: VocabIndex) -> None:
        self.walker = _walkers(index)
        self._lru: OrderedDict[tuple[object, ...], _Compiled] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[object, ...], build: Callable[[_Walker], _Compiled]) -> _Compiled:
        with self._lock:
            found = self._lru.get(key)
            if found is not None:
                self._lru.move_to_end(key)
                return found
        found = build(self.walker)
        with self._lock:
            self._lru[key] = found
            while len(self._lru) > _CACHE_SIZE:
                self._lru.popitem(last=False)
        return found


_compilers: Final = PerIndex(_Compiler)


def _prefix_bytes(prefix: bytes | Healing) -> bytes:
    """The raw bytes the output must start with, checked as a UTF-8 continuation of
    the kept prompt (a ``Healing`` may start inside a character)."""
    if isinstance(prefix, Healing):
        state, data = prefix.utf8_state, prefix.prefix
    elif isinstance(prefix, (bytes, bytearray)):
        state, data = ACCEPT, bytes(prefix)
    else:
        raise TypeError(f"prefix must be bytes or a Healing, not {type(prefix).__name__}")
    end = states_along(state, data)[-1]
    if end == REJECT:
        raise TokstreamError(f"the prefix {data!r} is not valid UTF-8: {describe_invalid(state, data)}")
    if end != ACCEPT:
        raise TokstreamError(
            f"the prefix {data!r} ends inside a character, so no text of the grammar can follow it; "
            "pass whole characters"
        )
    return data


def _constraint(
    tok: Tokenizer,
    key: tuple[str, str],
    build: Callable[[tuple[tuple[int, int], ...] | None, bytes], tuple[Grammar, bool]],
    eos_id: int | None,
    prefix: bytes | Healing,
) -> GrammarConstraint:
    index = tok.vocab.index
    if eos_id is not None:
        eos_id = check_id(eos_id, tok.name, index.n_vocab)
    data = _prefix_bytes(prefix)
    what = "pattern" if key[0] == "regex" else "grammar"

    def compile_for(walker: _Walker) -> _Compiled:
        grammar, single = build(walker.alphabet, data)
        return _Compiled(grammar, walker, single_lexeme=single)

    compiled = _bounded(lambda: _compilers(index).get((*key, data), compile_for), what)
    return GrammarConstraint(index, compiled, eos_id)


T = TypeVar("T")


def _bounded(work: Callable[[], T], what: str) -> T:
    """``work()``, with Python's recursion limit (the parsers and the automaton builder
    recurse once per nesting level) reported as an ``UnsupportedGrammarError``."""
    try:
        return work()
    except RecursionError as e:
        raise UnsupportedGrammarError(
            f"the {what} nests too deeply for the parser (Python's recursion limit); flatten it"
        ) from e


def regex_constraint(
    tok: Tokenizer, pattern: str, *, eos_id: int | None = None, prefix: bytes | Healing = b""
) -> GrammarConstraint:
    """A constraint: the output's bytes, decoded as UTF-8, fully match ``pattern``
    (Python ``re`` syntax and semantics for ``str`` patterns, regular constructs only:
    ``regex.parse_regex``), then ``eos_id`` if given. ``prefix`` (bytes, or a
    ``Healing`` from ``heal``) is reproduced first; the pattern applies after it.

    Non-regular constructs raise ``UnsupportedGrammarError`` naming the construct and
    its offset; a pattern no text the vocabulary can spell matches raises
    ``TokstreamError``.

    >>> import tokstream
    >>> tok = tokstream.load("cl100k_base")
    >>> c = regex_constraint(tok, r"[0-9]{4}-[0-9]{2}", eos_id=100257)
    >>> c.accept(tok.encode("2024")[0]), c.accept(tok.encode("-12")[0]), c.can_end
    (True, False, False)
    """
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a str, not {type(pattern).__name__}")
    from .regex import parse_regex

    def build(alphabet: tuple[tuple[int, int], ...] | None, data: bytes) -> tuple[Grammar, bool]:
        tree = parse_regex(pattern)  # here, so a cached pattern is not parsed again
        g = Grammar({"start": (("$regex",),)}, {"$regex": tree}, "start", alphabet=alphabet, prefix=data)
        return g, not data  # one lexeme, unless a prefix comes first

    return _constraint(tok, ("regex", pattern), build, eos_id, prefix)


def grammar_constraint(
    tok: Tokenizer, grammar: str, *, eos_id: int | None = None, prefix: bytes | Healing = b""
) -> GrammarConstraint:
    """A constraint: the output, as UTF-8, is a text of the Lark-style context-free
    ``grammar`` (``lark.parse_lark``: rules, ``"literals"``, ``/regex/`` terminals,
    ``| * + ? ( ) [ ]``, named terminals, ``%ignore``, ``%import common``), starting at
    rule ``start``, then ``eos_id`` if given. ``prefix`` is reproduced first.

    Unknown syntax raises ``UnsupportedGrammarError`` with its line and column.

    >>> import tokstream
    >>> tok = tokstream.load("cl100k_base")
    >>> c = grammar_constraint(tok, 'start: "[" [start ("," start)*] "]"')
    >>> [c.accept(i) for i in tok.encode("[[],[[]]]")], c.can_end
    ([True, True, True, True, True], True)
    """
    if not isinstance(grammar, str):
        raise TypeError(f"grammar must be a str, not {type(grammar).__name__}")
    from .lark import parse_lark

    def build(alphabet: tuple[tuple[int, int], ...] | None, data: bytes) -> tuple[Grammar, bool]:
        cfg = parse_lark(grammar)  # here, so a cached grammar is not parsed again
        g = Grammar(cfg.rules, cfg.terminals, cfg.start, ignore=cfg.ignore, alphabet=alphabet, prefix=data)
        return g, False

    return _constraint(tok, ("lark", grammar), build, eos_id, prefix)

"""Regex and grammar constraints: exact token masks from the Earley sets of ``earley``.

``regex_constraint(tok, pattern)`` and ``grammar_constraint(tok, grammar)`` return
``Constraint``s whose state is an Earley set (``earley.ESet``) plus "EOS taken". A
token is allowed iff the set after its bytes is not dead, which (``earley``) is iff
some continuation completes a valid output: nothing less, nothing more, at byte
level, tokens ending inside a UTF-8 character included.

The mask of a set is built from its *scan pairs* ``(terminal, DFA state)``:

- *Walks* (``walker.Walker.walk``, from the root cached per pair for the compiled
  grammar): the tokens' bytes below a node of the vocabulary's byte trie run
  through the terminal's DFA from that state at once, in numpy, one trie depth at
  a time (dense over a depth's range when most of it is alive, else over the alive
  frontier). A token alive to its end is allowed by this pair alone (the lexeme
  goes on: no parser needed); an alive node in an accepting state that has
  children is a *crossing*: a lexeme may end there, inside the tokens below it.
- *Crossings*: only they need the parser. A lexeme that ends at a crossing ends in
  some accepting DFA state; the parser takes that end once per (pair, state)
  (``ESet.after_lexeme``: the set's scans of that pair moved to that state; exact,
  as a set is the union of what its scans derive), so every crossing where a string
  closes (``",``, ``"}``, ``"]`` ...) shares one new set. The tokens below all the
  crossings that share a set are then walked from its pairs at once
  (``Walker.walk_below``), recursively; crossings whose tokens are all allowed
  already are dropped first (``Walker.refused``). The new set's own pair for the
  lexeme going on (the moved scans, in the end state) is skipped there: the walk
  that found the crossing goes on below it through the same DFA states and finds
  the same later crossings, whose sets are the same (``after_lexeme`` of the moved
  scans). Walking it again made a run of JSON whitespace (20 states, each
  accepting) 20 nested sets, each walking the rest of the run again.
  A regex is one lexeme that nothing follows: no crossings are collected.

The set's mask (packed int32 words, ``TokenMasker.bitmask``'s layout) is cached on
the set; ``Allowed.words`` hands it to ``TokenMasker`` (one copy, ~13 us on
o200k_base). EOS is added when the start rule is complete (``can_end``).

Vocabularies that cannot spell every byte (WordPiece: BERT has no space, no
uppercase in the uncased model) restrict every terminal to the characters the
vocabulary spells as single tokens (``Walker.alphabet``); a byte-complete
vocabulary (byte-level BPE, byte fallback) restricts nothing. The masks are exact
when every character of every token is itself spellable (true of the vocabularies
tested); otherwise they can only refuse more, never allow a dead end.

Cost: the walker's trie, once per vocabulary index (~0.3 s, 28 MB: ``walker``);
compile O(grammar) (``automaton``). A walk in the compiled core costs a few ns per
alive trie node (~10 us for a number's 1,110 digit tokens on Llama 3, where the pure
walk took ~3 ms); the pure walk ~4 ms for a state that takes nearly every token
(``[^"]*``) and 0.1-1 ms for a narrow one. A new parser state costs its pairs' walks
plus, per (pair, end state) of its crossings, one ``after_lexeme`` and one walk
below those crossings. History of the crossings (pooled grammar p99 on the bench):
every crossing candidate through the parser, 230 ms; then groups of candidates
sharing a prefix, 130 ms; then the trie with up to 512 candidates run one by one
through ``ESet.run`` and the rest walked per crossing, ~30 ms and 11-13 ms after
tuning; replaced (2026-12-07) by one set per lexeme end state and one walk for all
the crossings sharing it, with the walk in C: on a Glaive schema with free
additional properties the mean mask went 4.8 ms -> 1.7 ms (2.7M ``ESet.run`` calls
over 4,564 masks -> none). What would close the rest: the Earley steps in compiled
code (issue 18), and masks cached across parser states that differ only below the
top of their stacks (xgrammar's context-independent tokens). Memory: a root
walk's ended ranks and crossing arrays per pair; the sets a compiled grammar has
reached (held while reachable from its start set; ``_CACHE_SIZE`` compiled
grammars per tokenizer fingerprint, ``compile_cache``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final, TypeVar

import numpy as np
import numpy.typing as npt

from ...errors import TokstreamError, UnsupportedGrammarError
from ...vocab import PerIndex, VocabIndex
from ..bitmask import pack_bitmask
from ..compile_cache import CompileCache, PerFingerprint
from ..constraint import Allowed, Constraint, check_id
from ..healing import Healing
from ..utf8 import ACCEPT, REJECT, describe_invalid, states_along
from .earley import ESet, Grammar
from .walker import Crossings, Walker

if TYPE_CHECKING:
    from ...tokenizer import Tokenizer

__all__ = ["GrammarConstraint", "constraint_from", "grammar_constraint", "regex_constraint"]

Int32Array = npt.NDArray[np.int32]
IntpArray = npt.NDArray[np.intp]

#: A single lexeme's mask with at most this many tokens is packed sparsely (``words``).
_SPARSE_PACK: Final = 2048
#: Compiled grammars kept per vocabulary index (a server reuses a few patterns), and
#: the automata's bytes they may hold together: a large JSON Schema's DFA has 10,000+
#: states at ~5 KB each (the int32 table, the walker's intp copy, the rows for
#: stepping), so a count alone let 64 of them hold gigabytes.
_CACHE_SIZE: Final = 64
_CACHE_BYTES: Final = 512 * 1024 * 1024
#: Bytes per DFA state counted against ``_CACHE_BYTES``.
_STATE_BYTES: Final = 5 * 256 * 4


_walkers: Final = PerIndex(Walker)


class _Compiled:
    """A grammar compiled for one vocabulary: the parser, the walker, the walk cache
    and whether crossings can matter (not for a single lexeme)."""

    def __init__(self, grammar: Grammar, walker: Walker, *, single_lexeme: bool) -> None:
        self.grammar = grammar
        self.walker = walker
        self.single_lexeme = single_lexeme
        self.nbytes = _STATE_BYTES * sum(d.n_states for d in grammar.dfas)
        self._walks: dict[tuple[int, int], tuple[IntpArray, Crossings]] = {}

    def walk(self, terminal: int, state: int) -> tuple[IntpArray, Crossings]:
        """The walker's walk of a pair from the trie's root, cached (below crossings,
        ``_resolve`` walks many nodes at once instead, uncached)."""
        key = (terminal, state)
        found = self._walks.get(key)
        if found is None:
            # Two threads may both compute it: the same value, so no lock.
            dfa = self.grammar.dfas[terminal]
            found = self._walks[key] = self.walker.walk(dfa, state, 0, crossings=not self.single_lexeme)
        return found

    def words(self, s: ESet) -> Int32Array:
        """The packed mask of the tokens allowed after set ``s`` (EOS aside), cached."""
        cached = s.cache
        if isinstance(cached, np.ndarray):
            return cached
        w = self.walker
        if self.single_lexeme:
            # No crossings: the union of the pairs' walks. Few tokens (inside a name,
            # a literal, a number) are packed straight into the words, skipping the
            # three vocabulary-wide passes of the dense route.
            ranks = [self.walk(t, q)[0] for t, q in s.pairs]
            total = sum(len(r) for r in ranks)
            if total <= _SPARSE_PACK:
                ids = w.order[np.concatenate(ranks)] if ranks else np.zeros(0, dtype=np.intp)
                packed = np.zeros((w.n_vocab + 31) // 32, dtype=np.uint32)
                np.bitwise_or.at(packed, ids >> 5, np.left_shift(np.uint32(1), (ids & 31).astype(np.uint32)))
                words = packed.view(np.int32)
                s.cache = words
                return words
        allowed = np.zeros(len(w.order), dtype=np.bool_)
        self._resolve(s, allowed, None, {})
        mask = np.zeros(w.n_vocab, dtype=np.bool_)
        mask[w.order[allowed]] = True
        words = pack_bitmask(mask)
        s.cache = words
        return words

    def _resolve(
        self,
        s: ESet,
        allowed: npt.NDArray[np.bool_],
        nodes: IntpArray | None,
        seen: dict[ESet, set[int]],
        covered: tuple[int, int] | None = None,
    ) -> None:
        """Mark in ``allowed`` (per rank) the tokens below the trie ``nodes`` (None:
        the root) whose remaining bytes set ``s`` (the set after each node's bytes)
        takes without dying. Tokens alive through one lexeme come from the walks of
        the set's pairs (cached from the root); at a crossing (a node where a lexeme
        may end) the parser takes the lexeme's end once per DFA state it ends in
        (``ESet.after_lexeme``), and the tokens below all the crossings that share
        that set are walked from it at once (``Walker.walk_below``), recursively.
        ``seen``: per set, the nodes already walked from it. ``covered``: a pair of
        ``s`` whose walk below ``nodes`` the caller's walk has done already (module
        notes), skipped."""
        w = self.walker
        found: list[tuple[int, int, IntpArray, IntpArray]] = []
        for terminal, state in s.pairs:
            if (terminal, state) == covered:
                continue
            if nodes is None:
                ended, c = self.walk(terminal, state)
                allowed[ended] = True
                cross, ends = c.node, c.state
            else:
                cross, ends = w.walk_below(self.grammar.dfas[terminal], state, nodes, allowed)
            if cross.size:
                found.append((terminal, state, cross, ends))
        for terminal, state, cross, ends in found:
            # Most crossings' candidates are allowed already (the lexeme goes on
            # through them): keep those with one still refused.
            keep = w.refused(cross, allowed)
            if not keep.any():
                continue
            # Grouped by end state in Python: the groups are a few nodes each, where
            # numpy's unique and one mask per state cost more than the pass.
            by_end: dict[int, list[int]] = {}
            for v, to in zip(cross[keep].tolist(), ends[keep].tolist()):
                by_end.setdefault(to, []).append(v)
            for to in sorted(by_end):
                nxt = s.after_lexeme(terminal, state, to)
                if nxt is None:
                    continue
                # The same set from the same node via another pair or lexeme split:
                # once. (The set itself is the key: a grammar may forget sets.)
                done = seen.setdefault(nxt, set())
                fresh = []
                for v in by_end[to]:
                    if v not in done:
                        done.add(v)
                        fresh.append(v)
                if fresh:
                    # The lexeme going on past ``to`` from ``nxt`` is this walk's own
                    # continuation below these crossings (the same tokens, the same
                    # later crossings and sets), unless ``nxt`` also starts a lexeme
                    # of this terminal and ``to`` is the start state.
                    skip = None if to == 0 and nxt.started >> terminal & 1 else (terminal, to)
                    self._resolve(nxt, allowed, np.array(fresh, dtype=np.intp), seen, skip)


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

    def _forced(self, value: _GState) -> bytes:
        """A byte is forced when it is the only one of the 256 after which the Earley
        set is not dead, and the set cannot end (an ending is a continuation too).
        Every set left is live (``earley``: it can reach an end), so a forced run ends
        where the output may end or branch; it stops anyway at ``_MAX_FORCED`` bytes or
        a set seen before. Exact by bytes (a vocabulary that cannot spell every
        character restricts the grammar itself: ``Walker.alphabet``); where masks
        refuse more than the bytes do, the tokens may force more than this, never less.

        Cost: per forced byte, up to 256 ``ESet.step`` calls (memoised on the set, so a
        state asked again costs dict lookups), stopping at the second live byte."""
        s, ended = value
        if ended or s.can_end:
            return b""
        out = bytearray()
        seen = {s}
        while len(out) < self._MAX_FORCED:
            only: tuple[int, ESet] | None = None
            for b in range(256):
                nxt = s.step(b)
                if nxt is not None:
                    if only is not None:
                        return bytes(out)  # two live bytes: a branch
                    only = (b, nxt)
            if only is None:
                break  # a dead set (never reached: constraint states are live)
            out.append(only[0])
            s = only[1]
            if s.can_end or s in seen:
                break
            seen.add(s)
        return bytes(out)


class _Compiler:
    """Per tokenizer fingerprint (``compile_cache.PerFingerprint``: tokenizers with equal
    fingerprints share one): the walker and the compiled grammars keyed by their source,
    an LRU within ``_CACHE_SIZE`` and ``_CACHE_BYTES`` that builds a key once however
    many threads ask together (``compile_cache.CompileCache``)."""

    def __init__(self, index: VocabIndex) -> None:
        self.walker = _walkers(index)
        self.cache: CompileCache[_Compiled] = CompileCache(_CACHE_SIZE, _CACHE_BYTES, lambda c: c.nbytes)


_compilers: Final = PerFingerprint(_Compiler)


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


def constraint_from(
    tok: Tokenizer,
    key: tuple[str, str],
    build: Callable[[tuple[tuple[int, int], ...] | None, bytes], tuple[Grammar, bool]],
    eos_id: int | None,
    prefix: bytes | Healing,
) -> GrammarConstraint:
    """A ``GrammarConstraint`` whose grammar ``build(alphabet, prefix bytes)`` makes
    (returning it and whether it is a single lexeme), compiled once per vocabulary
    and ``key`` (the kind, ``"regex"`` / ``"lark"`` / ``"json"``, and the source)."""
    index = tok.vocab.index
    if eos_id is not None:
        eos_id = check_id(eos_id, tok.name, index.n_vocab)
    data = _prefix_bytes(prefix)
    what = {"regex": "pattern", "json": "schema"}.get(key[0], "grammar")

    compiler = _compilers(tok)

    def compile_for() -> _Compiled:
        grammar, single = build(compiler.walker.alphabet, data)
        return _Compiled(grammar, compiler.walker, single_lexeme=single)

    # _bounded inside the build: the error a build leaves for the callers waiting on it
    # is already the one to raise.
    compiled = compiler.cache.get((*key, data), lambda: _bounded(compile_for, what))
    return GrammarConstraint(index, compiled, eos_id)._bind(tok)


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

    return constraint_from(tok, ("regex", pattern), build, eos_id, prefix)


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

    return constraint_from(tok, ("lark", grammar), build, eos_id, prefix)

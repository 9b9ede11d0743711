"""An Earley parser over bytes whose terminals are byte-level DFAs (``automaton``).

The language of a ``Cfg`` (``lark``) is scannerless: the strings derivable from the
start rule with every terminal replaced by any string of its regex, and the
``%ignore`` terminals allowed before, between and after terminals. Lexing is part of
parsing: a terminal's lexeme may end at any byte where its DFA accepts *or* go on,
and Earley keeps both readings, so no maximal-munch rule cuts a valid text (this is
what ``lark``'s Earley parser with ``lexer="dynamic_complete"`` accepts).

An Earley set (``ESet``) holds

- *items* ``(rule, dot, origin)``: the usual dotted rules, ``origin`` the set where
  the rule started (None inside a set: "this set");
- *scans* ``(rule, dot, origin, state)``: an item whose next symbol is terminal ``t``,
  with ``t``'s DFA in ``state`` after the bytes read of the lexeme so far.

A byte advances every scan's DFA (dead ones drop out); a scan in an accepting state
completes its terminal (the item moves past it), then prediction and completion close
the set. Nullable symbols are advanced at prediction (Aycock and Horspool), so a
completion never has to revisit its own set. The set after a byte depends only on
the scans that survive it, so sets are hash-consed on those scans (``Grammar.intern``):
reading bytes that loop a DFA state (inside a string, a number) returns the *same*
set, and whatever is cached on a set (its token mask) is reused.

Exactness rests on three facts checked at compile time: every DFA state is live
(``automaton``), every rule left is productive (unproductive ones are dropped), and
every item of a set is reachable from the start with the bytes read. So a set with a
scan left can be completed: "not dead" is "some continuation completes the output".

Cost: a byte costs O(scans) DFA steps plus the closure of the new set (O(items x
rules per symbol)); ``ESet.step`` memoises per byte, so bytes already seen from a set
cost one dict lookup. Sets live as long as a constraint state or another set's memo
holds them (the intern table is weak). The memos would keep every set ever reached
from the start set, and a recursive grammar reaches new sets without end (each
nesting level of ``((1`` is one): ~4 KB a set, ~1,200 sets per 40-token arithmetic
output on o200k_base. So after ``MAX_SETS`` new sets a grammar clears every set's
memo (``Grammar._forget``): the sets no constraint holds are freed with their masks,
and the next visit recomputes them (a first mask's cost, once per ``MAX_SETS``).
All grammars together forget after ``MAX_SETS_ALL`` new sets: a server's compile
cache keeps dozens of grammars, and every object their sets hold is visited by each
full garbage collection, a pause that lands on whatever compile or mask runs then.
A closed set keeps its scans as a tuple, and no item set.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Mapping
from typing import Any, Final, Optional

from ...errors import TokstreamError, UnsupportedGrammarError
from .automaton import Dfa, compile_dfa
from .derivatives import Exprs
from .nodes import Alt, Node, Repeat

__all__ = ["MAX_SETS", "MAX_SETS_ALL", "ESet", "Grammar"]

#: New sets a grammar makes before it clears its memos (module notes): ~32 MB of sets.
MAX_SETS: Final = 8192
#: New sets all grammars make together before every grammar clears its memos: a
#: server's compile cache holds dozens of grammars, each with the sets its last walks
#: reached, and a full garbage collection visits every object they keep (~0.9 s
#: for 60 cached JSON Schemas' 97,000 sets, which a compile or a mask then waited on).
MAX_SETS_ALL: Final = 16384

_grammars: Final[weakref.WeakSet[Grammar]] = weakref.WeakSet()
_made_all = [0]  # new sets since every grammar last forgot (a list: one mutable cell)

#: A dotted item: (rule id, dot, origin set or None for "this set").
Item = tuple[int, int, Optional["ESet"]]
#: A scan: (rule id, dot, origin set, DFA state of the terminal after rule.rhs[dot]).
Scan = tuple[int, int, Optional["ESet"], int]


class Grammar:
    """A compiled grammar: rules over integer symbols (``>= 0`` nonterminals, ``< 0``
    terminal ``~t``), a DFA per terminal, and the parser's tables.

    ``Grammar(rules, terminals, start, ignore=(), alphabet=None, prefix=b"")``:
    ``rules`` maps a nonterminal name to its alternatives (tuples of symbol names; a
    name in ``terminals`` is a terminal); ``terminals`` maps names to regex trees;
    ``ignore`` names terminals that may appear before, between and after terminals;
    ``alphabet`` restricts every terminal to characters the vocabulary can spell;
    ``prefix`` is raw bytes the output starts with, before the start rule;
    ``build_dfa`` makes the terminals' automata (the eager oracle in tests).
    """

    def __init__(
        self,
        rules: Mapping[str, tuple[tuple[str, ...], ...]],
        terminals: Mapping[str, Node],
        start: str,
        *,
        ignore: tuple[str, ...] = (),
        alphabet: tuple[tuple[int, int], ...] | None = None,
        prefix: bytes = b"",
        build_dfa: Callable[..., Dfa | None] = compile_dfa,
    ) -> None:
        if start not in rules:
            raise UnsupportedGrammarError(f"the grammar has no rule {start!r} to start from")
        self.dfas: list[Dfa] = []
        self.terminal_names: list[str] = []
        term_id: dict[str, int] = {}

        # One expression store for all terminals: subtrees they share (an object's
        # members in each of its states' terminals) are interned once.
        exprs = Exprs(alphabet, "the pattern" if list(terminals) == ["$regex"] else "the grammar")

        by_expr: dict[int, int] = {}

        def terminal(name: str, tree: Node | Dfa) -> int:
            if isinstance(tree, Dfa):
                dfa: Dfa | None = tree
            else:
                # Terminals whose trees are the same expression (equal structure,
                # hash-consed) are one terminal: one automaton, one walk cache, one
                # scan per Earley item instead of one per copy.
                with exprs.lock:
                    e = exprs.intern(tree)
                same = by_expr.get(e)
                if same is not None:
                    term_id[name] = same
                    return ~same
                by_expr[e] = len(self.dfas)
                dfa = build_dfa(tree, alphabet, what=_what(name), exprs=exprs)
            term_id[name] = len(self.dfas)
            self.terminal_names.append(name)
            self.dfas.append(dfa if dfa is not None else _EMPTY_DFA)
            self._empty.append(dfa is None)
            return ~term_id[name]

        self._empty: list[bool] = []
        for name, tree in terminals.items():
            terminal(name, tree)
        nt_id: dict[str, int] = {name: k for k, name in enumerate(rules)}
        names = list(rules)
        ws: list[int] = []
        if ignore:
            for name in ignore:
                if name not in terminals:
                    raise UnsupportedGrammarError(f"%ignore names {name!r}, which is not a terminal")
            # One terminal for a whole run of ignored text, (I1|I2|...)+, optional
            # after every terminal: the same language as any number of ignored
            # lexemes, without the ambiguity of splitting a run of spaces (which
            # would make every space a new Earley origin).
            run = terminal("$ignore", Repeat(Alt(tuple(terminals[n] for n in ignore)), 1, None))
            nt_id["$ignore"] = len(names)
            names.append("$ignore")
            ws = [nt_id["$ignore"]]

        def symbol(name: str) -> int:
            if name in term_id:
                return ~term_id[name]
            if name in nt_id:
                return nt_id[name]
            raise UnsupportedGrammarError(f"the grammar uses {name!r}, which is neither a rule nor a terminal")

        self.rules: list[tuple[int, tuple[int, ...]]] = []
        for name, alternatives in rules.items():
            for alt in alternatives:
                rhs: list[int] = []
                for sym in alt:
                    s = symbol(sym)
                    rhs.append(s)
                    if s < 0 and ws:
                        rhs.extend(ws)  # ignorable text after every terminal
                self.rules.append((nt_id[name], tuple(rhs)))
        if ws:
            self.rules.append((ws[0], (run,)))
            self.rules.append((ws[0], ()))
        head: list[int] = []
        if prefix:
            head.append(terminal("$prefix", _bytes_dfa(prefix)))
        self.start = len(names)
        names.append("$start")
        self.rules.append((self.start, (*head, *ws, nt_id[start])))
        self.names = names
        self._prune()
        self.by_lhs: list[list[int]] = [[] for _ in names]
        for r, (lhs, _) in enumerate(self.rules):
            self.by_lhs[lhs].append(r)
        self.nullable = self._nullable()
        self._intern: weakref.WeakValueDictionary[frozenset[Scan], ESet] = weakref.WeakValueDictionary()
        self._lock = threading.Lock()
        self.max_sets = MAX_SETS
        self._made = 0  # new sets since the memos were last cleared
        self.initial = ESet.closure(self, [], [(r, 0, None) for r in self.by_lhs[self.start]])
        _grammars.add(self)

    def _prune(self) -> None:
        """Drop the rules that use an unproductive symbol (a terminal nothing can
        spell, a rule that derives no finite string); raise when the start is one."""
        productive = [False] * len(self.names)

        def usable(rhs: tuple[int, ...]) -> bool:
            return all(productive[s] if s >= 0 else not self._empty[~s] for s in rhs)

        changed = True
        while changed:
            changed = False
            for lhs, rhs in self.rules:
                if not productive[lhs] and usable(rhs):
                    productive[lhs] = changed = True
        if not productive[self.start]:
            raise TokstreamError(
                "the grammar matches no text this vocabulary can spell (every derivation needs a "
                "character no token sequence produces, or never ends)"
            )
        self.rules = [(lhs, rhs) for lhs, rhs in self.rules if productive[lhs] and usable(rhs)]

    def _nullable(self) -> list[bool]:
        nullable = [False] * len(self.names)
        changed = True
        while changed:
            changed = False
            for lhs, rhs in self.rules:
                if not nullable[lhs] and all(nullable[s] if s >= 0 else self.dfas[~s].nullable for s in rhs):
                    nullable[lhs] = changed = True
        return nullable

    def intern(self, scans: frozenset[Scan]) -> ESet | None:
        """The set whose surviving scans are ``scans`` (one object per distinct scans)."""
        if not scans:
            return None
        found = self._intern.get(scans)
        if found is None:
            with self._lock:
                found = self._intern.get(scans)
                if found is None:
                    found = ESet.closure(self, list(scans), [])
                    self._intern[scans] = found
                    self._made += 1
                    _made_all[0] += 1
                    if self._made > self.max_sets:
                        self._forget()
                    if _made_all[0] > MAX_SETS_ALL:
                        self._forget_all()
        return found

    def _forget_all(self) -> None:
        """``_forget`` in every grammar (under this one's lock). The others' locks are
        only tried: a grammar busy in another thread is skipped (no lock order, so no
        deadlock); it forgets on its own budget."""
        _made_all[0] = 0
        for g in list(_grammars):
            if g is self:
                g._forget()
            elif g._lock.acquire(blocking=False):
                try:
                    g._forget()
                finally:
                    g._lock.release()

    def _forget(self) -> None:
        """Clear every set's memo of its successors (module notes; under the lock):
        the sets no constraint state holds are freed, masks included. Results stay
        exact; a state visited again is recomputed."""
        self._made = 0
        for s in list(self._intern.values()):
            s._next.clear()


def _bytes_dfa(data: bytes) -> Dfa:
    """A DFA matching exactly ``data`` as raw bytes (a healed prompt's removed text,
    which may start inside a character)."""
    n = len(data) + 1
    rows = [[-1] * 256 for _ in range(n)]
    for i, b in enumerate(data):
        rows[i][b] = i + 1
    return Dfa.from_rows(rows, [i == n - 1 for i in range(n)])


def _what(terminal: str) -> str:
    """A terminal as a ``(size)`` refusal names it."""
    if terminal == "$regex":
        return "the pattern"
    return f"terminal {terminal!r}"


_UNSEEN: Final = object()  # ESet.step's "not memoised yet" (None means dead)
_EMPTY_DFA = _bytes_dfa(b"")  # placeholder of an empty terminal (its rules are pruned)


class ESet:
    """One Earley set (module notes). ``scans`` drive the next byte; ``can_end`` says
    the start rule is complete here; ``step(b)`` / ``run(data)`` give the next set or
    None (dead). ``cache`` holds what the constraint layer derives (its mask)."""

    __slots__ = ("__weakref__", "_next", "cache", "can_end", "grammar", "pairs", "scans", "started", "waiting")

    def __init__(self, grammar: Grammar) -> None:
        self.grammar = grammar
        # A tuple, not a set, once closed: a server holds many sets (``Grammar._forget``)
        # and every container they keep is one more object for each full collection.
        self.scans: tuple[Scan, ...] = ()
        self.waiting: dict[int, list[Item]] = {}
        self.can_end = False
        # Per byte, and per (terminal, state, state) for ``after_lexeme``.
        self._next: dict[int | tuple[int, int, int], Any] = {}
        self.cache: object = None
        self.pairs: tuple[tuple[int, int], ...] = ()
        #: The terminals whose lexemes the closure starts in this set (state 0), as
        #: bits (``1 << terminal``).
        self.started = 0

    @staticmethod
    def closure(grammar: Grammar, scans: list[Scan], seeds: list[Item]) -> ESet:
        """The set holding ``scans`` and ``seeds``, closed under prediction and
        completion."""
        s = ESet(grammar)
        rules, dfas, nullable, by_lhs = grammar.rules, grammar.dfas, grammar.nullable, grammar.by_lhs
        waiting = s.waiting
        items: set[Item] = set()
        found: set[Scan] = set()
        agenda: list[Item] = []
        started = 0

        def add(item: Item) -> None:
            if item not in items:
                items.add(item)
                agenda.append(item)

        for scan in scans:
            found.add(scan)
            r, dot, origin, state = scan
            if dfas[~rules[r][1][dot]].accepting[state]:
                add((r, dot + 1, origin))
        for item in seeds:
            add(item)
        while agenda:
            r, dot, origin = item = agenda.pop()
            lhs, rhs = rules[r]
            if dot == len(rhs):
                if lhs == grammar.start:
                    s.can_end = True
                if origin is None:
                    continue  # an empty derivation here: nullable, advanced at prediction
                for r2, d2, o2 in origin.waiting.get(lhs, ()):
                    add((r2, d2 + 1, origin if o2 is None else o2))
                continue
            sym = rhs[dot]
            if sym >= 0:
                first = sym not in waiting
                waiting.setdefault(sym, []).append(item)
                if first:
                    for r2 in by_lhs[sym]:
                        add((r2, 0, None))
                if nullable[sym]:
                    add((r, dot + 1, origin))
            else:
                found.add((r, dot, origin, 0))
                started |= 1 << ~sym
                if dfas[~sym].nullable:
                    add((r, dot + 1, origin))
        s.scans = tuple(found)
        s.pairs = tuple(sorted({(~rules[r][1][dot], state) for r, dot, _, state in found}))
        s.started = started
        return s

    def step(self, byte: int) -> ESet | None:
        """The set after one more byte, or None when no scan survives it."""
        nxt = self._next.get(byte, _UNSEEN)
        if nxt is not _UNSEEN:
            known: ESet | None = nxt
            return known
        rules, dfas = self.grammar.rules, self.grammar.dfas
        moved: set[Scan] = set()
        for r, dot, origin, state in self.scans:
            t = dfas[~rules[r][1][dot]].rows[state][byte]
            if t >= 0:
                moved.add((r, dot, self if origin is None else origin, t))
        found = self.grammar.intern(frozenset(moved))
        self._next[byte] = found
        return found

    def after_lexeme(self, terminal: int, state: int, to: int) -> ESet | None:
        """The part of ``run(data)`` that comes from this set's scans of ``terminal``
        in DFA ``state``, for bytes ``data`` that take that DFA from ``state`` to
        ``to`` (the caller's walk knows ``to``): those scans, moved to ``to``.

        Exact because a set is the closure of its scans and closure is a union of
        what each scan derives: ``run(data)`` is the union of this part and the parts
        of the other scans, which a mask walks on their own. So every crossing of one
        lexeme that ends in one DFA state shares one set (a string's closing quote
        inside ``",``, ``"}``, ``"]`` ...), where ``run`` made one per crossing.

        Cost: one pass over the scans, then ``Grammar.intern``; memoised per set."""
        key = (terminal, state, to)
        nxt = self._next.get(key, _UNSEEN)
        if nxt is not _UNSEEN:
            known: ESet | None = nxt
            return known
        rules = self.grammar.rules
        moved = {
            (r, dot, self if origin is None else origin, to)
            for r, dot, origin, q in self.scans
            if q == state and ~rules[r][1][dot] == terminal
        }
        found = self.grammar.intern(frozenset(moved))
        self._next[key] = found
        return found

    def run(self, data: bytes) -> ESet | None:
        """The set after ``data``, or None (dead)."""
        cur: ESet = self
        for b in data:
            # The memo inline: a call per byte costs more than the lookup (masks run
            # thousands of token tails through sets they have seen).
            nxt = cur._next.get(b, _UNSEEN)
            if nxt is _UNSEEN:
                nxt = cur.step(b)
            if nxt is None:
                return None
            cur = nxt
        return cur

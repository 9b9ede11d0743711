"""An independent reference for regex and grammar constraints: a character-level Earley
recognizer over a context-free grammar whose terminals are sets of characters.

It shares no code with tokstream's engine. A regex becomes such a grammar through
Python's own regex parser (``re._parser``, the tree ``re.compile`` builds on); a Lark
grammar through Lark's own compiled BNF (``lark.Lark(...).rules`` / ``.terminals``),
each terminal's regex then through ``re._parser`` again. Lark's scannerless language
(what ``parser="earley", lexer="dynamic_complete"`` accepts) is spelled out as rules:
every terminal occurrence ``T`` becomes ``T IGNORED*`` and the start symbol
``IGNORED* start``, ``IGNORED`` being the union of the ``%ignore`` terminals.

Questions answered, on bytes (the output of a token sequence):

- ``viable(data)``: some string completes ``data`` to a member of the language. Earley
  sets only hold items reachable from the start, and every unproductive symbol is
  pruned first, so a non-empty set after the last character means "viable". Bytes that
  end inside a UTF-8 character stand for the interval of code points whose encoding
  starts with them; an item may scan it if its character set meets that interval.
- ``complete(data)``: ``data`` is valid UTF-8 and a member of the language.
- ``viable_many(base, tokens)``: ``viable(base + t)`` for many ``t`` at once, by a
  depth-first walk of the tokens in sorted order that shares common prefixes and stops
  extending a prefix once it is dead.

``restrict(alphabet)`` intersects every character set with ``alphabet``: for a
vocabulary whose tokens spell exactly the strings over some alphabet (BERT), viability
over that alphabet is viability by tokens.
"""

from __future__ import annotations

import bisect
import functools
import random
import re
import re._constants as sre_c
import re._parser as sre_parse
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from helpers import fixture_tokenizer, public_token_bytes

MAX_CP = 0x10FFFF
SURROGATES = (0xD800, 0xDFFF)

#: A set of code points: sorted, disjoint, non-adjacent inclusive intervals.
CharSet = tuple[tuple[int, int], ...]
#: A grammar symbol: a nonterminal's name or a character set.
Symbol = str | CharSet


class OracleUnsupported(Exception):
    """The oracle has no rule for this construct (not regular, or a flag it lacks)."""


# -------------------------------------------------------------------- char sets


def normalize(intervals: Iterable[tuple[int, int]]) -> CharSet:
    """Sorted, merged intervals, surrogates removed (they have no UTF-8)."""
    out: list[list[int]] = []
    for lo, hi in sorted(intervals):
        if lo > hi:
            continue
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return subtract(tuple((a, b) for a, b in out), ((SURROGATES[0], SURROGATES[1]),), clean=False)


def complement(cs: CharSet) -> CharSet:
    """Every code point (surrogates aside) not in ``cs``."""
    return subtract(((0, MAX_CP),), cs)


def subtract(a: CharSet, b: CharSet, *, clean: bool = True) -> CharSet:
    """``a`` minus ``b``."""
    out: list[tuple[int, int]] = []
    for lo, hi in a:
        cur = lo
        for blo, bhi in b:
            if bhi < cur or blo > hi:
                continue
            if blo > cur:
                out.append((cur, blo - 1))
            cur = max(cur, bhi + 1)
        if cur <= hi:
            out.append((cur, hi))
    return normalize(out) if clean else tuple(out)


def intersect(a: CharSet, b: CharSet) -> CharSet:
    """``a`` and ``b``."""
    out = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


def from_chars(chars: Iterable[str]) -> CharSet:
    """The set of the given characters."""
    return normalize((ord(c), ord(c)) for c in chars)


@functools.cache
def _category(name: str) -> CharSet:
    """Python ``re``'s Unicode classes for str patterns, from the ``str`` predicates
    ``_sre`` uses (checked against ``re`` itself in the oracle's self-test)."""
    test = {
        "digit": str.isdecimal,
        "space": str.isspace,
        "word": lambda c: c.isalnum() or c == "_",
    }[name]
    return normalize((cp, cp) for cp in range(MAX_CP + 1) if test(chr(cp)))


_CATEGORIES = {
    sre_c.CATEGORY_DIGIT: ("digit", False),
    sre_c.CATEGORY_NOT_DIGIT: ("digit", True),
    sre_c.CATEGORY_SPACE: ("space", False),
    sre_c.CATEGORY_NOT_SPACE: ("space", True),
    sre_c.CATEGORY_WORD: ("word", False),
    sre_c.CATEGORY_NOT_WORD: ("word", True),
}


def _category_set(cat: Any) -> CharSet:
    if cat not in _CATEGORIES:
        raise OracleUnsupported(f"category {cat}")
    name, negated = _CATEGORIES[cat]
    cs = _category(name)
    return complement(cs) if negated else cs


def utf8_interval(partial: bytes) -> CharSet:
    """The code points whose UTF-8 encoding starts with ``partial`` (a proper prefix of
    one character's encoding), as a char set; empty when none does."""

    def enc(cp: int) -> bytes:
        return chr(cp).encode("utf-8", "surrogatepass")

    # UTF-8 keeps code point order, so those code points form one interval.
    cps = range(MAX_CP + 1)
    lo = bisect.bisect_left(cps, partial, key=enc)
    hi = bisect.bisect_right(cps, partial + b"\xff", key=enc) - 1
    if lo > hi or not enc(lo).startswith(partial) or len(enc(lo)) == len(partial):
        return ()
    return normalize([(lo, hi)])


# -------------------------------------------------------------------- grammars


@dataclass
class Grammar:
    """Productions ``name -> [rhs, ...]`` over nonterminal names and char sets."""

    start: str
    rules: dict[str, list[tuple[Symbol, ...]]] = field(default_factory=dict)
    _fresh: int = 0

    def fresh(self, hint: str) -> str:
        self._fresh += 1
        return f"_{hint}{self._fresh}"

    def add(self, name: str, rhs: Sequence[Symbol]) -> None:
        self.rules.setdefault(name, []).append(tuple(rhs))

    def restrict(self, alphabet: CharSet) -> Grammar:
        """The same grammar with every char set intersected with ``alphabet``."""
        g = Grammar(self.start, _fresh=self._fresh)
        for name, prods in self.rules.items():
            for rhs in prods:
                g.add(name, [s if isinstance(s, str) else intersect(s, alphabet) for s in rhs])
        return g


# -- regexes, from Python's own parse tree ---------------------------------------------


def _add_regex_nodes(g: Grammar, nodes: Any, dotall: bool) -> list[Symbol]:
    """The symbols of a sequence of ``re._parser`` nodes (adding rules to ``g``)."""
    seq: list[Symbol] = []
    for op, av in nodes:
        if op is sre_c.LITERAL:
            seq.append(normalize([(av, av)]))
        elif op is sre_c.NOT_LITERAL:
            seq.append(complement(normalize([(av, av)])))
        elif op is sre_c.ANY:
            seq.append(complement(()) if dotall else complement(((10, 10),)))
        elif op is sre_c.IN:
            seq.append(_class(av))
        elif op is sre_c.CATEGORY:
            seq.append(_category_set(av))
        elif op is sre_c.BRANCH:
            name = g.fresh("alt")
            for alt in av[1]:
                g.add(name, _add_regex_nodes(g, alt, dotall))
            seq.append(name)
        elif op is sre_c.SUBPATTERN:
            _group, add_flags, del_flags, sub = av
            flags = dotall
            if add_flags & ~sre_c.SRE_FLAG_DOTALL or del_flags & ~sre_c.SRE_FLAG_DOTALL:
                raise OracleUnsupported(f"flags {add_flags}/{del_flags}")
            if add_flags & sre_c.SRE_FLAG_DOTALL:
                flags = True
            if del_flags & sre_c.SRE_FLAG_DOTALL:
                flags = False
            name = g.fresh("grp")
            g.add(name, _add_regex_nodes(g, sub, flags))
            seq.append(name)
        elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT):
            lo, hi, sub = av
            item = g.fresh("item")
            g.add(item, _add_regex_nodes(g, sub, dotall))
            name = g.fresh("rep")
            if hi is sre_c.MAXREPEAT:
                tail = g.fresh("star")
                g.add(tail, [])
                g.add(tail, [item, tail])
            else:
                tail = g.fresh("opt")
                g.add(tail, [])
                for _ in range(hi - lo):
                    prev, tail = tail, g.fresh("opt")
                    g.add(tail, [])
                    g.add(tail, [item, prev])
            g.add(name, [item] * lo + [tail])
            seq.append(name)
        else:
            raise OracleUnsupported(f"{op} is not regular or not modelled")
    return seq


def _class(items: Any) -> CharSet:
    parts: list[tuple[int, int]] = []
    negate = False
    for op, av in items:
        if op is sre_c.NEGATE:
            negate = True
        elif op is sre_c.LITERAL:
            parts.append((av, av))
        elif op is sre_c.RANGE:
            parts.append(av)
        elif op is sre_c.CATEGORY:
            parts.extend(_category_set(av))
        else:
            raise OracleUnsupported(f"class item {op}")
    cs = normalize(parts)
    return complement(cs) if negate else cs


def add_regex(g: Grammar, name: str, pattern: str) -> None:
    """Add ``name -> <pattern>`` (Python ``re`` semantics, no flags but ``(?s)``)."""
    tree = sre_parse.parse(pattern)
    if tree.state.flags & ~(sre_c.SRE_FLAG_UNICODE | sre_c.SRE_FLAG_DOTALL):
        raise OracleUnsupported(f"global flags {tree.state.flags}")
    g.add(name, _add_regex_nodes(g, tree.data, bool(tree.state.flags & sre_c.SRE_FLAG_DOTALL)))


def regex_grammar(pattern: str) -> Grammar:
    """The grammar of the strings that ``re.fullmatch(pattern, s)`` accepts."""
    g = Grammar("S")
    add_regex(g, "S", pattern)
    return g


# -- Lark grammars, from Lark's own compiled BNF ----------------------------------------


def lark_grammar(text: str, start: str = "start") -> Grammar:
    """The scannerless language of a Lark grammar (module notes)."""
    import lark

    parser = lark.Lark(text, parser="earley", lexer="dynamic_complete", start=start)
    g = Grammar("S")
    ign = "IGNORED*"
    g.add(ign, [])
    for name in parser.ignore_tokens:
        g.add(ign, [f"T:{name}", ign])
    for t in parser.terminals:
        if t.pattern.flags:
            raise OracleUnsupported(f"terminal {t.name} has flags {t.pattern.flags}")
        add_regex(g, f"T:{t.name}", t.pattern.to_regexp())
    for rule in parser.rules:
        rhs: list[Symbol] = []
        for sym in rule.expansion:
            rhs += [f"T:{sym.name}", ign] if sym.is_term else [f"N:{sym.name}"]
        g.add(f"N:{rule.origin.name}", rhs)
    g.add("S", [ign, f"N:{start}"])
    return g


# -------------------------------------------------------------------- recognizer


class Oracle:
    """Earley recognizer over a ``Grammar`` (module notes)."""

    def __init__(self, grammar: Grammar) -> None:
        rules = _prune(grammar)
        self.empty = grammar.start not in rules
        prods: list[tuple[str, tuple[Symbol, ...]]] = []
        self.by_lhs: dict[str, list[int]] = {}
        for name, rhss in rules.items():
            for rhs in rhss:
                self.by_lhs.setdefault(name, []).append(len(prods))
                prods.append((name, rhs))
        self.prods = prods
        self.start = grammar.start
        # per production and dot: the char set's interval starts / ends (bisect)
        self.sets: dict[tuple[int, int], tuple[list[int], list[int]]] = {}
        for p, (_, rhs) in enumerate(prods):
            for d, s in enumerate(rhs):
                if not isinstance(s, str):
                    self.sets[p, d] = ([a for a, _ in s], [b for _, b in s])
        self.nullable = _nullable(rules)

    # -- the chart --------------------------------------------------------------------

    def _closure(self, chart: list[Any], seed: Iterable[tuple[int, int, int]]) -> Any:
        j = len(chart)
        items: set[tuple[int, int, int]] = set()
        waiting: dict[str, list[tuple[int, int, int]]] = {}
        scans: list[tuple[int, int, int]] = []
        agenda = list(seed)
        cur = (items, waiting, scans)
        while agenda:
            item = agenda.pop()
            if item in items:
                continue
            items.add(item)
            p, d, o = item
            lhs, rhs = self.prods[p]
            if d == len(rhs):
                if o == j:
                    continue  # nullable: handled when predicted (Aycock-Horspool)
                for p2, d2, o2 in chart[o][1].get(lhs, ()):
                    agenda.append((p2, d2 + 1, o2))
                continue
            sym = rhs[d]
            if isinstance(sym, str):
                first = sym not in waiting
                waiting.setdefault(sym, []).append(item)
                if first:
                    agenda.extend((q, 0, j) for q in self.by_lhs.get(sym, ()))
                if sym in self.nullable:
                    agenda.append((p, d + 1, o))
            else:
                scans.append(item)
        return cur

    def _initial(self) -> list[Any]:
        chart: list[Any] = []
        if not self.empty:
            chart.append(self._closure(chart, [(q, 0, 0) for q in self.by_lhs[self.start]]))
        return chart

    def _scan(self, chart: list[Any], cp: int) -> bool:
        """Advance ``chart`` by one character; False (chart unchanged) when it dies."""
        seed = []
        for p, d, o in chart[-1][2]:
            starts, ends = self.sets[p, d]
            k = bisect.bisect_right(starts, cp) - 1
            if k >= 0 and cp <= ends[k]:
                seed.append((p, d + 1, o))
        if not seed:
            return False
        chart.append(self._closure(chart, seed))
        return True

    def _meets(self, chart: list[Any], cs: CharSet) -> bool:
        """Whether some item of the last set may scan a character of ``cs``."""
        for p, d, _ in chart[-1][2]:
            starts, ends = self.sets[p, d]
            for lo, hi in cs:
                k = bisect.bisect_right(starts, hi) - 1
                if k >= 0 and ends[k] >= lo:
                    return True
        return False

    def _accepting(self, chart: list[Any]) -> bool:
        return any(
            o == 0 and self.prods[p][0] == self.start and d == len(self.prods[p][1]) for p, d, o in chart[-1][0]
        ) or (len(chart) == 1 and self.start in self.nullable)

    # -- questions ---------------------------------------------------------------------

    def _feed(self, chart: list[Any], pending: bytes, data: bytes) -> tuple[bool, bytes]:
        """Feed bytes; returns (alive, pending bytes of an open character)."""
        for b in data:
            pending += bytes([b])
            try:
                ch = pending.decode("utf-8")
            except UnicodeDecodeError:
                cs = utf8_interval(pending)
                if not cs or not self._meets(chart, cs):
                    return False, pending
                continue
            pending = b""
            if not self._scan(chart, ord(ch)):
                return False, pending
        return True, pending

    def viable(self, data: bytes) -> bool:
        """Some continuation of ``data`` is in the language."""
        chart = self._initial()
        return bool(chart) and self._feed(chart, b"", data)[0]

    def complete(self, data: bytes) -> bool:
        """``data`` is in the language."""
        chart = self._initial()
        if not chart:
            return False
        alive, pending = self._feed(chart, b"", data)
        return alive and not pending and self._accepting(chart)

    def viable_many(self, base: bytes, tokens: Sequence[bytes]) -> npt.NDArray[np.bool_]:
        """``viable(base + t)`` for each ``t`` of ``tokens``: a walk of the tokens in
        sorted order that shares common prefixes and jumps past every token starting
        with a dead prefix."""
        out = np.zeros(len(tokens), dtype=bool)
        chart = self._initial()
        if not chart:
            return out
        alive, pending = self._feed(chart, b"", base)
        if not alive:
            return out
        order, keys = _sorted(tokens)
        # path[k]: (chart length, pending bytes) after the first k bytes of the token
        path: list[tuple[int, bytes]] = [(len(chart), pending)]
        prev = b""
        k = 0
        while k < len(keys):
            t = keys[k]
            common = 0
            limit = min(len(prev), len(t), len(path) - 1)
            while common < limit and prev[common] == t[common]:
                common += 1
            del path[common + 1 :]
            n, pend = path[-1]
            del chart[n:]
            ok = True
            for j in range(common, len(t)):
                ok, pend = self._feed(chart, pend, t[j : j + 1])
                if not ok:
                    # every token starting with t[: j + 1] is dead: jump past them
                    k = bisect.bisect_left(keys, _successor(t[: j + 1]), lo=k + 1)
                    del chart[path[-1][0] :]
                    prev = t[:j]
                    break
                path.append((len(chart), pend))
            if ok:
                out[order[k]] = True
                prev = t
                k += 1
        return out


_SORTED: dict[int, tuple[Sequence[bytes], list[int], list[bytes]]] = {}


def _sorted(tokens: Sequence[bytes]) -> tuple[list[int], list[bytes]]:
    """The tokens' indices in byte order and the sorted tokens (kept per large table)."""
    hit = _SORTED.get(id(tokens))
    if hit is not None and hit[0] is tokens:
        return hit[1], hit[2]
    order = sorted(range(len(tokens)), key=tokens.__getitem__)
    keys = [tokens[i] for i in order]
    if len(tokens) > 10_000:
        _SORTED[id(tokens)] = (tokens, order, keys)  # holds the table: the id stays valid
    return order, keys


def _successor(p: bytes) -> bytes:
    """The least byte string greater than every string starting with ``p``."""
    p = p.rstrip(b"\xff")
    return p[:-1] + bytes([p[-1] + 1]) if p else b"\xff" * 64


def _prune(g: Grammar) -> dict[str, list[tuple[Symbol, ...]]]:
    """Drop empty char sets, unproductive nonterminals and the productions using them."""
    productive: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, prods in g.rules.items():
            if name in productive:
                continue
            for rhs in prods:
                if all((s in productive) if isinstance(s, str) else bool(s) for s in rhs):
                    productive.add(name)
                    changed = True
                    break
    return {
        name: [rhs for rhs in prods if all((s in productive) if isinstance(s, str) else bool(s) for s in rhs)]
        for name, prods in g.rules.items()
        if name in productive
    }


def _nullable(rules: dict[str, list[tuple[Symbol, ...]]]) -> set[str]:
    out: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, prods in rules.items():
            if name not in out and any(all(isinstance(s, str) and s in out for s in rhs) for rhs in prods):
                out.add(name)
                changed = True
    return out


def regex_oracle(pattern: str, alphabet: CharSet | None = None) -> Oracle:
    """The oracle of ``re.fullmatch(pattern, ...)``, over ``alphabet`` when given."""
    g = regex_grammar(pattern)
    return Oracle(g if alphabet is None else g.restrict(alphabet))


def lark_oracle(text: str, alphabet: CharSet | None = None) -> Oracle:
    """The oracle of a Lark grammar's scannerless language, over ``alphabet`` when given."""
    g = lark_grammar(text)
    return Oracle(g if alphabet is None else g.restrict(alphabet))


def is_regular_for_oracle(pattern: str) -> bool:
    """Whether the oracle models ``pattern`` (compiles and uses no unsupported node)."""
    try:
        re.compile(pattern)
        regex_grammar(pattern)
    except (re.error, OracleUnsupported):
        return False
    return True


# -------------------------------------------------------------------- test support

#: Realistic regexes (Python ``re`` semantics: ``\d`` is any Unicode decimal digit).
REGEXES: dict[str, str] = {
    "date": r"\d{4}-\d{2}-\d{2}",
    "email": r"[a-z0-9._%+-]+@[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,6}",
    "number": r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?",
    "quoted": r'"([^"\\\n]|\\["\\nt])*"',
    "cjk": r"(東京|大阪|京都)(駅|市)?",
    "words": r"\w+( \w+){0,3}[.!?]",
}

#: Lark grammars: left-recursive arithmetic with ``%ignore``, and nested lists.
GRAMMARS: dict[str, str] = {
    "arith": r"""
start: expr
expr: expr "+" term | expr "-" term | term
term: term "*" factor | term "/" factor | factor
factor: NUMBER | "(" expr ")" | "-" factor
%import common.NUMBER
%import common.WS_INLINE
%ignore WS_INLINE
""",
    "lists": r"""
start: list
list: "[" [item ("," item)*] "]"
?item: list | NAME | STRING
NAME: /[a-z]+/
STRING: /"[^"\\]*"/
%ignore " "
""",
}

#: The tokenizers the exactness tests run on: two byte-level BPEs, SentencePiece with
#: byte fallback, and BERT's WordPiece (which cannot spell every byte).
EXACT_TIDS = (
    "o200k_base",
    "hf/llama3_tokenizer.json",
    "hf/mistral_7b_v1_tokenizer.json",
    "hf/bert_minilm_tokenizer.json",
)

#: Each tokenizer's end-of-sequence special token.
EOS_NAMES = {
    "o200k_base": "<|endoftext|>",
    "hf/llama3_tokenizer.json": "<|end_of_text|>",
    "hf/mistral_7b_v1_tokenizer.json": "</s>",
    "hf/bert_minilm_tokenizer.json": "[SEP]",
}


def token_alphabet(table: Sequence[bytes]) -> CharSet | None:
    """None when the tokens spell every byte string (each byte is a token), so
    viability by bytes is viability by tokens. Otherwise the characters that are
    tokens on their own, after checking that every token is a string of them: the
    tokens then spell exactly the strings over that alphabet (BERT)."""
    have = set(table)
    if all(bytes([b]) in have for b in range(256)):
        return None
    singles = {t.decode() for t in table if t and len(t.decode("utf-8", "replace")) == 1}
    for t in table:
        missing = set(t.decode("utf-8")) - singles
        assert not missing, f"token {t!r} uses characters {missing} that are no token: spelling is not per character"
    return from_chars(singles)


#: Compare the whole vocabulary when we allow fewer ids than this.
FULL_BELOW = 20_000
#: Otherwise this many random ids, and as many of the allowed ones.
SAMPLE = 2_000

_ALPHABETS: dict[str, CharSet | None] = {}


def alphabet_of(tid: str) -> CharSet | None:
    """The tokenizer's spelling alphabet (``token_alphabet``), computed once."""
    if tid not in _ALPHABETS:
        _ALPHABETS[tid] = token_alphabet(public_token_bytes(tid))
    return _ALPHABETS[tid]


def eos_of(tid: str) -> int:
    """The tokenizer's EOS id."""
    return int(fixture_tokenizer(tid).special_tokens[EOS_NAMES[tid]])


def check_state(c: Any, oracle: Oracle, tid: str, out: bytes, eos: int | None, rng: random.Random, full: bool) -> None:
    """Assert that ``c``'s allowed ids at output ``out`` are what the oracle says (on
    every id, or on a sample: module notes) and that ``can_end`` is right."""
    __tracebackhide__ = True
    table = public_token_bytes(tid)
    n = len(table)
    ours = np.zeros(n, dtype=bool)
    allowed = c.allowed_ids()
    ours[allowed] = True
    complete = oracle.complete(out)
    assert bool(c.can_end) == complete, f"{tid}: can_end is {c.can_end}, oracle says {complete}, output {out!r}"
    if full or len(allowed) < FULL_BELOW:
        ids = np.arange(n)
    else:
        ids = np.unique(np.concatenate([rng.sample(range(n), SAMPLE), rng.sample(list(allowed), SAMPLE)]))
    tokens = table if len(ids) == n else [table[i] for i in ids]  # the whole table: its sort is cached
    want = oracle.viable_many(out, tokens) & np.array([bool(t) for t in tokens])
    if eos is not None:
        want[ids == eos] = complete
    got = ours[ids]
    bad = np.flatnonzero(got != want)
    if len(bad):
        lines = [
            f"id {int(ids[k])} {table[int(ids[k])]!r}: ours {'allowed' if got[k] else 'refused'}, "
            f"oracle {'viable' if want[k] else 'not viable'}"
            for k in bad[:8]
        ]
        raise AssertionError(f"{tid}, output {out!r}: {len(bad)} ids differ\n  " + "\n  ".join(lines))


def walk(
    c: Any,
    oracle: Oracle,
    tid: str,
    seed: int,
    *,
    eos: int | None,
    steps: int,
    out: bytes = b"",
    p_eos: float = 0.4,
) -> tuple[bytes, bool]:
    """A seeded random walk of allowed tokens, every state checked (``check_state``);
    takes EOS with probability ``p_eos`` once the output can end. Returns the output
    and whether EOS ended it."""
    rng = random.Random(seed)
    table = public_token_bytes(tid)
    for step in range(steps):
        check_state(c, oracle, tid, out, eos, rng, full=step == 0)
        allowed = [int(i) for i in c.allowed_ids() if i != eos]
        if eos is not None and c.can_end and (not allowed or rng.random() < p_eos):
            assert c.accept(eos)
            return out, True
        if not allowed:
            break
        t = rng.choice(allowed)
        assert c.accept(t), f"{tid}: accept({t}) refused an allowed id at {out!r}"
        out += table[t]
    return out, False

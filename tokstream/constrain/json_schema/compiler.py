"""A JSON Schema (read by ``schema``) compiled to the grammar engine's rules and
terminals (``grammar.earley.Grammar``).

A schema's value compiles to a *part*: a sequence of regex trees (``nodes``) and
rule names. Everything that is regular stays one tree, so a schema without a
recursive ``$ref`` or a free-form value is one terminal, one DFA: the regex
constraint's fast path, no parser at all. Rules appear only where the language is
not regular:

- a subschema reached again while it is being compiled (recursion through ``$ref``)
  becomes a rule;
- a value the schema leaves free (``true``, ``{}``, the default
  ``additionalProperties``) is the rule ``$any`` (any JSON value: nesting is not
  regular);
- an object or array around such a part becomes rules too, one per state of its
  member automaton (below).

Objects and arrays are automata whose edges read whole members: an object's state
is (next listed property, members so far, whether a comma is due), so optional
properties in ``properties`` order, ``required``, ``additionalProperties`` /
``patternProperties`` members after them and ``minProperties`` / ``maxProperties``
are one ``nodes.Machine`` of O(properties x count bound) states; an array's state is
the item count (``prefixItems``, ``items``, ``minItems`` / ``maxItems``). When a
member holds a rule, the states become rules (right-linear: the same automaton,
read by the parser).

Whitespace (``ws``) stands after ``{``, ``[``, ``:`` and ``,``, after every member
and item, and nowhere else: none before the value or after it.

A regular part, however large, stays one terminal: its automaton is lazy
(``automaton``), so only the states a walk reaches are made; nothing is split to
keep a DFA small any more.

Cost: building the parts is linear in the schema (subschemas memoised on their
pointers; an ``enum``'s duplicates found by a hash of each value, ``_enum_key``); the
trees are interned and their states made lazily (``grammar.derivatives``). Before
the automata were lazy the time went to subset construction, and these shaped the
trees: names are spelled "fixed" (``spelling``: escaped spellings of every key letter
made key automata ~7x larger); an object with free additional members keeps its
listed members in one terminal (the automaton's rule states are cut at entries,
``automaton``), not one per state.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Sequence
from dataclasses import replace
from decimal import Decimal
from functools import partial
from typing import Any, Final, TypeVar

from ...errors import TokstreamError, UnsupportedSchemaError
from ..grammar.automaton import difference, intersect, is_empty
from ..grammar.nodes import EMPTY, NOTHING, Alt, Chars, Concat, Machine, Node, Repeat, literal
from .numbers import number_tree
from .schema import ATOMS, Norm, Schema, Sub, atom_of, string_matches
from .spelling import ANY_CHAR, json_string, json_string_trie
from .strings import format_tree, pattern_tree

__all__ = ["Compiled", "compile_schema"]

#: A part: regex trees and rule names in sequence (adjacent trees are merged).
Item = Node | str
Part = tuple[Item, ...]
DEAD: Final[Part] = (NOTHING,)
_ANY_STRING: Final = Repeat(ANY_CHAR, 0, None)
#: An integer as drafts 3 and 4 have it: no fraction, no exponent.
_PLAIN_INTEGER: Final = Concat(
    (
        Repeat(literal("-"), 0, 1),
        Alt((literal("0"), Concat((Chars(((0x31, 0x39),)), Repeat(Chars(((0x30, 0x39),)), 0, None))))),
    )
)
#: Beside a ``pattern`` or ``format``: the largest ``minLength`` compiled, and the
#: largest ``maxLength`` enforced (a larger one is enforced as this), since their
#: intersection is eager, a few states per character counted. Alone, lengths are exact.
MAX_LENGTH: Final = 1000
#: An array whose item counts go past its prefixItems by more than this is read with a
#: counter (``counted_items``) instead of one automaton state per item.
_COUNTED: Final = 8
#: Branch pairs an ``oneOf`` checks for overlap before it is read as ``anyOf``.
_MAX_ONE_OF: Final = 64

T = TypeVar("T")


def _cat(a: Node, b: Node) -> Node:
    """``a`` then ``b``, flattened (shared items stay shared objects)."""
    if a == EMPTY:
        return b
    if b == EMPTY:
        return a
    items = (*(a.items if isinstance(a, Concat) else (a,)), *(b.items if isinstance(b, Concat) else (b,)))
    return Concat(items)


def seq(*parts: Part) -> Part:
    """The parts one after another; dead if any is."""
    out: list[Item] = []
    for part in parts:
        if part == DEAD:
            return DEAD
        for item in part:
            if isinstance(item, str):
                out.append(item)
            elif out and not isinstance(out[-1], str):
                out[-1] = _cat(out[-1], item)
            elif item != EMPTY:
                out.append(item)
    return tuple(out)


K = TypeVar("K", bound=Hashable)


def _explore(
    start: K, step: Callable[[K], tuple[list[tuple[Part, K]], bool]]
) -> tuple[list[list[tuple[Part, int]]], list[bool]]:
    """The states reachable from ``start`` through ``step`` (a state's labelled edges
    to other states, and whether it accepts), numbered in the order found."""
    index = {start: 0}
    order = [start]
    edges: list[list[tuple[Part, int]]] = []
    accepting: list[bool] = []
    while len(edges) < len(order):
        out, accept = step(order[len(edges)])
        row: list[tuple[Part, int]] = []
        for part, key in out:
            if key not in index:
                index[key] = len(order)
                order.append(key)
            row.append((part, index[key]))
        edges.append(row)
        accepting.append(accept)
    return edges, accepting


def _enum_key(v: Any) -> Hashable:
    """A hashable key equal for values ``json_equal`` calls equal: numbers by exact
    value (``1``, ``1.0`` and ``1e0`` one key; a float by its shortest repr, as
    ``json_equal`` reads it), booleans apart from numbers, arrays in order, objects as
    key sets."""
    if isinstance(v, bool) or v is None:
        return ("b", v)
    if isinstance(v, int):
        return ("n", Decimal(v))
    if isinstance(v, float):
        return ("n", Decimal(repr(v)))
    if isinstance(v, str):
        return ("s", v)
    if isinstance(v, list):
        return ("l", tuple(_enum_key(x) for x in v))
    assert isinstance(v, dict)
    return ("o", frozenset((k, _enum_key(x)) for k, x in v.items()))


def _regular(part: Part) -> Node | None:
    """The part as one tree, or None when it holds a rule."""
    if any(isinstance(i, str) for i in part):
        return None
    nodes = [i for i in part if not isinstance(i, str)]
    return EMPTY if not nodes else nodes[0] if len(nodes) == 1 else Concat(tuple(nodes))


class Compiled:
    """A compiled schema: ``rules`` (name -> alternatives of symbol names),
    ``terminals`` (name -> tree) and ``start``; ``single`` when the whole schema is
    one terminal (no parser needed)."""

    def __init__(self, rules: dict[str, tuple[tuple[str, ...], ...]], terminals: dict[str, Node], single: bool) -> None:
        self.rules = rules
        self.terminals = terminals
        self.start = "start"
        self.single = single


class _Compiler:
    def __init__(self, schema: Schema, ws: Node) -> None:
        self.schema = schema
        self.ws = ws
        self.rules: dict[str, list[Part]] = {}
        self.done: dict[tuple[str, ...], Part] = {}
        self.active: set[tuple[str, ...]] = set()
        self.recursive: set[tuple[str, ...]] = set()
        self.spell_memo: dict[int, Node] = {}
        self.fixed_memo: dict[int, Node] = {}
        self.keep: list[Node] = []  # trees whose ids key spell_memo stay alive

    # ------------------------------------------------------------ combinators

    def alt(self, parts: Sequence[Part]) -> Part:
        """Any one of the parts (dead ones dropped); one tree when all are regular,
        else a new rule."""
        live = [p for p in parts if p != DEAD]
        if not live:
            return DEAD
        if len(live) == 1:
            return live[0]
        nodes = [_regular(p) for p in live]
        trees = tuple(n for n in nodes if n is not None)
        if len(trees) == len(live):
            return (Alt(trees),)
        # The regular alternatives as one terminal: one DFA, one scan, not one each.
        rest = [p for p, n in zip(live, nodes) if n is None]
        name = f"r{len(self.rules)}"
        self.rules[name] = [*([(trees[0] if len(trees) == 1 else Alt(trees),)] if trees else []), *rest]
        return (name,)

    def automaton(self, edges: list[list[tuple[Part, int]]], accepting: list[bool]) -> Part:
        """The strings of an automaton whose edges read parts: a ``Machine`` when every
        label is regular. Else one rule per *entry* (the start and the targets of the
        edges that hold a rule): from an entry, the regular edges run as one tree up to
        an accepting state or to the source of a rule edge, so the listed members of an
        object stay one terminal however free its additional members are."""
        labels = [[(p, t) for p, t in row if p != DEAD] for row in edges]
        trees = [[(_regular(p), t) for p, t in row] for row in labels]
        if all(n is not None for row in trees for n, _ in row):
            machine = Machine(tuple(tuple((n, t) for n, t in row if n is not None) for row in trees), tuple(accepting))
            return (machine,)
        entries = [0, *sorted({t for row, tr in zip(labels, trees) for (_, t), (n, _) in zip(row, tr) if n is None})]
        base = len(self.rules)
        names = {e: f"r{base + k}" for k, e in enumerate(entries)}
        for e in entries:
            # The states the regular edges reach from e, numbered from e (0).
            order = [e]
            index = {e: 0}
            for s in order:
                for n, t in trees[s]:
                    if n is not None and t not in index:
                        index[t] = len(order)
                        order.append(t)
            rows = tuple(tuple((n, index[t]) for n, t in trees[s] if n is not None) for s in order)

            def upto(u: int, rows: tuple[tuple[tuple[Node, int], ...], ...] = rows) -> Part:
                if len(rows) == 1 and not rows[0]:
                    return ()
                return (Machine(rows, tuple(k == u for k in range(len(rows)))),)

            alternatives: list[Part] = [upto(index[s]) for s in order if accepting[s]]
            for s in order:
                for (p, t), (n, _) in zip(labels[s], trees[s]):
                    if n is None:
                        alternatives.append(seq(upto(index[s]), p, (names[t],)))
            self.rules[names[e]] = alternatives
        return (names[0],)

    def string_tree(self, value: Node, *, fixed: bool = False) -> Node:
        """The JSON string literals of the values of ``value`` (``fixed``: a name or
        an enum string, ``spelling.spell``)."""
        self.keep.append(value)
        return json_string(value, self.fixed_memo if fixed else self.spell_memo, fixed=fixed)

    # ------------------------------------------------------------ values

    def value(self, subs: Sequence[Sub]) -> Part:
        """The part of a conjunction of subschemas (empty: any value), memoised on
        their pointers. A conjunction reached again while it is being compiled is a
        recursion (through ``$ref``, or ``allOf`` around one): it becomes a rule."""
        if not subs:
            return self.any()
        if len(subs) == 1:
            n = self.schema.normalize(subs[0])
            if n.ref is not None and n.order == ["ref"]:
                subs = [Sub(self.schema.get(n.ref), n.ref)]  # a bare $ref: its target
        key = tuple(s.ptr for s in subs)
        found = self.done.get(key)
        if found is not None:
            return found
        name = "v:" + "&".join(key)
        if key in self.active:
            self.recursive.add(key)
            return (name,)
        self.active.add(key)
        try:
            merged = self.schema.flatten(self.schema.normalize(subs[0]))
            for s in subs[1:]:
                merged = self.schema.merge(merged, self.schema.flatten(self.schema.normalize(s)))
            part = self.norm(merged)
        finally:
            self.active.discard(key)
        if key in self.recursive:
            self.rules[name] = [part]
            part = (name,)
        self.done[key] = part
        return part

    def any(self) -> Part:
        if "$any" not in self.rules:
            self.rules["$any"] = []  # reserved: the object and array members refer back
            self.rules["$any"] = [self.norm(Norm("$any"))]
        return ("$any",)

    def norm(self, n: Norm) -> Part:
        if n.any_of:
            return self.branches(n)
        if n.enum is not None:
            return self.enum(n)
        parts: list[Part] = []
        if "object" in n.types:
            parts.append(self.object(n))
        if "array" in n.types:
            parts.append(self.array(n))
        if "string" in n.types:
            parts.append(self.string(n))
        if "int" in n.types:
            parts.append(self.number(n, integer="frac" not in n.types))
        if "boolean" in n.types:
            parts.append((Alt((literal("true"), literal("false"))),))
        if "null" in n.types:
            parts.append((literal("null"),))
        return self.alt(parts)

    def branches(self, n: Norm) -> Part:
        (subs, keyword, ptr), rest = n.any_of[0], n.any_of[1:]
        base = replace(n, any_of=rest)
        merged = [self.schema.merge(base, self.schema.flatten(self.schema.normalize(s))) for s in subs]
        parts = [self.norm(m) for m in merged]
        if keyword == "oneOf" and len(parts) > 1:
            self.check_disjoint(merged, parts, ptr)
        return self.alt(parts)

    def check_disjoint(self, branches: list[Norm], parts: list[Part], ptr: str) -> None:
        """``oneOf`` is read as ``anyOf`` only where no value can match two branches."""
        if len(branches) * (len(branches) - 1) // 2 > _MAX_ONE_OF * _MAX_ONE_OF:
            raise UnsupportedSchemaError("oneOf with this many branches is not checked for overlap", "oneOf", ptr)
        for i in range(len(branches)):
            for j in range(i + 1, len(branches)):
                if parts[i] == DEAD or parts[j] == DEAD or self.disjoint(branches[i], branches[j], parts[i], parts[j]):
                    continue
                raise UnsupportedSchemaError(
                    f"oneOf branches {i} and {j} may both match a value (only disjoint branches are supported)",
                    "oneOf",
                    ptr,
                )

    def disjoint(self, a: Norm, b: Norm, pa: Part, pb: Part) -> bool:
        """A sufficient test that no value satisfies both records."""
        ta, tb = self.effective_types(a), self.effective_types(b)
        if not ta & tb:
            return True
        if a.enum is not None and b.enum is not None:
            return not {_enum_key(x) for x in a.enum} & {_enum_key(y) for y in b.enum}
        if ta & tb <= {"object"}:
            # A property one requires and the other forbids (additionalProperties false).
            for x, y in ((a, b), (b, a)):
                for name in x.required:
                    other = self.flat(self.schema.for_name(y, name))
                    if other is not None and not other.types:
                        return True
            # A discriminator: a property both require, whose values cannot agree.
            for name in a.required:
                if name in b.required:
                    sa = self.flat(self.schema.for_name(a, name))
                    sb = self.flat(self.schema.for_name(b, name))
                    if sa is not None and sb is not None and self.disjoint(sa, sb, (), ()):
                        return True
            return False
        if ta & tb <= {"string", "int", "frac", "boolean", "null"}:
            # Scalars: every value has a spelling in each branch's language that
            # satisfies it (strings: all spellings; numbers: the plain decimal one), so
            # disjoint languages mean disjoint values.
            ra, rb = _regular(pa), _regular(pb)
            if ra is not None and rb is not None:
                return is_empty(intersect(ra, rb))
        return False

    def effective_types(self, n: Norm) -> frozenset[str]:
        if n.enum is not None:
            return frozenset(atom_of(v) for v in n.enum) & n.types
        return n.types

    def flat(self, subs: list[Sub]) -> Norm | None:
        try:
            out: Norm | None = None
            for s in subs:
                f = self.schema.flatten(self.schema.normalize(s))
                out = f if out is None else self.schema.merge(out, f)
            return out or Norm("")
        except UnsupportedSchemaError:
            return None

    # ------------------------------------------------------------ enum / const

    def enum(self, n: Norm) -> Part:
        rest = replace(n, enum=None, types=ATOMS)
        kept: list[Any] = []
        assert n.enum is not None
        seen: set[Hashable] = set()
        free = rest.is_any()  # once: it compares whole records
        for v in n.enum:
            if atom_of(v) not in n.types:
                continue
            key = _enum_key(v)
            if key in seen:
                continue
            if not free and not self.satisfies(v, rest):
                continue
            seen.add(key)
            kept.append(v)
        # The strings as one trie of their spellings (``json_string_trie``), the rest
        # one literal each.
        strings = [v for v in kept if isinstance(v, str)]
        for v in strings:
            if any(0xD800 <= ord(c) <= 0xDFFF for c in v):
                raise UnsupportedSchemaError("a string value with a lone surrogate cannot be output", "enum", n.ptr)
        parts: list[Part] = [(self.literal(v, n.ptr),) for v in kept if not isinstance(v, str)]
        if strings:
            parts.append((json_string_trie(strings),))
        return self.alt(parts)

    def satisfies(self, v: Any, n: Norm) -> bool:
        """Whether the enum value ``v`` meets the record's other keywords (scalars:
        strings and numbers; anything else with constraints is refused)."""
        kind = atom_of(v)
        if kind == "string":
            if len(v) < n.min_length or (n.max_length is not None and len(v) > n.max_length):
                return False
            if not all(string_matches("pattern", p, v, ptr) for p, ptr in n.patterns):
                return False
            return all(string_matches("format", f, v, ptr) for f, ptr in n.formats)
        if kind in ("int", "frac"):
            d = Decimal(repr(v)) if isinstance(v, float) else Decimal(v)
            if n.minimum is not None and (d < n.minimum.value or (n.minimum.exclusive and d == n.minimum.value)):
                return False
            if n.maximum is not None and (d > n.maximum.value or (n.maximum.exclusive and d == n.maximum.value)):
                return False
            return all(d % m == 0 for m in n.multiple_of)
        if kind in ("null", "boolean"):
            return True
        probe = Norm(n.ptr)
        same_kind = {
            "array": ("prefix", "items", "min_items", "max_items", "unique_ptr"),
            "object": ("properties", "required", "additional", "pattern_props", "min_props", "max_props"),
        }[kind]
        if all(getattr(n, k) == getattr(probe, k) for k in same_kind) and not n.any_of:
            return True
        raise UnsupportedSchemaError(
            f"an enum / const {kind} value beside other {kind} keywords is not supported", "enum", n.ptr
        )

    def literal(self, v: Any, ptr: str) -> Node:
        """The JSON spellings of value ``v`` (objects in their key order)."""
        ws = self.ws
        if v is None or isinstance(v, bool):
            return literal(json.dumps(v))
        if isinstance(v, (int, float)):
            d = Decimal(repr(v)) if isinstance(v, float) else Decimal(v)
            return number_tree(integer=False, minimum=d, maximum=d)
        if isinstance(v, str):
            if any(0xD800 <= ord(c) <= 0xDFFF for c in v):
                raise UnsupportedSchemaError("a string value with a lone surrogate cannot be output", "enum", ptr)
            return self.string_tree(literal(v), fixed=True)
        if isinstance(v, list):
            items = [self.literal(x, ptr) for x in v]
            body: Node = EMPTY
            for k, item in enumerate(items):
                body = _cat(body, _cat(_cat(literal(",") if k else EMPTY, ws if k else EMPTY), _cat(item, ws)))
            return _cat(_cat(literal("["), ws), _cat(body, literal("]")))
        body = EMPTY
        for k, (key, x) in enumerate(v.items()):
            member = _cat(
                _cat(self.string_tree(literal(key), fixed=True), ws),
                _cat(_cat(literal(":"), ws), _cat(self.literal(x, ptr), ws)),
            )
            body = _cat(body, _cat(_cat(literal(",") if k else EMPTY, ws if k else EMPTY), member))
        return _cat(_cat(literal("{"), ws), _cat(body, literal("}")))

    # ------------------------------------------------------------ scalars

    def string(self, n: Norm) -> Part:
        trees: list[Node] = []
        if n.min_length or n.max_length is not None:
            if n.max_length is not None and n.min_length > n.max_length:
                return DEAD
            # Alone, the length is a counter of the lazy automaton: any bound, exactly.
            # With a pattern or format it is intersected with them eagerly
            # (``automaton.intersect``), so there it is bounded: a minimum above
            # MAX_LENGTH is refused, a maximum above it enforced as MAX_LENGTH (tighter,
            # never looser: a departure, README).
            alone = not n.patterns and not n.formats
            if not alone and n.min_length > MAX_LENGTH:
                raise UnsupportedSchemaError(
                    f"(size) a minimum length above {MAX_LENGTH} beside a pattern or format (their "
                    "intersection is built character by character)",
                    "minLength",
                    n.ptr,
                )
            top = n.max_length if alone or n.max_length is None else min(n.max_length, MAX_LENGTH)
            trees.append(Repeat(ANY_CHAR, n.min_length, top))
        for p, ptr in n.patterns:
            trees.append(_refusing(partial(pattern_tree, p), "pattern", ptr))
        for f, ptr in n.formats:
            trees.append(_refusing(partial(format_tree, f), "format", ptr))
        value: Node = _ANY_STRING
        if trees:
            value = trees[0]
            for t in trees[1:]:
                value = _refusing(partial(intersect, value, t), "pattern", n.ptr)
        # A format's text is ASCII that json.dumps writes raw: no escaped spellings
        # (an e-mail's automaton with every character's \\uXXXX is ~20x larger).
        return (self.string_tree(value, fixed=bool(n.formats)),)

    def number(self, n: Norm, integer: bool) -> Part:
        multiple: Decimal | None = None
        for m in n.multiple_of:
            if multiple is None or m % multiple == 0:
                multiple = m
            elif multiple % m != 0:
                raise UnsupportedSchemaError("two multipleOf values that do not divide each other", "multipleOf", n.ptr)
        lo, hi = n.minimum, n.maximum

        def build() -> Node:
            return number_tree(
                integer=integer,
                minimum=lo.value if lo else None,
                maximum=hi.value if hi else None,
                exclusive_minimum=bool(lo and lo.exclusive),
                exclusive_maximum=bool(hi and hi.exclusive),
                multiple_of=multiple,
            )

        tree = _refusing(build, "multipleOf", n.ptr)
        if integer and self.schema.plain_integers:
            tree = intersect(tree, _PLAIN_INTEGER)
        return DEAD if tree == NOTHING else (tree,)

    # ------------------------------------------------------------ containers

    def array(self, n: Norm) -> Part:
        ws = self.ws
        hi = n.max_items
        prefix = [self.value(subs) for subs in n.prefix]
        for k, p in enumerate(prefix):
            if p == DEAD:
                hi = k if hi is None else min(hi, k)
                break
        rest = self.value(n.items) if hi is None or hi > len(prefix) else DEAD
        if rest == DEAD:
            hi = len(prefix) if hi is None else min(hi, len(prefix))
        if n.min_items > (hi if hi is not None else n.min_items):
            return DEAD
        if n.unique_ptr is not None and (hi is None or hi > 1):
            raise UnsupportedSchemaError(
                "uniqueItems is supported only where at most one item fits", "uniqueItems", n.unique_ptr
            )
        counted = self.counted_items(n, prefix, rest, hi)
        if counted is not None:
            return seq((_cat(literal("["), ws),), (counted,), (literal("]"),))
        free = max(len(prefix), n.min_items, 1)  # from here on only "a comma is due" matters (hi None)
        sep: Part = (_cat(literal(","), ws),)

        def step(k: int) -> tuple[list[tuple[Part, int]], bool]:
            row: list[tuple[Part, int]] = []
            if hi is None or k < hi:
                item = prefix[k] if k < len(prefix) else rest
                row.append((seq(sep if k else (), item, (ws,)), k + 1 if hi is not None else min(k + 1, free)))
            return row, k >= n.min_items

        edges, accepting = _explore(0, step)
        return seq((_cat(literal("["), ws),), self.automaton(edges, accepting), (literal("]"),))

    def counted_items(self, n: Norm, prefix: list[Part], rest: Part, hi: int | None) -> Node | None:
        """An array's items with a counter (``Repeat``) for the uniform tail, when the
        items are regular and the counts large: the same language as the item-count
        automaton of ``array``, in a tree whose size does not grow with ``minItems`` /
        ``maxItems`` (the lazy automaton counts down as it reads). None: use the
        automaton."""
        p = len(prefix)
        if rest == DEAD or (hi is not None and hi <= p) or max(n.min_items, hi or 0) - p <= _COUNTED:
            return None
        item = _regular(rest)
        firsts = [_regular(x) for x in prefix]
        if item is None or any(x is None for x in firsts):
            return None
        ws, comma = self.ws, _cat(literal(","), self.ws)
        t_lo, t_hi = max(n.min_items - p, 0), (None if hi is None else hi - p)
        each = Concat((comma, item, ws))
        content: Node
        if p:
            content = Repeat(each, t_lo, t_hi)
        else:
            content = Concat((item, ws, Repeat(each, max(t_lo - 1, 0), None if t_hi is None else t_hi - 1)))
            if t_lo == 0:
                content = Alt((EMPTY, content))
        # Before the tail, the prefixItems one by one; stopping is allowed after k of
        # them once k reaches minItems.
        for k in reversed(range(p)):
            first = firsts[k]
            assert first is not None
            content = Concat(((comma, first, ws) if k else (first, ws)) + (content,))
            if k >= n.min_items:
                content = Alt((EMPTY, content))
        return content

    def object(self, n: Norm) -> Part:
        ws = self.ws
        listed = [*n.properties, *(r for r in n.required if r not in n.properties)]
        required = set(n.required)
        members: list[tuple[Part, bool]] = []
        for name in listed:
            value = self.value(self.schema.for_name(n, name))
            if value == DEAD:
                if name in required:
                    return DEAD
                continue
            key = self.string_tree(literal(name), fixed=True)
            members.append((seq((_cat(_cat(key, ws), _cat(literal(":"), ws)),), value, (ws,)), name in required))
        extra = self.additional(n, listed)
        lo, hi = n.min_props, n.max_props
        if hi is not None and lo > hi:
            return DEAD
        sep: Part = (_cat(literal(","), ws),)
        count = len(members)

        def step(key: tuple[int, int, bool]) -> tuple[list[tuple[Part, tuple[int, int, bool]]], bool]:
            i, c, started = key
            nxt = c + 1 if hi is not None else min(c + 1, lo)
            row: list[tuple[Part, tuple[int, int, bool]]] = []
            lead = sep if started else ()
            if i < count:
                member, req = members[i]
                if not req:
                    row.append(((), (i + 1, c, started)))
                if hi is None or c < hi:
                    row.append((seq(lead, member), (i + 1, nxt, True)))
                return row, False
            if extra != DEAD and (hi is None or c < hi):
                row.append((seq(lead, extra), (count, nxt, True)))
            return row, c >= lo

        edges, accepting = _explore((0, 0, False), step)
        return seq((_cat(literal("{"), ws),), self.automaton(edges, accepting), (literal("}"),))

    def additional(self, n: Norm, listed: list[str]) -> Part:
        """One member that is not listed: a ``patternProperties`` name with its value,
        or any other name with ``additionalProperties``' value."""
        excluded: list[Node] = [literal(name) for name in listed]
        patterns = [(p, _refusing(partial(pattern_tree, p), "patternProperties", n.ptr)) for p in n.pattern_props]
        for i in range(len(patterns)):
            for j in range(i + 1, len(patterns)):
                if not is_empty(intersect(patterns[i][1], patterns[j][1])):
                    raise UnsupportedSchemaError(
                        f"patternProperties {patterns[i][0]!r} and {patterns[j][0]!r} overlap (only disjoint ones are supported)",
                        "patternProperties",
                        n.ptr,
                    )
        parts: list[Part] = []
        names_out = Alt(tuple(excluded)) if excluded else None
        for p, tree in patterns:
            value = self.value(n.pattern_props[p])
            names = difference(tree, names_out) if names_out is not None else tree
            parts.append(self.member(names, value))
        others = self.value(n.additional) if n.additional else self.any()
        if others != DEAD:
            out = [*excluded, *(t for _, t in patterns)]
            names = difference(_ANY_STRING, Alt(tuple(out))) if out else _ANY_STRING
            parts.append(self.member(names, others))
        return self.alt(parts)

    def member(self, names: Node, value: Part) -> Part:
        if value == DEAD or (isinstance(names, Machine) and not any(names.accepting)):
            return DEAD
        key = self.string_tree(names)
        return seq((_cat(_cat(key, self.ws), _cat(literal(":"), self.ws)),), value, (self.ws,))


def _refusing(build: Callable[[], T], keyword: str, ptr: str) -> T:
    """``build()``, with an error from the string / number layers given its pointer."""
    try:
        return build()
    except UnsupportedSchemaError as e:
        if e.pointer is not None:
            raise
        raise UnsupportedSchemaError(e.message, e.keyword or keyword, ptr) from e


def compile_schema(root: Any, ws: Node) -> Compiled:
    """The rules and terminals of ``root`` (a parsed JSON Schema) with whitespace
    ``ws`` between tokens. Raises ``UnsupportedSchemaError`` (keyword and pointer)
    and ``TokstreamError`` when no value satisfies the schema."""
    c = _Compiler(Schema(root), ws)
    part = c.value([Sub(root, "")])
    if part == DEAD:
        raise TokstreamError("no JSON value satisfies the schema")
    tree = _regular(part)
    if tree is not None:
        return Compiled({"start": (("$json",),)}, {"$json": tree}, single=True)
    c.rules["start"] = [part]
    # Only the rules the start reaches, their trees named as terminals (equal trees,
    # a ", ws {" in every state of an object, become one terminal in the grammar:
    # ``Grammar`` merges terminals whose trees intern to one expression).
    terminals: dict[str, Node] = {}
    names: dict[int, str] = {}
    rules: dict[str, tuple[tuple[str, ...], ...]] = {}
    queue = ["start"]
    while queue:
        name = queue.pop()
        if name in rules:
            continue
        alternatives: list[tuple[str, ...]] = []
        for alt in c.rules[name]:
            symbols: list[str] = []
            for item in alt:
                if isinstance(item, str):
                    symbols.append(item)
                    if item not in rules:
                        queue.append(item)
                else:
                    t = names.get(id(item))
                    if t is None:
                        t = names[id(item)] = f"t{len(terminals)}"
                        terminals[t] = item
                    symbols.append(t)
            alternatives.append(tuple(symbols))
        rules[name] = tuple(alternatives)
    return Compiled(rules, terminals, single=False)

"""How a string value is spelled inside a JSON text: its characters raw or escaped.

The schema layers describe a string by its *value*, a tree over code points
(``nodes``: a pattern, a format, a length, a property name). ``spell(tree)`` is the
tree of every JSON spelling of those values, between the quotes: each character set
``Chars(C)`` becomes

- the characters of ``C`` that JSON lets stand raw (all but ``"``, ``\\`` and the
  controls U+0000-U+001F), as they are;
- the short escapes ``\\" \\\\ \\/ \\b \\f \\n \\r \\t`` of the characters of ``C``
  they stand for;
- ``\\uXXXX`` (hex digits in either case) for the characters of ``C`` in the Basic
  Multilingual Plane, and the surrogate pair ``\\uD8xx\\uDCxx`` for those above it.

So ``json.dumps`` output (``ensure_ascii`` escapes every non-ASCII character) and
raw UTF-8 are both accepted, and a ``maxLength`` counts characters, not spellings,
as JSON Schema does. A lone surrogate escape (``\\ud800`` without its pair) is a
JSON text whose value is no Unicode string: it is refused (a departure, README).

Fixed strings (``spell(..., fixed=True)``: property names, ``enum`` / ``const``
strings) keep every spelling of the characters ``json.dumps`` escapes (controls,
``"``, ``\\``, non-ASCII) but only the raw one of the others: ``"\u0061"`` for
``"a"`` is refused there (a departure). Escaping every letter of every key made the
keys' automata seven times larger for spellings no encoder writes.

Cost: ``\\uXXXX`` of a set of ranges is a digit-by-digit range decomposition, O(4 x
16) nodes per range; a single character costs ~8 nodes more than its raw form. The
trees are shared (``spell`` memoises on node identity), and the automaton builder
builds a shared subtree once per continuation.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Final

from ..grammar import charset
from ..grammar.nodes import EMPTY, Alt, Chars, Concat, Machine, Node, Repeat, literal

__all__ = ["ANY_CHAR", "QUOTE", "json_string", "json_string_trie", "spell"]

#: Every Unicode scalar value.
ANY_CHAR: Final = Chars(((0, 0xD7FF), (0xE000, 0x10FFFF)))
QUOTE: Final = Chars(((0x22, 0x22),))
_RAW: Final = charset.normalize([(0x20, 0x21), (0x23, 0x5B), (0x5D, 0xD7FF), (0xE000, 0x10FFFF)])
_SHORT: Final = {0x22: '"', 0x5C: "\\", 0x2F: "/", 0x08: "b", 0x0C: "f", 0x0A: "n", 0x0D: "r", 0x09: "t"}
_BACKSLASH: Final = Chars(((0x5C, 0x5C),))
#: What ``json.dumps`` escapes: controls, ``"``, ``\\`` and (``ensure_ascii``) non-ASCII.
_DUMPS_ESCAPES: Final = charset.normalize([(0, 0x1F), (0x22, 0x22), (0x5C, 0x5C), (0x80, 0xD7FF), (0xE000, 0x10FFFF)])


@lru_cache(maxsize=65536)
def _hex_digit(lo: int, hi: int) -> Chars:
    """One hex digit with value in ``lo..hi``, either case."""
    ranges: list[tuple[int, int]] = []
    if lo <= 9:
        ranges.append((0x30 + lo, 0x30 + min(hi, 9)))
    if hi >= 10:
        a, b = max(lo, 10) - 10, hi - 10
        ranges.append((0x41 + a, 0x41 + b))
        ranges.append((0x61 + a, 0x61 + b))
    return Chars(charset.normalize(ranges))


@lru_cache(maxsize=65536)
def _hex_range(lo: int, hi: int, width: int) -> Node:
    """The ``width``-digit hex numerals with value in ``lo..hi``: split on the first
    digit (a partial first digit, full middle digits, a partial last digit)."""
    if width == 0:
        return Concat(())
    unit = 16 ** (width - 1)
    dlo, rlo = divmod(lo, unit)
    dhi, rhi = divmod(hi, unit)
    if dlo == dhi:
        return Concat((_hex_digit(dlo, dlo), _hex_range(rlo, rhi, width - 1)))
    parts: list[Node] = []
    first, last = dlo, dhi
    if rlo:
        parts.append(Concat((_hex_digit(dlo, dlo), _hex_range(rlo, unit - 1, width - 1))))
        first += 1
    if rhi != unit - 1:
        parts.append(Concat((_hex_digit(dhi, dhi), _hex_range(0, rhi, width - 1))))
        last -= 1
    if first <= last:
        parts.append(Concat((_hex_digit(first, last), _hex_range(0, unit - 1, width - 1))))
    return parts[0] if len(parts) == 1 else Alt(tuple(parts))


@lru_cache(maxsize=65536)
def _u(lo: int, hi: int) -> Node:
    return Concat((_BACKSLASH, Chars(((0x75, 0x75),)), _hex_range(lo, hi, 4)))


def _escaped(ranges: charset.Ranges) -> list[Node]:
    """The escape spellings of the characters of ``ranges``."""
    out: list[Node] = [literal("\\" + esc) for cp, esc in _SHORT.items() if charset.contains(ranges, cp)]
    for lo, hi in ranges:
        if lo <= 0xFFFF:
            out.append(_u(lo, min(hi, 0xFFFF)))
        if hi >= 0x10000:
            a, b = max(lo, 0x10000) - 0x10000, hi - 0x10000
            # The pairs: high surrogate a>>10 .. b>>10, low the 10 bits below.
            ha, hb = a >> 10, b >> 10
            if ha == hb:
                out.append(Concat((_u(0xD800 + ha, 0xD800 + ha), _u(0xDC00 + (a & 0x3FF), 0xDC00 + (b & 0x3FF)))))
                continue
            if a & 0x3FF:
                out.append(Concat((_u(0xD800 + ha, 0xD800 + ha), _u(0xDC00 + (a & 0x3FF), 0xDFFF))))
                ha += 1
            if b & 0x3FF != 0x3FF:
                out.append(Concat((_u(0xD800 + hb, 0xD800 + hb), _u(0xDC00, 0xDC00 + (b & 0x3FF)))))
                hb -= 1
            if ha <= hb:
                out.append(Concat((_u(0xD800 + ha, 0xD800 + hb), _u(0xDC00, 0xDFFF))))
    return out


@lru_cache(maxsize=65536)
def _spell_chars(ranges: charset.Ranges, fixed: bool) -> Node:
    # Cached: the same few character sets recur in every string of a schema, and the
    # trees are immutable values, so one object serves all (and interns once).
    parts: list[Node] = []
    raw = charset.intersect(ranges, _RAW)
    if raw:
        parts.append(Chars(raw))
    parts.extend(_escaped(charset.intersect(ranges, _DUMPS_ESCAPES) if fixed else ranges))
    if not parts:
        return Chars(())
    return parts[0] if len(parts) == 1 else Alt(tuple(parts))


def spell(tree: Node, memo: dict[int, Node] | None = None, *, fixed: bool = False) -> Node:
    """The JSON spellings (between the quotes) of the strings of ``tree`` (module
    notes). ``fixed`` (a property name, an ``enum`` string): a character ``json.dumps``
    writes raw has only its raw spelling (module notes)."""
    if memo is None:
        memo = {}
    found = memo.get(id(tree))
    if found is not None:
        return found
    out: Node
    if isinstance(tree, Chars):
        out = _spell_chars(tree.ranges, fixed)
    elif isinstance(tree, Concat):
        out = Concat(tuple(spell(i, memo, fixed=fixed) for i in tree.items))
    elif isinstance(tree, Alt):
        out = Alt(tuple(spell(i, memo, fixed=fixed) for i in tree.items))
    elif isinstance(tree, Repeat):
        out = Repeat(spell(tree.item, memo, fixed=fixed), tree.min, tree.max)
    else:
        rows = tuple(tuple((spell(i, memo, fixed=fixed), t) for i, t in row) for row in tree.edges)
        out = Machine(rows, tree.accepting)
    memo[id(tree)] = out
    return out


def json_string(value: Node, memo: dict[int, Node] | None = None, *, fixed: bool = False) -> Node:
    """A JSON string literal, quotes included, whose value is a string of ``value``
    (``memo``: shared across one compile; ``fixed``: see ``spell``)."""
    return Concat((QUOTE, spell(value, memo, fixed=fixed), QUOTE))


def json_string_trie(values: Sequence[str]) -> Node:
    """The JSON string literals of exactly ``values``, each spelled as ``json_string``
    spells a ``fixed`` literal, as one tree that shares common prefixes (a trie of the
    characters): an enum of 10,000 strings is a tree whose every node branches on its
    next character, so reading a character derives a few alternatives, not 10,000.
    Built iteratively (a value may be long)."""
    end = object()  # the "a value ends here" mark inside a trie node
    root: dict[object, Any] = {}
    for v in values:
        node = root
        for ch in v:
            node = node.setdefault(ch, {})
        node[end] = True
    # Post-order without recursion: a node's tree once its children's are built.
    built: dict[int, Node] = {}
    stack: list[tuple[dict[object, Any], bool]] = [(root, False)]
    while stack:
        node, ready = stack.pop()
        if not ready:
            stack.append((node, True))
            stack.extend((sub, False) for key, sub in node.items() if key is not end)
            continue
        alts: list[Node] = [EMPTY] if end in node else []
        for key, sub in node.items():
            if key is not end:
                assert isinstance(key, str)
                cp = ord(key)
                alts.append(Concat((_spell_chars(((cp, cp),), True), built.pop(id(sub)))))
        built[id(node)] = alts[0] if len(alts) == 1 else Alt(tuple(alts))
    return Concat((QUOTE, built[id(root)], QUOTE))

"""The regular-expression tree shared by the regex parser, the grammar parser and the
automaton builder: plain frozen values, compared and hashed structurally.

A tree denotes a set of strings of Unicode scalar values (code points outside the
surrogates U+D800-U+DFFF, which have no UTF-8):

- ``Chars(ranges)``: one character from a set, given as sorted, disjoint, non-adjacent
  inclusive ``(lo, hi)`` code-point ranges (``charset.normalize`` makes them so);
  ``Chars(())`` matches nothing (``NOTHING``);
- ``Concat(items)``: the items one after another; ``Concat(())`` is the empty string
  (``EMPTY``);
- ``Alt(items)``: any one of the items;
- ``Repeat(item, min, max)``: ``min`` to ``max`` copies (``max`` None: unbounded);
- ``Machine(edges, accepting)``: an automaton whose edges read trees, for what a tree
  cannot say in linear size (``automaton.intersect``, ``automaton.difference``, a
  schema's "any name but these").
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EMPTY", "NOTHING", "Alt", "Chars", "Concat", "Machine", "Node", "Repeat", "literal"]


@dataclass(frozen=True)
class Chars:
    """One character from a set of inclusive code-point ranges (sorted, disjoint,
    non-adjacent, no surrogates)."""

    ranges: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Concat:
    """The items in sequence; no items: the empty string."""

    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alt:
    """Any one of the items (at least one)."""

    items: tuple[Node, ...]


@dataclass(frozen=True)
class Repeat:
    """``min`` to ``max`` copies of ``item`` (``max`` None: no bound)."""

    item: Node
    min: int
    max: int | None


@dataclass(frozen=True, eq=False)
class Machine:
    """An automaton over trees: from state ``s`` (``0`` the start), each edge
    ``(tree, t)`` of ``edges[s]`` reads a string of ``tree`` and goes to state ``t``;
    the strings of the machine are those of the paths from ``0`` to an ``accepting``
    state. Compared by identity: machines are built, not written."""

    edges: tuple[tuple[tuple[Node, int], ...], ...]
    accepting: tuple[bool, ...]


Node = Chars | Concat | Alt | Repeat | Machine

#: The empty string.
EMPTY: Concat = Concat(())
#: No string at all.
NOTHING: Chars = Chars(())


def literal(text: str) -> Node:
    """The tree matching exactly ``text`` (a ``Concat`` of one-character sets).

    >>> literal("ab")
    Concat(items=(Chars(ranges=((97, 97),)), Chars(ranges=((98, 98),))))
    """
    return Concat(tuple(Chars(((ord(c), ord(c)),)) for c in text))

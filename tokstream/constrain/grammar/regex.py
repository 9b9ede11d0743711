"""The regular subset of Python ``re`` syntax, parsed to a ``nodes`` tree.

``parse_regex(pattern)`` returns a tree whose language is exactly the set of strings
``s`` (of Unicode scalar values) with ``re.fullmatch(pattern, s)`` not None, for a
``str`` pattern compiled without flags on the running Python. The semantics are
``re``'s throughout: ``\\d \\w \\s`` are Unicode classes (``charset.python_class``,
computed by ``re`` itself), ``.`` excludes only ``"\\n"`` unless DOTALL, ``{`` that does
not start a valid quantifier is a literal, ``]`` first in a class is a literal, octal
and group-number escapes are told apart as ``re`` does. Lazy quantifiers denote the
same language as greedy ones under fullmatch.

Supported: literals and escapes (``\\n \\t \\r \\f \\v \\a``, octal, ``\\xhh \\uhhhh
\\Uhhhhhhhh \\N{NAME}``, escaped punctuation); classes ``[...]`` and ``[^...]`` with
ranges and ``\\d \\w \\s \\D \\W \\S`` inside; ``.``; ``\\d \\w \\s \\D \\W \\S``;
``* + ? {m} {m,} {,n} {m,n}`` and their lazy forms; groups ``( )``, ``(?: )``,
``(?P<name> )``; comments ``(?#...)``; the flags ``s`` (global ``(?s)`` or scoped
``(?s:...)``, ``(?-s:...)``) and ``u`` (a no-op for ``str``); anchors ``^ \\A`` where
only the start of the string can be and ``$ \\Z`` where only its end can be (there
fullmatch makes them no-ops).

Refused with ``UnsupportedGrammarError`` (naming the construct and its 0-based offset
in the pattern): what no finite automaton expresses or what would change matching in
ways the tree cannot carry. Backreferences ``\\1 (?P=name)``, lookarounds, conditionals
``(?(1)...)``, atomic groups and possessive quantifiers (they cut alternatives off, so
the language is no longer the plain regular one), ``\\b \\B``, anchors elsewhere (they
would need context the tree does not have), the flags ``i m x a L`` (case folding,
multiline anchors, verbose syntax and ASCII classes are not implemented), repetition
bounds above ``re``'s own limit (``MAX_REPEAT``), and surrogate code points as literals (they have no UTF-8; in class ranges
they are just left out). A pattern ``re`` rejects raises with ``re``'s message and
position.

Cost: linear in the length of the pattern (one pass of ``re.compile`` and one of this
recursive-descent parser), plus the one-time scans behind ``\\d \\w \\s``
(``charset.python_class``) on first use.
"""

from __future__ import annotations

import re
import unicodedata
import warnings
from dataclasses import dataclass

from ...errors import UnsupportedGrammarError
from . import charset
from .nodes import EMPTY, Alt, Chars, Concat, Node, Repeat

__all__ = ["MAX_REPEAT", "parse_regex"]

#: The largest repetition bound ``{m,n}`` accepted: ``re``'s own limit. A bound is a
#: counter of the lazy automaton (``derivatives``), not copies, so its size is free.
MAX_REPEAT = 4_294_967_294

_ESCAPES = {"a": 0x07, "f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B, "\\": 0x5C}
_CLASSES = "dDsSwW"
_DIGITS = "0123456789"
_OCTAL = "01234567"
_HEX = "0123456789abcdefABCDEF"
_FLAG_REFUSALS = {
    "i": "case-insensitive matching is not supported",
    "m": "multiline mode is not supported (^ and $ would match at line breaks)",
    "x": "verbose mode is not supported",
    "a": "ASCII-only classes are not supported",
    "L": "locale-dependent matching is not supported",
}
_FLAG_BITS = {"i": re.IGNORECASE, "m": re.MULTILINE, "x": re.VERBOSE, "a": re.ASCII, "L": re.LOCALE}


# The parser's own tree: nodes plus anchors, whose meaning depends on where they stand,
# so they are checked and dropped only once the whole pattern is read. ``empty_only``
# (matches nothing but the empty string) is computed on construction so the check stays
# linear.
@dataclass(frozen=True)
class _Set:
    ranges: charset.Ranges
    empty_only = False


@dataclass(frozen=True)
class _Anchor:
    start: bool
    text: str
    offset: int
    empty_only = True


@dataclass(frozen=True)
class _Seq:
    items: tuple[_Ast, ...]
    empty_only: bool


@dataclass(frozen=True)
class _Alt:
    branches: tuple[_Seq, ...]
    empty_only: bool


@dataclass(frozen=True)
class _Rep:
    item: _Ast
    min: int
    max: int | None
    empty_only: bool


_Ast = _Set | _Anchor | _Seq | _Alt | _Rep


def _rep(item: _Ast, lo: int, hi: int | None) -> _Rep:
    return _Rep(item, lo, hi, hi == 0 or item.empty_only)


class _Parser:
    """Recursive descent over a pattern ``re.compile`` has accepted, so malformed input
    is not re-diagnosed here."""

    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.p[j] if j < len(self.p) else ""

    def refuse(self, what: str, offset: int) -> UnsupportedGrammarError:
        return UnsupportedGrammarError(what, offset=offset)

    def literal(self, cp: int, offset: int) -> _Set:
        if 0xD800 <= cp <= 0xDFFF:
            raise self.refuse(f"the surrogate code point U+{cp:04X} has no UTF-8 and matches no text", offset)
        return _Set(((cp, cp),))

    def take(self, n: int, allowed: str) -> str:
        # Up to n characters from ``allowed`` (re's getwhile).
        start = self.i
        while self.i - start < n and self.peek() != "" and self.peek() in allowed:
            self.i += 1
        return self.p[start : self.i]

    def alternation(self, dotall: bool) -> _Alt:
        branches = [self.sequence(dotall)]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.sequence(dotall))
        return _Alt(tuple(branches), all(b.empty_only for b in branches))

    def sequence(self, dotall: bool) -> _Seq:
        items: list[_Ast] = []
        while True:
            c = self.peek()
            if c in ("", "|", ")"):
                break
            start = self.i
            if c == "\\":
                items.append(self.escape())
            elif c == "[":
                items.append(self.char_class())
            elif c == "(":
                group = self.group(dotall)
                # Comments and global flags add no item: a quantifier after them applies
                # to the item before, as in re.
                if group is not None:
                    items.append(group)
            elif c == ".":
                self.i += 1
                items.append(_Set(charset.ANY if dotall else charset.DOT))
            elif c in "^$":
                self.i += 1
                items.append(_Anchor(c == "^", c, start))
            elif c in "*+?{":
                bounds = self.quantifier()
                if bounds is None:  # a "{" that starts no quantifier is a literal
                    self.i = start + 1
                    items.append(_Set(((0x7B, 0x7B),)))
                    continue
                if self.peek() == "+":
                    raise self.refuse(
                        f"the possessive quantifier {self.p[start : self.i + 1]} is not supported (it drops matches)",
                        start,
                    )
                if self.peek() == "?":  # lazy: the same language under fullmatch
                    self.i += 1
                lo, hi = bounds
                if lo > MAX_REPEAT or (hi is not None and hi > MAX_REPEAT):
                    raise self.refuse(
                        f"(size) the repetition {self.p[start : self.i]} has a bound above {MAX_REPEAT} "
                        "(Python re's limit)",
                        start,
                    )
                items.append(_rep(items.pop(), lo, hi))
            else:
                self.i += 1
                items.append(self.literal(ord(c), start))
        return _Seq(tuple(items), all(x.empty_only for x in items))

    def quantifier(self) -> tuple[int, int | None] | None:
        c = self.peek()
        self.i += 1
        if c == "*":
            return 0, None
        if c == "+":
            return 1, None
        if c == "?":
            return 0, 1
        if self.peek() == "}":
            return None
        lo = self.take(len(self.p), _DIGITS)
        if self.peek() == ",":
            self.i += 1
            hi = self.take(len(self.p), _DIGITS)
        else:
            hi = lo
        if self.peek() != "}":
            return None
        self.i += 1
        return (int(lo) if lo else 0), (int(hi) if hi else None)

    def escape(self) -> _Ast:
        start = self.i
        c = self.peek(1)
        self.i += 2
        if c == "A":
            return _Anchor(True, "\\A", start)
        if c in "Zz":
            return _Anchor(False, "\\" + c, start)
        if c in "bB":
            raise self.refuse(f"the word boundary \\{c} is not supported (it looks at neighbouring characters)", start)
        if c in _DIGITS and c != "0":
            # re's rule: three octal digits are a character, anything else a group number.
            if self.peek() in _DIGITS and self.peek() != "":
                if c in _OCTAL and self.peek() in _OCTAL and self.peek(1) in _OCTAL and self.peek(1) != "":
                    self.i += 2
                    return self.literal(int(self.p[start + 1 : self.i], 8), start)
                self.i += 1
            raise self.refuse(f"the backreference {self.p[start : self.i]} is not regular", start)
        return self.escaped_char(c, start, in_class=False)

    def escaped_char(self, c: str, start: int, in_class: bool) -> _Set:
        """The escape ``\\c`` (already consumed) shared by classes and the outside."""
        code = self.escaped_code(c, in_class)
        if isinstance(code, int):
            return self.literal(code, start)
        return _Set(code)

    def escaped_code(self, c: str, in_class: bool) -> int | charset.Ranges:
        # A code point, or the ranges of a class escape; self.i is past "\\c".
        if c in _CLASSES:
            return charset.python_class(c)
        if c in _ESCAPES:
            return _ESCAPES[c]
        if c == "b":  # only reached in a class, where \b is backspace
            return 0x08
        if c in "xuU":
            return int(self.take({"x": 2, "u": 4, "U": 8}[c], _HEX), 16)
        if c == "N":
            end = self.p.index("}", self.i)
            name = self.p[self.i + 1 : end]
            self.i = end + 1
            return ord(unicodedata.lookup(name))
        if c == "0" or (in_class and c in _OCTAL):
            return int(c + self.take(2, _OCTAL), 8)
        return ord(c)

    def char_class(self) -> _Set:
        self.i += 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        parts: list[charset.Ranges] = []
        while True:
            c = self.peek()
            if c == "]" and parts:  # a "]" first in the class is a literal
                self.i += 1
                break
            here = self.i
            first = self.class_atom()
            if self.peek() == "-":
                self.i += 1
                if self.peek() == "]":  # "-" last is a literal
                    self.i += 1
                    parts += [self.single(first, here), ((0x2D, 0x2D),)]
                    break
                last = self.class_atom()
                # re allows only characters as range ends; surrogates in a range just drop.
                assert isinstance(first, int) and isinstance(last, int)
                parts.append(charset.normalize([(first, last)]))
            else:
                parts.append(self.single(first, here))
        ranges = charset.union(*parts)
        return _Set(charset.negate(ranges) if negated else ranges)

    def class_atom(self) -> int | charset.Ranges:
        c = self.peek()
        if c == "\\":
            self.i += 2
            return self.escaped_code(self.p[self.i - 1], in_class=True)
        self.i += 1
        return ord(c)

    def single(self, atom: int | charset.Ranges, offset: int) -> charset.Ranges:
        return self.literal(atom, offset).ranges if isinstance(atom, int) else atom

    def group(self, dotall: bool) -> _Ast | None:
        start = self.i
        self.i += 1
        if self.peek() != "?":
            return self.group_body(dotall)
        self.i += 1
        c = self.peek()
        self.i += 1
        if c == "P":
            if self.peek() == "=":
                raise self.refuse(
                    f"the backreference {self.p[start : self.p.index(')', start) + 1]} is not regular", start
                )
            self.i = self.p.index(">", self.i) + 1
            return self.group_body(dotall)
        if c == ":":
            return self.group_body(dotall)
        if c == "#":
            # Up to the first ")" not escaped: re reads "\)" as one token here too.
            while self.peek() != ")":
                self.i += 2 if self.peek() == "\\" else 1
            self.i += 1
            return None
        if c in "=!":
            kind = "lookahead" if c == "=" else "negative lookahead"
            raise self.refuse(f"the {kind} (?{c}...) is not regular", start)
        if c == "<":
            kind = "lookbehind" if self.peek() == "=" else "negative lookbehind"
            raise self.refuse(f"the {kind} (?<{self.peek()}...) is not regular", start)
        if c == "(":
            raise self.refuse("the conditional group (?(...)...) is not regular", start)
        if c == ">":
            raise self.refuse("the atomic group (?>...) is not supported (it drops matches)", start)
        # Inline flags: (?flags) for the whole pattern, (?on-off:...) for a group.
        self.i -= 1
        on = self.take(len(self.p), "aiLmsux")
        off = ""
        if self.peek() == "-":
            self.i += 1
            off = self.take(len(self.p), "aiLmsux")
        end = self.peek()
        self.i += 1
        for flag in on:
            if flag in _FLAG_REFUSALS:
                text = self.p[start : self.i] + ("...)" if end == ":" else "")
                raise self.refuse(f"the inline flag {flag} in {text}: {_FLAG_REFUSALS[flag]}", start)
        if end == ")":
            # Global flags: s is folded in from the compiled pattern's flags already.
            return None
        # Turning i, m or x off is a no-op: they are never on here.
        if "s" in off:
            dotall = False
        elif "s" in on:
            dotall = True
        return self.group_body(dotall)

    def group_body(self, dotall: bool) -> _Alt:
        inner = self.alternation(dotall)
        self.i += 1  # the ")"
        return inner


def _lower(node: _Ast, start_ok: bool, end_ok: bool) -> Node:
    """``node`` as a ``nodes`` tree. ``start_ok``: every way from the start of the pattern
    to ``node`` matches only the empty string, so an anchor ``^``/``\\A`` here can only
    stand at the start of the text; ``end_ok`` likewise towards the end."""
    if isinstance(node, _Set):
        return Chars(node.ranges)
    if isinstance(node, _Anchor):
        if start_ok if node.start else end_ok:
            return EMPTY
        where = "the start" if node.start else "the end"
        raise UnsupportedGrammarError(
            f"the anchor {node.text} is only supported where nothing but {where} of the text can be", offset=node.offset
        )
    if isinstance(node, _Seq):
        items = node.items
        # after_empty[k]: items[k:] all match only the empty string.
        after_empty = [True] * (len(items) + 1)
        for k in range(len(items) - 1, -1, -1):
            after_empty[k] = after_empty[k + 1] and items[k].empty_only
        out: list[Node] = []
        before_empty = True
        for k, item in enumerate(items):
            lowered = _lower(item, start_ok and before_empty, end_ok and after_empty[k + 1])
            before_empty = before_empty and item.empty_only
            if lowered != EMPTY:
                out.append(lowered)
        return out[0] if len(out) == 1 else Concat(tuple(out))
    if isinstance(node, _Alt):
        branches = tuple(_lower(b, start_ok, end_ok) for b in node.branches)
        return branches[0] if len(branches) == 1 else Alt(branches)
    # A repeated anchor keeps its place only if every copy stays there: at most one copy
    # counts, or the copies match nothing but the empty string.
    keeps = (node.max is not None and node.max <= 1) or node.item.empty_only
    body = _lower(node.item, start_ok and keeps, end_ok and keeps)
    if body == EMPTY or node.min == node.max == 1:
        return body
    return Repeat(body, node.min, node.max)


def parse_regex(pattern: str, *, dotall: bool = False) -> Node:
    """The tree of ``pattern`` (Python ``re`` syntax), with the language of
    ``re.fullmatch(pattern, s)`` over strings of scalar values; ``dotall=True`` as
    ``re.DOTALL``. Raises ``UnsupportedGrammarError`` for invalid patterns (with ``re``'s
    message and position) and for constructs outside the supported subset (see the
    module docstring).

    >>> parse_regex("a|b?")
    Alt(items=(Chars(ranges=((97, 97),)), Repeat(item=Chars(ranges=((98, 98),)), min=0, max=1)))
    >>> parse_regex("(?=a)")
    Traceback (most recent call last):
        ...
    tokstream.errors.UnsupportedGrammarError: the lookahead (?=...) is not regular (at offset 0)
    """
    flags = 0
    try:
        with warnings.catch_warnings():
            # re warns (FutureWarning) on "[[" and similar, which tests turn into errors.
            warnings.simplefilter("ignore")
            flags = re.compile(pattern).flags
    except re.error as e:
        raise UnsupportedGrammarError(f"not a valid Python regex: {e.msg}", offset=e.pos) from e
    except OverflowError:
        # A repetition bound beyond re's own limit: the parser below refuses it (above
        # MAX_REPEAT) at its offset, which re does not report.
        pass
    for letter, bit in _FLAG_BITS.items():
        if flags & bit:
            # Global flags (only at the start since Python 3.11, anywhere before) change
            # how the rest reads, so refuse before parsing; point at the flag group.
            found = re.search(r"\(\?[aiLmsux]*" + letter, pattern)
            raise UnsupportedGrammarError(
                f"the inline flag {letter}: {_FLAG_REFUSALS[letter]}", offset=found.start() if found else None
            )
    parser = _Parser(pattern)
    tree = parser.alternation(dotall or bool(flags & re.DOTALL))
    return _lower(tree, True, True)

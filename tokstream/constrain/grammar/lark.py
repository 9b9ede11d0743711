"""Lark-style grammar text -> a ``Cfg``: plain BNF rules over named terminals, each
terminal a ``nodes`` regex tree.

The language of a ``Cfg`` is the scannerless one of Lark's ``parser="earley",
lexer="dynamic_complete"``: the strings derivable from the start rule with every
terminal replaced by any string of its tree, and any number of ``%ignore`` strings
before, between and after terminals.

Supported syntax:

- rules ``name: alternatives`` (lowercase names; the ``?`` / ``!`` / ``_`` prefixes,
  ``.priority`` and ``-> alias`` only shape Lark's tree or break ties, so they are
  accepted and dropped); alternatives separated by ``|``, also at the start of a
  continuation line; an empty alternative is the empty string;
- terminals ``NAME(.priority): expansion`` built from literals, regexes, ranges and
  other terminals (inlined; a cycle is refused);
- in both: ``"literal"`` (escapes below), ``"literal"i`` (case-insensitive; only when
  every cased character is ASCII), ``/regex/flags`` (Python ``re`` syntax through
  ``regex.parse_regex``), ``"a".."z"``, groups ``( )``, optionals ``[ ]`` and ``?``,
  ``*``, ``+``, ``~ n`` and ``~ n..m``;
- ``%ignore`` (a terminal name, literal, regex or terminal expansion), ``%import
  common.NAME``, ``%import common.NAME -> ALIAS``, ``%import common (A, B)`` from a
  built-in table of Lark's ``common`` terminals;
- ``//`` and ``#`` comments, ``\\`` line continuations.

Choices where Lark and Python disagree, or where the language would change:

- literal escapes: ``\\\\ \\" \\n \\t \\r \\f \\xhh \\uhhhh \\Uhhhhhhhh`` as in Python;
  an unknown escape such as ``\\d`` keeps its backslash (both agree); ``\\a \\b \\v
  \\' \\N{..}`` and octal escapes are refused, since Lark keeps the backslash where
  Python does not;
- ``"k"i`` matches what Python's ``re.IGNORECASE`` matches, so ``i``, ``k`` and ``s``
  also take U+0130/U+0131, U+212A (KELVIN SIGN) and U+017F (LONG S);
- regex flags: ``s`` is DOTALL and ``u`` changes nothing for ``str`` patterns; ``i``,
  ``m``, ``x`` and ``l`` are refused (write the case or the whitespace out instead);
- a terminal used by a rule or ``%ignore`` must not match the empty string (Lark's
  dynamic Earley refuses zero-width terminals); make the use optional instead;
- ``ESCAPED_STRING`` is the language Lark's lexer actually produces (its non-greedy
  pattern stops at the first unescaped quote): ``"`` then characters other than
  ``"``, ``\\`` and newline, or ``\\`` with any character but a newline, then ``"``.

Left out, each raising ``UnsupportedGrammarError`` with a line and column: rule
templates ``name{x}``, ``%declare``, ``%override``, ``%extend`` and every other
``%import`` (other grammar files would need a file system and Lark's namespacing;
templates and declared terminals have no fixed language here).

EBNF in rules becomes BNF through generated rules named ``__<rule>_<kind>_<n>``
(``opt``, ``star``, ``plus``, ``group``, ``rep``); ``x*`` is left-recursive, which
suits Earley. A literal or regex written inside a rule becomes a terminal named by its
source text (``'"+"'``, ``'/[0-9]+/'``), shared by equal trees; a composite
``%ignore`` is ``__IGNORE_<n>``. Neither form can be a Lark name, so no clash.

Cost: one pass over the text, linear in its length plus the ``~ n`` copies made.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import NoReturn

from ...errors import UnsupportedGrammarError
from .nodes import Alt, Chars, Concat, Machine, Node, Repeat, literal
from .regex import parse_regex

__all__ = ["Cfg", "parse_lark"]


@dataclass(frozen=True)
class Cfg:
    """A context-free grammar in plain BNF over named terminals.

    ``rules`` maps each nonterminal to its alternatives (tuples of symbol names; ``()``
    is the empty string); a symbol is a terminal iff it is a key of ``terminals``.
    ``ignore`` names the terminals that may occur between any two terminals.

    >>> cfg = parse_lark('start: "a" start | "b"')
    >>> cfg.start, cfg.rules["start"]
    ('start', (('"a"', 'start'), ('"b"',)))
    """

    start: str
    rules: Mapping[str, tuple[tuple[str, ...], ...]]
    terminals: Mapping[str, Node]
    ignore: tuple[str, ...]


# ---------------------------------------------------------------- the token stream

_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\f\r]+|\\[ \t\f\r]*\n)
  | (?P<nl>\n)
  | (?P<comment>//[^\n]*|\#[^\n]*)
  | (?P<string>"(?:\\[^\n]|[^"\\\n])*"i?)
  | (?P<regex>/(?!/)(?:\\[^\n]|[^/\\\n])*/[a-zA-Z]*)
  | (?P<name>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<number>-?[0-9]+)
  | (?P<directive>%[A-Za-z_]*)
  | (?P<op>->|\.\.|[:|()\[\]{}*+?~.,!])
    """,
    re.VERBOSE,
)
_RULE_NAME = re.compile(r"_?[a-z][_a-z0-9]*\Z")
_TERM_NAME = re.compile(r"_?[A-Z][_A-Z0-9]*\Z")


@dataclass(frozen=True)
class _Tok:
    kind: str  # a _TOKEN group name, "end", or "error" (text is then the message)
    text: str
    pos: int


def _tokens(text: str) -> list[_Tok]:
    """The significant tokens; a newline before ``|`` is dropped (continuation line).
    A lexical error becomes an "error" token so that earlier syntax errors win."""
    out: list[_Tok] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            ch = text[pos]
            if ch == '"':
                msg = "unterminated literal: close it with '\"' on the same line"
            elif ch == "/":
                msg = "unterminated regex: close it with '/' on the same line (escape a '/' inside as '\\/')"
            else:
                msg = f"unexpected character {ch!r}"
            out.append(_Tok("error", msg, pos))
            break
        kind = m.lastgroup
        assert kind is not None
        if kind not in ("ws", "comment"):
            out.append(_Tok(kind, m.group(), pos))
        pos = m.end()
    out.append(_Tok("end", "", len(text)))
    kept = [
        t for i, t in enumerate(out) if not (t.kind == "nl" and next(u for u in out[i:] if u.kind != "nl").text == "|")
    ]
    return kept


# ---------------------------------------------------------------- the expression tree


@dataclass(frozen=True)
class _Lit:
    tree: Node
    src: str
    pos: int


@dataclass(frozen=True)
class _Regex:
    body: str
    flags: str
    src: str
    pos: int


@dataclass(frozen=True)
class _Name:
    name: str
    pos: int


@dataclass(frozen=True)
class _Seq:
    items: tuple[_Expr, ...]


@dataclass(frozen=True)
class _Alts:
    alts: tuple[_Seq, ...]


@dataclass(frozen=True)
class _Rep:
    item: _Expr
    min: int
    max: int | None
    kind: str  # "opt", "star", "plus" or "rep": the generated rule's name part


_Expr = _Lit | _Regex | _Name | _Seq | _Alts | _Rep


@dataclass
class _Def:
    name: str
    pos: int
    body: _Alts | None = None
    tree: Node | None = None  # set for built-in (imported) terminals
    done: bool = False
    resolving: bool = False


# ---------------------------------------------------------------- literals

_SIMPLE_ESCAPES = {"\\": "\\", '"': '"', "n": "\n", "t": "\t", "r": "\r", "f": "\f"}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
_DIVERGENT = "abv'N01234567"


def _decode(body: str, at: int, fail: Callable[[str, int], NoReturn]) -> str:
    """A literal's characters (``at``: the body's offset in the grammar, for errors)."""
    out = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        e = body[i + 1]  # the token pattern guarantees a character after "\"
        if e in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[e])
            i += 2
        elif e in _HEX_ESCAPES:
            digits = body[i + 2 : i + 2 + _HEX_ESCAPES[e]]
            if len(digits) != _HEX_ESCAPES[e] or not all(d in "0123456789abcdefABCDEF" for d in digits):
                fail(f"bad escape \\{e}: it takes exactly {_HEX_ESCAPES[e]} hex digits", at + i)
            cp = int(digits, 16)
            if cp > 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
                fail(f"escape \\{e}{digits} is not a Unicode scalar value", at + i)
            out.append(chr(cp))
            i += 2 + len(digits)
        elif e in _DIVERGENT:
            fail(
                f"escape \\{e} means one thing in Lark (a backslash and {e!r}) and another in Python; "
                f"write \\\\{e} for the backslash, or a \\x escape for the character",
                at + i,
            )
        else:
            out.append("\\" + e)  # Python and Lark both keep the backslash
            i += 2
    return "".join(out)


# re.IGNORECASE's partners of the ASCII letters beyond their other case.
_EXTRA_CASES = {"i": (0x130, 0x131), "k": (0x212A,), "s": (0x17F,)}


def _ranges(points: set[int]) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for p in sorted(points):
        if out and out[-1][1] + 1 == p:
            out[-1] = (out[-1][0], p)
        else:
            out.append((p, p))
    return tuple(out)


def _icase(text: str, at: int, fail: Callable[[str, int], NoReturn]) -> Node:
    items: list[Node] = []
    for k, c in enumerate(text):
        if c.isascii() and c.isalpha():
            low = c.lower()
            items.append(Chars(_ranges({ord(low), ord(c.upper()), *_EXTRA_CASES.get(low, ())})))
        elif c.lower() != c or c.upper() != c:
            fail(
                f"case-insensitive literal has the non-ASCII cased character {c!r} "
                f"({unicodedata.name(c, f'U+{ord(c):04X}')}); write its cases out, e.g. as a regex class",
                at + k,
            )
        else:
            items.append(Chars(((ord(c), ord(c)),)))
    return items[0] if len(items) == 1 else Concat(tuple(items))


def _without_surrogates(lo: int, hi: int) -> tuple[tuple[int, int], ...]:
    parts = [(lo, min(hi, 0xD7FF)), (max(lo, 0xE000), hi)]
    return tuple((a, b) for a, b in parts if a <= b)


def _nullable(node: Node) -> bool:
    if isinstance(node, Chars):
        return False
    if isinstance(node, Concat):
        return all(_nullable(i) for i in node.items)
    if isinstance(node, Alt):
        return any(_nullable(i) for i in node.items)
    if isinstance(node, Machine):
        return node.accepting[0]  # lark's trees never hold one; a nullable start would do
    return node.min == 0 or _nullable(node.item)


# ---------------------------------------------------------------- Lark's common terminals


def _one(*points: int | tuple[int, int]) -> Chars:
    return Chars(tuple(p if isinstance(p, tuple) else (p, p) for p in points))


def _but(*points: int) -> Chars:
    """Any scalar value except the given code points."""
    rs: list[tuple[int, int]] = []
    lo = 0
    for p in sorted(points):
        if lo <= p - 1:
            rs.append((lo, p - 1))
        lo = p + 1
    rs.append((lo, 0x10FFFF))
    return Chars(tuple(r for a, b in rs for r in _without_surrogates(a, b)))


def _seq(*items: Node) -> Concat:
    return Concat(items)


def _opt(item: Node) -> Repeat:
    return Repeat(item, 0, 1)


def _common() -> dict[str, Node]:
    digit = _one((0x30, 0x39))
    integer = Repeat(digit, 1, None)
    sign = _opt(_one(0x2B, 0x2D))
    dot = _one(0x2E)
    exponent = _seq(_one(0x45, 0x65), sign, integer)  # [eE] then a signed integer
    decimal = Alt((_seq(integer, dot, _opt(integer)), _seq(dot, integer)))
    floating = Alt((_seq(integer, exponent), _seq(decimal, _opt(exponent))))
    number = Alt((floating, integer))
    upper, lower = _one((0x41, 0x5A)), _one((0x61, 0x7A))
    letter = _one((0x41, 0x5A), (0x61, 0x7A))
    not_newline = _but(0x0A)
    quote, backslash = _one(0x22), _one(0x5C)
    star, slash = _one(0x2A), _one(0x2F)
    stars = Repeat(star, 1, None)
    return {
        "DIGIT": digit,
        "HEXDIGIT": _one((0x30, 0x39), (0x41, 0x46), (0x61, 0x66)),
        "INT": integer,
        "SIGNED_INT": _seq(sign, integer),
        "DECIMAL": decimal,
        "FLOAT": floating,
        "SIGNED_FLOAT": _seq(sign, floating),
        "NUMBER": number,
        "SIGNED_NUMBER": _seq(sign, number),
        # A quote, then plain characters or backslash pairs, up to the first unescaped
        # quote: what Lark's non-greedy ``.*?`` pattern stops at (no newline inside).
        "ESCAPED_STRING": _seq(
            quote, Repeat(Alt((_but(0x22, 0x5C, 0x0A), _seq(backslash, not_newline))), 0, None), quote
        ),
        "LCASE_LETTER": lower,
        "UCASE_LETTER": upper,
        "LETTER": letter,
        "WORD": Repeat(letter, 1, None),
        "CNAME": _seq(
            _one(0x5F, (0x41, 0x5A), (0x61, 0x7A)),
            Repeat(_one((0x30, 0x39), (0x41, 0x5A), 0x5F, (0x61, 0x7A)), 0, None),
        ),
        "WS_INLINE": Repeat(_one(0x09, 0x20), 1, None),
        "WS": Repeat(_one((0x09, 0x0A), (0x0C, 0x0D), 0x20), 1, None),
        "CR": _one(0x0D),
        "LF": _one(0x0A),
        "NEWLINE": Repeat(_seq(_opt(_one(0x0D)), _one(0x0A)), 1, None),
        "SH_COMMENT": _seq(_one(0x23), Repeat(not_newline, 0, None)),
        "CPP_COMMENT": _seq(slash, slash, Repeat(not_newline, 0, None)),
        "SQL_COMMENT": _seq(_one(0x2D), _one(0x2D), Repeat(not_newline, 0, None)),
        # "/*", then anything up to the first "*/" (Lark's pattern is non-greedy too).
        "C_COMMENT": _seq(slash, star, Repeat(Alt((_but(0x2A), _seq(stars, _but(0x2A, 0x2F)))), 0, None), stars, slash),
    }


_COMMON = _common()


# ---------------------------------------------------------------- the parser


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.defs: dict[str, _Def] = {}  # rules and terminals, in definition order
        self.ignores: list[tuple[_Alts, int]] = []  # (expansion, position)

    # -- errors and tokens

    def fail(self, message: str, pos: int) -> NoReturn:
        line = bisect.bisect_right(self.line_starts, pos)
        column = pos - self.line_starts[line - 1] + 1
        raise UnsupportedGrammarError(message, offset=pos, line=line, column=column)

    def peek(self) -> _Tok:
        tok = self.toks[self.i]
        if tok.kind == "error":
            self.fail(tok.text, tok.pos)
        return tok

    def take(self) -> _Tok:
        tok = self.peek()
        self.i += 1
        return tok

    def unexpected(self, tok: _Tok, wanted: str) -> NoReturn:
        what = "the end of the grammar" if tok.kind == "end" else "a line break" if tok.kind == "nl" else repr(tok.text)
        self.fail(f"expected {wanted}, found {what}", tok.pos)

    def expect(self, text: str, wanted: str) -> _Tok:
        tok = self.take()
        if tok.text != text or tok.kind not in ("op", "name"):
            self.unexpected(tok, wanted)
        return tok

    def end_of_statement(self) -> None:
        tok = self.peek()
        if tok.kind not in ("nl", "end"):
            self.unexpected(tok, "the end of the line")

    # -- statements

    def grammar(self) -> None:
        while True:
            tok = self.peek()
            if tok.kind == "end":
                return
            if tok.kind == "nl":
                self.i += 1
            elif tok.kind == "directive":
                self.directive()
            else:
                self.definition()

    def definition(self) -> None:
        prefix = []
        while self.peek().text in ("?", "!") and self.peek().kind == "op":
            prefix.append(self.take())
        tok = self.take()
        if tok.kind != "name":
            self.unexpected(tok, "a rule or terminal definition (name: ...)")
        name = tok.text
        is_term = self.check_name(name, tok.pos)
        if is_term and prefix:
            self.fail(f"the prefix {prefix[0].text!r} applies to rules only, not to the terminal {name}", prefix[0].pos)
        nxt = self.peek()
        if nxt.text == "{" and nxt.kind == "op":
            self.fail("rule templates name{...} are not supported; write out each instance as its own rule", nxt.pos)
        if nxt.text == "." and nxt.kind == "op":
            self.i += 1
            if self.take().kind != "number":
                self.unexpected(self.toks[self.i - 1], "a priority number after '.'")
        self.expect(":", f"':' after {name}")
        body = self.expansions(allow_alias=not is_term)
        self.end_of_statement()
        if name in self.defs:
            first = self.defs[name]
            kind = "terminal" if is_term else "rule"
            self.fail(
                f"{kind} {name} is defined twice (first at line {self.line_of(first.pos)}); merge the definitions with '|'",
                tok.pos,
            )
        self.defs[name] = _Def(name, tok.pos, body=body)

    def line_of(self, pos: int) -> int:
        return bisect.bisect_right(self.line_starts, pos)

    def check_name(self, name: str, pos: int) -> bool:
        """True for a terminal name, False for a rule name; anything else fails."""
        if _TERM_NAME.match(name):
            return True
        if _RULE_NAME.match(name):
            return False
        self.fail(
            f"{name!r} is neither a rule name (lowercase, like expr or _expr) nor a terminal name (uppercase, like NUMBER or _SEP)",
            pos,
        )

    def directive(self) -> None:
        tok = self.take()
        if tok.text == "%ignore":
            start = self.peek().pos
            body = self.expansions(allow_alias=False)
            self.ignores.append((body, start))
            self.end_of_statement()
        elif tok.text == "%import":
            self.import_()
        elif tok.text in ("%declare", "%override", "%extend"):
            self.fail(
                f"{tok.text} is not supported: it needs Lark's own lexer or imported grammars; define the symbols in full here",
                tok.pos,
            )
        else:
            self.fail(
                f"unknown directive {tok.text!r}; the supported ones are %ignore and %import common.NAME", tok.pos
            )

    def import_(self) -> None:
        tok = self.take()
        if tok.kind != "name":
            self.fail(
                "only '%import common.NAME' is supported (no relative or file imports); define the terminal here instead",
                tok.pos,
            )
        path = [tok]
        while self.peek().text == "." and self.peek().kind == "op":
            self.i += 1
            name = self.take()
            if name.kind != "name":
                self.unexpected(name, "a name after '.'")
            path.append(name)
        if path[0].text != "common" or len(path) > 2:
            self.fail(
                "only the 'common' module can be imported (%import common.NAME); define the symbol here instead",
                tok.pos,
            )
        items: list[tuple[_Tok, _Tok]] = []  # (imported name, name defined here)
        if len(path) == 2:
            target = path[1]
            if self.peek().text == "->" and self.peek().kind == "op":
                self.i += 1
                target = self.take()
                if target.kind != "name":
                    self.unexpected(target, "a terminal name after '->'")
            items.append((path[1], target))
        else:
            self.expect("(", "'.NAME' or '(NAME, ...)' after %import common")
            while True:
                name = self.take()
                if name.kind != "name":
                    self.unexpected(name, "a terminal name")
                items.append((name, name))
                sep = self.take()
                if sep.text == ")" and sep.kind == "op":
                    break
                if sep.text != "," or sep.kind != "op":
                    self.unexpected(sep, "',' or ')'")
        self.end_of_statement()
        for source, target in items:
            if source.text not in _COMMON:
                self.fail(
                    f"common has no terminal {source.text} here; the known ones are {', '.join(_COMMON)}", source.pos
                )
            if not self.check_name(target.text, target.pos):
                self.fail(f"import {source.text} under a terminal name (uppercase), not {target.text!r}", target.pos)
            old = self.defs.get(target.text)
            if old is not None and old.tree is _COMMON[source.text]:
                continue  # Lark takes the same import twice
            if old is not None:
                self.fail(
                    f"terminal {target.text} is defined twice (first at line {self.line_of(old.pos)})", target.pos
                )
            self.defs[target.text] = _Def(target.text, target.pos, tree=_COMMON[source.text], done=True)

    # -- expansions

    def expansions(self, allow_alias: bool) -> _Alts:
        alts = [self.alias(allow_alias)]
        while self.peek().text == "|" and self.peek().kind == "op":
            self.i += 1
            alts.append(self.alias(allow_alias))
        return _Alts(tuple(alts))

    def alias(self, allow_alias: bool) -> _Seq:
        items = []
        while True:
            tok = self.peek()
            if tok.kind in ("string", "regex", "name") or (tok.kind == "op" and tok.text in "(["):
                items.append(self.expr())
            else:
                break
        tok = self.peek()
        if tok.text == "->" and tok.kind == "op":
            if not allow_alias:
                self.fail("an alias '-> name' belongs at the end of a rule's top-level alternative only", tok.pos)
            self.i += 1
            name = self.take()
            if name.kind != "name":
                self.unexpected(name, "a name after '->'")
        return _Seq(tuple(items))

    def expr(self) -> _Expr:
        item = self.atom()
        tok = self.peek()
        if tok.kind != "op":
            return item
        if tok.text in "*+?":
            self.i += 1
            if tok.text == "*":
                return _Rep(item, 0, None, "star")
            return _Rep(item, 1, None, "plus") if tok.text == "+" else _Rep(item, 0, 1, "opt")
        if tok.text == "~":
            self.i += 1
            lo = self.count()
            hi = lo
            if self.peek().text == ".." and self.peek().kind == "op":
                self.i += 1
                hi = self.count()
            if hi < lo:
                self.fail(f"the repeat range {lo}..{hi} is empty; write the smaller count first", tok.pos)
            return _Rep(item, lo, hi, "rep")
        return item

    def count(self) -> int:
        tok = self.take()
        if tok.kind != "number" or tok.text.startswith("-"):
            self.unexpected(tok, "a count (a non-negative integer)")
        return int(tok.text)

    def atom(self) -> _Expr:
        tok = self.take()
        if tok.kind == "op" and tok.text in "([":
            inner = self.expansions(allow_alias=False)
            close = ")" if tok.text == "(" else "]"
            self.expect(close, f"{close!r} to close the {tok.text!r} at line {self.line_of(tok.pos)}")
            return inner if tok.text == "(" else _Rep(inner, 0, 1, "opt")
        if tok.kind == "name":
            self.check_name(tok.text, tok.pos)
            nxt = self.peek()
            if nxt.text == "{" and nxt.kind == "op":
                self.fail(
                    "rule templates name{...} are not supported; write out each instance as its own rule", tok.pos
                )
            return _Name(tok.text, tok.pos)
        if tok.kind == "regex":
            end = tok.text.rindex("/")
            return _Regex(tok.text[1:end], tok.text[end + 1 :], tok.text, tok.pos)
        assert tok.kind == "string"
        icase = tok.text.endswith("i")
        body = tok.text[1 : -2 if icase else -1]
        text = _decode(body, tok.pos + 1, self.fail)
        if self.peek().text == ".." and self.peek().kind == "op":
            self.i += 1
            hi_tok = self.take()
            if hi_tok.kind != "string" or hi_tok.text.endswith("i"):
                self.unexpected(hi_tok, 'a one-character literal after ".."')
            hi = _decode(hi_tok.text[1:-1], hi_tok.pos + 1, self.fail)
            if icase or len(text) != 1 or len(hi) != 1:
                self.fail('a range "a".."z" takes two one-character literals (no i flag)', tok.pos)
            if ord(hi) < ord(text):
                self.fail(f"the range {tok.text}..{hi_tok.text} is empty; write the smaller character first", tok.pos)
            src = self.text[tok.pos : hi_tok.pos + len(hi_tok.text)]
            return _Lit(Chars(_without_surrogates(ord(text), ord(hi))), src, tok.pos)
        if not text:
            self.fail("empty literal: Lark refuses zero-width terminals; make the use optional instead", tok.pos)
        return _Lit(_icase(text, tok.pos + 1, self.fail) if icase else literal(text), tok.text, tok.pos)


# ---------------------------------------------------------------- resolution


class _Builder:
    """Terminal trees (inlining named terminals) and BNF rules (desugaring EBNF)."""

    def __init__(self, p: _Parser) -> None:
        self.p = p
        self.rules: dict[str, tuple[tuple[str, ...], ...]] = {}
        self.terminals: dict[str, Node] = {}
        self.anonymous: dict[Node, str] = {}  # tree -> name, so equal literals share
        self.counter = 0

    def regex(self, r: _Regex) -> Node:
        for k, flag in enumerate(r.flags):
            if flag not in "imsxlu":
                self.p.fail(
                    f"unknown regex flag {flag!r}; Lark's flags are imslux", r.pos + len(r.src) - len(r.flags) + k
                )
            if flag in "imxl":
                why = {
                    "i": "spell out both cases, e.g. [aA]",
                    "m": "^ and $ have no meaning inside a terminal",
                    "x": "remove the layout whitespace and comments",
                    "l": "locale-dependent matching has no fixed language",
                }[flag]
                self.p.fail(f"regex flag {flag!r} is not supported: {why}", r.pos + len(r.src) - len(r.flags) + k)
        try:
            return parse_regex(r.body, dotall="s" in r.flags)
        except UnsupportedGrammarError as e:
            at = r.pos + 1 + (e.offset or 0)
            self.p.fail(f"in regex {r.src}: {e.message}", at)

    def tree(self, e: _Expr, owner: str) -> Node:
        if isinstance(e, _Lit):
            return e.tree
        if isinstance(e, _Regex):
            return self.regex(e)
        if isinstance(e, _Name):
            d = self.p.defs.get(e.name)
            if not _TERM_NAME.match(e.name):
                self.p.fail(
                    f"rule {e.name} is used inside the terminal {owner}; terminals can only contain terminals (make {owner} a rule)",
                    e.pos,
                )
            if d is None:
                self.undefined(e)
            return self.terminal(d, e.pos)
        if isinstance(e, _Seq):
            items = tuple(self.tree(i, owner) for i in e.items)
            return items[0] if len(items) == 1 else Concat(items)
        if isinstance(e, _Alts):
            alts = tuple(self.tree(a, owner) for a in e.alts)
            return alts[0] if len(alts) == 1 else Alt(alts)
        return Repeat(self.tree(e.item, owner), e.min, e.max)

    def terminal(self, d: _Def, used_at: int) -> Node:
        if d.resolving:
            self.p.fail(
                f"terminal {d.name} refers to itself; recursion is only possible in rules (make it a rule)", used_at
            )
        if not d.done:
            assert d.body is not None
            d.resolving = True
            d.tree = self.tree(d.body, d.name)
            d.resolving = False
            d.done = True
        assert d.tree is not None
        return d.tree

    def undefined(self, e: _Name) -> NoReturn:
        if _TERM_NAME.match(e.name):
            hint = f"; add '%import common.{e.name}'" if e.name in _COMMON else "; define it as NAME: ..."
            self.p.fail(f"terminal {e.name} is not defined{hint}", e.pos)
        self.p.fail(f"rule {e.name} is not defined; define it as {e.name}: ...", e.pos)

    def use_terminal(self, name: str, tree: Node, pos: int) -> str:
        if _nullable(tree):
            self.p.fail(
                f"terminal {name} matches the empty string, which Lark refuses; make its use optional instead", pos
            )
        self.terminals[name] = tree
        return name

    def fresh(self, owner: str, kind: str) -> str:
        self.counter += 1
        return f"__{owner}_{kind}_{self.counter - 1}"

    def symbols(self, e: _Expr, owner: str) -> tuple[str, ...]:
        """The symbols that stand for ``e`` inside an alternative of rule ``owner``."""
        if isinstance(e, (_Lit, _Regex)):
            tree = e.tree if isinstance(e, _Lit) else self.regex(e)
            name = self.anonymous.setdefault(tree, e.src)
            return (self.use_terminal(name, tree, e.pos),)
        if isinstance(e, _Name):
            d = self.p.defs.get(e.name)
            if d is None:
                self.undefined(e)
            if _TERM_NAME.match(e.name):
                self.use_terminal(e.name, self.terminal(d, e.pos), e.pos)
            return (e.name,)
        if isinstance(e, _Seq):
            return tuple(s for i in e.items for s in self.symbols(i, owner))
        if isinstance(e, _Alts):
            if len(e.alts) == 1:
                return self.symbols(e.alts[0], owner)
            name = self.fresh(owner, "group")
            self.rules[name] = ()  # reserve the slot so helper rules list in creation order
            self.rules[name] = tuple(self.symbols(a, owner) for a in e.alts)
            return (name,)
        body = self.symbols(e.item, owner)
        if e.kind == "rep":
            assert e.max is not None
            tail: tuple[str, ...] = ()
            for _ in range(e.max - e.min):  # each optional copy nests the next
                name = self.fresh(owner, "rep")
                self.rules[name] = ((), body + tail)
                tail = (name,)
            return body * e.min + tail
        name = self.fresh(owner, e.kind)
        if e.kind == "opt":
            self.rules[name] = (body, ())
        elif e.kind == "star":
            self.rules[name] = ((), (name, *body))
        else:
            self.rules[name] = (body, (name, *body))
        return (name,)


def parse_lark(text: str, *, start: str = "start") -> Cfg:
    """Parse Lark-style grammar text (see the module docstring for the syntax) into a
    ``Cfg`` whose start symbol is the rule ``start``.

    Raises ``UnsupportedGrammarError`` with ``line`` and ``column`` for malformed text
    and for constructs outside the supported subset.

    >>> cfg = parse_lark('''
    ... start: NUMBER ("," NUMBER)*
    ... %import common.NUMBER
    ... %ignore " "
    ... ''')
    >>> dict(cfg.rules)
    {'start': (('NUMBER', '__start_star_0'),), '__start_star_0': ((), ('__start_star_0', '","', 'NUMBER'))}
    >>> sorted(cfg.terminals), cfg.ignore
    (['" "', '","', 'NUMBER'], ('" "',))
    >>> parse_lark('start: "a"\\nstart: "b"')
    Traceback (most recent call last):
    ...
    tokstream.errors.UnsupportedGrammarError: rule start is defined twice (first at line 1); merge the definitions with '|' (line 2, column 1)
    """
    p = _Parser(text)
    p.grammar()
    b = _Builder(p)
    for d in p.defs.values():
        if _TERM_NAME.match(d.name):
            b.terminal(d, d.pos)
    for d in p.defs.values():
        if not _TERM_NAME.match(d.name):
            assert d.body is not None
            owner = d.name.lstrip("_")
            b.rules[d.name] = ()
            b.rules[d.name] = tuple(b.symbols(alt, owner) for alt in d.body.alts)
    ignore: list[str] = []
    for body, pos in p.ignores:
        if len(body.alts) == 1 and len(body.alts[0].items) == 1:
            (only,) = body.alts[0].items
            if isinstance(only, _Name) and not _TERM_NAME.match(only.name):
                p.fail(f"%ignore takes terminals, not the rule {only.name}; make it a terminal", only.pos)
            if isinstance(only, (_Name, _Lit, _Regex)):
                (name,) = b.symbols(only, "ignore")
                ignore.append(name)
                continue
        tree = b.tree(body, "%ignore")
        ignore.append(b.use_terminal(f"__IGNORE_{len(ignore)}", tree, pos))
    if start not in b.rules or start.startswith("__"):
        p.fail(f"no rule named {start!r}; define it ({start}: ...) or pass start= the name of the top rule", 0)
    return Cfg(
        start=start,
        rules=MappingProxyType(b.rules),
        terminals=MappingProxyType(b.terminals),
        ignore=tuple(dict.fromkeys(ignore)),
    )

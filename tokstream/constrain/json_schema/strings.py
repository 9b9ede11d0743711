"""Regex trees for the string keywords ``pattern`` and ``format`` of JSON Schema.

The trees (``grammar.nodes``) are over decoded characters (code points), i.e. the
string's value, not its JSON spelling: turning each character set into raw or escaped
JSON text and adding the quotes is the caller's job. A tree must never match a string
the schema forbids; where it refuses valid strings, this docstring says so.

``pattern_tree(pattern)``
    The strings ``s`` that the ECMA-262 regex ``pattern`` matches *somewhere* (search
    semantics, as JSON Schema specifies) **and** that Python's ``re.search(pattern, s)``
    matches (what the ``jsonschema`` package checks). Characters are code points, as
    with ECMA's ``u`` flag and in Python. The pattern is read by a tokenizer of ECMA
    syntax and rewritten into Python syntax for ``grammar.regex.parse_regex``, each
    character set spelled out as explicit ranges:

    - exact: literals; ``\\t \\n \\v \\f \\r``, ``\\0`` (not before a digit),
      ``\\xhh``, ``\\uhhhh``, ``\\cX`` (X a letter), escaped punctuation (``\\/``
      ``\\-`` ``\\@`` ..., literal in ECMA without the ``u`` flag and in Python);
      classes ``[...] [^...]`` with ranges and class escapes, where each class is the
      exact intersection of what the two engines put in it (``\\d`` -> ``[0-9]``,
      ``\\w`` -> ``[A-Za-z0-9_]``, ``\\s`` -> the characters both call whitespace:
      not U+FEFF (ECMA only) nor U+001C-U+001F, U+0085 (Python only); ``\\D \\W \\S``
      and ``[^...]`` -> the characters both engines put there, i.e. the complement of
      the union); ``.`` -> anything but ``\\n \\r`` U+2028 U+2029 (ECMA's dot, inside
      Python's); groups ``( ) (?: )`` and named groups ``(?<name> )`` (Python rejects
      the latter; ECMA's meaning is used); ``| * + ? {n} {n,} {n,m}`` and their lazy
      forms; ``{`` that starts no quantifier as a literal; ``[]`` (matches nothing) and
      ``[^]`` (any character) where Python rejects the pattern, so ECMA's reading is
      the only one; ``^`` at the start and ``$`` at the end of a top-level branch
      (``^a|b$``): ``$`` is ECMA's end of input, which excludes Python's extra match
      before a final ``"\\n"``; an unanchored side gets "any string".
    - stricter (refuses strings both engines match): the per-class intersection is
      applied atom by atom, so a string that the engines match only through
      *different* characters of ``\\s``/``\\S`` (``\\sa|\\sb`` on ``"\\x1ca\\ufeffb"``)
      is refused.
    - refused with ``UnsupportedSchemaError(keyword="pattern")``: lookarounds,
      backreferences ``\\1 \\k<name>``, ``\\b \\B``, anchors anywhere else (inside a
      group, mid-branch, quantified), ``\\p{...}`` and ``\\u{...}``, escapes of other
      letters (``\\a \\q \\A \\Z``: read differently by ECMA with and without the
      ``u`` flag and by Python), legacy octal escapes, surrogate escapes, ``(?...)``
      forms other than the above (flags, comments, ``(?P<...>``), ``{,n}`` (a
      quantifier to Python, a literal to ECMA), ``[]``/``[^]`` in a pattern Python
      accepts (it reads them as a class starting with ``]``), class ranges with a
      class escape as an end, repetition bounds above 1000, and malformed patterns.

    Cost: linear in the pattern; the tree is the pattern's own plus ``[any]*`` on each
    unanchored side, so the automaton is the pattern's search automaton (a ``.*`` on
    both sides can make a subset construction grow, bounded by ``MAX_STATES``).

``format_tree(name)``
    The format as an assertion, for ``date-time date time duration email hostname
    ipv4 ipv6 uuid uri``; anything else raises ``UnsupportedSchemaError(keyword=
    "format")``. Each language is a subset of what ``jsonschema``'s draft 2020-12
    ``FORMAT_CHECKER`` accepts with its ``format-nongpl`` dependencies, and of the RFC:

    - ``date``, ``date-time``, ``time`` (RFC 3339): exact against the checker, which is
      stricter than the RFC in rejecting the leap second ``:60`` and the year 0000, so
      these are refused too. Days are limited per month and Feb 29 only in leap years
      (exact Gregorian rule, on the year's last two and first two digits). ``T``/``t``,
      ``Z``/``z``, any number of fraction digits, offsets ``+hh:mm`` with hh <= 23.
      Refused although the checker accepts it: a final ``"\\n"`` (its ``$``).
    - ``duration``: exactly RFC 3339 Appendix A (``P1Y2M3DT4H5M6S``, ``P3W``, ``PT0S``
      ...); the checker (isoduration) also takes fractions, ISO 8601 alternatives and
      any designator order, refused here.
    - ``email``: dot-atom local part (RFC 5322 atext) ``@`` a hostname (below) or an
      address literal ``[1.2.3.4]`` / ``[IPv6:...]``. Refused: quoted local parts,
      general address literals, and domains outside the hostname bound. The local
      part's 64-octet limit (RFC 5321 4.5.3.1.1) is not a syntax rule and is not
      enforced (the checker only asks for an ``@``).
    - ``hostname``: RFC 1123 labels (letters, digits, inner hyphens, 1-63 characters),
      no trailing dot. Refused: labels with ``--`` as 3rd and 4th characters, which
      RFC 5891 reserves (``xn--`` A-labels must be valid Punycode, not a regular
      language; the checker takes them all, the Test Suite refuses bad ones), so
      IDN A-labels are refused. The total of 253 characters is guaranteed by a
      stricter bound: up to 3 labels of up to 63 characters, or up to 4 of up to 62,
      8 of up to 30, 16 of up to 14, 32 of up to 6 (each keeps the total <= 253).
      Exactly 253 would cost some 28,000 automaton states; the tiers cost 1,899 and
      take every name of ordinary shape (about 98% of hypothesis's ``domains()``:
      the misses mix a long label with many others).
    - ``ipv4``: exact (dotted quad, 0-255, no leading zeros, as ``ipaddress``).
    - ``ipv6``: RFC 4291 text forms as RFC 3986 ``IPv6address`` (``::`` compression,
      embedded IPv4 in the last 32 bits, 1-4 hex digits per group); refused: zone
      ids ``%eth0`` (the checker refuses them too).
    - ``uuid``: 8-4-4-4-12 hex digits, either case (exact against the checker's
      hyphenated form).
    - ``uri``: RFC 3986 ``URI`` (scheme required), ASCII only; the IPvFuture ``v`` is
      lowercase only (the checker's). Refused: a final ``"\\n"``.

    Cost, as (tree nodes with bounded repetition unrolled, states of the byte-level
    automaton over all characters): ``time`` 33/19, ``duration`` 97/27, ``uuid``
    42/37, ``ipv4`` 76/32, ``date`` 114/42, ``date-time`` 148/61, ``ipv6`` 1,006/533,
    ``uri`` 1,132/576, ``hostname`` 2,543/1,899, ``email`` 3,646/2,471; trees are
    built once per name (cached).
"""

from __future__ import annotations

import functools
import re
import unicodedata
import warnings

from ...errors import UnsupportedGrammarError, UnsupportedSchemaError
from ..grammar import charset
from ..grammar.nodes import Alt, Chars, Concat, Node, Repeat
from ..grammar.regex import parse_regex

__all__ = ["FORMATS", "format_tree", "pattern_tree"]

# ------------------------------------------------------------------ character sets


def _chars(text: str) -> charset.Ranges:
    return charset.normalize((ord(c), ord(c)) for c in text)


#: ECMA-262 ``\\d`` and ``\\w`` (ASCII, no ``i`` flag).
_ECMA_D: charset.Ranges = ((0x30, 0x39),)
_ECMA_W: charset.Ranges = charset.normalize([(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)])
#: ECMA's line terminators: what ``.`` leaves out.
_ECMA_LINE_TERMINATORS = _chars("\n\r\u2028\u2029")


@functools.cache
def _ecma_s() -> charset.Ranges:
    # WhiteSpace (TAB VT FF SP NBSP ZWNBSP and every Zs) plus LineTerminator; Zs from the
    # running Python's Unicode tables.
    zs = [cp for cp in range(0x3001) if unicodedata.category(chr(cp)) == "Zs"]
    return charset.union(_chars("\t\v\f \xa0\ufeff"), _ECMA_LINE_TERMINATORS, charset.normalize((c, c) for c in zs))


def _class_sets(letter: str) -> tuple[charset.Ranges, charset.Ranges]:
    """(ECMA's set, Python's set) of the class escape ``\\letter``."""
    lower = letter.lower()
    ecma = {"d": _ECMA_D, "w": _ECMA_W}.get(lower) or _ecma_s()
    python = charset.python_class(lower)
    if letter.isupper():
        return charset.negate(ecma), charset.negate(python)
    return ecma, python


# ------------------------------------------------------------------ pattern


def _refuse(what: str, offset: int) -> UnsupportedSchemaError:
    return UnsupportedSchemaError(f"{what} (at offset {offset} of the pattern)", keyword="pattern")


def _spell(ranges: charset.Ranges) -> str:
    """A Python class for the set (escapes only, so nothing in it is syntax)."""
    if not ranges:
        return "[^\\x00-\\U0010ffff]"
    return "[" + "".join(f"\\U{lo:08x}" if lo == hi else f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in ranges) + "]"


_HEX = "0123456789abcdefABCDEF"
_QUANTIFIER = re.compile(r"\{([0-9]+)(,([0-9]*))?\}")
_GROUP_NAME = re.compile(r"\(\?<([A-Za-z_$][A-Za-z0-9_$]*)>")


class _Ecma:
    """Reads an ECMA pattern into top-level branches of Python regex text, anchors
    taken off: (anchored at start, text, anchored at end)."""

    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # FutureWarning on "[[" and the like
            try:
                re.compile(pattern)
                self.python_ok = True
            except (re.error, OverflowError, RecursionError):
                self.python_ok = False

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.p[j] if j < len(self.p) else ""

    def branches(self) -> list[tuple[bool, str, bool]]:
        out: list[tuple[bool, str, bool]] = []
        depth = 0
        parts: list[str] = []
        start_anchor = end_anchor = False
        quantifiable = False  # the last item can take a quantifier
        while True:
            c = self.peek()
            at = self.i
            if c == "" or (c == "|" and depth == 0):
                if depth:
                    raise _refuse("an unclosed group", at)
                out.append((start_anchor, "".join(parts), end_anchor))
                if c == "":
                    return out
                self.i += 1
                parts, start_anchor, end_anchor, quantifiable = [], False, False, False
                continue
            if end_anchor:
                raise _refuse("only '|' or the end may follow '$' (anchors mid-pattern are not supported)", at)
            if c == "^":
                if depth or parts:
                    raise _refuse("the anchor ^ is only supported at the start of a top-level branch", at)
                start_anchor = True
                self.i += 1
                if self.peek() in ("*", "+", "?", "{") and self.quantifier_here():
                    raise _refuse("a quantified anchor", at)
                continue
            if c == "$":
                if depth:
                    raise _refuse("the anchor $ is only supported at the end of a top-level branch", at)
                self.i += 1
                while self.peek() == "$":
                    self.i += 1
                end_anchor = True
                continue
            if c in "*+?" or (c == "{" and self.quantifier_here()):
                if not quantifiable:
                    raise _refuse("a quantifier with nothing to repeat", at)
                parts.append(self.quantifier())
                quantifiable = False
                continue
            quantifiable = True
            if c == "(":
                parts.append(self.group_open())
                depth += 1
                quantifiable = False
            elif c == ")":
                if depth == 0:
                    raise _refuse("an unmatched ')'", at)
                depth -= 1
                self.i += 1
                parts.append(")")
            elif c == "|":
                self.i += 1
                parts.append("|")
                quantifiable = False
            elif c == "[":
                parts.append(_spell(self.char_class()))
            elif c == ".":
                self.i += 1
                parts.append(_spell(charset.intersect(charset.negate(_ECMA_LINE_TERMINATORS), charset.DOT)))
            elif c == "\\":
                parts.append(self.escape())
            else:
                self.i += 1
                parts.append(_spell(_chars(c)) if 0xD800 <= ord(c) <= 0xDFFF else f"\\U{ord(c):08x}")

    def quantifier_here(self) -> bool:
        # Whether a quantifier starts here; "{,n}" is refused (Python's 0..n, ECMA's text).
        if self.peek() in ("*", "+", "?"):
            return True
        if re.match(r"\{,[0-9]*\}", self.p[self.i :]):
            raise _refuse("'{,n}' is a quantifier to Python but literal text to ECMA", self.i)
        return _QUANTIFIER.match(self.p, self.i) is not None

    def quantifier(self) -> str:
        at = self.i
        if self.peek() == "{":
            m = _QUANTIFIER.match(self.p, self.i)
            assert m is not None
            self.i = m.end()
            text = m.group(0)
        else:
            text = self.peek()
            self.i += 1
        if self.peek() == "?":
            self.i += 1
            text += "?"
        if self.peek() in ("*", "+", "?") or (self.peek() == "{" and self.quantifier_here()):
            raise _refuse("a quantifier after a quantifier (an error in ECMA, possessive in Python)", at)
        return text

    def group_open(self) -> str:
        at = self.i
        if self.peek(1) != "?":
            self.i += 1
            return "("
        if self.peek(2) == ":":
            self.i += 3
            return "(?:"
        if self.peek(2) in ("=", "!") or (self.peek(2) == "<" and self.peek(3) in ("=", "!")):
            raise _refuse("lookarounds are not regular", at)
        m = _GROUP_NAME.match(self.p, self.i)
        if m:
            self.i = m.end()
            return "(?:"
        raise _refuse(f"the group syntax {self.p[at : at + 3]!r} is not supported", at)

    def escape(self) -> str:
        at = self.i
        c = self.peek(1)
        if c in ("b", "B"):
            raise _refuse(f"the word boundary \\{c} is not supported", at)
        if c in "dDwWsS" and c:
            self.i += 2
            ecma, python = _class_sets(c)
            return _spell(charset.intersect(ecma, python))
        cp = self.char_escape(in_class=False)
        return _spell(_chars(chr(cp)))

    def char_escape(self, in_class: bool) -> int:
        """The code point of the character escape at self.i (``\\`` then a letter,
        digit or punctuation); moves past it."""
        at = self.i
        c = self.peek(1)
        self.i += 2
        if c == "":
            raise _refuse("a '\\' at the end of the pattern", at)
        simple = {"t": 0x09, "n": 0x0A, "v": 0x0B, "f": 0x0C, "r": 0x0D}
        if c in simple:
            return simple[c]
        if in_class and c == "b":
            return 0x08
        if c == "c":
            x = self.peek()
            if x.isascii() and x.isalpha():
                self.i += 1
                return ord(x) % 32
            raise _refuse("'\\c' not followed by a letter", at)
        if c == "0" and not self.peek().isdigit():
            return 0
        if c.isdigit():
            raise _refuse(f"the backreference or octal escape \\{c} is not supported", at)
        if c == "x" or c == "u":
            n = 2 if c == "x" else 4
            digits = self.p[self.i : self.i + n]
            if len(digits) != n or any(d not in _HEX for d in digits):
                raise _refuse(f"\\{c} needs {n} hex digits here ('\\u{{...}}' is not supported)", at)
            self.i += n
            cp = int(digits, 16)
            if 0xD800 <= cp <= 0xDFFF:
                raise _refuse("surrogate escapes are not supported (characters are code points)", at)
            return cp
        if c.isascii() and c.isalpha():
            raise _refuse(f"the escape \\{c} is not supported (ECMA and Python read it differently)", at)
        if 0xD800 <= ord(c) <= 0xDFFF:
            raise _refuse("a surrogate is no character", at)
        return ord(c)

    def class_atom(self) -> tuple[charset.Ranges, charset.Ranges] | int:
        # A code point, or a class escape's (ECMA, Python) sets.
        c = self.peek()
        if c == "\\":
            letter = self.peek(1)
            if letter in "dDwWsS" and letter:
                self.i += 2
                return _class_sets(letter)
            if letter == "-":
                self.i += 2
                return 0x2D
            if letter == "B":
                raise _refuse("\\B in a class is not supported", self.i)
            return self.char_escape(in_class=True)
        if c == "":
            raise _refuse("an unterminated class", self.i)
        self.i += 1
        if 0xD800 <= ord(c) <= 0xDFFF:
            raise _refuse("a surrogate is no character", self.i - 1)
        return ord(c)

    def char_class(self) -> charset.Ranges:
        at = self.i
        self.i += 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        if self.peek() == "]" and self.python_ok:
            raise _refuse("'[]' and '[^]' mean other classes to Python, which accepts this pattern", at)
        ecma: list[charset.Ranges] = []
        python: list[charset.Ranges] = []
        while self.peek() != "]":
            here = self.i
            first = self.class_atom()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.i += 1
                last = self.class_atom()
                if not isinstance(first, int) or not isinstance(last, int):
                    raise _refuse("a class range with a class escape as an end", here)
                if first > last:
                    raise _refuse("a class range out of order", here)
                r = charset.normalize([(first, last)])
                ecma.append(r)
                python.append(r)
            elif isinstance(first, int):
                ecma.append(_chars(chr(first)))
                python.append(_chars(chr(first)))
            else:
                ecma.append(first[0])
                python.append(first[1])
        self.i += 1
        e, p = charset.union(*ecma), charset.union(*python)
        if negated:
            e, p = charset.negate(e), charset.negate(p)
        return charset.intersect(e, p)


_ANY_STRING: Node = Repeat(Chars(charset.ANY), 0, None)


def pattern_tree(pattern: str) -> Node:
    """The tree of the strings the JSON Schema ``pattern`` accepts: matched somewhere
    by the ECMA-262 regex and by Python's ``re.search`` (module notes). Raises
    ``UnsupportedSchemaError`` (keyword ``"pattern"``) for what it cannot do exactly.

    >>> from tokstream.constrain.grammar.nodes import literal
    >>> pattern_tree("^ab$") == literal("ab")
    True
    >>> pattern_tree("(?=a)")
    Traceback (most recent call last):
        ...
    tokstream.errors.UnsupportedSchemaError: the keyword 'pattern': lookarounds are not regular (at offset 0 of the pattern)
    """
    branches = _Ecma(pattern).branches()
    trees: list[Node] = []
    for start, text, end in branches:
        try:
            body = parse_regex(text)
        except UnsupportedGrammarError as e:
            raise UnsupportedSchemaError(f"{e.message} (in the pattern {pattern!r})", keyword="pattern") from e
        items = ([] if start else [_ANY_STRING]) + [body] + ([] if end else [_ANY_STRING])
        trees.append(items[0] if len(items) == 1 else Concat(tuple(items)))
    return trees[0] if len(trees) == 1 else Alt(tuple(trees))


# ------------------------------------------------------------------ formats

_DEC_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_IPV4 = rf"{_DEC_OCTET}(?:\.{_DEC_OCTET}){{3}}"
_H16 = "[0-9A-Fa-f]{1,4}"
_LS32 = rf"(?:{_H16}:{_H16}|{_IPV4})"


def _ipv6_text() -> str:
    # RFC 3986 IPv6address: k explicit groups before "::" and the rest after it.
    forms = [rf"(?:{_H16}:){{6}}{_LS32}", rf"::(?:{_H16}:){{5}}{_LS32}"]
    tails = [rf"(?:{_H16}:){{4}}{_LS32}", rf"(?:{_H16}:){{3}}{_LS32}", rf"(?:{_H16}:){{2}}{_LS32}"]
    tails += [rf"{_H16}:{_LS32}", _LS32, _H16, ""]
    for k, tail in enumerate(tails):
        head = _H16 if k == 0 else rf"(?:(?:{_H16}:){{0,{k}}}{_H16})"
        forms.append(rf"(?:{head})?::{tail}")
    return "(?:" + "|".join(forms) + ")"


_IPV6 = _ipv6_text()

_YEAR = "(?:[0-9]{3}[1-9]|[0-9]{2}[1-9]0|[0-9][1-9]00|[1-9]000)"  # 0001-9999
_LEAP_YEAR = "(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
_MONTH_DAY = (
    "(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
    "|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
    "|02-(?:0[1-9]|1[0-9]|2[0-8]))"
)
_FULL_DATE = f"(?:{_YEAR}-{_MONTH_DAY}|{_LEAP_YEAR}-02-29)"
_HOUR = "(?:[01][0-9]|2[0-3])"
_MINUTE = "[0-5][0-9]"
_FULL_TIME = rf"{_HOUR}:{_MINUTE}:{_MINUTE}(?:\.[0-9]+)?(?:[Zz]|[+-]{_HOUR}:{_MINUTE})"

_DIGITS = "[0-9]+"
_DUR_TIME = f"T(?:{_DIGITS}H(?:{_DIGITS}M(?:{_DIGITS}S)?)?|{_DIGITS}M(?:{_DIGITS}S)?|{_DIGITS}S)"
_DUR_DATE = f"(?:{_DIGITS}D|{_DIGITS}M(?:{_DIGITS}D)?|{_DIGITS}Y(?:{_DIGITS}M(?:{_DIGITS}D)?)?)(?:{_DUR_TIME})?"
_DURATION = f"P(?:{_DUR_DATE}|{_DUR_TIME}|{_DIGITS}W)"

_UNRESERVED = "A-Za-z0-9._~\\-"
_SUB_DELIMS = "!$&'()*+,;="
_PCT = "%[0-9A-Fa-f]{2}"
_PCHAR = f"(?:[{_UNRESERVED}{_SUB_DELIMS}:@]|{_PCT})"
_AUTHORITY = (
    f"(?:(?:[{_UNRESERVED}{_SUB_DELIMS}:]|{_PCT})*@)?"
    rf"(?:\[(?:{_IPV6}|v[0-9A-Fa-f]+\.[{_UNRESERVED}{_SUB_DELIMS}:]+)\]|(?:[{_UNRESERVED}{_SUB_DELIMS}]|{_PCT})*)"
    "(?::[0-9]*)?"
)
_URI = (
    "[A-Za-z][A-Za-z0-9+.-]*:"
    f"(?://{_AUTHORITY}(?:/{_PCHAR}*)*|/(?:{_PCHAR}+(?:/{_PCHAR}*)*)?|{_PCHAR}+(?:/{_PCHAR}*)*|)"
    rf"(?:\?(?:{_PCHAR}|[/?])*)?(?:#(?:{_PCHAR}|[/?])*)?"
)

_ATEXT = "A-Za-z0-9!#$%&'*+/=?^_`{|}~\\-"

#: (most labels, longest label) pairs; labels x (length + 1) - 1 <= 253 in each.
_HOSTNAME_TIERS = ((3, 63), (4, 62), (8, 30), (16, 14), (32, 6))


def _label(longest: int) -> str:
    # A letter or digit; then the rest, which ends in one, with no "--" as the 3rd and
    # 4th characters (RFC 5891 4.2.3.1 reserves those labels: "xn--" must be valid
    # Punycode, which no automaton checks, so all of them are refused).
    ld, ldh = "[A-Za-z0-9]", "[A-Za-z0-9-]"
    # Characters 3 and 4 first, then one shared tail, so the automaton's states for the
    # two spellings of 3-4 merge.
    rest = f"{ld}{ld}|-{ld}|(?:{ld}{ldh}|-{ld}){ldh}{{0,{longest - 5}}}{ld}"
    return f"{ld}(?:{ld}|{ldh}{ld}|{ldh}(?:{rest}))?"


def _hostname() -> Node:
    return Alt(tuple(parse_regex(rf"{_label(n)}(?:\.{_label(n)}){{0,{k - 1}}}") for k, n in _HOSTNAME_TIERS))


def _email() -> Node:
    local = parse_regex(rf"[{_ATEXT}]+(?:\.[{_ATEXT}]+)*@")
    literal_ = parse_regex(rf"\[(?:{_IPV4}|IPv6:{_IPV6})\]")
    return Concat((local, Alt((_hostname(), literal_))))


_FORMAT_TEXT = {
    "date-time": f"{_FULL_DATE}[Tt]{_FULL_TIME}",
    "date": _FULL_DATE,
    "time": _FULL_TIME,
    "duration": _DURATION,
    "ipv4": _IPV4,
    "ipv6": _IPV6,
    "uuid": "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}",
    "uri": _URI,
}

#: The format names ``format_tree`` knows.
FORMATS = frozenset({*_FORMAT_TEXT, "email", "hostname"})


@functools.cache
def format_tree(name: str) -> Node:
    """The tree of the strings that satisfy ``format: name`` (module notes say which
    formats and how exactly). Raises ``UnsupportedSchemaError`` (keyword ``"format"``)
    for other names.

    >>> from tokstream.constrain.grammar.automaton import compile_dfa
    >>> dfa = compile_dfa(format_tree("ipv4"))
    >>> [bool(dfa.accepting[s]) if (s := dfa.run(0, t.encode())) >= 0 else False for t in ("10.0.0.1", "01.0.0.1")]
    [True, False]
    """
    if name == "hostname":
        return _hostname()
    if name == "email":
        return _email()
    text = _FORMAT_TEXT.get(name)
    if text is None:
        known = ", ".join(sorted(FORMATS))
        raise UnsupportedSchemaError(f"the format {name!r} is not supported (supported: {known})", keyword="format")
    return parse_regex(text)

r"""Match by Unicode 16.0 classes, as tiktoken and ``tokenizers`` do, on any ``regex`` release.

tiktoken's Rust engine classifies characters by Unicode 16.0, and so does ``tokenizers``'
Oniguruma; the ``regex`` module follows whatever version its release ships (17.0 in
2026.5: CJK Extension J became letters, U+0295 moved from Ll to Lo). Spelling the
classes out as 16.0 ranges makes matching ~15x slower, so the patterns keep ``\p{..}``
and ``_as_unicode16`` flags the rare text holding a character whose class differs; such
a text is matched as a copy in which each such character is replaced by a stand-in that
every class of the pattern treats as Unicode 16.0 treats the character (same length),
and the original text is sliced at the same offsets. ``RegexSplit.needs_unicode16`` /
``findall_unicode16`` and the Hugging Face pre-tokenizers that match ``\p{..}`` patterns
(``Split``, ``ByteLevel``, ``Whitespace``, ``WhitespaceSplit``) go through here.

The stand-ins come from the pattern itself (``pattern_classes``), not from a list of
known patterns: a scan of the pattern lists the version-dependent classes it uses
(general categories in any spelling ``\p{..}`` takes, ``\d``, ``\w`` and ``\b``) and
the characters it names literally. A character needs a stand-in when one of those
classes holds it in Unicode 16.0 and not in ``regex``, or the reverse; its stand-in is a
character of its own 16.0 category (and ``\w``-ness and ``\s``-ness), unchanged since,
and not named by the pattern (``pattern_fixes``).

Which characters differ depends on the installed ``regex`` (``pyproject.toml`` allows
any release from 2024.9.11), so no table of them is stored. ``_unicode16.py`` (made by
``tools/gen_unicode16.py`` from ``unicodedataplus`` 16.0.0) holds only Unicode 16.0 facts:
the code points of each general category, and the few of ``\w`` that no category
implies. ``_differences`` compares them with the installed ``regex`` once per process,
on first use.

Refused (``pattern_classes`` raises ``TokstreamError``, so ids never silently differ from
tiktoken's): any other Unicode property (a script, ``Alphabetic``, ``\p{^..}``, POSIX
``[[:alpha:]]``), ``\X``, ``\m``/``\M``, backreferences (a stand-in would make two changed
characters equal), nested classes and class set operations (Rust's ``&&``, ``--``,
``~~`` are literal text to ``regex``), the ``x`` flag and flags other than ``i``, ``m``,
``s``, classes in a case-insensitive scope (``regex`` and Rust case-fold classes
differently even in ASCII: ``(?i)[a-z]`` matches U+0130 in ``regex`` only), and a
literal character whose class changed. ``\s`` needs nothing: ``White_Space`` has not
changed since Unicode 6.3.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import chain, islice
from typing import Final, NamedTuple

import numpy as np
import regex

from ..errors import TokstreamError

#: The general categories, assigned ones first (the order of ``_unicode16.CATEGORIES``).
GENERAL_CATEGORIES: Final = (
    *("Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No"),
    *("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp"),
    *("Cc", "Cf", "Cs", "Co", "Cn"),
)
#: The categories whose characters are all ``\w``.
_WORD_CATEGORIES: Final = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "Pc"})

_GROUP_NAMES: Final = {
    "L": ("letter", "Lu Ll Lt Lm Lo"),
    "LC": ("casedletter", "Lu Ll Lt"),
    "M": ("mark", "Mn Mc Me"),
    "N": ("number", "Nd Nl No"),
    "P": ("punctuation", "Pc Pd Ps Pe Pi Pf Po"),
    "S": ("symbol", "Sm Sc Sk So"),
    "Z": ("separator", "Zs Zl Zp"),
    "C": ("other", "Cc Cf Cs Co Cn"),
}
_LONG_NAMES: Final = {
    "Lu": "uppercaseletter",
    "Ll": "lowercaseletter",
    "Lt": "titlecaseletter",
    "Lm": "modifierletter",
    "Lo": "otherletter",
    "Mn": "nonspacingmark",
    "Mc": "spacingmark",
    "Me": "enclosingmark",
    "Nd": "decimalnumber",
    "Nl": "letternumber",
    "No": "othernumber",
    "Pc": "connectorpunctuation",
    "Pd": "dashpunctuation",
    "Ps": "openpunctuation",
    "Pe": "closepunctuation",
    "Pi": "initialpunctuation",
    "Pf": "finalpunctuation",
    "Po": "otherpunctuation",
    "Sm": "mathsymbol",
    "Sc": "currencysymbol",
    "Sk": "modifiersymbol",
    "So": "othersymbol",
    "Zs": "spaceseparator",
    "Zl": "lineseparator",
    "Zp": "paragraphseparator",
    "Cc": "control",
    "Cf": "format",
    "Cs": "surrogate",
    "Co": "privateuse",
    "Cn": "unassigned",
}


def _category_names() -> dict[str, frozenset[str]]:
    """General-category property names, loosely spelled (lower case, no ``_ -``),
    to the categories they hold."""
    out = {short.lower(): frozenset({short}) for short in GENERAL_CATEGORIES}
    out.update({long: frozenset({short}) for short, long in _LONG_NAMES.items()})
    for short, (long, members) in _GROUP_NAMES.items():
        out[short.lower()] = out[long] = frozenset(members.split())
    out["l&"] = out["lc"]
    out["combiningmark"] = out["m"]
    return out


_CATEGORY_NAMES: Final = _category_names()


@dataclass(frozen=True, slots=True)
class PatternClasses:
    r"""What a pattern asks of the Unicode version (``pattern_classes``).

    ``categories``: each general-category class it uses (``\p{L}``, ``\d``), as the set
    of categories it holds; ``word``: whether it uses ``\w``/``\W``/``\b``/``\B``;
    ``literals``: a ``regex`` class of the characters it names (``None``: none).
    """

    categories: frozenset[frozenset[str]]
    word: bool
    literals: str | None


#: Named classes that need no Unicode-version correction (``\s``: White_Space is stable)
#: or none at all (anchors, ``\K``).
_PLAIN_ESCAPES: Final = frozenset("sSAzZGK")
_CHAR_ESCAPES: Final = {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "v": "\v", "a": "\a", "e": "\x1b"}
_HEX: Final = regex.compile(
    r"x([0-9A-Fa-f]{2})|x\{([0-9A-Fa-f]{1,6})\}|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|0([0-7]{0,2})"
)
_QUANTIFIER: Final = regex.compile(r"\{\d*(?:,\d*)?\}")
_FLAGS: Final = regex.compile(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])")


class _Scan:
    """One left-to-right pass over a pattern (``pattern_classes``)."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.categories: set[frozenset[str]] = set()
        self.word = False
        self.literals: list[tuple[int, int]] = []
        self.case_insensitive = False  # anywhere

    def refuse(self, at: int, what: str) -> TokstreamError:
        return TokstreamError(
            f"pre-tokenizer pattern {self.pattern!r}, offset {at}: {what} cannot be matched by Unicode 16.0 "
            f"classes as tiktoken's regex engine matches it (the installed regex module has newer "
            f"tables, or reads it otherwise); spell the class with general categories "
            r"(\p{L}, \p{Lu}, \p{N}, \p{P}, ...), \d, \w, \s or explicit characters"
        )

    def escape(self, i: int, *, in_class: bool, icase: bool) -> tuple[int, int | None]:
        """Read the escape at ``pattern[i] == "\\"``; return the next offset and the
        code point it names, if it names one."""
        p = self.pattern
        if i + 1 >= len(p):
            raise self.refuse(i, "a trailing backslash")
        c = p[i + 1]
        if c in "pP":
            m = regex.compile(r"[pP](?:\{([^}]*)\}|(\w))").match(p, i + 1)
            if m is None:
                raise self.refuse(i, "an unterminated \\p{..}")
            name = m.group(1) if m.group(1) is not None else m.group(2)
            loose = regex.sub(r"[\s_\-]", "", name).lower()
            loose = regex.sub(r"^(?:gc|generalcategory)[=:]", "", loose)
            cats = _CATEGORY_NAMES.get(loose)
            if cats is None:
                raise self.refuse(i, f"the Unicode property {m.group()!r} (only general categories are corrected)")
            if icase:
                raise self.refuse(i, f"{m.group()!r} in a case-insensitive scope")
            self.categories.add(cats)
            return m.end(), None
        if c in "wWbB":
            if icase and c in "wW":
                raise self.refuse(i, f"\\{c} in a case-insensitive scope")
            self.word = True
            return i + 2, None
        if c in "dD":
            self.categories.add(frozenset({"Nd"}))
            return i + 2, None
        if c in _PLAIN_ESCAPES and (not in_class or c in "sS"):
            return i + 2, None
        if c in _CHAR_ESCAPES:
            return i + 2, ord(_CHAR_ESCAPES[c])
        if c == "N":
            m = regex.compile(r"N\{([^}]*)\}").match(p, i + 1)
            try:
                if m is None:
                    raise KeyError(p[i : i + 2])
                return m.end(), ord(unicodedata.lookup(m.group(1)))
            except KeyError:
                raise self.refuse(i, "a \\N escape without a known character name") from None
        m = _HEX.match(p, i + 1)
        if m is not None:
            digits = next(g for g in m.groups() if g is not None)
            return m.end(), int(digits or "0", 8 if m.group(5) is not None else 16)
        if c.isalnum():
            raise self.refuse(i, f"the escape \\{c}")
        return i + 2, ord(c)

    def check_caseless(self, at: int, first: int, last: int) -> None:
        """Refuse characters ``first..last`` in a case-insensitive scope unless each is
        an ASCII letter but i, or has no case: ``regex`` folds i with U+0130 and I with
        U+0131, Rust does not, and case pairs change with the Unicode version."""
        if last - first > 0xFF:
            raise self.refuse(at, "a long range in a case-insensitive scope")
        for cp in range(first, last + 1):
            c = chr(cp)
            if c in "iI" or (not c.isascii() and (c.lower() != c or c.upper() != c)):
                raise self.refuse(at, f"the cased character {c!r} in a case-insensitive scope")

    def bracket(self, i: int, *, icase: bool) -> int:
        """Read the class starting at ``pattern[i] == "["``; return the offset after it."""
        p, n = self.pattern, len(self.pattern)
        start = i
        i += 1
        if i < n and p[i] == "^":
            i += 1
        first = True
        members: list[tuple[int, int]] = []
        while True:
            if i >= n:
                raise self.refuse(start, "an unterminated character class")
            c = p[i]
            if c == "]" and not first:
                break
            first = False
            if c == "[":
                raise self.refuse(i, "a nested class or POSIX class")
            if p.startswith(("&&", "--", "~~", "||"), i):
                raise self.refuse(i, f"the class operator {p[i : i + 2]!r}")
            if c == "\\":
                i, cp = self.escape(i, in_class=True, icase=icase)
            else:
                i, cp = i + 1, ord(c)
            if cp is None:
                continue
            last = cp
            if i + 1 < n and p[i] == "-" and p[i + 1] != "]":
                if p[i + 1] == "\\":
                    i, end = self.escape(i + 1, in_class=True, icase=icase)
                    if end is None:
                        raise self.refuse(i, "a range ending in a class")
                    last = end
                else:
                    last, i = ord(p[i + 1]), i + 2
            members.append((cp, last))
        if icase:
            for a, b in members:
                self.check_caseless(start, a, b)
        self.literals += members
        return i + 1

    def run(self) -> PatternClasses:
        p, n = self.pattern, len(self.pattern)
        scopes = [False]  # case-insensitive, per open group
        i = 0
        while i < n:
            c = p[i]
            icase = scopes[-1]
            if c == "\\":
                at = i
                i, cp = self.escape(i, in_class=False, icase=icase)
                if cp is not None:
                    if icase:
                        self.check_caseless(at, cp, cp)
                    self.literals.append((cp, cp))
            elif c == "[":
                i = self.bracket(i, icase=icase)
            elif c == "(":
                i = self.group(i, scopes)
            elif c == ")":
                if len(scopes) > 1:
                    scopes.pop()
                i += 1
            elif c == "{" and (m := _QUANTIFIER.match(p, i)) is not None:
                i = m.end()
            else:
                if c not in ".^$|?*+":
                    if icase:
                        self.check_caseless(i, ord(c), ord(c))
                    self.literals.append((ord(c), ord(c)))
                i += 1
        literals = None
        if self.literals:
            body = "".join(f"\\U{a:08X}-\\U{b:08X}" for a, b in sorted(self.literals))
            literals = f"(?i)[{body}]" if self.case_insensitive else f"[{body}]"
        return PatternClasses(frozenset(self.categories), self.word, literals)

    def group(self, i: int, scopes: list[bool]) -> int:
        """Read a group opening at ``pattern[i] == "("``; return the offset after it."""
        p = self.pattern
        icase = scopes[-1]
        if not p.startswith("(?", i):
            scopes.append(icase)
            return i + 1
        for opening in ("(?:", "(?=", "(?!", "(?<=", "(?<!", "(?>"):
            if p.startswith(opening, i):
                scopes.append(icase)
                return i + len(opening)
        m = regex.compile(r"\(\?P?<(\w+)>").match(p, i)
        if m is not None:
            scopes.append(icase)
            return m.end()
        if p.startswith("(?#", i):
            end = p.find(")", i)
            if end < 0:
                raise self.refuse(i, "an unterminated comment")
            return end + 1
        m = _FLAGS.match(p, i)
        if m is None:
            raise self.refuse(i, f"the group construct {p[i : i + 4]!r}")
        on, off = m.group(1), m.group(2) or ""
        if set(on + off) - set("ims"):
            raise self.refuse(i, f"the flags {m.group()!r}")
        if "i" in on:
            icase = self.case_insensitive = True
        elif "i" in off:
            icase = False
        if m.group(3) == ":":
            scopes.append(icase)
        else:
            scopes[-1] = icase
        return m.end()


@functools.lru_cache(maxsize=64)
def pattern_classes(pattern: str) -> PatternClasses:
    r"""The Unicode-version-dependent classes and the literal characters of ``pattern``.

    Raises ``TokstreamError`` for a construct that cannot be matched by Unicode 16.0
    classes here (module notes). The scan is conservative: anything it does not know
    is refused, never guessed.

    >>> sorted(sorted(c) for c in pattern_classes(r"\p{Lu}+|\d|x").categories)
    [['Lu'], ['Nd']]
    >>> pattern_classes(r"\p{Greek}")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tokstream.errors.TokstreamError: pre-tokenizer pattern '\\p{Greek}', offset 0: the Unicode property 'p{Greek}' ...
    """
    return _Scan(pattern).run()


def _ranges(spec: str) -> list[tuple[int, int]]:
    """The ``(first, last)`` ranges of a ``_unicode16`` string (``"41-5A C0-D6 100 ..."``)."""
    out: list[tuple[int, int]] = []
    for item in spec.split():
        first, _, last = item.partition("-")
        out.append((int(first, 16), int(last or first, 16)))
    return out


def _text_of(ranges: Iterable[tuple[int, int]]) -> str:
    """The code points of the ``(first, last)`` ``ranges``, in order, as one string
    (lone surrogates included)."""
    # int32 throughout (code points and their count fit): the few-MB temporaries are
    # most of the cost here.
    r = np.array(list(ranges), dtype=np.int32).reshape(-1, 2)
    lengths = r[:, 1] - r[:, 0] + 1
    points = np.repeat(r[:, 0] - (np.cumsum(lengths, dtype=np.int32) - lengths), lengths)
    points += np.arange(len(points), dtype=np.int32)
    return points.astype("<i4", copy=False).tobytes().decode("utf-32-le", "surrogatepass")


class _Char(NamedTuple):
    """A character's classes: its general category, ``\\w``-ness and ``\\s``-ness."""

    category: str
    word: bool
    space: bool


@functools.lru_cache(maxsize=1)
def unicode16_ranges() -> dict[str, list[tuple[int, int]]]:
    """Each general category's code point ranges in Unicode 16.0 (``Cn`` included)."""
    from ._unicode16 import CATEGORIES, UNASSIGNED

    return {"Cn": _ranges(UNASSIGNED)} | {cat: _ranges(spec) for cat, spec in CATEGORIES.items()}


@functools.lru_cache(maxsize=1)
def _word_extra16() -> frozenset[int]:
    from ._unicode16 import WORD_EXTRA

    return frozenset(cp for a, b in _ranges(WORD_EXTRA) for cp in range(a, b + 1))


@functools.lru_cache(maxsize=1)
def _differences() -> dict[tuple[_Char, _Char], str]:
    """The code points whose category or ``\\w``-ness differs between Unicode 16.0 and
    the installed ``regex``, as one string per ``(as in 16.0, as in regex)`` pair.

    Computed once per process, on first use: each code point is tested once, in C (one
    ``regex.findall`` per Unicode 16.0 category over a string of its code points, and
    one for ``\\w``), so any ``regex`` release needs no new data.

    Cost: about 30 ms on first use, with a 12 MB peak of temporary arrays and strings,
    and 1 MB kept. The 820k code points unassigned in 16.0 take most of it; 17,811
    differ with regex 2026.11.19, nearly all newly assigned, in a few dozen pairs.
    """
    by_category = unicode16_ranges()
    extra = _word_extra16()
    old: dict[str, str] = {}
    for cat, ranges in by_category.items():
        text = _text_of(ranges)
        old.update(dict.fromkeys("".join(regex.findall(rf"\P{{{cat}}}+", text)), cat))
        # \w-ness differs: a character of a word category that regex calls \W, or one of
        # another category that regex calls \w though 16.0 did not (not in WORD_EXTRA).
        # A \w code point unassigned in 16.0 is assigned now: found above already.
        if cat in _WORD_CATEGORIES:
            old.update(dict.fromkeys("".join(regex.findall(r"\W+", text)), cat))
        elif cat != "Cn":
            gained = "".join(regex.findall(r"\w+", text))
            old.update(dict.fromkeys((c for c in gained if ord(c) not in extra), cat))
    for cp in extra:
        if regex.match(r"\w", chr(cp)) is None:
            old[chr(cp)] = next(cat for cat, rs in by_category.items() if any(a <= cp <= b for a, b in rs))
    changed = "".join(old)
    new: dict[str, str] = {}
    for cat in GENERAL_CATEGORIES:
        new.update(dict.fromkeys(regex.findall(rf"\p{{{cat}}}", changed), cat))
    words, spaces = set(regex.findall(r"\w", changed)), set(regex.findall(r"\s", changed))
    pairs: dict[tuple[str, bool, str, bool, bool], list[str]] = {}
    for c, cat in old.items():
        key = (cat, cat in _WORD_CATEGORIES or ord(c) in extra, new[c], c in words, c in spaces)
        pairs.setdefault(key, []).append(c)
    return {(_Char(a, b, e), _Char(c, d, e)): "".join(chars) for (a, b, c, d, e), chars in pairs.items()}


@functools.lru_cache(maxsize=1)
def _differing() -> frozenset[str]:
    """Every character of ``_differences``."""
    return frozenset("".join(_differences().values()))


def _differs(classes: PatternClasses, old: _Char, new: _Char) -> bool:
    """Whether a class of ``classes`` holds a character like ``old`` and not one like
    ``new``, or the reverse."""
    if classes.word and old.word != new.word:
        return True
    return any((old.category in cats) != (new.category in cats) for cats in classes.categories)


# The preferred stand-in per Unicode 16.0 general category (any character the pattern
# does not distinguish from one of that category does, see _stand_in).
_STAND_IN: Final = {
    "Lu": "Q",
    "Ll": "q",
    "Lt": "\u01c5",
    "Lm": "\u02b0",
    "Lo": "\u05d0",
    "Mn": "\u0300",
    "Mc": "\u0903",
    "Me": "\u20dd",
    "Nd": "5",
    "Nl": "\u216b",
    "No": "\u00b2",
}
_OTHER: Final = "\u0378"  # unassigned in every Unicode version so far
#: Candidates tried per stand-in before giving up (a pattern naming whole blocks).
_MAX_TRIES: Final = 4096


def _stand_in(classes: PatternClasses, want: _Char, literals: regex.Pattern[str] | None) -> str:
    """A character that every class of ``classes`` treats as Unicode 16.0 treats one
    like ``want``, in 16.0 and in ``regex`` alike, and that the pattern does not name.

    Tries ``_STAND_IN`` of the category (``_OTHER`` for the rest), then the category's
    code points in order."""
    differing = _differing()
    preferred = [ord(_STAND_IN.get(want.category, _OTHER))]
    candidates = (cp for a, b in unicode16_ranges()[want.category] for cp in range(a, b + 1))
    for cp in islice(chain(preferred, candidates), _MAX_TRIES):
        c = chr(cp)
        if c in differing:
            continue
        cat = next(cat for cat in GENERAL_CATEGORIES if regex.match(rf"\p{{{cat}}}", c))
        like = _Char(cat, regex.match(r"\w", c) is not None, regex.match(r"\s", c) is not None)
        if like.space != want.space or _differs(classes, want, like):
            continue
        if literals is not None and literals.match(c):
            continue
        return c
    raise TokstreamError(
        f"pre-tokenizer pattern names so many characters that none of the first {_MAX_TRIES} of Unicode "
        f"16.0 category {want.category} can stand in for the ones whose class changed after 16.0"
    )


@dataclass(frozen=True, slots=True)
class Unicode16Fixes:
    """The characters of a pattern's text that need a stand-in (``guard``, None when
    there are none) and the ``str.translate`` table giving them."""

    guard: regex.Pattern[str] | None
    table: dict[int, str]


def _fixes(classes: PatternClasses) -> Unicode16Fixes:
    literals = regex.compile(classes.literals) if classes.literals is not None else None
    table: dict[int, str] = {}
    stand_ins: dict[_Char, str] = {}
    for (old, new), chars in _differences().items():
        if not _differs(classes, old, new):
            continue
        if literals is not None and (named := literals.search(chars)) is not None:
            raise TokstreamError(
                f"pre-tokenizer pattern names U+{ord(named.group()):04X}, whose Unicode class changed after "
                f"16.0 (tiktoken's version); tokstream cannot match it as tiktoken does"
            )
        if old not in stand_ins:
            stand_ins[old] = _stand_in(classes, old, literals)
        table.update(dict.fromkeys(map(ord, chars), stand_ins[old]))
    if not table:
        return Unicode16Fixes(None, table)
    runs: list[list[int]] = []
    for cp in sorted(table):
        if runs and runs[-1][1] == cp - 1:
            runs[-1][1] = cp
        else:
            runs.append([cp, cp])
    body = "".join(f"\\U{a:08X}-\\U{b:08X}" for a, b in runs)
    return Unicode16Fixes(regex.compile(f"[{body}]"), table)


@functools.lru_cache(maxsize=64)
def pattern_fixes(pattern: str) -> Unicode16Fixes:
    """The Unicode 16.0 fixes for ``pattern``'s own classes (``pattern_classes``; raises
    ``TokstreamError`` as it does, or for a literal character whose class changed).

    Computed once per pattern, on first use; the comparison with the installed ``regex``
    (``_differences``) once per process. Cost: a pass over the ~17,800 differing code
    points per pattern, a few ms.
    """
    return _fixes(pattern_classes(pattern))


#: The classes of tiktoken's named patterns: what ``unicode16_fixes`` corrects.
_TIKTOKEN_CLASSES: Final = PatternClasses(
    frozenset(
        frozenset(cats.split())
        # Cn: newly assigned code points count as changed whatever their class, as before.
        for cats in ("Lu Ll Lt Lm Lo", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn Mc Me", "Nd Nl No", "Cn")
    ),
    word=False,
    literals=None,
)


@functools.lru_cache(maxsize=1)
def unicode16_fixes() -> tuple[regex.Pattern[str] | None, dict[int, str]]:
    """The guard and table correcting ``\\p{L}``, its five categories, ``\\p{M}`` and
    ``\\p{N}`` (the classes of tiktoken's named patterns), for code that has no pattern
    of its own. A pattern's own fixes are ``pattern_fixes``."""
    fixes = _fixes(_TIKTOKEN_CLASSES)
    return fixes.guard, fixes.table


@functools.lru_cache(maxsize=64)
def _lenient_fixes(pattern: str) -> Unicode16Fixes:
    """``pattern_fixes``, or the fixes of tiktoken's classes for a ``tokenizers`` pattern
    that ``pattern_classes`` refuses (as before: a ``tokenizer.json`` must load, and
    Oniguruma's syntax is not Rust's; ``Split``'s notes)."""
    try:
        pattern_classes(pattern)
    except TokstreamError:
        guard, table = unicode16_fixes()
        return Unicode16Fixes(guard, table)
    return pattern_fixes(pattern)


def _as_unicode16(text: str, pattern: str) -> str:
    """``text`` with each character whose class in ``pattern`` changed after Unicode 16.0
    replaced by a stand-in of its 16.0 classes (same length), or ``text`` itself when
    there is none.

    ``tokenizers``' regex engine, like tiktoken's, is on Unicode 16.0; matching the
    result and slicing the original text at the same offsets gives its pieces.
    """
    if text.isascii():
        return text
    fixes = _lenient_fixes(pattern)
    if fixes.guard is None or fixes.guard.search(text) is None:
        return text
    return text.translate(fixes.table)


def findall16(pattern: regex.Pattern[str], text: str) -> list[str]:
    """``findall`` under Unicode 16.0 classes (see ``_as_unicode16``)."""
    probe = _as_unicode16(text, pattern.pattern)
    if probe is text:
        return pattern.findall(text)
    return [text[m.start() : m.end()] for m in pattern.finditer(probe)]


def spans16(pattern: regex.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(_as_unicode16(text, pattern.pattern))]


def onig_spans16(pattern: regex.Pattern[str], text: str) -> list[tuple[int, int]]:
    """``spans16`` with Oniguruma's rule for empty matches (the ``onig`` crate's
    ``find_iter``, which ``tokenizers`` splits with): an empty match where the previous
    match ended is skipped and the search goes on one character later. Python's
    ``finditer`` takes that empty match, and after an empty match looks for a
    non-empty one at the same place, which Oniguruma never does. Only patterns that
    can match the empty string need this (``Split`` decides once)."""
    probe = _as_unicode16(text, pattern.pattern)
    search = pattern.search
    out: list[tuple[int, int]] = []
    pos, last_end, n = 0, -1, len(probe)
    while pos <= n:
        m = search(probe, pos)
        if m is None:
            break
        start, end = m.span()
        if start == end == last_end:
            pos = end + 1
            continue
        out.append((start, end))
        last_end = pos = end
    return out

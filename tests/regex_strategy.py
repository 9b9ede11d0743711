"""A hypothesis strategy for Python regexes in the subset ``parse_regex`` supports.

``regexes(alphabet)`` draws patterns built from literals of ``alphabet`` (plain and as
``\\x``/``\\u``/octal escapes), classes (ranges, negation, ``\\d \\w \\s`` inside),
``.``, the class escapes, every quantifier form (greedy and lazy, ``{m,n}`` with small
bounds), plain, non-capturing and named groups, scoped ``s`` flags, comments,
alternation and nesting, and anchors at the ends. Every pattern compiles with ``re``.
"""

from __future__ import annotations

import re

from hypothesis import strategies as st

__all__ = ["regexes"]

_CLASS_ESCAPES = ("\\d", "\\w", "\\s", "\\D", "\\W", "\\S")


def _escaped_forms(c: str) -> list[str]:
    forms = [re.escape(c)]
    cp = ord(c)
    if cp < 0x100:
        forms += [f"\\x{cp:02x}", f"\\{cp:03o}"]
    if cp < 0x10000:
        forms.append(f"\\u{cp:04x}")
    return forms


def _class_char(c: str) -> str:
    # Inside a class only "\\", "]", "^", "-", "[" and the set-operation doubles matter.
    return "\\" + c if c in "\\]^-[&~|" else c


@st.composite
def _char_class(draw: st.DrawFn, alphabet: str) -> str:
    items = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.integers(0, 2))
        if kind == 0:
            items.append(_class_char(draw(st.sampled_from(alphabet))))
        elif kind == 1:
            lo, hi = sorted(draw(st.lists(st.sampled_from(alphabet), min_size=2, max_size=2)))
            items.append(f"{_class_char(lo)}-{_class_char(hi)}")
        else:
            items.append(draw(st.sampled_from(_CLASS_ESCAPES)))
    return "[" + draw(st.sampled_from(["", "^"])) + "".join(items) + "]"


def _quantifier() -> st.SearchStrategy[str]:
    bounded = st.tuples(st.integers(0, 3), st.integers(0, 2)).flatmap(
        lambda mn: st.sampled_from(
            [f"{{{mn[0]}}}", f"{{{mn[0]},}}", f"{{,{mn[0] + mn[1]}}}", f"{{{mn[0]},{mn[0] + mn[1]}}}"]
        )
    )
    return st.tuples(st.sampled_from(["*", "+", "?"]) | bounded, st.sampled_from(["", "?"])).map("".join)


def _name_groups(pattern: str) -> str:
    # Named groups are drawn unnamed (names must be unique); number them here.
    counter = iter(range(1_000_000))
    return re.sub(r"(?<!\\)\(\?P<>", lambda _: f"(?P<g{next(counter)}>", pattern)


def regexes(alphabet: str = "abc") -> st.SearchStrategy[str]:
    """Patterns over ``alphabet`` in the supported subset of Python ``re`` syntax."""
    literal = st.sampled_from(alphabet).flatmap(lambda c: st.sampled_from(_escaped_forms(c)))
    atom = st.one_of(
        literal,
        literal,
        _char_class(alphabet),
        st.just("."),
        st.sampled_from(_CLASS_ESCAPES),
    )

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        group = st.tuples(st.sampled_from(["(", "(?:", "(?P<>", "(?s:", "(?-s:"]), inner, st.just(")")).map("".join)
        quantified = st.tuples(atom | group, _quantifier()).map("".join)
        concat = st.lists(inner | quantified, min_size=2, max_size=4).map("".join)
        alternation = st.lists(inner, min_size=2, max_size=3).map("|".join)
        comment = inner.map(lambda p: "(?#note)" + p)
        return st.one_of(group, quantified, concat, alternation, comment, st.just(""))

    body = st.recursive(atom, extend, max_leaves=10)
    anchored = st.tuples(
        st.sampled_from(["", "", "^", "\\A", "(?s)"]), body, st.sampled_from(["", "", "$", "\\Z"])
    ).map("".join)
    return anchored.map(_name_groups)

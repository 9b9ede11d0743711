"""``parse_lark``: Lark-style grammar text -> ``Cfg``.

The languages are checked against Lark itself (``parser="earley",
lexer="dynamic_complete"``) through an independent recognizer of the ``Cfg``
(tests/grammar_reference.py: ``re.fullmatch`` per terminal, a span fixpoint per rule),
on strings sampled from the grammar and on mutations of them. Refused constructs are
checked for their line and column, written out by hand.
"""

from __future__ import annotations

import random
import re

import lark
import pytest
from grammar_reference import mutate, recognizes, sample_cfg, sample_tree, to_pattern
from hypothesis import given
from hypothesis import strategies as st
from strategies import hyp_settings

from tokstream.constrain.grammar.lark import Cfg, parse_lark
from tokstream.constrain.grammar.nodes import literal
from tokstream.errors import UnsupportedGrammarError

GRAMMARS = {
    "arith": r"""
        ?start: sum
        ?sum: product | sum "+" product | sum "-" product
        ?product: atom | product "*" atom | product "/" atom
        ?atom: INT | "-" atom | "(" sum ")"
        %import common.INT
        %import common.WS_INLINE
        %ignore WS_INLINE
    """,
    "lists": r"""
        start: list
        list: "[" [item ("," item)*] "]"
        item: INT | list
        %import common.INT
    """,
    "json": r"""
        ?start: value
        ?value: object | array | ESCAPED_STRING | SIGNED_NUMBER | "true" | "false" | "null"
        array: "[" [value ("," value)*] "]"
        object: "{" [pair ("," pair)*] "}"
        pair: ESCAPED_STRING ":" value
        %import common.ESCAPED_STRING
        %import common.SIGNED_NUMBER
        %import common.WS
        %ignore WS
    """,
    "ebnf": r"""
        start: "a" ("b" | "c")* "d"+ ["e"] "f"? ("g" "h")~2 "i"~1..3 x~0..2
        x: "x" | "y" "z"
    """,
    "icase": r"""
        start: "select"i NAME ("," NAME)* "from"i NAME
        NAME: /[a-z_]+/
        %ignore " "
    """,
    "composed": r"""
        start: IDENT "=" VALUE (";" IDENT "=" VALUE)*
        IDENT: LETTER (LETTER | DIGIT | "_")*
        VALUE: HEX | DEC
        HEX: "0x" HEXDIGIT+
        DEC: DIGIT+
        %import common (LETTER, DIGIT, HEXDIGIT)
    """,
    "regex_flags": r"""
        start: (/a.c/s | "x" | /[0-9]{2}/)+
    """,
    "ranges": r"""
        start: CODE ("-" CODE)*
        CODE: "A".."F" ("0".."9")~2..3
    """,
    "nullable": r"""
        start: | "a" start "b"
        %ignore " "
    """,
    "statements": r"""
        start: stmt*
        stmt: NAME "=" INT ";"
        NAME: /[a-z]+/
        %import common.INT
        %ignore /[ \t\n]+/
        %ignore /#[^\n]*\n/
    """,
    "shapes": r"""
        start: _pair ("," _pair)*
        _pair: key ":" val
        ?key: CNAME -> k
        !val.2: INT | CNAME
            | "(" val ")"
        %import common.CNAME
        %import common.INT
    """,
    "lines": r"""
        start: (line NEWLINE)* line?
        line: WORD (WS_INLINE WORD)*
        %import common (WORD, WS_INLINE, NEWLINE)
    """,
    "aliases_imported": r"""
        start: NUM ("," NUM)* // a comment
        %import common.SIGNED_FLOAT -> NUM
    """,
}

# Characters worth inserting in mutants, per grammar: its own alphabet plus a few others.
EXTRA = " \n\t\\\"',;:()[]{}+-*/.=#_0123456789abcdefxyzABCDEFXYZ\u212a\u017f\u0130"


def lark_accepts(parser: lark.Lark, text: str) -> bool:
    try:
        parser.parse(text)
    except lark.exceptions.LarkError:
        return False
    return True


_COMPILED: dict[str, tuple[Cfg, lark.Lark]] = {}


def compiled(name: str) -> tuple[Cfg, lark.Lark]:
    """Our ``Cfg`` and Lark's parser of ``GRAMMARS[name]``, built once."""
    if name not in _COMPILED:
        text = GRAMMARS[name]
        _COMPILED[name] = (parse_lark(text), lark.Lark(text, parser="earley", lexer="dynamic_complete"))
    return _COMPILED[name]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(GRAMMARS))
@hyp_settings(60)
@given(seed=st.integers(0, 2**32 - 1))
def test_agrees_with_lark(name: str, seed: int) -> None:
    cfg, parser = compiled(name)
    rng = random.Random(seed)
    valid = sample_cfg(cfg, rng)
    alphabet = "".join(sorted(set(GRAMMARS[name]) | set(EXTRA) - {"\r"}))
    for text in [valid, mutate(valid, alphabet, rng), mutate(valid, alphabet, rng)]:
        if len(text) > 40:
            continue  # the reference is quadratic; long samples add time, not coverage
        assert recognizes(cfg, text) == lark_accepts(parser, text), (name, text)


FIXED = {
    "arith": ["1+2", "1 + 2*3", "-(1)", "((2))", "1+", "", " ", "1 2", "1--2", "  7  "],
    "lists": ["[]", "[1]", "[1,[2,3]]", "[[],[]]", "[1,]", "[,]", "[1 ,2]", "[[1]"],
    "json": ['{"a": [1, -2.5e3, true, null]}', '"a\\"b"', '"a"b"', '["\\\\"]', '"\\"', "-0.5", "+1", "1e", " {} "],
    "ebnf": ["adgghhi", "abcbcddefghghiii", "adghghix", "adghghiyzyz", "adghghiyzx", "adghi", "adghghiiii"],
    "icase": [
        "select a from b",
        "SELECT a, b FROM c",
        "SeLeCt a FrOm b",
        "\u017felect a from b",
        "select a f\u0433om b",
    ],
    "composed": ["a=0x1f", "a_1=12", "a=0x", "1=2", "a=12;b=0xFF", "a=0X1"],
    "regex_flags": ["a\nc", "abc", "x12", "1", "a\nca.c"],
    "ranges": ["A12", "F123-B00", "G12", "A1", "A1234", "A12-"],
    "nullable": ["", " ", "ab", " a b ", "aabb", "aab", "ba"],
    "statements": ["", "x = 1;", "x=1; # c\ny=2;", "# only\n", "x=1", "x == 1;", "x=1#;\n", "# x"],
    "shapes": ["a:1", "a:(b),c:(((2)))", "a:", "1:a", "a:1,"],
    "lines": ["", "ab cd\nef", "ab\r\n\ncd", "ab  \n", "\n", "ab\ncd\n"],
    "aliases_imported": ["1.5", "-1e5,+.5,2.", "1", "1,", ".e1"],
}


@pytest.mark.parametrize("name", sorted(FIXED))
def test_fixed_strings_agree_with_lark(name: str) -> None:
    cfg, parser = compiled(name)
    for text in FIXED[name]:
        assert recognizes(cfg, text) == lark_accepts(parser, text), (name, text)


def test_fixed_strings_are_not_all_one_way() -> None:
    """The hand-picked strings exercise both answers in every grammar."""
    for name, texts in FIXED.items():
        _, parser = compiled(name)
        answers = {lark_accepts(parser, t) for t in texts}
        assert answers == {True, False}, name


COMMON = [
    "DIGIT", "HEXDIGIT", "INT", "SIGNED_INT", "DECIMAL", "FLOAT", "SIGNED_FLOAT", "NUMBER", "SIGNED_NUMBER",
    "ESCAPED_STRING", "LETTER", "LCASE_LETTER", "UCASE_LETTER", "WORD", "CNAME", "WS_INLINE", "WS", "CR", "LF",
    "NEWLINE", "SH_COMMENT", "CPP_COMMENT", "SQL_COMMENT", "C_COMMENT",
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("name", COMMON)
@hyp_settings(100)
@given(data=st.data())
def test_common_terminals_match_lark(name: str, data: st.DataObject) -> None:
    tree = parse_lark(f"start: {name}\n%import common.{name}").terminals[name]
    parser = _single_terminal_parser(name)
    rng = random.Random(data.draw(st.integers(0, 2**32 - 1)))
    alphabet = '09aAfFgzZ_+-.eE \t\f\r\n"\\#/*x\u0660\u00e9'
    text = data.draw(st.one_of(st.text(alphabet, max_size=8), st.just(sample_tree(tree, rng))))
    if data.draw(st.booleans()):
        text = mutate(text, alphabet, rng)
    assert bool(re.fullmatch(to_pattern(tree), text)) == lark_accepts(parser, text), text


_PARSERS: dict[str, lark.Lark] = {}


def _single_terminal_parser(name: str) -> lark.Lark:
    if name not in _PARSERS:
        _PARSERS[name] = lark.Lark(f"start: {name}\n%import common.{name}", parser="earley", lexer="dynamic_complete")
    return _PARSERS[name]


# ---------------------------------------------------------------- the Cfg's shape


def test_plain_bnf_is_kept_as_written() -> None:
    cfg = parse_lark('start: a "+" a | \na: "x"\n%ignore " "')
    assert cfg.start == "start"
    assert dict(cfg.rules) == {"start": (("a", '"+"', "a"), ()), "a": (('"x"',),)}
    assert dict(cfg.terminals) == {'"+"': literal("+"), '"x"': literal("x"), '" "': literal(" ")}
    assert cfg.ignore == ('" "',)


def test_equal_literals_share_one_terminal() -> None:
    cfg = parse_lark('start: "a" b "\\x61"\nb: "a"')
    assert cfg.rules["start"] == (('"a"', "b", '"a"'),)
    assert cfg.rules["b"] == (('"a"',),)
    assert list(cfg.terminals) == ['"a"']


def test_generated_names_cannot_clash_with_user_names() -> None:
    cfg = parse_lark('start: x* A\nx: "x"\nA: "a"')
    generated = [r for r in cfg.rules if r not in ("start", "x")]
    assert len(generated) == 1 and generated[0].startswith("__")
    assert set(cfg.terminals) == {'"x"', "A"}
    # Lark itself refuses names that start with two underscores, so users cannot write them.
    with pytest.raises(UnsupportedGrammarError):
        parse_lark('start: __x\n__x: "a"')


def test_star_is_left_recursive_and_plus_needs_one() -> None:
    cfg = parse_lark('start: "a"* "b"+')
    star, plus = cfg.rules["start"][0]
    assert cfg.rules[star] == ((), (star, '"a"'))
    assert cfg.rules[plus] == (('"b"',), (plus, '"b"'))


def test_terminals_only_used_inside_terminals_are_inlined() -> None:
    cfg = parse_lark('start: AB\nAB: A "b"\nA: "a"')
    assert set(cfg.terminals) == {"AB"}
    assert recognizes(cfg, "ab") and not recognizes(cfg, "a")


def test_other_start_rule() -> None:
    cfg = parse_lark('expr: "1"', start="expr")
    assert cfg.start == "expr"


def test_case_insensitive_ascii_matches_what_re_ignorecase_matches() -> None:
    tree = parse_lark('start: "iks1"i').terminals['"iks1"i']
    pattern = re.compile(to_pattern(tree))
    # Every code point up to U+3000 (the known partners are below), then a sparse sweep.
    for cp in [*range(0x3000), *range(0x3000, 0x110000, 97)]:
        if 0xD800 <= cp <= 0xDFFF:
            continue
        for k in range(4):
            text = "iks1"[:k] + chr(cp) + "iks1"[k + 1 :]
            assert bool(pattern.fullmatch(text)) == bool(re.fullmatch("(?i)iks1", text)), hex(cp)


# ---------------------------------------------------------------- refused constructs

REFUSED = [
    # (grammar, line, column, a word of the message)
    ("start: a", 1, 8, "not defined"),
    ("start: A", 1, 8, "not defined"),
    ("start: WS", 1, 8, "%import common.WS"),
    ('start: "abc', 1, 8, "unterminated"),
    ("start: \n  /ab", 2, 3, "unterminated"),
    ('start: "a"\nstart: "b"', 2, 1, "twice"),
    ('start: A\nA: "a"\nA: "b"', 3, 1, "twice"),
    ('start: WS\n%import common.WS\nWS: " "', 3, 1, "twice"),
    ('a: "x"', 1, 1, "start"),
    ('start: A\nA: "x" b\nb: "y"', 2, 8, "inside the terminal"),
    ('start: A\nA: B\nB: "b" A', 3, 8, "itself"),
    ('start: A\nA: "a" A', 2, 8, "itself"),
    ('start: _sep{"a"}', 1, 8, "template"),
    ('_sep{x}: x\nstart: "a"', 1, 5, "template"),
    ('%declare X\nstart: "a"', 1, 1, "%declare"),
    ('start: "a"\n%override start: "b"', 2, 1, "%override"),
    ('start: "a"\n%extend start: "b"', 2, 1, "%extend"),
    ('start: "a"\n%import python.NAME', 2, 9, "common"),
    ('start: "a"\n%import .other.X', 2, 9, "import"),
    ('start: "a"\n%import common.NOPE', 2, 16, "NOPE"),
    ('start: "a"\n%frobnicate', 2, 1, "directive"),
    ('start: ""', 1, 8, "empty"),
    ("start: /a*/", 1, 8, "empty string"),
    ('start: A\nA: "a"?', 1, 8, "empty string"),
    ('start: "a"\n%ignore WS\nWS: " "*', 2, 9, "empty string"),
    ('start: "é"i', 1, 9, "non-ASCII"),
    ('start: "ab\\a"', 1, 11, "\\a"),
    ('start: "\\x4"', 1, 9, "hex"),
    ("start: /a/i", 1, 11, "flag"),
    ("start: /a/x", 1, 11, "flag"),
    ("start: /a/q", 1, 11, "flag"),
    ("start: /a(?=b)/", 1, 10, "in regex"),
    ('start: "a" ** ', 1, 13, "expected"),
    ('start: "a"\n  "b"', 2, 3, "expected"),
    ('start: ("a" -> x)', 1, 13, "alias"),
    ('start: "a"~3..2', 1, 11, "empty"),
    ('start: "b".."a"', 1, 8, "empty"),
    ('start: "ab".."z"', 1, 8, "one-character"),
    ("Start: A", 1, 1, "neither"),
    ('?A: "a"\nstart: A', 1, 1, "rules only"),
    ('start: "a"\n%ignore rule\nrule: "b"', 2, 9, "rule"),
    ('start: "a" $', 1, 12, "unexpected character"),
    ('start: ("a"\n"b")', 1, 12, "')'"),
]


@pytest.mark.parametrize(("text", "line", "column", "word"), REFUSED)
def test_refused_constructs_say_where(text: str, line: int, column: int, word: str) -> None:
    with pytest.raises(UnsupportedGrammarError) as info:
        parse_lark(text)
    assert (info.value.line, info.value.column) == (line, column), str(info.value)
    assert word in info.value.message


@pytest.mark.parametrize(
    "text",
    [
        'start: "a"\n%import common.WS\n%import common.WS',  # the same import twice
        "start:",  # an empty rule
        'start: "a"~0 "b"',
        'start: "a" # a hash comment',
        'start: "a" \\\n  "b"',  # a line continuation
        'start: "a"\n    | "b"\n    // between\n    | "c"',
        'start: "\\d\\"\\\\"',  # unknown escapes keep their backslash
        "start: /a/su",
    ],
)
def test_lark_accepts_these_and_so_do_we(text: str) -> None:
    lark.Lark(text, parser="earley", lexer="dynamic_complete")
    parse_lark(text)

"""The JSON Schema compiler's layers against their references: string spellings against
``json.dumps`` / ``json.loads``, automaton products against ``re``, whitespace and the
refusals (``UnsupportedSchemaError`` naming keyword and JSON pointer)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tokstream
from tokstream.constrain.grammar.automaton import Dfa, compile_dfa, difference, intersect, is_empty
from tokstream.constrain.grammar.nodes import Repeat
from tokstream.constrain.grammar.regex import parse_regex
from tokstream.constrain.json_schema import MAX_WHITESPACE, json_schema_constraint
from tokstream.constrain.json_schema.spelling import ANY_CHAR, json_string
from tokstream.errors import TokstreamError, UnsupportedGrammarError, UnsupportedSchemaError


def _matches(dfa: Dfa | None, text: str) -> bool:
    if dfa is None:
        return False
    state = dfa.run(0, text.encode("utf-8", "surrogatepass"))
    return state >= 0 and bool(dfa.accepting[state])


@pytest.fixture(scope="module")
def tok() -> tokstream.Tokenizer:
    return tokstream.load("cl100k_base")


def _accepts(tok: tokstream.Tokenizer, schema: Any, text: str, **kw: Any) -> bool:
    c = json_schema_constraint(tok, schema, **kw)
    return all(c.accept(i) for i in tok.encode(text)) and c.can_end


# ---------------------------------------------------------------- spellings

_FREE = compile_dfa(json_string(Repeat(ANY_CHAR, 0, None)))
_SHORT = compile_dfa(json_string(Repeat(ANY_CHAR, 0, 3)))


@given(st.text())
def test_every_dumps_spelling_of_a_string_is_accepted(s: str) -> None:
    for text in (json.dumps(s), json.dumps(s, ensure_ascii=False)):
        assert _matches(_FREE, text), text
    assert _matches(_SHORT, json.dumps(s)) == (len(s) <= 3)


@given(st.text(st.sampled_from('ab"\\/\nu0123456789abcdefABCDEFD8dc\x00é'), max_size=14))
def test_an_accepted_spelling_is_json_and_counts_characters(text: str) -> None:
    """Soundness: whatever the string automaton accepts, ``json.loads`` reads as a str
    of scalar values (no lone surrogates), and the length bound holds on it."""
    quoted = '"' + text + '"'
    try:
        value = json.loads(quoted)
    except ValueError:
        value = None
    ok = isinstance(value, str) and not any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    assert _matches(_FREE, quoted) == ok, quoted
    assert _matches(_SHORT, quoted) == (ok and value is not None and len(value) <= 3), quoted


# ---------------------------------------------------------------- automaton products


_PATTERNS = ["a+b*", "(ab|a)*", "[a-c]{1,3}", "b?a*c?", "(a|b)*a(a|b)", ""]


@given(st.sampled_from(_PATTERNS), st.sampled_from(_PATTERNS), st.text("abc", max_size=6))
def test_intersect_and_difference_match_re(p: str, q: str, s: str) -> None:
    a, b = parse_regex(p), parse_regex(q)
    in_a, in_b = re.fullmatch(p, s) is not None, re.fullmatch(q, s) is not None
    assert _matches(compile_dfa(intersect(a, b)), s) == (in_a and in_b)
    assert _matches(compile_dfa(difference(a, b)), s) == (in_a and not in_b)
    assert is_empty(intersect(a, b)) == (compile_dfa(intersect(a, b)) is None)


# ---------------------------------------------------------------- whitespace


def test_whitespace_flexible_compact_and_regex(tok: tokstream.Tokenizer) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}}}}
    data = {"a": [1, 2]}
    assert _accepts(tok, schema, json.dumps(data))
    assert _accepts(tok, schema, json.dumps(data, indent=2))
    assert _accepts(tok, schema, json.dumps(data, separators=(",", ":")))
    assert not _accepts(tok, schema, " " + json.dumps(data))  # nothing before the value
    assert not _accepts(tok, schema, json.dumps(data) + " ")  # nor after it
    assert _accepts(tok, schema, '{"a":' + " " * MAX_WHITESPACE + "[1]}")
    assert not _accepts(tok, schema, '{"a":' + " " * (MAX_WHITESPACE + 1) + "[1]}")
    assert _accepts(tok, schema, json.dumps(data, separators=(",", ":")), whitespace="compact")
    assert not _accepts(tok, schema, json.dumps(data), whitespace="compact")
    assert _accepts(tok, schema, json.dumps(data), whitespace=" ?")
    assert not _accepts(tok, schema, json.dumps(data, indent=1), whitespace=" ?")
    with pytest.raises(UnsupportedGrammarError, match="not JSON whitespace"):
        json_schema_constraint(tok, schema, whitespace="[ x]*")


# ---------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("schema", "keyword", "pointer"),
    [
        ({"not": {"type": "string"}}, "not", ""),
        ({"properties": {"a": {"if": {}, "then": {}}}}, "if", "/properties/a"),
        ({"items": {"contains": {}}}, "contains", "/items"),
        ({"propertyNames": {"maxLength": 3}}, "propertyNames", ""),
        ({"$ref": "other.json#/x"}, "$ref", ""),
        ({"$ref": "#/$defs/missing"}, "$ref", ""),
        ({"type": "string", "format": "color"}, "format", ""),
        ({"anyOf": [{"pattern": "(?=a)"}]}, "pattern", "/anyOf/0"),
        ({"oneOf": [{"type": "integer"}, {"minimum": 0}]}, "oneOf", ""),
        ({"type": "number", "multipleOf": 3}, "multipleOf", ""),
        ({"type": "array", "uniqueItems": True}, "uniqueItems", ""),
        ({"type": "string", "minLength": 5000, "pattern": "^a*$"}, "minLength", ""),
        ({"type": "frob"}, "type", ""),
        ({"minimum": "1"}, "minimum", ""),
        ({"properties": {"a/b": {"dependentRequired": {}}}}, "dependentRequired", "/properties/a~1b"),
    ],
)
def test_refusals_name_keyword_and_pointer(tok: tokstream.Tokenizer, schema: Any, keyword: str, pointer: str) -> None:
    with pytest.raises(UnsupportedSchemaError) as info:
        json_schema_constraint(tok, schema)
    assert info.value.keyword == keyword and info.value.pointer == pointer, str(info.value)
    assert keyword in str(info.value)


def _nested(depth: int, keyword: str) -> dict[str, Any]:
    """A schema nesting ``keyword`` ``depth`` times, built without recursion."""
    node: dict[str, Any] = {"type": "integer"}
    for _ in range(depth):
        if keyword == "properties":
            node = {"type": "object", "properties": {"a": node}}
        elif keyword == "anyOf":
            node = {"anyOf": [node]}
        else:
            node = {"type": "array", "items": node}
    return node


@pytest.mark.parametrize("keyword", ["items", "properties", "anyOf"])
def test_deep_schemas_are_refused_by_size_with_keyword_and_pointer(tok: tokstream.Tokenizer, keyword: str) -> None:
    """A schema nested 10,000 deep (json.dumps alone would raise RecursionError) is
    refused early, naming ``(size)``, the nesting keyword and a pointer through it;
    the text of one is refused by ``(size)`` too; one 60 deep compiles."""
    deep = _nested(10_000, keyword)
    with pytest.raises(UnsupportedSchemaError, match=r"\(size\)") as info:
        json_schema_constraint(tok, deep)
    assert info.value.keyword == keyword, str(info.value)
    step = {"items": "/items", "properties": "/properties/a", "anyOf": "/anyOf/0"}[keyword]
    assert info.value.pointer is not None and info.value.pointer.startswith(step * 50), str(info.value)[:200]
    text = "{" + '"items": {' * 10_000 + "}" * 10_001
    with pytest.raises(UnsupportedSchemaError, match=r"\(size\)"):
        json_schema_constraint(tok, text)
    assert json_schema_constraint(tok, _nested(60, keyword)).allowed_ids().size


def test_malformed_and_unsatisfiable_schemas(tok: tokstream.Tokenizer) -> None:
    with pytest.raises(UnsupportedSchemaError, match=r"not valid JSON.*line 1"):
        json_schema_constraint(tok, '{"type": ')
    with pytest.raises(TokstreamError, match="no JSON value"):
        json_schema_constraint(tok, False)
    with pytest.raises(TokstreamError, match="no JSON value"):
        json_schema_constraint(tok, {"type": "string", "minLength": 3, "maxLength": 2})
    with pytest.raises(UnsupportedSchemaError):
        json_schema_constraint(tok, [1, 2])  # type: ignore[arg-type]


def test_a_long_max_length_beside_a_pattern_is_enforced_as_the_cap(tok: tokstream.Tokenizer) -> None:
    from tokstream.constrain.json_schema.compiler import MAX_LENGTH

    schema = {"type": "string", "maxLength": 5000, "pattern": "^[abc]*$"}
    assert _accepts(tok, schema, json.dumps("ab" * (MAX_LENGTH // 2)))
    assert not _accepts(tok, schema, json.dumps("ab" * (MAX_LENGTH // 2) + "c"))


def test_lengths_alone_are_exact_at_any_size(tok: tokstream.Tokenizer) -> None:
    """A length without a pattern is a counter: exact at 5000 characters, and a bound
    of a billion compiles at once."""
    schema = {"type": "string", "minLength": 4999, "maxLength": 5000}
    assert _accepts(tok, schema, json.dumps("ab" * 2500))
    assert not _accepts(tok, schema, json.dumps("ab" * 2500 + "c"))
    assert not _accepts(tok, schema, json.dumps("ab" * 2499))
    c = json_schema_constraint(tok, {"type": "string", "minLength": 10**9})
    assert c.accept(tok.encode('"')[0]) and not c.can_end


def test_annotations_and_unknown_words_are_ignored(tok: tokstream.Tokenizer) -> None:
    schema = {"title": "t", "description": "d", "examples": [1], "x-vendor": {"not": 1}, "type": "integer"}
    assert _accepts(tok, schema, "12")
    assert not _accepts(tok, schema, '"12"')


def test_recursive_ref_through_allof(tok: tokstream.Tokenizer) -> None:
    """A recursion that passes through ``allOf`` (not a bare ``$ref``) still ends."""
    schema = {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"kids": {"type": "array", "items": {"allOf": [{"$ref": "#/$defs/node"}]}}},
                "additionalProperties": False,
            }
        },
        "$ref": "#/$defs/node",
    }
    assert _accepts(tok, schema, json.dumps({"kids": [{"kids": [{}]}, {}]}))
    assert not _accepts(tok, schema, json.dumps({"kids": [{"kid": []}]}))


def test_the_callers_schema_can_change_afterwards(tok: tokstream.Tokenizer) -> None:
    schema: dict[str, Any] = {"type": "integer"}
    c = json_schema_constraint(tok, schema)
    schema["type"] = "string"
    assert all(c.accept(i) for i in tok.encode("42")) and c.can_end

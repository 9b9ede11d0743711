"""``json_schema_constraint``: a JSON Schema as an exact token constraint.

The schema compiles (``compiler``) to rules and terminals that the grammar engine
(``grammar``) turns into a ``GrammarConstraint``: the same Earley sets, vocabulary
walks and cached masks as ``grammar_constraint``; a schema with no recursion and no
free-form value is one terminal, a DFA, and steps as fast as a regex. Compiled
schemas are cached per tokenizer fingerprint (``compile_cache``), keyed on the
schema's canonical JSON (``canonical_json``), the whitespace rule and the prefix.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from ...errors import UnsupportedGrammarError, UnsupportedSchemaError
from ..grammar import charset
from ..grammar.automaton import char_sets
from ..grammar.constraint import GrammarConstraint, constraint_from
from ..grammar.earley import Grammar
from ..grammar.nodes import EMPTY, Chars, Node, Repeat
from ..grammar.regex import parse_regex
from ..healing import Healing
from .compiler import compile_schema
from .schema import MAX_DEPTH, check_depth

if TYPE_CHECKING:
    from ...tokenizer import Tokenizer

__all__ = ["MAX_WHITESPACE", "canonical_json", "json_schema_constraint"]

#: The longest run of whitespace the default rule allows at one place: enough for
#: ``json.dumps(..., indent=2)`` eight levels deep, short enough that a model cannot
#: loop on spaces.
MAX_WHITESPACE: Final = 20
_JSON_WS: Final = charset.normalize([(0x09, 0x0A), (0x0D, 0x0D), (0x20, 0x20)])


def _whitespace(rule: str | None) -> Node:
    if rule is None:
        return Repeat(Chars(_JSON_WS), 0, MAX_WHITESPACE)
    if not isinstance(rule, str):
        raise TypeError(f"whitespace must be None, 'compact' or a regex string, not {type(rule).__name__}")
    if rule == "compact":
        return EMPTY
    tree = parse_regex(rule)
    for ranges in char_sets(tree):
        if charset.intersect(ranges, _JSON_WS) != ranges:
            raise UnsupportedGrammarError(
                f"the whitespace regex {rule!r} matches characters that are not JSON whitespace (space, \\t, \\n, \\r)"
            )
    return tree


def canonical_json(schema: Any) -> str:
    """The schema's text as the compile cache keys it: ``json.dumps`` with
    ``separators=(",", ":")``, ``ensure_ascii=False`` and ``allow_nan=False``, every
    object's keys *in their own order*. So a dict and its JSON text, or two texts that
    differ only in whitespace or escapes (``"\u00e9"`` / ``"é"``), share an entry; the
    compiler reads exactly this text's value (``json_schema_constraint`` parses it back).

    Keys are not sorted, not even a schema object's, because their order is part of the
    meaning here: properties come in ``properties`` order; a ``const`` or ``enum``
    object is written in its key order; a ``$ref`` or ``allOf`` merges its properties
    before or after the object's own ones by where it stands among the object's keys
    (``schema.Schema.flatten``); ``anyOf`` before ``oneOf`` orders the properties their
    branches add; two equal ``$anchor`` / ``$id`` resolve to the first. A sorted key
    could merge two schemas whose constraints differ; an unsorted one only misses a hit
    between reordered copies of one schema, which a server's clients rarely send.

    >>> canonical_json({"type": "object", "properties": {"b": {}, "a": {"enum": ["é"]}}})
    '{"type":"object","properties":{"b":{},"a":{"enum":["é"]}}}'
    """
    try:
        return json.dumps(schema, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as e:
        raise UnsupportedSchemaError(f"the schema is not JSON data: {e}") from e


def json_schema_constraint(
    tok: Tokenizer,
    schema: dict[str, Any] | bool | str,
    *,
    eos_id: int | None = None,
    whitespace: str | None = None,
    prefix: bytes | Healing = b"",
) -> GrammarConstraint:
    """A constraint: the output is a JSON text valid against ``schema`` (a dict, a
    boolean schema, or its JSON text), then ``eos_id`` if given. ``prefix`` (bytes,
    or a ``Healing`` from ``heal``) is reproduced first.

    Properties come in ``properties`` order, then any others (llguidance's order).
    ``whitespace``: None allows JSON whitespace after ``{ [ : ,`` and after every
    value inside a container, at most ``MAX_WHITESPACE`` characters at one place,
    none before or after the value; ``"compact"`` allows none; a regex string (its
    characters among space, tab, newline, carriage return) is what stands in those
    places. A keyword the compiler cannot enforce exactly raises
    ``UnsupportedSchemaError`` naming the keyword and its JSON pointer.

    >>> import tokstream
    >>> tok = tokstream.load("cl100k_base")
    >>> schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    >>> c = json_schema_constraint(tok, schema, whitespace="compact")
    >>> [c.accept(i) for i in tok.encode('{"n":12}')], c.can_end
    ([True, True, True, True, True], True)
    """
    if isinstance(schema, str):
        try:
            schema = json.loads(schema)
        except json.JSONDecodeError as e:
            raise UnsupportedSchemaError(
                f"the schema is not valid JSON: {e.msg} (line {e.lineno}, column {e.colno})"
            ) from e
        except RecursionError as e:
            # json's decoder recurses per level, before any pointer is known.
            raise UnsupportedSchemaError(
                f"(size) the schema text nests deeper than Python's JSON decoder reads (more than {MAX_DEPTH} "
                "objects and arrays deep are refused anyway); flatten it"
            ) from e
    check_depth(schema)  # before json.dumps and the compiler, which recurse per level
    source = canonical_json(schema)
    ws = _whitespace(whitespace)
    root = json.loads(source)  # a private copy: later edits to the caller's dict change nothing

    def build(alphabet: tuple[tuple[int, int], ...] | None, data: bytes) -> tuple[Grammar, bool]:
        try:
            compiled = compile_schema(root, ws)
            g = Grammar(compiled.rules, compiled.terminals, compiled.start, alphabet=alphabet, prefix=data)
        except UnsupportedSchemaError:
            raise
        except UnsupportedGrammarError as e:
            # A size bound (automaton states): the schema as a whole is refused.
            raise UnsupportedSchemaError(f"the schema's automaton is too large: {e.message}", "(size)", "") from e
        except RecursionError as e:
            raise UnsupportedSchemaError("the schema nests too deeply (Python's recursion limit)", "(depth)", "") from e
        return g, compiled.single and not data

    return constraint_from(tok, ("json", f"{whitespace!r}\n{source}"), build, eos_id, prefix)

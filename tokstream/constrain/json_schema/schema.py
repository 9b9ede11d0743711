"""A JSON Schema read into one flat record per schema object (``Norm``), with local
``$ref`` resolution and the merge that ``allOf`` and sibling keywords need.

``Schema(root)`` indexes the document once (``$defs``, ``definitions``, ``$id``,
``$anchor``); ``normalize(sub)`` reads one schema object: every keyword is either
an annotation (ignored: ``title``, ``description``, ``examples``, ... and any word
that is no validation keyword of any draft), supported (read into the record, its
value checked), or refused with ``UnsupportedSchemaError`` naming keyword and JSON
pointer. A validation keyword is never dropped: a looser constraint is a bug.

``flatten(norm)`` folds ``$ref`` and ``allOf`` into the record (``merge``), so the
compiler sees one conjunction. Subschemas of properties and items stay unread
(``Sub``: the raw value and its pointer) until the compiler reaches them: a
recursive ``$ref`` is resolved only where it is used, where the compiler turns it
into a grammar rule.

Drafts: 2020-12 is the default; draft-04's boolean ``exclusiveMinimum`` /
``exclusiveMaximum`` and the array form of ``items`` with ``additionalItems``
(drafts 4 to 2019-09) are read by their shape. Before 2019-09 a ``$ref``'s sibling
keywords are meant to be ignored; they are intersected here, which can only refuse
more, never accept an invalid instance.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from decimal import Decimal
from functools import lru_cache
from typing import Any, Final, NamedTuple
from urllib.parse import unquote

from ...errors import UnsupportedSchemaError
from ..grammar.automaton import Dfa, compile_dfa

__all__ = [
    "ANNOTATIONS",
    "ATOMS",
    "MAX_DEPTH",
    "Bound",
    "Norm",
    "Schema",
    "Sub",
    "atom_of",
    "check_depth",
    "json_equal",
    "string_matches",
]

#: Keywords with no effect on validity.
ANNOTATIONS: Final = frozenset(
    {
        "$schema", "$id", "id", "$comment", "$anchor", "$vocabulary", "$defs", "definitions",
        "$dynamicAnchor", "$recursiveAnchor", "title", "description", "examples", "default",
        "deprecated", "readOnly", "writeOnly", "contentMediaType", "contentEncoding",
        "contentSchema", "then", "else",
    }
)  # fmt: skip
#: Validation keywords (of any draft) that are read.
SUPPORTED: Final = frozenset(
    {
        "type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref",
        "properties", "required", "additionalProperties", "patternProperties",
        "minProperties", "maxProperties", "items", "prefixItems", "additionalItems",
        "minItems", "maxItems", "minLength", "maxLength", "pattern", "format",
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
        "uniqueItems", "if",
    }
)  # fmt: skip
#: Validation keywords that are refused (the compiler cannot enforce them exactly).
REFUSED: Final = {
    "not": "negation is not supported",
    "contains": "contains is not supported",
    "minContains": "minContains is not supported",
    "maxContains": "maxContains is not supported",
    "propertyNames": "propertyNames is not supported",
    "dependentRequired": "dependentRequired is not supported",
    "dependentSchemas": "dependentSchemas is not supported",
    "dependencies": "dependencies is not supported",
    "unevaluatedProperties": "unevaluatedProperties is not supported",
    "unevaluatedItems": "unevaluatedItems is not supported",
    "$dynamicRef": "dynamic references are not supported",
    "$recursiveRef": "recursive references ($recursiveRef) are not supported",
    "disallow": "draft-03's disallow is not supported",
    "extends": "draft-03's extends is not supported",
    "divisibleBy": "draft-03's divisibleBy is not supported",
}
#: The type atoms: "number" is {int, frac}, "integer" is {int}.
ATOMS: Final = frozenset({"null", "boolean", "object", "array", "string", "int", "frac"})
#: Nesting levels (objects and arrays) a schema document may have: the compiler and
#: ``json`` recurse once or more per level, so deeper is refused before either runs.
MAX_DEPTH: Final = 200
#: Keywords whose object's keys are names (of properties, definitions), not keywords.
_NAMED: Final = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
#: Keywords whose values are or hold subschemas (what makes a schema nest).
_NESTING: Final = _NAMED | frozenset(
    {
        "items",
        "prefixItems",
        "additionalItems",
        "additionalProperties",
        "anyOf",
        "allOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "dependencies",
    }
)
_TYPE_ATOMS: Final = {
    "null": frozenset({"null"}),
    "boolean": frozenset({"boolean"}),
    "object": frozenset({"object"}),
    "array": frozenset({"array"}),
    "string": frozenset({"string"}),
    "number": frozenset({"int", "frac"}),
    "integer": frozenset({"int"}),
}


class Sub(NamedTuple):
    """A subschema not read yet: its JSON value and its JSON pointer."""

    raw: Any
    ptr: str


class Bound(NamedTuple):
    """A numeric bound: the value and whether it is exclusive."""

    value: Decimal
    exclusive: bool


@dataclass
class Norm:
    """One schema object's constraints (all of them hold). Subschema lists are
    conjunctions: an empty list allows anything."""

    ptr: str
    types: frozenset[str] = ATOMS
    enum: tuple[Any, ...] | None = None
    any_of: list[tuple[tuple[Sub, ...], str, str]] = field(default_factory=list)  # (branches, keyword, ptr)
    ref: str | None = None
    all_of: list[Sub] = field(default_factory=list)
    order: list[str] = field(default_factory=list)  # "own", "ref", "allOf": their order in the object
    minimum: Bound | None = None
    maximum: Bound | None = None
    multiple_of: list[Decimal] = field(default_factory=list)
    min_length: int = 0
    max_length: int | None = None
    patterns: list[tuple[str, str]] = field(default_factory=list)  # (pattern, ptr)
    formats: list[tuple[str, str]] = field(default_factory=list)
    prefix: list[list[Sub]] = field(default_factory=list)
    items: list[Sub] = field(default_factory=list)
    min_items: int = 0
    max_items: int | None = None
    properties: dict[str, list[Sub]] = field(default_factory=dict)
    required: list[str] = field(default_factory=list)
    additional: list[Sub] = field(default_factory=list)
    pattern_props: dict[str, list[Sub]] = field(default_factory=dict)
    min_props: int = 0
    max_props: int | None = None
    unique_ptr: str | None = None  # uniqueItems: true, checked once the array is known

    def is_any(self) -> bool:
        """Whether this record allows every JSON value."""
        return replace(self, order=[]) == Norm(self.ptr)


def json_equal(a: Any, b: Any) -> bool:
    """JSON Schema equality: numbers by value (``1 == 1.0``), booleans apart from
    numbers, arrays in order, objects as key sets."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return Decimal(repr(a)) == Decimal(repr(b)) if isinstance(a, float) or isinstance(b, float) else a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def atom_of(value: Any) -> str:
    """The type atom (``ATOMS``) of a JSON value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "int" if math.isfinite(value) and value == int(value) else "frac"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _decimal(value: Any, keyword: str, ptr: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise UnsupportedSchemaError(f"expected a number, got {json.dumps(value)[:40]}", keyword, ptr)
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def _count(value: Any, keyword: str, ptr: str) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UnsupportedSchemaError(f"expected a non-negative integer, got {json.dumps(value)[:40]}", keyword, ptr)
    return value


def _tighter(a: Bound | None, b: Bound | None, low: bool) -> Bound | None:
    """The stronger of two lower (``low``) or upper bounds; exclusive wins a tie."""
    if a is None or b is None:
        return a or b
    if a.value != b.value:
        return a if (a.value > b.value) == low else b
    return Bound(a.value, a.exclusive or b.exclusive)


def _min_opt(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


class Schema:
    """A schema document: its root and the index its local references resolve in."""

    def __init__(self, root: Any) -> None:
        if not isinstance(root, (dict, bool)):
            raise UnsupportedSchemaError(f"a schema is an object or a boolean, not {type(root).__name__}", None, "")
        self.root = root
        self.base = ""
        # Drafts 3 and 4: an integer is written without a fraction (1.0 is no integer).
        self.plain_integers = isinstance(root, dict) and any(
            d in str(root.get("$schema", "")) for d in ("draft-03", "draft-04")
        )
        if isinstance(root, dict):
            base = root.get("$id", root.get("id"))
            if isinstance(base, str):
                self.base = base.split("#", 1)[0]
        self.anchors: dict[str, str] = {}  # "#name" / "$id" -> pointer
        self._index(root, "", 0)

    def _index(self, node: Any, ptr: str, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise _too_deep(ptr)
        if isinstance(node, dict):
            anchor = node.get("$anchor")
            if isinstance(anchor, str):
                self.anchors.setdefault("#" + anchor, ptr)
            ident = node.get("$id", node.get("id")) if ptr else None
            if isinstance(ident, str) and not isinstance(node.get("properties", {}).get("id") if ptr else 0, dict):
                self.anchors.setdefault(ident, ptr)
            for k, v in node.items():
                if isinstance(v, (dict, list)):
                    self._index(v, f"{ptr}/{_escape(k)}", depth + 1)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                if isinstance(v, (dict, list)):
                    self._index(v, f"{ptr}/{i}", depth + 1)

    def resolve(self, ref: str, ptr: str) -> str:
        """The JSON pointer ``ref`` (a local reference) points at; raise when it is
        external or points at nothing."""
        target = ref
        if self.base and target.startswith(self.base):
            target = target[len(self.base) :]
        if target in self.anchors:
            return self.anchors[target]
        if target == "" or target == "#":
            return ""
        if not target.startswith("#"):
            raise UnsupportedSchemaError(
                f"the reference {ref!r} is not local (external $ref is not supported)", "$ref", ptr
            )
        if target in self.anchors:
            return self.anchors[target]
        pointer = unquote(target[1:])
        if not pointer.startswith("/"):
            raise UnsupportedSchemaError(f"the reference {ref!r} names no anchor of the schema", "$ref", ptr)
        self.get(pointer, ref, ptr)
        return pointer

    def get(self, pointer: str, ref: str = "", at: str = "") -> Any:
        """The value at JSON pointer ``pointer``."""
        node = self.root
        for raw in pointer.split("/")[1:]:
            token = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                raise UnsupportedSchemaError(f"the reference {ref or pointer!r} points at nothing", "$ref", at)
        return node

    # ------------------------------------------------------------------ reading

    def normalize(self, sub: Sub) -> Norm:
        """Read one schema object (module notes)."""
        raw, ptr = sub
        if raw is True:
            return Norm(ptr)
        if raw is False:
            return Norm(ptr, types=frozenset())
        if not isinstance(raw, dict):
            raise UnsupportedSchemaError(f"a schema is an object or a boolean, not {json.dumps(raw)[:40]}", None, ptr)
        n = Norm(ptr)
        own = False
        for key, value in raw.items():
            here = ptr
            if key in REFUSED:
                if key == "dependencies" and not value:
                    continue
                raise UnsupportedSchemaError(REFUSED[key], key, here)
            if key not in SUPPORTED:
                continue  # an annotation, or no keyword of any draft: ignored (JSON Schema's rule)
            if key == "$ref":
                if not isinstance(value, str):
                    raise UnsupportedSchemaError("expected a string", key, ptr)
                n.ref = self.resolve(value, ptr)
                n.order.append("ref")
                continue
            if key == "allOf":
                n.all_of.extend(self._subs(value, key, ptr))
                n.order.append("allOf")
                continue
            if not own:
                n.order.append("own")
                own = True
            self._read(n, key, value, raw)
        return n

    def _subs(self, value: Any, key: str, ptr: str) -> list[Sub]:
        if not isinstance(value, list) or not value:
            raise UnsupportedSchemaError("expected a non-empty array of schemas", key, ptr)
        return [Sub(v, f"{ptr}/{key}/{i}") for i, v in enumerate(value)]

    def _read(self, n: Norm, key: str, value: Any, raw: dict[str, Any]) -> None:
        ptr = n.ptr
        if key == "type":
            names = value if isinstance(value, list) else [value]
            atoms: set[str] = set()
            for name in names:
                if name not in _TYPE_ATOMS:
                    raise UnsupportedSchemaError(f"unknown type {json.dumps(name)[:40]}", key, ptr)
                atoms |= _TYPE_ATOMS[name]
            n.types = n.types & frozenset(atoms)
        elif key in ("enum", "const"):
            values = (value,) if key == "const" else value
            if key == "enum" and not isinstance(value, list):
                raise UnsupportedSchemaError("expected an array", key, ptr)
            kept = tuple(values)
            if n.enum is not None:
                kept = tuple(v for v in kept if any(json_equal(v, w) for w in n.enum))
            n.enum = kept
        elif key in ("anyOf", "oneOf"):
            n.any_of.append((tuple(self._subs(value, key, ptr)), key, ptr))
        elif key in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
            low = key in ("minimum", "exclusiveMinimum")
            if isinstance(value, bool):  # draft-04: a flag on minimum / maximum
                if key.startswith("exclusive") and value:
                    base = raw.get("minimum" if low else "maximum")
                    if base is None:
                        return
                    bound = Bound(_decimal(base, key, ptr), True)
                else:
                    return
            else:
                exclusive = key.startswith("exclusive") or raw.get("exclusive" + key.title()) is True
                bound = Bound(_decimal(value, key, ptr), exclusive)
            if low:
                n.minimum = _tighter(n.minimum, bound, True)
            else:
                n.maximum = _tighter(n.maximum, bound, False)
        elif key == "multipleOf":
            d = _decimal(value, key, ptr)
            if d <= 0:
                raise UnsupportedSchemaError("multipleOf must be greater than 0", key, ptr)
            n.multiple_of.append(d)
        elif key == "minLength":
            n.min_length = max(n.min_length, _count(value, key, ptr))
        elif key == "maxLength":
            n.max_length = _min_opt(n.max_length, _count(value, key, ptr))
        elif key == "pattern":
            if not isinstance(value, str):
                raise UnsupportedSchemaError("expected a string", key, ptr)
            n.patterns.append((value, ptr))
        elif key == "format":
            if not isinstance(value, str):
                raise UnsupportedSchemaError("expected a string", key, ptr)
            n.formats.append((value, ptr))
        elif key == "prefixItems":
            n.prefix = [[s] for s in self._subs(value, key, ptr)]
        elif key == "items":
            if isinstance(value, list):  # drafts 4 to 2019-09: a tuple
                n.prefix = [[s] for s in self._subs(value, key, ptr)] if value else []
                extra = raw.get("additionalItems", True)
                n.items = [] if extra is True else [Sub(extra, f"{ptr}/additionalItems")]
            else:
                n.items = [Sub(value, f"{ptr}/items")]
        elif key == "additionalItems":
            if not isinstance(raw.get("items"), list):
                return  # without the tuple form of items it has no effect
        elif key == "minItems":
            n.min_items = max(n.min_items, _count(value, key, ptr))
        elif key == "maxItems":
            n.max_items = _min_opt(n.max_items, _count(value, key, ptr))
        elif key == "uniqueItems":
            if value is True:
                n.unique_ptr = ptr
        elif key == "properties":
            if not isinstance(value, dict):
                raise UnsupportedSchemaError("expected an object", key, ptr)
            for name, s in value.items():
                n.properties.setdefault(name, []).append(Sub(s, f"{ptr}/properties/{_escape(name)}"))
        elif key == "required":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise UnsupportedSchemaError("expected an array of strings", key, ptr)
            for name in value:
                if name not in n.required:
                    n.required.append(name)
        elif key == "additionalProperties":
            if value is not True:
                n.additional = [Sub(value, f"{ptr}/additionalProperties")]
        elif key == "patternProperties":
            if not isinstance(value, dict):
                raise UnsupportedSchemaError("expected an object", key, ptr)
            for pat, s in value.items():
                n.pattern_props.setdefault(pat, []).append(Sub(s, f"{ptr}/patternProperties/{_escape(pat)}"))
        elif key == "minProperties":
            n.min_props = max(n.min_props, _count(value, key, ptr))
        elif key == "maxProperties":
            n.max_props = _min_opt(n.max_props, _count(value, key, ptr))
        elif key == "if":
            if "then" in raw or "else" in raw:
                raise UnsupportedSchemaError("if / then / else is not supported", key, ptr)

    # ------------------------------------------------------------------ merging

    def flatten(self, n: Norm, stack: tuple[str, ...] = ()) -> Norm:
        """``n`` with its ``$ref`` and ``allOf`` merged in (in the order they stand)."""
        if n.ref is None and not n.all_of:
            return n
        own = replace(n, ref=None, all_of=[], order=[])
        parts: list[Norm] = []
        subs = iter(n.all_of)
        for what in n.order or ["own"]:
            if what == "own":
                parts.append(own)
            elif what == "ref":
                assert n.ref is not None
                if n.ref in stack:
                    raise UnsupportedSchemaError("the $ref refers to itself through allOf or $ref alone", "$ref", n.ptr)
                parts.append(self.flatten(self.normalize(Sub(self.get(n.ref), n.ref)), (*stack, n.ref)))
            else:
                for s in subs:
                    parts.append(self.flatten(self.normalize(s), stack))
        if "own" not in n.order:
            parts.append(own)
        out = parts[0]
        for p in parts[1:]:
            out = self.merge(out, p)
        return out

    def merge(self, a: Norm, b: Norm) -> Norm:
        """The conjunction of two flattened records (llguidance's property order: a's
        properties, then b's new ones)."""
        if b.is_any():
            return a
        if a.is_any():
            return replace(b, ptr=a.ptr)
        enum = a.enum if b.enum is None else b.enum if a.enum is None else tuple(
            v for v in a.enum if any(json_equal(v, w) for w in b.enum)
        )  # fmt: skip
        props: dict[str, list[Sub]] = {}
        for name in [*a.properties, *(k for k in b.properties if k not in a.properties)]:
            props[name] = self.for_name(a, name) + self.for_name(b, name)
        if a.pattern_props and (b.pattern_props or b.additional):
            if a.pattern_props != b.pattern_props or a.additional != b.additional:
                raise UnsupportedSchemaError(
                    "allOf of objects with patternProperties and other property rules is not supported",
                    "patternProperties",
                    a.ptr,
                )
            pattern_props = a.pattern_props
        elif b.pattern_props and a.additional:
            raise UnsupportedSchemaError(
                "allOf of objects with patternProperties and other property rules is not supported",
                "patternProperties",
                b.ptr,
            )
        else:
            pattern_props = {**a.pattern_props, **b.pattern_props}
        n = len(max(a.prefix, b.prefix, key=len))
        prefix = [
            (a.prefix[i] if i < len(a.prefix) else a.items) + (b.prefix[i] if i < len(b.prefix) else b.items)
            for i in range(n)
        ]
        return Norm(
            a.ptr,
            types=a.types & b.types,
            enum=enum,
            any_of=a.any_of + b.any_of,
            minimum=_tighter(a.minimum, b.minimum, True),
            maximum=_tighter(a.maximum, b.maximum, False),
            multiple_of=a.multiple_of + b.multiple_of,
            min_length=max(a.min_length, b.min_length),
            max_length=_min_opt(a.max_length, b.max_length),
            patterns=a.patterns + b.patterns,
            formats=a.formats + b.formats,
            prefix=prefix,
            items=a.items + b.items,
            min_items=max(a.min_items, b.min_items),
            max_items=_min_opt(a.max_items, b.max_items),
            properties=props,
            required=a.required + [r for r in b.required if r not in a.required],
            additional=a.additional + b.additional,
            pattern_props=pattern_props,
            min_props=max(a.min_props, b.min_props),
            max_props=_min_opt(a.max_props, b.max_props),
            unique_ptr=a.unique_ptr or b.unique_ptr,
        )

    def for_name(self, n: Norm, name: str) -> list[Sub]:
        """What ``n`` asks of the value of property ``name``: its ``properties``
        entry and the ``patternProperties`` it matches, else ``additionalProperties``."""
        out = list(n.properties.get(name, []))
        matched = False
        for pat, subs in n.pattern_props.items():
            if string_matches("pattern", pat, name, n.ptr):
                out.extend(subs)
                matched = True
        if name not in n.properties and not matched:
            out.extend(n.additional)
        return out


@lru_cache(maxsize=1024)
def _string_dfa(keyword: str, text: str) -> Dfa | None:
    """The DFA of a ``pattern`` or ``format`` value, over a string's characters."""
    from .strings import format_tree, pattern_tree

    return compile_dfa(pattern_tree(text) if keyword == "pattern" else format_tree(text))


def string_matches(keyword: str, text: str, value: str, ptr: str) -> bool:
    """Whether the string ``value`` satisfies the ``pattern`` or ``format`` ``text``
    (exactly as the compiled constraint reads it); a refusal names ``ptr``."""
    try:
        dfa = _string_dfa(keyword, text)
    except UnsupportedSchemaError as e:
        raise UnsupportedSchemaError(e.message, e.keyword or keyword, ptr) from e
    return dfa is not None and dfa.matches(value)


def check_depth(root: Any) -> None:
    """Raise ``UnsupportedSchemaError`` naming ``(size)``, the keyword and the JSON
    pointer where ``root`` nests more than ``MAX_DEPTH`` objects and arrays deep.
    Iterative (a stack, not recursion), so any depth is read: for a caller that must
    recurse over the document before ``Schema`` does (``json.dumps``); ``Schema``
    checks the same bound as it indexes."""
    stack: list[tuple[Any, str, int]] = [(root, "", 0)]
    while stack:
        node, ptr, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise _too_deep(ptr)
        if isinstance(node, dict):
            stack.extend((v, f"{ptr}/{_escape(k)}", depth + 1) for k, v in node.items() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend((v, f"{ptr}/{i}", depth + 1) for i, v in enumerate(node) if isinstance(v, (dict, list)))


def _too_deep(ptr: str) -> UnsupportedSchemaError:
    """The refusal of a schema nesting past ``MAX_DEPTH`` at ``ptr``."""
    return UnsupportedSchemaError(
        f"(size) the schema nests more than {MAX_DEPTH} objects and arrays deep; flatten it "
        "(a $ref to a definition nests it once)",
        _keyword_of(ptr),
        ptr,
    )


def _keyword_of(ptr: str) -> str | None:
    """The keyword holding subschemas that a JSON pointer last goes through (the one
    that nests), else its last keyword: a segment that is neither an array index nor
    a name under ``properties`` and the like."""
    parts = [p.replace("~1", "/").replace("~0", "~") for p in ptr.split("/")[1:]]
    keywords = [p for i, p in enumerate(parts) if not p.isdigit() and not (i > 0 and parts[i - 1] in _NAMED)]
    nesting = [p for p in keywords if p in _NESTING]
    return nesting[-1] if nesting else keywords[-1] if keywords else None

"""Reading ``tokenizer.json`` objects: typed fields, named by their JSON path on error.

Every component's ``from_json`` (normalizers, pre-tokenizers, models, post-processors,
decoders, added tokens) reads its object through these helpers, so a malformed file
fails the same way everywhere: a ``TokenizerFileError`` (a ``ValueError``) whose message
starts with the JSON path of the bad value (``normalizer.normalizers[1].prepend``,
``model.ignore_merges``) and says what was expected and what was found.
``formats/hf_json.py`` puts the file's name in front.

- ``field``: a field of a given type; with a default, absent or null gives the default
  (serde's ``#[serde(default)]`` and ``Option``);
- ``pattern``: a ``{"String": ...}`` / ``{"Regex": ...}`` field; ``token_pair``: a
  ``[token, id]`` field; ``token_ids``: a ``{token: id}`` field, checked at C speed;
- ``expect_object``, ``kind`` (what a value is, for messages) and ``error``;
- ``members`` (the list of a ``Sequence``) and ``from_table`` (a component by its
  ``"type"``): the stage dispatchers (``normalizers.normalizer_from_json``, ...) are
  ``from_table`` over their stage's type table, and hand a ``Sequence`` a ``build``
  callable for its members, so no module needs to import its own package;
  ``Sequence`` members nest at most ``MAX_DEPTH`` deep;
- ``check_dense_ids``: the rule every source of ids (vocabularies, rank files, the
  ``ranks`` a ``Tokenizer`` is built from) is held to, so that per-id tables stay
  O(tokens).

Not here: any one component's rules (its ``from_json`` holds them) and the file level
(``formats/hf_json.py``: the stage keys and the ids of added tokens).

>>> field({"split": True}, "split", bool, "pre_tokenizer")
True
>>> field({"split": None}, "split", bool, "pre_tokenizer", False)
False
>>> field({"split": "yes"}, "split", bool, "pre_tokenizer")
Traceback (most recent call last):
...
tokstream.errors.TokenizerFileError: pre_tokenizer.split: expected a boolean, got the string 'yes'
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final, NamedTuple, Protocol, TypeVar, overload

from .errors import TokenizerFileError

__all__ = [
    "MAX_DEPTH",
    "MAX_ID",
    "SPARE_IDS",
    "Build",
    "FromJson",
    "JsonObject",
    "check_dense_ids",
    "error",
    "expect_object",
    "field",
    "from_table",
    "kind",
    "members",
    "pattern",
    "sparse_ids_message",
    "token_ids",
    "token_pair",
]

#: A JSON object as ``json.loads`` gives it.
JsonObject = Mapping[str, Any]

_T = TypeVar("_T")
_D = TypeVar("_D")
_C = TypeVar("_C")
_C_co = TypeVar("_C_co", covariant=True)

#: ``build(obj, path)``: the component of a JSON object (a stage dispatcher, never null).
Build = Callable[[object, str], _T]

#: The largest id plus one that ``tokenizers`` can hold (its ids are ``u32``).
MAX_ID: Final = 2**32

#: How deep ``Sequence`` members may nest (a ``Sequence`` directly in a stage: depth 1).
#: ``tokenizers`` refuses a file nested more than 128 JSON levels (serde_json's limit),
#: which a Sequence reaches at 63 levels (two per level: the object and its list), so
#: this refuses nothing ``tokenizers`` loads, and bounds our own recursion.
MAX_DEPTH: Final = 64

#: Unused ids a vocabulary may have beyond one per token (``check_dense_ids``).
SPARE_IDS: Final = 65536


def check_dense_ids(n_tokens: int, max_id: int) -> bool:
    """Whether ``n_tokens`` ids whose largest is ``max_id`` leave at most
    ``n_tokens + SPARE_IDS`` ids unused below ``max_id``.

    tokstream's per-id tables (token bytes, the vocabulary index, masks and bitmasks,
    which are ``n_vocab`` wide by contract) are dense, so a single id of 10**8 would
    cost gigabytes; ``tokenizers`` and ``tiktoken`` hold ids in hash maps and load such
    files. Rather than make every table sparse for files no model uses (published
    vocabularies are dense, with at most a few hundred reserved ids), the places where
    ids enter refuse them, naming the id: memory stays O(tokens).

    >>> check_dense_ids(50_000, 120_000), check_dense_ids(50_000, 10**8)
    (True, False)
    """
    return max_id + 1 - n_tokens <= n_tokens + SPARE_IDS


def sparse_ids_message(n_tokens: int, token_id: int) -> str:
    """What is wrong when ``check_dense_ids`` fails for ``token_id``."""
    return (
        f"id {token_id} leaves {token_id + 1 - n_tokens} unused ids for {n_tokens} tokens; "
        f"tokstream keeps per-id tables, so ids may leave at most one unused id per token "
        f"plus {SPARE_IDS} (renumber the tokens densely)"
    )


class FromJson(Protocol[_C_co]):
    """A component class: ``from_json(obj, path, build=...)`` builds one."""

    def from_json(self, obj: JsonObject, path: str, *, build: Build[Any] | None = None) -> _C_co: ...


def kind(value: object) -> str:
    """A JSON-ish name of ``value``'s type, for error messages.

    >>> kind(None), kind(True), kind(3), kind("x"), kind([]), kind({})
    ('null', 'a boolean', 'the number 3', "the string 'x'", 'an array', 'an object')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value!r:.80}"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def error(path: str, message: str) -> TokenizerFileError:
    """The error for the value at ``path``: ``"{path}: {message}"``."""
    return TokenizerFileError(f"{path}: {message}")


def expect_object(value: object, path: str, what: str = "an object") -> JsonObject:
    """``value`` when it is a JSON object, else the error naming ``what`` was expected.

    >>> expect_object([], "model", "a BPE model object")
    Traceback (most recent call last):
    ...
    tokstream.errors.TokenizerFileError: model: expected a BPE model object, got an array
    """
    if not isinstance(value, dict):
        raise error(path, f"expected {what}, got {kind(value)}")
    return value


_NAMES: Final[dict[type, str]] = {
    bool: "a boolean",
    str: "a string",
    int: "an integer",
    float: "a number",
    list: "an array",
    dict: "an object",
}


#: ``field``'s default when none is given: the field is required.
_REQUIRED: Final = object()


@overload
def field(obj: JsonObject, name: str, types: type[_T] | tuple[type[_T], ...], path: str) -> _T: ...
@overload
def field(obj: JsonObject, name: str, types: type[_T] | tuple[type[_T], ...], path: str, default: _D) -> _T | _D: ...
def field(obj: JsonObject, name: str, types: Any, path: str, default: Any = _REQUIRED) -> Any:
    """``obj[name]``, of one of ``types`` (a boolean is not a number here).

    Without ``default`` the field is required; with one, an absent or null field gives
    ``default``. Errors: ``{path}: missing field 'name' (a boolean)``,
    ``{path}.name: expected a boolean, got the number 1``.
    """
    value = obj.get(name)
    if value is None:
        if default is not _REQUIRED:
            return default
        if name not in obj:
            raise error(path, f"missing field {name!r} ({_expected(types)})")
    if isinstance(value, types) and not (isinstance(value, bool) and bool not in _as_tuple(types)):
        return value
    raise error(f"{path}.{name}", f"expected {_expected(types)}, got {kind(value)}")


def _as_tuple(types: type | tuple[type, ...]) -> tuple[type, ...]:
    return types if isinstance(types, tuple) else (types,)


def _expected(types: type | tuple[type, ...]) -> str:
    found = _as_tuple(types)
    if float in found:
        return "a number"
    return " or ".join(_NAMES.get(t, t.__name__) for t in found)


_PATTERN: Final = 'an object {"String": ...} or {"Regex": ...}'


def pattern(obj: JsonObject, path: str, name: str = "pattern") -> tuple[str, bool]:
    """``(text, is_regex)`` of a ``{"String": text}`` or ``{"Regex": text}`` field (one
    key, as serde's externally tagged enum).

    >>> pattern({"pattern": {"Regex": "\\\\s+"}}, "pre_tokenizer")
    ('\\\\s+', True)
    """
    value = obj.get(name)
    if isinstance(value, dict) and len(value) == 1:
        ((key, text),) = value.items()
        if key in ("String", "Regex") and isinstance(text, str):
            return text, key == "Regex"
    if value is None and name not in obj:
        raise error(path, f"missing field {name!r} ({_PATTERN})")
    raise error(f"{path}.{name}", f"expected {_PATTERN}, got {kind(value)}")


def fieldless(cls: Callable[[], _T], dispatcher: str) -> _T:
    """``cls()``: the default ``from_json`` of a stage's base class, for the types with no
    fields. A class with no ``type_name`` (an internal stage) has no JSON form of its own:
    ``NotImplementedError`` names the ``dispatcher`` that reads what its ``to_json`` writes."""
    if getattr(cls, "type_name", None) is None:
        name = getattr(cls, "__name__", repr(cls))
        raise NotImplementedError(
            f"{name} has no tokenizer.json type of its own: read what its to_json writes with {dispatcher}"
        )
    return cls()


class MetaspaceFields(NamedTuple):
    """The fields of a ``"Metaspace"`` object, which the pre-tokenizer and the decoder of
    that name share (as in ``tokenizers``), with its defaults."""

    replacement: str = "\u2581"
    prepend_scheme: str = "always"
    split: bool = True

    def to_json(self) -> dict[str, object]:
        """The object, ``"type"`` first."""
        return {"type": "Metaspace", **self._asdict()}

    @classmethod
    def from_json(cls, obj: JsonObject, path: str) -> MetaspaceFields:
        """Read the three fields of ``obj`` (each optional). ``replacement`` is one
        character, as ``tokenizers``' (a Rust ``char``): an empty one would match
        between every two characters; ``prepend_scheme`` one of tokenizers' three.

        >>> MetaspaceFields.from_json({"split": False}, "decoder")
        MetaspaceFields(replacement='▁', prepend_scheme='always', split=False)
        >>> MetaspaceFields.from_json({"replacement": ""}, "decoder")
        Traceback (most recent call last):
        ...
        tokstream.errors.TokenizerFileError: decoder.replacement: expected one character, got the string ''
        """
        d = cls()
        replacement = field(obj, "replacement", str, path, d.replacement)
        if len(replacement) != 1:
            raise error(f"{path}.replacement", f"expected one character, got {kind(replacement)}")
        scheme = field(obj, "prepend_scheme", str, path, d.prepend_scheme)
        if scheme not in ("always", "first", "never"):
            raise error(f"{path}.prepend_scheme", f"expected 'always', 'first' or 'never', got {kind(scheme)}")
        return cls(replacement, scheme, field(obj, "split", bool, path, d.split))


def token_pair(obj: JsonObject, name: str, path: str) -> tuple[str, int]:
    """``(token, id)`` of a ``[token, id]`` field (``BertProcessing``'s ``sep``).

    >>> token_pair({"sep": ["[SEP]", 102]}, "sep", "post_processor")
    ('[SEP]', 102)
    """
    value = field(obj, name, list, path)
    if len(value) == 2 and isinstance(value[0], str) and type(value[1]) is int and value[1] >= 0:
        return value[0], value[1]
    raise error(f"{path}.{name}", f"expected a [token, id] pair, got {value!r:.80}")


def token_ids(obj: JsonObject, name: str, path: str) -> dict[str, int]:
    """A ``{token: id}`` field (a vocabulary), every id an integer in ``[0, 2**32)``,
    and dense enough for per-id tables (``check_dense_ids``).

    The check runs in C (``set(map(type, ...))``, ``min``, ``max``: ~5 ms for 128k
    tokens); only a bad vocabulary walks the entries to name the first bad one:
    ``model.vocab["x"]: expected an integer id in [0, 2**32), got -1``.
    """
    vocab: dict[str, Any] = field(obj, name, dict, path)
    ids = vocab.values()
    if not vocab or (set(map(type, ids)) == {int} and min(ids) >= 0 and max(ids) < MAX_ID):
        if not vocab or check_dense_ids(len(vocab), max(ids)):
            return vocab
    for token, token_id in vocab.items():
        if type(token_id) is not int or not 0 <= token_id < MAX_ID:
            raise error(
                f"{path}.{name}[{json.dumps(token)}]",
                f"expected an integer id in [0, 2**32), got {token_id!r:.80}",
            )
    top = max(vocab, key=vocab.__getitem__)
    raise error(f"{path}.{name}[{json.dumps(top)}]", sparse_ids_message(len(vocab), vocab[top]))


def members(obj: JsonObject, name: str, path: str, build: Build[_T] | None) -> list[_T]:
    """The components of a ``Sequence``'s list field ``name``, each built by ``build``
    (its stage's dispatcher) with its own path, ``{path}.{name}[i]``; a null member
    is refused (``tokenizers`` refuses it; a stage of None would fail at use)."""
    if build is None:
        raise TypeError(
            "a Sequence builds its members with build=(obj, path) -> component; "
            "read it with its stage's dispatcher (e.g. normalizer_from_json)"
        )
    items = field(obj, name, list, path)
    out = []
    for i, item in enumerate(items):
        if item is None:
            raise error(f"{path}.{name}[{i}]", "expected a component object, got null")
        out.append(build(item, f"{path}.{name}[{i}]"))
    return out


def from_table(table: Mapping[str, FromJson[_C]], obj: object, path: str, what: str, *, depth: int = 0) -> _C:
    """The component of JSON object ``obj`` whose class ``table`` maps its ``"type"`` to.

    ``what`` names the stage in messages (``"pre-tokenizer"``). An unknown type raises
    ``NotImplementedError`` naming it and ``path`` (the file readers make it an
    ``UnsupportedComponentError``, a ``TokenizerFileError`` too); a ``ValueError`` (or ``KeyError``,
    ``TypeError``) from a constructor becomes a ``TokenizerFileError`` naming ``path``.
    A ``Sequence`` gets ``build``: this function over the same table, one level deeper
    (``depth``); members nested more than ``MAX_DEPTH`` deep are refused.
    """
    o = expect_object(obj, path, f"a {what} object")
    name = field(o, "type", str, path)
    cls = table.get(name)
    if cls is None:
        raise NotImplementedError(
            f"{path}: {what} type {name!r} is not supported; supported types: {', '.join(sorted(table))}"
        )
    if depth > MAX_DEPTH:
        raise error(
            path,
            f"{what}s nested more than {MAX_DEPTH} deep (tokenizers refuses a file nested "
            f"this deep: serde_json's limit is 128 levels)",
        )

    def build(item: object, item_path: str) -> _C:
        return from_table(table, item, item_path, what, depth=depth + 1)

    try:
        return cls.from_json(o, path, build=build)
    except (TokenizerFileError, NotImplementedError):
        raise
    except (ValueError, KeyError, TypeError) as e:
        raise error(path, str(e)) from e

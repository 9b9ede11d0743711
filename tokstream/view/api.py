"""The JSON API of ``tokstream view``: plain functions from a request body to a response.

Every endpoint is a POST with a JSON object body and answers a JSON object; errors
answer ``{"error": message}`` with a 4xx status (``ApiError``). Offsets are code
points of the request's text (Python string indices, as ``encode_with_offsets``).

A *token record* is ``{"id", "text_start", "text_end", "spelling", "bytes_hex",
"text"}``: the offsets from ``tok.encode_with_offsets``, the vocabulary's spelling
(``tok.id_to_token``: ``Ġ``/``▁``/``<0xXX>`` forms), the token's bytes in hex
(``tok.vocab.token_bytes``) and those bytes decoded with ``errors="replace"`` (a
token that holds part of a character shows U+FFFD).

``"allow_special"`` (optional, default false) chooses what a special token's literal in
the text is: plain text (``disallowed_special=()``; the ids then equal
``tok.encode(text)`` for every text ``tok.encode`` does not refuse) or the special
token (``allowed_special="all"``). It applies to ``/api/encode``, ``/api/append`` and
``/api/heal``.

``/api/encode {"text", "tokenizers": [names] (default: all)}``
    ``{"length": code points, "results": [{"tokenizer", "ids", "tokens": [record],
    "count", "boundary", "stable_len"}]}``, one result per name in the order given.
    ``boundary`` is ``tok.stable_boundary(text)`` and ``stable_len`` the number of ids
    of ``text[:boundary]`` (``tok.encode_stable(text).stable_len``): the ids after it
    may change when text is appended.
``/api/append {"text", "tokenizer", "suffix"}``
    ``{"ids"`` (of text + suffix), ``"first_changed"`` (the first index where they
    differ from ``encode(text)``), ``"stable_len"`` (of ``text``; ``first_changed``
    is never below it), ``"replaced": [record]`` (the ids of ``text`` from
    ``first_changed`` on), ``"tail": [record]`` (the new ids from ``first_changed``
    on, offsets into text + suffix)``}``.
``/api/heal {"text", "tokenizer", "max_backoff" (default 1)}``
    ``tokstream.heal(tok, ids, max_backoff=...)``: ``{"kept"`` (ids kept),
    ``"removed": [record]``, ``"prefix_hex"``, ``"prefix_text"``, ``"allowed"`` (how
    many ids the healing constraint allows at its first step, ``TokenMasker.mask``),
    ``"n_vocab"``, ``"allowed_sample": [{"id", "spelling", "bytes_hex", "text"}]``
    (the first ``SAMPLE`` allowed ids)``}``.
``/api/constraint {"tokenizer", "kind", "spec", "sample"}``
    ``kind`` is ``"prefix"`` (``spec`` is the prefix text), ``"choice"`` (one option a
    line; empty lines are dropped), ``"regex"`` or ``"json_schema"`` (the schema's
    JSON). ``sample`` is encoded and walked through the constraint: ``{"n_vocab",
    "steps": [{"token": record, "allowed": count before it, "accepted", "done",
    "can_end"}], "stopped_at"`` (index of the first refused token, or null),
    ``"message"``, ``"final_allowed"``, ``"can_end"``, ``"truncated"}``. The walk
    stops at the first refused token, or after ``MAX_STEPS`` tokens. A spec the
    library refuses (bad regex, unsupported schema keyword, unspellable prefix) is a
    400 with the library's message.

Not handled: ``add_special_tokens`` (post-processor ids have no text to show) and
sampling; this is an inspector, not a generator.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .. import (
    Constraint,
    Tokenizer,
    TokenMasker,
    TokstreamError,
    choice_constraint,
    heal,
    json_schema_constraint,
    prefix_constraint,
    regex_constraint,
)
from ..specials import SpecialSet

__all__ = ["MAX_STEPS", "ROUTES", "SAMPLE", "ApiError", "Handler", "encode_results", "token_records"]

#: The constraint walk stops after this many tokens (each step is one mask).
MAX_STEPS = 2000
#: How many allowed ids ``/api/heal`` lists.
SAMPLE = 40

Body = dict[str, Any]
Tokenizers = Mapping[str, Tokenizer]
#: An endpoint: (the loaded tokenizers, the parsed body, the --max-chars limit) -> response.
Handler = Callable[[Tokenizers, Body, int], Body]


class ApiError(Exception):
    """A request the API refuses: an HTTP status and a one-line message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


# ---------------------------------------------------------------- request fields


def _field(body: Body, name: str, kind: type, default: Any = None) -> Any:
    """``body[name]`` checked against ``kind``; ``default`` when absent (None: required)."""
    if name not in body:
        if default is None:
            raise ApiError(400, f"missing field {name!r}")
        return default
    value = body[name]
    # bool is an int to Python, not to a JSON caller.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ApiError(400, f"field {name!r} must be {_KIND_NAMES.get(kind, kind.__name__)}")
    return value


_KIND_NAMES = {str: "a string", int: "an integer", bool: "true or false", list: "a list"}


def _text(body: Body, name: str, max_chars: int, *, extra: int = 0) -> str:
    text: str = _field(body, name, str)
    _check_size(len(text) + extra, max_chars)
    return text


def _check_size(n: int, max_chars: int) -> None:
    if n > max_chars:
        raise ApiError(413, f"text of {n} characters is over the limit of {max_chars} (--max-chars)")


def _tokenizer(tokenizers: Tokenizers, name: object) -> Tokenizer:
    if name is None:
        raise ApiError(400, "missing field 'tokenizer'")
    if not isinstance(name, str):
        raise ApiError(400, "field 'tokenizer' must be a string (a loaded tokenizer's name)")
    tok = tokenizers.get(name)
    if tok is None:
        raise ApiError(400, f"unknown tokenizer {name!r}; loaded: {', '.join(tokenizers)}")
    return tok


def _specials(allow_special: bool) -> tuple[SpecialSet, SpecialSet]:
    """``(allowed_special, disallowed_special)``: every special's literal as its token,
    or as plain text."""
    return ("all", "all") if allow_special else (frozenset(), ())


def _special_options(body: Body) -> tuple[SpecialSet, SpecialSet]:
    return _specials(_field(body, "allow_special", bool, False))


# ---------------------------------------------------------------- token records


def _bytes_record(tok: Tokenizer, token_id: int) -> Body:
    data = tok.vocab.token_bytes(token_id)
    return {
        "id": token_id,
        "spelling": tok.id_to_token(token_id),
        "bytes_hex": data.hex(),
        "text": data.decode("utf-8", errors="replace"),
    }


def token_records(tok: Tokenizer, ids: list[int], offsets: list[tuple[int, int]], start: int = 0) -> list[Body]:
    """The token records (module notes) of ``ids[start:]`` with their ``offsets``."""
    records = []
    for token_id, (a, b) in zip(ids[start:], offsets[start:]):
        record = _bytes_record(tok, token_id)
        record["text_start"], record["text_end"] = a, b
        records.append(record)
    return records


def encode_results(tokenizers: Tokenizers, names: list[str], text: str, *, allow_special: bool = False) -> Body:
    """``/api/encode``'s response for ``text`` (also the data of ``--html`` pages)."""
    allowed, disallowed = _specials(allow_special)
    results = []
    for name in names:
        tok = _tokenizer(tokenizers, name)
        ids, offsets = tok.encode_with_offsets(text, allowed_special=allowed, disallowed_special=disallowed)
        stable = tok.encode_stable(text, tail=False, allowed_special=allowed, disallowed_special=disallowed)
        results.append(
            {
                "tokenizer": name,
                "ids": ids,
                "tokens": token_records(tok, ids, offsets),
                "count": len(ids),
                "boundary": stable.boundary,
                "stable_len": stable.stable_len,
            }
        )
    return {"length": len(text), "results": results}


# ---------------------------------------------------------------- endpoints


def _encode(tokenizers: Tokenizers, body: Body, max_chars: int) -> Body:
    text = _text(body, "text", max_chars)
    names: list[object] = _field(body, "tokenizers", list, list(tokenizers))
    if not all(isinstance(n, str) for n in names):
        raise ApiError(400, "field 'tokenizers' must be a list of strings")
    allow: bool = _field(body, "allow_special", bool, False)
    return encode_results(tokenizers, [str(n) for n in names], text, allow_special=allow)


def _append(tokenizers: Tokenizers, body: Body, max_chars: int) -> Body:
    tok = _tokenizer(tokenizers, body.get("tokenizer"))
    suffix: str = _field(body, "suffix", str)
    text = _text(body, "text", max_chars, extra=len(suffix))
    allowed, disallowed = _special_options(body)
    before = tok.encode_stable(text, allowed_special=allowed, disallowed_special=disallowed)
    old = before.ids
    new, offsets = tok.encode_with_offsets(text + suffix, allowed_special=allowed, disallowed_special=disallowed)
    first = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
    old_offsets = (
        tok.encode_with_offsets(text, allowed_special=allowed, disallowed_special=disallowed)[1]
        if first < len(old)
        else []
    )
    return {
        "ids": new,
        "first_changed": first,
        "stable_len": before.stable_len,
        "replaced": token_records(tok, old, old_offsets, first),
        "tail": token_records(tok, new, offsets, first),
    }


def _heal(tokenizers: Tokenizers, body: Body, max_chars: int) -> Body:
    tok = _tokenizer(tokenizers, body.get("tokenizer"))
    text = _text(body, "text", max_chars)
    max_backoff: int = _field(body, "max_backoff", int, 1)
    if max_backoff < 0:
        raise ApiError(400, "field 'max_backoff' must be 0 or more")
    allowed_special, disallowed_special = _special_options(body)
    ids, offsets = tok.encode_with_offsets(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
    healing = heal(tok, ids, max_backoff=max_backoff)
    mask = TokenMasker(tok).mask(healing.constraint())
    allowed = [int(i) for i in mask.nonzero()[0][:SAMPLE]]
    return {
        "kept": len(healing.prompt_ids),
        "removed": token_records(tok, ids, offsets, len(healing.prompt_ids)),
        "prefix_hex": healing.prefix.hex(),
        "prefix_text": healing.prefix.decode("utf-8", errors="replace"),
        "allowed": int(mask.sum()),
        "n_vocab": tok.n_vocab,
        "allowed_sample": [_bytes_record(tok, i) for i in allowed],
    }


_KINDS = ("prefix", "choice", "regex", "json_schema")


def build_constraint(tok: Tokenizer, kind: str, spec: str) -> Constraint[Any]:
    """The constraint ``/api/constraint`` walks; ``ApiError(400)`` for a spec the
    library refuses (its message says why)."""
    try:
        if kind == "prefix":
            return prefix_constraint(tok, spec.encode("utf-8", errors="surrogatepass"))
        if kind == "choice":
            options = [line.rstrip("\r") for line in spec.split("\n")]
            return choice_constraint(tok, [o for o in options if o])
        if kind == "regex":
            return regex_constraint(tok, spec)
        return json_schema_constraint(tok, spec)
    except (TokstreamError, ValueError) as e:
        # UnsupportedGrammarError / UnsupportedSchemaError and the builders' other
        # refusals (an empty choice, an unspellable prefix) are all the caller's spec.
        raise ApiError(400, f"{kind}: {e}") from None


def _constraint(tokenizers: Tokenizers, body: Body, max_chars: int) -> Body:
    tok = _tokenizer(tokenizers, body.get("tokenizer"))
    kind: str = _field(body, "kind", str)
    if kind not in _KINDS:
        raise ApiError(400, f"field 'kind' must be one of {', '.join(_KINDS)}, not {kind!r}")
    spec: str = _field(body, "spec", str)
    sample = _text(body, "sample", max_chars, extra=len(spec))
    constraint = build_constraint(tok, kind, spec)
    masker = TokenMasker(tok)
    ids, offsets = tok.encode_with_offsets(sample, disallowed_special=())
    records = token_records(tok, ids[:MAX_STEPS], offsets[:MAX_STEPS])
    steps: list[Body] = []
    stopped_at = None
    message = ""
    for i, record in enumerate(records):
        allowed = int(masker.mask(constraint).sum())
        accepted = constraint.accept(record["id"])
        steps.append(
            {
                "token": record,
                "allowed": allowed,
                "accepted": accepted,
                "done": constraint.is_done,
                "can_end": constraint.can_end,
            }
        )
        if not accepted:
            stopped_at = i
            message = f"token {i} (id {record['id']}, {record['text']!r}) is not allowed here; the walk stops"
            break
    truncated = stopped_at is None and len(ids) > MAX_STEPS
    if stopped_at is None:
        message = (
            f"the first {MAX_STEPS} of {len(ids)} tokens were allowed; the walk stops there"
            if truncated
            else f"all {len(ids)} tokens were allowed"
            + ("; the output may end here" if constraint.can_end else "; the output is not complete yet")
        )
    return {
        "n_vocab": tok.n_vocab,
        "steps": steps,
        "stopped_at": stopped_at,
        "message": message,
        "final_allowed": int(masker.mask(constraint).sum()) if stopped_at is None else None,
        "can_end": constraint.can_end,
        "truncated": truncated,
    }


#: Path -> endpoint. The server looks endpoints up here at each request.
ROUTES: dict[str, Handler] = {
    "/api/encode": _encode,
    "/api/append": _append,
    "/api/heal": _heal,
    "/api/constraint": _constraint,
}

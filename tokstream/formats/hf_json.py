"""Hugging Face ``tokenizer.json``: load into a ``Pipeline``, and save one.

Only the file level is here: which stage each top-level key holds (``STAGES``, key ->
the stage's dispatcher), the ids ``tokenizers`` gives added tokens on load
(``_AddedIds``), the post-processor's ids checked against the vocabulary (``tokenizers``
emits an id past it as written), and the file's name in front of every error
(``tokenizer.json: model.ignore_merges: ...``). Each component reads and writes its own
object (``from_json``, ``to_json``), and each stage maps its ``"type"`` values to
classes (``normalizers.JSON_TYPES``, ``pre_tokenizers.JSON_TYPES``,
``models.JSON_TYPES``, ``processors.JSON_TYPES``, ``decoders.JSON_TYPES``). An unknown
type raises ``NotImplementedError`` naming it and its JSON path
(``pre_tokenizer.pretokenizers[1]``); a malformed file raises ``TokenizerFileError``
naming the path.

Not here: truncation and padding, which shape batches, not ids (ignored on load,
written as null).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Mapping
from typing import Any, Final, NoReturn

from ..added_vocabulary import AddedToken, empty_literal_message
from ..decoders import decoder_from_json
from ..errors import TokenizerFileError
from ..json_fields import MAX_ID, error, expect_object, field
from ..models import model_from_json
from ..models.base import Model
from ..normalizers import normalizer_from_json
from ..pipeline import Pipeline
from ..pre_tokenizers import pre_tokenizer_from_json
from ..processors import processor_from_json
from . import gc_paused, reading

__all__ = ["STAGES", "pipeline_from_json", "read_hf_json", "write_hf_json"]

#: The optional stages: ``tokenizer.json`` key (a ``Pipeline`` argument) -> the function
#: that builds that stage from its object (null gives None). The required ``"model"`` is
#: read by ``models.model_from_json``, ``"added_tokens"`` by ``AddedToken.from_json``.
STAGES: Final[Mapping[str, Callable[[object, str], Any]]] = {
    "normalizer": normalizer_from_json,
    "pre_tokenizer": pre_tokenizer_from_json,
    "post_processor": processor_from_json,
    "decoder": decoder_from_json,
}


class _AddedIds:
    """Ids of added tokens as ``tokenizers`` assigns them on load.

    ``tokenizers`` ignores the ``id`` written in ``added_tokens``: a token whose
    content is in the model's vocabulary (or already added) takes that id; any other
    takes the next id after the model's vocabulary size and the added ids so far. We
    do the same, so a file whose written ids disagree still gives tokenizers' ids. An
    entry with empty content is skipped and takes no id, as there.
    """

    def __init__(self, model: Model) -> None:
        self.model, self.size = model, model.vocab_size
        self.added: dict[str, int] = {}
        self.top: int | None = None  # largest id given to a token not in the vocabulary

    def assign(self, content: str) -> int:
        tid = self.added.get(content)
        if tid is None:
            tid = self.model.token_to_id(content)
        if tid is None:
            # As tokenizers: only new ids count, so one may repeat a vocabulary id
            # above the vocabulary size (checked against tokenizers in test_hf_json).
            top = self.top
            tid = self.size if top is None or (top < self.size and self.size) else top + 1
            self.top = tid
        self.added[content] = tid
        return tid


def _pipeline(data: object) -> Pipeline:
    root = expect_object(data, "$", "a tokenizer.json object")
    model = model_from_json(field(root, "model", dict, "$"), "model")
    ids = _AddedIds(model)
    added = []
    where = []
    for i, item in enumerate(field(root, "added_tokens", list, "$", [])):
        token = AddedToken.from_json(item, f"added_tokens[{i}]")
        if not 0 <= token.id < MAX_ID:
            # tokenizers ignores the written id but reads it as a u32.
            why = "ids must be non-negative" if token.id < 0 else "ids must be below 2**32"
            raise error(f"added_tokens[{i}].id", f"{why} (tokenizers reads them as u32), got {token.id}")
        if not token.content:
            continue  # as tokenizers: an empty literal is no token, and takes no id
        added.append(dataclasses.replace(token, id=ids.assign(token.content)))
        where.append(i)
    stages = {key: build(root.get(key), key) for key, build in STAGES.items()}
    normalizer = stages["normalizer"]
    if normalizer is not None:
        for i, token in zip(where, added):
            if token.normalized and not normalizer.normalize(token.content):
                raise TokenizerFileError(f"added_tokens[{i}]: {empty_literal_message(token)}")
    pipeline = Pipeline(model=model, added=added, **stages)
    # tokenizers emits a template's ids as written; one outside the vocabulary would
    # come out of encode and fail decode, masks and the model's embedding.
    n_vocab = pipeline.n_vocab
    for token_id in (*pipeline.added_ids[0], *pipeline.added_ids[1]):
        if not 0 <= token_id < n_vocab:
            raise error("post_processor", f"special token id {token_id} is not in the vocabulary (n_vocab={n_vocab})")
    return pipeline


def pipeline_from_json(text: str | bytes, *, source: str = "tokenizer.json") -> Pipeline:
    """The ``Pipeline`` of a ``tokenizer.json``'s text (``source`` names it in errors).

    As ``tokenizers`` (serde_json), the text must be UTF-8 JSON: bytes that are not
    UTF-8, a byte-order mark, ``NaN`` / ``Infinity`` and escapes of lone surrogates
    (``"\\ud800"``) are refused, though Python's ``json`` would read them.
    """
    with reading(source):
        if isinstance(text, (bytes, bytearray, memoryview)):
            text = _utf8(bytes(text))
        try:
            with gc_paused():
                data = json.loads(text, parse_constant=_no_constant)
        except json.JSONDecodeError as e:
            raise TokenizerFileError(
                f"not valid JSON at line {e.lineno}, column {e.colno} ({e.msg}); is the file truncated?"
            ) from e
        except RecursionError:
            raise TokenizerFileError("not a tokenizer.json: JSON nested too deeply to read") from None
        _check_surrogates(text)
        with gc_paused():
            return _pipeline(data)


def _utf8(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        hint = ""
        if data[:1] == b"\n":  # a .model's first field: a length-delimited piece
            hint = "; a SentencePiece .model? (Tokenizer.from_sentencepiece reads those)"
        raise TokenizerFileError(
            f"byte {e.start}: not UTF-8 ({e.reason}: {data[e.start : e.start + 4]!r}); a tokenizer.json is UTF-8 JSON{hint}"
        ) from None


def _no_constant(name: str) -> NoReturn:
    raise TokenizerFileError(f"the file holds {name}, which is not JSON (tokenizers refuses it)")


def _check_surrogates(text: str) -> None:
    """Refuse the escape of a lone surrogate (``"\\ud800"`` not followed by a low
    one): Python's ``json`` reads it, tokenizers refuses it, and no UTF-8 holds it.
    Pairs (``"\\ud83d\\ude00"``, an escaped emoji) are fine. Runs after ``json.loads``
    accepted the text, so every backslash in a string starts a well-formed escape.
    Cost: two ``str.find`` over the text, plus a few steps per surrogate escape."""
    for needle in ("\\ud", "\\uD"):
        i = text.find(needle)
        while i >= 0:
            half = _surrogate_escape(text, i)
            if half == "high" and _surrogate_escape(text, i + 6) != "low":
                _lone_surrogate(text, i)
            if half == "low" and (i < 6 or _surrogate_escape(text, i - 6) != "high"):
                _lone_surrogate(text, i)
            i = text.find(needle, i + 1)


def _surrogate_escape(text: str, i: int) -> str | None:
    """``"high"`` or ``"low"`` when ``text[i:i + 6]`` escapes a surrogate (its backslash
    not itself escaped), else None."""
    if text[i : i + 3] not in ("\\ud", "\\uD") or len(text) < i + 6:
        return None
    k = i
    while k > 0 and text[k - 1] == "\\":
        k -= 1
    if (i - k) % 2:
        return None  # an escaped backslash, then the text "ud..."
    digit = text[i + 3]
    if digit in "89abAB":
        return "high"
    return "low" if digit in "cdefCDEF" else None


def _lone_surrogate(text: str, pos: int) -> NoReturn:
    line = text.count("\n", 0, pos) + 1
    column = pos - text.rfind("\n", 0, pos)
    raise TokenizerFileError(
        f"line {line}, column {column}: {text[pos : pos + 6]} escapes a lone surrogate, which "
        f"is not text (tokenizers refuses it)"
    )


def read_hf_json(path: str | os.PathLike[str]) -> tuple[Pipeline, str]:
    """Read a ``tokenizer.json`` from disk: its pipeline and a name (the file's stem)."""
    source = os.fspath(path)
    try:
        with open(source, "rb") as f:
            text = f.read()
    except OSError as e:
        raise TokenizerFileError(f"cannot read {source!r}: {e.strerror}") from e
    name = os.path.basename(source)
    return pipeline_from_json(text, source=source), name.removesuffix(".json")


def write_hf_json(pipeline: Pipeline, path: str | os.PathLike[str]) -> None:
    """Write ``pipeline`` as a ``tokenizer.json``."""
    obj = pipeline.to_json()
    with open(os.fspath(path), "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False)

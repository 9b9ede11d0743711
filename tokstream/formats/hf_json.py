"""Hugging Face ``tokenizer.json``: load into a ``Pipeline``, and save one.

Only the file level is here: which stage each top-level key holds (``STAGES``, key ->
the stage's dispatcher), the ids ``tokenizers`` gives added tokens on load
(``_AddedIds``), and the file's name in front of every error
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
from typing import Any, Final

from ..added_vocabulary import AddedToken, empty_literal_message
from ..decoders import decoder_from_json
from ..errors import TokenizerFileError
from ..json_fields import expect_object, field
from ..models import model_from_json
from ..models.base import Model
from ..normalizers import normalizer_from_json
from ..pipeline import Pipeline
from ..pre_tokenizers import pre_tokenizer_from_json
from ..processors import processor_from_json
from . import gc_paused

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
    return Pipeline(model=model, added=added, **stages)


def pipeline_from_json(text: str | bytes, *, source: str = "tokenizer.json") -> Pipeline:
    """The ``Pipeline`` of a ``tokenizer.json``'s text (``source`` names it in errors)."""
    try:
        with gc_paused():
            data = json.loads(text)
            return _pipeline(data)
    except json.JSONDecodeError as e:
        raise TokenizerFileError(
            f"{source}: not valid JSON at line {e.lineno}, column {e.colno} ({e.msg}); is the file truncated?"
        ) from e
    except NotImplementedError as e:
        raise NotImplementedError(f"{source}: {e}") from None
    except TokenizerFileError as e:
        raise TokenizerFileError(f"{source}: {e}") from e


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

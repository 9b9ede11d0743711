"""Hugging Face ``tokenizer.json``: load into a ``Tokenizer``, and save one.

Each component is looked up by its JSON ``"type"`` in a table, so the set of supported
components is the tables below. An unknown type raises ``NotImplementedError`` naming
it and its JSON path (``pre_tokenizer.pretokenizers[1]``); a malformed file raises
``TokenizerFileError`` naming the path. Truncation and padding are ignored: they shape
batches, not ids.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import decoders as dec
from .. import pre_tokenizers as pre
from .. import processors as proc
from ..added_vocabulary import AddedToken
from ..errors import TokenizerFileError
from ..models.base import Model
from ..models.bpe import BPE
from ..pipeline import Pipeline

__all__ = ["pipeline_from_json", "read_hf_json", "write_hf_json"]

Obj = dict[str, Any]


class _Reader:
    """Typed field access that names the JSON path on error."""

    def __init__(self, obj: Any, path: str, source: str) -> None:
        if not isinstance(obj, dict):
            raise TokenizerFileError(f"{source}: {path} must be an object, got {type(obj).__name__}")
        self.obj, self.path, self.source = obj, path, source

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
        if key not in self.obj or (self.obj[key] is None and default is not ...):
            if default is ...:
                raise TokenizerFileError(f"{self.source}: {self.path}.{key} is missing")
            return default
        value = self.obj[key]
        if not isinstance(value, kind) or (isinstance(value, bool) and kind in (int, float)):
            raise TokenizerFileError(
                f"{self.source}: {self.path}.{key} has the wrong type ({type(value).__name__})"
            )
        return value

    def child(self, key: str) -> _Reader:
        return _Reader(self.obj.get(key), f"{self.path}.{key}", self.source)


def _pattern(r: _Reader, key: str = "pattern") -> tuple[str, bool]:
    pat = r.child(key)
    if "Regex" in pat.obj:
        return pat.get("Regex", str), True
    if "String" in pat.obj:
        return pat.get("String", str), False
    raise TokenizerFileError(f"{r.source}: {r.path}.{key} needs a String or a Regex")


def _build(table: dict[str, Callable[[_Reader], Any]], obj: Any, path: str, source: str) -> Any:
    if obj is None:
        return None
    r = _Reader(obj, path, source)
    kind = r.get("type", str)
    factory = table.get(kind)
    if factory is None:
        raise NotImplementedError(
            f"{source}: {path} has type {kind!r}, which tokstream does not support "
            f"(supported: {', '.join(sorted(table))})"
        )
    try:
        return factory(r)
    except (TokenizerFileError, NotImplementedError):
        raise
    except (ValueError, KeyError, TypeError) as e:
        raise TokenizerFileError(f"{source}: {path}: {e}") from e


def _pre_sequence(r: _Reader) -> pre.Sequence:
    items = r.get("pretokenizers", list)
    return pre.Sequence([_build(PRE_TOKENIZERS, o, f"{r.path}.pretokenizers[{i}]", r.source) for i, o in enumerate(items)])


PRE_TOKENIZERS: dict[str, Callable[[_Reader], Any]] = {
    "ByteLevel": lambda r: pre.ByteLevel(
        add_prefix_space=r.get("add_prefix_space", bool, True),
        use_regex=r.get("use_regex", bool, True),
        trim_offsets=r.get("trim_offsets", bool, True),
    ),
    "Split": lambda r: pre.Split(
        _pattern(r)[0], r.get("behavior", str), invert=r.get("invert", bool, False), is_regex=_pattern(r)[1]
    ),
    "Metaspace": lambda r: pre.Metaspace(
        replacement=r.get("replacement", str, "\u2581"),
        prepend_scheme=r.get("prepend_scheme", str, "always"),
        split=r.get("split", bool, True),
    ),
    "Whitespace": lambda r: pre.Whitespace(),
    "WhitespaceSplit": lambda r: pre.WhitespaceSplit(),
    "BertPreTokenizer": lambda r: pre.BertPreTokenizer(),
    "Digits": lambda r: pre.Digits(individual_digits=r.get("individual_digits", bool, False)),
    "Punctuation": lambda r: pre.Punctuation(r.get("behavior", str, "Isolated")),
    "Sequence": _pre_sequence,
}


def _dec_sequence(r: _Reader) -> dec.Sequence:
    items = r.get("decoders", list)
    return dec.Sequence([_build(DECODERS, o, f"{r.path}.decoders[{i}]", r.source) for i, o in enumerate(items)])


def _options(r: _Reader) -> dict[str, Any]:
    return {k: v for k, v in r.obj.items() if k != "type"}


DECODERS: dict[str, Callable[[_Reader], Any]] = {
    "ByteLevel": lambda r: dec.ByteLevel(**_options(r)),
    "Metaspace": lambda r: dec.Metaspace(
        replacement=r.get("replacement", str, "\u2581"),
        prepend_scheme=r.get("prepend_scheme", str, "always"),
        split=r.get("split", bool, True),
    ),
    "ByteFallback": lambda r: dec.ByteFallback(),
    "Fuse": lambda r: dec.Fuse(),
    "Strip": lambda r: dec.Strip(content=r.get("content", str), start=r.get("start", int), stop=r.get("stop", int)),
    "Replace": lambda r: dec.Replace(_pattern(r)[0], r.get("content", str), is_regex=_pattern(r)[1]),
    "WordPiece": lambda r: dec.WordPiece(prefix=r.get("prefix", str, "##"), cleanup=r.get("cleanup", bool, True)),
    "BPEDecoder": lambda r: dec.BPEDecoder(suffix=r.get("suffix", str, "</w>")),
    "Sequence": _dec_sequence,
}


def _proc_sequence(r: _Reader) -> proc.Sequence:
    items = r.get("processors", list)
    return proc.Sequence([_build(PROCESSORS, o, f"{r.path}.processors[{i}]", r.source) for i, o in enumerate(items)])


def _pair(r: _Reader, key: str) -> tuple[str, int]:
    value = r.get(key, list)
    if len(value) != 2 or not isinstance(value[0], str) or not isinstance(value[1], int):
        raise TokenizerFileError(f"{r.source}: {r.path}.{key} must be [token, id]")
    return value[0], value[1]


PROCESSORS: dict[str, Callable[[_Reader], Any]] = {
    "TemplateProcessing": lambda r: proc.TemplateProcessing(
        r.get("single", list), r.get("pair", list, []), r.get("special_tokens", dict, {})
    ),
    "BertProcessing": lambda r: proc.BertProcessing(_pair(r, "sep"), _pair(r, "cls")),
    "RobertaProcessing": lambda r: proc.RobertaProcessing(
        _pair(r, "sep"),
        _pair(r, "cls"),
        trim_offsets=r.get("trim_offsets", bool, True),
        add_prefix_space=r.get("add_prefix_space", bool, True),
    ),
    "ByteLevel": lambda r: proc.ByteLevel(**_options(r)),
    "Sequence": _proc_sequence,
}


def _merges(r: _Reader) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for i, m in enumerate(r.get("merges", list, [])):
        if isinstance(m, str):
            parts = m.split(" ")
            if len(parts) != 2:
                raise TokenizerFileError(f"{r.source}: {r.path}.merges[{i}] is not 'a b': {m!r}")
            out.append((parts[0], parts[1]))
        elif isinstance(m, list) and len(m) == 2 and all(isinstance(x, str) for x in m):
            out.append((m[0], m[1]))
        else:
            raise TokenizerFileError(f"{r.source}: {r.path}.merges[{i}] must be 'a b' or [a, b]")
    return out


def _vocab_dict(r: _Reader) -> dict[str, int]:
    vocab = r.get("vocab", dict)
    seen: dict[int, str] = {}
    for token, tid in vocab.items():
        if not isinstance(tid, int) or isinstance(tid, bool) or tid < 0:
            raise TokenizerFileError(f"{r.source}: {r.path}.vocab[{token!r}] is not a valid id: {tid!r}")
        if tid in seen:
            raise TokenizerFileError(
                f"{r.source}: {r.path}.vocab: id {tid} is used by both {seen[tid]!r} and {token!r}"
            )
        seen[tid] = token
    return dict(vocab)


def _bpe(r: _Reader) -> BPE:
    return BPE(
        _vocab_dict(r),
        _merges(r),
        unk_token=r.get("unk_token", str, None),
        byte_fallback=r.get("byte_fallback", bool, False),
        fuse_unk=r.get("fuse_unk", bool, False),
        ignore_merges=r.get("ignore_merges", bool, False),
        continuing_subword_prefix=r.get("continuing_subword_prefix", str, None),
        end_of_word_suffix=r.get("end_of_word_suffix", str, None),
        dropout=r.get("dropout", (int, float), None),
        where=f"{r.source}: {r.path}",
    )


def _wordpiece(r: _Reader) -> Any:
    from ..models.wordpiece import WordPiece

    return WordPiece.from_json(r.obj, r.path)


def _unigram(r: _Reader) -> Any:
    from ..models.unigram import Unigram

    return Unigram.from_json(r.obj, r.path)


MODELS: dict[str, Callable[[_Reader], Any]] = {"BPE": _bpe, "WordPiece": _wordpiece, "Unigram": _unigram}


def _normalizer(obj: Any, source: str) -> Any:
    if obj is None:
        return None
    from ..normalizers import normalizer_from_json

    try:
        return normalizer_from_json(obj, "normalizer")
    except NotImplementedError as e:
        raise NotImplementedError(f"{source}: {e}") from None
    except ValueError as e:
        raise TokenizerFileError(f"{source}: {e}") from e


class _AddedIds:
    """Ids of added tokens as ``tokenizers`` assigns them on load.

    ``tokenizers`` ignores the ``id`` written in ``added_tokens``: a token whose
    content is in the model's vocabulary (or already added) takes that id; any other
    takes the next id after the model's vocabulary size and the added ids so far. We
    do the same, so a file whose written ids disagree still gives tokenizers' ids.
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


def pipeline_from_json(text: str | bytes, *, source: str = "tokenizer.json") -> Pipeline:
    """The ``Pipeline`` of a ``tokenizer.json``'s text (``source`` names it in errors)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise TokenizerFileError(
            f"{source}: not valid JSON at line {e.lineno}, column {e.colno} ({e.msg}); "
            f"is the file truncated?"
        ) from e
    root = _Reader(data, "$", source)
    model = _build(MODELS, root.get("model", dict), "model", source)
    ids = _AddedIds(model)
    added = []
    for i, a in enumerate(root.get("added_tokens", list, [])):
        ar = _Reader(a, f"added_tokens[{i}]", source)
        ar.get("id", int)  # must be present and an int, though tokenizers ignores it
        content = ar.get("content", str)
        added.append(
            AddedToken(
                id=ids.assign(content),
                content=content,
                special=ar.get("special", bool, False),
                single_word=ar.get("single_word", bool, False),
                lstrip=ar.get("lstrip", bool, False),
                rstrip=ar.get("rstrip", bool, False),
                normalized=ar.get("normalized", bool, False),
            )
        )
    return Pipeline(
        model=model,
        added=added,
        normalizer=_normalizer(data.get("normalizer"), source),
        pre_tokenizer=_build(PRE_TOKENIZERS, data.get("pre_tokenizer"), "pre_tokenizer", source),
        post_processor=_build(PROCESSORS, data.get("post_processor"), "post_processor", source),
        decoder=_build(DECODERS, data.get("decoder"), "decoder", source),
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

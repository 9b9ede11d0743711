"""Hostile files: every fixture tokenizer file, mutated, loads as its reference loads it
or is refused with a ``TokstreamError`` that names the file.

Seeded mutations of each fixture ``tokenizer.json`` (``hf/``), SentencePiece ``.model``
(``spm/``) and rank file (``tiktoken/``): truncation, bit flips, wrong types, huge
numbers, deleted keys, deep nesting, non-UTF-8 bytes, empty strings, and a list of
targeted edits (the classes issue 14 named). Large files are shrunk first (a
tokenizer.json to its first ids and the merges among them, a .model to its first
pieces, a rank file to its first lines), and a few byte-level mutations hit the whole
file.

Each mutant is loaded and encoded by tokstream and by its reference (``tokenizers``,
``sentencepiece``, ``tiktoken``) in worker processes with a time limit per mutant and
a memory limit (``RLIMIT_AS``), so a hang or a blow-up fails the test instead of CI.
The outcomes:

- ``same``: both load, same ids on every sample text (encode errors on both sides
  count as the same);
- ``both refuse``: the reference refuses (or crashes, or hangs), we raise a
  ``TokstreamError`` naming the file;
- ``we refuse (documented)``: the reference loads, we refuse for one of
  ``DOCUMENTED_REFUSALS`` (the message says which);
- ``we load, reference refuses``: we read a file the reference is stricter about
  (allowed: the ids we give are what the file says; the reference gives none);

and the failures: an exception that is not a ``TokstreamError``, a message without the
file's name, a hang or a crash (ours), other ids than the reference, or a refusal
outside the documented classes. ``pytest -s`` prints the counts.

Costs about 40 s of CPU (``MUTANTS`` random mutants per file, ``TOKSTREAM_FUZZ_MUTANTS``
to change it), spread over three worker processes: under a minute on two cores.
``TOKSTREAM_FUZZ_VERBOSE=1`` prints every mutant that is not ``same``.
"""

from __future__ import annotations

import base64
import copy
import json
import os
import random
import re
import selectors
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from helpers import ENCODING_NAMES, FIXTURES, fixture_file, fixture_names, has_fixture, missing_fixture
from protowire import fields

SEED = 14
#: Random mutants per shrunk fixture (the targeted ones come on top).
MUTANTS = int(os.environ.get("TOKSTREAM_FUZZ_MUTANTS", "30"))
#: Seconds a worker may spend on one mutant (load + encode of every text).
PER_MUTANT_SECONDS = 20.0
#: The workers' address-space limit.
MEMORY_LIMIT = 3 << 30

TEXTS = [
    "Hello, world! It's 2024; y'all   ok?",
    " leading, trailing and  double  spaces \n\ttab\r\n",
    "日本語のテキスト、カタカナとひらがな。",
    "emoji 👍🏽 é (e\u0301) ﬁ İ ß ŉ",
    "<s> [CLS] [SEP] <|endoftext|> <unk> </s> <pad>",
    "",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "unaffable 12345 3.14 #hashtag @user",
]

#: Refusals where the reference loads the file: (name, pattern our message matches).
#: Each is a deliberate choice, documented where it is made.
DOCUMENTED_REFUSALS: list[tuple[str, str]] = [
    # Our per-id tables (token bytes, masks) are n_vocab wide: ids far beyond the
    # number of tokens are refused (json_fields.check_dense_ids).
    ("sparse ids", r"unused ids"),
    # BPE dropout is a training-time option, never applied by encode.
    ("BPE dropout", r"dropout: .* training-time option"),
    # A rank file is checked line by line: tiktoken reads a damaged one silently.
    ("rank file: duplicate token or rank", r"already has rank|duplicate rank"),
    ("rank file: non-canonical base64", r"bad base64"),
    ("rank file: no final newline", r"no newline at the end"),
    ("rank file: negative rank", r"negative rank"),
    # A tokenizer.json vocabulary where two tokens share an id (tokenizers keeps both,
    # and decodes the id as one of them).
    ("shared vocabulary id", r"is used by both"),
    # A post-processor id outside the vocabulary: tokenizers emits it as written, and
    # it would fail decode, masks and the model's embedding.
    ("post-processor id outside the vocabulary", r"special token id \d+ is not in the vocabulary"),
    # A Replace pattern matching the empty string would insert between every two
    # characters; tokenizers doubles the first insertion under ByteLevel, or panics.
    ("Replace matching empty text", r"matches the empty string"),
    # A component written as an array: serde reads a struct from the list of its
    # fields, so tokenizers takes [[...]] as a Sequence of a Sequence; we want objects.
    ("component as an array", r"expected an? [a-z -]+ object, got an array"),
    # A component with no "type", or one we do not implement: tokenizers falls back to
    # guessing the type from the fields (its untagged legacy form); we name the type.
    ("component type", r"missing field 'type'|type .* is not supported|\.type: expected a string"),
    # SentencePiece .model files: protobuf oddities sentencepiece never writes, read
    # by protobuf (formats/sentencepiece.py lists them).
    (
        "sentencepiece: a string that is not UTF-8",
        r"invalid UTF-8|normalized strings are not UTF-8|is not at a character",
    ),
    ("sentencepiece: a bool other than 0 or 1", r"bool value \d+, expected 0 or 1"),
    ("sentencepiece: a known field in another wire type", r"has wire type \d+ \(.*\), expected"),
]


# ------------------------------------------------------------------ the fixtures


def _hf_names() -> list[str]:
    return fixture_names("hf", "*.json")


def _spm_names() -> list[str]:
    return fixture_names("spm", "*.model")


def _tiktoken_names() -> list[str]:
    return [f"{name}.tiktoken" for name in ENCODING_NAMES if has_fixture(f"tiktoken/{name}.tiktoken")]


def shrink_hf(data: dict[str, Any], keep: int) -> dict[str, Any]:
    """The file with its model cut to ids below ``keep`` (BPE: the merges among them),
    the added tokens renumbered as ``tokenizers`` would number them and the
    post-processor's ids with them, so the shrunk file is a valid, small tokenizer."""
    big = data["model"]
    cut = big["type"] in ("BPE", "WordPiece", "WordLevel")
    # Copied but for the vocabulary and merges, which are cut (a deep copy of Llama 3's
    # took a second).
    data = copy.deepcopy({key: value for key, value in data.items() if key != "model"})
    model = data["model"] = copy.deepcopy({k: v for k, v in big.items() if not (cut and k in ("vocab", "merges"))})
    data["padding"] = data["truncation"] = None
    if cut:
        vocab = {t: i for t, i in big["vocab"].items() if i < keep}
        model["vocab"] = vocab
        if model["type"] == "BPE":
            merges = []
            for merge in big.get("merges", []):
                a, b = merge.split(" ") if isinstance(merge, str) else merge
                if a in vocab and b in vocab and a + b in vocab:
                    merges.append(merge)
            model["merges"] = merges
        size = len(vocab)
        renumber: dict[int, int] = {}
        next_id = size
        for token in data.get("added_tokens", []):
            if token["content"] in vocab:
                new = vocab[token["content"]]
            else:
                new, next_id = next_id, next_id + 1
            renumber[token["id"]] = new
            token["id"] = new
        _renumber_ids(data.get("post_processor"), renumber)
    return data


def shrink_spm(data: bytes, keep: int) -> bytes:
    """The .model with only its first ``keep`` pieces (the specs unchanged)."""
    out, n = [], 0
    for number, start, end, _ in fields(data):
        n += number == 1
        if number != 1 or n <= keep:
            out.append(data[start:end])
    return b"".join(out)


def _renumber_ids(obj: Any, renumber: dict[int, int]) -> None:
    """Rewrite the special-token ids a post-processor holds (``ids`` lists, ``[token,
    id]`` pairs)."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key == "ids" and isinstance(value, list):
                obj[key] = [renumber.get(i, i) for i in value]
            elif key in ("sep", "cls") and isinstance(value, list) and len(value) == 2:
                value[1] = renumber.get(value[1], value[1])
            else:
                _renumber_ids(value, renumber)
    elif isinstance(obj, list):
        for value in obj:
            _renumber_ids(value, renumber)


# ------------------------------------------------------------------ mutations

_WRONG_VALUES: list[Any] = [
    None,
    True,
    0,
    -1,
    1.5,
    "",
    "x",
    [],
    {},
    [None],
    {"type": None},
    100_000_000,
    4_000_000_000,
    2**63,
    2**64 + 1,
    -(2**63) - 1,
    1e300,
]
_HUGE = [100_000_000, 4_000_000_000, 2**31, 2**32, 2**63, 2**64, -1, -(2**31)]


def _pick(rng: random.Random, root: Any, want: Callable[[Any], bool] | None = None) -> tuple[Any, Any] | None:
    """A random (container, key) in ``root`` whose value satisfies ``want``: a walk that
    stops at each node with some probability, so the stages' small objects are hit
    as often as a vocabulary's entries."""
    for _ in range(50):
        node, slot = root, None
        parent: Any = None
        while True:
            children: list[Any]
            if isinstance(node, dict):
                children = list(node)
            elif isinstance(node, list):
                children = list(range(len(node)))
            else:
                children = []
            if parent is not None and (not children or rng.random() < 0.3):
                break
            if not children:
                break
            key = rng.choice(children)
            parent, slot, node = node, key, node[key]
        if parent is not None and (want is None or want(node)):
            return parent, slot
    return None


#: A placeholder that ``_fill`` replaces with text json.dumps cannot write (too deep).
_HOLE = "\u0000hole\u0000"


def _fill(data: Any, text: str) -> bytes:
    return json.dumps(data).replace(json.dumps(_HOLE), text).encode()


def _json_mutation(rng: random.Random, data: dict[str, Any]) -> tuple[str, bytes]:
    """One random mutation of a parsed tokenizer.json: (label, file bytes)."""
    d = copy.deepcopy(data)
    op = rng.choice(["delete", "type", "type", "empty", "huge", "nest", "truncate", "flip", "utf8", "dup"])
    if op in ("truncate", "flip", "utf8"):
        raw = bytearray(json.dumps(d, ensure_ascii=rng.random() < 0.5).encode())
        if op == "truncate":
            cut = rng.randrange(len(raw))
            return f"truncate at {cut}", bytes(raw[:cut])
        if op == "flip":
            where = []
            for _ in range(rng.randint(1, 3)):
                i = rng.randrange(len(raw))
                raw[i] ^= 1 << rng.randrange(8)
                where.append(i)
            return f"bit flips at {where}", bytes(raw)
        i = rng.randrange(len(raw))
        junk = rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80", b"\xf4\x90\x80\x80"])
        return f"non-UTF-8 {junk!r} at {i}", bytes(raw[:i] + junk + raw[i:])
    label = op
    if op == "delete":
        found = _pick(rng, d)
        if found:
            parent, key = found
            label = f"delete {key!r}"
            del parent[key]
    elif op == "type":
        found = _pick(rng, d)
        if found:
            parent, key = found
            value = copy.deepcopy(rng.choice(_WRONG_VALUES))
            label = f"{key!r} := {value!r}"
            parent[key] = value
    elif op == "empty":
        found = _pick(rng, d, lambda v: isinstance(v, str))
        if found:
            parent, key = found
            label = f"{key!r}: {parent[key]!r} := ''"
            parent[key] = ""
    elif op == "huge":
        found = _pick(rng, d, lambda v: type(v) is int)
        if found:
            parent, key = found
            value = rng.choice(_HUGE)
            label = f"{key!r}: {parent[key]!r} := {value}"
            parent[key] = value
    elif op == "nest":
        found = _pick(rng, d, lambda v: isinstance(v, (dict, list)))
        if found:
            parent, key = found
            depth = rng.choice([100, 1000, 5000])
            inner = json.dumps(parent[key])
            parent[key] = _HOLE
            return f"{key!r} nested {depth} deep", _fill(d, "[" * depth + inner + "]" * depth)
    elif op == "dup":
        found = _pick(rng, d, lambda v: isinstance(v, list) and len(v) > 0)
        if found:
            parent, key = found
            items = parent[key]
            items.insert(rng.randrange(len(items) + 1), copy.deepcopy(rng.choice(items)))
            label = f"{key!r}: an item repeated"
    return label, json.dumps(d).encode()


def _stage_edits(data: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any] | bytes]]:
    """Edits that each replace one stage of ``data`` (targeted mutations)."""
    ms = {"type": "Metaspace", "prepend_scheme": "always", "split": True}
    for rep in ("", "ab", "\u2581\u2581"):
        d = copy.deepcopy(data)
        d["pre_tokenizer"] = {**ms, "replacement": rep}
        yield f"pre_tokenizer Metaspace replacement {rep!r}", d
        d = copy.deepcopy(data)
        d["decoder"] = {**ms, "replacement": rep}
        yield f"decoder Metaspace replacement {rep!r}", d
    for key, is_regex in (("String", False), ("Regex", True)):
        for behavior in ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"):
            d = copy.deepcopy(data)
            # The regex form inverted, the string form not: both kinds of empty split.
            split = {"type": "Split", "pattern": {key: ""}, "behavior": behavior, "invert": is_regex}
            d["pre_tokenizer"] = {
                "type": "Sequence",
                "pretokenizers": [split, *([d["pre_tokenizer"]] * bool(d["pre_tokenizer"]))],
            }
            yield f"Split {key} '' {behavior}", d
        d = copy.deepcopy(data)
        d["normalizer"] = {"type": "Replace", "pattern": {key: ""}, "content": "_"}
        yield f"Replace {key} ''", d
    d = copy.deepcopy(data)
    d["normalizer"] = {"type": "Prepend", "prepend": ""}
    yield "Prepend ''", d
    for stage, kind, field in (
        ("normalizer", "Sequence", "normalizers"),
        ("pre_tokenizer", "Sequence", "pretokenizers"),
        ("decoder", "Sequence", "decoders"),
    ):
        for depth in (60, 400):
            d = copy.deepcopy(data)
            inner = json.dumps(d[stage])
            d[stage] = _HOLE
            text = f'{{"type": "{kind}", "{field}": [' * depth + inner + "]}" * depth
            yield f"{stage} Sequence nested {depth} deep", _fill(d, text)
        d = copy.deepcopy(data)
        d[stage] = {"type": kind, field: [None]}
        yield f"{stage} Sequence holding null", d
    d = copy.deepcopy(data)
    d["post_processor"] = {"type": "Sequence", "processors": [None]}
    yield "post_processor Sequence holding null", d


def _model_edits(data: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    model = data["model"]
    kind = model["type"]
    if kind == "BPE":
        for key in ("continuing_subword_prefix", "end_of_word_suffix"):
            d = copy.deepcopy(data)
            d["model"][key] = ""
            yield f"BPE {key} ''", d
        d = copy.deepcopy(data)
        del d["model"]["merges"]
        yield "BPE without merges", d
        for p in (0.1, 0.0, 1.0):
            d = copy.deepcopy(data)
            d["model"]["dropout"] = p
            yield f"BPE dropout {p}", d
    if kind == "WordPiece":
        d = copy.deepcopy(data)
        d["model"]["continuing_subword_prefix"] = ""
        yield "WordPiece continuing_subword_prefix ''", d
    if isinstance(model.get("vocab"), dict):
        for big in (100_000_000, 4_000_000_000, 2**63):
            d = copy.deepcopy(data)
            d["model"]["vocab"]["zz\u00e9zz"] = big
            yield f"vocab id {big}", d
    if isinstance(model.get("vocab"), dict):
        d = copy.deepcopy(data)
        d["model"]["vocab"]["\ud800"] = len(d["model"]["vocab"])  # json.dumps escapes it
        yield "a lone surrogate in the vocabulary", d
    processor = data.get("post_processor") or {}
    if processor.get("type") == "TemplateProcessing":
        for big in (100_000_000, 2**32):
            d = copy.deepcopy(data)
            for spec in d["post_processor"]["special_tokens"].values():
                spec["ids"] = [big]
            yield f"post-processor id {big}", d
    for big in (100_000_000, 4_000_000_000, 2**63):
        d = copy.deepcopy(data)
        d.setdefault("added_tokens", []).append(
            {
                "id": big,
                "content": "<big>",
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
        )
        yield f"added token id {big}", d


def hf_mutants(rng: random.Random, full: bytes) -> Iterator[tuple[str, bytes]]:
    """The mutants of one tokenizer.json: targeted, random (of the shrunk file), and a
    few byte-level ones of the whole file."""
    data = shrink_hf(json.loads(full), 2000)
    yield "shrunk, unmutated", json.dumps(data).encode()
    for label, d in [*_stage_edits(data), *_model_edits(data)]:
        yield label, d if isinstance(d, bytes) else json.dumps(d).encode()
    yield "nested 100000 deep", b"[" * 100_000 + b"]" * 100_000
    yield "a SentencePiece model", fixture_file("spm/spm_botchan_en_bpe_1000.model").read_bytes()[:5000]
    yield "UTF-8 with a BOM", b"\xef\xbb\xbf" + json.dumps(data).encode()
    d = copy.deepcopy(data)
    if d["model"]["type"] == "Unigram":
        d["model"]["vocab"][5][1] = float("nan")
    else:
        d["model"]["dropout" if d["model"]["type"] == "BPE" else "max_input_chars_per_word"] = float("inf")
    yield "NaN or Infinity", json.dumps(d).encode()
    for _ in range(MUTANTS):
        yield _json_mutation(rng, data)
    raw = bytearray(full)
    for _ in range(2):
        i = rng.randrange(len(raw))
        flipped = bytearray(raw)
        flipped[i] ^= 1 << rng.randrange(8)
        yield f"whole file, bit flip at {i}", bytes(flipped)
    yield "whole file, truncated", full[: rng.randrange(len(full))]


def spm_mutants(rng: random.Random, full: bytes) -> Iterator[tuple[str, bytes]]:
    """The mutants of one .model: byte-level, of the first 1,000 pieces and the specs,
    and a few of the whole file."""
    short = shrink_spm(full, 1000)
    yield "first 1000 pieces", short
    yield "empty file", b""
    yield "a tokenizer.json", fixture_file("hf/botchan_unigram_1000_tokenizer.json").read_bytes()[:3000]
    yield "text", b"hello world\n" * 100
    for _ in range(MUTANTS):
        yield _protobuf_mutation(rng, short)
    for _ in range(3):
        label, raw = _protobuf_mutation(rng, full)
        yield f"whole file, {label}", raw


def _protobuf_mutation(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    """One byte-level mutation; half of them in the last 400 bytes, where the specs'
    small fields are (a flip in a piece mostly breaks its UTF-8)."""
    raw = bytearray(data)

    def where() -> int:
        return rng.randrange(len(raw)) if rng.random() < 0.5 else rng.randrange(max(0, len(raw) - 400), len(raw))

    op = rng.choice(["truncate", "flip", "flip", "insert", "delete", "varint", "byte"])
    if op == "truncate":
        cut = rng.randrange(len(raw))
        return f"truncate at {cut}", bytes(raw[:cut])
    if op == "flip":
        spots = [where() for _ in range(rng.randint(1, 4))]
        for i in spots:
            raw[i] ^= 1 << rng.randrange(8)
        return f"bit flips at {spots}", bytes(raw)
    i = where()
    if op == "insert":
        junk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        return f"insert {junk.hex()} at {i}", bytes(raw[:i] + junk + raw[i:])
    if op == "delete":
        n = rng.randint(1, 8)
        return f"delete {n} bytes at {i}", bytes(raw[:i] + raw[i + n :])
    if op == "varint":
        junk = b"\xff" * rng.randint(1, 11) + b"\x01"
        return f"long varint at {i}", bytes(raw[:i] + junk + raw[i + 1 :])
    raw[i] ^= 0xFF
    return f"byte {i} := {raw[i]:#x}", bytes(raw)


def tiktoken_mutants(rng: random.Random, full: bytes) -> Iterator[tuple[str, bytes]]:
    """The mutants of one rank file: line- and byte-level, of its first 600 lines, and a
    bit flip of the whole file."""
    lines = full.splitlines(keepends=True)
    short = lines[:600]
    yield "first 600 lines", b"".join(short)
    yield "empty file", b""
    yield "only blank lines", b"\n\n\n"
    yield "the empty token", b"".join(short) + b"= 600\n"
    yield "the empty token first", b"= 600\n" + b"".join(short)
    for big in (100_000_000, 4_000_000_000, 2**63, 2**64):
        yield f"rank {big}", b"".join(short) + base64.b64encode(b"zz\xc3\xa9zz") + b" %d\n" % big
    yield "CRLF", b"".join(line.rstrip(b"\n") + b"\r\n" for line in short)
    yield "first 100 lines (not byte-complete)", b"".join(lines[:100])
    yield "a tokenizer.json", fixture_file("hf/gpt2_tokenizer.json").read_bytes()[:3000]
    for _ in range(MUTANTS):
        raw = bytearray(b"".join(short))
        op = rng.choice(["truncate", "flip", "line", "rank", "dup", "junk", "token"])
        if op == "truncate":
            cut = rng.randrange(len(raw))
            yield f"truncate at {cut}", bytes(raw[:cut])
        elif op == "flip":
            i = rng.randrange(len(raw))
            raw[i] ^= 1 << rng.randrange(8)
            yield f"bit flip at {i}", bytes(raw)
        elif op == "line":
            k = rng.randrange(len(short))
            yield f"delete line {k + 1}", b"".join(short[:k] + short[k + 1 :])
        elif op == "rank":
            k = rng.randrange(len(short))
            token = short[k].split()[0]
            value = rng.choice([*map(str, _HUGE), "x", "1.5", "", "0x10", "+5", "٣"])
            yield (
                f"line {k + 1} rank := {value!r}",
                b"".join([*short[:k], token + b" " + value.encode() + b"\n", *short[k + 1 :]]),
            )
        elif op == "dup":
            k = rng.randrange(len(short))
            yield f"line {k + 1} repeated", b"".join([*short[: k + 1], short[k], *short[k + 1 :]])
        elif op == "junk":
            i = rng.randrange(len(raw))
            junk = rng.choice([b"\xff", b" ", b"\t", b"\x00", b"==", b" 1 2", b"\n"])
            yield f"insert {junk!r} at {i}", bytes(raw[:i] + junk + raw[i:])
        else:
            k = rng.randrange(len(short))
            rank = short[k].split()[1]
            token = rng.choice([b"", b"=", b"====", b"YQ", b"YQ=", b"YWJj=", b"!!!!"])
            yield (
                f"line {k + 1} token := {token!r}",
                b"".join([*short[:k], token + b" " + rank + b"\n", *short[k + 1 :]]),
            )
    raw = bytearray(full)
    i = rng.randrange(len(raw))
    raw[i] ^= 1 << rng.randrange(8)
    yield f"whole file, bit flip at {i}", bytes(raw)


# ------------------------------------------------------------------ the workers


def _ours(kind: str, path: str, pattern: str) -> dict[str, Any]:
    import tokstream
    from tokstream import Tokenizer

    try:
        if kind == "hf":
            tok = Tokenizer.from_file(path)
        elif kind == "spm":
            tok = Tokenizer.from_sentencepiece(path)
        else:
            tok = Tokenizer.from_tiktoken(path, pattern=pattern, special_tokens={})
    except tokstream.TokstreamError as e:
        return {"load": "error", "tokstream": True, "message": str(e)}
    except BaseException as e:
        return {"load": "error", "tokstream": False, "message": f"{type(e).__name__}: {e}"}
    ids: list[Any] = []
    for text in TEXTS:
        try:
            if kind == "hf":
                out = tok.encode(text, allowed_special="all", add_special_tokens=True)
            else:
                out = tok.encode(text, disallowed_special=())
            tok.decode(out)
            ids.append(out)
        except tokstream.TokstreamError as e:
            ids.append(f"error: {e}")
        except BaseException as e:
            return {"load": "ok", "internal": f"{type(e).__name__} on {text!r}: {e}"}
    return {"load": "ok", "ids": ids}


def _reference(kind: str, path: str, pattern: str) -> dict[str, Any]:
    try:
        if kind == "hf":
            import tokenizers

            ref = tokenizers.Tokenizer.from_file(path)
            ref.no_padding()
            ref.no_truncation()

            def encode(text: str) -> list[int]:
                return list(ref.encode(text, add_special_tokens=True).ids)
        elif kind == "spm":
            import sentencepiece

            sp = sentencepiece.SentencePieceProcessor()
            with open(path, "rb") as f:
                sp.LoadFromSerializedProto(f.read())

            def encode(text: str) -> list[int]:
                return list(sp.encode(text))
        else:
            import tiktoken
            import tiktoken.load
            from tiktoken_ext import openai_public

            ranks = tiktoken.load.load_tiktoken_bpe(path)
            # The constructor's pattern, without the download of its rank file.
            with mock.patch.object(openai_public, "load_tiktoken_bpe", lambda *a, **k: {}):
                spec = openai_public.ENCODING_CONSTRUCTORS[pattern]()
            enc = tiktoken.Encoding(name="m", pat_str=spec["pat_str"], mergeable_ranks=ranks, special_tokens={})

            def encode(text: str) -> list[int]:
                return list(enc.encode_ordinary(text))
    except BaseException as e:
        return {"load": "error", "message": f"{type(e).__name__}: {e}"[:300]}
    ids: list[Any] = []
    for text in TEXTS:
        try:
            ids.append(encode(text))
        except BaseException as e:
            ids.append(f"error: {type(e).__name__}: {e}"[:200])
    return {"load": "ok", "ids": ids}


def _worker(side: str, listing: str) -> None:
    """Run one side over the mutant files listed in ``listing``: one JSON line per file."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    run = _ours if side == "ours" else _reference
    for line in Path(listing).read_text().splitlines():
        kind, path, pattern = line.split("\t")
        print(json.dumps(run(kind, path, pattern)), flush=True)


def _run_side(side: str, jobs: list[tuple[str, str, str]], workdir: Path) -> list[dict[str, Any]]:
    """The outcomes of ``side`` on ``jobs``, in worker processes: one that runs past
    ``PER_MUTANT_SECONDS`` on a mutant is killed (that mutant: ``hang``), one that dies
    (``crash``); either way a new worker takes the rest."""
    workdir.mkdir(exist_ok=True)
    results: list[dict[str, Any]] = []
    import tokstream  # the one under test: the workers import the same

    root = Path(tokstream.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), *sys.path])}
    while len(results) < len(jobs):
        listing = workdir / f"{side}-{len(results)}.txt"
        listing.write_text("".join("\t".join(job) + "\n" for job in jobs[len(results) :]))
        proc = subprocess.Popen(
            [sys.executable, __file__, side, str(listing)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        assert proc.stdout is not None
        selector = selectors.DefaultSelector()
        selector.register(proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + PER_MUTANT_SECONDS + 10  # + the imports
        failure: str | None = None
        while len(results) < len(jobs):
            if not selector.select(timeout=max(0.0, deadline - time.monotonic())):
                failure = "hang"
                break
            line = proc.stdout.readline()
            if not line:
                failure = "crash"
                break
            results.append(json.loads(line))
            deadline = time.monotonic() + PER_MUTANT_SECONDS
        if failure is not None:
            proc.kill()
            results.append({"load": failure})
        proc.wait()
        proc.stdout.close()
    return results


# ------------------------------------------------------------------ judging


def _judge(name: str, ours: dict[str, Any], ref: dict[str, Any]) -> tuple[str, str | None]:
    """(outcome, failure or None) of one mutant."""
    if ours["load"] in ("hang", "crash"):
        return ours["load"], f"tokstream: {ours['load']}"
    if "internal" in ours:
        return "internal", f"tokstream raised {ours['internal'][:300]}"
    ref_loads = ref["load"] == "ok"
    if ours["load"] == "error":
        message = ours["message"]
        if not ours["tokstream"]:
            return "internal", f"tokstream raised {message[:300]}"
        if name not in message:
            return "unnamed", f"the message does not name {name!r}: {message[:300]}"
        if not ref_loads:
            return "both refuse", None
        for label, pattern in DOCUMENTED_REFUSALS:
            if re.search(pattern, message):
                return f"we refuse ({label})", None
        return "refused", f"we refuse, {ref['load']!r} for the reference: {message[:300]}"
    if not ref_loads:
        return "we load, reference refuses", None
    diffs = []
    for text, got, want in zip(TEXTS, ours["ids"], ref["ids"]):
        if isinstance(got, str) and isinstance(want, str):
            continue  # both refuse to encode it
        if isinstance(want, str) and "PanicException" in want:
            continue  # the reference breaks on its own file (tokenizers: an empty Prepend)
        if got != want:
            diffs.append(f"{text!r}: tokstream {str(got)[:150]}, reference {str(want)[:150]}")
    if diffs:
        return "different ids", "; ".join(diffs[:2])
    return "same", None


def _fuzz(
    kind: str, names: list[str], make: Callable[[random.Random, bytes], Iterator[tuple[str, bytes]]], tmp_path: Path
) -> None:
    """Write the mutants of every fixture of ``kind`` (its fixture folder),
    run both sides on them, judge each, print the counts, and fail on any failure."""
    if not names:
        missing_fixture(f"no {kind} fixtures in tests/data or {FIXTURES}")
    rng = random.Random(SEED)
    jobs: list[tuple[str, str, str]] = []
    labels: list[tuple[str, str]] = []
    for fixture in names:
        full = fixture_file(f"{kind}/{fixture}").read_bytes()
        pattern = fixture.split(".")[0]  # a rank file's encoding
        for label, raw in make(rng, full):
            base = f"m{len(jobs):04d}-{fixture}"  # the name each message must hold
            path = tmp_path / base
            path.write_bytes(raw)
            jobs.append((kind, str(path), pattern))
            labels.append((label, base))
    # Both sides at once, each in its own processes; ours (the slower: it is Python)
    # in two halves.
    half = len(jobs) // 2
    with ThreadPoolExecutor(3) as pool:
        first = pool.submit(_run_side, "ours", jobs[:half], tmp_path / "a")
        second = pool.submit(_run_side, "ours", jobs[half:], tmp_path / "b")
        reference = pool.submit(_run_side, "reference", jobs, tmp_path)
        ours, refs = first.result() + second.result(), reference.result()
    counts: Counter[str] = Counter()
    failures = []
    verbose = os.environ.get("TOKSTREAM_FUZZ_VERBOSE")
    for (label, base), o, r in zip(labels, ours, refs):
        outcome, failure = _judge(base, o, r)
        counts[outcome] += 1
        if verbose and outcome != "same":
            print(f"  {outcome:30} {base} ({label}): ours {str(o)[:200]} | reference {str(r)[:200]}")
        if failure:
            failures.append(f"{base} ({label}): {failure}")
    print(
        f"\n{kind}: {len(jobs)} mutants of {len(names)} files: "
        + ", ".join(f"{k} {v}" for k, v in counts.most_common())
    )
    assert not failures, f"{len(failures)} of {len(jobs)} mutants fail:\n" + "\n".join(failures)


@pytest.mark.slow
def test_tokenizer_json_mutants(tmp_path: Path) -> None:
    pytest.importorskip("tokenizers")
    _fuzz("hf", _hf_names(), hf_mutants, tmp_path)


def test_sentencepiece_mutants(tmp_path: Path) -> None:
    pytest.importorskip("sentencepiece")
    _fuzz("spm", _spm_names(), spm_mutants, tmp_path)


def test_rank_file_mutants(tmp_path: Path) -> None:
    pytest.importorskip("tiktoken")
    _fuzz("tiktoken", _tiktoken_names(), tiktoken_mutants, tmp_path)


if __name__ == "__main__":
    _worker(sys.argv[1], sys.argv[2])

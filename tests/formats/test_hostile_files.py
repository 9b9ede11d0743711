"""Hostile files that used to hang, blow up memory or recurse past Python's limit.

Each case loads and encodes in a fresh interpreter with a time limit and an
address-space limit (``run_limited``), so a regression fails here instead of hanging or
killing CI. The references (``tokenizers``, ``tiktoken``) run in this process: they
refuse these files at once, or load them in little memory.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import assert_sequences_equal, fixture_file

import tokstream

#: The tokstream under test (the child imports the same one).
_ROOT = Path(tokstream.__file__).resolve().parents[1]

#: The child's address-space limit: a table sized by an id of 10**8 (0.8 GB of
#: pointers) or 4e9 does not fit, the tokenizers below do.
MEMORY_LIMIT = 2 << 30
SECONDS = 120

_CHILD = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({memory}, {memory}))
import tokstream
from tokstream import Tokenizer

kind, path = sys.argv[1], sys.argv[2]
try:
    if kind == "hf":
        tok = Tokenizer.from_file(path)
    elif kind == "spm":
        tok = Tokenizer.from_sentencepiece(path)
    else:
        tok = Tokenizer.from_tiktoken(path, pattern=kind, special_tokens={{}})
    ids = [tok.encode(text, allowed_special="all") for text in ("a b", "hello world", "")]
    tok.decode(ids[1])
    tok.vocab.token_bytes(0)
    print(json.dumps({{"ids": ids, "n_vocab": tok.n_vocab}}))
except tokstream.TokstreamError as e:
    print(json.dumps({{"error": type(e).__name__, "message": str(e)}}))
"""


def run_limited(kind: str, path: Path) -> dict[str, Any]:
    """Load ``path`` (``kind``: ``hf``, ``spm`` or a rank file's pattern name) and encode
    a few texts in a child interpreter under ``SECONDS`` and ``MEMORY_LIMIT``: its ids,
    or the ``TokstreamError`` it raised. Any other exception, a hang or running out of
    memory fails the test."""
    return _run_child(_CHILD, [kind, str(path)])


def _run_child(code: str, args: list[str], stdin: str | None = None) -> dict[str, Any]:
    """Run ``code`` (formatted with the memory limit) in a child interpreter with
    ``args`` under ``SECONDS``: the JSON object it prints. Any other exception, a hang
    or running out of memory fails the test."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(_ROOT), *sys.path])}
    proc = subprocess.run(
        [sys.executable, "-c", code.format(memory=MEMORY_LIMIT), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=SECONDS,
        env=env,
    )
    assert proc.returncode == 0, f"the child failed (rc {proc.returncode}):\n{proc.stderr[-3000:]}"
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def assert_refused(result: dict[str, Any], path: Path, *parts: str) -> None:
    assert "error" in result, f"loaded: {result}"
    assert result["error"] == "TokenizerFileError", result
    message = result["message"]
    assert path.name in message, message
    for part in parts:
        assert part in message, (part, message)


def _gpt2(tmp_path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(fixture_file("hf/gpt2_tokenizer.json").read_text("utf-8"))
    return data


def _write_json(tmp_path: Path, name: str, obj: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(obj), "utf-8")
    return path


def _tokenizers_refuses(path: Path) -> str:
    tokenizers = pytest.importorskip("tokenizers")
    with pytest.raises(Exception) as info:
        tokenizers.Tokenizer.from_file(str(path))
    return str(info.value)


# ------------------------------------------------------------------ Metaspace


@pytest.mark.slow
@pytest.mark.parametrize("stage", ["pre_tokenizer", "decoder"])
@pytest.mark.parametrize("replacement", ["", "ab"])
def test_metaspace_replacement_must_be_one_character(tmp_path: Path, stage: str, replacement: str) -> None:
    """An empty replacement looped forever in encode (the pre-tokenizer); tokenizers
    reads a char and refuses both."""
    obj = json.loads(fixture_file("hf/mistral_7b_v1_tokenizer.json").read_text("utf-8"))
    obj[stage] = {"type": "Metaspace", "replacement": replacement, "prepend_scheme": "always", "split": True}
    if stage == "pre_tokenizer":
        obj["normalizer"] = None
    path = _write_json(tmp_path, "metaspace.json", obj)
    _tokenizers_refuses(path)
    assert_refused(run_limited("hf", path), path, f"{stage}.replacement", "one character")


# ------------------------------------------------------------------ huge ids


@pytest.mark.parametrize("big", [100_000_000, 4_000_000_000])
def test_vocabulary_id_far_beyond_the_tokens_is_refused(tmp_path: Path, big: int) -> None:
    """A per-id table sized by the largest id took 0.8 GB for 10**8 and raised
    MemoryError for 4e9; tokenizers loads both (a hash map), we refuse, naming the id."""
    obj = _gpt2(tmp_path)
    obj["model"]["vocab"]["zz\u00e9zz"] = big
    path = _write_json(tmp_path, "sparse.json", obj)
    assert_refused(run_limited("hf", path), path, 'model.vocab["zz\\u00e9zz"]', f"id {big}", "unused ids")


def test_vocabulary_id_beyond_u32_is_refused(tmp_path: Path) -> None:
    obj = _gpt2(tmp_path)
    obj["model"]["vocab"]["zz"] = 2**63
    path = _write_json(tmp_path, "u64.json", obj)
    assert "expected u32" in _tokenizers_refuses(path)
    assert_refused(run_limited("hf", path), path, 'model.vocab["zz"]', "[0, 2**32)")


def _rank_file(tmp_path: Path, extra: bytes, name: str = "big.tiktoken") -> Path:
    lines = fixture_file("tiktoken/r50k_base.tiktoken").read_bytes().splitlines(keepends=True)[:300]
    path = tmp_path / name
    path.write_bytes(b"".join(lines) + extra)
    return path


@pytest.mark.parametrize("big", [100_000_000, 4_000_000_000, 2**63])
def test_rank_far_beyond_the_tokens_is_refused(tmp_path: Path, big: int) -> None:
    tiktoken_load = pytest.importorskip("tiktoken.load")
    path = _rank_file(tmp_path, base64.b64encode(b"abcde") + b" %d\n" % big)
    assert tiktoken_load.load_tiktoken_bpe(str(path))[b"abcde"] == big  # tiktoken reads it
    assert_refused(run_limited("r50k_base", path), path, "line 301", f"id {big}", "unused ids")


def test_ranks_from_python_are_checked_too() -> None:
    from tokstream import Tokenizer
    from tokstream.errors import TokstreamError

    ranks = {bytes([b]): b for b in range(256)}
    with pytest.raises(TokstreamError, match=r"rank 100000000 \(token b'ab'\): id 100000000 leaves"):
        Tokenizer({**ranks, b"ab": 100_000_000}, pattern="r50k_base")
    with pytest.raises(TokstreamError, match=r"special token '<x>' \(100000000\)"):
        Tokenizer(ranks, pattern="r50k_base", special_tokens={"<x>": 100_000_000})
    with pytest.raises(TokstreamError, match=r"rank -1 .*non-negative"):
        Tokenizer({**ranks, b"ab": -1}, pattern="r50k_base")


def test_reserved_ids_within_the_slack_load() -> None:
    """A gap of 65,536 unused ids (reserved specials) is allowed; one more id is not."""
    from tokstream import Tokenizer
    from tokstream.errors import TokstreamError
    from tokstream.json_fields import SPARE_IDS

    ranks = {bytes([b]): b for b in range(256)}
    last = 2 * 257 + SPARE_IDS - 1  # 257 ids: the 256 bytes and one special
    tok = Tokenizer(ranks, pattern="r50k_base", special_tokens={"<x>": last})
    assert tok.n_vocab == last + 1
    with pytest.raises(TokstreamError, match="unused ids"):
        Tokenizer(ranks, pattern="r50k_base", special_tokens={"<x>": last + 1})


# ------------------------------------------------------------------ deep nesting


def test_json_nested_deeper_than_python_can_read(tmp_path: Path) -> None:
    """json.loads raised RecursionError; it is a TokenizerFileError naming the file."""
    path = tmp_path / "deep.json"
    path.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    assert_refused(run_limited("hf", path), path, "nested too deeply")


def _nested(obj: dict[str, Any], stage: str, kind: str, field: str, depth: int) -> str:
    inner = json.dumps(obj[stage])
    obj = {**obj, stage: "HOLE"}
    nest = f'{{"type": "{kind}", "{field}": [' * depth + inner + "]}" * depth
    return json.dumps(obj).replace('"HOLE"', nest)


@pytest.mark.parametrize(
    ("stage", "field"),
    [("normalizer", "normalizers"), ("pre_tokenizer", "pretokenizers"), ("decoder", "decoders")],
)
def test_sequence_nesting_is_bounded(tmp_path: Path, stage: str, field: str) -> None:
    """400 nested Sequences raised RecursionError in our own reader; more than 64 are
    refused (tokenizers refuses more than 62: serde_json's limit of 128 levels), and 62
    load with tokenizers' ids."""
    tokenizers = pytest.importorskip("tokenizers")
    obj = json.loads(fixture_file("hf/bert_minilm_tokenizer.json").read_text("utf-8"))
    obj["padding"] = obj["truncation"] = None
    deep = tmp_path / "deep.json"
    deep.write_text(_nested(obj, stage, "Sequence", field, 400), "utf-8")
    assert "recursion limit" in _tokenizers_refuses(deep)
    assert_refused(run_limited("hf", deep), deep, "nested more than 64 deep")

    from tokstream import Tokenizer

    text = _nested(obj, stage, "Sequence", field, 62)
    ref = tokenizers.Tokenizer.from_str(text)
    ours = Tokenizer.from_str(text)
    sample = "Hello, y'all! Unaffable 123."
    assert ours.encode(sample, add_special_tokens=True) == ref.encode(sample).ids
    assert ours.decode(ours.encode(sample)) == ref.decode(ref.encode(sample).ids)


# ------------------------------------------------------------------ empty strings
# Issue 14: every field a file may set to "" either behaves as tokenizers does or is
# refused at load; none may hang (each file runs in a child under the limits above)
# and none may match between every character where tokenizers does not.

_ENCODE_CHILD = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({memory}, {memory}))
import tokstream

path = sys.argv[1]
texts = json.loads(sys.stdin.read())
try:
    tok = tokstream.Tokenizer.from_file(path)
except tokstream.TokstreamError as e:
    print(json.dumps({{"error": type(e).__name__, "message": str(e)}}))
    sys.exit()
results = []
for text in texts:
    ids = tok.encode(text, allowed_special="all", add_special_tokens=True)
    results.append([ids, tok.decode(ids, skip_special_tokens=True)])
print(json.dumps({{"results": results}}))
"""

#: Short texts, then long runs (a quadratic or looping path shows up as the time limit).
EMPTY_CASE_TEXTS = ["Hello world", " two  spaces ", "日本語 x", "", "unaffable", "a" * 20_000, "ab " * 5_000]


def run_texts(path: Path, texts: list[str]) -> dict[str, Any]:
    """Load ``path`` in a child under ``SECONDS`` and ``MEMORY_LIMIT`` and encode each of
    ``texts`` (specials allowed, the post-processor's tokens added): ``{"results":
    [[ids, decode(ids, skip_special_tokens=True)], ...]}``, or the ``TokstreamError``."""
    return _run_child(_ENCODE_CHILD, [str(path)], json.dumps(texts))


def _fixture(name: str) -> dict[str, Any]:
    obj: dict[str, Any] = json.loads(fixture_file(f"hf/{name}_tokenizer.json").read_text("utf-8"))
    obj["padding"] = obj["truncation"] = None
    return obj


def _added(obj: dict[str, Any], *entries: dict[str, Any]) -> None:
    first = max([len(obj["model"]["vocab"]), *(t["id"] + 1 for t in obj["added_tokens"])])
    flags = {"single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": False}
    obj["added_tokens"] += [{"id": first + k, **flags, **e} for k, e in enumerate(entries)]


def _set(obj: dict[str, Any], **stages: Any) -> None:
    obj.update(stages)


def _split(pattern: dict[str, str], behavior: str) -> dict[str, Any]:
    """A Split on ``pattern`` before GPT-2's byte-level step (which then only maps)."""
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
    split = {"type": "Split", "pattern": pattern, "behavior": behavior, "invert": False}
    return {"type": "Sequence", "pretokenizers": [split, byte_level]}


def _replace(key: str) -> dict[str, Any]:
    return {"type": "Replace", "pattern": {key: ""}, "content": "_"}


#: name -> (fixture, how the file changes, None to match tokenizers or the refusal's words)
EMPTY_CASES: dict[str, tuple[str, Any, str | None]] = {
    "added_content": ("gpt2", lambda o: _added(o, {"content": ""}, {"content": "", "special": True}), None),
    "added_content_normalized_to_nothing": (
        "bert_minilm",
        lambda o: _added(o, {"content": "\x01", "normalized": True}),
        "empty text",
    ),
    "replace_normalizer_string": ("mistral_7b_v1", lambda o: _set(o, normalizer=_replace("String")), "empty string"),
    "replace_normalizer_regex": ("mistral_7b_v1", lambda o: _set(o, normalizer=_replace("Regex")), "empty string"),
    **{
        f"split_{key.lower()}_{behavior}": (
            "gpt2",
            lambda o, key=key, behavior=behavior: _set(o, pre_tokenizer=_split({key: ""}, behavior)),
            None,
        )
        for key in ("String", "Regex")
        for behavior in ("Isolated", "Removed", "Contiguous", "MergedWithNext")
    },
    "prepend_normalizer": ("mistral_7b_v1", lambda o: o["normalizer"]["normalizers"][0].update(prepend=""), None),
    "wordpiece_prefix": (
        "bert_minilm",
        lambda o: (o["model"].update(continuing_subword_prefix=""), o["decoder"].update(prefix="")),
        None,
    ),
    **{
        f"bpe_{key}_{name}": (name, lambda o, key=key: o["model"].update({key: ""}), None)
        for key in ("continuing_subword_prefix", "end_of_word_suffix")
        for name in ("gpt2", "mistral_7b_v1")
    },
    "metaspace_pre_tokenizer": (
        "botchan_unigram_1000",
        lambda o: o["pre_tokenizer"].update(replacement=""),
        "one character",
    ),
    "metaspace_decoder": ("botchan_unigram_1000", lambda o: o["decoder"].update(replacement=""), "one character"),
    "char_delimiter_split": (
        "bert_minilm",
        lambda o: _set(o, pre_tokenizer={"type": "CharDelimiterSplit", "delimiter": ""}),
        "one character",
    ),
    "replace_decoder_string": ("mistral_7b_v1", lambda o: o["decoder"]["decoders"].insert(0, _replace("String")), None),
    "replace_decoder_regex": ("mistral_7b_v1", lambda o: o["decoder"]["decoders"].insert(0, _replace("Regex")), None),
    "bpe_decoder_suffix": ("mistral_7b_v1", lambda o: _set(o, decoder={"type": "BPEDecoder", "suffix": ""}), None),
    "strip_decoder_content": (
        "mistral_7b_v1",
        lambda o: o["decoder"]["decoders"][-1].update(content=""),
        "one character",
    ),
    # Empty tokens and contents (no pattern): tokenizers keeps them as any other.
    "bpe_vocab_token": ("gpt2", lambda o: o["model"]["vocab"].update({"": len(o["model"]["vocab"])}), None),
    "bpe_merge_part": (
        "mistral_7b_v1",
        lambda o: o["model"]["merges"].insert(0, ["\u2581", ""]),
        "not in the vocabulary",
    ),
    "unigram_piece": ("botchan_unigram_1000", lambda o: o["model"]["vocab"].append(["", 0.0]), None),
    "wordpiece_unk_token": (
        "bert_minilm",
        lambda o: o["model"].update(unk_token="", vocab={**o["model"]["vocab"], "": len(o["model"]["vocab"])}),
        None,
    ),
    "replace_normalizer_content": (
        "mistral_7b_v1",
        lambda o: o["normalizer"]["normalizers"][1].update(content=""),
        None,
    ),
    "ctc_decoder": (
        "mistral_7b_v1",
        lambda o: _set(o, decoder={"type": "CTC", "pad_token": "", "word_delimiter_token": "", "cleanup": True}),
        None,
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(EMPTY_CASES))
def test_empty_strings_behave_as_tokenizers_or_are_refused(tmp_path: Path, name: str) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    fixture, change, refusal = EMPTY_CASES[name]
    obj = _fixture(fixture)
    change(obj)
    path = _write_json(tmp_path, f"empty_{name}.json", obj)
    result = run_texts(path, EMPTY_CASE_TEXTS)
    if refusal is not None:
        assert_refused(result, path, refusal)
        return
    assert "results" in result, f"refused: {result}"
    ref = tokenizers.Tokenizer.from_file(str(path))
    for text, (ids, decoded) in zip(EMPTY_CASE_TEXTS, result["results"]):
        want = ref.encode(text).ids
        assert_sequences_equal(ids, want, what=f"{name}: ids", names=("tokstream", "tokenizers"), text=text)
        assert decoded == ref.decode(want, skip_special_tokens=True), (name, text[:40])

"""tokenizer.json: ids and decode identical to Hugging Face ``tokenizers`` on the fixtures.

Literal expectations come from ``tokenizers`` (or the llama.cpp vector files), never
from tokstream. The BERT file ships with padding and truncation on: they are turned off
in the reference, since they shape batches rather than ids.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import DATA, FIXTURES, HF_FILES, UNPACKED, assert_sequences_equal, fixture_file, fixture_text, hf_reference
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import adversarial_text

import tokstream
from tokstream import Tokenizer
from tokstream.errors import TokenizerFileError

tokenizers = pytest.importorskip("tokenizers")

MAX_EXAMPLES = max(1, int(os.environ.get("TOKSTREAM_MAX_EXAMPLES", "10000")) // 2)


_cache: dict[str, tuple[Tokenizer, tokenizers.Tokenizer]] = {}


def pair(name: str) -> tuple[Tokenizer, tokenizers.Tokenizer]:
    path = fixture_file(f"hf/{name}")
    if name not in _cache:
        _cache[name] = (Tokenizer.from_file(path), hf_reference(path))
    return _cache[name]


def assert_same(ours: Tokenizer, ref: tokenizers.Tokenizer, text: str) -> None:
    for add in (False, True):
        got = ours.encode(text, allowed_special="all", add_special_tokens=add)
        want = ref.encode(text, add_special_tokens=add).ids
        assert_sequences_equal(
            got, want, what=f"add_special_tokens={add}", names=("tokstream", "tokenizers"), text=text
        )
        for skip in (False, True):
            assert ours.decode(want, skip_special_tokens=skip) == ref.decode(want, skip_special_tokens=skip), (
                text[:200],
                skip,
            )


@pytest.mark.slow
@pytest.mark.parametrize("name", HF_FILES)
@pytest.mark.parametrize(
    "corpus",
    ["corpus_botchan_en.txt", "corpus_alice_in_wonderland_en.txt", "corpus_wagahaiwa_nekodearu_ja.txt"],
)
def test_corpus_matches_tokenizers(name: str, corpus: str) -> None:
    ours, ref = pair(name)
    text = fixture_text(f"corpora/{corpus}")[:60_000]
    assert_same(ours, ref, text)
    for line in text.splitlines()[:300]:
        assert_same(ours, ref, line)


_hf_text = adversarial_text().map(lambda s: s.encode("utf-8", "replace").decode("utf-8"))


@pytest.mark.slow
@pytest.mark.parametrize("name", HF_FILES)
@settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_hf_text)
def test_adversarial_matches_tokenizers(name: str, text: str) -> None:
    ours, ref = pair(name)
    assert_same(ours, ref, text)


@pytest.mark.slow
@given(
    text=st.lists(
        st.sampled_from(
            [
                "[CLS]",
                "[SEP]",
                "<s>",
                "</s>",
                "<unk>",
                "<|begin_of_text|>",
                "<|endoftext|>",
                " ",
                "  ",
                "a",
                "É",
                "ｆｕｌｌ",
                "ﬁ",
                "e\u0301",
                "日本",
                "\t",
                "\n",
                "Ⅻ",
                "㍿",
            ]
        ),
        max_size=12,
    ).map("".join)
)
@settings(max_examples=max(50, MAX_EXAMPLES // 10), deadline=None)
@pytest.mark.parametrize("name", HF_FILES)
def test_special_literals_and_compat_chars(name: str, text: str) -> None:
    ours, ref = pair(name)
    assert_same(ours, ref, text)


def _vectors(kind: str) -> list[tuple[str, list[int]]]:
    inp = fixture_file(f"vectors/ggml-vocab-{kind}.gguf.inp").read_bytes().decode("utf-8")
    out = fixture_text(f"vectors/ggml-vocab-{kind}.gguf.out")
    inputs = inp.split("\n__ggml_vocab_test__\n")
    if inputs and inputs[-1] == "":
        inputs.pop()
    expected = [[int(x) for x in line.split()] for line in out.split("\n")]
    return list(zip(inputs, expected))


@pytest.mark.parametrize(
    ("kind", "name"), [("llama-bpe", "llama3_tokenizer.json"), ("bert-bge", "bert_minilm_tokenizer.json")]
)
def test_llama_cpp_vectors(kind: str, name: str) -> None:
    ours, _ = pair(name)
    for text, want in _vectors(kind):
        got = ours.encode(text, allowed_special="all")
        assert got == want, (text, got, want)


def test_load_dispatches_on_json() -> None:
    path = fixture_file("hf/gpt2_tokenizer.json")
    tok = tokstream.load(path)
    assert tok.encode("hello world") == hf_reference(path).encode("hello world").ids


# ------------------------------------------------------------------ broken files


def _write(tmp_path: Path, obj: object) -> Path:
    p = tmp_path / "tokenizer.json"
    p.write_text(json.dumps(obj), "utf-8")
    return p


def _small(tmp_path: Path) -> dict[str, object]:
    src = json.loads(fixture_text("hf/gpt2_tokenizer.json"))
    return src


def test_truncated_json(tmp_path: Path) -> None:
    data = fixture_file("hf/gpt2_tokenizer.json").read_bytes()
    p = tmp_path / "tokenizer.json"
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(TokenizerFileError, match="truncated"):
        Tokenizer.from_file(p)


def test_unknown_model_type(tmp_path: Path) -> None:
    obj = _small(tmp_path)
    obj["model"]["type"] = "Quantum"  # type: ignore[index]
    with pytest.raises(NotImplementedError, match=r"model.*'Quantum'"):
        Tokenizer.from_file(_write(tmp_path, obj))


def test_unknown_pre_tokenizer_type_names_path(tmp_path: Path) -> None:
    obj = _small(tmp_path)
    obj["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [{"type": "ByteLevel"}, {"type": "Nope"}]}
    with pytest.raises(NotImplementedError, match=r"pre_tokenizer\.pretokenizers\[1\].*'Nope'"):
        Tokenizer.from_file(_write(tmp_path, obj))


def test_merge_with_missing_token(tmp_path: Path) -> None:
    obj = _small(tmp_path)
    obj["model"]["merges"] = ["Ġ t", "zzzq Ġ"]  # type: ignore[index]
    with pytest.raises(ValueError, match=r"merges\[1\].*'zzzq'"):
        Tokenizer.from_file(_write(tmp_path, obj))


def test_duplicate_ids(tmp_path: Path) -> None:
    obj = _small(tmp_path)
    vocab = obj["model"]["vocab"]  # type: ignore[index]
    vocab["zzzq"] = vocab["Ġt"]
    with pytest.raises(TokenizerFileError, match=r"model\.vocab: id \d+ is used by both"):
        Tokenizer.from_file(_write(tmp_path, obj))


def test_wrong_field_type_names_path(tmp_path: Path) -> None:
    obj = _small(tmp_path)
    obj["model"]["ignore_merges"] = "yes"  # type: ignore[index]
    with pytest.raises(TokenizerFileError, match=r"model\.ignore_merges"):
        Tokenizer.from_file(_write(tmp_path, obj))


def test_fixtures_are_the_vendored_files() -> None:
    # The suite reads the copies in tests/data (their sums checked), not a folder next
    # to the clone; only unvendorable fixtures come from FIXTURES.
    path = fixture_file("hf/gpt2_tokenizer.json")
    assert path.is_relative_to(UNPACKED) and (DATA / "hf" / "gpt2_tokenizer.json.xz").is_file()
    assert not path.is_relative_to(FIXTURES)


# ------------------------------------------------------------------ added-token ids


@pytest.mark.parametrize(
    "added",
    [
        [("X", 9)],  # a written id past the vocabulary: tokenizers renumbers it
        [("X", 3), ("Y", 2)],
        [("c", 7)],  # content in the vocabulary: the vocabulary's id wins
        [("Q", 1), ("c", 5), ("R", 40)],
    ],
)
def test_added_token_ids_follow_tokenizers(added: list[tuple[str, int]]) -> None:
    obj = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "normalizer": None,
        "pre_tokenizer": {"type": "WhitespaceSplit"},
        "post_processor": None,
        "decoder": None,
        "model": {
            "type": "WordPiece",
            "vocab": {"a": 0, "b": 1, "c": 5, "[UNK]": 6},
            "unk_token": "[UNK]",
            "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100,
        },
        "added_tokens": [
            {
                "id": i,
                "content": c,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
            for c, i in added
        ],
    }
    text = json.dumps(obj)
    ref = tokenizers.Tokenizer.from_str(text)
    ours = Tokenizer.from_str(text)
    sample = " ".join(c for c, _ in added) + " a b c"
    assert ours.encode(sample, allowed_special="all") == ref.encode(sample).ids
    for content, _ in added:
        assert ours.token_to_id(content) == ref.token_to_id(content)


# --------------------------------------------- variants that leave or take the fast paths


def _variant(name: str, edit: str) -> dict[str, object]:
    obj = json.loads(fixture_text(f"hf/{name}"))
    if edit == "prefix_space":  # ByteLevel(add_prefix_space=True): still the fast path
        obj["pre_tokenizer"]["add_prefix_space"] = True
    elif edit == "other_regex":  # an unknown Split pattern: the general pipeline
        obj["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = r"\p{L}+|\p{N}{1,2}|[^\p{L}\p{N}]+"
    elif edit == "no_ignore_merges":  # the fast path, but every piece through the merges
        obj["model"]["ignore_merges"] = False
    elif edit == "inner_space_token":  # a token with an inner ▁: no cutting into words
        vocab = obj["model"]["vocab"]
        vocab["a\u2581b"] = max(vocab.values()) + 1
        obj["model"]["merges"].insert(0, ["a", "\u2581b"])  # "ka b" -> ['▁k', 'a▁b']
    return obj


_variants: dict[tuple[str, str], tuple[Tokenizer, tokenizers.Tokenizer]] = {}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "edit"),
    [
        ("gpt2_tokenizer.json", "prefix_space"),
        ("llama3_tokenizer.json", "other_regex"),
        ("llama3_tokenizer.json", "no_ignore_merges"),
        ("mistral_7b_v1_tokenizer.json", "inner_space_token"),
    ],
)
@settings(max_examples=max(20, MAX_EXAMPLES // 20), deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_hf_text)
def test_variants_match_tokenizers(name: str, edit: str, text: str) -> None:
    if (name, edit) not in _variants:
        obj = json.dumps(_variant(name, edit), ensure_ascii=False)
        ref = tokenizers.Tokenizer.from_str(obj)
        ref.no_padding()
        ref.no_truncation()
        _variants[name, edit] = (Tokenizer.from_str(obj), ref)
    ours, ref = _variants[name, edit]
    assert_same(ours, ref, text)
    assert_same(ours, ref, "1a b ka b  " + text + " za bar, World! 12345 ")


# ------------------------------------------------------------------ hostile files
#
# What tokenizers (serde_json) refuses that Python's json reads, and errors that used
# to escape as internal exceptions or without the file's name. The hang and memory
# cases are in test_hostile_files.py, the mutation fuzzer in test_mutation_fuzz.py.


def _refused(path: Path, *parts: str) -> TokenizerFileError:
    with pytest.raises(TokenizerFileError) as info:
        Tokenizer.from_file(path)
    message = str(info.value)
    assert message.startswith(str(path)), message
    for part in parts:
        assert part in message, (part, message)
    return info.value


def _tokenizers_refuses(path: Path) -> None:
    with pytest.raises(Exception):
        tokenizers.Tokenizer.from_file(str(path))


def _small_bytes(tmp_path: Path) -> bytes:
    return json.dumps(_small(tmp_path)).encode()


def test_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    """Used to escape as UnicodeDecodeError."""
    data = _small_bytes(tmp_path)
    at = data.index(b'"version"') + 2
    path = tmp_path / "latin1.json"
    path.write_bytes(data[:at] + b"\xe9" + data[at:])
    _tokenizers_refuses(path)
    _refused(path, f"byte {at}: not UTF-8")


def test_a_sentencepiece_model_read_as_tokenizer_json(tmp_path: Path) -> None:
    """``from_file`` on a binary .model raised UnicodeDecodeError."""
    path = tmp_path / "tokenizer.model"
    path.write_bytes(fixture_file("spm/spm_botchan_en_bpe_1000.model").read_bytes())
    _refused(path, "not UTF-8", "a SentencePiece .model?", "from_sentencepiece")


def test_byte_order_mark(tmp_path: Path) -> None:
    """json.loads of bytes skips a BOM; tokenizers refuses the file, so do we."""
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + _small_bytes(tmp_path))
    _tokenizers_refuses(path)
    _refused(path, "BOM")


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_json(tmp_path: Path, constant: str) -> None:
    text = json.dumps(_small(tmp_path)).replace('"dropout": null', f'"dropout": {constant}')
    assert constant in text
    path = tmp_path / "nan.json"
    path.write_text(text, "utf-8")
    _tokenizers_refuses(path)
    _refused(path, constant.lstrip("-"), "not JSON")


def test_lone_surrogate_escape(tmp_path: Path) -> None:
    obj = _small(tmp_path)
    obj["model"]["vocab"]["\ud800"] = len(obj["model"]["vocab"])  # type: ignore[index]
    path = tmp_path / "surrogate.json"
    path.write_text(json.dumps(obj), "utf-8")  # ensure_ascii: written as \ud800
    assert "\\ud800" in path.read_text("utf-8")
    _tokenizers_refuses(path)
    _refused(path, "line 1, column", "\\ud800 escapes a lone surrogate")


def test_surrogate_pair_escapes_load(tmp_path: Path) -> None:
    obj = _small(tmp_path)
    obj["model"]["vocab"]["\U0001f600"] = len(obj["model"]["vocab"])  # type: ignore[index]
    added = {"single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True}
    obj["added_tokens"] = [{"id": 0, "content": "\\\\ud800", **added}]  # text, not an escape
    text = json.dumps(obj)
    assert "\\ud83d\\ude00" in text
    ref = tokenizers.Tokenizer.from_str(text)
    ours = Tokenizer.from_str(text)
    assert ours.token_to_id("\U0001f600") == ref.token_to_id("\U0001f600")
    assert ours.token_to_id("\\\\ud800") == ref.token_to_id("\\\\ud800")


@pytest.mark.parametrize("bad", [-1, 2**32])
def test_added_token_id_must_be_u32(tmp_path: Path, bad: int) -> None:
    """tokenizers ignores the written id but reads it as a u32."""
    obj = _small(tmp_path)
    obj["added_tokens"] = [{"id": bad, "content": "<x>", "special": True}]
    path = _write(tmp_path, obj)
    _tokenizers_refuses(path)
    _refused(path, "added_tokens[0].id", str(bad), "non-negative" if bad < 0 else "below 2**32")


def test_unknown_type_is_a_file_error(tmp_path: Path) -> None:
    """An unknown component type is both a NotImplementedError (as before) and a
    TokenizerFileError naming the file (it was not a TokstreamError)."""
    from tokstream.errors import UnsupportedComponentError

    obj = _small(tmp_path)
    obj["decoder"] = {"type": "Sequence", "decoders": [{"type": "Fuse"}, {"type": "Nope"}]}
    error = _refused(_write(tmp_path, obj), "decoder.decoders[1]", "'Nope' is not supported")
    assert isinstance(error, UnsupportedComponentError) and isinstance(error, NotImplementedError)


def test_sequence_member_null(tmp_path: Path) -> None:
    """A null member: the file names its path; a Sequence read with the stage
    dispatcher as its ``build`` (which reads null as "no stage") refuses it too, rather
    than hold a None that fails at decode with AttributeError."""
    from tokstream import decoders

    obj = _small(tmp_path)
    obj["decoder"] = {"type": "Sequence", "decoders": [{"type": "Fuse"}, None]}
    path = _write(tmp_path, obj)
    _tokenizers_refuses(path)
    _refused(path, "decoder.decoders[1]", "null")
    with pytest.raises(TokenizerFileError, match=r"decoder\.decoders\[1\]: expected a component object, got null"):
        decoders.Sequence.from_json(obj["decoder"], "decoder", build=decoders.decoder_from_json)  # type: ignore[arg-type]


def test_component_errors_name_the_file(tmp_path: Path) -> None:
    obj = _small(tmp_path)
    obj["normalizer"] = {"type": "Replace", "pattern": {"Regex": "("}, "content": "x"}
    _refused(_write(tmp_path, obj), "normalizer: Replace pattern '(' does not compile")


@pytest.mark.parametrize("key", ["String", "Regex"])
def test_replace_pattern_matching_empty_text_is_refused(tmp_path: Path, key: str) -> None:
    """It would insert between every two characters; tokenizers doubles the first
    insertion under ByteLevel (``"__H"``) or panics under Llama 3's pre-tokenizer."""
    obj = _small(tmp_path)
    obj["normalizer"] = {"type": "Replace", "pattern": {key: "" if key == "String" else "x*"}, "content": "_"}
    _refused(_write(tmp_path, obj), "matches the empty string")


def test_empty_prepend_matches_tokenizers() -> None:
    obj = json.loads(fixture_text("hf/mistral_7b_v1_tokenizer.json"))
    obj["normalizer"]["normalizers"][0]["prepend"] = ""
    text = json.dumps(obj)
    ref = tokenizers.Tokenizer.from_str(text)
    ours = Tokenizer.from_str(text)
    for sample in ["Hello world", " leading space", "日本語"]:
        assert ours.encode(sample, add_special_tokens=True) == ref.encode(sample).ids


def test_empty_wordpiece_prefix_matches_tokenizers() -> None:
    obj = json.loads(fixture_text("hf/bert_minilm_tokenizer.json"))
    obj["padding"] = obj["truncation"] = None
    obj["model"]["continuing_subword_prefix"] = ""
    obj["decoder"]["prefix"] = ""
    text = json.dumps(obj)
    ref = tokenizers.Tokenizer.from_str(text)
    ours = Tokenizer.from_str(text)
    for sample in ["unaffable xyzzy", "Hello, world!", "日本語"]:
        want = ref.encode(sample).ids
        assert ours.encode(sample, add_special_tokens=True) == want
        assert ours.decode(want, skip_special_tokens=True) == ref.decode(want)


def test_post_processor_id_outside_the_vocabulary(tmp_path: Path) -> None:
    """tokenizers emits it as written; it came out of our encode too, then failed
    decode (and would fail masks and the model's embedding)."""
    obj = json.loads(fixture_text("hf/bert_minilm_tokenizer.json"))
    for spec in obj["post_processor"]["special_tokens"].values():
        spec["ids"] = [100_000_000]
    path = _write(tmp_path, obj)
    assert tokenizers.Tokenizer.from_file(str(path)).encode("hi").ids[0] == 100_000_000
    _refused(path, "post_processor: special token id 100000000 is not in the vocabulary (n_vocab=30522)")


@pytest.mark.parametrize("stage", ["pre_tokenizer", "decoder"])
def test_metaspace_prepend_scheme_is_one_of_three(tmp_path: Path, stage: str) -> None:
    """The decoder read any string (the pre-tokenizer's constructor checked it)."""
    obj = json.loads(fixture_text("hf/botchan_unigram_1000_tokenizer.json"))
    obj[stage]["prepend_scheme"] = "sometimes"
    path = _write(tmp_path, obj)
    _tokenizers_refuses(path)
    _refused(path, f"{stage}.prepend_scheme: expected 'always', 'first' or 'never'")

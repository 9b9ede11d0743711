"""Post-processors' ``trim_offsets`` against ``tokenizers``: the GPT-2 fixture file and
mutated variants of it (the ``ByteLevel`` post-processor's ``trim_offsets`` and
``add_prefix_space``, the pre-tokenizer's ``add_prefix_space``; ``RobertaProcessing``;
``Sequence`` orders), offsets of fixed and hypothesis text with and without special
tokens, and the JSON rules of those processors.

One difference is by design and allowed here (``tests/test_offsets.py``, "inserted"): a
token spelled only with the prefix space the pre-tokenizer inserted is zero-width at 0,
where ``tokenizers`` gives it the first character, (0, 1), trimmed to (1, 1) (and so
after an added token, where the text starts again).
"""

from __future__ import annotations

import copy
import itertools
import json

import pytest
from helpers import assert_sequences_equal, fixture_text
from hypothesis import given
from hypothesis import strategies as st
from strategies import adversarial_text, hyp_settings

from tokstream import Tokenizer
from tokstream.errors import TokenizerFileError
from tokstream.processors import BertProcessing, ByteLevel, RobertaProcessing, processor_from_json

tokenizers = pytest.importorskip("tokenizers")

EOT = ["<|endoftext|>", 50256]


@pytest.fixture(scope="module")
def gpt2() -> dict[str, object]:
    return json.loads(fixture_text("hf/gpt2_tokenizer.json"))


def _byte_level(trim: bool, prefix: bool) -> dict[str, object]:
    return {"type": "ByteLevel", "add_prefix_space": prefix, "trim_offsets": trim, "use_regex": True}


def _roberta(trim: bool, prefix: bool) -> dict[str, object]:
    return {"type": "RobertaProcessing", "sep": EOT, "cls": EOT, "trim_offsets": trim, "add_prefix_space": prefix}


_TEMPLATE = {
    "type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
    "pair": [],
    "special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>", "ids": [50256], "tokens": ["<|endoftext|>"]}},
}

_FLAGS = list(itertools.product([False, True], repeat=3))

#: ``name -> (pre-tokenizer add_prefix_space, post_processor, normalizer)``.
VARIANTS: dict[str, tuple[bool, dict[str, object], dict[str, object] | None]] = {
    **{f"byte_level-pre{p}-trim{t}-post{q}": (p, _byte_level(t, q), None) for p, t, q in _FLAGS},
    **{f"roberta-pre{p}-trim{t}-post{q}": (p, _roberta(t, q), None) for p, t, q in _FLAGS},
    # The order of the members does not change the first token's rule (tokenizers 0.23).
    **{
        f"{order}-pre{p}-post{q}": (
            p,
            {"type": "Sequence", "processors": members},
            {"type": "Strip", "strip_left": True, "strip_right": False},
        )
        for p, q in itertools.product([False, True], repeat=2)
        for order, members in (
            ("template_first", [_TEMPLATE, _byte_level(True, q)]),
            ("byte_level_first", [_byte_level(True, q), _TEMPLATE]),
        )
    },
}


def variant(gpt2: dict[str, object], name: str) -> str:
    prefix, post, normalizer = VARIANTS[name]
    doc = copy.deepcopy(gpt2)
    doc["pre_tokenizer"]["add_prefix_space"] = prefix  # type: ignore[index]
    doc["post_processor"] = post
    doc["normalizer"] = normalizer
    return json.dumps(doc)


_pairs: dict[str, tuple[Tokenizer, object]] = {}


@pytest.fixture(scope="module", params=sorted(VARIANTS))
def pair(request: pytest.FixtureRequest, gpt2: dict[str, object]) -> tuple[Tokenizer, object]:
    name = request.param
    if name not in _pairs:
        text = variant(gpt2, name)
        _pairs[name] = (Tokenizer.from_str(text), tokenizers.Tokenizer.from_str(text))
    return _pairs[name]


def check(ours: Tokenizer, theirs: object, text: str) -> None:
    for add in (False, True):
        enc = theirs.encode(text, add_special_tokens=add)  # type: ignore[attr-defined]
        ids, offsets = ours.encode_with_offsets(text, allowed_special="all", add_special_tokens=add)
        assert_sequences_equal(ids, enc.ids, what=f"ids, add_special_tokens={add}", text=text)
        want = list(enc.offsets)
        for k, (tid, got) in enumerate(zip(ids, offsets)):
            # The inserted prefix space (module notes): (i, i) here, (i, i + 1) or, trimmed,
            # (i + 1, i + 1) there, at the start of the text or after an added token.
            i = got[0]
            if got[1] == i and want[k] in ((i, i + 1), (i + 1, i + 1)) and ours.id_to_token(tid) == "Ġ":
                want[k] = got
        assert_sequences_equal(offsets, want, what=f"offsets, add_special_tokens={add}", text=text)


EDGE_CASES = [
    "My name is John",
    "",
    " ",
    "   ",
    "  My  name ",
    "a",
    " a",
    "\n \n",
    "x\n\n  y",
    "é  ü  ",
    "日本 語\u3000x",
    "<|endoftext|> hi <|endoftext|>",
    "<|endoftext|>",
    " <|endoftext|>  ",
    "Hello\u00a0world \u2009!",
]


@pytest.mark.slow
@pytest.mark.parametrize("text", EDGE_CASES)
def test_edge_cases(pair: tuple[Tokenizer, object], text: str) -> None:
    check(*pair, text)


def test_my_name_is_john(gpt2: dict[str, object]) -> None:
    # The case: the GPT-2 file with a prefix space and trim_offsets on.
    doc = copy.deepcopy(gpt2)
    doc["pre_tokenizer"]["add_prefix_space"] = True
    doc["post_processor"]["trim_offsets"] = True
    text = json.dumps(doc)
    want = tokenizers.Tokenizer.from_str(text).encode("My name is John").offsets
    assert want == [(0, 2), (3, 7), (8, 10), (11, 15)]
    assert Tokenizer.from_str(text).encode_with_offsets("My name is John")[1] == want


_spacey = st.lists(
    st.sampled_from([" ", "  ", "\n", "\t", "\u00a0", "a", "bc", "日本", "<|endoftext|>", " x", "é"]), max_size=12
).map("".join)


@pytest.mark.slow
@hyp_settings(300)  # per variant: 28 of them
@given(text=st.one_of(_spacey, adversarial_text(surrogates_ok=False)))
def test_hypothesis_text(pair: tuple[Tokenizer, object], text: str) -> None:
    check(*pair, text)


# ------------------------------------------------------------------------- JSON


@pytest.mark.slow
def test_json_round_trip(gpt2: dict[str, object]) -> None:
    for name in VARIANTS:
        ours = Tokenizer.from_str(variant(gpt2, name))
        saved = ours.pipeline.to_json()
        theirs = tokenizers.Tokenizer.from_str(json.dumps(saved))
        assert saved["post_processor"] == json.loads(theirs.to_str())["post_processor"], name


@pytest.mark.parametrize("missing", ["add_prefix_space", "trim_offsets"])
def test_byte_level_fields_required_as_in_tokenizers(gpt2: dict[str, object], missing: str) -> None:
    obj = {k: v for k, v in _byte_level(True, True).items() if k != missing}
    doc = dict(gpt2, post_processor=obj)
    with pytest.raises(Exception):  # tokenizers raises a bare Exception
        tokenizers.Tokenizer.from_str(json.dumps(doc))
    with pytest.raises(TokenizerFileError, match=f"missing field '{missing}'"):
        processor_from_json(obj)
    without_regex = {k: v for k, v in _byte_level(True, True).items() if k != "use_regex"}
    assert processor_from_json(without_regex).to_json() == _byte_level(True, True)  # type: ignore[union-attr]


@pytest.mark.parametrize("missing", ["add_prefix_space", "trim_offsets"])
def test_roberta_without_its_flags_reads_as_bert(gpt2: dict[str, object], missing: str) -> None:
    # tokenizers' untagged enum falls through to BertProcessing: no trimming.
    obj = {k: v for k, v in _roberta(True, True).items() if k != missing}
    doc = dict(gpt2, post_processor=obj)
    theirs = tokenizers.Tokenizer.from_str(json.dumps(doc))
    ours = processor_from_json(obj)
    assert type(ours) is BertProcessing
    assert ours.to_json() == json.loads(theirs.to_str())["post_processor"]
    assert not isinstance(ours, RobertaProcessing) and not ours.trims_offsets
    assert ByteLevel(trim_offsets=False).trims_offsets is False

"""``UnicodeScripts`` against ``tokenizers``' on every code point and through whole
tokenizers, and its generated script table (``_scripts.py``) against what
``tools/gen_unicode_scripts.py`` reads off the installed ``tokenizers`` today."""

from __future__ import annotations

import json
import pickle
import random
import re

import pytest
from helpers import (
    REPO,
    assert_same_as_tokenizers,
    assert_sequences_equal,
    assert_streams_like_encode,
    hf_pair,
    load_tool,
)
from hypothesis import given
from hypothesis import strategies as st
from strategies import adversarial_text, hyp_settings

from tokstream import Tokenizer
from tokstream.pipeline import tokenizer_json
from tokstream.pre_tokenizers import UnicodeScripts, _scripts, pre_tokenizer_from_json, unicode_scripts

hf = pytest.importorskip("tokenizers.pre_tokenizers")
tokenizers = pytest.importorskip("tokenizers")

_ALL = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]


def _same_pieces(text: str) -> None:
    want = [s for s, _ in hf.UnicodeScripts().pre_tokenize_str(text)]
    got = UnicodeScripts().pre_tokenize([text])
    assert_sequences_equal(got, want, names=("tokstream", "tokenizers"), show=lambda p: repr(p[:20]), context=1)


@pytest.mark.slow
@pytest.mark.parametrize("sep", ["a", "\u03b1", " ", "\u0301"])
def test_every_code_point_between_separators(sep: str) -> None:
    # Between two of one script (Latin, Greek, Any, Inherited), each code point is cut
    # out alone exactly when its class is neither Any nor the separator's.
    for i in range(0, len(_ALL), 100_000):
        _same_pieces(sep + sep.join(_ALL[i : i + 100_000]) + sep)


@pytest.mark.parametrize("seed", [None, 0])
def test_every_code_point_in_sequence(seed: int | None) -> None:
    # Consecutive code points (in order, then shuffled): every class meets others.
    chars = list(_ALL)
    if seed is not None:
        random.Random(seed).shuffle(chars)
    for i in range(0, len(chars), 100_000):
        _same_pieces("".join(chars[i : i + 100_000]))


@pytest.mark.slow
@hyp_settings(1000)
@given(text=adversarial_text(), times=st.integers(1, 40))
def test_numpy_path_equals_python_walk(text: str, times: int) -> None:
    # Texts over 64 characters take the numpy path: the same cuts as the plain walk.
    text *= times
    table = unicode_scripts._table()
    want, last = [], 0
    for i, ch in enumerate(text):
        k = table[ord(ch)]
        if k and k != last:
            want.append(i)
            last = k
    assert unicode_scripts._starts(text) == want


EDGE_CASES = [
    "",
    " ",
    "   ",
    "  abc",
    "abc  ",
    "どこで生れ。Yes",
    "Apples are りんご 林檎",
    "ーカタカナー",
    "a1b 2 c",
    " 1 a",
    "a\u0301b",
    "\u0301a",
    "hello, world!",
    "Привет мир hello",
    "مرحبا hello 123",
    "👋 hi 👋👋",
    "\u30fc",
    "x\U00011700y",  # Ahom (9.0)
    "x\U00011a00y",  # Zanabazar Square (10.0): Any to tokenizers
    "\n\t a \r\n",
]

_VOCAB_CHARS = "".join(
    dict.fromkeys("abcdefghijklmnopqrstuvwxyzABC0123456789.,!?'-日本語生れこでど林檎りんごカタナー。Приветмир")
)
VOCAB = {"[UNK]": 0} | {c: i + 1 for i, c in enumerate(_VOCAB_CHARS)}
VOCAB |= {f"##{c}": len(VOCAB) + i for i, c in enumerate(_VOCAB_CHARS)}
WORDPIECE = {
    "type": "WordPiece",
    "unk_token": "[UNK]",
    "continuing_subword_prefix": "##",
    "max_input_chars_per_word": 100,
    "vocab": VOCAB,
}
ADDED = [
    {
        "id": len(VOCAB),
        "content": "<s>",
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": False,
        "special": True,
    },
]
DOCS = {
    "alone": tokenizer_json(model=WORDPIECE, pre_tokenizer={"type": "UnicodeScripts"}, added_tokens=ADDED),
    "sequence": tokenizer_json(
        model=WORDPIECE,
        pre_tokenizer={"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, {"type": "UnicodeScripts"}]},
        decoder={"type": "WordPiece", "prefix": "##", "cleanup": False},
    ),
}


@pytest.fixture(scope="module", params=sorted(DOCS))
def pair(request: pytest.FixtureRequest) -> tuple[Tokenizer, object]:
    return hf_pair(DOCS[request.param])


@pytest.mark.parametrize("text", EDGE_CASES)
def test_edge_cases(pair: tuple[Tokenizer, object], text: str) -> None:
    assert_same_as_tokenizers(*pair, text)


_mixed = st.lists(st.sampled_from([*EDGE_CASES, "<s>", " ", "ab", "日本"]), max_size=8).map("".join)


@pytest.mark.slow
@hyp_settings(2000)
@given(text=st.one_of(_mixed, adversarial_text(surrogates_ok=False)))
def test_hypothesis_text(pair: tuple[Tokenizer, object], text: str) -> None:
    assert_same_as_tokenizers(*pair, text)


@pytest.mark.slow
@hyp_settings(500)
@given(text=st.one_of(_mixed, adversarial_text(surrogates_ok=False)), data=st.data())
def test_streaming_equals_one_shot(pair: tuple[Tokenizer, object], text: str, data: st.DataObject) -> None:
    assert_streams_like_encode(pair[0], text, data.draw(st.lists(st.integers(0, len(text)), max_size=8)))


def test_json_round_trip_and_pickle() -> None:
    pre = pre_tokenizer_from_json({"type": "UnicodeScripts", "extra": 1})  # tokenizers ignores other keys
    assert isinstance(pre, UnicodeScripts)
    assert pre.to_json() == {"type": "UnicodeScripts"}
    for name, doc in DOCS.items():
        ours, _ = hf_pair(doc)
        saved = json.dumps(ours.pipeline.to_json())
        theirs = tokenizers.Tokenizer.from_str(saved)
        back = pickle.loads(pickle.dumps(ours))
        for text in EDGE_CASES:
            ids = ours.encode(text, allowed_special="all")
            assert ids == theirs.encode(text, add_special_tokens=False).ids, (name, text)
            assert back.encode(text, allowed_special="all") == ids


# ----------------------------------------------------------------- the table


@pytest.mark.slow
def test_table_regenerates() -> None:
    pytest.importorskip("unicodedataplus")
    gen = load_tool("gen_unicode_scripts")
    found = gen.classes()
    committed = [cls for _, cls in _scripts.SCRIPTS]
    regenerated = [gen.as_class(g) for g in found[1:]]
    assert len(committed) == len(regenerated), (
        f"tokenizers {gen.tokenizers.__version__} has {len(regenerated)} script classes, _scripts.py "
        f"{len(committed)}; run tools/gen_unicode_scripts.py"
    )
    for k, (ours, theirs) in enumerate(zip(committed, regenerated)):
        assert ours == theirs, f"script class {k} differs from tokenizers'; run tools/gen_unicode_scripts.py"
    text = (REPO / "tokstream" / "pre_tokenizers" / "_scripts.py").read_text(encoding="utf-8")
    version = re.search(r"from tokenizers (\S+);", text)
    assert version is not None, "the header of _scripts.py names no tokenizers version"
    assert text == gen.render(found, version=version[1]), (
        "_scripts.py is not the generator's output; run tools/gen_unicode_scripts.py"
    )

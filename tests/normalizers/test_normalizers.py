"""Normalizers against Hugging Face ``tokenizers`` (the reference), and their alignments.

Differential: each normalizer is built from the same ``tokenizer.json`` object by
``normalizer_from_json`` and by ``tokenizers.Tokenizer.from_str`` (a one-token WordLevel
model around it), then fed every code point and adversarial hypothesis text. The
``Precompiled`` charsmaps are the real ones from the fixture files: the botchan
``tokenizer.json`` and the SentencePiece ``.model`` files (read with
``tokstream.formats.sentencepiece``, which ``tests/formats/test_sentencepiece_format.py``
checks against sentencepiece; protobuf is not a test dependency).

Alignments: ``normalize_aligned`` must give ``normalize``'s text, monotone in-bounds
spans, and for character-wise normalizers pieces that normalize on their own to their
output (an oracle that needs no reference). Against ``tokenizers``, whose per-byte
alignment is coarser and sometimes off by design (an NFC composite maps to its first
character, a ``Replace`` match to its last), the check is containment: each span that
``tokenizers`` reports for an output character lies inside ours.

Lone surrogates are left out of the differential tests: a Rust string cannot hold
them, so ``tokenizers`` refuses such input.
"""

from __future__ import annotations

import base64
import json
import re
import unicodedata
from functools import cache, lru_cache
from pathlib import Path

import pytest
from helpers import assert_sequences_equal, fixture_file, fixture_text
from hypothesis import example, given
from hypothesis import strategies as st
from strategies import UNICODE_17_RANGES, adversarial_text, hyp_settings

from tokstream.errors import TokenizerFileError
from tokstream.formats.sentencepiece import read_sentencepiece
from tokstream.normalizers import (
    NFC,
    NFD,
    NFKC,
    NFKD,
    BertNormalizer,
    ByteLevel,
    Lowercase,
    Nmt,
    Normalizer,
    Precompiled,
    Prepend,
    Replace,
    Sequence,
    Strip,
    StripAccents,
    normalizer_from_json,
)

tokenizers = pytest.importorskip("tokenizers")

SETTINGS = hyp_settings(500)


# ----------------------------------------------------------------------- fixtures


def spm_charsmap(path: Path) -> bytes:
    """``normalizer_spec.precompiled_charsmap`` of a SentencePiece ``.model`` file."""
    return read_sentencepiece(path).precompiled_charsmap


@cache
def botchan_charsmap() -> bytes:
    data = json.loads(fixture_text("hf/botchan_unigram_1000_tokenizer.json"))
    steps = data["normalizer"]["normalizers"]
    (entry,) = [s for s in steps if s["type"] == "Precompiled"]
    return base64.b64decode(entry["precompiled_charsmap"])


# The botchan unigram .model holds the same charsmap as the botchan tokenizer.json
# (test_spm_reader_agrees_with_json), and Mistral's is empty
# (test_spm_empty_charsmap), so the heavy tests take the BPE model's only.
SPM_MODELS = ["spm/spm_botchan_en_bpe_1000.model"]


# ---------------------------------------------------------------- reference side


def _reference_json(normalizer: object) -> str:
    return json.dumps(
        {
            "version": "1.0",
            "truncation": None,
            "padding": None,
            "added_tokens": [],
            "normalizer": normalizer,
            # One pre-token per normalized character, so encode offsets are the
            # reference's alignment of each output character.
            "pre_tokenizer": {
                "type": "Split",
                "pattern": {"Regex": "[\\s\\S]"},
                "behavior": "Isolated",
                "invert": False,
            },
            "post_processor": None,
            "decoder": None,
            "model": {"type": "WordLevel", "vocab": {"[UNK]": 0}, "unk_token": "[UNK]"},
        }
    )


@cache
def reference(normalizer_json: str):
    """The ``tokenizers.Tokenizer`` around the normalizer (JSON text, for caching)."""
    return tokenizers.Tokenizer.from_str(_reference_json(json.loads(normalizer_json)))


def ref_normalize(obj: dict, text: str) -> str:
    return reference(json.dumps(obj)).normalizer.normalize_str(text)


def ref_offsets(obj: dict, text: str) -> list[tuple[int, int]]:
    return reference(json.dumps(obj)).encode(text, add_special_tokens=False).offsets


#: Configurations whose pattern matches the empty string: ``from_json`` refuses them
#: (tokenizers' pipeline doubles or panics on them under ByteLevel), the constructor
#: builds them, and the normalizer alone matches tokenizers'.
EMPTY_MATCHING = {"Replace-empty-string", "Replace-regex-empty"}


def ours(obj: dict) -> Normalizer:
    if any(obj is CONFIGS[name] for name in EMPTY_MATCHING):
        ((kind, text),) = obj["pattern"].items()
        return Replace(text, obj["content"], is_regex=kind == "Regex")
    n = normalizer_from_json(obj)
    assert n is not None
    return n


def assert_same(got: str, want: str) -> None:
    """Our normalized text is the reference's; else the first differing character."""
    __tracebackhide__ = True
    assert_sequences_equal(got, want, names=("tokstream", "tokenizers"), context=8)


# -------------------------------------------------------------------- alignments


def check_spans(n: Normalizer, text: str) -> tuple[str, list[tuple[int, int]]]:
    """The invariants every ``normalize_aligned`` result must hold."""
    out, spans = n.normalize_aligned(text)
    assert out == n.normalize(text)
    assert len(spans) == len(out)
    prev = (0, 0)
    for i, (s, e) in enumerate(spans):
        assert 0 <= s <= e <= len(text), (i, s, e, len(text))
        assert s >= prev[0] and e >= prev[1], f"spans not monotone at {i}: {prev} then {(s, e)}"
        prev = (s, e)
    return out, spans


def check_pieces(n: Normalizer, text: str) -> None:
    """Oracle for character-wise normalizers: each group of outputs sharing a span is
    what the span's input normalizes to on its own, and uncovered input vanishes."""
    out, spans = n.normalize_aligned(text)
    rebuilt: list[str] = []
    i = 0
    covered = 0
    while i < len(out):
        s, e = spans[i]
        j = i
        while j < len(out) and spans[j] == (s, e):
            j += 1
        assert s < e, f"zero-width span at {i} from a character-wise normalizer"
        assert n.normalize(text[covered:s]) == "", (covered, s)
        piece = n.normalize(text[s:e])
        assert piece == out[i:j], (s, e, piece, out[i:j])
        rebuilt.append(piece)
        covered = e
        i = j
    assert n.normalize(text[covered:]) == ""
    assert "".join(rebuilt) == out


def check_against_reference(obj: dict, text: str) -> None:
    """Each reference span of an output character lies inside ours (when ours is not an
    insertion: the reference gives inserted characters their neighbour's span)."""
    out, spans = ours(obj).normalize_aligned(text)
    ref = ref_offsets(obj, text)
    assert len(ref) == len(out), (out, ref)
    for i, ((s, e), (rs, re_)) in enumerate(zip(spans, ref)):
        if s < e:
            assert s <= rs and re_ <= e, (
                f"output {i} ({out[i]!r}): tokenizers says {(rs, re_)}, ours {(s, e)}; text {text!r}"
            )


# ---------------------------------------------------------------- configurations

BERT = {
    "type": "BertNormalizer",
    "clean_text": True,
    "handle_chinese_chars": True,
    "strip_accents": None,
    "lowercase": True,
}

CONFIGS: dict[str, dict] = {
    "NFC": {"type": "NFC"},
    "NFD": {"type": "NFD"},
    "NFKC": {"type": "NFKC"},
    "NFKD": {"type": "NFKD"},
    "Lowercase": {"type": "Lowercase"},
    "StripAccents": {"type": "StripAccents"},
    "Nmt": {"type": "Nmt"},
    "ByteLevel": {"type": "ByteLevel"},
    "Bert": BERT,
    "Bert-cased": {**BERT, "lowercase": False},
    "Bert-cased-strip": {**BERT, "lowercase": False, "strip_accents": True},
    "Bert-nostrip": {**BERT, "strip_accents": False},
    "Bert-nochinese-noclean": {**BERT, "clean_text": False, "handle_chinese_chars": False},
    "Prepend": {"type": "Prepend", "prepend": "\u2581"},
    "Prepend-long": {"type": "Prepend", "prepend": "<s> "},
    "Replace-string": {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
    "Replace-string-multi": {"type": "Replace", "pattern": {"String": "ab"}, "content": "xyz"},
    "Replace-delete": {"type": "Replace", "pattern": {"String": "a"}, "content": ""},
    "Replace-empty-string": {"type": "Replace", "pattern": {"String": ""}, "content": "_"},
    "Replace-regex": {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": "\u2581"},
    "Replace-regex-ws": {"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "},
    "Replace-regex-empty": {"type": "Replace", "pattern": {"Regex": "a*"}, "content": "-"},
    "Replace-regex-lookahead": {"type": "Replace", "pattern": {"Regex": "(?=a)"}, "content": "^"},
    "Replace-backslash": {"type": "Replace", "pattern": {"Regex": "\\d"}, "content": "\\1$1"},
    "Strip": {"type": "Strip", "strip_left": True, "strip_right": True},
    "Strip-left": {"type": "Strip", "strip_left": True, "strip_right": False},
    "Strip-right": {"type": "Strip", "strip_left": False, "strip_right": True},
    "Sequence-mistral": {
        "type": "Sequence",
        "normalizers": [
            {"type": "Prepend", "prepend": "\u2581"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
        ],
    },
    "Sequence-accents": {
        "type": "Sequence",
        "normalizers": [{"type": "NFKD"}, {"type": "StripAccents"}, {"type": "Lowercase"}],
    },
    "Sequence-strip-prepend": {
        "type": "Sequence",
        "normalizers": [
            {"type": "Strip", "strip_left": True, "strip_right": True},
            {"type": "NFC"},
            {"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "},
            {"type": "Prepend", "prepend": "\u2581"},
        ],
    },
    "Sequence-empty": {"type": "Sequence", "normalizers": []},
}

# Normalizers that rewrite each character (or cluster) without looking at context, so
# the piece oracle applies.
CHARACTERWISE = {
    "NFC",
    "NFD",
    "NFKC",
    "NFKD",
    "Lowercase",
    "StripAccents",
    "Nmt",
    "ByteLevel",
    "Bert-nochinese-noclean",
    "Sequence-accents",
}


# ----------------------------------------------------------------- text strategies


def _chars(*ranges: tuple[int, int]) -> str:
    return "".join(chr(c) for lo, hi in ranges for c in range(lo, hi + 1))


_COMPAT = _chars(
    (0xFF01, 0xFF5E),
    (0xFF61, 0xFF9F),
    (0xFB00, 0xFB06),
    (0x2460, 0x2473),
    (0x2070, 0x209C),
    (0x2150, 0x2189),
    (0x3300, 0x3357),
    (0xF900, 0xF92F),
    (0x1D400, 0x1D41F),
    (0x00A0, 0x00BF),
    (0x2000, 0x200F),
    (0x3131, 0x318E),
    (0xFE30, 0xFE4F),
    (0x1F100, 0x1F10A),
)
_MARKS = _chars(
    (0x0300, 0x0345),
    (0x0591, 0x05A0),
    (0x0F71, 0x0F84),
    (0x093C, 0x094D),
    (0x3099, 0x309A),
    (0x1AB0, 0x1ABE),
    (0x20D0, 0x20E1),
    (0x0334, 0x0338),
)
# Characters added after the Rust normalization tables (see the module notes), and
# case mappings newer than some Pythons: the paths that must not follow unicodedata.
_RECENT = _chars(
    (0x07FD, 0x07FD),
    (0x0897, 0x089F),
    (0x1ABF, 0x1ACE),
    (0x1DF6, 0x1DFA),
    (0x32FF, 0x32FF),
    (0xA7F2, 0xA7F4),
    (0x11930, 0x11943),
    (0x105C9, 0x105E4),
    (0x10570, 0x105BC),
    (0x1611E, 0x16130),
    (0x16D63, 0x16D6A),
    (0x113B8, 0x113D0),
    (0x11382, 0x11391),
    (0x1C89, 0x1C8A),
    (0xA7C0, 0xA7DC),
    (0x10D50, 0x10D85),
    (0x16EA0, 0x16ED3),
    (0x0D00, 0x0D04),
    (0x1734, 0x1734),
    (0x1171E, 0x1171E),
    (0x0890, 0x0891),
    (0x13430, 0x13440),
    (0x1FBF0, 0x1FBF9),
    (0x1E030, 0x1E06D),
)
_CJK = _chars(
    (0x4E00, 0x4E20),
    (0x3400, 0x3410),
    (0x20000, 0x20010),
    (0x2B81F, 0x2B921),
    (0x3040, 0x3060),
    (0xAC00, 0xAC20),
    (0x2F800, 0x2F810),
)
_JAMO = _chars((0x1100, 0x1112), (0x1161, 0x1175), (0x11A8, 0x11C2))
_CONTROLS = _chars(
    (0x00, 0x1F),
    (0x7F, 0xA0),
    (0x200B, 0x200F),
    (0x2028, 0x202F),
    (0xFFF9, 0xFFFD),
    (0xE000, 0xE002),
    (0xFEFF, 0xFEFF),
    (0x2581, 0x2581),
    (0x1680, 0x1680),
    (0x3000, 0x3000),
    (0x0600, 0x0605),
    (0x110BD, 0x110BD),
)

normalizer_fragment = st.one_of(
    st.text(alphabet=_COMPAT, min_size=1, max_size=6),
    st.tuples(
        st.sampled_from(
            [
                "a",
                "e",
                "E",
                "o",
                "u",
                "A",
                "\u03b1",
                "\u0391",
                "\u0438",
                "\ufb01",
                "\u2460",
                "\u00c5",
                "\u0e33",
                " ",
                "\u0f40",
                "\u0915",
                "\u304b",
                "\u30ab",
                "\uff76",
                "\u1100",
                "",
            ]
        ),
        st.text(alphabet=_MARKS, max_size=4),
    ).map("".join),
    st.text(alphabet=_RECENT + "a\u0301\u0316", min_size=1, max_size=5),
    st.text(alphabet=_CJK + " a", min_size=1, max_size=6),
    st.text(alphabet=_JAMO + "\uac00", min_size=1, max_size=5),
    st.text(alphabet=_CONTROLS + "a ", min_size=1, max_size=6),
    st.sampled_from(
        [
            "\u0391\u03a3",
            "\u039f\u0394\u039f\u03a3 \u03a3",
            "\u0130stanbul",
            "\u1e9e",
            "\u01c5",
            "\u212b",
            "\u2126",
            "I\u0307",
            "\u0f73\u0f71",
            "\u0f77",
            "\u0b47\u0b3e",
            "\u0cc6\u0cc2\u0cd5",
            "\u1b05\u1b35",
            "  ",
            " \t\n ",
            "\u3000\u00a0",
            "aaa",
            "abab",
            "a  b   c",
            "\u2581",
        ]
    ),
)


@st.composite
def normalizer_text(draw) -> str:
    """The suite's adversarial text mixed with normalization-specific fragments."""
    parts = draw(
        st.lists(st.one_of(normalizer_fragment, adversarial_text(surrogates_ok=False, max_fragments=4)), max_size=6)
    )
    return "".join(parts)


# ------------------------------------------------------------ differential tests


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_examples_match_tokenizers(name):
    obj = CONFIGS[name]
    n = ours(obj)
    for text in [
        "",
        " ",
        "a",
        "Hello  World ",
        "e\u0301\ufb01 \u4e2d\u6587 \u00c5\u212b",
        "\u0130\u03a3\u0391\u03a3 \u1e9b\u0323",
        "\t\x00\ufffd\u200b x \u3000",
        "aaa bab",
        "\U0001f468\u200d\U0001f469\u200d\U0001f467",
        "\u1100\u1161\u11a8",
    ]:
        assert_same(n.normalize(text), ref_normalize(obj, text))
        check_spans(n, text)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CONFIGS))
@SETTINGS
@given(text=normalizer_text())
@example(text="")
@example(text="e\u0301\u0316\u0301x")
@example(text=" a\u3000")
def test_matches_tokenizers(name, text):
    obj = CONFIGS[name]
    if _uses_regex(obj):
        text = _without_unicode17(text)
    n = ours(obj)
    assert_same(n.normalize(text), ref_normalize(obj, text))
    check_spans(n, text)
    if name in CHARACTERWISE:
        check_pieces(n, text)
    check_against_reference(obj, text)


def _uses_regex(obj: dict) -> bool:
    if obj["type"] == "Sequence":
        return any(_uses_regex(o) for o in obj["normalizers"])
    return obj["type"] == "Replace" and "Regex" in obj["pattern"]


_UNICODE_17 = re.compile("[" + "".join(f"\\U{a:08X}-\\U{b:08X}" for a, b in UNICODE_17_RANGES) + "]")


def _without_unicode17(text: str) -> str:
    # Oniguruma, which tokenizers 0.23.3 compiles Replace regexes with, has Unicode 16.0
    # tables; the regex module has 17.0, so a class like \d differs on 17.0's new
    # characters (U+11DE0.. are digits there). Documented in tokstream.normalizers.
    return _UNICODE_17.sub("", text)


ALL_CHARS = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, separator",
    [
        ("NFC", "\n"),
        ("NFD", "\n"),
        ("NFKC", "\n"),
        ("NFKD", "\n"),
        ("Lowercase", ""),
        ("StripAccents", ""),
        ("Nmt", ""),
        ("ByteLevel", ""),
        ("Bert", ""),
        ("Bert-cased-strip", "\n"),
        ("Bert-nochinese-noclean", "\n"),
    ],
)
def test_every_code_point(name, separator):
    # Every code point but the surrogates, in one text (a separator keeps the Unicode
    # forms from composing neighbours): the embedded Unicode tables are exact.
    obj = CONFIGS[name]
    text = separator.join(ALL_CHARS)
    assert_same(ours(obj).normalize(text), ref_normalize(obj, text))


@lru_cache(maxsize=1)
def _compositions() -> list[str]:
    """Every canonical pair that composes in this Python's (or a newer) Unicode."""
    pairs = []
    for c in ALL_CHARS:
        d = unicodedata.decomposition(c)
        if d and not d.startswith("<"):
            parts = d.split()
            if len(parts) == 2:
                pairs.append("".join(chr(int(p, 16)) for p in parts))
    return pairs


@pytest.mark.parametrize("name", ["NFC", "NFKC", "NFD", "NFKD"])
def test_compositions_and_reordering(name):
    obj = CONFIGS[name]
    combining = [c for c in ALL_CHARS if unicodedata.combining(c)]
    # A mark of class 1 after each mark, and one of class 240 before it, reorder
    # when the tables give the mark a class; Hangul L+V(+T) compose algorithmically.
    probes = (
        _compositions()
        + ["a" + c + "\u0334" for c in combining]
        + ["a\u0345" + c for c in combining]
        + ["\u1100\u1161\u11a8", "\u1112\u1175\u11c2", "\uac00\u11a8", "\u110b\u1165"]
    )
    text = "\n".join(probes)
    assert_same(ours(obj).normalize(text), ref_normalize(obj, text))


# -------------------------------------------------------------------- Precompiled


def _precompiled_json(charsmap: bytes) -> dict:
    return {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode()}


def _all_keys(charsmap: bytes) -> list[bytes]:
    """Every key of the charsmap's double-array trie (test-side walk, by probing)."""
    import struct

    (size,) = struct.unpack_from("<I", charsmap)
    units = struct.unpack_from(f"<{size // 4}I", charsmap, 4)

    def offset(u: int) -> int:
        return (u >> 10) << ((u & (1 << 9)) >> 6)

    # A unit labelled c at index i is a child of the node whose base is i ^ c.
    children: dict[int, list[int]] = {}
    for i, u in enumerate(units):
        label = u & ((1 << 31) | 0xFF)
        if 1 <= label <= 255:
            children.setdefault(i ^ label, []).append(i)
    keys = []
    stack = [(offset(units[0]), b"")]
    while stack:
        node, path = stack.pop()
        for i in children.get(node, ()):
            u = units[i]
            key = path + bytes([u & 0xFF])
            if (u >> 8) & 1:
                keys.append(key)
            stack.append((i ^ offset(u), key))
    return keys


@pytest.fixture(scope="module", params=["hf/botchan"] + SPM_MODELS)
def charsmap(request) -> bytes:
    if request.param == "hf/botchan":
        return botchan_charsmap()
    data = spm_charsmap(fixture_file(request.param))
    assert data, f"{request.param} has no precompiled_charsmap"
    return data


def test_spm_reader_agrees_with_json():
    model = spm_charsmap(fixture_file("spm/spm_botchan_en_unigram_1000.model"))
    assert model == botchan_charsmap()


def test_spm_empty_charsmap():
    # Mistral's model normalizes nothing: an empty charsmap, which tokenizers cannot
    # load and we read as SentencePiece does, as no rules.
    assert spm_charsmap(fixture_file("spm/mistral_7b_v1_tokenizer.model")) == b""
    p = Precompiled(b"")
    assert p.normalize("\ufb01 x\u0301") == "\ufb01 x\u0301"
    assert p.normalize_aligned("\ufb01x") == ("\ufb01x", [(0, 1), (1, 2)])


@pytest.mark.slow
def test_precompiled_every_code_point(charsmap):
    obj = _precompiled_json(charsmap)
    p = ours(obj)
    # Alone, and each followed by a combining mark (so every character starts a
    # two-character cluster that the whole-cluster rule may replace).
    for separator in ["", "\u0301"]:
        text = separator.join(ALL_CHARS)
        assert_same(p.normalize(text), ref_normalize(obj, text))


@pytest.mark.slow
def test_precompiled_every_key(charsmap):
    # Every key of the trie (224k for the NFKC map, most of them clusters that the
    # whole-cluster rule replaces), between newlines and run together.
    obj = _precompiled_json(charsmap)
    p = ours(obj)
    keys = [k.decode("utf-8") for k in _all_keys(charsmap)]
    assert keys
    for separator in ["\n", ""]:
        text = separator.join(keys)
        assert_same(p.normalize(text), ref_normalize(obj, text))
        check_spans(p, text[:200_000])


@pytest.mark.slow
@SETTINGS
@given(text=normalizer_text())
@example(text="\ufb01\u0301x")
@example(text="a\u0340\u0301")
@example(text="\u30ab\u3099\u0301")
@example(text="\U0001f1fa\U0001f1f8\U0001f1fa")
def test_precompiled_matches_tokenizers(text):
    obj = _precompiled_json(botchan_charsmap())
    p = ours(obj)
    assert_same(p.normalize(text), ref_normalize(obj, text))
    check_spans(p, text)
    check_pieces(p, text)
    check_against_reference(obj, text)


def test_precompiled_botchan_sequence_on_corpora():
    # The whole botchan normalizer (Precompiled, Strip, Replace) on real text.
    data = json.loads(fixture_text("hf/botchan_unigram_1000_tokenizer.json"))
    obj = data["normalizer"]
    n = ours(obj)
    for name in ["corpus_botchan_en.txt", "corpus_wagahaiwa_nekodearu_ja.txt", "corpus_alice_in_wonderland_en.txt"]:
        text = fixture_text(f"corpora/{name}")
        assert_same(n.normalize(text), ref_normalize(obj, text))
        check_spans(n, text[:20_000])


def test_precompiled_malformed():
    with pytest.raises(ValueError, match="too short"):
        Precompiled(b"\x01")
    with pytest.raises(ValueError, match="trie size"):
        Precompiled(b"\x00\x01\x00\x00" + b"\x00" * 8)
    with pytest.raises(ValueError, match="not UTF-8"):
        Precompiled(b"\x04\x00\x00\x00" + b"\x00" * 4 + b"\xff")
    with pytest.raises(TokenizerFileError, match=r"normalizer\.normalizers\[0\]\.precompiled_charsmap"):
        normalizer_from_json(
            {"type": "Sequence", "normalizers": [{"type": "Precompiled", "precompiled_charsmap": "not base64!"}]}
        )


# ------------------------------------------------------------------- direct checks


def test_spans_examples():
    assert NFC().normalize_aligned("e\u0301x") == ("\u00e9x", [(0, 2), (2, 3)])
    assert NFKD().normalize_aligned("\ufb01") == ("fi", [(0, 1), (0, 1)])
    assert NFD().normalize_aligned("e\u0301") == ("e\u0301", [(0, 1), (1, 2)])
    # Canonical reordering moves U+0316 (class 220) before U+0301 (230): both span both.
    assert NFD().normalize_aligned("a\u0301\u0316") == ("a\u0316\u0301", [(0, 1), (1, 3), (1, 3)])
    assert Prepend("\u2581").normalize_aligned("ab") == ("\u2581ab", [(0, 0), (0, 1), (1, 2)])
    assert Prepend("\u2581").normalize_aligned("") == ("", [])
    assert BertNormalizer().normalize_aligned("a\u4e2d\x00\u00c9") == (
        "a \u4e2d e",
        [(0, 1), (1, 1), (1, 2), (3, 3), (3, 4)],
    )
    assert Replace("ab", "xyz").normalize_aligned("cabd") == ("cxyzd", [(0, 1), (1, 3), (1, 3), (1, 3), (3, 4)])
    assert Strip().normalize_aligned("  a b  ") == ("a b", [(2, 3), (3, 4), (4, 5)])
    assert Strip().normalize_aligned("   ") == ("", [])
    assert Lowercase().normalize_aligned("\u0130") == ("i\u0307", [(0, 1), (0, 1)])
    # A character inserted between two outputs of one input joins their span.
    seq = Sequence([NFKD(), Replace("(?=i)", "^", is_regex=True)])
    assert seq.normalize_aligned("\ufb01") == ("f^i", [(0, 1), (0, 1), (0, 1)])
    seq = Sequence([Strip(), Prepend("\u2581"), Replace(" ", "\u2581")])
    assert seq.normalize_aligned(" a b") == ("\u2581a\u2581b", [(1, 1), (1, 2), (2, 3), (3, 4)])


def test_lowercase_is_rust_not_python():
    # No final sigma (Python lowers a word-final capital sigma to U+03C2).
    assert Lowercase().normalize("\u039f\u0394\u039f\u03a3") == "\u03bf\u03b4\u03bf\u03c3"
    # Unicode 16/17 case pairs that Python 3.11's tables lack.
    assert Lowercase().normalize("\u1c89\ua7cb\U00010d50") == "\u1c8a\u0264\U00010d70"


def test_replace_empty_matches_follow_oniguruma():
    r = Replace("b*", "x", is_regex=True)
    assert r.normalize("abc") == "xaxcx"  # Python's re.sub gives 'xaxxcx'
    assert r.normalize("") == ""
    assert Replace("", "_").normalize("ab") == "_a_b_"
    assert Replace("a", "\\1$1").normalize("cab") == "c\\1$1b"


@pytest.mark.slow
def test_pathological_long_runs():
    n = 100_000
    for norm, text in [
        (NFC(), "e\u0301" * n),
        (NFD(), "\u00e9" * n),
        (NFC(), "a" + "\u0301" * n),
        (NFKC(), "\ufb01" * n),
        (Lowercase(), "\u03a3" * n),
        (BertNormalizer(), "\u4e2d\u00e9" * n),
        (Replace("a*", "-", is_regex=True), "a" * n),
        (Sequence([Prepend("\u2581"), Replace(" ", "\u2581")]), " " * n),
    ]:
        out, spans = norm.normalize_aligned(text)
        assert out == norm.normalize(text)
        assert len(spans) == len(out)
        assert spans[-1][1] == len(text)


def test_precompiled_long_runs():
    p = Precompiled(botchan_charsmap())
    for text in ["\ufb01\u0301" * 50_000, "a\u0301" * 50_000, "\uff76\uff9e" * 50_000]:
        assert p.normalize(text) == p.normalize_aligned(text)[0]


# --------------------------------------------------------------------------- JSON


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_json_round_trip(name):
    obj = CONFIGS[name]
    n = ours(obj)
    assert n.to_json() == obj
    if name in EMPTY_MATCHING:
        with pytest.raises(TokenizerFileError, match=r"normalizer\.pattern: .* matches the empty string"):
            normalizer_from_json(n.to_json())
    else:
        assert normalizer_from_json(n.to_json()) == n
    # The same object tokenizers writes back.
    written = json.loads(reference(json.dumps(obj)).to_str())["normalizer"]
    assert n.to_json() == written


def test_json_round_trip_precompiled():
    obj = _precompiled_json(botchan_charsmap())
    n = ours(obj)
    assert n.to_json() == obj
    assert normalizer_from_json(n.to_json()) == n


def test_json_null_and_defaults():
    assert normalizer_from_json(None) is None
    # An empty charsmap maps nothing, as SentencePiece reads it (tokenizers refuses it).
    empty = normalizer_from_json({"type": "Precompiled", "precompiled_charsmap": ""})
    assert isinstance(empty, Precompiled) and empty.normalize("\ufb01") == "\ufb01"
    # strip_accents may be absent (serde default): null, follow lowercase.
    n = normalizer_from_json(
        {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "lowercase": False}
    )
    assert isinstance(n, BertNormalizer) and n.strip_accents is None
    assert n.normalize("\u00c9") == "\u00c9"


@pytest.mark.parametrize(
    "obj, where",
    [
        ({"type": "Strip", "strip_left": True}, r"normalizer: missing field 'strip_right'"),
        ({"type": "Strip", "strip_left": 1, "strip_right": True}, r"normalizer\.strip_left"),
        ({"type": "Prepend"}, r"normalizer: missing field 'prepend'"),
        ({"type": "Replace", "pattern": "a", "content": "b"}, r"normalizer\.pattern"),
        ({"type": "Replace", "pattern": {"String": "a", "Regex": "b"}, "content": "b"}, r"normalizer\.pattern"),
        ({"type": "Replace", "pattern": {"String": "a"}}, r"missing field 'content'"),
        ({"type": "Replace", "pattern": {"Regex": "("}, "content": ""}, r"does not compile"),
        ({"type": "Sequence"}, r"missing field 'normalizers'"),
        (
            {"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Prepend"}]},
            r"normalizer\.normalizers\[1\]: missing field 'prepend'",
        ),
        ({"type": "Sequence", "normalizers": [None]}, r"normalizers\[0\]: expected a component object, got null"),
        (
            {
                "type": "BertNormalizer",
                "clean_text": True,
                "handle_chinese_chars": True,
                "strip_accents": "yes",
                "lowercase": True,
            },
            r"normalizer\.strip_accents",
        ),
        ({"type": "Precompiled"}, r"missing field 'precompiled_charsmap'"),
        ({"type": "Precompiled", "precompiled_charsmap": "AQ=="}, r"too short"),
        ({"normalizers": []}, r"normalizer: missing field 'type'"),
        ([{"type": "NFC"}], r"normalizer: expected a normalizer object"),
    ],
)
def test_json_malformed(obj, where):
    with pytest.raises(ValueError, match=where):
        normalizer_from_json(obj)


def test_json_unknown_type():
    with pytest.raises(NotImplementedError, match=r"normalizer\.normalizers\[1\]: .*'Append'"):
        normalizer_from_json({"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Append"}]})


def test_fixture_normalizers_load():
    for name in [
        "bert_minilm_tokenizer.json",
        "botchan_unigram_1000_tokenizer.json",
        "mistral_7b_v1_tokenizer.json",
        "gpt2_tokenizer.json",
    ]:
        data = json.loads(fixture_text(f"hf/{name}"))
        n = normalizer_from_json(data["normalizer"])
        if data["normalizer"] is None:
            assert n is None
            continue
        assert n is not None and n.to_json() == data["normalizer"]
        text = " Hello\u3000W\u00f6rld \u4e2d\u6587  \ufb01  "
        assert_same(n.normalize(text), ref_normalize(data["normalizer"], text))


def test_pickle_round_trip():
    import pickle

    for obj in [*CONFIGS.values(), _precompiled_json(botchan_charsmap())]:
        n = ours(obj)
        clone = pickle.loads(pickle.dumps(n))
        assert clone == n
        text = "A\u0301 \ufb01 \u4e2d  x "
        assert clone.normalize(text) == n.normalize(text)


def test_equality_and_repr():
    assert NFKC() == NFKC() and NFKC() != NFKD()
    assert Replace(" ", "_") != Replace(" ", "_", is_regex=True)
    assert hash(Strip()) == hash(Strip(strip_left=True, strip_right=True))
    assert repr(Sequence([NFC(), Prepend("x")])) == "Sequence([NFC(), Prepend(prepend='x')])"
    assert StripAccents().normalize("") == "" and Nmt().normalize("") == ""
    assert ByteLevel().normalize("") == ""

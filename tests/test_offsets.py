"""``encode_with_offsets``: code-point spans, checked against a slow oracle.

The convention (``Tokenizer.encode_with_offsets`` docstring): ``offsets[i]`` is the
``(start, end)`` code-point span of the original text that token ``i`` covers; a token
covers every character any of its bytes belongs to, so tokens that split one character's
UTF-8 bytes (an emoji in byte-level BPE) share that character and their spans overlap.
Offsets index the *original* text even where lone surrogates were replaced by U+FFFD (3
bytes each) or a surrogate pair was joined into one 4-byte character (two code points
of the original text).

The oracle below walks the token bytes (lengths from tiktoken, not from us) and maps each
byte to the span of the original characters it came from.

The second half covers ``tokenizer.json`` and SentencePiece ``.model`` tokenizers
(pipeline mode), whose offsets go through the normalizer's alignment; its own notes
(above ``PIPELINE``) state what is compared with ``tokenizers`` and ``sentencepiece``
and the rules checked where the conventions differ by design.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import (
    assert_sequences_equal,
    describe_difference,
    first_difference,
    fixture_file,
    fixture_text,
    hf_reference,
)
from hypothesis import given
from hypothesis import strategies as st
from strategies import adversarial_text, has_surrogates, hyp_settings, replace_surrogates

import tokstream
from tokstream import pre_tokenizers as pt
from tokstream.byte_level import bytes_to_proxy
from tokstream.pre_tokenizers import located_spans


def _is_high(c: str) -> bool:
    return "\ud800" <= c <= "\udbff"


def _is_low(c: str) -> bool:
    return "\udc00" <= c <= "\udfff"


def byte_spans(text: str) -> list[tuple[int, int]]:
    """For each byte of the UTF-8 that gets encoded, the span of original characters."""
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(text):
        c = text[i]
        if _is_high(c) and i + 1 < len(text) and _is_low(text[i + 1]):
            spans += [(i, i + 2)] * 4  # a pair joins into one astral character
            i += 2
        elif _is_high(c) or _is_low(c):
            spans += [(i, i + 1)] * 3  # U+FFFD
            i += 1
        else:
            spans += [(i, i + 1)] * len(c.encode("utf-8"))
            i += 1
    return spans


def oracle_offsets(text: str, token_lengths: list[int]) -> list[tuple[int, int]]:
    """The slow, obviously correct offsets for tokens of these byte lengths."""
    spans = byte_spans(text)
    assert len(spans) == len(replace_surrogates(text).encode("utf-8"))
    assert sum(token_lengths) == len(spans)
    out, pos = [], 0
    for n in token_lengths:
        assert n > 0
        out.append((spans[pos][0], spans[pos + n - 1][1]))
        pos += n
    return out


def check_offsets(tok, enc, text, **kw):
    ids, offsets = tok.encode_with_offsets(text, **kw)
    assert ids == enc.encode(text, **kw), "ids differ from tiktoken"
    assert ids == tok.encode(text, **kw)
    assert len(offsets) == len(ids)
    assert all(isinstance(a, int) and isinstance(b, int) for a, b in offsets)
    pieces = [enc.decode_single_token_bytes(i) for i in ids]
    expected = oracle_offsets(text, [len(p) for p in pieces])
    k = first_difference(offsets, expected)
    if k is not None:
        raise AssertionError(
            describe_difference(
                offsets,
                expected,
                what="offsets",
                names=("tokstream", "oracle"),
                text=text,
                notes=[f"token {k} of {len(ids)}: {ids[k]}={pieces[k]!r}"] if k < len(ids) else [],
            )
        )
    # A token whose bytes are whole characters recovers its text by slicing.
    for (start, end), piece in zip(offsets, pieces):
        try:
            piece_text = piece.decode("utf-8")
        except UnicodeDecodeError:
            continue  # splits a character; its span is that whole character
        assert replace_surrogates(text[start:end]) == piece_text
        if not any(_is_high(c) or _is_low(c) for c in text[start:end]):
            assert text[start:end] == piece_text
    if text:
        assert offsets[0][0] == 0 and offsets[-1][1] == len(text)
    return ids, offsets


# ------------------------------------------------------------------- examples


@pytest.mark.parametrize(
    "text",
    [
        "",
        "hi there",
        "😀",
        "😀😀😀 emoji",
        "👨\u200d👩\u200d👧\u200d👦 family",
        "🇺🇸🇯🇵",
        "e\u0301\u0301",
        "吾輩は猫である。名前はまだ無い。",
        "नमस्ते दुनिया สวัสดี مرحبا",
        "\ud800",
        "a\ud800b",
        "\ud83d\ude00",
        "x\ud83d\ude00y\udc00\ud800z",
        "\ud800\ud800\udc00",
        "\r\n\r\n  \t\u3000\u00a0 x",
        "HelloWORLDfoo 'S 'LL ’s 1234567 ١٢٣",
    ],
    ids=repr,
)
def test_offsets_examples(pair, text):
    tok, enc = pair
    check_offsets(tok, enc, text)


def test_offsets_split_character_overlap(ours, reference):
    """An emoji split over tokens: every piece covers the whole emoji."""
    tok, enc = ours("cl100k_base"), reference("cl100k_base")
    text = "a😀b"
    _, offsets = check_offsets(tok, enc, text)
    assert len(enc.encode(text)) > 3  # tiktoken splits the emoji's bytes
    emoji_tokens = [o for o in offsets if o == (1, 2)]
    assert len(emoji_tokens) >= 2


def test_offsets_with_specials(pair):
    tok, enc = pair
    text = "x<|endoftext|>é<|endoftext|><|endoftext|>\ud83d\ude00"
    ids, offsets = check_offsets(tok, enc, text, allowed_special="all")
    eot = enc._special_tokens["<|endoftext|>"]
    spans = [o for i, o in zip(ids, offsets) if i == eot]
    assert spans == [(1, 14), (15, 28), (28, 41)]
    # Special literals encoded as plain text also get offsets.
    check_offsets(tok, enc, text, disallowed_special=())


# -------------------------------------------------------------------- corpora


def test_offsets_corpus_samples(pair, corpus_name, read_corpus):
    tok, enc = pair
    text = read_corpus(corpus_name)
    step = max(1, len(text) // 4)
    for start in range(0, len(text), step):
        check_offsets(tok, enc, text[start : start + 4000])


# ----------------------------------------------------------------- hypothesis


@pytest.mark.slow
@hyp_settings(500)
@given(text=adversarial_text(), allow=st.booleans())
def test_offsets_adversarial(all_pairs, text, allow):
    kw = {"allowed_special": "all"} if allow else {"disallowed_special": ()}
    for tok, enc in all_pairs.values():
        check_offsets(tok, enc, text, **kw)


# =========================================================================================
# tokenizer.json and SentencePiece .model tokenizers (pipeline mode)
#
# Every fixture is checked three ways:
#
# 1. ids: ``encode_with_offsets`` gives exactly ``encode``'s ids (same options).
# 2. reference: the offsets of ``tokenizers`` (``Encoding.offsets``, code points in its
#    Python API) for the tokenizer.json files and of ``sentencepiece``
#    (``encode(..., return_type="offset_mapping")``, code points for ``str`` input) for the
#    .model files, on texts without surrogates (neither library takes them). Where a
#    token's offsets differ, the difference must be one of these, by design
#    (``normalizers`` module notes, ``Tokenizer.encode_with_offsets``):
#
#    - group: characters normalized together (an NFC composite, a ``Replace`` match, a
#      grapheme the charsmap maps whole: ``normalize_aligned`` gives every output the
#      whole group) are covered whole, where ``tokenizers`` keeps only the first or
#      last of them. Rule: widening the reference span by every multi-character
#      normalizer span it meets, until nothing changes, gives ours.
#    - inserted (tokenizers): a token made only of inserted text (a prepended ``▁``, a
#      prefix space) is zero-width where it was inserted; ``tokenizers`` gives it the
#      character that follows. Rule: ours is ``(k, k)``, the reference starts at ``k``,
#      and the token is spelled only with ``▁``, ``Ġ`` or spaces.
#    - shared (sentencepiece): where one character's or group's output is split over
#      several pieces (``<0xXX>`` bytes of one character, ``'ǅ'`` -> ``'▁D'`` + ``'ž'``),
#      sentencepiece gives the character to the last of them and ends the others before
#      it; ours covers it in each, as a byte-level token covering a split character
#      does. Rule: the reference span extended by one character, then widened by
#      groups, gives ours.
#    - removed (sentencepiece): sentencepiece attaches characters its normalizer
#      removes (extra whitespace, controls mapped to nothing) to a neighbouring piece;
#      removed characters are in no span here. Rule: the reference span holds ours and
#      the text it adds on each side normalizes to nothing.
#
#    A sentencepiece reference span may first lose removed characters at its start
#    (``'\x7fǅ'``: removed, then shared).
# 3. properties: offsets are ints within the text, starts and ends never decrease; the
#    post-processor's special tokens (``add_special_tokens=True``) are ``(0, 0)`` around
#    the same offsets; and for BERT (BertNormalizer, lowercasing) the original slice of
#    every vocabulary token normalizes to the token's text.
# =========================================================================================

PIPELINE_HF = (
    "gpt2_tokenizer.json",
    "llama3_tokenizer.json",
    "mistral_7b_v1_tokenizer.json",
    "bert_minilm_tokenizer.json",
    "botchan_unigram_1000_tokenizer.json",
)
PIPELINE_SPM = (
    "mistral_7b_v1_tokenizer.model",
    "spm_botchan_en_bpe_1000.model",
    "spm_botchan_en_unigram_1000.model",
)
PIPELINE = PIPELINE_HF + PIPELINE_SPM

_pipeline_cache: dict[str, tuple[tokstream.Tokenizer, object]] = {}


def pipeline_pair(name: str) -> tuple[tokstream.Tokenizer, object]:
    """``(ours, reference)``: a ``tokenizers.Tokenizer`` or ``SentencePieceProcessor``."""
    if name not in _pipeline_cache:
        if name.endswith(".json"):
            path = fixture_file(f"hf/{name}")
            _pipeline_cache[name] = (tokstream.Tokenizer.from_file(path), hf_reference(path))
        else:
            spm = pytest.importorskip("sentencepiece")
            path = fixture_file(f"spm/{name}")
            ref = spm.SentencePieceProcessor(model_file=str(path))
            _pipeline_cache[name] = (tokstream.Tokenizer.from_sentencepiece(path), ref)
    return _pipeline_cache[name]


def _groups(tok, text: str) -> list[tuple[int, int]]:
    """The multi-character spans of the normalizer's alignment of ``text``."""
    normalizer = tok.pipeline.normalizer
    if normalizer is None:
        return []
    return sorted({s for s in normalizer.normalize_aligned(text)[1] if s[1] - s[0] > 1})


def _widen(span: tuple[int, int], groups: list[tuple[int, int]]) -> tuple[int, int]:
    a, b = span
    changed = True
    while changed:
        changed = False
        for s, e in groups:
            if s < b and e > a and (s < a or e > b):
                a, b, changed = min(a, s), max(b, e), True
    return a, b


def _explain_hf(tok, text, tid, ours, theirs, groups) -> str | None:
    if _widen(theirs, groups) == ours:
        return "group"
    if ours[0] == ours[1] == theirs[0] and set(tok.id_to_token(tid)) <= set("\u2581Ġ "):
        return "inserted"
    return None


def _explain_spm(tok, text, tid, ours, theirs, groups) -> str | None:
    normalize = tok.pipeline.normalizer.normalize
    a, b = ours
    c, d = theirs
    candidates = [theirs]
    if c < a and not normalize(text[c:a]):
        candidates.append((a, max(a, d)))  # removed characters first
    for c, d in candidates:
        if (c, d) == ours or _widen((c, d), groups) == ours:
            return "group"
        if _widen((c, min(d + 1, len(text))), groups) == ours:
            return "shared"
        if c <= a and b <= d and not normalize(text[c:a]) and not normalize(text[b:d]):
            return "removed"
    return None


def compare_with_reference(name: str, text: str, ids, offsets) -> None:
    """Check ours against the reference library (rules in the notes above)."""
    tok, ref = pipeline_pair(name)
    if name.endswith(".json"):
        enc = ref.encode(text, add_special_tokens=False)
        want_ids, want, explain = enc.ids, enc.offsets, _explain_hf
    else:
        got = ref.encode(text, return_type="offset_mapping")
        want_ids, want, explain = got["ids"], got["offsets"], _explain_spm
    assert_sequences_equal(ids, want_ids, what=f"{name}: ids", names=("tokstream", "reference"), text=text)
    groups = None
    for k, (tid, ours, theirs) in enumerate(zip(ids, offsets, map(tuple, want))):
        if ours == theirs:
            continue
        if groups is None:
            groups = _groups(tok, text)
        if explain(tok, text, tid, ours, theirs, groups) is None:
            raise AssertionError(
                f"{name}: token {k} of {len(ids)} ({tok.id_to_token(tid)!r}): ours {ours}, "
                f"reference {theirs}, not explained by the rules; "
                f"text[{max(0, ours[0] - 10)}:{ours[1] + 10}]={text[max(0, ours[0] - 10) : ours[1] + 10]!r}; "
                f"text={text[:200]!r}"
            )


def check_pipeline(tok, text: str, **kw):
    """ids equal ``encode``; offsets in range and monotone; post-processor tokens (0, 0)."""
    ids, offsets = tok.encode_with_offsets(text, **kw)
    assert ids == tok.encode(text, **kw), text[:200]
    assert len(offsets) == len(ids)
    for a, b in offsets:
        assert type(a) is int and type(b) is int
        assert 0 <= a <= b <= len(text), (a, b, text[:200])
    assert all(x[0] <= y[0] and x[1] <= y[1] for x, y in zip(offsets, offsets[1:])), (offsets, text[:200])
    processor = tok.pipeline.post_processor
    if processor is not None:
        with_ids, with_offsets = tok.encode_with_offsets(text, add_special_tokens=True, **kw)
        assert with_ids == tok.encode(text, add_special_tokens=True, **kw)
        before, after = processor.added_ids()
        assert with_ids == [*before, *ids, *after]
        assert with_offsets == [(0, 0)] * len(before) + offsets + [(0, 0)] * len(after)
    if "bert" in tok.name:
        check_bert_slices(tok, text, ids, offsets)
    return ids, offsets


def check_bert_slices(tok, text: str, ids, offsets) -> None:
    """The original slice of each vocabulary token normalizes to its text (less ``##``).

    Tokens that share a character (NFD splits ``'한'`` into three jamo, which WordPiece
    may give three tokens, each covering the syllable) are taken together: the slice of
    their joint span normalizes to their joined texts.
    """
    normalize = tok.pipeline.normalizer.normalize
    added = {t.id for t in tok.pipeline.added.tokens}  # [UNK] among them
    groups: list[tuple[int, int, list[int]]] = []
    for tid, (a, b) in zip(ids, offsets):
        if groups and a < groups[-1][1]:
            groups[-1] = (groups[-1][0], max(b, groups[-1][1]), groups[-1][2] + [tid])
        else:
            groups.append((a, b, [tid]))
    for a, b, members in groups:
        if added.intersection(members):
            continue
        spelling = "".join(tok.id_to_token(t).removeprefix("##") for t in members)
        # strip(): BertNormalizer pads a Chinese character with spaces.
        # encode replaces lone surrogates first (U+FFFD, which BERT's normalizer drops)
        assert normalize(replace_surrogates(text[a:b])).strip() == spelling, (spelling, a, b, text[:200])


def _reference_options(name: str) -> dict[str, object]:
    # tokenizers matches every added token; sentencepiece never matches control pieces.
    return {"allowed_special": "all"} if name.endswith(".json") else {"disallowed_special": ()}


def check_all(name: str, text: str) -> None:
    tok, _ = pipeline_pair(name)
    for kw in ({"allowed_special": "all"}, {"disallowed_special": ()}):
        ids, offsets = check_pipeline(tok, text, **kw)
        if kw == _reference_options(name) and not has_surrogates(text):
            compare_with_reference(name, text, ids, offsets)


PIPELINE_EXAMPLES = [
    "",
    " ",
    "Hello  world 😀 naïve",
    " x",
    "ﬁne Café\u0301 中文 [SEP]x  ",
    "a\u00a0b\x00c",
    "<s>hi</s> there [CLS]<|endoftext|>x <|begin_of_text|>",
    "  a  b  ",
    "\u3000x\u3000 y",
    "\x7fǅĀ Ⅻ ㍿ ｆｕｌｌ e\u0301\u0302 İstanbul ΑΣ",
    "\U00010fffz \U0001f468\u200d\U0001f469\u200d\U0001f467 🇺🇸",
    "\r\n\t\x0b \x0c\u2028\u200b\ufeff end",
    "don't 1234567 ١٢٣ ##ing ▁x <0x41>",
    "\ud800",
    "a\ud800b \ud83d\ude00 c\udc00",
]


@pytest.mark.slow
@pytest.mark.parametrize("text", PIPELINE_EXAMPLES, ids=repr)
@pytest.mark.parametrize("name", PIPELINE)
def test_pipeline_offsets_examples(name: str, text: str) -> None:
    check_all(name, text)


@pytest.mark.slow
@pytest.mark.parametrize("name", PIPELINE)
def test_pipeline_offsets_corpus_lines(name: str) -> None:
    corpora = ("corpus_botchan_en.txt", "corpus_wagahaiwa_nekodearu_ja.txt", "corpus_us_constitution_en.txt")
    for corpus in corpora:
        lines = fixture_text(f"corpora/{corpus}").splitlines()
        step = max(1, len(lines) // 100)
        for line in lines[::step][:100]:
            check_all(name, line[:400])


def test_pipeline_offsets_surrogates_index_the_original() -> None:
    """A surrogate pair joined into one character is covered as its two code points."""
    tok, _ = pipeline_pair("gpt2_tokenizer.json")
    ids, offsets = check_pipeline(tok, "a\ud83d\ude00b\ud800")
    assert ids == tok.encode("a😀b\ufffd")
    assert offsets[0] == (0, 1) and offsets[-1] == (4, 5)
    assert {o for o in offsets if 1 <= o[0] < 3} == {(1, 3)}


# Special literals of the fixtures, mixed into the hypothesis text.
_LITERALS = st.sampled_from(
    [
        "[CLS]",
        "[SEP]",
        "[UNK]",
        "<s>",
        "</s>",
        "<unk>",
        "<|endoftext|>",
        "<|begin_of_text|>",
        "  ",
        "ﬁ",
        "e\u0301",
        "Ⅻ",
        "ǅ",
        "\u3000",
        "\x7f",
        "▁",
    ]
)
_PIPELINE_TEXT = st.lists(st.one_of(adversarial_text(max_fragments=6), _LITERALS), max_size=4).map("".join)


@pytest.mark.slow
@pytest.mark.parametrize("names", [PIPELINE_HF, PIPELINE_SPM], ids=["tokenizer.json", "sentencepiece"])
@hyp_settings(300)
@given(text=_PIPELINE_TEXT)
def test_pipeline_offsets_hypothesis(names: tuple[str, ...], text: str) -> None:
    for name in names:
        check_all(name, text)


# ---------------------------------------------------------- pieces the model can't spell


def _tiny_bpe(tmp_path: Path, **model: object) -> tuple[tokstream.Tokenizer, object]:
    tokenizers = pytest.importorskip("tokenizers")
    vocab = {"<unk>": 0, "a": 1, "b": 2, "ab": 3, "c": 4, "abc": 5}
    merges = [["a", "b"], ["ab", "c"]]
    if model.get("continuing_subword_prefix"):
        vocab = {"<unk>": 0, "a": 1, "##b": 2, "ab": 3, "##c": 4, "abc": 5, "b": 6, "c": 7}
        merges = [["a", "##b"], ["ab", "##c"]]
    if model.get("end_of_word_suffix"):
        vocab = {"<unk>": 0, "a": 1, "b": 2, "ab": 3, "c</w>": 4, "abc</w>": 5, "b</w>": 6, "a</w>": 7}
        merges = [["a", "b"], ["ab", "c</w>"]]
    if model.get("byte_fallback"):
        vocab.update({f"<0x{b:02X}>": 100 + b for b in range(0xC0, 0x100)})  # not all bytes
    obj = {
        "version": "1.0",
        "added_tokens": [],
        "normalizer": None,
        "pre_tokenizer": {"type": "WhitespaceSplit"},
        "post_processor": None,
        "decoder": None,
        "model": {"type": "BPE", "unk_token": "<unk>", "vocab": vocab, "merges": merges, **model},
    }
    path = tmp_path / "tokenizer.json"
    import json

    path.write_text(json.dumps(obj), "utf-8")
    return tokstream.Tokenizer.from_file(path), tokenizers.Tokenizer.from_file(str(path))


@pytest.mark.parametrize(
    "model",
    [
        {"fuse_unk": False},
        {"fuse_unk": True},
        {"unk_token": None},
        {"continuing_subword_prefix": "##"},
        {"end_of_word_suffix": "</w>"},
        {"byte_fallback": True, "fuse_unk": True},
    ],
    ids=repr,
)
def test_unknown_and_affixed_tokens_match_tokenizers(tmp_path: Path, model: dict[str, object]) -> None:
    """BPE tokens matched by spelling: unknown runs, ``##`` prefixes, ``</w>`` suffixes,
    byte fallback next to unknowns: exactly ``tokenizers``' offsets (no normalizer).

    Without an unknown token BPE drops the characters it cannot spell; ``tokenizers``
    then counts only the kept characters, so its offsets shift (``"abc"`` in
    ``"xyabcz"`` at ``(0, 3)``). Rule checked there instead: each token's slice, less
    the dropped characters, is its text.
    """
    ours, ref = _tiny_bpe(tmp_path, **model)
    for text in ["abc", "xyabcz abxxc", "aéb ab\u00e9\u00e9c", "xx", "cab ba", "ＸabＹＹc", "x<unk>a"]:
        ids, offsets = check_pipeline(ours, text)
        enc = ref.encode(text)
        assert ids == enc.ids, text
        if "unk_token" in model:
            spellings = [ours.id_to_token(i).removeprefix("##").removesuffix("</w>") for i in ids]
            kept = ["".join(c for c in text[a:b] if c in "abc") for a, b in offsets]
            assert kept == spellings, text
        else:
            assert offsets == [tuple(o) for o in enc.offsets], (text, model)


# ---------------------------------------------------------------- pre_tokenize_spans

_PRE_TOKENIZERS = [
    pt.ByteLevel(),
    pt.ByteLevel(add_prefix_space=False),
    pt.ByteLevel(use_regex=False),
    pt.Sequence([pt.Split(pt.PATTERNS["llama3"], "Isolated"), pt.ByteLevel(add_prefix_space=False, use_regex=False)]),
    pt.Metaspace(),
    pt.Metaspace(prepend_scheme="first"),
    pt.Metaspace(prepend_scheme="never", split=False),
    pt.Metaspace(replacement="_"),
    pt.BertPreTokenizer(),
    pt.Whitespace(),
    pt.WhitespaceSplit(),
    pt.Digits(),
    pt.Digits(individual_digits=True),
    *[pt.Punctuation(b) for b in ("Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous")],
    *[pt.Split(r"\s+", b, invert=inv) for b in ("Removed", "MergedWithNext", "Contiguous") for inv in (False, True)],
    pt.Split(" ", "MergedWithPrevious", is_regex=False),
    pt.Sequence([pt.WhitespaceSplit(), pt.Digits(), pt.Punctuation()]),
]


def _check_piece_spans(pre, text: str, starts: set[int], piece: str, spans) -> None:
    """Each run of a piece's characters with one span ``(k, k + 1)`` is ``text[k]`` as
    the pre-tokenizer spells it; a zero-width run is inserted text, at the start of an
    input piece (``starts``)."""
    assert len(spans) == len(piece)
    members = getattr(pre, "pretokenizers", [pre])
    byte_level = any(isinstance(p, pt.ByteLevel) for p in members)
    rep = next((p.replacement for p in members if isinstance(p, pt.Metaspace)), None)
    runs: list[tuple[tuple[int, int], str]] = []
    for c, span in zip(piece, spans):
        if (
            runs
            and runs[-1][0] == span
            and (span[0] == span[1] or byte_level or (rep is not None and text[span[0]] == " "))
        ):
            runs[-1] = (span, runs[-1][1] + c)
        else:
            runs.append((span, c))
    for (a, b), run in runs:
        if a == b:
            assert run in ("Ġ", rep) and a in starts, (run, a, text)
            continue
        assert b == a + 1
        char = text[a]
        if byte_level:
            expected = bytes_to_proxy(char.encode("utf-8", "surrogatepass"))
        elif rep is not None and char == " ":
            expected = rep
        else:
            expected = char
        assert run == expected, (run, char, text)


@hyp_settings(300)
@given(text=adversarial_text(max_fragments=8), cut=st.integers(0, 40))
def test_pre_tokenize_spans_agree(text: str, cut: int) -> None:
    """Same pieces as ``pre_tokenize``; spans checked character by character."""
    cut = min(cut, len(text))
    inputs = [text[:cut], text[cut:]]
    spanned_inputs = [
        (inputs[0], [(k, k + 1) for k in range(cut)]),
        (inputs[1], [(k, k + 1) for k in range(cut, len(text))]),
    ]
    for pre in _PRE_TOKENIZERS:
        got = pre.pre_tokenize_spans(spanned_inputs)
        assert [p for p, _ in got] == pre.pre_tokenize(inputs), pre
        for piece, spans in got:
            _check_piece_spans(pre, text, {0, cut}, piece, spans)
        starts = [s for _, spans in got for s in spans]
        assert starts == sorted(starts)


def test_located_spans() -> None:
    pieces = [("ab cd", [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]), ("cd", [(9, 10), (10, 11)])]
    assert located_spans(lambda ps: [s for p in ps for s in p.split(" ")], pieces) == [
        ("ab", [(0, 1), (1, 2)]),
        ("cd", [(3, 4), (4, 5)]),
        ("cd", [(9, 10), (10, 11)]),
    ]
    with pytest.raises(NotImplementedError, match="pre_tokenize_spans"):
        located_spans(lambda ps: [p.upper() for p in ps], pieces)

"""Added tokens (``tokstream.added_vocabulary``) against ``tokenizers`` 0.23.

Every fixture ``tokenizer.json`` is extended with sets of added tokens (``CONFIGS``)
that cover ``normalized`` true and false, ``lstrip``, ``rstrip``, ``single_word`` and
``special``, alone and together (``"every"``: all 32 combinations at once), and literals that interact (a raw literal inside a
normalized one, a rejected ``single_word`` match shadowing a shorter literal, content
the model's vocabulary already has). Hypothesis builds text around the literals: a
literal repeated, adjacent, in another case, cut short, with spaces, newlines and
other Unicode around it. For each text:

- ids equal ``tokenizers``' (``encode(..., add_special_tokens=False)``), with the
  specials allowed, and with them as plain text (``encode_special_tokens``);
- offsets equal its offsets, up to the by-design differences ``test_offsets`` states
  (characters normalized together covered whole, inserted characters zero-width);
- decoding the ids equals its ``decode``, with and without ``skip_special_tokens``;
- streaming stays exact: ``stable_boundary`` is sound and ``StreamEncoder`` joins to
  ``encode`` for any chunking.

Hand-picked cases pin the reference's quirks (a literal starting in the whitespace an
``rstrip`` match took, an empty content, content that normalizes to nothing) and the
Unicode classes behind ``single_word`` / ``lstrip`` are checked on every code point.
"""

from __future__ import annotations

import functools
import json

import pytest
from helpers import HF_FILES, assert_sequences_equal, fixture_file
from hypothesis import example, given
from hypothesis import strategies as st
from strategies import adversarial_text, hyp_settings
from test_offsets import _explain_hf, _groups

import tokstream
from tokstream import StreamEncoder
from tokstream import added_vocabulary as av
from tokstream.added_vocabulary import AddedToken, AddedVocabulary
from tokstream.errors import TokstreamError

tokenizers = pytest.importorskip("tokenizers")

#: Sets of added tokens (each entry's options; ``content`` and the flags).
CONFIGS: dict[str, list[dict[str, object]]] = {
    # transformers' add_tokens default (normalized, not special), a raw literal inside
    # a normalized one, a content with a space, a special of either kind.
    "normalized": [
        {"content": "<tool>", "normalized": True},
        {"content": "Kuća", "normalized": True},
        {"content": "a b", "normalized": True},
        {"content": "ool>", "normalized": False},
        {"content": "<|sn|>", "normalized": True, "special": True},
        {"content": "<|sp|>", "normalized": False, "special": True},
    ],
    "strip": [
        {"content": "<ls>", "lstrip": True},
        {"content": "<rs>", "rstrip": True},
        {"content": "<lr>", "lstrip": True, "rstrip": True, "special": True},
        {"content": "<nl>", "lstrip": True, "normalized": True},
        {"content": "<nr>", "rstrip": True, "normalized": True},
    ],
    # "ask" is a vocabulary token in most fixtures (it then keeps that id).
    "word": [
        {"content": "mask", "single_word": True},
        {"content": "ask"},
        {"content": "Tok", "single_word": True, "normalized": True},
        {"content": "<w>", "single_word": True, "lstrip": True, "rstrip": True, "special": True},
    ],
}

_FLAGS = ("normalized", "lstrip", "rstrip", "single_word", "special")
#: Every combination of the five flags, one literal each; half the literals have word
#: characters at their ends (where ``single_word`` and the strips meet words), half
#: ``<...>``; an uppercase and an accented letter make ``normalized`` matter (BERT).
CONFIGS["every"] = [
    {
        "content": f"Ç{mask:02d}" if mask % 4 < 2 else f"<Ç{mask:02d}>",
        **{flag: bool(mask >> bit & 1) for bit, flag in enumerate(_FLAGS)},
    }
    for mask in range(2 ** len(_FLAGS))
]


def _entry(options: dict[str, object], tid: int) -> dict[str, object]:
    entry: dict[str, object] = {
        "id": tid,
        "content": "",
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": False,
        "special": False,
    }
    entry.update(options)
    return entry


def extended_json(fixture: str, entries: list[dict[str, object]]) -> str:
    """The fixture's ``tokenizer.json`` with ``entries`` appended to its added tokens."""
    doc = json.loads(fixture_file(f"hf/{fixture}").read_text(encoding="utf-8"))
    doc["truncation"] = doc["padding"] = None
    first = max([len(doc["model"]["vocab"]), *(t["id"] + 1 for t in doc["added_tokens"])])
    doc["added_tokens"] += [_entry(options, first + k) for k, options in enumerate(entries)]
    return json.dumps(doc, ensure_ascii=False)


@functools.cache
def pair(fixture: str, config: str) -> tuple[tokstream.Tokenizer, object]:
    """``(ours, tokenizers')`` for a fixture extended with ``CONFIGS[config]``."""
    text = extended_json(fixture, CONFIGS[config])
    return tokstream.Tokenizer.from_str(text, name=f"{fixture}+{config}"), tokenizers.Tokenizer.from_str(text)


@functools.cache
def plain_reference(fixture: str, config: str) -> object:
    """``tokenizers`` with its specials as plain text (``encode_special_tokens``)."""
    ref = tokenizers.Tokenizer.from_str(extended_json(fixture, CONFIGS[config]))
    ref.encode_special_tokens = True
    return ref


# ------------------------------------------------------------------------ text

_AROUND = [" ", "  ", "\n", "\n\n", "\t", " \n ", "\u3000", "\xa0", "\u2009", "x", "a", "b", "_", "1", "é", "中"]
_AROUND += ["😀", "e\u0301", "İ", "ß", ".", ",", "-", "'s", "word", "Hello", "\u2581", "##", "[", "<", ">", "|"]
_FIXTURE_SPECIALS = ["[CLS]", "[SEP]", "[MASK]", "<s>", "</s>", "<unk>", "<|endoftext|>", "<|begin_of_text|>"]


def _variants(literal: str) -> list[str]:
    """A literal as it is, in other cases, and cut short at either end."""
    out = [literal, literal.upper(), literal.lower(), literal.title(), literal.swapcase()]
    out += [literal[:k] for k in range(1, len(literal))] + [literal[k:] for k in range(1, len(literal))]
    return out


def texts(config: str) -> st.SearchStrategy[str]:
    """Text around the config's literals (module notes); no surrogates, which
    ``tokenizers`` cannot take."""
    literals = [str(t["content"]) for t in CONFIGS[config]]
    pieces = sorted({v for lit in literals for v in _variants(lit)})
    fragment = st.one_of(
        st.sampled_from(literals),
        st.sampled_from(pieces),
        st.sampled_from(_AROUND),
        st.sampled_from(_FIXTURE_SPECIALS),
        st.lists(st.sampled_from(literals), min_size=2, max_size=4).map("".join),
        adversarial_text(max_fragments=3, surrogates_ok=False),
    )
    return st.lists(fragment, max_size=12).map("".join)


# ---------------------------------------------------------------- comparison


def check_against_reference(fixture: str, config: str, text: str) -> None:
    tok, ref = pair(fixture, config)
    what = f"{fixture}+{config}"
    enc = ref.encode(text, add_special_tokens=False)
    ids, offsets = tok.encode_with_offsets(text, allowed_special="all")
    show = tok.id_to_token
    assert_sequences_equal(ids, enc.ids, what=f"{what}: ids", names=("tokstream", "tokenizers"), show=show, text=text)
    assert tok.encode(text, allowed_special="all") == ids
    groups = None
    for k, (tid, ours, theirs) in enumerate(zip(ids, offsets, map(tuple, enc.offsets))):
        if ours == theirs:
            continue
        if groups is None:
            groups = _groups(tok, text)
        if _explain_hf(tok, text, tid, ours, theirs, groups) is None and not _inserted_whitespace(
            tok, text, ours, theirs
        ):
            raise AssertionError(f"{what}: token {k} ({show(tid)!r}) ours {ours}, tokenizers {theirs}; text={text!r}")
    for skip in (False, True):
        assert tok.decode(ids, skip_special_tokens=skip) == ref.decode(enc.ids, skip_special_tokens=skip), (
            what,
            skip,
            text,
        )
    plain = plain_reference(fixture, config).encode(text, add_special_tokens=False).ids
    assert_sequences_equal(
        tok.encode(text, disallowed_special=()), plain, what=f"{what}: specials as text", show=show, text=text
    )


def _inserted_whitespace(tok, text: str, ours: tuple[int, int], theirs: tuple[int, int]) -> bool:
    """An ``lstrip`` / ``rstrip`` token took whitespace the normalizer inserted (BERT pads
    a Chinese character with spaces): that whitespace is zero-width here, where
    ``tokenizers`` gives it the character it was inserted beside. Ours then lies in
    theirs, which adds only characters whose normalization inserts whitespace."""
    (a, b), (c, d) = ours, theirs
    normalize = tok.pipeline.normalizer.normalize if tok.pipeline.normalizer is not None else str
    extra = text[c:a] + text[b:d]
    return c <= a <= b <= d and bool(extra) and all(normalize(x).strip() != normalize(x) != " " for x in extra)


CASES = [(fixture, config) for fixture in HF_FILES for config in CONFIGS]


@pytest.mark.slow
@pytest.mark.parametrize(("fixture", "config"), CASES, ids=[f"{f.split('_')[0]}-{c}" for f, c in CASES])
@hyp_settings(300)
@given(data=st.data())
def test_matches_tokenizers(fixture: str, config: str, data: st.DataObject) -> None:
    text = data.draw(texts(config), label="text")
    check_against_reference(fixture, config, text)


# Cases that broke an implementation (the issue's examples first).
EXAMPLES = [
    ("mistral_7b_v1_tokenizer.json", "normalized", "a <tool> b"),  # "▁<tool>" in "▁a▁<tool>▁b"
    ("mistral_7b_v1_tokenizer.json", "normalized", "<tool><tool>"),  # only the first follows a ▁
    ("mistral_7b_v1_tokenizer.json", "normalized", " kuća x"),
    ("bert_minilm_tokenizer.json", "normalized", "a <TOOL> b KUĆA"),  # lowercased, accents stripped
    ("bert_minilm_tokenizer.json", "normalized", "<|SN|> <|sn|> A B"),
    ("botchan_unigram_1000_tokenizer.json", "normalized", "x<tool>a b"),
    ("gpt2_tokenizer.json", "normalized", "<tool>"),  # the raw "ool>" is matched first
    ("gpt2_tokenizer.json", "word", "xmask mask masks"),  # a rejected match hides "ask"
    ("llama3_tokenizer.json", "word", "Tok tok_ Tok2 (Tok)"),
    ("gpt2_tokenizer.json", "word", "a <w> b<w>c\n<w>\n"),
    ("gpt2_tokenizer.json", "strip", "a  <ls>  <rs>  b<lr>\n<nl> <nr> x"),
    ("bert_minilm_tokenizer.json", "strip", "x <NL>  <nr>\u3000y"),
    ("bert_minilm_tokenizer.json", "strip", "<NR>中 中<NL>"),  # whitespace BERT inserts
    ("mistral_7b_v1_tokenizer.json", "strip", " <nl><rs> <nr>  z"),
]


@pytest.mark.parametrize(("fixture", "config", "text"), EXAMPLES)
def test_examples(fixture: str, config: str, text: str) -> None:
    check_against_reference(fixture, config, text)


def test_issue_example_ids() -> None:
    """The issue's report, with the literal ids ``tokenizers`` gives."""
    text = extended_json("mistral_7b_v1_tokenizer.json", [{"content": "<tool>", "normalized": True}])
    tok, ref = tokstream.Tokenizer.from_str(text), tokenizers.Tokenizer.from_str(text)
    assert ref.encode("a <tool> b", add_special_tokens=False).ids == [264, 32000, 287]
    assert tok.encode("a <tool> b") == [264, 32000, 287]
    assert tok.encode_with_offsets("a <tool> b")[1][1] == (1, 8)


# ---------------------------------------------------------------- decoding


@pytest.mark.parametrize(("fixture", "config"), CASES, ids=[f"{f.split('_')[0]}-{c}" for f, c in CASES])
def test_decode_added_tokens(fixture: str, config: str) -> None:
    """Each added token alone, twice, and after a word, decoded as ``tokenizers``
    decodes it (a normalized token through its normalized content)."""
    tok, ref = pair(fixture, config)
    word = ref.encode("a", add_special_tokens=False).ids
    for entry in CONFIGS[config]:
        tid = ref.token_to_id(str(entry["content"]))
        assert tok.token_to_id(str(entry["content"])) == tid
        for ids in ([tid], [tid, tid], [*word, tid], [tid, *word]):
            for skip in (False, True):
                assert tok.decode(ids, skip_special_tokens=skip) == ref.decode(ids, skip_special_tokens=skip), (
                    entry,
                    ids,
                    skip,
                )
        assert tok.id_to_token(tid) == ref.id_to_token(tid)


def _byte_level_normalized() -> str:
    """GPT-2 with tokenizers' ``ByteLevel`` normalizer (and a ByteLevel pre-tokenizer
    that only splits), plus normalized added tokens."""
    doc = json.loads(extended_json("gpt2_tokenizer.json", CONFIGS["normalized"]))
    doc["normalizer"] = {"type": "ByteLevel"}
    doc["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
    return json.dumps(doc, ensure_ascii=False)


def test_decode_under_byte_level_normalizer() -> None:
    """The issue's example: "kuća" decodes as itself, not as byte-level proxies."""
    text = _byte_level_normalized()
    tok, ref = tokstream.Tokenizer.from_str(text), tokenizers.Tokenizer.from_str(text)
    tid = ref.token_to_id("Kuća")
    assert ref.decode([tid]) == "Kuća"
    assert tok.decode([tid]) == "Kuća"
    assert tok.token_bytes(tid) == "Kuća".encode()
    for sample in ("Kuća <tool> kuća", "x<|sn|>y <|sp|>", "a b"):
        ids = ref.encode(sample, add_special_tokens=False).ids
        assert tok.encode(sample, allowed_special="all") == ids
        for skip in (False, True):
            assert tok.decode(ids, skip_special_tokens=skip) == ref.decode(ids, skip_special_tokens=skip)


def test_normalized_special_is_not_skipped_when_spelled_otherwise() -> None:
    """``tokenizers`` skips an id when its decoder spelling is a special's content: a
    normalized special that the normalizer respells ("▁<|sn|>" under Mistral) stays."""
    tok, ref = pair("mistral_7b_v1_tokenizer.json", "normalized")
    sn, sp = ref.token_to_id("<|sn|>"), ref.token_to_id("<|sp|>")
    assert ref.decode([sn, sp], skip_special_tokens=True) == "<|sn|>"
    assert tok.decode([sn, sp], skip_special_tokens=True) == "<|sn|>"
    assert sp in tok.vocab.special_ids and sn not in tok.vocab.special_ids


# ------------------------------------------------------------------ streaming

_CONTINUATIONS = st.one_of(
    st.sampled_from(["ol>", "l>", ">", "ća", "b", " b", "  ", "\n", "x", "sk", "ask", "s>", "|>", "n|>", "ok", " "]),
    adversarial_text(max_fragments=2, surrogates_ok=False),
)


@pytest.mark.slow
@pytest.mark.parametrize(("fixture", "config"), CASES, ids=[f"{f.split('_')[0]}-{c}" for f, c in CASES])
@hyp_settings(150)
@given(data=st.data())
def test_stable_boundary_is_sound(fixture: str, config: str, data: st.DataObject) -> None:
    """``encode(text[:b])`` is a prefix of ``encode(text + s)``, and the rest is the
    continuation ``encode_stable`` names."""
    tok, _ = pair(fixture, config)
    text = data.draw(texts(config), label="text")
    s = data.draw(_CONTINUATIONS, label="s")
    b = tok.stable_boundary(text, allowed_special="all")
    head = tok.encode(text[:b], allowed_special="all")
    full = tok.encode(text + s, allowed_special="all")
    assert full[: len(head)] == head, (text[:b], text[b:], s)
    found = tok.encode_stable(text, tail=False, allowed_special="all")
    rest_text = text[b:] + s
    rest = (
        tok.encode_continued(rest_text, allowed_special="all")
        if found.continued
        else tok.encode(rest_text, allowed_special="all")
    )
    assert full == head + rest, (text[:b], text[b:], s)


@pytest.mark.slow
@pytest.mark.parametrize(("fixture", "config"), CASES, ids=[f"{f.split('_')[0]}-{c}" for f, c in CASES])
@hyp_settings(100)
@given(data=st.data())
def test_stream_encoder_joins_to_encode(fixture: str, config: str, data: st.DataObject) -> None:
    tok, _ = pair(fixture, config)
    text = data.draw(texts(config), label="text")
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6), label="cuts"))
    enc = StreamEncoder(tok, allowed_special="all", batch=1)
    ids: list[int] = []
    for a, b in zip([0, *cuts], [*cuts, len(text)]):
        ids += enc.push(text[a:b])
    ids += enc.finish()
    assert ids == tok.encode(text, allowed_special="all")


@pytest.mark.parametrize(
    ("fixture", "text", "rest"),
    [
        ("bert_minilm_tokenizer.json", "see the <TO", "OL> now"),  # completes after lowercasing
        ("mistral_7b_v1_tokenizer.json", "x a", " b c"),  # "▁a▁b" spans the space
        ("mistral_7b_v1_tokenizer.json", "x <tool> y <to", "ol>"),
        ("botchan_unigram_1000_tokenizer.json", "one Ku", "ća two"),
        # The plain rule cuts before the tab; the piece after "a b" opens with a ▁.
        ("botchan_unigram_1000_tokenizer.json", "<tool>a b\t ", "ol>"),
    ],
)
def test_normalized_literal_is_held(fixture: str, text: str, rest: str) -> None:
    """Text that may still complete a normalized literal, in normalized text, stays
    open: the boundary is before it, and what follows it encodes as ``tokenizers``'
    rest of the ids."""
    tok, ref = pair(fixture, "normalized")
    full = ref.encode(text + rest, add_special_tokens=False).ids
    assert tok.encode(text + rest, allowed_special="all") == full
    found = tok.encode_stable(text, tail=False, allowed_special="all")
    head, b = found.ids, found.boundary
    assert full[: len(head)] == head, (text[:b], text[b:])
    more = text[b:] + rest
    tail = (
        tok.encode_continued(more, allowed_special="all")
        if found.continued
        else tok.encode(more, allowed_special="all")
    )
    assert head + tail == full, (text[:b], text[b:])


# ------------------------------------------------------------ the reference's rules


def _gpt2_with(entries: list[dict[str, object]]) -> tuple[tokstream.Tokenizer, object]:
    text = extended_json("gpt2_tokenizer.json", entries)
    return tokstream.Tokenizer.from_str(text), tokenizers.Tokenizer.from_str(text)


@pytest.mark.slow
@pytest.mark.parametrize("text", ["<a>   x", "<a>     x", "<a>  ", "y <a>  <a>   "])
def test_literal_inside_rstrip_whitespace(text: str) -> None:
    """A literal that starts in the whitespace an ``rstrip`` match took is matched too,
    and the search goes on after it (the pieces overlap), as in ``tokenizers``."""
    tok, ref = _gpt2_with([{"content": "<a>", "rstrip": True}, {"content": "  "}])
    enc = ref.encode(text, add_special_tokens=False)
    assert tok.encode_with_offsets(text) == (enc.ids, enc.offsets)


def test_empty_content_is_skipped_as_tokenizers_does() -> None:
    """An entry with empty content is no token and takes no id; the next one gets the
    id it would have had without it. Text encodes as without it, in linear time."""
    entries = [{"content": ""}, {"content": "<x>"}, {"content": "", "special": True}, {"content": "<y>"}]
    tok, ref = _gpt2_with(entries)
    assert tok.n_vocab == ref.get_vocab_size() == 50259
    assert tok.pipeline.to_json()["added_tokens"] == json.loads(ref.to_str())["added_tokens"]
    for text in ["", "ab <x><y>", "x" * 100_000]:
        assert tok.encode(text) == ref.encode(text).ids
    with pytest.raises(TokstreamError, match="empty content"):
        AddedVocabulary([AddedToken(5, "")])


def test_content_normalizing_to_nothing_is_refused() -> None:
    """BERT's normalizer deletes control characters, so a normalized "\x01" token's
    literal is empty: ``tokenizers`` then cuts the text between every two characters
    and panics on non-ASCII text. We refuse the file, naming the entry."""
    text = extended_json("bert_minilm_tokenizer.json", [{"content": "\x01", "normalized": True}])
    ref = tokenizers.Tokenizer.from_str(text)
    assert ref.encode("hello", add_special_tokens=False).tokens == ["h", "e", "l", "l", "o"]
    with pytest.raises(tokstream.TokenizerFileError, match=r"added_tokens\[5\]: .*empty text"):
        tokstream.Tokenizer.from_str(text)
    # Not normalized, it is an ordinary literal.
    text = extended_json("bert_minilm_tokenizer.json", [{"content": "\x01", "normalized": False}])
    tok, ref = tokstream.Tokenizer.from_str(text), tokenizers.Tokenizer.from_str(text)
    for sample in ["a\x01b", "x y", "\x01", "日本\x01語"]:
        assert tok.encode(sample) == ref.encode(sample, add_special_tokens=False).ids


@pytest.mark.slow
def test_word_and_space_classes_match_rust_on_every_code_point() -> None:
    """``single_word`` looks for Rust's ``\\w`` beside a match, ``lstrip`` takes Rust's
    ``\\s``: checked on every code point through ``tokenizers`` itself."""
    from tokenizers import AddedToken as RefAddedToken
    from tokenizers.models import WordLevel

    word = tokenizers.Tokenizer(WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    word.add_tokens([RefAddedToken("<x>", single_word=True, normalized=False)])
    strip = tokenizers.Tokenizer(WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    strip.add_tokens([RefAddedToken("<x>", lstrip=True, normalized=False)])
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    before = word.encode_batch([c + "<x>" for c in chars])
    after = word.encode_batch(["<x>" + c for c in chars])
    stripped = strip.encode_batch([c + "<x>" for c in chars])
    wrong_word = [
        c
        for c, b, a in zip(chars, before, after)
        if (1 not in b.ids) != av.is_word_char(c) or (1 in a.ids) == av.is_word_char(c)
    ]
    assert not wrong_word, [hex(ord(c)) for c in wrong_word[:20]]
    wrong_space = [c for c, e in zip(chars, stripped) if (e.offsets[-1][0] == 0) != (c in av.WHITE_SPACE)]
    assert not wrong_space, [hex(ord(c)) for c in wrong_space[:20]]


@example(text="xmask ask")
@given(text=texts("word"))
@hyp_settings(200)
def test_options_without_a_model(text: str) -> None:
    """The matcher alone against ``tokenizers``' on a word-level model (each piece of
    plain text one unknown token), so every id and offset is the added vocabulary's."""
    from tokenizers import AddedToken as RefAddedToken
    from tokenizers.models import WordLevel

    entries = [
        AddedToken(1, "mask", single_word=True),
        AddedToken(2, "ask"),
        AddedToken(3, "<w>", lstrip=True, rstrip=True),
        AddedToken(4, "Tok", single_word=True, lstrip=True),
    ]
    ref = tokenizers.Tokenizer(WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    ref.add_tokens(
        [
            RefAddedToken(t.content, single_word=t.single_word, lstrip=t.lstrip, rstrip=t.rstrip, normalized=False)
            for t in entries
        ]
    )
    matcher = AddedVocabulary(entries).matcher(frozenset())
    assert matcher is not None
    enc = ref.encode(text)
    ours = [(a, b, t.id if t is not None else 0) for a, b, t in matcher.spans(text)]
    assert [(a, b) for a, b, _ in ours] == enc.offsets
    assert [t for _, _, t in ours] == enc.ids

"""``Tokenizer.stable_boundary``: sound for every fixture tokenizer (the ids of
``text[:b]`` are a prefix of the ids of ``text + s`` for adversarial ``s``), the
continuation it implies is exact, and it is tight where the rules say so.

The reference is our own ``encode``, which the differential suites pin to tiktoken,
``tokenizers`` and ``sentencepiece``; nothing here is a hard-coded id list.
"""

from __future__ import annotations

import pytest
import regex
from helpers import TOKENIZER_IDS, fixture_tokenizer
from hypothesis import example, given
from hypothesis import strategies as st
from strategies import adversarial_text, hyp_settings

from tokstream.stability import WHITESPACE

# Continuations chosen to undo a cut: contraction tails, letters that extend a word,
# whitespace that regroups a run, combining marks and joiners that extend a cluster,
# digits that regroup a number, and the pieces of special-token literals.
_DANGER = [
    "'re",
    "'ll",
    "'s",
    "re",
    "ll",
    "e",
    "s",
    "t",
    "x",
    "X",
    "\u0301",
    "\u0308",
    "\u200d\U0001f466",
    "\U0001f3fd",
    "\n",
    "\r\n",
    "\n\n",
    " ",
    "  ",
    "\t",
    "\u3000",
    "\xa0",
    "1",
    "23",
    "456",
    ".",
    "!",
    "?!",
    "<|endoftext|>",
    "|>",
    "endoftext|>",
    "_text|>",
    "end_of_text|>",
    "</s>",
    "s>",
    "[SEP]",
    "SEP]",
    "##",
    "\u2581",
    "d",
    "abc",
    "xyz",
    "DEF",
    "日",
    "ǆ",
    "\u3099",
    "\u1161",
    "\u11a8",
    "ſt",
    "ﬁ",
    "Σ",
    "ς",
    " world",
    "\udc00",
    "\ude00",
]
continuations = st.one_of(
    st.sampled_from(_DANGER),
    st.lists(st.sampled_from(_DANGER), min_size=1, max_size=4).map("".join),
    adversarial_text(max_fragments=3),
)
texts = st.one_of(
    adversarial_text(),
    st.lists(
        st.sampled_from(
            _DANGER
            + [
                "a",
                "b",
                " a",
                "don",
                "I",
                "<|",
                "<|endof",
                "<|end_of",
                "[SE",
                "</",
                "日本",
                "ABC",
                "Ab",
                "ÉTÉ",
                "ǅ",
                "ʰ",
                "1",
            ]
        ),
        max_size=10,
    ).map("".join),
)


def _check(tok, text: str, s: str, **options) -> None:
    b = tok.stable_boundary(text, **options)
    assert 0 <= b <= len(text)
    head = tok.encode(text[:b], **options)
    full = tok.encode(text + s, **options)
    assert full[: len(head)] == head, (text[:b], text[b:], s)
    # The stronger property the streaming encoder relies on: the rest is the
    # continuation's encoding.
    found = tok.encode_stable(text, tail=False, **options)
    assert found.boundary == b
    rest = tok.encode_continued(text[b:] + s, **options) if found.continued else tok.encode(text[b:] + s, **options)
    assert full == head + rest, (text[:b], text[b:], s)


@pytest.mark.slow
@pytest.mark.parametrize("tid", TOKENIZER_IDS)
@hyp_settings(300)
@given(text=texts, s=continuations)
@example(text="I don'", s="re")
@example(text="don'r", s="e")
@example(text="dog'", s="re")
@example(text="end.\n\n", s="Next")
@example(text="end]\n\nN", s="ext")
@example(text="x \n  \n w", s="ord")
@example(text="a\n\n  B", s="C")
@example(text="a  ", s="b")
@example(text="a\n  ", s="\n")
@example(text="x <|endof", s="text|>")
@example(text="\ud83d", s="\ude00")
@example(text="e", s="\u0301")
@example(text="12", s="3")
@example(text="ΑΣ", s="Α")
@example(text="x 日本ABC", s="d")
@example(text="Ωμέγα ΔΕΛΤΑ", s="ω")
def test_sound_plain(tid: str, text: str, s: str) -> None:
    """Special literals are plain text (disallowed_special=())."""
    _check(fixture_tokenizer(tid), text, s, disallowed_special=())


@pytest.mark.slow
@pytest.mark.parametrize("tid", ["cl100k_base", "o200k_base", "r50k_base"])
@hyp_settings(300)
@given(text=texts, s=continuations)
@example(text="x 日本ABC", s="d")
@example(text="ÉTÉ 本ABC", s="def")
@example(text="don'", s="t")
def test_sound_at_the_piece_level(tid: str, text: str, s: str) -> None:
    """The rules are about regex pieces: the pieces of ``text[:b]`` are the first
    pieces of ``text + s``. Stronger than comparing ids, where BPE often hides a
    changed piece boundary (no token spans "本A")."""
    tok = fixture_tokenizer(tid)
    if any("\ud800" <= c <= "\udfff" for c in text + s):
        return  # encode replaces surrogates before splitting
    b = tok.stable_boundary(text, disallowed_special=())
    split = tok.pipeline.regex_split.split_exact
    head = split(text[:b])
    assert split(text + s)[: len(head)] == head, (text[:b], text[b:], s)


@pytest.mark.slow
@pytest.mark.parametrize("tid", TOKENIZER_IDS)
@hyp_settings(150)
@given(text=texts, s=continuations)
@example(text="x <|endof", s="text|>")
@example(text="a <|end_of_text|> b", s="c")
@example(text="a</s", s=">")
@example(text="hi [SE", s="P]")
def test_sound_allowed_specials(tid: str, text: str, s: str) -> None:
    """Special literals split the text (allowed_special="all")."""
    _check(fixture_tokenizer(tid), text, s, allowed_special="all")


@pytest.mark.parametrize("tid", TOKENIZER_IDS)
def test_sound_on_corpus_prefixes(tid: str, read_corpus) -> None:
    """Every prefix of a real paragraph, continued by the rest of it."""
    tok = fixture_tokenizer(tid)
    text = read_corpus("corpus_alice_in_wonderland_en.txt")[3000:3600]
    full = tok.encode(text)
    for n in range(0, len(text), 7):
        b = tok.stable_boundary(text[:n])
        head = tok.encode(text[:b])
        assert full[: len(head)] == head, (text[:b], text[b:n])


@pytest.mark.parametrize("tid", TOKENIZER_IDS)
def test_tight_on_prose(tid: str) -> None:
    """On plain English the boundary is the start of the last word (with its space)."""
    tok = fixture_tokenizer(tid)
    text = "It was the best of times, it was the worst of times, it was the age of wisdom"
    assert text[tok.stable_boundary(text) :] == " wisdom"


@pytest.mark.parametrize("tid", ["cl100k_base", "o200k_base", "r50k_base", "hf/llama3_tokenizer.json"])
def test_tight_regex(tid: str) -> None:
    tok = fixture_tokenizer(tid)
    cases = {
        "Hello world, how are": " are",  # the last piece may grow
        "Hello world!": "!",
        "Hello world  ": "  ",  # a trailing run may regroup
        "a, b\n\n": "\n\n",
        "I don'": " don'",  # a contraction may still form
        "I don't": " don't" if tid == "o200k_base" else "'t",  # o200k: a word's suffix
        "I don'l": " don'l",
        "x <|endof": " <|endof" if tid != "hf/llama3_tokenizer.json" else "endof",
    }
    for text, rest in cases.items():
        b = tok.stable_boundary(text)
        assert text[b:] == rest, (text, text[b:])


def test_disallowed_special_raises_like_encode() -> None:
    tok = fixture_tokenizer("cl100k_base")
    with pytest.raises(ValueError, match=r"<|endoftext|>"):
        tok.stable_boundary("a <|endoftext|>")
    assert tok.stable_boundary("a <|endoftext|> b", allowed_special="all") == len("a <|endoftext|>")


def test_lone_surrogate_holds() -> None:
    tok = fixture_tokenizer("cl100k_base")
    text = "one two \ud83d"
    assert tok.stable_boundary(text) <= text.index("\ud83d")


def test_whitespace_set_is_the_union() -> None:
    """``stability.WHITESPACE`` covers ``str.isspace`` and regex ``\\s`` everywhere."""
    ws = regex.compile(r"\s")
    want = {chr(c) for c in range(0x110000) if chr(c).isspace() or ws.match(chr(c))}
    assert want <= set(WHITESPACE), sorted(want - set(WHITESPACE))

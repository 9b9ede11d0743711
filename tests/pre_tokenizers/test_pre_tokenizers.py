"""Hugging Face pre-tokenizers against ``tokenizers.pre_tokenizers`` on every code point.

Each code point is tried between letters and next to a space and punctuation, so its
class (whitespace, punctuation, letter, digit, other) decides the pieces as it does in
``tokenizers``. Needs no fixture files.
"""

from __future__ import annotations

import pytest
from helpers import assert_sequences_equal

from tokstream import pre_tokenizers as ours

hf = pytest.importorskip("tokenizers.pre_tokenizers")

_ALL = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]


def _texts(size: int = 100_000) -> list[str]:
    return ["".join(f"{c}a" for c in _ALL[i : i + size]) for i in range(0, len(_ALL), size)]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mine", "theirs"),
    [
        (ours.BertPreTokenizer(), hf.BertPreTokenizer()),
        (ours.Punctuation(), hf.Punctuation()),
        (ours.WhitespaceSplit(), hf.WhitespaceSplit()),
        (ours.Whitespace(), hf.Whitespace()),
        (ours.Digits(individual_digits=True), hf.Digits(individual_digits=True)),
    ],
    ids=["BertPreTokenizer", "Punctuation", "WhitespaceSplit", "Whitespace", "Digits"],
)
def test_every_code_point(mine: ours.PreTokenizer, theirs: object) -> None:
    for text in _texts():
        want = [s for s, _ in theirs.pre_tokenize_str(text)]  # type: ignore[attr-defined]
        got = mine.pre_tokenize([text])
        # Pieces of letters run long: show each one's last 20 characters.
        assert_sequences_equal(got, want, names=("tokstream", "tokenizers"), show=lambda p: repr(p[-20:]), context=1)


def test_bert_ascii_path_equals_general_path() -> None:
    # The ASCII translation must agree with the full class on every ASCII character.
    text = "".join(f"a{chr(c)}b {chr(c)}.{chr(c)}" for c in range(128))
    assert ours.BertPreTokenizer._findall_ascii(text) == ours.BertPreTokenizer._findall(text)


# ------------------------------------------------------------------ empty matches

_BEHAVIORS = {
    "Removed": "removed",
    "Isolated": "isolated",
    "MergedWithPrevious": "merged_with_previous",
    "MergedWithNext": "merged_with_next",
    "Contiguous": "contiguous",
}
_EMPTY_MATCHING = [
    ("", False),
    ("", True),
    ("x*", True),
    ("a*", True),
    ("a|", True),
    ("|a", True),
    ("a??", True),
    (r"\b", True),
    ("(?=a)", True),
    ("(?=a)|a", True),
    ("$", True),
    ("^", True),
    (r"\s*", True),
]


@pytest.mark.parametrize("behavior", list(_BEHAVIORS))
@pytest.mark.parametrize("invert", [False, True])
@pytest.mark.parametrize(("pattern", "is_regex"), _EMPTY_MATCHING)
def test_split_on_empty_matches_as_tokenizers(pattern: str, is_regex: bool, behavior: str, invert: bool) -> None:
    """An empty match parts the text around it, and matches only where Oniguruma finds
    one (none right after a match): with Contiguous, ``""`` used to keep the text whole
    where tokenizers splits between every two characters."""
    tokenizers = pytest.importorskip("tokenizers")
    theirs = hf.Split(tokenizers.Regex(pattern) if is_regex else pattern, _BEHAVIORS[behavior], invert=invert)
    mine = ours.Split(pattern, behavior, invert=invert, is_regex=is_regex)
    for text in ["hello  aab", "a", "", "ba a", "aa a  bxb", "日本 語aa", "é\u0301a"]:
        want = theirs.pre_tokenize_str(text)
        assert mine.pre_tokenize([text]) == [s for s, _ in want], text
        spans = [(i, i + 1) for i in range(len(text))]
        assert [(p, (s[0][0], s[-1][1])) for p, s in mine.pre_tokenize_spans([(text, spans)])] == want, text


def test_metaspace_replacement_is_one_character() -> None:
    """An empty replacement looped forever in ``pre_tokenize``."""
    for bad in ("", "ab"):
        with pytest.raises(ValueError, match="one character"):
            ours.Metaspace(replacement=bad)

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

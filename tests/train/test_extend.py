"""Vocabulary extension regressions: old ids, old encodings and specials are kept, and
``extension_report`` names exactly the texts whose ids changed (checked by encoding
every text with both tokenizers)."""

from __future__ import annotations

import pytest
from helpers import fixture_text
from hypothesis import given
from hypothesis import strategies as st
from strategies import adversarial_text, hyp_settings

import tokstream
from tokstream import Tokenizer
from tokstream.train.bpe import train_bpe
from tokstream.train.extend import extend, extension_report


def lines(name: str, n: int) -> list[str]:
    text = fixture_text(f"corpora/{name}")
    return [line for line in text.splitlines() if line.strip()][:n]


def brute_force_changed(old: Tokenizer, new: Tokenizer, texts: list[str]) -> tuple[int, ...]:
    return tuple(
        k for k, t in enumerate(texts) if old.encode(t, disallowed_special=()) != new.encode(t, disallowed_special=())
    )


@pytest.fixture(scope="module")
def base() -> Tokenizer:
    return train_bpe(lines("corpus_botchan_en.txt", 3000), 700, special_tokens=["<|end|>"])


@pytest.fixture(scope="module")
def test_set() -> list[str]:
    return lines("corpus_alice_in_wonderland_en.txt", 400) + lines("corpus_wagahaiwa_nekodearu_ja.txt", 200)


def test_extend_with_specials_keeps_old_ids_and_encodings(base: Tokenizer, test_set: list[str]) -> None:
    for old in (base, tokstream.load("cl100k_base")):
        new = extend(old, ["<|im_start|>", "<|im_end|>"], special=True)
        for i in range(old.n_vocab):
            assert new.vocab.table[i] == old.vocab.table[i]
        assert new.special_tokens["<|im_start|>"] == old.n_vocab
        assert new.encode("<|im_start|>hi<|im_end|>", allowed_special="all")[::2] == [old.n_vocab, old.n_vocab + 1]
        for text in test_set:
            assert new.encode(text) == old.encode(text)
        report = extension_report(old, new, test_set)
        assert report.ok and report.changed == ()


@pytest.mark.slow
def test_train_with_base_keeps_every_old_id_and_rank(base: Tokenizer, test_set: list[str]) -> None:
    new = train_bpe(lines("corpus_wagahaiwa_nekodearu_ja.txt", 3000), 1200, base=base, special_tokens=["<|new|>"])
    for token_bytes, rank in base.pipeline.model.ranks.items():
        assert new.pipeline.model.ranks[token_bytes] == rank  # old tokens keep ids, old merges their ranks
    assert new.special_tokens["<|end|>"] == base.special_tokens["<|end|>"]
    assert min(r for b, r in new.pipeline.model.ranks.items() if b not in base.pipeline.model.ranks) == base.n_vocab
    assert new.special_tokens["<|new|>"] == new.n_vocab - 1
    report = extension_report(base, new, test_set)
    assert report.changed == brute_force_changed(base, new, test_set)
    assert report.changed  # Japanese merges change the Japanese lines
    assert report.ids_kept and report.specials_kept and report.round_trip_lost == ()


@pytest.mark.slow
def test_train_with_a_real_base() -> None:
    old = tokstream.load("r50k_base")
    new = train_bpe(lines("corpus_wagahaiwa_nekodearu_ja.txt", 2000), old.n_vocab + 200, base=old)
    assert all(new.pipeline.model.ranks[b] == r for b, r in old.pipeline.model.ranks.items())
    assert new.special_tokens == old.special_tokens
    texts = lines("corpus_wagahaiwa_nekodearu_ja.txt", 2100)[2000:] + lines("corpus_botchan_en.txt", 100)
    report = extension_report(old, new, texts)
    assert report.changed == brute_force_changed(old, new, texts)
    assert all(k < 100 for k in report.changed)  # English lines hold no new token


def test_extend_with_ordinary_tokens_report_is_exact(base: Tokenizer, test_set: list[str]) -> None:
    new = extend(base, ["Alice", " the Queen", "猫"])
    for i in range(base.n_vocab):
        assert new.vocab.table[i] == base.vocab.table[i]
    assert new.encode(" the Queen said")[0] == new.token_to_id(" the Queen")
    report = extension_report(base, new, test_set)
    assert report.changed == brute_force_changed(base, new, test_set)
    assert report.changed and report.ok


@hyp_settings(100)
@given(
    texts=st.lists(adversarial_text(), min_size=1, max_size=5),
    added=st.lists(st.text(alphabet="ab c猫", min_size=1, max_size=4), min_size=1, max_size=3),
)
def test_report_equals_brute_force_on_generated_text(base: Tokenizer, texts: list[str], added: list[str]) -> None:
    texts = [t + " " + "".join(added) for t in texts]
    new = extend(base, added)
    assert extension_report(base, new, texts).changed == brute_force_changed(base, new, texts)


def test_added_token_spelled_like_a_byte_level_token_is_refused(base: Tokenizer) -> None:
    # "é" is how byte-level vocabularies spell the byte 0xE9: tokenizers would give the
    # added token that id, changing what id 233 decodes to.
    with pytest.raises(ValueError, match="would change token id 233"):
        extend(base, ["é"])


def test_bad_input(base: Tokenizer) -> None:
    with pytest.raises(TypeError):
        extend(base, "<|x|>")
    with pytest.raises(TypeError):
        extension_report(base, base, "text")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not a rank-file"):
        train_bpe(["x y"], 800, base=extend(base, ["zz"]))

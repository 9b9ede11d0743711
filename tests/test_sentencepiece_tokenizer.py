"""SentencePiece ``.model`` files: ids and decode equal to ``sentencepiece``'s.

SentencePiece never matches a control piece's text (``<s>``), so the comparison encodes
with ``disallowed_special=()``: special literals are plain text, as there.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import tokstream
from tokstream import Tokenizer

from conftest import require_fixture

spm = pytest.importorskip("sentencepiece")

MODELS = ["spm_botchan_en_bpe_1000.model", "spm_botchan_en_unigram_1000.model", "mistral_7b_v1_tokenizer.model"]
_cache: dict[str, tuple[Tokenizer, object]] = {}


def pair(name: str) -> tuple[Tokenizer, object]:
    path = require_fixture(Path("spm") / name)
    if name not in _cache:
        _cache[name] = (Tokenizer.from_sentencepiece(path), spm.SentencePieceProcessor(model_file=str(path)))
    return _cache[name]


def check(ours: Tokenizer, ref: object, text: str) -> None:
    want = ref.encode(text)  # type: ignore[attr-defined]
    assert ours.encode(text, disallowed_special=()) == want, text[:200]
    assert ours.decode(want) == ref.decode(want), text[:200]  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", MODELS)
def test_corpus_lines(name: str) -> None:
    ours, ref = pair(name)
    # The charsmap models normalize through a slow path for now (see spm_pipeline's
    # notes), so they get fewer lines.
    n = 400 if name.startswith("mistral") else 15
    corpora = ("corpus_botchan_en.txt", "corpus_wagahaiwa_nekodearu_ja.txt", "corpus_us_constitution_en.txt")
    for corpus in corpora if name.startswith("mistral") else corpora[:1]:
        text = require_fixture(Path("corpora") / corpus).read_text("utf-8")
        for line in text.splitlines()[:n]:
            check(ours, ref, line[:300])


@pytest.mark.parametrize("name", MODELS)
def test_random_ids_decode(name: str) -> None:
    ours, ref = pair(name)
    rng = random.Random(7)
    size = ref.get_piece_size()  # type: ignore[attr-defined]
    for _ in range(2000):
        ids = [rng.randrange(size) for _ in range(rng.randint(0, 10))]
        assert ours.decode(ids) == ref.decode(ids), ids  # type: ignore[attr-defined]


def test_load_dispatches_on_model() -> None:
    path = require_fixture(Path("spm") / "mistral_7b_v1_tokenizer.model")
    assert tokstream.load(path).encode("Hello world", disallowed_special=()) == spm.SentencePieceProcessor(
        model_file=str(path)
    ).encode("Hello world")

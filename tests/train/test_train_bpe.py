"""BPE training against a naive trainer that recounts every pair each round.

The naive trainer below is the definition (seed tutorial §2.1 with the tie rule of the
issue): count adjacent pairs over all words, merge the most frequent, ties to the
smallest ``(left bytes, right bytes)``, stop below ``min_frequency``. Ours must give
the same merges in the same order.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from helpers import fixture_file, fixture_text
from hypothesis import given
from hypothesis import strategies as st
from strategies import hyp_settings, training_corpora

from tokstream.train.bpe import learn_merges, train_bpe
from tokstream.train.counting import count_pretokens

# Public-domain Chinese: the opening chapters of the Tao Te Ching.
CHINESE = (
    "道可道，非常道。名可名，非常名。無名天地之始；有名萬物之母。故常無欲，以觀其妙；常有欲，以觀其徼。"
    "此兩者，同出而異名，同謂之玄。玄之又玄，衆妙之門。天下皆知美之為美，斯惡已。皆知善之為善，斯不善已。"
    "故有無相生，難易相成，長短相較，高下相傾，音聲相和，前後相隨。是以聖人處無為之事，行不言之教；"
    "萬物作焉而不辭，生而不有，為而不恃，功成而弗居。夫唯弗居，是以不去。不尚賢，使民不爭；不貴難得之貨，"
    "使民不為盜；不見可欲，使民心不亂。是以聖人之治，虛其心，實其腹，弱其志，強其骨。常使民無知無欲。"
)


def naive_merges(counts: Counter[str], vocab_size: int, min_frequency: int) -> list[tuple[bytes, bytes]]:
    words = {tuple(bytes([b]) for b in w.encode("utf-8")): c for w, c in counts.items()}
    vocab = {bytes([b]) for b in range(256)}
    merges = []
    while len(vocab) < vocab_size:
        pairs: Counter[tuple[bytes, bytes]] = Counter()
        for w, c in words.items():
            for p in zip(w, w[1:]):
                pairs[p] += c
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        if pairs[best] < min_frequency:
            break
        merges.append(best)
        vocab.add(best[0] + best[1])
        new_words: Counter[tuple[bytes, ...]] = Counter()
        for w, c in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(best[0] + best[1])
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            new_words[tuple(out)] += c
        words = new_words
    return merges


def ours_merges(counts: Counter[str], vocab_size: int, min_frequency: int) -> list[tuple[bytes, bytes]]:
    ranks = {bytes([b]): b for b in range(256)}
    words = Counter({tuple(w.encode("utf-8")): c for w, c in counts.items()})
    return learn_merges(words, ranks, vocab_size - 256, min_frequency=min_frequency)


def english() -> str:
    return fixture_text("corpora/corpus_botchan_en.txt")[:30_000]


@pytest.mark.slow
@pytest.mark.parametrize("corpus", ["english", "chinese"])
@pytest.mark.parametrize("pattern", ["o200k_base", "gpt2"])
def test_merges_equal_naive_trainer(corpus: str, pattern: str) -> None:
    text = english() if corpus == "english" else CHINESE * 3
    counts = count_pretokens(text.splitlines(), pattern)
    want = naive_merges(counts, 256 + 150, 2)
    assert len(want) > 50
    assert ours_merges(counts, 256 + 150, 2) == want
    # train_bpe's ranks are the merges' tokens in order.
    tok = train_bpe(counts, 256 + 150, pattern=pattern)
    assert [tok.token_bytes(i) for i in range(256, tok.n_vocab)] == [a + b for a, b in want]


@pytest.mark.slow
@hyp_settings(300)
@given(
    texts=training_corpora("ab c\u00e9\u4e2d"),
    extra=st.integers(0, 60),
    min_frequency=st.integers(1, 3),
)
def test_merges_equal_naive_trainer_on_generated_corpora(texts: list[str], extra: int, min_frequency: int) -> None:
    counts = count_pretokens(texts, "o200k_base")
    assert ours_merges(counts, 256 + extra, min_frequency) == naive_merges(counts, 256 + extra, min_frequency)


def test_same_corpus_same_fingerprint_in_another_process() -> None:
    path = fixture_file("corpora/corpus_alice_in_wonderland_en.txt")
    code = (
        "import sys; from tokstream.train.bpe import train_bpe; "
        f"t = train_bpe([open({str(path)!r}, encoding='utf-8').read()], 1000, special_tokens=['<|end|>']); "
        "print(t.fingerprint)"
    )
    runs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    ]
    here = train_bpe([path.read_text("utf-8")], 1000, special_tokens=["<|end|>"]).fingerprint
    assert runs[0].strip() == runs[1].strip() == here


def test_shard_counts_sum_to_the_whole_and_train_the_same() -> None:
    lines = fixture_text("corpora/shakespeare_gutenberg_modern.txt").splitlines(keepends=True)[:20_000]
    shards = [lines[i::4] for i in range(4)]
    summed: Counter[str] = Counter()
    for shard in shards:
        summed += count_pretokens(shard)
    whole = count_pretokens(lines)
    assert summed == whole
    assert train_bpe(summed, 600).fingerprint == train_bpe(lines, 600).fingerprint


def test_trained_tokenizer_round_trips() -> None:
    text = english()
    tok = train_bpe([text], 500)
    assert tok.decode(tok.encode(text)) == text


# ------------------------------------------------------------------ bad input


def test_vocab_size_too_small() -> None:
    with pytest.raises(ValueError, match="vocab_size=257 is too small"):
        train_bpe(["hello"], 257, special_tokens=["<a>", "<b>"])


def test_empty_corpus() -> None:
    with pytest.raises(ValueError, match="empty"):
        train_bpe([], 300)
    with pytest.raises(ValueError, match="empty"):
        train_bpe(["", ""], 300)


def test_non_text_input() -> None:
    with pytest.raises(TypeError, match="not one str"):
        train_bpe("hello world", 300)
    with pytest.raises(TypeError, match=r"texts\[1\] is bytes"):
        train_bpe(["ok", b"bytes"], 300)  # type: ignore[list-item]
    with pytest.raises(TypeError, match="counts must map str to int"):
        train_bpe(Counter({b"x": 3}), 300)  # type: ignore[arg-type]


def test_paths_are_not_texts(tmp_path: Path) -> None:
    with pytest.raises(TypeError):
        train_bpe([tmp_path], 300)  # type: ignore[list-item]


def test_saved_trained_tokenizer_gives_the_same_ids_in_tokenizers(tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    text = fixture_text("corpora/shakespeare_gutenberg_modern.txt")
    cut = int(len(text) * 0.9)
    tok = train_bpe(text[:cut].splitlines(keepends=True)[:20_000], 2000, special_tokens=["<|end|>"])
    tok.save(tmp_path / "bpe.json")
    ref = tokenizers.Tokenizer.from_file(str(tmp_path / "bpe.json"))
    held = text[cut:]
    for chunk in [held[:50_000], *held.splitlines(keepends=True)[:300], "a<|end|>b"]:
        ids = tok.encode(chunk, allowed_special="all")
        assert ref.encode(chunk, add_special_tokens=False).ids == ids
        assert tok.decode(ids) == chunk

"""Unigram training against brute-force oracles, ``tokenizers`` and SentencePiece.

The oracles here enumerate: every substring of every word (the seeds), every
segmentation of every word (the E-step's expected counts, the Viterbi counts, each
piece's best segmentation without itself) and recompute SentencePiece's pruning loss
from them. None of them calls the trainer's own lattice code. The trained tokenizer is
saved and loaded by ``tokenizers`` (ids must be identical), must round-trip by the rule
in ``tokstream/train/unigram.py`` (literal ``▁`` decodes as a space; without byte
fallback, each run of unknown characters decodes as ``<unk>``; a space after each
special token), and is compared for compression with SentencePiece's own trainer.
"""

from __future__ import annotations

import io
import json
import math
import random
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from helpers import assert_sequences_equal, fixture_file, fixture_text
from hypothesis import assume, given
from hypothesis import strategies as st
from strategies import adversarial_text, hyp_settings

from tokstream.train.counting import count_pretokens
from tokstream.train.unigram import (
    _Corpus,
    _Trainer,
    _words,
    count_words,
    train_unigram,
)

tokenizers = pytest.importorskip("tokenizers")

META = "\u2581"


def english() -> str:
    return fixture_text("corpora/corpus_botchan_en.txt")


def japanese() -> str:
    return fixture_text("corpora/corpus_wagahaiwa_nekodearu_ja.txt")


def reference(tok, tmp_path: Path):  # type: ignore[no-untyped-def]
    """``tokenizers.Tokenizer`` loaded from the file ``tok.save`` writes."""
    path = tmp_path / "trained.json"
    tok.save(path)
    return tokenizers.Tokenizer.from_file(str(path))


def assert_same_ids(tok, ref, text: str) -> None:  # type: ignore[no-untyped-def]
    __tracebackhide__ = True
    assert_sequences_equal(
        tok.encode(text, allowed_special="all"),
        ref.encode(text, add_special_tokens=False).ids,
        names=("tokstream", "tokenizers"),
        show=lambda t: f"{t}={tok.id_to_token(t)!r}",
        show_theirs=lambda t: f"{t}={ref.id_to_token(t)!r}",
        text=text,
    )


def expected_decode(text: str, alphabet: set[str] | None, specials: tuple[str, ...] = ()) -> str:
    """The round-trip rule: ``▁`` becomes a space; without byte fallback (``alphabet``
    given), a run of characters outside it becomes ``<unk>``; each text segment that
    follows a special token starts with a space."""
    if specials:
        cut = "(" + "|".join(map(re.escape, sorted(specials, key=len, reverse=True))) + ")"
        parts = re.split(cut, text)
        out, after_special = [], False
        for k, part in enumerate(parts):
            if k % 2:
                out.append(part)
                after_special = True
            elif part:
                out.append((" " if after_special else "") + expected_decode(part, alphabet))
                after_special = False
        return "".join(out)
    text = text.replace(META, " ")
    if alphabet is not None:
        known = alphabet | {" "}
        text = re.sub("[^" + "".join(re.escape(c) for c in sorted(known)) + "]+", "<unk>", text) if text else text
    return text


def learned(tok) -> dict[str, int]:  # type: ignore[no-untyped-def]
    return {tok.id_to_token(i): i for i in range(tok.n_vocab)}


# ------------------------------------------------------------- brute-force oracles


def substrings(words: dict[str, int], max_len: int) -> tuple[Counter[str], dict[str, set[str]]]:
    """Weighted frequency of every substring of every word, and the characters that
    follow it in the running text (after a word comes the next word's ``▁``)."""
    freq: Counter[str] = Counter()
    follow: dict[str, set[str]] = {}
    for w, c in words.items():
        for i in range(len(w)):
            for j in range(i + 1, min(len(w), i + max_len) + 1):
                s = w[i:j]
                freq[s] += c
                follow.setdefault(s, set()).add(w[j] if j < len(w) else META)  # then the next word
    return freq, follow


def segmentations(word: str, pieces: set[str]) -> list[list[str]]:
    if not word:
        return [[]]
    out = []
    for j in range(1, len(word) + 1):
        if word[:j] in pieces:
            out += [[word[:j], *rest] for rest in segmentations(word[j:], pieces)]
    return out


def digamma(x: float) -> float:
    """Numerical derivative of lgamma: independent of the trainer's series."""
    h = 1e-4
    return (math.lgamma(x + h) - math.lgamma(x - h)) / (2 * h)


TINY = ["abab aba ab bab", "abba baab ba", "ab ab ab abab", "bab\nab a"]


def tiny_trainer(texts: list[str] = TINY, max_len: int = 16) -> tuple[_Trainer, dict[str, int]]:
    words = _words(count_words(texts), [])
    return _Trainer(_Corpus(words, max_len), min_frequency=1, seed_size=10**6), words


def pieces_of(trainer: _Trainer) -> dict[str, int]:
    """Alive pieces as ``{string: id}``."""
    spell = trainer.corpus.spell
    return {spell(int(trainer.rep[i]), int(trainer.plen[i])): int(i) for i in np.flatnonzero(trainer.alive)}


@pytest.mark.parametrize("max_len", [16, 3])
def test_seeds_are_the_substrings_followed_by_two_characters(max_len: int) -> None:
    trainer, words = tiny_trainer(max_len=max_len)
    freq, follow = substrings(words, max_len)
    chars = {s: f for s, f in freq.items() if len(s) == 1}
    seeds = {s: f * len(s) for s, f in freq.items() if len(s) >= 2 and f >= 1 and len(follow[s]) > 1}
    got = pieces_of(trainer)
    assert set(got) == set(chars) | set(seeds)
    total = sum(chars.values()) + sum(seeds.values())
    for s, i in got.items():
        want = math.log(chars[s] if len(s) == 1 else seeds[s]) - math.log(total)
        assert trainer.logp[i] == pytest.approx(want, abs=1e-12), s


def test_min_frequency_and_seed_size_limit_the_seeds() -> None:
    words = _words(count_words(TINY), [])
    freq, _ = substrings(words, 16)
    trainer = _Trainer(_Corpus(words, 16), min_frequency=3, seed_size=10**6)
    assert all(freq[s] >= 3 for s in pieces_of(trainer) if len(s) > 1)
    small = _Trainer(_Corpus(words, 16), min_frequency=1, seed_size=4)
    assert sum(len(s) > 1 for s in pieces_of(small)) == 4


def brute_expected(words: dict[str, int], logp: dict[str, float]) -> tuple[dict[str, float], float]:
    expected: dict[str, float] = dict.fromkeys(logp, 0.0)
    loglik = 0.0
    for w, c in words.items():
        segs = segmentations(w, set(logp))
        probs = [math.exp(sum(logp[p] for p in seg)) for seg in segs]
        z = sum(probs)
        loglik += c * math.log(z)
        for seg, pr in zip(segs, probs):
            for p in seg:
                expected[p] += c * pr / z
    return expected, loglik


def test_e_step_equals_enumeration_of_all_segmentations() -> None:
    trainer, words = tiny_trainer()
    ids = pieces_of(trainer)
    rng = random.Random(0)
    for _ in range(3):
        logp = np.full(len(trainer.alive), -np.inf)
        for i in ids.values():
            logp[i] = -rng.uniform(0.5, 6.0)
        got, loglik = trainer.lattice.expected_counts(logp)
        want, want_loglik = brute_expected(words, {s: logp[i] for s, i in ids.items()})
        for s, i in ids.items():
            assert got[i] == pytest.approx(want[s], rel=1e-9, abs=1e-12), s
        assert loglik == pytest.approx(want_loglik, rel=1e-12)


def test_em_step_is_the_digamma_update_of_the_enumerated_counts() -> None:
    trainer, words = tiny_trainer(TINY * 3)
    for _ in range(3):
        ids = pieces_of(trainer)
        want, _ = brute_expected(words, {s: trainer.logp[i] for s, i in ids.items()})
        trainer.em_step()
        kept = {s: max(e, 0.5) for s, e in want.items() if len(s) == 1 or e >= 0.5}
        assert set(pieces_of(trainer)) == set(kept)
        total = sum(kept.values())
        for s, e in kept.items():
            assert trainer.logp[ids[s]] == pytest.approx(digamma(e) - digamma(total), abs=1e-6), s
        assert all(trainer.logp[i] == -np.inf for s, i in ids.items() if s not in kept)


def test_viterbi_counts_and_alternatives_equal_enumeration() -> None:
    trainer, words = tiny_trainer()
    ids = pieces_of(trainer)
    rng = random.Random(1)
    for i in ids.values():
        trainer.logp[i] = -rng.uniform(0.5, 6.0)  # distinct scores: no ties
    score = {s: trainer.logp[i] for s, i in ids.items()}
    got = trainer.lattice.viterbi_counts(trainer.logp)
    want: Counter[str] = Counter()
    for w, c in words.items():
        best = max(segmentations(w, set(ids)), key=lambda seg: sum(score[p] for p in seg))
        for p in best:
            want[p] += c
    assert {s: got[i] for s, i in ids.items() if got[i]} == dict(want)

    rows = np.array(sorted(i for s, i in ids.items() if len(s) > 1), dtype=np.int64)
    alt, pair_at, pair_id = trainer._alternatives(rows)
    name = {i: s for s, i in ids.items()}
    for k, row in enumerate(rows.tolist()):
        s = name[row]
        segs = [seg for seg in segmentations(s, set(ids) - {s})]
        best = max(segs, key=lambda seg: sum(score[p] for p in seg))
        assert alt[k] == pytest.approx(sum(score[p] for p in best), abs=1e-12)
        assert sorted(name[int(j)] for j in pair_id[pair_at == k]) == sorted(best)


def test_prune_keeps_the_pieces_with_the_largest_loss() -> None:
    trainer, words = tiny_trainer(TINY + ["abbab babba aab"])
    trainer.em_step()
    ids = pieces_of(trainer)
    rng = random.Random(2)
    for i in ids.values():
        trainer.logp[i] = -rng.uniform(0.5, 6.0)  # distinct scores: no ties
    score = {s: trainer.logp[i] for s, i in ids.items()}
    freq: Counter[str] = Counter()
    for w, c in words.items():
        best = max(segmentations(w, set(ids)), key=lambda seg: sum(score[p] for p in seg))
        for p in best:
            freq[p] += c
    total, vsum = sum(freq.values()), sum(words.values())
    losses = {}
    for s in ids:
        if len(s) == 1 or not freq[s]:
            continue
        alt = max(segmentations(s, set(ids) - {s}), key=lambda seg: sum(score[p] for p in seg))
        if sum(score[p] for p in alt) > score[s]:
            continue  # never on a Viterbi path: removed
        logsum_alt = math.log(total + freq[s] * (len(alt) - 1))
        lp_alt = sum(math.log(freq[p] + freq[s]) - logsum_alt for p in alt)
        losses[s] = freq[s] / vsum * (math.log(freq[s]) - math.log(total) - lp_alt)
    chars = [s for s in ids if len(s) == 1]
    ranked = sorted(losses, key=lambda s: -losses[s])
    # keep k pieces, k near half, where the k-th and (k+1)-th losses differ (no tie to break)
    k = next(k for k in range(len(ranked) // 2, len(ranked)) if losses[ranked[k - 1]] > losses[ranked[k]])
    target = len(chars) + k
    want = set(chars) | set(ranked[:k])
    trainer.prune(target)
    assert set(pieces_of(trainer)) == want


# ------------------------------------------------------------- trained tokenizers


@pytest.fixture(scope="module")
def mixed_corpus() -> list[str]:
    return [english()[:120_000], japanese()[:40_000]]


@pytest.fixture(scope="module", params=[False, True], ids=["plain", "byte_fallback"])
def trained(  # type: ignore[no-untyped-def]
    request: pytest.FixtureRequest, mixed_corpus: list[str], tmp_path_factory: pytest.TempPathFactory
):
    byte_fallback = request.param
    tok = train_unigram(mixed_corpus, 4000, byte_fallback=byte_fallback, special_tokens=["<|end|>", "<s>"])
    ref = reference(tok, tmp_path_factory.mktemp("unigram"))
    alphabet = None if byte_fallback else {c for text in mixed_corpus for c in text}
    return tok, ref, alphabet


def test_layout_of_the_vocabulary(trained) -> None:  # type: ignore[no-untyped-def]
    tok, ref, alphabet = trained
    vocab = learned(tok)
    assert tok.n_vocab == 4000 == ref.get_vocab_size()
    assert tok.id_to_token(0) == "<unk>"
    assert tok.special_tokens == {"<|end|>": 3998, "<s>": 3999}
    byte_fallback = alphabet is None
    if byte_fallback:
        assert [tok.id_to_token(i) for i in range(1, 257)] == [f"<0x{b:02X}>" for b in range(256)]
    pieces = [p for p, i in vocab.items() if 0 < i < 3998 and not (byte_fallback and i <= 256)]
    assert len(pieces) == len(set(pieces)) == 3997 - (256 if byte_fallback else 0)
    assert all(1 <= len(p) <= 16 and META not in p[1:] for p in pieces)
    corpus_chars = set(english()[:120_000]) | set(japanese()[:40_000])
    assert {c.replace(" ", META) for c in corpus_chars} <= set(pieces)
    assert not {"<unk>", "<s>", "<|end|>"} & set(pieces)
    assert not any(re.fullmatch(r"<0x[0-9A-Fa-f]{2}>", p) for p in pieces)


def test_tokenizers_reads_the_same_scores(trained, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # serde_json (tokenizers) reads some 17-digit numbers 1 ulp off, which flips exact
    # ties between segmentations; the trainer writes scores it reads exactly.
    tok, ref, _ = trained
    tok.save(tmp_path / "t.json")
    written = json.loads((tmp_path / "t.json").read_text("utf-8"))["model"]["vocab"]
    assert json.loads(ref.to_str())["model"]["vocab"] == written


def test_same_ids_as_tokenizers_on_held_out_text(trained) -> None:  # type: ignore[no-untyped-def]
    tok, ref, _ = trained
    held = english()[120_000:200_000] + japanese()[40_000:80_000]
    for line in held.splitlines(keepends=True)[:3000]:
        assert_same_ids(tok, ref, line)
    assert_same_ids(tok, ref, held)
    assert_same_ids(tok, ref, "  two  spaces, \ttab\n\nnewlines <|end|>and<s> specials <0x41> <unk> ▁x 😀€")


@hyp_settings(300)
@given(text=adversarial_text(surrogates_ok=False))
def test_same_ids_as_tokenizers_on_generated_text(trained, text: str) -> None:  # type: ignore[no-untyped-def]
    tok, ref, _ = trained
    assert_same_ids(tok, ref, text)


def test_round_trip_on_corpora(trained) -> None:  # type: ignore[no-untyped-def]
    tok, _, alphabet = trained
    constitution = fixture_text("corpora/corpus_us_constitution_en.txt")
    for text in (english(), japanese()[:200_000], constitution):
        assert tok.decode(tok.encode(text)) == expected_decode(text, alphabet)
    assert tok.decode(tok.encode(english()[:120_000])) == english()[:120_000]


@hyp_settings(300)
@given(text=adversarial_text(surrogates_ok=False))
def test_round_trip_on_generated_text(trained, text: str) -> None:  # type: ignore[no-untyped-def]
    tok, _, alphabet = trained
    assume("<unk>" not in text)
    assert tok.decode(tok.encode(text, disallowed_special=())) == expected_decode(text, alphabet)


@hyp_settings(200)
@given(parts=st.lists(st.sampled_from(["a", " b", "  ", "<s>", "<|end|>", "\n", "é", "x y"]), max_size=10))
def test_round_trip_with_special_tokens(trained, parts: list[str]) -> None:  # type: ignore[no-untyped-def]
    tok, _, alphabet = trained
    text = "".join(parts)
    got = tok.decode(tok.encode(text, allowed_special="all"))
    assert got == expected_decode(text, alphabet, ("<s>", "<|end|>"))


_corpus_text = st.text(alphabet=st.sampled_from(list("ab c\n\t.éü中文😀") + [" ", " "]), max_size=40)


@hyp_settings(150)
@given(
    corpus=st.lists(
        st.one_of(_corpus_text, adversarial_text(surrogates_ok=False, max_fragments=6)), min_size=1, max_size=8
    ),
    held=st.one_of(_corpus_text, adversarial_text(surrogates_ok=False)),
    extra=st.integers(0, 80),
    byte_fallback=st.booleans(),
)
def test_generated_corpora_train_and_match_tokenizers(
    tmp_path_factory: pytest.TempPathFactory, corpus: list[str], held: str, extra: int, byte_fallback: bool
) -> None:
    assume(any(t for t in corpus))
    alphabet = {c for t in corpus for c in t.replace(" ", META)} | {META}
    fixed = 1 + (256 + len(set("<>x0123456789ABCDEF") - alphabet) if byte_fallback else 0)
    tok = train_unigram(corpus, fixed + len(alphabet) + extra, byte_fallback=byte_fallback)
    assert tok.n_vocab <= fixed + len(alphabet) + extra
    ref = reference(tok, tmp_path_factory.mktemp("gen"))
    for text in [*corpus, held]:
        assert_same_ids(tok, ref, text)
        if "<unk>" not in text:
            known = None if byte_fallback else {c for t in corpus for c in t}
            assert tok.decode(tok.encode(text, disallowed_special=())) == expected_decode(text, known)


def test_long_runs_and_long_words() -> None:
    text = "a" * 100_000 + " " + "xy" * 600 + " end"
    tok = train_unigram([text], 40)
    assert tok.decode(tok.encode(text)) == text
    assert tok.decode(tok.encode("a" * 1000)) == "a" * 1000


# ---------------------------------------------------------------- determinism, shape


def test_same_corpus_same_fingerprint_in_another_process() -> None:
    path = fixture_file("corpora/corpus_alice_in_wonderland_en.txt")
    code = (
        "from tokstream.train.unigram import train_unigram; "
        f"t = train_unigram([open({str(path)!r}, encoding='utf-8').read()], 1000, special_tokens=['<|end|>']); "
        "print(t.fingerprint)"
    )
    runs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    ]
    here = train_unigram([path.read_text("utf-8")], 1000, special_tokens=["<|end|>"]).fingerprint
    assert runs[0].strip() == runs[1].strip() == here


def test_shards_counted_apart_train_the_same() -> None:
    lines = english().splitlines(keepends=True)
    shards = [lines[i::3] for i in range(3)]
    summed: Counter[str] = Counter()
    for shard in shards:
        summed += count_words(shard)
    assert summed == count_words(lines)
    shuffled = Counter(dict(sorted(summed.items(), key=lambda kv: kv[0][::-1])))  # another key order
    assert train_unigram(shuffled, 800).fingerprint == train_unigram(lines, 800).fingerprint


def test_count_pretokens_counters_are_accepted() -> None:
    text = english()[:50_000]
    counts = count_pretokens([" " + text], r" [^ ]*")  # the same words, spelled with spaces
    assert train_unigram(counts, 600).fingerprint == train_unigram([text], 600).fingerprint
    # any pattern works; pieces are re-split before each space
    tok = train_unigram(count_pretokens([text], "o200k_base"), 600)
    assert tok.decode(tok.encode(text)) == text


def test_progress_is_reported_per_round() -> None:
    calls: list[tuple[int, int]] = []
    train_unigram([english()[:60_000]], 500, progress=lambda done, total: calls.append((done, total)))
    assert len(calls) >= 4
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert all(d <= t for d, t in calls)
    assert calls[-1][0] == calls[-1][1]


def test_unk_token_as_a_special_token(tmp_path: Path) -> None:
    tok = train_unigram([english()[:30_000]], 500, special_tokens=["<unk>", "<s>"])
    assert tok.special_tokens == {"<unk>": 0, "<s>": 499}
    assert_same_ids(tok, reference(tok, tmp_path), "a <unk> b<s>c \u20ac d")


def test_characters_only() -> None:
    text = english()[:30_000]
    for tok in (train_unigram([text], 500, max_piece_length=1), train_unigram([text], 500, seed_size=0)):
        pieces = [tok.id_to_token(i) for i in range(1, tok.n_vocab)]
        assert sorted(pieces) == sorted(set(text.replace(" ", META)) | {META})
        assert tok.decode(tok.encode(text)) == text


def test_small_corpus_gives_at_most_vocab_size() -> None:
    tok = train_unigram(["hello world"], 500)
    assert tok.n_vocab < 500
    assert tok.decode(tok.encode("hello world  hello")) == "hello world  hello"


# ------------------------------------------------------------------ bad input


def test_vocab_size_too_small() -> None:
    # alphabet: ▁ h e l o w r d (8), plus <unk> and 2 specials
    train_unigram(["hello world"], 11, special_tokens=["<a>", "<b>"])
    with pytest.raises(ValueError, match=r"vocab_size=10 is too small.*use at least 11"):
        train_unigram(["hello world"], 10, special_tokens=["<a>", "<b>"])
    with pytest.raises(ValueError, match=r"vocab_size=200 is too small.*256 byte pieces"):
        train_unigram(["hello world"], 200, byte_fallback=True)


def test_empty_corpus() -> None:
    with pytest.raises(ValueError, match="empty"):
        train_unigram([], 300)
    with pytest.raises(ValueError, match="empty"):
        train_unigram(["", ""], 300)
    with pytest.raises(ValueError, match="empty"):
        train_unigram(Counter({"x": 0}), 300)


def test_non_text_input() -> None:
    with pytest.raises(TypeError, match="not one str"):
        train_unigram("hello world", 300)
    with pytest.raises(TypeError, match=r"texts\[1\] is bytes"):
        train_unigram(["ok", b"bytes"], 300)  # type: ignore[list-item]
    with pytest.raises(TypeError, match="counts must map str to int"):
        train_unigram(Counter({b"x": 3}), 300)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="counts must map str to int"):
        train_unigram({"x": 1.5}, 300)  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="negative"):
        train_unigram({"x": -1}, 300)
    with pytest.raises(TypeError):
        train_unigram([Path("a.txt")], 300)  # type: ignore[list-item]


def test_bad_options() -> None:
    with pytest.raises(NotImplementedError, match="pattern=None"):
        train_unigram(["hello"], 300, pattern="o200k_base")
    with pytest.raises(TypeError, match="vocab_size must be an int"):
        train_unigram(["hello"], 300.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="special_tokens\\[0\\] is empty"):
        train_unigram(["hello"], 300, special_tokens=[""])
    with pytest.raises(ValueError, match="special token 'h' is a character"):
        train_unigram(Counter({"▁hello": 3}), 300, special_tokens=["h"])
    # from texts, special tokens are cut out before counting: no conflict
    tok = train_unigram(["hello"], 300, special_tokens=["h"])
    assert tok.decode(tok.encode("hello", allowed_special="all")) == "h ello"
    with pytest.raises(ValueError, match="shrinking_factor"):
        train_unigram(["hello"], 300, shrinking_factor=1.0)


# ------------------------------------------------- compression against SentencePiece


def spm_bytes_per_token(train: str, held: str, vocab_size: int) -> float:
    """SentencePiece's unigram trainer, made lossless (see bench/train_unigram_compression.py)."""
    spm = pytest.importorskip("sentencepiece")
    newline = "\u21b5"
    assert newline not in train + held
    text = train.replace("\n", newline)
    sentences, i = [], 0
    while i < len(text):  # ~2,000-character sentences cut at spaces (the dummy prefix restores them)
        j = text.find(" ", i + 2000)
        sentences.append(text[i:] if j < 0 else text[i:j])
        i = len(text) if j < 0 else j + 1
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences),
        model_writer=model,
        model_type="unigram",
        vocab_size=vocab_size,
        character_coverage=1.0,
        byte_fallback=False,
        normalization_rule_name="identity",
        remove_extra_whitespaces=False,
        input_sentence_size=10**8,
        max_sentence_length=10**6,
        bos_id=-1,
        eos_id=-1,
        num_threads=2,
        minloglevel=2,
    )
    sp = spm.SentencePieceProcessor(model_proto=model.getvalue())
    return len(held.encode("utf-8")) / len(sp.encode(held.replace("\n", newline)))


@pytest.mark.slow
@pytest.mark.parametrize(
    "corpus",
    # the corpus (5 MB: ~40 s for both trainers), and two small ones
    ["shakespeare_gutenberg_modern.txt", "corpus_botchan_en.txt", "corpus_alice_in_wonderland_en.txt"],
)
def test_compression_at_least_98_percent_of_sentencepiece(corpus: str) -> None:
    text = fixture_text(f"corpora/{corpus}")
    cut = int(len(text) * 0.9)
    train, held = text[:cut], text[cut:]
    tok = train_unigram([train], 1000)
    ids = tok.encode(held)
    ours = len(held.encode("utf-8")) / len(ids)
    theirs = spm_bytes_per_token(train, held, 1000)
    assert ours >= 0.98 * theirs, (ours, theirs)

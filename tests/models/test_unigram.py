"""Unigram against ``tokenizers.models.Unigram`` and SentencePiece.

``tokenizers`` is the bit-exact reference: a ``tokenizers.Tokenizer`` holding the model
alone (no normalizer, pre-tokenizer or post-processor) hands the whole piece to
``Unigram::tokenize``; ids and code-point offsets must be equal.

SentencePiece is compared on the same pieces fairly: ``sp.encode(word)`` normalizes
the word and prepends ``▁`` before its Viterbi pass, so it is compared with
``encode_piece(sp.normalize(word))``. Two differences are by design and excluded or
allowed for: SentencePiece never matches control / unknown pieces (``<s>``, ``</s>``,
``<unk>``) in text, and it sums scores in float32, so where two segmentations tie up to
float32 rounding it may pick the other one (then both must score the same).

``sample`` is checked statistically (chi-square at significance 0.001, fixed seeds)
against exact path probabilities, and ``nbest`` against brute-force enumeration.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import pickle
from collections import Counter
from collections.abc import Iterable

import numpy as np
import pytest
from helpers import assert_sequences_equal, fixture_file, fixture_names, fixture_text, has_fixture
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from strategies import adversarial_text, fragment, has_surrogates

from tokstream.errors import TokenizerFileError, TokstreamError
from tokstream.models.unigram import Unigram

tokenizers = pytest.importorskip("tokenizers")

MAX_EXAMPLES = int(os.environ.get("TOKSTREAM_MAX_EXAMPLES") or 500)
HYP = settings(max_examples=MAX_EXAMPLES, deadline=None)
SIGNIFICANCE = 0.001
META = "\u2581"  # ▁


# ------------------------------------------------------------------- fixtures


def reference(model: Unigram) -> tokenizers.Tokenizer:
    """The model alone in a ``tokenizers.Tokenizer``, same parameters as ``model``."""
    return tokenizers.Tokenizer(tokenizers.models.Unigram(model.get_vocab(), model.unk_id, model.byte_fallback))


@pytest.fixture(scope="module")
def botchan_json() -> dict:
    return json.loads(fixture_text("hf/botchan_unigram_1000_tokenizer.json"))


@pytest.fixture(scope="module")
def botchan(botchan_json) -> Unigram:
    return Unigram.from_json(botchan_json["model"])


@pytest.fixture(scope="module")
def botchan_ref(botchan) -> tokenizers.Tokenizer:
    return reference(botchan)


@pytest.fixture(scope="module")
def spm_botchan():
    spm = pytest.importorskip("sentencepiece")
    return spm.SentencePieceProcessor(model_file=str(fixture_file("spm/spm_botchan_en_unigram_1000.model")))


def corpus_words() -> list[str]:
    names = fixture_names("corpora", "*.txt")
    if not names:
        fixture_file("corpora/corpus_botchan_en.txt")  # skips or fails with the reason
    words: set[str] = set()
    for name in names:
        words.update(fixture_text(f"corpora/{name}").split())
    return sorted(words)


def _botchan_pieces() -> list[str]:
    """The botchan pieces (stand-ins when the fixture is absent: the tests that need
    the fixture skip or fail on their own)."""
    relpath = "hf/botchan_unigram_1000_tokenizer.json"
    if not has_fixture(relpath):
        return [META, f"{META}the", "s", "ing", "ed"]
    return [p for p, _ in json.loads(fixture_text(relpath))["model"]["vocab"]]


_PIECES = _botchan_pieces()


# --------------------------------------------------------------------- helpers


def assert_same(model: Unigram, ref: tokenizers.Tokenizer, pieces: Iterable[str]) -> None:
    """Ids and spans equal the reference's for every piece; report the first mismatch."""
    pieces = list(pieces)
    for piece, enc in zip(pieces, ref.encode_batch(pieces)):
        spans = model.encode_piece_spans(piece)
        expected = [(i, a, b) for i, (a, b) in zip(enc.ids, enc.offsets)]
        assert_sequences_equal(
            spans,
            expected,
            what=repr(piece),
            names=("tokstream", "tokenizers"),
            notes=[f"tokenizers' tokens: {enc.tokens}"],
        )
        assert model.encode_piece(piece) == tuple(enc.ids), piece


def outcome(fn, *args):
    """``("ok", value)`` or ``("error", None)``: compare raising behaviour too."""
    try:
        return ("ok", fn(*args))
    except Exception:
        return ("error", None)


def chi_square_sf(statistic: float, df: int) -> float:
    """P(X >= statistic) for X ~ chi-square(df): the regularized upper gamma Q(df/2, x/2)."""
    a, x = df / 2.0, statistic / 2.0
    if x <= 0:
        return 1.0
    log_front = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:  # series for P, then Q = 1 - P
        term = total = 1.0 / a
        k = a
        while term > total * 1e-15:
            k += 1
            term *= x / k
            total += term
        return max(0.0, 1.0 - math.exp(log_front) * total)
    # Lentz's continued fraction for Q
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 1000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return math.exp(log_front) * h


def chi_square_pvalue(counts: Counter, probs: dict) -> float:
    """Goodness of fit of observed ``counts`` to ``probs`` (every key of ``counts``
    must have a probability; an unexpected outcome fails outright)."""
    assert set(counts) <= set(probs), set(counts) - set(probs)
    total = sum(counts.values())
    statistic = sum((counts[k] - total * p) ** 2 / (total * p) for k, p in probs.items())
    return chi_square_sf(statistic, len(probs) - 1)


def segmentations(piece: str, vocab: list[tuple[str, float]], unk_id: int | None):
    """Brute force: every lattice path of ``piece`` as [(id, score)], the unknown edge
    included where no single-character piece exists (as populate_nodes)."""
    ids: dict[str, int] = {}
    for i, (p, _) in enumerate(vocab):
        ids[p] = i
    scores = [s for _, s in vocab]
    unk_score = min(scores) - 10.0

    def rec(start: int):
        if start == len(piece):
            yield []
            return
        for end in range(start + 1, len(piece) + 1):
            sub = piece[start:end]
            if sub in ids:
                for rest in rec(end):
                    yield [(ids[sub], scores[ids[sub]])] + rest
        if piece[start] not in ids and unk_id is not None:
            for rest in rec(start + 1):
                yield [(unk_id, unk_score)] + rest

    return list(rec(0))


def fused(path: list[tuple[int, float]], unk_id: int | None) -> tuple[int, ...]:
    out: list[int] = []
    for token_id, _ in path:
        if token_id == unk_id and out and out[-1] == unk_id:
            continue
        out.append(token_id)
    return tuple(out)


def path_score(path: list[tuple[int, float]]) -> float:
    total = 0.0
    for _, score in path:
        total = score + total  # left to right, as Viterbi accumulates
    return total


# ------------------------------------------------------------ differential: corpora


@pytest.mark.slow
def test_corpus_words_match_tokenizers(botchan, botchan_ref) -> None:
    """Every whitespace-separated word of every corpus with ``▁`` in front (as
    Metaspace leaves it), and bare: English, Japanese (unknown runs), punctuation."""
    words = corpus_words()
    assert len(words) > 10_000
    assert_same(botchan, botchan_ref, [META + w for w in words])
    assert_same(botchan, botchan_ref, words[::7])


def test_corpus_lines_match_tokenizers(botchan, botchan_ref) -> None:
    """Whole lines with spaces turned into ``▁``: long pieces, many unknown runs."""
    lines: list[str] = []
    for name in fixture_names("corpora", "*.txt"):
        text = fixture_text(f"corpora/{name}")
        lines.extend(META + line.replace(" ", META) for line in text.splitlines()[:400])
    if not lines:
        fixture_file("corpora/corpus_botchan_en.txt")
    assert_same(botchan, botchan_ref, lines)


def test_corpus_words_match_sentencepiece(botchan, spm_botchan) -> None:
    """``encode_piece(sp.normalize(w)) == sp.encode(w)``, or else an equal-score tie."""
    scores = [s for _, s in botchan.get_vocab()]
    control = ("<s>", "</s>", "<unk>")
    compared = ties = 0
    for word in corpus_words():
        normalized = spm_botchan.normalize(word)
        if any(c in normalized for c in control):
            continue  # SentencePiece never matches these pieces in text
        compared += 1
        ours = botchan.encode_piece(normalized)
        theirs = tuple(spm_botchan.encode(word))
        if ours != theirs:
            assert botchan.unk_id not in theirs, (word, ours, theirs)
            mine = math.fsum(scores[i] for i in ours)
            other = math.fsum(scores[i] for i in theirs)
            # SentencePiece adds float32 scores: a tie up to its rounding.
            assert mine == pytest.approx(other, rel=1e-6, abs=1e-5), (word, ours, theirs)
            ties += 1
    assert compared > 10_000
    assert ties <= compared // 1000, f"{ties} float32 ties of {compared}: too many to be ties"


def test_nbest_matches_sentencepiece(botchan, spm_botchan) -> None:
    """Same n best segmentations as ``sp.nbest_encode``, in the same order except
    among (float32) ties; path scores are the sums of the pieces' scores."""
    scores = [s for _, s in botchan.get_vocab()]
    words = [w for w in corpus_words() if w.isascii() and w.isalpha() and 4 <= len(w) <= 12][::97]
    assert len(words) > 50
    for word in words:
        normalized = spm_botchan.normalize(word)
        ours = botchan.nbest(normalized, 6)
        theirs = [tuple(ids) for ids in spm_botchan.nbest_encode(word, nbest_size=6)]
        assert len(ours) == len(theirs), word
        for (ids, score), their_ids in zip(ours, theirs):
            if botchan.unk_id in ids:  # unknown characters (capitals): scores not summable
                assert ids == their_ids, word
                continue
            assert score == pytest.approx(math.fsum(scores[i] for i in ids), rel=1e-12)
            if ids != their_ids:  # only among ties up to float32 rounding
                their_score = math.fsum(scores[i] for i in their_ids)
                assert score == pytest.approx(their_score, rel=1e-6), (word, ours, theirs)


# ---------------------------------------------------------- differential: hypothesis

pieces_text = st.lists(
    st.one_of(
        st.sampled_from(_PIECES),
        st.sampled_from(_PIECES).map(lambda p: p.lstrip(META)),
        fragment,
        st.text(max_size=4),
        st.sampled_from([META, META * 3, "<unk>", "<s>", "</s>", "\r"]),
    ),
    min_size=1,
    max_size=10,
).map("".join)


@HYP
@given(text=st.one_of(pieces_text, adversarial_text(max_fragments=6, surrogates_ok=False)))
def test_adversarial_pieces_match_tokenizers(botchan, botchan_ref, text: str) -> None:
    assume(not has_surrogates(text))  # Rust strings cannot hold them
    assert_same(botchan, botchan_ref, [text, META + text.replace(" ", META)])


@st.composite
def small_vocabularies(draw) -> tuple[list[tuple[str, float]], str]:
    """A tiny vocabulary (after ``<unk>``) and its alphabet. Scores come from a few
    values, or are ``-len(piece)`` so that *every* segmentation into pieces ties; 10.0
    and -5.0 together make an unknown edge tie too (10 + (-5 - 10) == -5)."""
    alphabet = draw(st.sampled_from(["ab", "abc", "ab▁é"]))
    pieces = draw(st.lists(st.text(alphabet=alphabet, max_size=3), max_size=12))
    if draw(st.booleans()):
        scores = [-float(len(p)) for p in pieces]
    else:
        values = st.sampled_from([-1.0, -2.0, -3.0, -0.5, 0.0, 2.0, 10.0, -5.0])
        scores = [draw(values) for _ in pieces]
    return [("<unk>", 0.0), *zip(pieces, scores)], alphabet


@pytest.mark.slow
@HYP
@given(vocab_alphabet=small_vocabularies(), unk=st.one_of(st.none(), st.integers(0, 12)), data=st.data())
def test_random_small_vocabularies_match_tokenizers(vocab_alphabet, unk, data) -> None:
    """Tiny vocabularies with duplicate pieces, empty pieces, positive scores, ties,
    and ``unk_id=None``: same ids, or both raise. Texts are mostly glued from the
    vocabulary's own pieces, so that competing segmentations exist."""
    vocab, alphabet = vocab_alphabet
    part = st.one_of(
        st.sampled_from([p for p, _ in vocab[1:]] or ["a"]),
        st.text(alphabet=alphabet + "xy", max_size=2),
    )
    texts = data.draw(st.lists(st.lists(part, max_size=6).map("".join), min_size=1, max_size=4))
    unk_id = None if unk is None else unk % len(vocab)
    assert_same_or_both_raise(vocab, unk_id, texts)


def assert_same_or_both_raise(vocab, unk_id, texts) -> None:
    model = Unigram(vocab, unk_id=unk_id)
    ref = tokenizers.Tokenizer(tokenizers.models.Unigram(vocab, unk_id, False))

    def reference_spans(text):
        enc = ref.encode(text)
        return [(i, a, b) for i, (a, b) in zip(enc.ids, enc.offsets)]

    for text in texts:
        ours = outcome(model.encode_piece_spans, text)
        theirs = outcome(reference_spans, text)
        assert ours == theirs, (vocab, unk_id, text)
        if ours[0] == "ok":
            assert model.encode_piece(text) == tuple(i for i, _, _ in ours[1])
        else:
            with pytest.raises(TokstreamError, match="no unk_id"):
                model.encode_piece(text)


@pytest.mark.parametrize(
    ("vocab", "texts"),
    [
        # all segmentations of "abc" tie: the piece starting earliest at each end wins
        (
            [("a", -1.0), ("b", -1.0), ("c", -1.0), ("ab", -2.0), ("bc", -2.0), ("abc", -3.0)],
            ["abc", "abcabc", "cab", "bca"],
        ),
        # "ax" ties with "a" + unknown "x" (10 + (-5 - 10) == -5)
        ([("a", 10.0), ("ax", -5.0)], ["ax", "axx", "xax"]),
        # two unknown edges tie with a piece
        ([("a", 0.0), ("xy", -30.0), ("q", -10.0)], ["xy", "axy", "xyq"]),
    ],
)
def test_tie_breaking_matches_tokenizers(vocab, texts) -> None:
    assert_same_or_both_raise([("<unk>", 0.0), *vocab], 0, texts)


# --------------------------------------------------------------------- byte fallback


def byte_vocab(missing: Iterable[int] = ()) -> list[tuple[str, float]]:
    """``<unk>``, the 256 byte pieces (but ``missing``), some text pieces, a duplicate."""
    skip = set(missing)
    vocab = [("<unk>", 0.0)]
    vocab += [(f"<0x{b:02X}>", -20.0 - b / 1000) for b in range(256) if b not in skip]
    vocab += [
        ("a", -1.0),
        ("b", -1.5),
        ("ab", -2.0),
        (f"{META}a", -1.2),
        (META, -2.5),
        ("é", -4.0),
        ("中", -5.0),
        ("<0xE2>", -30.0),
        ("xy", -200.0),
    ]
    return vocab


byte_text = st.lists(
    st.one_of(
        st.text(alphabet="ab▁é中xyz", max_size=4),
        fragment,
        st.sampled_from(["⅐", "⅑⅑", "😀", "\x00", "\x7f", "<0xE2>", "x", "y"]),
    ),
    min_size=1,
    max_size=6,
).map("".join)


@pytest.mark.slow
@HYP
@given(text=byte_text, missing=st.sampled_from([(), tuple(range(0x80, 0x90)), (0x78,)]))
def test_byte_fallback_matches_tokenizers(text: str, missing) -> None:
    assume(not has_surrogates(text))
    model = Unigram(byte_vocab(missing), unk_id=0, byte_fallback=True)
    assert_same(model, reference(model), [text])


def test_byte_fallback_known_cases() -> None:
    model = Unigram(byte_vocab(), unk_id=0, byte_fallback=True)
    ids = {p: i for i, (p, _) in enumerate(model.get_vocab())}
    # One unknown character: its three bytes, each spanning the character.
    assert model.encode_piece_spans("a⅑") == [
        (ids["a"], 0, 1),
        (ids["<0xE2>"], 1, 2),
        (ids["<0x85>"], 1, 2),
        (ids["<0x91>"], 1, 2),
    ]
    # A fused run of two: six bytes, each spanning both characters (tokenizers' offsets).
    assert [s[1:] for s in model.encode_piece_spans("⅑⅑")] == [(0, 2)] * 6
    # A byte missing from the vocabulary: the whole fused run is one unk.
    partial = Unigram(byte_vocab(missing=[0x91]), unk_id=0, byte_fallback=True)
    assert partial.encode_piece_spans("⅐⅑b") == [(0, 0, 2), (partial.token_to_id("b"), 2, 3)]
    for m in (model, partial):
        assert_same(m, reference(m), ["a⅑", "⅑⅑", "⅐⅑b", "x", "xyz", "<unk>"])


def test_without_byte_fallback_unknown_runs_fuse() -> None:
    model = Unigram(byte_vocab(), unk_id=0)
    assert model.encode_piece("zq⅑a") == (0, model.token_to_id("a"))
    # The unk piece's own text is a piece (score 0): it fuses with unknown neighbours.
    assert model.encode_piece_spans("q<unk>q") == [(0, 0, 7)]
    assert_same(model, reference(model), ["zq⅑a", "xyz⅑a", "q<unk>q", "<unk>", "a<unk>b"])


# -------------------------------------------------------------- sample and nbest

TINY = [("<unk>", 0.0), ("a", -1.0), ("b", -1.5), ("ab", -2.0), ("ba", -2.2), ("aba", -3.1), ("bab", -4.0), ("c", -2.5)]


@pytest.mark.slow
@pytest.mark.parametrize("alpha", [1.0, 0.3, 0.0, 2.5])
@pytest.mark.parametrize("piece", ["ababa", "abxab", "bab"])
def test_sample_frequencies_fit_exact_path_probabilities(alpha: float, piece: str) -> None:
    model = Unigram(TINY, unk_id=0)
    probs: dict[tuple[int, ...], float] = {}
    for path in segmentations(piece, TINY, 0):
        key = fused(path, 0)
        probs[key] = probs.get(key, 0.0) + math.exp(alpha * path_score(path))
    total = sum(probs.values())
    probs = {k: v / total for k, v in probs.items()}
    rng = np.random.default_rng(20240611)
    draws = 20_000
    counts = Counter(model.sample(piece, alpha=alpha, rng=rng) for _ in range(draws))
    assert chi_square_pvalue(counts, probs) > SIGNIFICANCE, (counts, probs)


def test_sample_reproducible_and_large_alpha_is_viterbi() -> None:
    model = Unigram(TINY, unk_id=0)
    one = [model.sample("ababab", alpha=0.5, rng=np.random.default_rng(7)) for _ in range(3)]
    two = [model.sample("ababab", alpha=0.5, rng=np.random.default_rng(7)) for _ in range(3)]
    assert one == two
    rng = np.random.default_rng(1)
    assert {model.sample("ababab", alpha=500.0, rng=rng) for _ in range(50)} == {model.encode_piece("ababab")}
    assert model.sample("", alpha=1.0, rng=rng) == ()
    with pytest.raises(ValueError, match="alpha"):
        model.sample("ab", alpha=math.nan, rng=rng)


def test_sentencepiece_sampling_fits_our_path_probabilities(botchan, spm_botchan) -> None:
    """SentencePiece's sampler and ours draw from the same distribution: both fit the
    exact probabilities computed from ``nbest`` (all paths) at alpha 0.3."""
    spm = pytest.importorskip("sentencepiece")
    spm.set_random_generator_seed(12345)
    word, alpha, draws = "Botchan", 0.3, 20_000
    normalized = spm_botchan.normalize(word)
    paths = botchan.nbest(normalized, 10_000)
    assert 10 < len(paths) < 10_000
    weights = {ids: math.exp(alpha * score) for ids, score in paths}
    total = sum(weights.values())
    probs = {k: v / total for k, v in weights.items()}
    theirs = Counter(
        tuple(spm_botchan.encode(word, enable_sampling=True, alpha=alpha, nbest_size=-1)) for _ in range(draws)
    )
    rng = np.random.default_rng(99)
    ours = Counter(botchan.sample(normalized, alpha=alpha, rng=rng) for _ in range(draws))
    # Pool the rare paths (expected count < 5) so the chi-square approximation holds.
    rare = {k for k, p in probs.items() if p * draws < 5}
    pooled: dict = {k: p for k, p in probs.items() if k not in rare}
    if rare:
        pooled["rare"] = sum(probs[k] for k in rare)
    for counts in (theirs, ours):
        pooled_counts = Counter({("rare" if k in rare else k): v for k, v in counts.items()})
        assert chi_square_pvalue(pooled_counts, pooled) > SIGNIFICANCE


@HYP
@given(piece=st.text(alphabet="abcx", max_size=7), n=st.integers(1, 40))
def test_nbest_equals_brute_force(piece: str, n: int) -> None:
    vocab = [
        ("<unk>", 0.0),
        ("a", -1.0),
        ("b", -1.25),
        ("ab", -2.0),
        ("ba", -2.375),
        ("aba", -3.0625),
        ("bab", -4.5),
        ("c", -2.75),
        ("abc", -3.5),
    ]
    model = Unigram(vocab, unk_id=0)
    every = sorted(
        ((fused(p, 0), path_score(p)) for p in segmentations(piece, vocab, 0)),
        key=lambda item: -item[1],
    )
    got = model.nbest(piece, n)
    assert [s for _, s in got] == [s for _, s in every[:n]]
    # Same multiset of (ids, score) up to the order of equal scores.
    by_score: dict[float, Counter] = {}
    for ids, s in every:
        by_score.setdefault(s, Counter())[ids] += 1
    for ids, s in got:
        assert by_score[s][ids] > 0, (piece, ids, s)
        by_score[s][ids] -= 1
    assert got[0][0] == model.encode_piece(piece)


@HYP
@given(text=pieces_text)
def test_nbest_first_is_viterbi(botchan, text: str) -> None:
    best = botchan.nbest(text, 3)
    assert best[0][0] == botchan.encode_piece(text)
    assert [s for _, s in best] == sorted((s for _, s in best), reverse=True)


def test_nbest_ties_follow_viterbi_order() -> None:
    vocab = [("<unk>", 0.0), ("a", -1.0), ("aa", -2.0), ("aaa", -3.0)]
    model = Unigram(vocab, unk_id=0)
    ref = reference(model)
    # All 4 segmentations of "aaa" score -3: Viterbi keeps the earliest start.
    got = model.nbest("aaa", 10)
    assert [s for _, s in got] == [-3.0] * 4
    assert got[0][0] == model.encode_piece("aaa") == tuple(ref.encode("aaa").ids)
    assert model.nbest("aaa", 0) == [] and model.nbest("", 2) == [((), 0.0)]


def test_unk_id_none() -> None:
    vocab = [("a", -1.0), ("ab", -1.0), ("bc", -1.0)]
    model = Unigram(vocab, unk_id=None)
    ref = reference(model)
    # "b" is no piece, but its unknown edge would not improve the path: no error.
    assert model.encode_piece("ab") == tuple(ref.encode("ab").ids) == (1,)
    assert model.encode_piece("abc") == tuple(ref.encode("abc").ids)
    with pytest.raises(TokstreamError, match=r"'c' at offset 0.*unk_id"):
        model.encode_piece("c")
    with pytest.raises(Exception, match=r"MissingUnkId|unk_id"):
        ref.encode("c")
    assert model.nbest("abc", 5) == [((0, 2), -2.0)]
    with pytest.raises(TokstreamError):
        model.nbest("c", 5)
    with pytest.raises(TokstreamError):
        model.sample("c", alpha=1.0, rng=np.random.default_rng(0))


# -------------------------------------------------------------- long runs


@pytest.mark.parametrize("char", ["a", "x", "中", META])
def test_long_runs(botchan, botchan_ref, char: str) -> None:
    """10^5 repeats (known pieces, one fused unknown run) finish and agree."""
    piece = char * 100_000
    assert_same(botchan, botchan_ref, [piece])


# ----------------------------------------------------------- construction, JSON


def test_to_json_equals_tokenizers_serialization(botchan, botchan_json) -> None:
    ours = botchan.to_json()
    theirs = json.loads(reference(botchan).to_str())["model"]
    assert ours == theirs
    assert list(ours) == list(theirs)
    assert ours == botchan_json["model"]


def test_json_round_trip_and_pickle(botchan) -> None:
    again = Unigram.from_json(json.loads(json.dumps(botchan.to_json())))
    assert again.to_json() == botchan.to_json()
    copy = pickle.loads(pickle.dumps(botchan))
    assert copy.to_json() == botchan.to_json()
    assert copy.encode_piece(META + "Botchan") == botchan.encode_piece(META + "Botchan")
    bf = Unigram(byte_vocab(), unk_id=0, byte_fallback=True)
    assert Unigram.from_json(bf.to_json()).to_json() == bf.to_json()


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda m: m.update(type="BPE"), r"model\.type: expected 'Unigram'"),
        (lambda m: m.pop("vocab"), r"model: missing field 'vocab'"),
        (lambda m: m.update(vocab={}), r"model\.vocab: expected an array"),
        (lambda m: m["vocab"].append(["x"]), r"model\.vocab\[2\]: expected a \[piece, score\]"),
        (lambda m: m["vocab"].append([1, 0.0]), r"model\.vocab\[2\]\[0\]: expected a string"),
        (lambda m: m["vocab"].append(["x", "0"]), r"model\.vocab\[2\]\[1\]: expected a number"),
        (lambda m: m["vocab"].append(["x", True]), r"model\.vocab\[2\]\[1\]: expected a number"),
        (lambda m: m["vocab"].append(["x", 1e308]), r"model\.vocab\[2\]\[1\]: score"),
        (lambda m: m.update(unk_id=-1), r"model\.unk_id: expected a non-negative integer"),
        (lambda m: m.update(unk_id=2), r"model\.unk_id: 2 is out of range"),
        (lambda m: m.update(byte_fallback="yes"), r"model\.byte_fallback: expected a boolean"),
    ],
)
def test_from_json_errors_name_the_path(mutate, message) -> None:
    obj = {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["a", -1.0]], "byte_fallback": False}
    mutate(obj)
    with pytest.raises(TokenizerFileError, match=message):
        Unigram.from_json(obj)


def test_from_json_defaults() -> None:
    model = Unigram.from_json({"vocab": [["a", -1.0]], "byte_fallback": None, "x": 1})
    assert model.unk_id is None and model.byte_fallback is False
    assert model.encode_piece("aa") == (0, 0)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="unk_id=1 is out of range"):
        Unigram([("a", 0.0)], unk_id=1)
    with pytest.raises(ValueError, match="vocabulary is empty"):
        Unigram([], unk_id=0)
    with pytest.raises(ValueError, match="finite"):
        Unigram([("a", math.nan)], unk_id=0)
    with pytest.raises(TypeError):
        Unigram([("a", "x")], unk_id=0)  # type: ignore[list-item]
    empty = Unigram([], unk_id=None)
    assert empty.encode_piece("") == ()
    with pytest.raises(TokstreamError):
        empty.encode_piece("a")


def test_brute_force_viterbi_on_all_short_strings() -> None:
    """Every string up to length 6 over a small alphabet, against brute force (the
    max-score path; ties are covered by the tokenizers differential tests)."""
    vocab = [("<unk>", 0.0), ("a", -1.0), ("b", -1.25), ("ab", -2.0), ("ba", -2.375), ("aba", -3.0625), ("c", -2.75)]
    model = Unigram(vocab, unk_id=0)
    for length in range(7):
        for chars in itertools.product("abcx", repeat=length):
            piece = "".join(chars)
            paths = segmentations(piece, vocab, 0)
            best = max(path_score(p) for p in paths)
            winners = {fused(p, 0) for p in paths if path_score(p) == best}
            assert model.encode_piece(piece) in winners, piece

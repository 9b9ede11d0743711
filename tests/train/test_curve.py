"""``tokstream/train/curve.py``: compression along training, against tiktoken for BPE
(the same truncated ranks) and along ``train_unigram``'s pruning rounds."""

from __future__ import annotations

import pytest
from helpers import fixture_text

import tokstream
from tokstream.train.curve import bpe_curve, bytes_per_token

EN = "corpora/corpus_botchan_en.txt"


def test_bpe_curve_equals_tiktoken_on_truncated_ranks() -> None:
    """Each point's tokenizer is the first merges of the trained one: tiktoken, given
    the same truncated ranks and pattern, compresses the held-out text the same."""
    tiktoken = pytest.importorskip("tiktoken")
    text = fixture_text(EN)
    tok = tokstream.train_bpe([text[:120_000]], 700, pattern="cl100k_base")
    held = [text[-40_000:]]
    curve = bpe_curve(tok, held, points=5)
    assert curve[0] == (256, 1.0) and curve[-1][0] == 700
    ranks = tok.pipeline.model.ranks  # type: ignore[attr-defined]
    size = len(held[0].encode("utf-8"))
    for vocab, bpt in curve:
        enc = tiktoken.Encoding(
            f"t{vocab}",
            pat_str=tok.pattern,
            mergeable_ranks={b: r for b, r in ranks.items() if r < vocab},
            special_tokens={},
        )
        assert bpt == pytest.approx(size / len(enc.encode_ordinary(held[0])), rel=1e-12)
    assert [b for _, b in curve] == sorted(b for _, b in curve)  # more merges, more bytes a token here


def test_unigram_snapshots_follow_pruning() -> None:
    text = fixture_text(EN)
    sizes: list[int] = []
    tok = tokstream.train_unigram([text[:120_000]], 700, snapshot=lambda t: sizes.append(t.n_vocab))
    assert len(sizes) >= 3
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] >= tok.n_vocab
    assert bytes_per_token(tok, [text[-20_000:]]) > 1.0

"""examples/speculative_decoding.py: it runs, and what it prints is true.

The example's functions are imported by path and run on small settings: the
speculative sampler keeps every constraint, streams the same text as ``tok.decode``
up to the stop string, saves target passes, and its output passes the chi-square
check against the exact constrained distribution. The script itself runs with no
arguments in ``tests/test_examples.py``.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from helpers import load_example


@cache
def _example() -> ModuleType:
    return load_example("speculative_decoding")


@cache
def _built():  # type: ignore[no-untyped-def]
    return _example().build(100_000)


@pytest.mark.slow
def test_main_prints_a_passing_summary(capsys: pytest.CaptureFixture[str]) -> None:
    ex = _example()
    code = ex.main(["--samples", "100", "--runs", "1", "--corpus-chars", "100000", "--max-new-tokens", "16"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "acceptance rate:" in out and "ids per target pass:" in out and "modeled time per id" in out
    assert out.count("speculative  chi2") == 2
    assert "distribution check: PASS" in out


def test_speculative_sampling_keeps_the_constraints_and_streams_exactly() -> None:
    ex = _example()
    import tokstream
    from tokstream.constrain import choice_constraint, heal

    tok, draft, target, masker, _ = _built()
    eos = tok.special_tokens["<|endoftext|>"]
    healing = heal(tok, tok.encode(ex.PROMPT), max_backoff=2)
    assert healing.prefix == b" mi"
    for seed in range(3):
        rng = np.random.default_rng(seed)
        decoder = tokstream.StreamDecoder(tok, stop=ex.STOP, prefix_ids=healing.prompt_ids)
        pieces: list[str] = []
        stats = ex.Stats()
        ids = ex.speculative_sample(
            draft,
            target,
            masker,
            healing.prompt_ids,
            healing.constraint(),
            k=4,
            rng=rng,
            max_new_tokens=30,
            eos_id=eos,
            decoder=decoder,
            on_text=pieces.append,
            stats=stats,
        )
        pieces.append(decoder.finish())
        assert tok.decode_bytes(ids).startswith(b" mi")
        full = tok.decode(ids)
        text = "".join(pieces)
        if decoder.stopped:
            assert full.startswith(text + "\n\n")
        else:
            assert text == full and (len(ids) == 30 or ids[-1] == eos)
        assert stats.tokens == len(ids) and stats.target_passes <= len(ids)

        answer = ex.speculative_sample(
            draft,
            target,
            masker,
            tok.encode(ex.QUESTION),
            choice_constraint(tok, ex.ANSWERS, eos_id=eos),
            k=4,
            rng=rng,
            max_new_tokens=ex.ANSWER_LIMIT,
            eos_id=eos,
            masked_draft=seed % 2 == 0,
        )
        assert answer[-1] == eos and tok.decode(answer[:-1]) in ex.ANSWERS


@pytest.mark.slow
def test_distribution_check_passes_and_is_sensitive() -> None:
    ex = _example()
    tok, draft, target, masker, _ = _built()
    lines: list[str] = []
    results = ex.distribution_check(tok, draft, target, masker, k=4, samples=150, seed=1, show=lines.append)
    assert len(results) == 2
    for spec, plain, tv in results:
        assert spec.passed and plain.passed, lines
        assert 0 <= tv <= 1
    # The goodness-of-fit itself rejects a wrong distribution.
    exact = {(1,): 0.5, (2,): 0.5}
    biased = [(1,)] * 150 + [(2,)] * 50
    assert not ex.goodness_of_fit("biased", biased, exact, 0.001).passed
    assert ex.goodness_of_fit("fair", [(1,)] * 100 + [(2,)] * 100, exact, 0.001).passed


def test_chi2_helpers_match_the_table() -> None:
    ex = _example()
    # Upper 0.1% points (NIST/SEMATECH e-Handbook, 1.3.6.7.4).
    for df, value in {1: 10.828, 4: 18.467, 11: 31.264, 13: 34.528}.items():
        assert ex.chi2_critical(df, 0.001) == pytest.approx(value, abs=2e-3)


def test_embedded_excerpt_without_the_fixture(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    ex = _example()
    monkeypatch.setenv("TOKSTREAM_FIXTURES", str(tmp_path))
    text, source = ex.load_corpus(None)
    assert text == ex.EXCERPT and "embedded" in source
    assert ex.PROMPT.rsplit(" ", 1)[0] in ex.EXCERPT and "Into my grave?" in ex.EXCERPT
    tok, draft, target, masker, _ = ex.build(None)
    lines: list[str] = []
    spec, plain = ex.demo(
        tok, draft, target, masker, k=3, max_new_tokens=12, seed=0, masked_draft=True, runs=1, show=lines.append
    )
    figures = ex.summary(spec, plain, k=3, target_order=3, target_ms=30, draft_ms=3, show=lines.append)
    assert 0 < figures["acceptance_rate"] <= 1
    assert figures["ids_per_target_pass"] > 1
    assert spec.target_passes < spec.tokens and plain.target_passes == plain.tokens

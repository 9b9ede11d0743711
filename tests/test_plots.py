"""``tokstream stats --plot`` and ``tokstream train --plot`` (``tokstream/plots.py``,
``tokstream/train/curve.py``): the PNGs exist, have the drawn size and are not blank;
without matplotlib, one line names the extra (the curves' numbers: tests/train/test_curve.py);
bad combinations of options are usage errors.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import fixture_file, fixture_text

from tokstream.cli import main

matplotlib_image = pytest.importorskip("matplotlib.image", reason="matplotlib is in the test extra")

EN = "corpora/corpus_botchan_en.txt"
JA = "corpora/corpus_wagahaiwa_nekodearu_ja.txt"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _check_png(path: Path, width: int, height: int) -> None:
    """A PNG of ``width`` x ``height`` pixels, over 10 KB, with drawn content: many
    distinct colours and pixels far from the white background."""
    assert path.stat().st_size > 10_000
    pixels = matplotlib_image.imread(str(path))
    assert pixels.shape[:2] == (height, width)
    rgb = pixels[..., :3].reshape(-1, 3)
    assert len(np.unique((rgb * 255).astype(np.uint8), axis=0)) > 20
    assert (rgb.min(axis=1) < 0.5).mean() > 0.01  # ink on more than 1% of the image


def test_stats_plot(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "stats.png"
    files = [str(fixture_file(EN)), str(fixture_file(JA))]
    code, text, err = _run(capsys, "stats", "-t", "cl100k_base", "-t", "o200k_base", *files, "--plot", str(out))
    assert code == 0, err
    assert "tokens/byte" in text  # the table is still printed
    _check_png(out, 900, 400)


def _split_corpus(tmp_path: Path) -> tuple[Path, Path]:
    text = fixture_text(EN)
    train, held = tmp_path / "train.txt", tmp_path / "held.txt"
    train.write_text(text[:120_000], "utf-8")
    held.write_text(text[-40_000:], "utf-8")
    return train, held


@pytest.mark.parametrize("model", ["bpe", "unigram"])
def test_train_plot(capsys: pytest.CaptureFixture[str], tmp_path: Path, model: str) -> None:
    train, held = _split_corpus(tmp_path)
    out = tmp_path / "curve.png"
    argv = ["train", "-m", model, "-n", "900", str(train), "-o", str(tmp_path / "t.json")]
    code, text, err = _run(capsys, *argv, "--plot", str(out), "--heldout", str(held))
    assert code == 0, err
    assert f"{out}:" in text and "held-out bytes/token" in text
    _check_png(out, 700, 400)


def test_without_matplotlib_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, name, None)  # import raises ImportError
    code, out, err = _run(capsys, "stats", str(fixture_file(EN)), "--plot", str(tmp_path / "x.png"))
    assert code == 1 and out == ""
    assert err.strip() == "tokstream: error: --plot needs matplotlib: pip install 'tokstream[plot]'"
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--plot", "{tmp}/p.png"], "--plot needs --heldout FILE"),
        (["--heldout", "{held}"], "--heldout goes with --plot"),
        (["-m", "wordpiece", "--plot", "{tmp}/p.png", "--heldout", "{held}"], "wordpiece has no such curve"),
    ],
)
def test_train_plot_usage_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, extra: list[str], needle: str
) -> None:
    train, held = _split_corpus(tmp_path)
    model = [] if "-m" in extra else ["-m", "bpe"]
    args = [a.format(tmp=tmp_path, held=held) for a in extra]
    code, out, err = _run(capsys, "train", *model, "-n", "600", str(train), "-o", str(tmp_path / "t.json"), *args)
    assert code == 2 and needle in err and out == ""
    assert not (tmp_path / "t.json").exists()

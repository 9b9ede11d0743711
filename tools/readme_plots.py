"""Redraw the README's two figures (docs/img/stats.png, docs/img/train_bpe.png) with the
command line, as a user would: ``python tools/readme_plots.py`` from the repository
root (needs ``pip install '.[plot]'`` and the corpora in tests/data).

- ``tokstream stats --plot``: cl100k_base, o200k_base and r50k_base on an English and
  a Japanese novel;
- ``tokstream train --plot``: BPE to 2,000 ids on 300,000 characters of English, the
  book's last 50,000 held out.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]

from helpers import fixture_file, fixture_text  # noqa: E402  (the tests' fixture reader)

from tokstream.cli import main  # noqa: E402

OUT = ROOT / "docs" / "img"


def run() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    en, ja = (str(fixture_file(f"corpora/{n}")) for n in ("corpus_botchan_en.txt", "corpus_wagahaiwa_nekodearu_ja.txt"))
    code = main(
        ["stats", "-t", "cl100k_base", "-t", "o200k_base", "-t", "r50k_base", en, ja, "--plot", str(OUT / "stats.png")]
    )
    if code:
        return code
    text = fixture_text("corpora/corpus_alice_in_wonderland_en.txt") + fixture_text("corpora/corpus_botchan_en.txt")
    with tempfile.TemporaryDirectory() as tmp:
        train, held = Path(tmp, "train.txt"), Path(tmp, "held.txt")
        train.write_text(text[:300_000], "utf-8")
        held.write_text(text[-50_000:], "utf-8")
        argv = ["train", "-m", "bpe", "-n", "2000", str(train), "-o", str(Path(tmp, "t.json"))]
        return main([*argv, "--plot", str(OUT / "train_bpe.png"), "--heldout", str(held)])


if __name__ == "__main__":
    raise SystemExit(run())

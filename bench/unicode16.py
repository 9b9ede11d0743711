"""Warm encode with a character Unicode 16.0 does not assign, and code with long pieces.

Run ``python bench/unicode16.py`` from the repository root (issue 18). In one process,
for ``o200k_base`` and ``cl100k_base``:

- **plain**: warm 1 MB of English prose (the corpora ``bench/encode.py`` uses);
- **cliff**: the same text with one character inserted in the middle that the
  installed ``regex`` assigns and Unicode 16.0 (tiktoken's version) does not, so the
  pre-tokenizer must match by 16.0 classes (``pre_tokenizers.unicode16``);
- **code**: warm Python source (``bench/encode.py``'s ``code_sample``); **code+long**:
  the same plus comment rulers, long identifiers and base64 (pieces and parts over
  ``_fastpath.MAX_CACHED_LEN``);
- **ja** / **ja+1**: 400k characters of Japanese, plain and with the character in the
  middle (information: one part of ~100k characters holds it).

Each line prints tokstream's and tiktoken's MB/s (best of ``BENCH_REPEAT`` warm calls,
taken in rounds over all cases) and the verdict against the target: cliff/plain time at most 1.2x.
The ids are checked against tiktoken's first. Absolute numbers on a shared machine are
noise; the ratios are the result.
"""

from __future__ import annotations

import base64
import os
import random
import sys
import time
from collections.abc import Callable

from encode import FIXTURES, code_sample, reference_tiktoken, verdict

import tokstream
from tokstream.pre_tokenizers.patterns import PATTERNS
from tokstream.pre_tokenizers.unicode16 import pattern_fixes

#: Cliff time over plain time, at most (issue 18).
TARGET = 1.2


def english() -> str:
    """1 MB of English prose: botchan and Alice, then Shakespeare up to 1,000,000 bytes."""
    corpora = FIXTURES / "corpora"
    text = (corpora / "corpus_botchan_en.txt").read_text("utf-8") + (
        corpora / "corpus_alice_in_wonderland_en.txt"
    ).read_text("utf-8")
    more = (corpora / "shakespeare_gutenberg_modern.txt").read_text("utf-8")
    return (text + more)[:1_000_000]


def new_character(name: str) -> str:
    """A letter the installed ``regex`` assigns and Unicode 16.0 does not (the first the
    pattern's fixes hold: CJK Extension J on ``regex`` >= 2026.5), or U+0295."""
    table = pattern_fixes(PATTERNS[name]).table
    letters = [chr(cp) for cp in sorted(table) if chr(cp).isalpha() or cp >= 0x30000]
    return letters[-1] if letters else "\u0295"


def long_piece_code() -> str:
    """``code_sample`` plus comment rulers, long identifiers and base64 blobs."""
    rng = random.Random(18)
    extra = []
    for i in range(400):
        blob = base64.b64encode(rng.randbytes(96)).decode()
        extra.append(f"# {'-' * 76}\nDATA_{i} = b'{blob}'\nvery_long_identifier_name_{'x' * 60}_{i} = {i}\n")
    return code_sample() + "\n" + "".join(extra)


def interleaved(
    cases: tuple[tuple[str, str], ...], ours: Callable[[str], object], ref: Callable[[str], object], reps: int
) -> dict[str, tuple[float, float]]:
    """The best of ``reps`` warm calls per case and implementation, taken in rounds over
    all of them (so load on a shared machine hits plain and cliff alike)."""
    best = {label: [float("inf"), float("inf")] for label, _ in cases}
    for _ in range(reps):
        for label, text in cases:
            for side, fn in enumerate((ours, ref)):
                t = time.perf_counter()
                fn(text)
                best[label][side] = min(best[label][side], time.perf_counter() - t)
    return {label: (a, b) for label, (a, b) in best.items()}


def main() -> int:
    if not FIXTURES.is_dir():
        print(f"fixtures not found at {FIXTURES}; set TOKSTREAM_FIXTURES", file=sys.stderr)
        return 1
    reps = int(os.environ.get("BENCH_REPEAT", "5"))
    plain = english()
    code = long_piece_code()
    japanese = (FIXTURES / "corpora" / "corpus_wagahaiwa_nekodearu_ja.txt").read_text("utf-8")[:400_000]
    for name in ("o200k_base", "cl100k_base"):
        ref = reference_tiktoken(name)
        ours = tokstream.load(name)
        c = new_character(name)
        mid = plain.index(" ", len(plain) // 2)
        cliff = plain[:mid] + " " + c + plain[mid:]
        # Japanese has few spaces: the character lands in a part of ~100k characters.
        ja_cliff = japanese[:200_000] + c + japanese[200_000:]
        cases = (
            ("plain", plain),
            ("cliff", cliff),
            ("code", code_sample()),
            ("code+long", code),
            ("ja", japanese),
            ("ja+1", ja_cliff),
        )
        for label, text in cases:
            assert ours.encode_ordinary(text) == ref.encode_ordinary(text), (name, label)
        times = interleaved(cases, ours.encode_ordinary, ref.encode_ordinary, reps)
        for label, text in cases:
            warm, tik = times[label]
            mb = len(text.encode("utf-8")) / 1e6
            print(
                f"unicode16  {name:<11}  {label:<9} {mb:5.2f} MB  warm {mb / warm:6.1f} MB/s  "
                f"tiktoken {mb / tik:6.1f} MB/s  warm/tiktoken {tik / warm:4.2f}x",
                flush=True,
            )
        for base, bad, judged in (("plain", "cliff", True), ("ja", "ja+1", False)):
            ratio = times[bad][0] / times[base][0]
            tik_ratio = times[bad][1] / times[base][1]
            result = verdict(ratio <= TARGET) if judged else "(information)"
            print(
                f"unicode16  {name:<11}  {bad}/{base} time {ratio:4.2f}x (U+{ord(c):04X}; target <= {TARGET}) "
                f"{result}  tiktoken {bad}/{base} {tik_ratio:4.2f}x",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Load time: tokstream against the reference loading the same file in this process.

Run ``python bench/load.py`` from the repository root. Each case loads the file afresh
N times after a warm-up (a new tokenizer each time, the garbage collector run before
each, the result freed after the clock stops), keeps the best, and prints both times
and their ratio (``<1``: tokstream loads faster). Targets:
Llama 3's ``tokenizer.json`` at most 1.5x ``tokenizers.Tokenizer.from_file``; the
o200k_base rank file at most 1.5x tiktoken's ``load_tiktoken_bpe`` + ``Encoding``.

Needs ``../shared/fixtures``, ``tiktoken``, ``tokenizers`` and ``sentencepiece``.
"""

from __future__ import annotations

import gc
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tokstream import Tokenizer
from tokstream.pre_tokenizers import PATTERNS

FIXTURES = Path(os.environ.get("TOKSTREAM_FIXTURES", Path(__file__).resolve().parents[2] / "shared" / "fixtures"))
TARGET = 1.5


def best_load(fn: Callable[[], object], n: int) -> float:
    """The fastest of ``n`` loads after one warm-up, each after a garbage collection.
    The result is freed after the clock stops: freeing the previous tokenizer (a
    280k-entry merge table) is not loading."""
    fn()
    best = float("inf")
    for _ in range(n):
        gc.collect()
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
        del result
    return best


def line(case: str, ours: float, ref: float, ref_name: str, target: float | None) -> str:
    ratio = ours / ref
    verdict = "" if target is None else f"  target <= {target}  {'PASS' if ratio <= target else 'MISS'}"
    return (
        f"load  {case:<34} tokstream {ours * 1000:7.1f} ms  {ref_name} {ref * 1000:7.1f} ms  "
        f"time ratio {ratio:4.2f}x (<1: tokstream faster){verdict}"
    )


def main() -> int:
    if not FIXTURES.is_dir():
        print(f"fixtures not found at {FIXTURES}; set TOKSTREAM_FIXTURES", file=sys.stderr)
        return 1
    import sentencepiece
    import tiktoken
    import tokenizers
    from tiktoken.load import load_tiktoken_bpe

    reps = int(os.environ.get("BENCH_REPEAT", "5"))
    for name in ("o200k_base", "cl100k_base"):
        path = str(FIXTURES / "tiktoken" / f"{name}.tiktoken")
        pattern = PATTERNS[name]

        def ours(path: str = path, name: str = name) -> object:
            return Tokenizer.from_tiktoken(path, pattern=name)

        def ref(path: str = path, pattern: str = pattern) -> object:
            return tiktoken.Encoding("ref", pat_str=pattern, mergeable_ranks=load_tiktoken_bpe(path), special_tokens={})

        print(line(f"{name}.tiktoken", best_load(ours, reps), best_load(ref, reps), "tiktoken", TARGET), flush=True)
    for file in ("llama3", "mistral_7b_v1", "bert_minilm", "gpt2", "botchan_unigram_1000"):
        path = str(FIXTURES / "hf" / f"{file}_tokenizer.json")
        target = TARGET if file == "llama3" else None

        def ours_json(path: str = path) -> object:
            return Tokenizer.from_file(path)

        def ref_json(path: str = path) -> object:
            return tokenizers.Tokenizer.from_file(path)

        t_ours, t_ref = best_load(ours_json, reps), best_load(ref_json, reps)
        print(line(f"{file}_tokenizer.json", t_ours, t_ref, "tokenizers", target), flush=True)
    for file in ("mistral_7b_v1_tokenizer.model", "spm_botchan_en_unigram_1000.model"):
        path = str(FIXTURES / "spm" / file)

        def ours_spm(path: str = path) -> object:
            return Tokenizer.from_sentencepiece(path)

        def ref_spm(path: str = path) -> object:
            return sentencepiece.SentencePieceProcessor(model_file=path)

        print(line(file, best_load(ours_spm, reps), best_load(ref_spm, reps), "sentencepiece", None), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Encode throughput: tokstream (cold and warm) against tiktoken, puretiktoken and tokenizers.

Run ``python bench/encode.py`` from the repository root. Every case encodes the same
text with each implementation in this one process, takes the best of N runs, and
prints MB/s plus ratios (``>1``: tokstream is faster). Absolute numbers on a shared
machine are noise; the ratios are the result.

- **cold**: a freshly built tokenizer (empty caches), its first call;
- **warm**: the same tokenizer encoding the same text again (caches filled);
- **tiktoken**: OpenAI's Rust implementation, built offline from the fixture rank file;
- **puretiktoken**: the pure-Python peer (``pip install puretiktoken``; cl100k/o200k only);
- **tokenizers**: Hugging Face's Rust library on the ``tokenizer.json`` fixtures (Llama 3,
  Mistral, BERT, and GPT-2 / botchan Unigram for information), ``encode`` with special
  tokens off, warm (its word cache filled by a first call too).

Needs ``../shared/fixtures`` (corpora, rank files, tokenizer.json files), ``tiktoken``
and ``tokenizers``. ``python bench/encode.py hf`` runs only the tokenizers section,
``python bench/encode.py tiktoken`` only the others.
"""

from __future__ import annotations

import inspect
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import tokstream
from tokstream.tokenizer import Tokenizer

FIXTURES = Path(os.environ.get("TOKSTREAM_FIXTURES", Path(__file__).resolve().parents[2] / "shared" / "fixtures"))


def best_of(fn: Callable[[], object], n: int, warmup: int = 0) -> float:
    """The fastest of ``n`` timed calls, after ``warmup`` untimed ones."""
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(n):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def verdict(ok: bool) -> str:
    """How the benches print a target: PASS or MISS."""
    return "PASS" if ok else "MISS"


def reference_tiktoken(name: str):  # type: ignore[no-untyped-def]
    import tiktoken
    import tiktoken_ext.openai_public as op
    from tiktoken.load import load_tiktoken_bpe

    local = FIXTURES / "tiktoken" / f"{name}.tiktoken"
    original = op.load_tiktoken_bpe
    op.load_tiktoken_bpe = lambda url, expected_hash=None: load_tiktoken_bpe(str(local), expected_hash)
    try:
        spec = op.ENCODING_CONSTRUCTORS[name]()
    finally:
        op.load_tiktoken_bpe = original
    return tiktoken.Encoding(
        spec["name"],
        pat_str=spec["pat_str"],
        mergeable_ranks=spec["mergeable_ranks"],
        special_tokens=spec["special_tokens"],
    )


def fresh(tok: Tokenizer) -> Tokenizer:
    """A new tokenizer over the same vocabulary, with empty caches."""
    return Tokenizer(tok.pipeline.model.ranks, pattern=tok.pattern, special_tokens=tok.special_tokens, name=tok.name)


def code_sample() -> str:
    # Python's own standard library: present on every machine, real code.
    import argparse
    import asyncio.base_events
    import collections
    import dataclasses
    import inspect as insp
    import typing

    return "\n".join(
        inspect.getsource(m) for m in (argparse, asyncio.base_events, collections, dataclasses, insp, typing)
    )


HF_FILES = (
    "llama3_tokenizer.json",
    "mistral_7b_v1_tokenizer.json",
    "bert_minilm_tokenizer.json",
    "gpt2_tokenizer.json",
    "botchan_unigram_1000_tokenizer.json",
)


def bench_tokenizers(texts: dict[str, str], reps: int) -> None:
    """tokenizer.json files: tokstream against Hugging Face tokenizers."""
    from tokenizers import Tokenizer as HFTokenizer

    for file in HF_FILES:
        path = FIXTURES / "hf" / file
        ref = HFTokenizer.from_file(str(path))
        ref.no_padding()
        ref.no_truncation()
        for label in ("english", "japanese"):
            text = texts[label]
            mb = len(text.encode("utf-8")) / 1e6
            t = time.perf_counter()
            cold_tok = Tokenizer.from_file(path)
            load = time.perf_counter() - t
            t = time.perf_counter()
            got = cold_tok.encode(text, disallowed_special=())
            cold = time.perf_counter() - t
            want = ref.encode(text, add_special_tokens=False).ids
            assert got == want, (file, label)
            warm = best_of(lambda: cold_tok.encode(text, disallowed_special=()), reps)
            hf = best_of(lambda: ref.encode(text, add_special_tokens=False), reps)
            print(
                f"encode  {file.removesuffix('_tokenizer.json'):<22} {label:<8} {mb:5.2f} MB  "
                f"load {load:5.2f} s  cold {mb / cold:6.1f} MB/s  warm {mb / warm:6.1f} MB/s  "
                f"tokenizers {mb / hf:6.1f} MB/s  warm/tokenizers {hf / warm:5.2f}x  "
                f"cold/tokenizers {hf / cold:5.2f}x  (>1: tokstream faster)",
                flush=True,
            )


def main() -> int:
    if not FIXTURES.is_dir():
        print(f"fixtures not found at {FIXTURES}; set TOKSTREAM_FIXTURES", file=sys.stderr)
        return 1
    section = sys.argv[1] if len(sys.argv) > 1 else "all"
    try:
        import puretiktoken
    except ImportError:
        puretiktoken = None
        print("puretiktoken not installed (pip install puretiktoken); skipping that column")
    corpora = FIXTURES / "corpora"
    texts = {
        "english": (corpora / "corpus_botchan_en.txt").read_text("utf-8")
        + (corpora / "corpus_alice_in_wonderland_en.txt").read_text("utf-8"),
        "code": code_sample(),
        "japanese": (corpora / "corpus_wagahaiwa_nekodearu_ja.txt").read_text("utf-8")[:400_000],
    }
    reps = int(os.environ.get("BENCH_REPEAT", "5"))
    if section in ("all", "hf"):
        bench_tokenizers(texts, reps)
    if section == "hf":
        return 0
    for name in ("cl100k_base", "o200k_base"):
        ref = reference_tiktoken(name)
        ours = tokstream.load(name)
        pure = puretiktoken.get_encoding(name) if puretiktoken else None
        for label, text in texts.items():
            mb = len(text.encode("utf-8")) / 1e6
            assert ours.encode_ordinary(text) == ref.encode_ordinary(text), (name, label)
            cold_tok = fresh(ours)
            t = time.perf_counter()
            cold_tok.encode_ordinary(text)
            cold = time.perf_counter() - t
            warm = best_of(lambda: ours.encode_ordinary(text), reps)
            tik = best_of(lambda: ref.encode_ordinary(text), reps)
            line = (
                f"encode  {name:<11}  {label:<8} {mb:5.2f} MB  cold {mb / cold:6.1f} MB/s  "
                f"warm {mb / warm:6.1f} MB/s  tiktoken {mb / tik:6.1f} MB/s"
            )
            if pure is not None:
                pure.encode_ordinary(text)  # its cache warm too: compare warm with warm
                pt = best_of(lambda: pure.encode_ordinary(text), reps)
                line += f"  puretiktoken {mb / pt:6.1f} MB/s"
            line += f"  warm/tiktoken {tik / warm:4.2f}x  cold/tiktoken {tik / cold:4.2f}x"
            if pure is not None:
                line += f"  warm/puretiktoken {pt / warm:4.2f}x"
            print(line + "  (>1: tokstream faster)", flush=True)

    # One huge pre-token: BPE must stay O(n log n).
    ref = reference_tiktoken("cl100k_base")
    ours = tokstream.load("cl100k_base")
    small, big = "a" * 100_000, "a" * 1_000_000
    assert ours.encode_ordinary(small) == ref.encode_ordinary(small)
    t_small = best_of(lambda: ours.encode_ordinary(small), 3)
    t_big = best_of(lambda: ours.encode_ordinary(big), 2)
    r_big = best_of(lambda: ref.encode_ordinary(big), 2)
    print(
        f"encode  cl100k_base  1M 'a'   tokstream {t_big:6.2f} s  tiktoken {r_big:6.2f} s  "
        f"time ratio {t_big / r_big:5.2f}x (target <= 10, <1: tokstream faster)  "
        f"100k->1M cost x{t_big / t_small:5.2f} (target <= 12: linear)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

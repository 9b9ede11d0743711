"""Unigram training: tokstream against SentencePiece's trainer, compression and time.

Run ``python bench/train_unigram_compression.py`` from the repository root. Sections:

- default, **compression**: the corpus is split 90/10 by position (characters); both
  trainers see the first 90%, and held-out bytes per token are measured on the last
  10% (bytes of the *original* text for both; ratio >1: tokstream compresses better).
  Options ``--sizes 1000,2000,8000``, ``--corpus PATH``, ``--byte-fallback``, and
  ``--free``, which also runs SentencePiece without its script and number limits on
  pieces (``split_by_unicode_script`` / ``split_by_number`` off, as tokstream).
- ``--time``: training wall and CPU time of each on the whole corpus at 8,000.
- ``--scaling``: time on the first 10% and on all of the corpus (after counting:
  tokstream gets the ``count_words`` Counter), best of 3 / 2 runs.

SentencePiece is made lossless: newlines become a visible symbol (U+21B5, absent from
the corpus), the ``identity`` normalizer, ``remove_extra_whitespaces=False``,
``character_coverage=1.0``, no ``<s>``/``</s>`` (so both vocabularies hold
``vocab_size`` pieces with ``<unk>``), the same byte fallback, ``num_threads=2`` (the
machine's cores; tokstream is single-threaded). Its input is the text cut into
~2,000-character sentences at spaces, the space dropped (its dummy prefix puts it
back), so both trainers see the same words. Times on a shared machine are noisy; the
CPU times are ``RUSAGE_SELF`` (SentencePiece's threads included).
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sentencepiece as spm

from tokstream.train.unigram import count_words, train_unigram

FIXTURES = Path(os.environ.get("TOKSTREAM_FIXTURES", Path(__file__).resolve().parents[2] / "shared" / "fixtures"))
NEWLINE = "\u21b5"


def spm_sentences(text: str, size: int = 2000) -> list[str]:
    """``text`` with newlines as U+21B5, cut at spaces into ~``size``-character lines."""
    text = text.replace("\n", NEWLINE)
    out, i = [], 0
    while i < len(text):
        j = text.find(" ", i + size)
        if j < 0:
            out.append(text[i:])
            break
        out.append(text[i:j])
        i = j + 1
    return out


def train_spm(
    text: str, vocab_size: int, byte_fallback: bool, threads: int = 2, free: bool = False
) -> spm.SentencePieceProcessor:
    """SentencePiece's unigram trainer, lossless; ``free``: without its script and
    number limits on pieces (as tokstream)."""
    model = io.BytesIO()
    extra = {"split_by_unicode_script": False, "split_by_number": False} if free else {}
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(spm_sentences(text)),
        model_writer=model,
        model_type="unigram",
        vocab_size=vocab_size,
        character_coverage=1.0,
        byte_fallback=byte_fallback,
        normalization_rule_name="identity",
        remove_extra_whitespaces=False,
        input_sentence_size=10**8,
        max_sentence_length=10**6,
        bos_id=-1,
        eos_id=-1,
        num_threads=threads,
        minloglevel=2,
        **extra,
    )
    return spm.SentencePieceProcessor(model_proto=model.getvalue())


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed(fn: Callable[[], Any], runs: int = 1) -> tuple[Any, float, float]:
    """(result, best wall s, best CPU s) over ``runs`` runs."""
    out, wall, proc = None, float("inf"), float("inf")
    for _ in range(runs):
        t, c = time.perf_counter(), cpu()
        out = fn()
        wall, proc = min(wall, time.perf_counter() - t), min(proc, cpu() - c)
    return out, wall, proc


def compression(text: str, name: str, sizes: list[int], byte_fallback: bool, free: bool) -> None:
    cut = int(len(text) * 0.9)
    train, held = text[:cut], text[cut:]
    held_bytes = len(held.encode("utf-8"))
    head = "| vocab | ours bytes/token | spm bytes/token | ratio | ours train s | spm train s |"
    print(head + (" spm free bytes/token | ratio |" if free else ""))
    print("|---" * (8 if free else 6) + "|")
    for size in sizes:
        ours, t_ours, _ = timed(lambda size=size: train_unigram([train], size, byte_fallback=byte_fallback))
        ref, t_spm, _ = timed(lambda size=size: train_spm(train, size, byte_fallback))
        ids = ours.encode(held)
        assert ours.decode(ids) == held or not byte_fallback
        b_ours = held_bytes / len(ids)
        b_spm = held_bytes / len(ref.encode(held.replace("\n", NEWLINE)))
        line = f"| {size} | {b_ours:.4f} | {b_spm:.4f} | {b_ours / b_spm:.4f} | {t_ours:.1f} | {t_spm:.1f} |"
        if free:
            free_spm = train_spm(train, size, byte_fallback, free=True)
            b_free = held_bytes / len(free_spm.encode(held.replace("\n", NEWLINE)))
            line += f" {b_free:.4f} | {b_ours / b_free:.4f} |"
        print(line + f"  ({name}, byte_fallback={byte_fallback})", flush=True)


def training_time(text: str, size: int = 8000) -> None:
    counts = count_words([text])
    _, w_ours, c_ours = timed(lambda: train_unigram(counts, size))
    _, w_spm, c_spm = timed(lambda: train_spm(text, size, False))
    print(
        f"train {size} on {len(text.encode()) / 1e6:.1f} MB: tokstream {w_ours:.1f} s wall ({c_ours:.1f} s CPU), "
        f"sentencepiece {w_spm:.1f} s wall ({c_spm:.1f} s CPU); ratio {w_ours / w_spm:.2f}x wall, "
        f"{c_ours / c_spm:.2f}x CPU (<1: tokstream faster)",
        flush=True,
    )


def scaling(text: str) -> None:
    small, full = text[: len(text) // 10], text
    counts = {k: count_words([t]) for k, t in (("small", small), ("full", full))}
    for size in (2000, 4000, 8000):
        _, w1, c1 = timed(lambda size=size: train_unigram(counts["small"], size), 3)
        _, w2, c2 = timed(lambda size=size: train_unigram(counts["full"], size), 2)
        print(
            f"tokstream {size}: 10% {w1:.2f} s ({c1:.2f} CPU), 100% {w2:.2f} s ({c2:.2f} CPU): "
            f"{w2 / w1:.1f}x wall, {c2 / c1:.1f}x CPU",
            flush=True,
        )
    for size in (2000, 4000):  # SentencePiece cannot make 8,000 pieces from the 10%
        _, w1, c1 = timed(lambda size=size: train_spm(small, size, False, threads=1), 3)
        _, w2, c2 = timed(lambda size=size: train_spm(full, size, False, threads=1), 2)
        print(
            f"sentencepiece (1 thread) {size}: 10% {w1:.2f} s, 100% {w2:.2f} s: {w2 / w1:.1f}x wall, "
            f"{c2 / c1:.1f}x CPU",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=str(FIXTURES / "corpora" / "shakespeare_gutenberg_modern.txt"))
    ap.add_argument("--sizes", default="1000,2000,8000")
    ap.add_argument("--byte-fallback", action="store_true")
    ap.add_argument("--free", action="store_true")
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--scaling", action="store_true")
    args = ap.parse_args()
    text = Path(args.corpus).read_text("utf-8")
    assert NEWLINE not in text
    if args.time:
        training_time(text)
    elif args.scaling:
        scaling(text)
    else:
        sizes = [int(s) for s in args.sizes.split(",")]
        compression(text, Path(args.corpus).name, sizes, args.byte_fallback, args.free)


if __name__ == "__main__":
    main()

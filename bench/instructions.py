"""Instruction counts of tokstream workloads under callgrind: a before/after check that a
loaded machine cannot disturb (wall-clock ratios on a shared VM can move by 40% between two
runs of the same code).

    python bench/instructions.py TREE_BEFORE TREE_AFTER [GROUP ...]

runs each GROUP (tt, hf, mini, stream, dec, masks, cache; default: all) with each tree on
PYTHONPATH under ``valgrind --tool=callgrind --dump-before=getpgrp``, and prints one
Markdown row per workload: millions of instructions before and after, and their ratio. A
workload sits between two ``mark()`` calls (``os.getpgrp``, which nothing else calls), so
callgrind dumps its counts separately; ``PYTHONHASHSEED=0`` and a ``gc.collect()`` between
workloads, in a slice of its own, keep the counts repeatable. The references (tiktoken, tokenizers) are the same
binaries in both runs, so a ratio against them moves exactly as our count does. Slow:
callgrind runs Python ~50x slower (all groups: ~20 CPU-minutes per tree).
"""

import gc
import inspect
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

F = Path(os.environ.get("TOKSTREAM_FIXTURES", Path(__file__).resolve().parents[2] / "shared" / "fixtures"))
labels = []


def mark(label):
    # The collection gets a slice of its own ("gc", not reported): inside a workload's
    # slice it counted the heap's size, not the workload (10% of a warm encode).
    labels.append("gc")
    os.getpgrp()
    gc.collect()
    labels.append(label)
    os.getpgrp()


def text(name, n):
    return (F / "corpora" / name).read_text(encoding="utf-8")[:n]


def code(n):
    import argparse
    import asyncio.base_events
    import collections
    import dataclasses
    import typing

    return "\n".join(
        inspect.getsource(m) for m in (argparse, asyncio.base_events, collections, dataclasses, inspect, typing)
    )[:n]


N = 20_000


def _counts(out: Path) -> dict[str, int]:
    labels = (out / "labels").read_text().split("\n")
    files = {}
    for f in out.iterdir():
        m = re.fullmatch(r"cg\.\d+(?:\.(\d+))?", f.name)
        if m:
            files[int(m[1]) if m[1] else 10**9] = int(
                re.search(r"^(?:summary|totals): (\d+)", f.read_text(errors="replace"), re.M)[1]
            )
    ks = sorted(files)
    got: dict[str, int] = {}
    for j, name in enumerate(labels):
        if j + 1 < len(ks) and name not in ("setup", "prep", "end", "gc"):
            got[name] = got.get(name, 0) + files[ks[j + 1]]
    return got


def _run(tree: str, group: str, tmp: Path) -> dict[str, int]:
    out = tmp / f"{Path(tree).name}_{group}"
    out.mkdir(parents=True)
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONPATH=str(Path(tree).resolve()), ICOUNT_LABELS=str(out / "labels"))
    subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--dump-before=getpgrp",
            f"--callgrind-out-file={out}/cg.%p",
            sys.executable,
            __file__,
            "--work",
            group,
        ],
        env=env,
        check=True,
        capture_output=True,
    )
    return _counts(out)


def main() -> None:
    before, after, *groups = sys.argv[1:]
    groups = groups or ["tt", "hf", "mini", "stream", "dec", "masks", "cache"]
    print("| workload | before (M instr) | after (M instr) | after/before |\n|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for g in groups:
            b, a = _run(before, g, Path(tmp)), _run(after, g, Path(tmp))
            for k in b:
                if k in a:
                    print(f"| {k} | {b[k] / 1e6:,.1f} | {a[k] / 1e6:,.1f} | {a[k] / b[k]:.3f} |", flush=True)


def _work(g: str) -> None:
    from tokstream import Tokenizer

    EN = text("corpus_botchan_en.txt", N)
    JA = text("corpus_wagahaiwa_nekodearu_ja.txt", N // 3)
    CODE = code(N)
    mark("setup")
    if g == "tt":
        from tokstream.formats.tiktoken import parse_ranks

        for name in ("o200k_base", "cl100k_base"):
            path = str(F / "tiktoken" / f"{name}.tiktoken")
            mark(f"load {name}")
            tok = Tokenizer.from_tiktoken(path, pattern=name)
            mark("prep")
            ranks = parse_ranks(open(path, "rb").read(), path)
            for lab, t in (("english", EN), ("code", CODE), ("japanese", JA)):
                mark("prep")
                tok = Tokenizer(ranks, pattern=name)
                mark(f"encode {name} {lab} cold")
                tok.encode_ordinary(t)
                mark(f"encode {name} {lab} warm")
                tok.encode_ordinary(t)
            mark("prep")
    elif g == "hf":
        for file in ("llama3", "mistral_7b_v1", "bert_minilm", "botchan_unigram_1000"):
            path = str(F / "hf" / f"{file}_tokenizer.json")
            mark(f"load {file}.json")
            tok = Tokenizer.from_file(path)
            for lab, t in (("english", EN), ("japanese", JA)):
                mark(f"encode {file} {lab} cold")
                tok.encode(t, disallowed_special=())
                mark(f"encode {file} {lab} warm")
                tok.encode(t, disallowed_special=())
    elif g == "stream":
        from tokstream.stream import StreamDecoder, StreamEncoder

        tok = Tokenizer.from_file(str(F / "hf" / "llama3_tokenizer.json"))
        t = text("shakespeare_gutenberg_modern.txt", 30_000)
        ids = tok.encode(t, disallowed_special=())
        chunks = [t[i : i + 16] for i in range(0, len(t), 16)]
        for stop in ((), ("<<STOP>>", "\n\n\n\n\n")):
            mark(f"StreamDecoder llama3 stops={len(stop)}")
            d = StreamDecoder(tok, stop=stop)
            [d.step(i) for i in ids]
            d.finish()
        for batch in (64, 1024):
            mark(f"StreamEncoder llama3 batch={batch}")
            e = StreamEncoder(tok, disallowed_special=(), batch=batch)
            [e.push(c) for c in chunks]
            e.finish()
        mark("prep")
        ct = Tokenizer.from_tiktoken(str(F / "tiktoken" / "cl100k_base.tiktoken"), pattern="cl100k_base")
        small = chunks[:600]
        ct.encode_ordinary(t)
        mark("StreamEncoder cl100k 600 chunks")
        e = StreamEncoder(ct, disallowed_special=())
        [e.push(c) for c in small]
        e.finish()
    elif g == "dec":
        from tokstream.stream import StreamDecoder

        tok = Tokenizer.from_file(str(F / "hf" / "llama3_tokenizer.json"))
        t = text("shakespeare_gutenberg_modern.txt", 30_000)
        ids = tok.encode(t, disallowed_special=())
        d = StreamDecoder(tok)
        [d.step(i) for i in ids]
        d.finish()
        for stop in ((), ("<<STOP>>", "\n\n\n\n\n")):
            mark(f"StreamDecoder llama3 warm stops={len(stop)}")
            d = StreamDecoder(tok, stop=stop)
            [d.step(i) for i in ids]
            d.finish()
        mark("prep")
    elif g == "mini":
        for file in ("mistral_7b_v1", "botchan_unigram_1000"):
            path = str(F / "hf" / f"{file}_tokenizer.json")
            mark(f"load {file}.json")
            tok = Tokenizer.from_file(path)
            for lab, t in (("english", EN), ("japanese", JA)):
                mark(f"encode {file} {lab} cold")
                tok.encode(t, disallowed_special=())
                mark(f"encode {file} {lab} warm")
                tok.encode(t, disallowed_special=())
            mark("prep")
    elif g == "masks":
        from tokstream.constrain import prefix_constraint
        from tokstream.constrain.masks import TokenMasker

        for name, mk in (
            (
                "o200k",
                lambda: Tokenizer.from_tiktoken(str(F / "tiktoken" / "o200k_base.tiktoken"), pattern="o200k_base"),
            ),
            ("llama3", lambda: Tokenizer.from_file(str(F / "hf" / "llama3_tokenizer.json"))),
        ):
            tok = mk()
            m = TokenMasker(tok)
            m.mask(prefix_constraint(tok, b" "))
            for p in (b" ", b"e", b" wor", "的".encode()):
                c = prefix_constraint(tok, p)
                m.mask(c)
                m.bitmask(c)
                mark(f"mask x50 {name} {p!r}")
                [m.mask(c) for _ in range(50)]
                mark(f"bitmask x50 {name} {p!r}")
                [m.bitmask(c) for _ in range(50)]
            mark("prep")
    elif g == "cache":
        import random

        from tokstream.cache import PrefixCachePlanner

        corp = "".join(text(f, 10**9) for f in ("corpus_alice_in_wonderland_en.txt", "corpus_botchan_en.txt"))
        rnd = random.Random(0)
        slices = [corp[s : s + 4096] for s in (rnd.randrange(len(corp) - 5000) for _ in range(40))]
        for name, mk in (
            (
                "cl100k",
                lambda: Tokenizer.from_tiktoken(str(F / "tiktoken" / "cl100k_base.tiktoken"), pattern="cl100k_base"),
            ),
            ("llama3", lambda: Tokenizer.from_file(str(F / "hf" / "llama3_tokenizer.json"))),
        ):
            tok = mk()
            pl = PrefixCachePlanner(tok, block_size=16)
            for s in slices:
                pl.plan(s)
                tok.encode(s)
            mark(f"plan x40 {name}")
            [pl.plan(s) for s in slices]
            mark(f"encode x40 {name}")
            [tok.encode(s) for s in slices]
            mark("prep")
    mark("end")
    Path(os.environ["ICOUNT_LABELS"]).write_text("\n".join(labels))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--work"]:
        _work(sys.argv[2])
    else:
        main()

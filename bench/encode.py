"""Encode throughput: tokstream (cold and warm) against tiktoken, tokenizers and the Rust BPE peers.

Run ``python bench/encode.py`` from the repository root. Every case encodes the same
text with each implementation in this one process, takes the best of N runs, and
prints MB/s plus ratios (``>1``: tokstream is faster). Absolute numbers on a shared
machine are noise; the ratios are the result.

- **cold**: text never seen before: a fresh tokenizer whose one-time setup (pattern,
  merge table) a short warm-up text has done, its first call on the text; best of 3;
- **warm**: the same tokenizer encoding the same text again (caches filled);
- **tiktoken**: OpenAI's Rust implementation, built offline from the fixture rank file;
- **rs-bpe, bpe-openai, fastokens**: the fastest pure-Rust BPE peers that install here
  (bench-only: ``pip install rs-bpe bpe-openai fastokens``); each missing one is skipped
  with a message, and a peer whose ids differ from tiktoken's is marked;
- **count**: the number of ids of ~1 MB of unseen multilingual text (corpora interleaved
  with words of twelve more scripts), a fresh tokenizer per run;
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


def bench_tokenizers(texts: dict[str, str], reps: int) -> list[tuple[str, bool]]:
    """tokenizer.json files: tokstream against Hugging Face tokenizers (and fastokens,
    when installed); returns the targets (cold >= 3x tokenizers on Llama 3)."""
    from tokenizers import Tokenizer as HFTokenizer

    try:
        import fastokens
    except ImportError:
        fastokens = None
        print("fastokens not installed (pip install fastokens); skipping that column")
    targets = []
    for file in HF_FILES:
        path = FIXTURES / "hf" / file
        ref = HFTokenizer.from_file(str(path))
        ref.no_padding()
        ref.no_truncation()
        fast = fastokens.Tokenizer.from_file(str(path)) if fastokens and "llama3" in file else None
        for label in ("english", "japanese"):
            text = texts[label]
            mb = len(text.encode("utf-8")) / 1e6
            t = time.perf_counter()
            cold_tok = Tokenizer.from_file(path)
            load = time.perf_counter() - t
            want = ref.encode(text, add_special_tokens=False).ids
            assert cold_tok.encode(text, disallowed_special=()) == want, (file, label)
            cold = float("inf")
            for _ in range(3):
                new = Tokenizer.from_file(path)
                new.encode("Warm-up: naïve café, 東京スカイツリー 12345 tokenizers\n", disallowed_special=())
                t = time.perf_counter()
                new.encode(text, disallowed_special=())
                cold = min(cold, time.perf_counter() - t)
            warm = best_of(lambda: cold_tok.encode(text, disallowed_special=()), reps)
            hf = best_of(lambda: ref.encode(text, add_special_tokens=False), reps)
            line = (
                f"encode  {file.removesuffix('_tokenizer.json'):<22} {label:<8} {mb:5.2f} MB  "
                f"load {load:5.2f} s  cold {mb / cold:6.1f} MB/s  warm {mb / warm:6.1f} MB/s  "
                f"tokenizers {mb / hf:6.1f} MB/s  warm/tokenizers {hf / warm:5.2f}x  "
                f"cold/tokenizers {hf / cold:5.2f}x"
            )
            if fast is not None:
                ft = best_of(lambda: fast.encode(text, add_special_tokens=False).ids, reps, warmup=1)
                line += f"  fastokens {mb / ft:6.1f} MB/s  cold/fastokens {ft / cold:5.2f}x  warm/fastokens {ft / warm:5.2f}x"
            print(line + "  (>1: tokstream faster)", flush=True)
            if "llama3" in file:
                targets.append((f"llama3 json {label} cold >= 3x tokenizers ({hf / cold:.2f}x)", hf / cold >= 3))
    return targets


def cold_tokenizer(tok: Tokenizer) -> Tokenizer:
    """A fresh tokenizer over ``tok``'s vocabulary whose one-time setup is done (pattern
    compiled, merge table built, by one short warm-up text) but whose caches have seen
    nothing of the text to come: "cold" means text never seen before."""
    new = fresh(tok)
    new.encode_ordinary("Warm-up: naïve café, 東京スカイツリー 12345 tokenizers\n")
    return new


def cold_best(tok: Tokenizer, text: str, reps: int) -> float:
    """Best of ``reps`` first encodes of ``text``, each by a new ``cold_tokenizer``."""
    best = float("inf")
    for _ in range(reps):
        new = cold_tokenizer(tok)
        t = time.perf_counter()
        new.encode_ordinary(text)
        best = min(best, time.perf_counter() - t)
    return best


def multilingual_sample(texts: dict[str, str], size: int = 1_000_000) -> str:
    """Unseen multilingual text: the English, Japanese and code corpora interleaved
    with words drawn (seeded) from twelve more scripts: ``size`` characters (~1.9 MB)."""
    import random

    rng = random.Random(18)
    alphabets = [
        "абвгдежзийклмнопрстуфхцчшщыьэюя",
        "αβγδεζηθικλμνξοπρστυφχψω",
        "ابتثجحخدذرزسشصضطظعغفقكلمنهوي",
        "अआइईउऊएऐओऔकखगघचछजझटठडढणतथदधनपफबभमयरलवशषसह",
        "가나다라마바사아자차카타파하각난닫람맘밥삿앙잦찿캌탙팦핳",
        "กขฃคฅฆงจฉชซฌญฎฏฐฑฒณดตถทธนบปผฝพฟภมยรลวศษสหฬอฮ",
        "אבגדהוזחטיכלמנסעפצקרשת",
        "ابپتٹثجچحخدڈذرڑزژسشصضطظعغفقکگلمنوہھءیے",
        "ሀለሐመሠረሰሸቀበተቸኀነኘአከኸወዐዘዠየደጀገጠጨጰጸፀፈፐ",
        "აბგდევზთიკლმნოპჟრსტუფქღყშჩცძწჭხჯჰ",
        "ԱԲԳԴԵԶԷԸԹԺԻԼԽԾԿՀՁՂՃՄՅՆՇՈՉՊՋՌՍՎՏՐՑՒՓՔՕՖ".lower(),
        "ạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹđ",
    ]
    parts: list[str] = []
    sources = [texts["english"], texts["japanese"], texts["code"]]
    total = 0
    while total < size:
        src = sources[len(parts) % 3]
        at = rng.randrange(max(1, len(src) - 2000))
        chunk = src[at : at + 1500]
        alpha = rng.choice(alphabets)
        words = " ".join("".join(rng.choice(alpha) for _ in range(rng.randint(2, 9))) for _ in range(120))
        parts += [chunk, words]
        total += len(chunk) + len(words) + 2
    return "\n".join(parts)[:size]


def peer_encoders(name: str) -> dict[str, Callable[[str], object]]:
    """The pure-Rust BPE peers that install here (bench-only), by name, as
    ``encode(text)`` without specials; a missing one is left out with a message."""
    peers: dict[str, Callable[[str], object]] = {}
    try:
        from rs_bpe.bpe import openai as rs_openai

        rs = getattr(rs_openai, name)()
        peers["rs-bpe"] = rs.encode
    except ImportError:
        print("rs-bpe not installed (pip install rs-bpe); skipping that column")
    try:
        import bpe_openai

        # Its encode_ordinary refuses texts over 200k tokens (a per-call "chunk limit");
        # the method behind it encodes the same way without that check.
        peers["bpe-openai"] = bpe_openai.get_encoding(name)._encode_plain
    except ImportError:
        print("bpe-openai not installed (pip install bpe-openai); skipping that column")
    try:
        import fastokens

        fast = fastokens.Tokenizer.from_tiktoken(str(FIXTURES / "tiktoken" / f"{name}.tiktoken"), encoding=name)
        peers["fastokens"] = lambda text: fast.encode_ordinary(text).ids  # a list, as ours
    except ImportError:
        print("fastokens not installed (pip install fastokens); skipping that column")
    return peers


def time_peer(peer: str, fn: Callable[[], object], reps: int) -> float | None:
    """``best_of`` a peer's call, or None (printed) when the peer refuses the input."""
    try:
        return best_of(fn, reps, warmup=1)
    except Exception as e:  # a peer's own limit, e.g. bpe-openai's "Input too long"
        print(f"        {peer} refused this input: {type(e).__name__}: {e}")
        return None


def ratios(ours: float, peers: dict[str, float]) -> str:
    """``peer/ours`` speed ratios (time of the peer / time of ours: >1 means we are faster)."""
    return "  ".join(f"vs {p} {t / ours:5.2f}x" for p, t in peers.items())


def main() -> int:
    if not FIXTURES.is_dir():
        print(f"fixtures not found at {FIXTURES}; set TOKSTREAM_FIXTURES", file=sys.stderr)
        return 1
    section = sys.argv[1] if len(sys.argv) > 1 else "all"
    print(f"tokstream compiled core: {tokstream.native_available()} (TOKSTREAM_PURE=1 forces pure Python)")
    corpora = FIXTURES / "corpora"
    texts = {
        "english": (corpora / "corpus_botchan_en.txt").read_text("utf-8")
        + (corpora / "corpus_alice_in_wonderland_en.txt").read_text("utf-8"),
        "code": code_sample(),
        "japanese": (corpora / "corpus_wagahaiwa_nekodearu_ja.txt").read_text("utf-8")[:400_000],
    }
    reps = int(os.environ.get("BENCH_REPEAT", "5"))
    targets: list[tuple[str, bool]] = []
    if section in ("all", "hf"):
        targets += bench_tokenizers(texts, reps)
    if section == "hf":
        for what, ok in targets:
            print(f"target  {what}: {verdict(ok)}")
        return 0
    for name in ("cl100k_base", "o200k_base"):
        ref = reference_tiktoken(name)
        ours = tokstream.load(name)
        peers = peer_encoders(name)
        for label, text in texts.items():
            mb = len(text.encode("utf-8")) / 1e6
            want = ref.encode_ordinary(text)
            assert ours.encode_ordinary(text) == want, (name, label)
            cold = cold_best(ours, text, 3)
            warm = best_of(lambda: ours.encode_ordinary(text), reps, warmup=1)
            tik = best_of(lambda: ref.encode_ordinary(text), reps)
            # Peers with caches (fastokens' segment cache) are timed warm: the fairest
            # figure for them, and the moonshot's yardstick.
            peer_times = {"tiktoken": tik}
            for peer, encode in peers.items():
                took = time_peer(peer, lambda: encode(text), reps)
                if took is not None:
                    same = list(encode(text)) == want  # type: ignore[call-overload]
                    peer_times[peer + ("" if same else "(ids differ)")] = took
            print(
                f"encode  {name:<11}  {label:<8} {mb:5.2f} MB  cold {mb / cold:6.1f} MB/s  warm {mb / warm:6.1f} MB/s  "
                f"tiktoken {mb / tik:6.1f} MB/s\n"
                f"        cold: {ratios(cold, peer_times)}\n"
                f"        warm: {ratios(warm, peer_times)}   (>1: tokstream faster)",
                flush=True,
            )
            targets.append((f"{name} {label} cold >= 1.0x tiktoken ({tik / cold:.2f}x)", tik / cold >= 1.0))
            targets.append((f"{name} {label} warm >= 1.5x tiktoken ({tik / warm:.2f}x)", tik / warm >= 1.5))
        # Counting unseen multilingual text: a fresh tokenizer per run, as a server
        # counting a new document.
        sample = multilingual_sample(texts)
        mb = len(sample.encode("utf-8")) / 1e6
        assert len(ours.encode_ordinary(sample)) == len(ref.encode_ordinary(sample))
        ours_count = cold_best(ours, sample, 3)
        peer_times = {"tiktoken": best_of(lambda: len(ref.encode_ordinary(sample)), reps)}
        for peer, encode in peers.items():
            took = time_peer(peer, lambda: len(encode(sample)), reps)  # type: ignore[arg-type]
            if took is not None:
                peer_times[peer] = took
        print(
            f"count   {name:<11}  multilingual {mb:5.2f} MB unseen  {mb / ours_count:6.1f} MB/s  {ratios(ours_count, peer_times)}"
        )
        tk = peer_times["tiktoken"]
        targets.append(
            (f"{name} count unseen multilingual >= 1.0x tiktoken ({tk / ours_count:.2f}x)", tk / ours_count >= 1)
        )

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
    for what, ok in targets:
        print(f"target  {what}: {verdict(ok)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Streaming: StreamDecoder and StreamEncoder against their references, in one process.

Run ``python bench/stream.py`` from the repository root (``--help`` for the options).
Every case runs on the same input in this process, warms up, takes the best of N runs
(``time.perf_counter``) and prints one line ending in a ratio whose direction is stated,
then PASS or MISS against its target. Absolute numbers on a shared machine are noise;
the ratios are the result.

- **decode** (Llama 3 ``tokenizer.json``, the ids of a corpus slice, 200 KB by default):
  µs per id of ``StreamDecoder.step`` over all the ids (plus ``finish``), against
  ``tokenizers.decoders.DecodeStream(skip_special_tokens=False).step(tokenizer, id)`` on
  the same ids (target: ours at least as fast, speed ratio >= 1.0x); and our decoder with
  two stop strings that never match, against none (target: time ratio <= 2x).
- **encode**: ``StreamEncoder`` fed 16-character chunks against one ``tok.encode`` of the
  whole slice (target: stream time <= 1.5x one-shot), both warm (64- and 256-character
  chunks are printed too, with no target); and, on a smaller slice
  (20 KB by default: it is quadratic), naive re-encoding with ``tiktoken`` cl100k_base,
  which re-encodes the whole buffer after every chunk, against our ``StreamEncoder`` on
  cl100k_base with the same chunks. That comparison prints measured times and sizes
  only; nothing is extrapolated.

- **eager**: after each push of 64 characters of the corpus (100 KB, ending on a push of
  32), the most ids pending: ids of the reference encoding of the text (tiktoken's for
  o200k_base and cl100k_base, ``tokenizers``' for Llama 3) whose token's bytes lie
  wholly in the text pushed, not returned yet (target: at most 4; the figure after the
  short last push is printed too).

Needs ``../shared/fixtures`` (``hf/llama3_tokenizer.json``,
``corpora/shakespeare_gutenberg_modern.txt``, ``tiktoken/cl100k_base.tiktoken``,
``tiktoken/o200k_base.tiktoken``),
``tokenizers`` and ``tiktoken``; a missing fixture skips its section with a message.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import tokstream
from tokstream.stream import StreamDecoder, StreamEncoder

sys.path.insert(0, str(Path(__file__).resolve().parent))
from encode import best_of, verdict

from tokstream.tokenizer import Tokenizer

FIXTURES = Path(os.environ.get("TOKSTREAM_FIXTURES", Path(__file__).resolve().parents[2] / "shared" / "fixtures"))
LLAMA3 = FIXTURES / "hf" / "llama3_tokenizer.json"
CORPUS = FIXTURES / "corpora" / "shakespeare_gutenberg_modern.txt"
CL100K = FIXTURES / "tiktoken" / "cl100k_base.tiktoken"
# Never in the corpus (checked), but "\n\nUser:" starts with a frequent character, so the
# stop matcher keeps meeting partial matches: the realistic cost, not the trivial one.
STOPS = ("<|stop|>", "\n\nUser:")


def chunked(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def bench_decode(tok: Tokenizer, text: str, reps: int) -> None:
    from tokenizers import Tokenizer as HFTokenizer
    from tokenizers.decoders import DecodeStream

    hf = HFTokenizer.from_file(str(LLAMA3))
    ids = tok.encode(text, disallowed_special=())
    if ids != hf.encode(text, add_special_tokens=False).ids:
        raise SystemExit("llama3: tokstream ids differ from tokenizers' on the slice; fix that first")
    n, mb = len(ids), len(text.encode("utf-8")) / 1e6
    if any(stop in text for stop in STOPS):
        raise SystemExit(f"a stop string of {STOPS!r} occurs in the slice; pick others")

    def ours(stop: tuple[str, ...] = ()) -> str:
        dec = StreamDecoder(tok, stop=stop)
        step = dec.step
        pieces = [step(i) for i in ids]
        pieces.append(dec.finish())
        return "".join(pieces)

    def reference() -> str:
        stream = DecodeStream(skip_special_tokens=False)
        step = stream.step
        return "".join(filter(None, [step(hf, i) for i in ids]))

    want = tok.decode(ids)
    if ours() != want or ours(STOPS) != want:
        raise SystemExit("StreamDecoder's joined output differs from tok.decode on the slice")
    same = reference() == want
    t_ours = best_of(ours, reps, warmup=1)
    t_stops = best_of(lambda: ours(STOPS), reps, warmup=1)
    t_ref = best_of(reference, reps, warmup=1)

    def rate(t: float) -> str:
        return f"{t / n * 1e6:5.2f} µs/id ({mb / t:5.1f} MB/s)"

    label = f"decode  llama3  {mb:4.2f} MB  {n} ids"
    print(
        f"{label}  StreamDecoder {rate(t_ours)}  DecodeStream {rate(t_ref)}  "
        f"speed ratio {t_ref / t_ours:4.2f}x (>1: tokstream faster; target >= 1.0)  {verdict(t_ref / t_ours >= 1.0)}"
        + ("" if same else "  [DecodeStream's joined text differs from tok.decode]"),
        flush=True,
    )
    print(
        f"{label}  StreamDecoder + {len(STOPS)} stop strings {rate(t_stops)}  "
        f"cost ratio {t_stops / t_ours:4.2f}x vs no stops (<1: cheaper; target <= 2.0)  {verdict(t_stops / t_ours <= 2.0)}",
        flush=True,
    )


def stream_encode(tok: Tokenizer, chunks: list[str]) -> list[int]:
    enc = StreamEncoder(tok, disallowed_special=())
    out: list[int] = []
    push = enc.push
    for chunk in chunks:
        out += push(chunk)
    out += enc.finish()
    return out


def bench_encode(tok: Tokenizer, text: str, chunk: int, reps: int) -> None:
    mb = len(text.encode("utf-8")) / 1e6
    want = tok.encode(text, disallowed_special=())
    t_one = best_of(lambda: tok.encode(text, disallowed_special=()), reps, warmup=1)  # warm: cache filled
    # The target is about ``chunk`` (16 by default); larger chunks show the fixed cost
    # per push (every push returns its final ids: there is no batch to raise).
    for size in dict.fromkeys((chunk, 64, 256)):
        chunks = chunked(text, size)
        if stream_encode(tok, chunks) != want:
            raise SystemExit(f"llama3: StreamEncoder's ids differ from tok.encode on the slice ({size}-char chunks)")
        t_stream = best_of(lambda c=chunks: stream_encode(tok, c), reps, warmup=1)
        target = (
            f"(<1: stream faster; target <= 1.5)  {verdict(t_stream / t_one <= 1.5)}"
            if size == chunk
            else "(no target)"
        )
        print(
            f"encode  llama3  {mb:4.2f} MB  {len(chunks)} chunks of {size} chars  StreamEncoder "
            f"{mb / t_stream:5.1f} MB/s  one-shot encode {mb / t_one:5.1f} MB/s  time ratio {t_stream / t_one:4.2f}x {target}",
            flush=True,
        )


def pending_figures(tok: Tokenizer, text: str, want: list[int], chunk: int = 64) -> tuple[int, int]:
    """``(worst, last)``: the most ids pending after a push of ``chunk`` characters, and
    after the (short) last push, before ``finish``.

    ``want`` are the reference ids of the whole text (tiktoken's or ``tokenizers'``).
    An id is *pending* after a push when its token's bytes lie wholly within the text
    pushed so far but the stream has not returned it yet; the ids returned must be a
    prefix of ``want``.
    """
    ends: list[int] = []  # UTF-8 end of each token of the whole text
    end = 0
    for i in want:
        end += len(tok.decode_bytes([i]))
        ends.append(end)
    enc = StreamEncoder(tok, disallowed_special=())
    out: list[int] = []
    pushed = worst = last = 0
    covered = 0  # tokens wholly within the pushed text
    for piece in chunked(text, chunk):
        out += enc.push(piece)
        pushed += len(piece.encode("utf-8"))
        while covered < len(ends) and ends[covered] <= pushed:
            covered += 1
        if out != want[: len(out)]:
            raise SystemExit(f"{tok.name}: StreamEncoder returned ids that differ from the reference")
        last = covered - len(out)
        worst = max(worst, last)
    if out + enc.finish() != want:
        raise SystemExit(f"{tok.name}: StreamEncoder's ids differ from the reference")
    return worst, last


def bench_eager(text: str, chunk: int = 64, target: int = 4) -> None:
    """After each ``chunk``-character push of English prose, at most ``target`` ids of
    the reference encoding of the whole text are pending (``pending_figures``),
    on o200k_base, cl100k_base (tiktoken) and Llama 3 (``tokenizers``)."""
    from encode import reference_tiktoken

    # End on a short push: half a chunk.
    text = text[: max(0, (len(text) - chunk) // chunk * chunk) + chunk // 2]
    cases: list[tuple[str, Tokenizer, list[int]]] = []
    for name in ("o200k_base", "cl100k_base"):
        if (FIXTURES / "tiktoken" / f"{name}.tiktoken").is_file():
            cases.append((name, tokstream.load(name), reference_tiktoken(name).encode(text, disallowed_special=())))
        else:
            print(f"skipping eager {name}: its rank file is not in {FIXTURES}")
    from tokenizers import Tokenizer as HFTokenizer

    hf = HFTokenizer.from_file(str(LLAMA3))
    cases.append(("llama3", Tokenizer.from_file(LLAMA3), hf.encode(text, add_special_tokens=False).ids))
    for name, tok, want in cases:
        worst, last = pending_figures(tok, text, want, chunk)
        print(
            f"eager   {name:11s} {len(text)} chars  pushes of {chunk} chars  most ids pending after a push {worst} "
            f"(after the short last push {last})  target <= {target}  {verdict(worst <= target)}",
            flush=True,
        )


def bench_naive(text: str, chunk: int, reps: int) -> None:
    from encode import reference_tiktoken  # bench/encode.py: tiktoken built offline

    ref = reference_tiktoken("cl100k_base")
    ours = tokstream.load("cl100k_base")
    chunks = chunked(text, chunk)
    mb = len(text.encode("utf-8")) / 1e6

    def naive() -> list[int]:
        # What a server without a stable boundary does: re-encode everything so far
        # after each chunk (and diff against what it sent). Quadratic in the text.
        buffer, ids = "", []
        for c in chunks:
            buffer += c
            ids = ref.encode(buffer, disallowed_special=())
        return ids

    if naive() != stream_encode(ours, chunks):
        raise SystemExit("cl100k_base: StreamEncoder differs from tiktoken on the slice")
    n = max(1, reps // 2)  # the naive loop is slow; fewer runs
    t_naive = best_of(naive, n, warmup=1)
    t_stream = best_of(lambda: stream_encode(ours, chunks), reps, warmup=1)
    print(
        f"encode  cl100k  {len(text)} chars ({mb * 1000:.1f} KB)  {len(chunks)} chunks of {chunk} chars  "
        f"StreamEncoder {t_stream * 1e3:7.1f} ms ({mb / t_stream:5.2f} MB/s)  "
        f"naive tiktoken re-encode {t_naive * 1e3:7.1f} ms ({mb / t_naive:5.2f} MB/s)  "
        f"ratio {t_naive / t_stream:5.2f}x (>1: tokstream faster; measured at this size only)",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Streaming decode/encode against DecodeStream, encode and naive re-encoding; pending ids."
    )
    parser.add_argument("section", nargs="?", choices=("all", "decode", "encode", "eager"), default="all")
    parser.add_argument(
        "--chars", type=int, default=200_000, help="corpus slice for decode and encode (default 200000)"
    )
    parser.add_argument(
        "--naive-chars",
        type=int,
        default=20_000,
        help="smaller slice for the quadratic naive re-encode (default 20000)",
    )
    parser.add_argument(
        "--eager-chars", type=int, default=100_000, help="slice for the pending-ids check (default 100000)"
    )
    parser.add_argument("--chunk", type=int, default=16, help="characters per StreamEncoder chunk (default 16)")
    parser.add_argument(
        "--repeat", type=int, default=int(os.environ.get("BENCH_REPEAT", "5")), help="best of N (default 5)"
    )
    args = parser.parse_args(argv)
    missing = [p for p in (LLAMA3, CORPUS) if not p.is_file()]
    if missing:
        print(f"skipping: {', '.join(map(str, missing))} not found (set TOKSTREAM_FIXTURES)")
        return 0
    corpus = CORPUS.read_text("utf-8")
    text = corpus[: args.chars]
    tok = Tokenizer.from_file(LLAMA3)
    if args.section in ("all", "decode"):
        bench_decode(tok, text, args.repeat)
    if args.section in ("all", "encode"):
        bench_encode(tok, text, args.chunk, args.repeat)
        if CL100K.is_file():
            bench_naive(corpus[: args.naive_chars], args.chunk, args.repeat)
        else:
            print(f"skipping the naive re-encode: {CL100K} not found")
    if args.section in ("all", "eager"):
        bench_eager(CORPUS.read_text("utf-8")[: args.eager_chars])
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Prefix-cache keys: PrefixCachePlanner.plan against encode, and hit rates on a chat.

Run ``python bench/cache.py`` from the repository root (``--help`` for the options).
Everything runs in this one process on the same input; timings are the best of N
passes (``time.perf_counter``) after a warm-up pass. Absolute numbers on a shared
machine are noise; the ratios and PASS/MISS are the result.

- **plan** (cl100k_base, o200k_base, the Llama 3 ``tokenizer.json``): ``plan(text)``
  (blocks of 16) against ``tok.encode(text)`` on the same 200 prompts of 4 KB, English
  prose sliced at random offsets from ``corpora/*_en.txt``; µs per call for each and
  the time ratio (target: plan <= 1.2x encode), warm (pre-token caches filled by the
  first pass), with the two parts of ``plan`` timed alone: ``encode_stable`` (the
  encode ``plan`` makes, cut at the stable boundary) and the keys (packing the ids,
  one sha256 per block); the passes alternate so that drift on a shared machine hits
  each alike. The line also shows how many ids ``stable_len`` holds back. A second
  line cuts the same slices back to their last space: a slice ending inside a word
  (an unseen piece) drops ``encode`` off its split-and-cache fast path, which ``plan``
  (whose head ends before that word) avoids, so the first line flatters ``plan``; the
  second is the fair one. The chat section below times its requests the same way.
- **chat**: a 20-turn chat (ChatML for the tiktoken encodings, with ``<|im_start|>``
  and ``<|im_end|>`` added as specials; the Llama 3 template for Llama 3), user and
  assistant messages sliced from the same prose. Each turn sends up to three
  requests, every one the whole conversation so far: a prefill while the user is
  still typing (cut at a random character), the full user message plus the
  assistant header, and a continuation of a reply cut at a random character (a
  stream stopped by max_tokens or a disconnect). Each request is looked up, then
  inserted, in three caches:

  * **ours**: ``PrefixCachePlanner.plan`` (stable blocks only) in a ``PrefixIndex``;
    each hit's ids are compared with the ids of the request it came from;
  * **naive, keyed by text**: every full block of ``encode(text)``; a request reuses
    the blocks of the longest earlier prompt its text starts with. A reused block is
    **wrong** when its ids differ from what encoding the longer prompt gives there;
  * **naive, keyed by ids**: the same keys in a ``PrefixIndex``, looked up with the
    request's own keys: never wrong (what a server that tokenizes does), but the
    blocks the text-keyed cache got wrong are **misses** here, and their keys stay
    stored though no later prompt can match them.

  Hit rates are reused blocks over the full blocks of all requests. A last line per
  tokenizer times ``plan`` against ``encode`` on those requests (same target).

Needs ``../shared/fixtures`` (``corpora/*_en.txt``, ``hf/llama3_tokenizer.json``); a
missing fixture skips its part with a message.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from dataclasses import dataclass
from pathlib import Path

import tokstream
from tokstream.cache import CachePlan, PrefixCachePlanner
from tokstream.cache.index import PrefixIndex
from tokstream.tokenizer import Tokenizer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from encode import best_of, verdict

FIXTURES = Path(os.environ.get("TOKSTREAM_FIXTURES", Path(__file__).resolve().parents[2] / "shared" / "fixtures"))
LLAMA3 = FIXTURES / "hf" / "llama3_tokenizer.json"
TARGET_RATIO = 1.2


def english_prose() -> str | None:
    files = sorted((FIXTURES / "corpora").glob("*_en.txt"))
    if not files:
        return None
    return "\n\n".join(f.read_text("utf-8") for f in files)


def slices(prose: str, n: int, size: int, rng: random.Random) -> list[str]:
    starts = [rng.randrange(len(prose) - size) for _ in range(n)]
    return [prose[s : s + size] for s in starts]


def tokenizers(with_chatml: bool) -> list[tuple[str, Tokenizer]]:
    """(label, tokenizer): the two tiktoken encodings (plus ChatML specials when asked)
    and Llama 3 when its file is there."""
    out = []
    for name in ("cl100k_base", "o200k_base"):
        tok = tokstream.load(name)
        if with_chatml:
            tok = tokstream.extend(tok, ["<|im_start|>", "<|im_end|>"], special=True)
        out.append((name, tok))
    if LLAMA3.is_file():
        out.append(("llama3", Tokenizer.from_file(LLAMA3)))
    else:
        print(f"skipping llama3: {LLAMA3} not found (set TOKSTREAM_FIXTURES)")
    return out


# -- plan() against encode() -------------------------------------------------------


def bench_plan(
    label: str, tok: Tokenizer, prompts: list[str], what: str, block_size: int, reps: int, **kw: object
) -> bool:
    """One line: ``plan`` against ``encode`` over ``prompts`` (warm); whether the target was met.

    The passes of ``encode``, ``encode_stable`` (what ``plan`` encodes with), the keys
    alone (``_keys`` on those encodings: packing the ids, one sha256 per block) and
    ``plan`` alternate, best of ``reps`` each, so drift on a shared machine hits all
    alike.
    """
    planner = PrefixCachePlanner(tok, block_size=block_size)
    plan, encode, stable = planner.plan, tok.encode, tok.encode_stable
    plans = [plan(p, **kw) for p in prompts]  # type: ignore[arg-type]  # also the warm-up pass
    if any(pl.ids != encode(p, **kw) for pl, p in zip(plans, prompts)):  # type: ignore[arg-type]
        raise SystemExit(f"{label}: plan().ids differ from encode() on a prompt; fix that first")
    found = [stable(p, **kw) for p in prompts]  # type: ignore[arg-type]
    keys = planner._keys  # the planner's own step, timed alone
    runs = (
        lambda: [encode(p, **kw) for p in prompts],  # type: ignore[arg-type]
        lambda: [stable(p, **kw) for p in prompts],  # type: ignore[arg-type]
        lambda: [keys(f.ids, f.stable_len, ()) for f in found],
        lambda: [plan(p, **kw) for p in prompts],  # type: ignore[arg-type]
    )
    for run in runs:  # warm-up
        run()
    best = [float("inf")] * len(runs)
    for _ in range(reps):
        for i, run in enumerate(runs):
            best[i] = min(best[i], best_of(run, 1))
    t_encode, t_stable, t_keys, t_plan = best
    n = len(prompts)
    kb = sum(len(p.encode("utf-8")) for p in prompts) / n / 1000
    held = [len(pl.ids) - pl.stable_len for pl in plans]
    ids = sum(len(pl.ids) for pl in plans) / n
    blocks = sum(len(pl.block_keys) for pl in plans) / n
    ratio = t_plan / t_encode
    print(
        f"plan  {label:<11}  {n} {what}, {kb:.1f} KB ({ids:.0f} ids, {blocks:.0f} keys) each  "
        f"plan {t_plan / n * 1e6:7.1f} µs/call  encode {t_encode / n * 1e6:7.1f} µs/call  "
        f"time ratio {ratio:4.2f}x (<1: plan cheaper; target <= {TARGET_RATIO})  {verdict(ratio <= TARGET_RATIO)}  "
        f"of which encode_stable {t_stable / t_encode:4.2f}x, keys {t_keys / t_encode:4.2f}x "
        f"({t_keys / n * 1e6:.1f} µs)  held back: mean {sum(held) / n:.2f} ids, max {max(held)}",
        flush=True,
    )
    return ratio <= TARGET_RATIO


# -- hit rates on a chat -----------------------------------------------------------


@dataclass(frozen=True)
class Template:
    bos: str
    open: str  # before the role
    mid: str  # between role and content
    close: str  # after the content

    def message(self, role: str, content: str, *, closed: bool = True) -> str:
        return f"{self.open}{role}{self.mid}{content}" + (self.close if closed else "")


CHATML = Template("", "<|im_start|>", "\n", "<|im_end|>\n")
LLAMA3_CHAT = Template("<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>\n\n", "<|eot_id|>")


def message_text(prose: str, rng: random.Random, lo: int, hi: int) -> str:
    """A message: prose from a random offset, starting at a word, stripped."""
    start = prose.find(" ", rng.randrange(len(prose) - hi)) + 1
    return prose[start : start + rng.randrange(lo, hi)].strip()


def chat_requests(template: Template, prose: str, turns: int, rng: random.Random) -> list[str]:
    """The prompts of a ``turns``-turn chat, in order; each is the whole chat so far
    and starts with the one before it."""
    chat = template.bos + template.message("system", "You are a helpful assistant. Answer in full sentences.")
    out = []
    for _ in range(turns):
        user = message_text(prose, rng, 40, 400)
        reply = message_text(prose, rng, 200, 1600)
        if rng.random() < 0.5:  # prefilled while the user types
            out.append(chat + template.message("user", user[: rng.randrange(1, len(user))], closed=False))
        chat += template.message("user", user)
        header = template.open + "assistant" + template.mid
        out.append(chat + header)
        if rng.random() < 0.7:  # the reply's stream stopped mid-text, then continued
            out.append(chat + header + reply[: rng.randrange(1, len(reply))])
        chat += template.message("assistant", reply)
    return out


def common_blocks(a: list[int], b: list[int], size: int) -> int:
    """How many leading full blocks of ``a`` and ``b`` hold the same ids."""
    n = 0
    while (n + 1) * size <= min(len(a), len(b)) and a[n * size : (n + 1) * size] == b[n * size : (n + 1) * size]:
        n += 1
    return n


def bench_chat(
    label: str, tok: Tokenizer, template: Template, prose: str, turns: int, block_size: int, seed: int, reps: int
) -> bool:
    prompts = chat_requests(template, prose, turns, random.Random(seed))
    planner = PrefixCachePlanner(tok, block_size=block_size)
    ours: PrefixIndex[int] = PrefixIndex(max_blocks=1 << 20)
    by_ids: PrefixIndex[int] = PrefixIndex(max_blocks=1 << 20)
    seen: list[tuple[str, CachePlan]] = []  # (prompt, naive plan) per request so far
    total = hits = wrong = 0
    text_hits = text_wrong = affected = 0
    ids_hits = ids_misses = 0
    for r, prompt in enumerate(prompts):
        plan = planner.plan(prompt, allowed_special="all")
        ids = plan.ids
        total += len(ids) // block_size

        n, source = ours.longest_match(plan)
        hits += n
        if source is not None:  # the reused blocks must hold the ids of the request they came from
            wrong += max(0, n - common_blocks(seen[source][1].ids, ids, block_size))
        ours.insert(plan, r)

        naive = planner.plan_ids(ids)  # every full block of encode(text)
        prev = max((p for t, p in seen if prompt.startswith(t)), key=lambda p: len(p.ids), default=None)
        if prev is not None:
            claimed = len(prev.block_keys)
            good = common_blocks(prev.ids, ids, block_size)
            text_hits += claimed
            text_wrong += claimed - good
            affected += claimed > good
        m, _ = by_ids.longest_match(naive)
        ids_hits += m
        if prev is not None:
            ids_misses += max(0, len(prev.block_keys) - m)
        by_ids.insert(naive, r)
        seen.append((prompt, naive))

    def pct(x: int) -> str:
        return f"{x:5d} ({100 * x / total:5.1f}%)"

    head = f"chat  {label:<11}"
    print(
        f"{head}  {turns} turns, {len(prompts)} requests, {total} full blocks of {block_size} in all prompts",
        flush=True,
    )
    print(f"{head}  ours (stable keys)     hits {pct(hits)}  wrong {wrong}", flush=True)
    print(
        f"{head}  naive, keyed by text   hits {pct(text_hits)}  wrong {text_wrong} "
        f"(reused ids that differ from the longer prompt's encode; in {affected} requests)",
        flush=True,
    )
    print(
        f"{head}  naive, keyed by ids    hits {pct(ids_hits)}  misses {ids_misses} "
        f"(blocks of the previous prompt its keys failed to match)",
        flush=True,
    )
    print(
        f"{head}  hits ours/naive-by-ids {hits / max(1, ids_hits):6.4f}x ({hits - ids_hits:+d} blocks; <1: ours reuses "
        f"fewer, holding back ids the continuation happened to keep)  wrong reuse: ours {wrong}, naive by text {text_wrong}",
        flush=True,
    )
    # The same requests timed: plan against encode, warm (the loop above warmed them).
    return bench_plan(label, tok, prompts, "chat requests", block_size, reps, allowed_special="all")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="PrefixCachePlanner.plan against encode; cache hits on a chat against naive planners."
    )
    parser.add_argument("section", nargs="?", choices=("all", "plan", "chat"), default="all")
    parser.add_argument("--prompts", type=int, default=200, help="prompts for the plan timing (default 200)")
    parser.add_argument("--chars", type=int, default=4096, help="characters per prompt (default 4096)")
    parser.add_argument("--turns", type=int, default=20, help="chat turns (default 20)")
    parser.add_argument("--block-size", type=int, default=16, help="ids per block (default 16)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--repeat", type=int, default=int(os.environ.get("BENCH_REPEAT", "5")), help="best of N (default 5)"
    )
    args = parser.parse_args(argv)
    prose = english_prose()
    if prose is None:
        print(f"skipping: no {FIXTURES / 'corpora'}/*_en.txt found (set TOKSTREAM_FIXTURES)")
        return 0
    results: list[bool] = []
    if args.section in ("all", "plan"):
        prompts = slices(prose, args.prompts, args.chars, random.Random(args.seed))
        at_words = [p[: p.rindex(" ")] for p in prompts]
        for label, tok in tokenizers(with_chatml=False):
            for batch, what in ((prompts, "slices"), (at_words, "slices cut back to a word end")):
                results.append(bench_plan(label, tok, batch, what, args.block_size, args.repeat, disallowed_special=()))
    if args.section in ("all", "chat"):
        for label, tok in tokenizers(with_chatml=True):
            template = LLAMA3_CHAT if label == "llama3" else CHATML
            results.append(bench_chat(label, tok, template, prose, args.turns, args.block_size, args.seed, args.repeat))
    if results:
        print(f"plan targets met: {sum(results)}/{len(results)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Train on a corpus too big for one process: count pre-tokens as a map step, sum, merge.

Counting is the part of training that grows with the corpus; merging runs on the summed
counts, whose size grows only with the number of distinct pre-tokens. So the counting
goes to workers, one shard each, and the trainer gets the sum. The result is exactly the
tokenizer that training on the whole corpus gives (same ``fingerprint``), as long as
shards are cut between texts (a pre-token must not straddle two shards).

Run: ``python examples/distributed_counting.py [FILES...]`` (default: a few paragraphs
made up here, so it runs offline).

The same map step on a cluster engine, with ``count_pretokens`` as the task:

Ray::

    import ray
    count = ray.remote(tokstream.count_pretokens)
    futures = [count.remote(shard, "o200k_base") for shard in shards]
    total = sum(ray.get(futures), Counter())

Dask::

    import dask.bag as db
    bag = db.from_sequence(texts, npartitions=64)
    total = bag.map_partitions(lambda part: [tokstream.count_pretokens(part)]).fold(
        lambda a, b: a + b, initial=Counter()).compute()

(Spark: ``rdd.mapPartitions(lambda p: [count_pretokens(list(p))]).reduce(operator.add)``.)
"""

from __future__ import annotations

import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import tokstream

PATTERN = "o200k_base"


def shards_of(texts: list[str], n: int) -> list[list[str]]:
    """Cut between texts, never inside one."""
    return [texts[i::n] for i in range(n)]


def main(paths: list[str]) -> None:
    if paths:
        texts = [line for p in paths for line in Path(p).read_text("utf-8").splitlines(keepends=True)]
    else:
        texts = [f"Paragraph {i}: the quick brown fox jumps over the lazy dog, again and again.\n" for i in range(2000)]

    # Map: one Counter per shard, on a process pool.
    shards = shards_of(texts, 4)
    with ProcessPoolExecutor(max_workers=2) as pool:
        counts = list(pool.map(tokstream.count_pretokens, shards, [PATTERN] * len(shards)))

    # Reduce: counts add up.
    total: Counter[str] = sum(counts, Counter())
    print(f"{len(texts)} texts, {sum(total.values())} pre-tokens, {len(total)} distinct")

    # Merge on the summed counts: the same tokenizer as training on the texts.
    tok = tokstream.train_bpe(total, 400, pattern=PATTERN, special_tokens=["<|end|>"])
    same = tokstream.train_bpe(texts, 400, pattern=PATTERN, special_tokens=["<|end|>"])
    print(f"trained {tok.n_vocab} ids; same as training on the texts: {tok.fingerprint == same.fingerprint}")
    sample = texts[0]
    print(f"{sample!r} -> {tok.encode(sample)}")


if __name__ == "__main__":
    main(sys.argv[1:])

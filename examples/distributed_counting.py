"""Train on a corpus too big for one process: count pre-tokens on a Dask cluster, merge here.

Counting is the part of training that grows with the corpus; merging runs on the summed
counts, whose size grows only with the number of distinct pre-tokens. So each partition
of a Dask bag of texts is counted on a worker, the ``Counter``s are summed in a tree
(``tokstream.integrations.dask.count_pretokens_bag``), and the trainer gets the sum. The
result is exactly the tokenizer that training on the whole corpus gives (the same
``fingerprint``), because a bag's partitions are cut between texts, never inside one.
The same bag is then encoded on the workers (``encode_bag``).

Run: ``python examples/distributed_counting.py [--scheduler ADDRESS] [FILES...]``
(default: a ``LocalCluster`` of two worker processes on this machine, and a few
paragraphs made up here, so it runs offline; needs ``pip install 'tokstream[dask]'``).

On a real cluster only the client changes: start ``dask scheduler`` on one machine and
``dask worker tcp://scheduler:8786`` on the others (each with tokstream installed), then
``python examples/distributed_counting.py --scheduler tcp://scheduler:8786 corpus/*.txt``,
which does::

    from dask.distributed import Client
    client = Client("tcp://scheduler:8786")  # instead of Client(LocalCluster(...))
    bag = db.from_sequence(texts, npartitions=64)  # or db.from_delayed / read_text
    counts = count_pretokens_bag(bag, "o200k_base")
    tok = tokstream.train_bpe(counts, 32_000, pattern="o200k_base")

For files too big for the client, build the bag on the workers (``db.read_text`` gives
lines: fine for training, whose reference is then the same lines, but counts of lines
differ from the whole file's where a pre-token spans a newline, such as ``"\\n\\n"``).
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
from pathlib import Path

import tokstream

PATTERN = "o200k_base"


def paragraphs(path: str) -> list[str]:
    """A file's paragraphs, each with the blank line after it: joined, they are the file."""
    return [p for p in re.split(r"(?<=\n\n)", Path(path).read_text("utf-8")) if p]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scheduler", help="a running scheduler's address (default: a LocalCluster here)")
    parser.add_argument("files", nargs="*", help="UTF-8 text files (default: made-up paragraphs)")
    args = parser.parse_args(argv)
    try:
        import dask.bag as db
        from dask.distributed import Client, LocalCluster
    except ImportError:
        sys.exit("this example needs Dask: pip install 'tokstream[dask]'")
    from tokstream.integrations.dask import count_pretokens_bag, encode_bag

    if args.files:
        texts = [p for path in args.files for p in paragraphs(path)]
    else:
        texts = [f"Paragraph {i}: the quick brown fox jumps over the lazy dog, again and again.\n" for i in range(2000)]

    with contextlib.ExitStack() as stack:
        # The client becomes dask's default scheduler: the calls below run on its cluster.
        if args.scheduler:
            stack.enter_context(Client(args.scheduler))
        else:
            cluster = LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None)
            stack.enter_context(Client(stack.enter_context(cluster)))
        bag = db.from_sequence(texts, npartitions=8)

        # Map (one Counter per partition, on the workers) and reduce (summed in a tree).
        total = count_pretokens_bag(bag, PATTERN)
        print(f"{len(texts)} texts, {sum(total.values())} pre-tokens, {len(total)} distinct")

        # Merge here on the summed counts: the same tokenizer as training on the texts.
        tok = tokstream.train_bpe(total, 400, pattern=PATTERN, special_tokens=["<|end|>"])
        same = tokstream.train_bpe(texts, 400, pattern=PATTERN, special_tokens=["<|end|>"])
        print(f"trained {tok.n_vocab} ids; same as training on the texts: {tok.fingerprint == same.fingerprint}")

        # Encode the corpus on the workers with the new tokenizer.
        ids = encode_bag(tok, bag).compute()
        print(f"encoded on the workers to {sum(map(len, ids))} ids; {texts[0][:30]!r}... -> {ids[0][:8]}...")


if __name__ == "__main__":
    main(sys.argv[1:])

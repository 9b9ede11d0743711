"""tokstream.integrations.dask on a real two-process cluster (``LocalCluster``), checked
against tokstream in this process: ids equal ``encode`` text by text, counts equal
``count_pretokens`` / ``count_words`` of the whole corpus, and the tokenizers trained
on the cluster's counts have the ``fingerprint`` of training on the texts here.

The corpus is the first ~80 KB of Botchan, ten lines to a text. The tokenizers are the
embedded o200k_base (pickled as its name) and Llama 3's ``tokenizer.json`` (pickled as
its stages, ~7 MB), so both kinds travel to the workers. Needs ``dask[distributed]``
(the ``dask`` extra; the module skips without it); the column test also needs
``dask.dataframe``'s pandas and pyarrow.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
from helpers import fixture_text, fixture_tokenizer

distributed = pytest.importorskip("dask.distributed", reason="needs dask[distributed] (the 'dask' extra)")

import dask.bag as db

import tokstream
from tokstream.integrations.dask import count_pretokens_bag, count_words_bag, encode_bag, encode_column
from tokstream.train.unigram import count_words

PARTITIONS = 6


@pytest.fixture(scope="module")
def client() -> Iterator[distributed.Client]:
    """Two worker processes on loopback, closed (processes joined) after the module."""
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


@pytest.fixture(scope="module")
def texts() -> list[str]:
    lines = fixture_text("corpora/corpus_botchan_en.txt")[:80_000].splitlines(keepends=True)
    return ["".join(lines[i : i + 10]) for i in range(0, len(lines), 10)]


def _kept_tokenizers() -> list[str]:
    from tokstream.integrations import dask as integration

    return list(integration._unpacked)


def _bag(texts: list[str], npartitions: int = PARTITIONS) -> db.Bag:
    return db.from_sequence(texts, npartitions=npartitions)


@pytest.mark.slow
@pytest.mark.parametrize("tid", ["o200k_base", "hf/llama3_tokenizer.json"])
def test_encode_bag_equals_encode(client: distributed.Client, texts: list[str], tid: str) -> None:
    tok = fixture_tokenizer(tid)
    texts_bag = _bag(texts)
    bag = encode_bag(tok, texts_bag, add_special_tokens=True)
    # One task per partition, and the tokenizer is one key of the graph, which they all read.
    assert bag.npartitions == texts_bag.npartitions > 1
    graph = dict(bag.__dask_graph__())
    (key,) = [str(k) for k in graph if str(k).startswith("tokstream-tokenizer-")]
    assert bag.compute() == [tok.encode(t, add_special_tokens=True) for t in texts]
    # Each worker process that ran a partition keeps the unpickled tokenizer for later calls.
    kept = client.run(_kept_tokenizers)
    assert any(key.removeprefix("tokstream-tokenizer-") in keys for keys in kept.values())


def test_encode_bag_special_token_policy(client: distributed.Client, texts: list[str]) -> None:
    tok = tokstream.load("o200k_base")
    marked = [t + "<|endoftext|>" for t in texts[:4]]
    ids = encode_bag(tok, _bag(marked, 2), allowed_special="all").compute()
    assert ids == [tok.encode(t, allowed_special="all") for t in marked]
    # A worker's error comes back as itself.
    with pytest.raises(tokstream.SpecialTokenError):
        encode_bag(tok, _bag(marked, 2)).compute()


def test_count_pretokens_bag_equals_whole_corpus(client: distributed.Client, texts: list[str]) -> None:
    whole = tokstream.count_pretokens(texts, "o200k_base")
    # 8 partitions summed 2 at a time: three levels of aggregation.
    counts = count_pretokens_bag(_bag(texts, 8), "o200k_base", split_every=2)
    assert type(counts) is Counter
    assert counts == whole
    assert count_pretokens_bag(_bag(texts), "gpt2") == tokstream.count_pretokens(texts, "gpt2")


def test_cutting_inside_texts_changes_counts(client: distributed.Client, texts: list[str]) -> None:
    """Why partitions must be cut between texts: halves of texts count differently."""
    halves = [part for t in texts for part in (t[: len(t) // 2], t[len(t) // 2 :])]
    assert count_pretokens_bag(_bag(halves)) != tokstream.count_pretokens(texts)


def test_train_bpe_on_cluster_counts(client: distributed.Client, texts: list[str]) -> None:
    counts = count_pretokens_bag(_bag(texts), "o200k_base")
    options = dict(pattern="o200k_base", special_tokens=["<|end|>"])
    trained = tokstream.train_bpe(counts, 600, **options)
    here = tokstream.train_bpe(texts, 600, **options)
    assert trained.n_vocab == 600
    assert trained.fingerprint == here.fingerprint
    assert trained.encode(texts[3]) == here.encode(texts[3])


def test_train_unigram_on_cluster_counts(client: distributed.Client, texts: list[str]) -> None:
    specials = ["<|end|>"]
    marked = [t + "<|end|>" for t in texts]
    counts = count_words_bag(_bag(marked), special_tokens=specials)
    assert counts == count_words(marked, special_tokens=specials)
    trained = tokstream.train_unigram(counts, 400, special_tokens=specials)
    assert trained.fingerprint == tokstream.train_unigram(marked, 400, special_tokens=specials).fingerprint


@pytest.mark.slow
def test_encode_column(client: distributed.Client, texts: list[str]) -> None:
    dd = pytest.importorskip(
        "dask.dataframe", reason="needs dask[dataframe] (pandas and pyarrow)", exc_type=ImportError
    )
    import pandas as pd

    tok = fixture_tokenizer("hf/llama3_tokenizer.json")
    # The last partition's rows all have two ids: the column must stay one list per row.
    column = [*texts[:30], *["a b"] * 6]
    frame = dd.from_pandas(pd.DataFrame({"text": column, "n": range(len(column))}), npartitions=6)
    ids = encode_column(tok, frame["text"])
    assert ids.dtype == object and ids.name == "text"
    got = ids.compute()
    assert got.dtype == object
    assert list(got.index) == list(range(len(column)))
    assert got.tolist() == [tok.encode(t) for t in column]
    # Assigned as a new column, aligned on the index.
    frame["ids"] = ids
    assert frame.compute()["ids"].tolist() == got.tolist()


def test_wrong_arguments() -> None:
    tok = tokstream.load("o200k_base")
    with pytest.raises(TypeError, match=r"dask\.bag\.Bag"):
        encode_bag(tok, ["a list"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Tokenizer"):
        encode_bag("o200k_base", _bag(["x"], 1))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"dask\.bag\.Bag"):
        count_pretokens_bag(["a list"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="split_every"):
        count_pretokens_bag(_bag(["x"], 1), split_every=1)
    with pytest.raises(TypeError, match="one str"):
        count_words_bag(_bag(["x"], 1), special_tokens="<|end|>")

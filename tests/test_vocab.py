"""``tok.vocab``: the public vocabulary, its lazily built tables and their thread safety."""

from __future__ import annotations

import threading

import pytest
from helpers import fixture_tokenizer

import tokstream


def _fresh(tid: str) -> tokstream.Tokenizer:
    """A tokenizer whose vocabulary has built nothing yet (fixture tokenizers are shared)."""
    tok = fixture_tokenizer(tid)
    return tokstream.Tokenizer(pipeline=tok.pipeline, name=tok.name)


@pytest.mark.parametrize("tid", ["cl100k_base", "hf/llama3_tokenizer.json", "spm/spm_botchan_en_bpe_1000.model"])
def test_index_first_builds_the_table_without_deadlock(tid: str) -> None:
    """The index reads the bytes table under the vocabulary's lock: asked for first,
    it must build both (a plain Lock deadlocked here)."""
    vocab = _fresh(tid).vocab
    done: list[object] = []
    worker = threading.Thread(target=lambda: done.append(vocab.index), daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert done, "vocab.index did not return (deadlock?)"
    assert done[0] is vocab.index
    assert list(vocab.index.token_bytes) == [
        b"" if (i in vocab.special_ids or b is None) else b for i, b in enumerate(vocab.table)
    ]


def test_concurrent_first_uses_build_once() -> None:
    tok = _fresh("o200k_base")
    vocab = tok.vocab
    barrier = threading.Barrier(8)
    seen: list[tuple[int, int, int]] = []

    def use() -> None:
        barrier.wait()
        seen.append((id(vocab.index), id(vocab.table), id(vocab.spellings)))

    threads = [threading.Thread(target=use, daemon=True) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert len(seen) == 8 and len(set(seen)) == 1


def test_table_matches_token_bytes_and_decode() -> None:
    tok = tokstream.load("cl100k_base")
    vocab = tok.vocab
    assert len(vocab.table) == vocab.n_vocab == tok.n_vocab
    assert vocab.table[100256] is None  # cl100k's hole
    with pytest.raises(tokstream.InvalidTokenIdError):
        vocab.token_bytes(100256)
    ids = tok.encode("héllo wörld <|endoftext|>", allowed_special="all")
    assert b"".join(vocab.token_bytes(i) for i in ids) == tok.decode_bytes(ids)
    assert vocab.special_ids == frozenset(tok.special_tokens.values())
    assert vocab.spellings[15339] == tok.id_to_token(15339) == "hello"

"""Threads sharing one fresh tokenizer get the single-threaded answers.

Every per-tokenizer cache of the core is built on first use (the token bytes table,
spellings, the vocabulary index, the BPE pair table, the offsets spellings, the
stability rule, policies and matchers, the fingerprint) and the hot-path dicts are
filled and cleared as text flows (``_fastpath``'s piece and part caches). Eight
threads released together by a ``threading.Barrier`` on a tokenizer nobody has used
yet hit every first use at once; each runs ``encode``, ``encode_with_offsets``,
``decode``, ``stable_boundary``, the prefix-cache planner and ``tok.vocab.index`` on
its own mix of texts, and every answer must equal the one a separate tokenizer of
the same file gives on one thread (``helpers.fixture_tokenizer``).

A short switch interval (``sys.setswitchinterval``) makes the interpreter change
threads every few bytecodes, so check-then-set windows are actually hit; and a
variant shrinks ``_fastpath.CACHE_LIMIT`` so the bounded dicts are cleared while
other threads read them.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from helpers import fixture_file, fixture_text, fixture_tokenizer

import tokstream
from tokstream import _fastpath
from tokstream.cache import PrefixCachePlanner
from tokstream.formats.registry import ENCODINGS

THREADS = 8

#: One of each kind: a rank file, the tokenizer.json pipelines, SentencePiece models.
KINDS = (
    "tiktoken/r50k_base.tiktoken",
    "hf/llama3_tokenizer.json",
    "hf/mistral_7b_v1_tokenizer.json",
    "hf/bert_minilm_tokenizer.json",
    "hf/gpt2_tokenizer.json",
    "hf/botchan_unigram_1000_tokenizer.json",
    "spm/spm_botchan_en_bpe_1000.model",
)


def _fresh(kind: str) -> tokstream.Tokenizer:
    """A new tokenizer from the fixture file: none of its caches built yet."""
    path = fixture_file(kind)
    if kind.startswith("tiktoken/"):
        spec = ENCODINGS[path.stem]
        return tokstream.Tokenizer.from_tiktoken(path, pattern=spec.pattern, special_tokens=spec.special_tokens)
    if kind.startswith("spm/"):
        return tokstream.Tokenizer.from_sentencepiece(path)
    return tokstream.Tokenizer.from_file(path)


def _reference(kind: str) -> tokstream.Tokenizer:
    """The shared single-threaded tokenizer of the same file."""
    if kind.startswith("tiktoken/"):
        return fixture_tokenizer(kind.removeprefix("tiktoken/").removesuffix(".tiktoken"))
    return fixture_tokenizer(kind)


def _texts() -> list[str]:
    """Varied texts: corpus lines of three languages, whitespace and contraction
    edges, added-token literals, lone surrogates, a long line."""
    lines: list[str] = []
    for corpus in ("corpus_botchan_en.txt", "corpus_wagahaiwa_nekodearu_ja.txt", "corpus_us_constitution_en.txt"):
        found = [line for line in fixture_text(f"corpora/{corpus}").splitlines() if line.strip()]
        lines += found[:: max(1, len(found) // 8)][:8]
    lines += [
        "it's   they'LL  \t\n\n  x",
        "a\udcb5b \ud83d\ude00 end\ud800",
        "[CLS] <s> </s> <|endoftext|> [SEP]",
        "def f(x):\n    return x  # indented\n" * 8,
        " ".join(lines[:6]),
    ]
    return lines


def _ops(tok: tokstream.Tokenizer, text: str, planner: PrefixCachePlanner | None) -> tuple[Any, ...]:
    """The answers compared; ``planner`` None on the reference side, which reads the
    plan's ids from ``encode_stable`` (the fingerprint costs seconds for Llama 3)."""
    ids = tok.encode(text, allowed_special="all")
    if planner is None:
        r = tok.encode_stable(text, allowed_special="all")
        plan = (r.ids, r.stable_len)
    else:
        found = planner.plan(text, allowed_special="all")
        plan = (found.ids, found.stable_len)
    return (
        ids,
        tok.encode(text, disallowed_special=()),
        tok.encode_with_offsets(text, allowed_special="all"),
        tok.decode(ids),
        tok.decode(ids, skip_special_tokens=True),
        tok.stable_boundary(text, allowed_special="all"),
        plan,
    )


@contextmanager
def _switch_often() -> Iterator[None]:
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def _run_together(work: Callable[[int], Any]) -> list[Any]:
    """``work(k)`` on ``THREADS`` threads released at once; their results, or the first
    error re-raised."""
    barrier = threading.Barrier(THREADS)
    results: list[Any] = [None] * THREADS
    errors: list[BaseException] = []

    def run(k: int) -> None:
        try:
            barrier.wait()
            results[k] = work(k)
        except BaseException as e:  # reported below, with its traceback
            errors.append(e)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(THREADS)]
    with _switch_often():
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    if errors:
        raise errors[0]
    return results


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_fresh_tokenizer_from_eight_threads(kind: str) -> None:
    ref = _reference(kind)
    texts = _texts()
    want = [_ops(ref, text, None) for text in texts]
    ref_index = ref.vocab.index
    probes = [b"the", b" of", b"\xe3\x81", b"a"]
    want_index = [(ref_index.extensions(p), ref_index.prefixes(p)) for p in probes]
    want_bytes = [ref.token_bytes(i) for i in range(0, ref.n_vocab, 97) if i not in ref.vocab.special_ids]

    tok = _fresh(kind)

    def work(k: int) -> list[Any]:
        # Each thread starts at another text and another first call.
        out: list[Any] = []
        if k % 3 == 0:
            index = tok.vocab.index
            out.append([(index.extensions(p), index.prefixes(p)) for p in probes])
        planner = PrefixCachePlanner(tok, block_size=4)  # its fingerprint, on first use
        order = texts[k * 7 % len(texts) :] + texts[: k * 7 % len(texts)]
        got = {text: _ops(tok, text, planner) for text in order}
        out.append([got[text] for text in texts])
        if k % 3 != 0:
            index = tok.vocab.index
            out.append([(index.extensions(p), index.prefixes(p)) for p in probes])
        out.append([tok.token_bytes(i) for i in range(0, tok.n_vocab, 97) if i not in tok.vocab.special_ids])
        return out

    for k, out in enumerate(_run_together(work)):
        index_answers = out[0] if k % 3 == 0 else out[1]
        ops = out[1] if k % 3 == 0 else out[0]
        assert index_answers == want_index, f"thread {k}: vocab.index answers differ"
        for text, got, expected in zip(texts, ops, want):
            assert got == expected, f"thread {k}: results differ for {text[:80]!r}"
        assert out[2] == want_bytes, f"thread {k}: token bytes differ"


@pytest.mark.parametrize("limit", [64, 1024])
def test_bounded_caches_cleared_under_readers(monkeypatch: pytest.MonkeyPatch, limit: int) -> None:
    """``_fastpath``'s piece and part dicts are cleared when full while other threads
    map over them: with a tiny bound that happens all the time, and every thread must
    still get the single-threaded ids (and no stray ``KeyError``)."""
    ref = fixture_tokenizer("r50k_base")
    words = fixture_text("corpora/corpus_botchan_en.txt").split()
    # Long texts of mostly new words: the split-and-repair path, parts stored in bulk.
    texts = [" ".join(words[i : i + 400]) for i in range(0, min(len(words), 16_000), 400)]
    want = [ref.encode(text) for text in texts]
    monkeypatch.setattr(_fastpath, "CACHE_LIMIT", limit)
    tok = _fresh("tiktoken/r50k_base.tiktoken")

    def work(k: int) -> list[list[int]]:
        order = list(range(k, len(texts))) + list(range(k))
        got = {i: tok.encode(texts[i]) for i in order}
        return [got[i] for i in range(len(texts))]

    for k, got in enumerate(_run_together(work)):
        for i, (ids, expected) in enumerate(zip(got, want)):
            assert ids == expected, f"thread {k}: ids of text {i} differ"

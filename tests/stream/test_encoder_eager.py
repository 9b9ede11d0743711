"""``StreamEncoder`` is eager: after each push of English prose at most 4 ids of the
whole text's encoding are pending, also after a short last push, and it costs the
same whatever the chunk size (no batch threshold holds ids back).

*Pending* after a push: ids of the reference encoding of the whole text (tiktoken's,
``tokenizers``'; ``tok.encode``, which tests elsewhere check against them, for the
other corpora) whose tokens' bytes lie wholly within the text pushed so far, minus
the ids the stream has returned. The returned ids must be a prefix of the reference.
"""

from __future__ import annotations

import pytest
from helpers import fixture_file, fixture_tokenizer, hf_reference, tiktoken_reference

from tokstream import StreamEncoder, Tokenizer

_PROSE = ("corpus_alice_in_wonderland_en.txt", "corpus_us_constitution_en.txt", "shakespeare_gutenberg_modern.txt")
_TIDS = ("o200k_base", "cl100k_base", "hf/llama3_tokenizer.json")


def pending_after_pushes(tok: Tokenizer, text: str, want: list[int], size: int, **options) -> list[int]:
    """The pending ids (module notes) after each push of ``size`` characters of
    ``text`` (the last push may be shorter); ``want``: the reference ids of ``text``."""
    ends: list[int] = []
    end = 0
    for i in want:
        end += len(tok.decode_bytes([i]))
        ends.append(end)
    enc = StreamEncoder(tok, **options)
    out: list[int] = []
    pending: list[int] = []
    pushed = covered = 0
    for i in range(0, len(text), size):
        piece = text[i : i + size]
        out += enc.push(piece)
        pushed += len(piece.encode("utf-8"))
        while covered < len(ends) and ends[covered] <= pushed:
            covered += 1
        assert out == want[: len(out)], f"push {i // size}: returned ids differ from the reference"
        pending.append(covered - len(out))
    assert out + enc.finish() == want
    return pending


def _reference(tid: str, text: str) -> list[int]:
    if tid.startswith("hf/"):
        return hf_reference(fixture_file(tid)).encode(text, add_special_tokens=False).ids
    return tiktoken_reference(tid).encode(text, disallowed_special=())


@pytest.mark.parametrize("tid", _TIDS)
@pytest.mark.parametrize("name", _PROSE)
def test_at_most_4_pending_after_each_64_char_push(tid: str, name: str, read_corpus) -> None:
    tok = fixture_tokenizer(tid)
    text = read_corpus(name)[:100_000]
    text = text[: len(text) - 64 + 23]  # a short last push of 23 characters
    want = _reference(tid, text)
    assert want == tok.encode(text, disallowed_special=())
    pending = pending_after_pushes(tok, text, want, 64, disallowed_special=())
    assert max(pending) <= 4, (max(pending), pending.index(max(pending)))
    assert pending[-1] <= 4


@pytest.mark.parametrize("tid", _TIDS)
def test_short_last_push_is_returned(tid: str) -> None:
    """The final ids of a last push shorter than the old batch (64) come back from
    that push, not from ``finish``."""
    tok = fixture_tokenizer(tid)
    text = "The quick brown fox jumps over the lazy dog. " * 3 + "It ran off into the woods and"
    want = _reference(tid, text)
    pending = pending_after_pushes(tok, text, want, 135)
    assert len(pending) == 2 and pending[-1] <= 1, pending


@pytest.mark.parametrize("tid", _TIDS)
@pytest.mark.parametrize("size", [1, 3, 16, 64])
@pytest.mark.parametrize("batch", [1, 64, 4096])
def test_batch_holds_nothing_back(tid: str, size: int, batch: int, read_corpus) -> None:
    """``batch`` is accepted and changes nothing: the same ids after every push."""
    tok = fixture_tokenizer(tid)
    text = read_corpus("corpus_alice_in_wonderland_en.txt")[1000:3000]
    want = _reference(tid, text)
    assert pending_after_pushes(tok, text, want, size, batch=batch) == pending_after_pushes(tok, text, want, size)

"""Block keys against an independent computation: the key scheme of
``tokstream.cache.planner`` spelled out here with ``hashlib`` and ``struct`` over
tiktoken's ids (never our encoder), so a faster ``_keys`` cannot drift from it."""

from __future__ import annotations

import hashlib
import random
import struct
from collections.abc import Callable, Sequence

import pytest
from helpers import tiktoken_reference

import tokstream
from tokstream.cache import PrefixCachePlanner


def _extra(item: bytes | str | int) -> bytes:
    """Type tag, 8-byte little-endian length, data (the documented encoding)."""
    if isinstance(item, int):
        tag, data = b"i", str(item).encode()
    elif isinstance(item, str):
        tag, data = b"s", item.encode()
    else:
        tag, data = b"b", item
    return tag + struct.pack("<Q", len(data)) + data


def reference_keys(
    fingerprint: str,
    ids: Sequence[int],
    n_blocks: int,
    *,
    block_size: int,
    salt: bytes = b"",
    extra: Callable[[int], Sequence[bytes | str | int]] = lambda b: (),
) -> list[str]:
    """Key ``i`` = sha256(key ``i-1`` + extra keys + the block's ids as ``<u4``); key
    ``-1`` = sha256 of the version tag, fingerprint, salt (length-prefixed) and size."""
    parent = hashlib.sha256(
        b"tokstream-prefix-cache-v1\0"
        + fingerprint.encode()
        + struct.pack("<I", len(salt))
        + salt
        + struct.pack("<I", block_size)
    ).digest()
    keys = []
    for b in range(n_blocks):
        block = ids[b * block_size : (b + 1) * block_size]
        data = parent + b"".join(map(_extra, extra(b))) + struct.pack(f"<{block_size}I", *block)
        parent = hashlib.sha256(data).digest()
        keys.append(parent.hex())
    return keys


def _prompts(read_corpus: Callable[[str], str], n: int) -> list[str]:
    rng = random.Random(18)
    text = read_corpus("corpus_alice_in_wonderland_en.txt")
    return [text[a : a + rng.randrange(1, 5000)] for a in (rng.randrange(0, len(text) - 5000) for _ in range(n))]


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@pytest.mark.parametrize(("block_size", "salt"), [(16, b""), (1, b"t"), (5, b"tenant-b"), (64, b"")])
def test_keys_match_hashlib_over_tiktoken_ids(name: str, block_size: int, salt: bytes, read_corpus) -> None:
    tok = tokstream.load(name)
    ref = tiktoken_reference(name)
    planner = PrefixCachePlanner(tok, block_size=block_size, salt=salt)
    for text in _prompts(read_corpus, 20):
        ids = ref.encode(text, disallowed_special=())
        plan = planner.plan(text, disallowed_special=())
        assert plan.ids == ids
        n = plan.stable_len // block_size
        assert plan.block_keys == reference_keys(tok.fingerprint, ids, n, block_size=block_size, salt=salt)
        whole = planner.plan_ids(ids).block_keys
        assert whole == reference_keys(tok.fingerprint, ids, len(ids) // block_size, block_size=block_size, salt=salt)


def test_extra_keys_match_hashlib(read_corpus) -> None:
    tok = tokstream.load("cl100k_base")
    ref = tiktoken_reference("cl100k_base")
    planner = PrefixCachePlanner(tok, block_size=8, salt=b"s")
    fixed = (b"\x00raw", "lora-7", 12345, "日本", -3)

    def per_block(b: int, start: int, end: int) -> tuple[str | int, ...]:
        return ("img", b, start) if b % 3 == 1 else ()

    for text in _prompts(read_corpus, 8):
        ids = ref.encode(text)
        n = len(ids) // 8
        got = planner.plan_ids(ids, extra_keys=fixed).block_keys
        assert got == reference_keys(tok.fingerprint, ids, n, block_size=8, salt=b"s", extra=lambda b: fixed)
        got = planner.plan_ids(ids, extra_keys=per_block).block_keys
        want = reference_keys(
            tok.fingerprint, ids, n, block_size=8, salt=b"s", extra=lambda b: per_block(b, 8 * b, 8 * b + 8)
        )
        assert got == want


def test_keys_for_empty_and_short_input() -> None:
    tok = tokstream.load("o200k_base")
    planner = PrefixCachePlanner(tok, block_size=4)
    assert planner.plan("").block_keys == [] and planner.plan_ids([]).block_keys == []
    assert planner.plan_ids([1, 2, 3]).block_keys == []
    ids = [0, 1, 2, tok.n_vocab - 1, 7]
    assert planner.plan_ids(ids).block_keys == reference_keys(tok.fingerprint, ids, 1, block_size=4)

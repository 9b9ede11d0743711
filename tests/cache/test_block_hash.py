"""``block_hash.chain_keys`` (the compiled chain, SHA-NI and portable) against hashlib.

hashlib (OpenSSL) is the reference: every key is recomputed here block by block, on
random seeds, extra keys and block sizes chosen around SHA-256's padding boundaries
(messages of 55, 56, 63, 64 and 119 bytes, ...).
"""

from __future__ import annotations

import hashlib
import random

import pytest

import tokstream
from tokstream.block_hash import chain_keys, chain_keys_pure


def reference(seed: bytes, extra: bytes, data: bytes, block_bytes: int, count: int) -> list[str]:
    parent, out = seed, []
    for b in range(count):
        parent = hashlib.sha256(parent + extra + data[b * block_bytes : (b + 1) * block_bytes]).digest()
        out.append(parent.hex())
    return out


def cases() -> list[tuple[bytes, bytes, bytes, int, int]]:
    rng = random.Random(19)
    out = []
    for _ in range(400):
        seed = rng.randbytes(rng.choice([0, 1, 23, 32, 55, 56, 63, 64, 65, 119]))
        extra = rng.randbytes(rng.choice([0, 1, 8, 23, 24, 31, 32, 64, 300]))
        block = rng.choice([0, 4, 20, 24, 28, 32, 60, 64, 128, 4096])
        count = rng.randint(0, 12)
        out.append((seed, extra, rng.randbytes(block * count + rng.randint(0, 9)), block, count))
    return out


def test_pure_equals_hashlib() -> None:
    for case in cases():
        assert chain_keys_pure(*case) == reference(*case)


@pytest.mark.skipif(not tokstream.native_available(), reason="the compiled core is not built or TOKSTREAM_PURE is set")
@pytest.mark.parametrize("portable", [False, True])
def test_compiled_equals_hashlib(portable: bool) -> None:
    from tokstream._native_loader import native

    assert native is not None
    for case in cases():
        assert native.chain_keys(*case, portable=portable) == reference(*case)
    assert chain_keys(*cases()[0]) == reference(*cases()[0])


def test_short_data_is_refused() -> None:
    with pytest.raises(ValueError, match="fewer than count blocks"):
        chain_keys(b"s", b"", b"\0" * 63, 64, 1)
    with pytest.raises(ValueError, match="fewer than count blocks"):
        chain_keys_pure(b"s", b"", b"\0" * 63, 64, 1)

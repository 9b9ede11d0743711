"""Chained SHA-256 block keys, the prefix-cache planner's hashing (``cache.planner``).

Key ``b`` is ``sha256(parent + extra + data[b * block_bytes : (b + 1) * block_bytes])``,
``parent`` the previous key's digest (``seed`` for the first), as 64 hex digits.
``chain_keys`` runs it in the compiled core where it is built (``_native_keys.c``: one
call for the whole chain, on the CPU's SHA extensions when it has them, ~0.2 us a key)
and otherwise the ``hashlib`` loop ``chain_keys_pure`` (~0.8 us a key, nearly all of it
Python calls), which stays its oracle.
"""

from __future__ import annotations

import hashlib

from ._native_loader import native

__all__ = ["chain_keys", "chain_keys_pure"]


def chain_keys(seed: bytes, extra: bytes, data: bytes, block_bytes: int, count: int) -> list[str]:
    """The ``count`` chained keys of ``data``'s first ``count`` blocks (module notes)."""
    if native is not None:
        keys: list[str] = native.chain_keys(seed, extra, data, block_bytes, count)
        return keys
    return chain_keys_pure(seed, extra, data, block_bytes, count)


def chain_keys_pure(seed: bytes, extra: bytes, data: bytes, block_bytes: int, count: int) -> list[str]:
    """``chain_keys`` with ``hashlib``, one call per block: the readable oracle."""
    if count * block_bytes > len(data):
        raise ValueError("chain_keys: data holds fewer than count blocks")
    view = memoryview(data)
    parent = seed
    digests: list[bytes] = []
    sha256 = hashlib.sha256
    for b in range(count):
        parent = sha256(parent + extra + view[b * block_bytes : (b + 1) * block_bytes]).digest()
        digests.append(parent)
    return list(map(bytes.hex, digests))

"""Prefix-cache keys over the token ids that appending text can never change.

Servers reuse the KV cache of a shared prompt prefix by hashing blocks of token ids
(vLLM's automatic prefix caching; SGLang's radix tree). A router that holds text
must not key the last tokens of a prompt: re-encoding a longer prompt may change
them (``"it'"`` + ``"s"``, ``"hello  "`` + ``"world"``). ``PrefixCachePlanner.plan``
encodes the text and cuts it at ``Tokenizer.stable_boundary`` (the one stability
function, shared with ``StreamEncoder``): ``ids[:stable_len]`` are ids that every
continuation keeps, and only full blocks inside them get keys.

Keys chain: block ``i``'s key is the sha256 of the previous key, the tokenizer's
``fingerprint``, the salt, the block's extra keys and its ids as little-endian uint32.
So a key names the whole prefix up to its block, agrees across processes and
machines (never Python's ``hash()``), and differs under another tokenizer or salt
(per-tenant isolation, as vLLM's cache salt). ``plan_ids`` keys ids that came from the
model: a server must key the ids it served, which need not be what ``encode`` gives
for their text (``"."`` + ``"\\n\\n"`` against ``".\\n\\n"``).

Cost: ``plan`` is one ``Tokenizer.encode_stable`` (an encode split at the boundary:
the head as ``encode``, the tail as a continuation, plus the boundary's tail scan),
then the keys: packing the ids (~10 us per 1,000) and the chain of sha256 calls
(``block_hash.chain_keys``: one compiled call, ~0.2 us a key on SHA-NI, where the
compiled core is built; else ~0.8 us a key, nearly all of it the fixed cost of each
hashlib call). Extra keys given as a function take the hashlib loop.
``bench/cache.py`` prints the split.
"""

from __future__ import annotations

import hashlib
import struct
import sys
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..block_hash import chain_keys
from ..errors import InvalidTokenIdError

if TYPE_CHECKING:
    from ..specials import SpecialSet
    from ..tokenizer import Tokenizer

__all__ = ["CachePlan", "PrefixCachePlanner"]

#: What ``extra_keys`` may hold: bytes, str or int items (a LoRA id, an image hash).
ExtraKey = bytes | str | int
#: ``extra_keys``: the same items for every block, or a function of
#: ``(block_index, start, end)`` giving a block's items (multimodal hashes of the
#: placeholders inside the block, as vLLM does).
ExtraKeys = Sequence[ExtraKey] | Callable[[int, int, int], Sequence[ExtraKey]]


@dataclass(frozen=True, slots=True)
class CachePlan:
    """``ids`` (what ``encode`` gives), ``stable_len`` (leading ids every continuation
    keeps) and ``block_keys`` (one hex sha256 per full block inside
    ``ids[:stable_len]``, chained)."""

    ids: list[int]
    stable_len: int
    block_keys: list[str]
    block_size: int

    @property
    def stable_ids(self) -> list[int]:
        """``ids[:stable_len]``."""
        return self.ids[: self.stable_len]


class PrefixCachePlanner:
    """Plans prefix-cache keys for one tokenizer (module notes).

    >>> import tokstream
    >>> planner = PrefixCachePlanner(tokstream.load("cl100k_base"), block_size=4)
    >>> a = planner.plan("The quick brown fox jumps over the lazy dog. It'")
    >>> b = planner.plan("The quick brown fox jumps over the lazy dog. It's")
    >>> a.ids == b.ids[: len(a.ids)], b.ids[: a.stable_len] == a.stable_ids
    (False, True)
    >>> b.block_keys[: len(a.block_keys)] == a.block_keys
    True
    """

    def __init__(self, tok: Tokenizer, *, block_size: int = 16, salt: bytes = b"") -> None:
        if isinstance(block_size, bool) or not isinstance(block_size, int):
            raise TypeError(f"block_size must be an int, not {type(block_size).__name__}")
        if block_size < 1:
            raise ValueError(f"block_size must be a positive int, got {block_size!r}")
        if not isinstance(salt, (bytes, bytearray)):
            raise TypeError(f"salt must be bytes, not {type(salt).__name__}")
        self.tok = tok
        self.block_size = block_size
        self.salt = bytes(salt)
        # Everything a key commits to besides the chain and the ids, hashed once.
        seed = hashlib.sha256(b"tokstream-prefix-cache-v1\0")
        seed.update(tok.fingerprint.encode())
        seed.update(len(self.salt).to_bytes(4, "little") + self.salt)
        seed.update(block_size.to_bytes(4, "little"))
        self._seed = seed.digest()
        # One block's ids as bytes: ``_keys`` cuts the packed ids with it.
        self._block = struct.Struct(f"{4 * block_size}s")

    def plan(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
        add_special_tokens: bool = False,
        extra_keys: ExtraKeys = (),
    ) -> CachePlan:
        """Encode ``text`` and key its stable full blocks.

        ``ids`` equal ``tok.encode(text, ...)`` with the same options. With
        ``add_special_tokens`` the post-processor's leading tokens (BOS, CLS) count
        as stable and its trailing ones (EOS, SEP) never do.
        """
        found = self.tok.encode_stable(
            text,
            allowed_special=allowed_special,
            disallowed_special=disallowed_special,
            add_special_tokens=add_special_tokens,
        )
        ids, stable = found.ids, found.stable_len
        return CachePlan(ids, stable, self._keys(ids, stable, extra_keys), self.block_size)

    def plan_ids(self, ids: Sequence[int], *, extra_keys: ExtraKeys = ()) -> CachePlan:
        """Key ids that came from the model (no re-encoding): every full block is
        stable. An id that is out of range or not an integer (``1.5``, ``True``: never
        truncated to id 1) raises ``InvalidTokenIdError``; numpy integers are taken."""
        n = self.tok.n_vocab
        for i in ids:
            if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < n:
                raise InvalidTokenIdError(i, self.tok.name, n)
        ids = [int(i) for i in ids]
        return CachePlan(ids, len(ids), self._keys(ids, len(ids), extra_keys), self.block_size)

    def _keys(self, ids: list[int], stable: int, extra_keys: ExtraKeys) -> list[str]:
        size = self.block_size
        n = stable // size
        if not n:
            return []
        # All of ``ids`` (ids past the last full block are never hashed): converting
        # a few more ids is cheaper than copying the list to cut it.
        data = _le_u32(ids)
        if not callable(extra_keys):
            # The same extra keys for every block: encode them once, and hash the
            # whole chain in one call (``block_hash``: compiled where built). This is
            # most of plan()'s cost beyond encode.
            return chain_keys(self._seed, b"".join(map(_extra_bytes, extra_keys)), data, 4 * size, n)
        # Extra keys per block: one sha256 call each. ``iter_unpack`` cuts the blocks'
        # bytes in C.
        parent = self._seed
        digests: list[bytes] = []
        for b, (chunk,) in enumerate(self._block.iter_unpack(memoryview(data)[: n * self._block.size])):
            parent = hashlib.sha256(
                parent + b"".join(map(_extra_bytes, extra_keys(b, b * size, (b + 1) * size))) + chunk
            ).digest()
            digests.append(parent)
        return list(map(bytes.hex, digests))


def _le_u32(ids: Sequence[int]) -> bytes:
    """``ids`` as little-endian uint32 (``array`` is ~3x quicker than numpy on lists)."""
    words = array("I", ids)
    if words.itemsize != 4:  # pragma: no cover - no mainstream platform
        return np.asarray(ids, dtype="<u4").tobytes()
    if sys.byteorder == "big":  # pragma: no cover
        words.byteswap()
    return words.tobytes()


def _extra_bytes(item: ExtraKey) -> bytes:
    """A canonical, self-delimiting encoding of one extra key (type tag, length)."""
    if isinstance(item, bool) or not isinstance(item, (bytes, str, int)):
        raise TypeError(f"extra keys must be bytes, str or int, not {type(item).__name__}")
    if isinstance(item, int):
        data, tag = str(item).encode(), b"i"
    elif isinstance(item, str):
        data, tag = item.encode("utf-8"), b"s"
    else:
        data, tag = item, b"b"
    return tag + len(data).to_bytes(8, "little") + data

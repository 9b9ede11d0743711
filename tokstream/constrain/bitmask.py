"""Packed int32 bitmasks in xgrammar's layout (bit ``i % 32`` of word ``i // 32`` is id
``i``, least significant bit first), and the bool masks they hold.

The lowest layer of ``constrain``: constraints unpack the packed words an ``Allowed``
carries, and ``masks.TokenMasker`` builds and combines them; neither imports the other
for it.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["BITS", "pack_bitmask", "unpack_bitmask"]

BoolArray = npt.NDArray[np.bool_]
Int32Array = npt.NDArray[np.int32]

#: Bit k of an int32 word, as an int32 (bit 31 is the sign bit).
BITS: Int32Array = (np.uint32(1) << np.arange(32, dtype=np.uint32)).view(np.int32)


def pack_bitmask(mask: npt.ArrayLike) -> Int32Array:
    """Pack bool masks (last axis) into xgrammar-layout int32 words (module notes).

    Bit ``i % 32`` of word ``i // 32`` is ``mask[..., i]``; bits past the mask's length
    are zero.

    >>> pack_bitmask([True] + [False] * 31 + [True]).tolist()
    [1, 1]
    >>> pack_bitmask([True] * 32).tolist()
    [-1]
    """
    m = np.asarray(mask, dtype=np.bool_)
    if m.ndim == 0:
        raise ValueError("pack_bitmask needs a 1-D or 2-D mask, got a scalar")
    packed = np.packbits(m, axis=-1, bitorder="little")
    pad = -packed.shape[-1] % 4
    if pad:
        widths = [(0, 0)] * (packed.ndim - 1) + [(0, pad)]
        packed = np.pad(packed, widths)
    words: Int32Array = np.ascontiguousarray(packed).view("<i4").astype(np.int32, copy=False)
    return words


def unpack_bitmask(bitmask: npt.ArrayLike, n_vocab: int) -> BoolArray:
    """The bool masks ``(..., n_vocab)`` held in xgrammar-layout int32 words.

    >>> unpack_bitmask([5], 4).tolist()
    [True, False, True, False]
    """
    words = np.asarray(bitmask, dtype=np.int32)
    if words.shape[-1] * 32 < n_vocab:
        raise ValueError(f"{words.shape[-1]} words hold {words.shape[-1] * 32} ids, fewer than n_vocab={n_vocab}")
    data = np.ascontiguousarray(words.astype("<i4", copy=False)).view(np.uint8)
    bits = np.unpackbits(data, axis=-1, count=n_vocab, bitorder="little")
    return bits.view(np.bool_)

"""The Python side of the compiled text encoder (``_native_text.c``): which patterns it
splits, and the Unicode 16.0 class table it reads.

``text_encoder`` returns a ``tokstream._native.TextEncoder`` for a named pattern (GPT-2's,
cl100k_base's, Llama 3's, o200k_base's) over a model's pair table, or None where the
pure-Python path must run (no compiled core, another pattern, a byte with no token).
``_fastpath.PieceEncoder`` calls it; its ids are the pure path's, which the tests check
on every fixture tokenizer.

The class table is one byte per code point (1.1 MB, built once per process in ~20 ms
from ``pre_tokenizers/_unicode16.py``): the classes tiktoken's Rust regex (Unicode
16.0) gives, whatever Unicode version the installed ``regex`` has.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

import numpy as np

from ._native_loader import native
from .pre_tokenizers.patterns import _CL100K, _GPT2, _LLAMA3, _O200K, BYTE_LEVEL_PATTERN
from .pre_tokenizers.unicode16 import unicode16_ranges

if TYPE_CHECKING:
    from ._native import PairTable, TextEncoder

__all__ = ["class_table", "text_encoder"]

#: The scanner of each pattern (``_native_text.c``'s kinds). GPT-2's two spellings
#: split the same (``pre_tokenizers.patterns``).
KINDS: Final = {_GPT2: 0, BYTE_LEVEL_PATTERN: 0, _CL100K: 1, _LLAMA3: 2, _O200K: 3}

# The class bits of _native_text.c.
_L, _N, _S, _U, _W = 1, 2, 4, 8, 16
_BITS: Final = {
    **dict.fromkeys(("Lu", "Lt"), _L | _U),
    "Ll": _L | _W,
    **dict.fromkeys(("Lm", "Lo"), _L | _U | _W),
    **dict.fromkeys(("Mn", "Mc", "Me"), _U | _W),
    **dict.fromkeys(("Nd", "Nl", "No"), _N),
}
#: Unicode's White_Space (``\s`` in both regex engines; unchanged since 6.3).
WHITE_SPACE: Final = (
    (0x09, 0x0D), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
    (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000),
)  # fmt: skip


@functools.lru_cache(maxsize=1)
def class_table() -> bytes:
    """One byte of class bits per code point, by Unicode 16.0 (module notes)."""
    table = np.zeros(0x110000, dtype=np.uint8)
    for category, ranges in unicode16_ranges().items():
        bits = _BITS.get(category, 0)
        if bits:
            for first, last in ranges:
                table[first : last + 1] |= bits
    for first, last in WHITE_SPACE:
        table[first : last + 1] |= _S
    return table.tobytes()


def text_encoder(pattern: str, table: PairTable, whole: Mapping[bytes, int] | None) -> TextEncoder | None:
    """The compiled encoder of ``pattern`` over ``table`` (``whole``: token bytes -> id
    for pieces that are tokens, None to merge every piece), or None when the pure path
    must run: no compiled core, a pattern it has no scanner for, or a byte with no id."""
    kind = KINDS.get(pattern)
    if native is None or kind is None:
        return None
    # The C type reads a dict; a rank file's ranks are one already (no O(V) copy).
    tokens = whole if whole is None or isinstance(whole, dict) else dict(whole)
    try:
        encoder: TextEncoder = native.TextEncoder(kind, table, tokens, class_table())
    except ValueError:  # a byte with no token: the pure path names it when it occurs
        return None
    return encoder

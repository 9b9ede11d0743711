"""GPT-2's byte-level alphabet: every byte spelled as one printable character.

Byte-level vocabularies (GPT-2, Llama 3, ``tokenizer.json`` files) spell token bytes
with this proxy so that ``" hello"`` is stored as ``"Ġhello"``. One table, used by the
byte-level pre-tokenizer, the byte-level decoder and ``Tokenizer.id_to_token``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import accumulate
from typing import Final

import numpy as np

__all__ = ["BYTE_TO_CHAR", "CHAR_TO_BYTE", "bytes_to_proxy", "proxies_to_bytes", "proxy_to_bytes"]


def _build() -> list[str]:
    printable = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    table = [""] * 256
    extra = 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            # Non-printable bytes take the code points after 255, in byte order.
            table[b] = chr(256 + extra)
            extra += 1
    return table


#: ``BYTE_TO_CHAR[b]`` is the proxy character of byte ``b``.
BYTE_TO_CHAR: Final[list[str]] = _build()
#: The inverse map, proxy character to byte.
CHAR_TO_BYTE: Final[dict[str, int]] = {c: b for b, c in enumerate(BYTE_TO_CHAR)}
_ENCODE_TABLE: Final = {b: c for b, c in enumerate(BYTE_TO_CHAR)}
#: Code point -> its byte, -1 outside the alphabet; the last entry (-1) stands for
#: every code point above the table (``proxies_to_bytes``).
_CODE_TO_BYTE: Final = np.full(max(map(ord, BYTE_TO_CHAR)) + 2, -1, dtype=np.int16)
_CODE_TO_BYTE[[ord(c) for c in BYTE_TO_CHAR]] = np.arange(256)
#: A character outside the alphabet.
_FOREIGN: Final = re.compile("[^" + "".join(f"\\u{ord(c):04x}" for c in sorted(BYTE_TO_CHAR)) + "]")


def bytes_to_proxy(data: bytes) -> str:
    """Spell ``data`` in the byte-level alphabet (``b" hi"`` -> ``"Ġhi"``)."""
    return data.decode("latin-1").translate(_ENCODE_TABLE)


def proxies_to_bytes(spellings: Iterable[str]) -> list[bytes | None]:
    """``proxy_to_bytes`` of many spellings at once: their concatenation's code points
    (one UTF-32 encode) through a numpy table to bytes, sliced back (a vocabulary of
    128k tokens: ~20 ms; ``str.translate`` with a dict took 40 ms, a call per token
    ~100 ms)."""
    items = list(spellings)
    joined = "".join(items)
    codes = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), np.uint32)
    values = _CODE_TO_BYTE[np.minimum(codes, len(_CODE_TO_BYTE) - 1)]
    raw = values.astype(np.uint8).tobytes()
    ends = list(accumulate(map(len, items)))
    out: list[bytes | None] = [raw[a:b] for a, b in zip([0, *ends], ends)]
    if (values < 0).any():  # a character outside the alphabet: those spellings have no bytes
        out = [d if _FOREIGN.search(s) is None else None for s, d in zip(items, out)]
    return out


def proxy_to_bytes(text: str) -> bytes | None:
    """Undo ``bytes_to_proxy``; None when ``text`` has a character outside the alphabet."""
    try:
        return bytes([CHAR_TO_BYTE[c] for c in text])
    except KeyError:
        return None

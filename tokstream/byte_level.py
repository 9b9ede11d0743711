"""GPT-2's byte-level alphabet: every byte spelled as one printable character.

Byte-level vocabularies (GPT-2, Llama 3, ``tokenizer.json`` files) spell token bytes
with this proxy so that ``" hello"`` is stored as ``"Ġhello"``. One table, used by the
byte-level pre-tokenizer, the byte-level decoder and ``Tokenizer.id_to_token``.
"""

from __future__ import annotations

from typing import Final

__all__ = ["BYTE_TO_CHAR", "CHAR_TO_BYTE", "bytes_to_proxy", "proxy_to_bytes"]


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


def bytes_to_proxy(data: bytes) -> str:
    """Spell ``data`` in the byte-level alphabet (``b" hi"`` -> ``"Ġhi"``)."""
    return data.decode("latin-1").translate(_ENCODE_TABLE)


def proxy_to_bytes(text: str) -> bytes | None:
    """Undo ``bytes_to_proxy``; None when ``text`` has a character outside the alphabet."""
    try:
        return bytes([CHAR_TO_BYTE[c] for c in text])
    except KeyError:
        return None

"""Protobuf wire-format helpers for the tests that cut or inspect ``.model`` files.

Written apart from ``tokstream.formats.sentencepiece`` on purpose: the format tests use
them as an independent reader, and the save tests to edit fixtures.
"""

from __future__ import annotations


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """``(value, position after it)`` of the varint at ``pos``."""
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, pos


def put_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def fields(data: bytes) -> list[tuple[int, int, int, int | None]]:
    """``(field number, start, end, payload start)`` of each field of a well-formed
    message; the payload start is None unless the field is length-delimited."""
    out: list[tuple[int, int, int, int | None]] = []
    pos = 0
    while pos < len(data):
        start = pos
        key, pos = read_varint(data, pos)
        wire, payload = key & 7, None
        if wire == 0:
            pos = read_varint(data, pos)[1]
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        elif wire == 2:
            length, payload = read_varint(data, pos)
            pos = payload + length
        else:
            raise ValueError(f"wire type {wire} at byte {start}")
        out.append((key >> 3, start, pos, payload))
    if pos != len(data):
        raise ValueError(f"the last field ends at {pos}, past the end ({len(data)})")
    return out

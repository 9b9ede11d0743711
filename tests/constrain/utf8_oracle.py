"""Slow, independent references for the constraint tests: what a prefix constraint and
token healing should allow, by brute force over every token's bytes (read id by id
through the public API, ``helpers.public_token_bytes``), with UTF-8 validity judged
by Python's own codec, never by ``tokstream.constrain.utf8``.

- ``valid_prefix(data)``: some continuation makes ``data`` valid UTF-8. Python's
  incremental decoder (``final=False``) rejects most invalid bytes at once but keeps
  some unfinished sequences that no continuation can fix (``ED A0``: a surrogate,
  refused only at the third byte), so the pending bytes it keeps are then completed
  by trying continuation bytes and decoding strictly.
- ``can_finish(tid, pending)``: some sequence of tokens turns an unfinished character
  into whole ones (a search over the pending bytes, each step a scan of the vocabulary).
- ``spellable(tid, context, prefix)``: the offsets from which tokens can produce the
  rest of ``prefix`` and go on in valid UTF-8.
- ``prefix_allowed(tid, context, prefix, done)``: the bool mask of what a prefix
  constraint allows after producing ``prefix[:done]`` following ``context``.
- ``heal_reference``: what ``heal`` should back off.

Imported by the test files of this folder (a module name no other test folder uses).
"""

from __future__ import annotations

import codecs
import functools

import numpy as np
from helpers import public_token_bytes


@functools.cache
def _completable(pending: bytes) -> bool:
    """Whether some continuation bytes finish ``pending`` (at most 3 bytes the decoder
    kept) as a valid character: the byte after ``pending`` tried in full (the only
    one with a narrowed range), the others as 0x80."""
    for c in range(0x80, 0xC0):
        for extra in range(0, 3):
            try:
                (pending + bytes([c]) + b"\x80" * extra).decode("utf-8")
            except UnicodeDecodeError:
                continue
            return True
    return False


def pending_bytes(data: bytes) -> bytes | None:
    """The bytes of ``data``'s unfinished last character (``b""`` when whole); None
    when ``data`` is not a valid UTF-8 prefix."""
    dec = codecs.getincrementaldecoder("utf-8")()
    try:
        dec.decode(data, final=False)
    except UnicodeDecodeError:
        return None
    pending: bytes = dec.getstate()[0]
    if pending and not _completable(pending):
        return None
    return pending


def valid_prefix(data: bytes) -> bool:
    """Some continuation makes ``data`` valid UTF-8."""
    return pending_bytes(data) is not None


@functools.cache
def can_finish(tid: str, pending: bytes) -> bool:
    """Whether tokens of ``tid`` can finish the character ``pending`` opens (a
    breadth-first search over pending bytes)."""
    if not pending:
        return True
    table = public_token_bytes(tid)
    seen, frontier = {pending}, [pending]
    while frontier:
        nxt = []
        for p in frontier:
            for b in table:
                if not b:
                    continue
                rest = pending_bytes(p + b)
                if rest is None:
                    continue
                if not rest:
                    return True
                if rest not in seen:
                    seen.add(rest)
                    nxt.append(rest)
        frontier = nxt
    return False


def may_follow(tid: str, before: bytes, data: bytes) -> bool:
    """``before + data`` is a valid UTF-8 prefix whose open character tokens can finish."""
    rest = pending_bytes(before + data)
    return rest is not None and can_finish(tid, rest)


@functools.cache
def _token_set(tid: str) -> frozenset[bytes]:
    return frozenset(b for b in public_token_bytes(tid) if b)


@functools.cache
def spellable(tid: str, context: bytes, prefix: bytes) -> frozenset[int]:
    """The offsets j < len(prefix) from which tokens can produce ``prefix[j:]``
    after ``context + prefix[:j]``, and go on in valid UTF-8."""
    table = public_token_bytes(tid)
    tokens = _token_set(tid)
    n = len(prefix)
    ok: set[int] = set()
    for j in range(n - 1, -1, -1):
        rest = prefix[j:]
        if any(rest[:k] in tokens and j + k in ok for k in range(1, len(rest))) or any(
            b.startswith(rest) and may_follow(tid, context + prefix[:j], b) for b in table if b
        ):
            ok.add(j)
    return frozenset(ok)


def prefix_allowed(tid: str, context: bytes, prefix: bytes, done: int = 0) -> np.ndarray:
    """What a prefix constraint for ``prefix`` allows after ``context`` and
    ``prefix[:done]`` (``context``: what the output starts after, e.g. a healed
    prompt's open character). Met at a character boundary: everything."""
    table = public_token_bytes(tid)
    before = context + prefix[:done]
    rest = prefix[done:]
    if not rest and not pending_bytes(before):
        return np.ones(len(table), dtype=bool)
    ok = spellable(tid, context, prefix)
    out = np.zeros(len(table), dtype=bool)
    for i, b in enumerate(table):
        if not b:
            continue
        if b.startswith(rest):
            out[i] = may_follow(tid, before, b)
        elif rest.startswith(b):
            out[i] = done + len(b) in ok
    return out


def heal_reference(tid: str, ids: list[int], max_backoff: int) -> tuple[int, bytes, bytes]:
    """``(removed, prefix, context)``: the largest k <= max_backoff such that the last
    k tokens hold no special token and some token strictly longer than their bytes
    starts with them and may follow the kept prompt's bytes; ``context`` is the kept
    prompt's bytes after its last special token (the prompts of the tests are valid
    UTF-8 prefixes)."""
    table = public_token_bytes(tid)
    best, best_data = 0, b""
    data = b""
    for k in range(1, min(max_backoff, len(ids)) + 1):
        piece = table[ids[-k]]
        if not piece:
            break
        data = piece + data
        kept = _after_last_special(table, ids[: len(ids) - k])
        if any(len(b) > len(data) and b.startswith(data) and may_follow(tid, kept, b) for b in table):
            best, best_data = k, data
    return best, best_data, _after_last_special(table, ids[: len(ids) - best]) if best else b""


def _after_last_special(table: tuple[bytes, ...], ids: list[int]) -> bytes:
    out = b""
    for i in reversed(ids):
        if not table[i]:
            break
        out = table[i] + out
    return out


def prefix_refused(tid: str, context: bytes, prefix: bytes) -> bool:
    """Whether a prefix constraint must refuse ``prefix`` after ``context``: not a
    valid UTF-8 prefix, or no tokens can produce it."""
    return not valid_prefix(context + prefix) or (bool(prefix) and 0 not in spellable(tid, context, prefix))

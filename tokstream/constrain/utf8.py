"""The UTF-8 prefix automaton, and each vocabulary token's class under it.

A byte string is a *valid UTF-8 prefix* when some continuation makes it valid UTF-8:
no byte that starts nothing (``0x80``-``0xBF`` without a lead, ``0xC0``, ``0xC1``,
``0xF5``-``0xFF``), no overlong form, no surrogate (U+D800-U+DFFF), nothing above
U+10FFFF; only the last character may be unfinished. The automaton below reads such
strings byte by byte (the byte ranges of the Unicode Standard, Table 3-7, "Well-Formed
UTF-8 Byte Sequences"); its state says what the open character still needs:

====== ================================================ =====================
state  after                                            next byte
====== ================================================ =====================
0      a character boundary (the start state)           any lead byte
1      ``C2-DF``, ``E0-EF ..``, ``F0-F4 .. ..``         ``80-BF``, then 0
2      ``E0``                                           ``A0-BF`` (overlong)
3      ``E1-EC``, ``EE-EF``, ``F0-F4 ..``               ``80-BF``, then 1
4      ``ED``                                           ``80-9F`` (surrogates)
5      ``F0``                                           ``90-BF`` (overlong)
6      ``F1-F3``                                        ``80-BF``, then 3
7      ``F4``                                           ``80-8F`` (> U+10FFFF)
8      anything invalid (``REJECT``, absorbing)         nothing
====== ================================================ =====================

``Utf8Index`` (one per ``VocabIndex``, ``utf8_index(index)``) classifies every token
for every live start state at once: ``end[s, id]``, the state after the token's bytes
(``REJECT`` if they are not a valid continuation), and ``ok[s]``, in rank order (the
index's ``order``): whether the token may follow state ``s``, which is "valid, and the
vocabulary can still finish the character it leaves open" (``finishable``). A
constraint that allows a slice of ``order`` only from state ``s`` is then one numpy
``&`` with ``ok[s]`` (``masks.TokenMasker`` packs it once per state): the per-token
classes are what turn a UTF-8 rule into a few array operations per mask.

Cost (``bench/masks.py``): build, on the first UTF-8 question about an index, O(B)
array work: one automaton pass over every token's bytes from a boundary (``L``
vectorised steps, L the longest token; tokens sorted by length so step p touches only
the tokens longer than p), started after the continuation bytes the token opens with;
each start state is then a few O(V) array operations on (leading continuation bytes,
first byte, length, that pass's end state). ~30-60 ms for o200k_base / Llama 3 (the
first version ran the automaton once per start state: 8x the pass, ~250 ms); memory ``8 x V`` bytes for ``end`` and ``8 x
T`` for ``ok`` and ``4 x 8 x T`` for ``refused`` (its running count, so that a slice
is checked in O(1)): 9.6 MB for o200k_base. ``run`` on one token is
O(len(token)) in Python (the constraints call it per accepted id). Built once, under a
lock; the result is cached per index (weakly).

It leaves out: other encodings (UTF-16, CESU-8, "modified UTF-8"), and U+FFFD
replacement: invalid bytes are refused, never repaired.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from ..vocab import PerIndex, VocabIndex

__all__ = [
    "ACCEPT",
    "N_LIVE",
    "REJECT",
    "TABLE",
    "Utf8Index",
    "describe_invalid",
    "first_byte_range",
    "run",
    "states_along",
    "utf8_index",
]

#: At a character boundary: the start state, and the only one where the output is
#: whole UTF-8.
ACCEPT: Final = 0
#: The live states are 0 .. N_LIVE - 1.
N_LIVE: Final = 8
#: Not a valid UTF-8 prefix; no byte leaves it.
REJECT: Final = 8


def _table() -> npt.NDArray[np.uint8]:
    t = np.full((N_LIVE + 1, 256), REJECT, dtype=np.uint8)
    t[0, 0x00:0x80] = 0
    t[0, 0xC2:0xE0] = 1
    t[0, 0xE0] = 2
    t[0, 0xE1:0xED] = 3
    t[0, 0xED] = 4
    t[0, 0xEE:0xF0] = 3
    t[0, 0xF0] = 5
    t[0, 0xF1:0xF4] = 6
    t[0, 0xF4] = 7
    t[1, 0x80:0xC0] = 0
    t[2, 0xA0:0xC0] = 1
    t[3, 0x80:0xC0] = 1
    t[4, 0x80:0xA0] = 1
    t[5, 0x90:0xC0] = 3
    t[6, 0x80:0xC0] = 3
    t[7, 0x80:0x90] = 3
    t.setflags(write=False)
    return t


#: ``TABLE[state, byte]``: the next state (the module's table).
TABLE: Final = _table()
_ROWS: Final = TABLE.tolist()
#: Per live state: (continuation bytes it needs, the first one's range [lo, hi)).
_NEEDS: Final = (
    (0, 0, 0),
    (1, 0x80, 0xC0),
    (2, 0xA0, 0xC0),
    (2, 0x80, 0xC0),
    (2, 0x80, 0xA0),
    (3, 0x90, 0xC0),
    (3, 0x80, 0xC0),
    (3, 0x80, 0x90),
)
#: The state that needs k more plain continuation bytes (k = 0, 1, 2, 3).
_PLAIN: Final = np.array([ACCEPT, 1, 3, 6], dtype=np.intp)


def run(state: int, data: bytes) -> int:
    """The state after reading ``data`` from ``state`` (``REJECT`` if invalid).

    >>> run(ACCEPT, "的".encode()[:2]), run(1, b"\\x84"), run(ACCEPT, b"\\x84")
    (1, 0, 8)
    """
    rows = _ROWS
    for b in data:
        state = rows[state][b]
        if state == REJECT:
            break
    return state


def states_along(state: int, data: bytes) -> list[int]:
    """The states after ``data[:j]`` for ``j = 0 .. len(data)`` (``REJECT`` from the
    first invalid byte on)."""
    rows = _ROWS
    out = [state]
    for b in data:
        state = rows[state][b]
        out.append(state)
    return out


def first_byte_range(state: int) -> tuple[int, int]:
    """``(lo, hi)``: the bytes ``[lo, hi)`` that may come next in a live state other
    than ``ACCEPT`` (the open character's next continuation byte).

    >>> [hex(b) for b in first_byte_range(run(ACCEPT, b"\\xed"))]
    ['0x80', '0xa0']
    """
    need, lo, hi = _NEEDS[state]
    if not need:
        raise ValueError("at a character boundary any lead byte may come next")
    return lo, hi


def describe_invalid(state: int, data: bytes) -> str:
    """Where and why ``data`` read from ``state`` stops being a valid UTF-8 prefix
    ("" when it is one)."""
    rows = _ROWS
    for i, b in enumerate(data):
        nxt = rows[state][b]
        if nxt == REJECT:
            if state == ACCEPT:
                why = "a continuation byte with no lead byte" if 0x80 <= b < 0xC0 else "a byte no UTF-8 text holds"
            else:
                why = "not the continuation byte the open character needs"
            return f"byte {i} (0x{b:02X}) is {why}"
        state = nxt
    return ""


class Utf8Index:
    """Each token's class under the automaton, for one vocabulary index (module notes).

    ``end``: uint8 ``(N_LIVE, n_vocab)``, the state after each token from each live
    state (``REJECT`` where invalid, and for ids without text). ``finishable``: bool ``(N_LIVE + 1,)``, whether tokens can lead
    from a state back to ``ACCEPT`` (always for ``ACCEPT``; never for ``REJECT``).
    ``ok``: bool ``(N_LIVE, n_text)`` in rank order, ``finishable[end[s, id]]``.
    ``single_bytes``: the byte values that are tokens by themselves.
    ``refused``: int32 ``(N_LIVE, n_text + 1)``, ``refused[s, r]`` the number of ranks
    below ``r`` that ``ok[s]`` refuses, so ``all_ok`` and ``any_ok`` answer for a
    slice in O(1): most slices from a boundary need no filter at all (o200k_base
    refuses 321 of its 200k text tokens there), and the masks then skip it.
    """

    __slots__ = ("__weakref__", "end", "finishable", "ok", "refused", "single_bytes")

    def __init__(self, index: VocabIndex) -> None:
        n = index.n_vocab
        data = index.token_bytes
        lengths = np.fromiter(map(len, data), dtype=np.intp, count=n)
        flat = np.frombuffer(b"".join(data) + bytes(4), dtype=np.uint8)  # padded: byte j < 4 is in range
        starts = np.zeros(n, dtype=np.intp)
        np.cumsum(lengths[:-1], out=starts[1:])
        first = flat[starts]
        # lead: how many continuation bytes (0x80-0xBF) open the token, counted to 4
        # (4 or more is invalid from every state).
        lead = np.zeros(n, dtype=np.intp)
        going = lengths > 0
        for j in range(4):
            going &= (lengths > j) & ((flat[starts + j] & 0xC0) == 0x80)
            lead += going
        # tail: the state after the bytes past those, read from a boundary. This is the
        # one byte-by-byte pass: tokens sorted by the length left, longest first, so
        # the ones still being read at byte p are a prefix of that order.
        rest = lengths - lead
        by_len = np.argsort(-rest, kind="stable")
        rest_sorted = rest[by_len]
        pos = starts[by_len] + lead[by_len]
        state = np.zeros(n, dtype=np.intp)  # in by_len order, times 256
        step = TABLE.astype(np.intp).ravel() * 256
        for p in range(int(rest_sorted[0]) if n else 0):
            k = int(np.searchsorted(-rest_sorted, -p, side="left"))  # tokens with rest > p
            head = state[:k]
            np.take(step, head + flat[pos[:k] + p], out=head)
        tail = np.empty(n, dtype=np.uint8)
        tail[by_len] = state >> 8
        # Each live state s needs `need` more continuation bytes, the first of them in
        # `[lo, hi)`; a token is valid from s iff it opens with exactly min(need, len)
        # of them, the first in range, and (when longer) the rest is valid from a
        # boundary. Consumed entirely, it leaves the state that needs the remainder.
        end = np.empty((N_LIVE, n), dtype=np.uint8)
        end[ACCEPT] = np.where(lead == 0, tail, REJECT)
        for s, (need, lo, hi) in enumerate(_NEEDS[1:], start=1):
            ok = (first >= lo) & (first < hi) & (lead == np.minimum(need, lengths))
            whole = _PLAIN[np.maximum(need - lengths, 0)]  # used where len <= need
            end[s] = np.where(ok, np.where(lengths <= need, whole, tail), REJECT)
        end[:, lengths == 0] = REJECT  # specials and holes: never text
        # From which states can tokens lead back to a boundary? A fixed point over
        # the 9 x 9 "some text token goes from s to e" matrix.
        text_end = end[:, index.order]  # (N_LIVE, T), rank order
        counts = np.bincount(
            (np.arange(N_LIVE)[:, None] * (N_LIVE + 1) + text_end).ravel(), minlength=N_LIVE * (N_LIVE + 1)
        )
        step_to = counts.reshape(N_LIVE, N_LIVE + 1) > 0
        finishable = np.zeros(N_LIVE + 1, dtype=bool)
        finishable[ACCEPT] = True
        for _ in range(N_LIVE):
            finishable[:N_LIVE] |= (step_to & finishable).any(axis=1)
        self.end: npt.NDArray[np.uint8] = end
        self.finishable: npt.NDArray[np.bool_] = finishable
        self.ok: npt.NDArray[np.bool_] = finishable[text_end]
        #: The byte values that are a token by themselves.
        self.single_bytes: frozenset[int] = frozenset(data[i][0] for i in np.flatnonzero(lengths == 1).tolist())
        refused = np.zeros((N_LIVE, self.ok.shape[1] + 1), dtype=np.int32)
        np.cumsum(~self.ok, axis=1, out=refused[:, 1:])
        self.refused: npt.NDArray[np.int32] = refused
        for a in (self.end, self.finishable, self.ok, self.refused):
            a.setflags(write=False)

    def all_ok(self, state: int, lo: int, hi: int) -> bool:
        """Whether ``ok[state]`` holds for every rank in ``[lo, hi)`` (O(1))."""
        row = self.refused[state]
        return bool(row[hi] == row[lo])

    def any_ok(self, state: int, lo: int, hi: int) -> bool:
        """Whether ``ok[state]`` holds for some rank in ``[lo, hi)`` (O(1))."""
        row = self.refused[state]
        return bool(hi - lo > row[hi] - row[lo])

    def allows(self, state: int, token_id: int) -> bool:
        """Whether token ``token_id`` may follow ``state`` (valid and finishable)."""
        return bool(self.finishable[self.end[state, token_id]])


#: The ``Utf8Index`` of an index, built on first use (once: concurrent first uses wait
#: for one build).
utf8_index: Final = PerIndex(Utf8Index)

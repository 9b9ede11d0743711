"""The cached encode path: pre-tokenize and segment ordinary text (no specials) fast.

``PieceEncoder.encode(text)`` returns exactly ``[id for piece in pre.split(text) for id
in encode_piece(piece)]``; everything here only makes that cheaper.

Performance notes
-----------------
Two bounded dicts: *parts* (the text between two safe spaces, see
``pre_tokenizers``) -> ids, and *pieces* (pre-tokens) -> ids. A warm call on prose is
``str.split(" ")`` (~130 MB/s) plus one C-level ``map`` over the part dict and a
``chain`` of the values: no Python frame per part.

``str.split(" ")`` also cuts at *unsafe* spaces (after whitespace, as in ``"a  b"`` or
``"\\n  x"``). An element is *clean* when it is non-empty and does not end in
whitespace; the space after a clean element is safe. Only clean elements are ever
stored, so an unclean one raises ``KeyError`` in the warm map and is repaired by
joining it with the elements that follow, up to the next clean one. Text with many
unsafe spaces (indented code: more than one per 128 characters, judged on the first
8 KiB and enforced by a repair budget) is instead cut with the exact regex
(``RegexSplit.cut``, ~60 MB/s), whose parts are all safe.

A part not seen before switches the call to the bulk path: the unseen parts are split
and assembled with C-level ``map``s, and only BPE of unseen pieces runs Python per
item. Keys longer than ``MAX_CACHED_LEN`` (comment rulers, long identifiers, base64,
lines of text without spaces) go to each dict's ``long`` side dict instead, looked up
only on a miss of the main one, so they cannot evict short entries.

Unicode 16.0 stand-ins: a part holding a character that tiktoken's Unicode 16.0 classes
unlike the installed ``regex`` (``RegexSplit.needs_unicode16``) is split by 16.0
classes (``findall_unicode16``), and only that part: the space cut is a boundary in both
versions (it rests on ``\\s`` alone, which the stand-ins keep), so the ids of a part do
not depend on the Unicode version of the rest, and it is cached like any other part.
Detection costs nothing on warm text: a piece holding such a character is never stored
in the piece dict, so a part holding one always misses there and the miss checks
(``checked``); the bulk path checks its new non-ASCII parts with one guard scan. In a
long part (CJK text has few spaces) of cl100k_base, o200k_base or Llama 3 only the
lines around the character are split again (``_LINE_CUT``); the rest keeps the pieces
of the ordinary split. Pieces of the stand-in split go through the piece dict, but
those holding such a character (computed each time; they are rare).

Cost: memory is bounded by ``CACHE_LIMIT`` entries per dict (keys at most
``MAX_CACHED_LEN`` characters) plus ``LONG_BUDGET`` characters of long keys per dict
(a key over a sixteenth of it is never kept, so one huge piece cannot flush the rest):
about 16 bytes per character with ids included (measured on random letters, 1.5
characters a token; code is cheaper), so at most ~8 MB per ``long`` dict. A dict that
would overflow is cleared, so a stream of unique text cannot grow it. Time is linear
in the text plus BPE of unseen pieces; a part holding a stand-in character costs about
2x an ordinary uncached one (the ordinary split, then the 16.0 one), once if it is
cached. ``bench/encode.py`` and ``bench/unicode16.py`` have the figures.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Mapping
from itertools import accumulate, chain, compress, islice
from typing import Final

from ._native_text import text_encoder
from .models.base import NativeText
from .pre_tokenizers import PATTERNS, RegexSplit

__all__ = ["CACHE_LIMIT", "LONG_BUDGET", "MAX_CACHED_LEN", "PieceCache", "PieceEncoder"]

CACHE_LIMIT: Final = 1 << 17
# Longer keys are fewer and rarer: they go to a separate dict with a character budget,
# so they cannot evict the short entries.
MAX_CACHED_LEN: Final = 64
#: Characters of long keys (over ``MAX_CACHED_LEN``) kept per dict; a key over a
#: sixteenth of it is never kept.
LONG_BUDGET: Final = 1 << 19

Ids = tuple[int, ...]


class _Cold(Exception):
    """A part that was never seen: restart the call on the bulk path."""


class _Unicode16(Exception):
    """A new piece holds a character that Unicode 16.0 classes differently."""


def _clean(element: str) -> bool:
    # str.isspace is a superset of White_Space, so "clean" is conservative.
    return bool(element) and not element[-1].isspace()


class _Bounded(dict[str, Ids]):
    """A dict of at most ``CACHE_LIMIT`` short keys, and ``long``: keys over
    ``MAX_CACHED_LEN`` characters, at most ``LONG_BUDGET`` characters of them."""

    __slots__ = ("long", "long_chars")

    def __init__(self) -> None:
        super().__init__()
        self.long: dict[str, Ids] = {}
        self.long_chars = 0

    def keep_long(self, key: str, ids: Ids) -> None:
        """Keep a long key's ids, clearing ``long`` first when the budget would overflow."""
        n = len(key)
        if n > LONG_BUDGET >> 4:
            return  # one key would take over a sixteenth of the budget
        total = self.long_chars + n
        if total > LONG_BUDGET:
            self.long.clear()
            total = n
        self.long[key] = ids
        # Racing threads may each add a key after another's clear: the budget is kept
        # up to one key per concurrently encoding thread.
        self.long_chars = total

    def store(self, fresh: Mapping[str, Ids]) -> bool:
        """Insert ``fresh`` (long keys into ``long``); True when short entries were evicted."""
        keep = {k: v for k, v in fresh.items() if len(k) <= MAX_CACHED_LEN}
        if len(keep) < len(fresh):
            for k, v in fresh.items():
                if len(k) > MAX_CACHED_LEN:
                    self.keep_long(k, v)
        evict = len(self) + len(keep) > CACHE_LIMIT
        if evict:
            self.clear()
        self.update(keep)
        return evict


class PieceCache(_Bounded):
    """pre-token -> ids; a miss is computed and kept (long ones in ``long``).

    ``list(chain.from_iterable(map(cache.__getitem__, pieces)))`` encodes a list of
    pieces with no Python frame per hit.
    """

    __slots__ = ("compute",)

    def __init__(self, compute: Callable[[str], Ids]) -> None:
        super().__init__()
        self.compute = compute

    def __missing__(self, key: str) -> Ids:
        if len(key) <= MAX_CACHED_LEN:
            ids = self.compute(key)
            if len(self) >= CACHE_LIMIT:
                self.clear()
            self[key] = ids
            return ids
        found = self.long.get(key)
        if found is None:
            found = self.compute(key)
            self.keep_long(key, found)
        return found


class _PartCache(_Bounded):
    """part -> ids of ``" " + part``; a short or unclean miss raises ``KeyError``."""

    __slots__ = ("compute",)

    def __init__(self, compute: Callable[[str], Ids]) -> None:
        super().__init__()
        self.compute = compute

    def __missing__(self, key: str) -> Ids:
        if len(key) > MAX_CACHED_LEN and _clean(key):
            found = self.long.get(key)
            if found is None:
                found = self.compute(" " + key)
                self.keep_long(key, found)
            return found
        raise KeyError(key)


#: Patterns in which a place after a newline, before a character that is neither
#: whitespace nor ``/``, is a piece boundary whatever the letter classes (the proof is
#: at ``tokenizer._LINE_CUT_PATTERNS``; it rests only on ``\s``, ``\r``, ``\n`` and
#: ``/``, which the Unicode 16.0 stand-ins keep), so the stand-in split can stop there.
_LINE_CUT_PATTERNS: Final = frozenset(PATTERNS[name] for name in ("cl100k_base", "o200k_base", "llama3"))
# stdlib \s is a superset of White_Space: only ever fewer cuts than the proof allows.
_LINE_CUT: Final = re.compile(r"\n(?=[^\s/])")

#: Below this many characters ``PieceEncoder`` pre-tokenizes with one ``findall``
#: (measured: 60-character parts encode ~2x faster that way than split and repair).
_SHORT = 256


class PieceEncoder:
    """Pre-tokenize with ``pre`` and encode each piece with ``encode_piece``, cached.

    ``encode_piece`` takes a piece's UTF-8 bytes; the map ``whole()`` gives (asked for
    on the first cold call, kept as ``ranks``) answers the common case, a piece that is
    one token, without calling it. ``encode`` raises
    ``UnicodeEncodeError`` on lone surrogates; the caller replaces them and retries.
    """

    __slots__ = (
        "_line_cut",
        "_native",
        "_native_parts",
        "_parts",
        "_pieces",
        "_whole",
        "chunk_ids",
        "encode_piece",
        "pre",
        "ranks",
    )

    def __init__(
        self,
        pre: RegexSplit,
        encode_piece: Callable[[bytes], Ids],
        whole: Callable[[], Mapping[bytes, int]],
        native_parts: Callable[[], NativeText | None] | None = None,
    ) -> None:
        self.pre = pre
        # The compiled text encoder (``_native_text``), built on the first encode from
        # ``native_parts()`` (the model's pair table: ~0.1 s for o200k); None until then,
        # and for good where the pure path runs.
        self._native: Callable[[str], list[int]] | None = None
        self._native_parts = native_parts if pre.unicode16 else None
        self.ranks: Mapping[bytes, int] | None = None  # whole(), on the first cold call
        self._whole = whole
        self.encode_piece = encode_piece
        self._line_cut = _LINE_CUT if pre.pattern in _LINE_CUT_PATTERNS else None
        needs_unicode16 = pre.needs_unicode16

        def checked(piece: str) -> Ids:
            # Every character lands in some piece, and pieces holding one of these
            # characters are never stored, so checking misses catches every such part.
            if needs_unicode16(piece):
                raise _Unicode16
            return encode_piece(piece.encode("utf-8"))

        self._pieces = PieceCache(checked)
        pieces_get = self._pieces.__getitem__
        findall = pre.findall

        def chunk_ids(chunk: str) -> Ids:
            pieces = findall(chunk)
            try:
                return tuple(chain.from_iterable(map(pieces_get, pieces)))
            except _Unicode16:
                return self._unicode16_ids(chunk, pieces)

        self.chunk_ids = chunk_ids
        self._parts = _PartCache(chunk_ids)

    def encode(self, text: str) -> list[int]:
        """The ids of ``text`` (no special-token handling)."""
        native = self._native
        if native is not None:
            return native(text)
        if self._native_parts is not None:
            native = self._start_native()
            if native is not None:
                return native(text)
        return self._encode(text)

    def native_encoder(self) -> Callable[[str], list[int]] | None:
        """The compiled text encoder's ``encode`` (built now if it was not), or None
        where the pure path runs."""
        if self._native is None and self._native_parts is not None:
            return self._start_native()
        return self._native

    def _start_native(self) -> Callable[[str], list[int]] | None:
        """Build the compiled text encoder, once (None: the pure path runs)."""
        parts, self._native_parts = self._native_parts, None
        found = parts() if parts is not None else None
        encoder = text_encoder(self.pre.pattern, *found) if found is not None else None
        if encoder is not None:
            self._native = encoder.encode
            # The stream's part cache computes through it too.
            self.chunk_ids = lambda chunk: tuple(encoder.encode(chunk))
            self._parts.compute = self.chunk_ids
        return self._native

    def _encode(self, text: str) -> list[int]:
        if not self.pre.space_safe or len(text) < _SHORT:
            # Short text (a streamed part, a chat turn): one findall beats the
            # split-and-repair machinery's fixed cost.
            return list(self.chunk_ids(text))
        # Guess from the first 8 KiB whether the text is indented (see module notes).
        if text.count("  ", 0, 8192) + text.count("\n ", 0, 8192) > (min(len(text), 8192) >> 7):
            return self._encode_cut(text)
        try:
            return self._encode_split(text)
        except _Cold:
            # An unseen part, or so many unsafe spaces (indented code) that repairing
            # each costs more than the exact regex cut.
            return self._encode_cut(text)

    def _encode_split(self, text: str) -> list[int]:
        elements = iter(text.split(" "))
        head = next(elements)
        if head and not _clean(head):
            for nxt in elements:
                head += " " + nxt
                if _clean(nxt):
                    break
        out = list(self.chunk_ids(head))
        get = self._parts.__getitem__
        repairs_left = 16 + (len(text) >> 7)
        while True:
            try:
                # On KeyError, CPython's list.extend keeps the ids appended before it.
                out += chain.from_iterable(map(get, elements))
                return out
            except KeyError as e:
                key = e.args[0]
                if not isinstance(key, str):
                    raise
                repairs_left -= 1
                if not repairs_left:
                    raise _Cold from None
                # An unseen clean part (a new word, often a truncated one at the end of
                # a prompt) is encoded here; many of them go to the bulk path above.
                # Otherwise join up to the next clean element: that is one cut part,
                # cacheable under its own text (the last one, ending the text, may be
                # unclean).
                part = key
                if not _clean(key):
                    for nxt in elements:
                        part += " " + nxt
                        if _clean(nxt):
                            break
                ids = self._parts.get(part)
                if ids is None:
                    ids = self.chunk_ids(" " + part)
                    if _clean(part) and len(part) <= MAX_CACHED_LEN:
                        self._parts.store({part: ids})
                out += ids

    def _encode_cut(self, text: str) -> list[int]:
        parts = self.pre.cut(text)
        out = list(self.chunk_ids(parts[0]))
        if len(parts) == 1:
            return out
        # Every part but the last ends before a safe space; the last ends the text and
        # may be unclean (never cached), so it is encoded on its own.
        last = parts.pop()
        start = len(out)
        try:
            out += chain.from_iterable(map(self._parts.__getitem__, islice(parts, 1, None)))
        except KeyError:
            del out[start:]
            out += self._encode_parts_bulk(parts)
        out += self.chunk_ids(" " + last)
        return out

    def _encode_parts_bulk(self, parts: list[str]) -> list[int]:
        """Encode ``parts[1:]`` (all clean safe cuts), computing unseen ones in bulk."""
        unseen = [p for p in set(islice(parts, 1, None)).difference(self._parts) if len(p) <= MAX_CACHED_LEN]
        ascii_parts = [p for p in unseen if p.isascii()]
        other = [p for p in unseen if not p.isascii()]
        fresh: dict[str, Ids] = {}
        needs_unicode16 = self.pre.needs_unicode16
        # One guard scan over all of them; in the rare hit, only the parts holding such
        # a character take the stand-in split (their ids are cached like any part's).
        if other and needs_unicode16("".join(other)):
            fresh = {p: self._split16_ids(" " + p) for p in other if needs_unicode16(p)}
            other = [p for p in other if p not in fresh]
        split = [
            *map(self.pre.findall_ascii, map(" ".__add__, ascii_parts)),
            *map(self.pre.findall, map(" ".__add__, other)),
        ]
        # No piece here holds such a character: the piece dict's invariant holds.
        self._fill_pieces(set(chain.from_iterable(split)))
        get = self._pieces.__getitem__
        # Most parts are one piece, whose ids tuple is reused as it is.
        fresh.update(
            zip(
                ascii_parts + other,
                [
                    get(pieces[0]) if len(pieces) == 1 else tuple(chain.from_iterable(map(get, pieces)))
                    for pieces in split
                ],
            )
        )
        evicted = self._parts.store(fresh)
        rest = islice(parts, 1, None)
        if not evicted:
            # Nothing was evicted: every short part is cached now, long ones compute;
            # unless another thread's store cleared the dict meanwhile (a short part's
            # miss raises KeyError): then take the path below.
            try:
                return list(chain.from_iterable(map(self._parts.__getitem__, rest)))
            except KeyError:
                rest = islice(parts, 1, None)
        # The store cleared the cache to keep its bound; parts seen before this call
        # are computed again.
        lookup, cached, compute = fresh.get, self._parts.get, self.chunk_ids
        return list(chain.from_iterable([lookup(p) or cached(p) or compute(" " + p) for p in rest]))

    def _unicode16_ids(self, chunk: str, pieces: list[str] | None = None) -> Ids:
        """The ids of a chunk that tiktoken's Unicode 16.0 splits differently (module
        notes). ``pieces``: its ``findall`` pieces; in a long chunk of a line-cut
        pattern only the lines around such characters are split again."""
        if pieces is None or len(chunk) <= _SHORT or self._line_cut is None:
            return self._split16_ids(chunk)
        offsets = [0, *accumulate(map(len, pieces))]
        if offsets[-1] != len(chunk):  # defensive: the named patterns match every character
            return self._split16_ids(chunk)
        # Every such character is in a piece missing from the piece dict (``checked``):
        # find those few, instead of a guard scan of the whole chunk (~20 MB/s).
        needs_unicode16, unicode16_positions = self.pre.needs_unicode16, self.pre.unicode16_positions
        bad = {p for p in set(pieces).difference(self._pieces) if needs_unicode16(p)}
        positions: list[int] = []
        for i in compress(range(len(pieces)), map(bad.__contains__, pieces)):
            positions += [offsets[i] + at for at in unicode16_positions(pieces[i])]
        get = self._pieces.__getitem__
        out: list[int] = []
        done = 0  # pieces before this index are encoded
        for start, end, at in self._unicode16_lines(chunk, positions):
            first, last = bisect_left(offsets, start), bisect_left(offsets, end)
            if offsets[first] != start or offsets[last] != end:  # defensive: both versions cut there
                return self._split16_ids(chunk)
            out += chain.from_iterable(map(get, islice(pieces, done, first)))
            out += self._split16_ids(chunk[start:end], [p - start for p in at])
            done = last
        out += chain.from_iterable(map(get, islice(pieces, done, None)))
        return tuple(out)

    def _unicode16_lines(self, chunk: str, positions: list[int]) -> list[tuple[int, int, list[int]]]:
        """Disjoint spans of ``chunk`` between line cuts (``_LINE_CUT``), in order, each
        with the ``positions`` it holds (the ascending offsets of the characters the
        stand-in split is for; every one is in a span)."""
        line_cut = self._line_cut
        assert line_cut is not None
        spans: list[tuple[int, int, list[int]]] = []
        for at in positions:
            if spans and at < spans[-1][1]:
                spans[-1][2].append(at)
                continue
            start, before = 0, at
            while (nl := chunk.rfind("\n", 0, before)) >= 0:
                if line_cut.match(chunk, nl):
                    start = nl + 1
                    break
                before = nl
            after = line_cut.search(chunk, at)
            end = after.end() if after is not None else len(chunk)
            if spans and start <= spans[-1][1]:
                start, _, held = spans.pop()
                spans.append((start, end, [*held, at]))
            else:
                spans.append((start, end, [at]))
        return spans

    def _split16_ids(self, chunk: str, positions: list[int] | None = None) -> Ids:
        """The ids of ``chunk`` split by Unicode 16.0 classes (``positions``: its
        ``unicode16_positions`` when known), each piece through the piece dict but
        those holding such a character (never stored, see ``checked``)."""
        get, pieces_get, encode_piece = self._pieces.get, self._pieces.__getitem__, self.encode_piece
        needs_unicode16 = self.pre.needs_unicode16
        split = (
            self.pre.findall_unicode16(chunk) if positions is None else self.pre.findall_unicode16_at(chunk, positions)
        )
        return tuple(
            chain.from_iterable(
                [get(p) or (encode_piece(p.encode("utf-8")) if needs_unicode16(p) else pieces_get(p)) for p in split]
            )
        )

    def _fill_pieces(self, pieces: set[str]) -> None:
        """Compute and store the unseen ``pieces`` (none holds a Unicode 16.0 stand-in
        character: the caller split those parts apart)."""
        unseen = list(pieces.difference(self._pieces))
        if not unseen:
            return
        # Most pieces are tokens themselves: a C-level lookup each, BPE for the rest.
        raw = list(map(str.encode, unseen))
        ranks = self.ranks
        if ranks is None:
            ranks = self.ranks = self._whole()
        found = list(map(ranks.get, raw))
        encode_piece = self.encode_piece
        ids = [(r,) if r is not None else encode_piece(b) for r, b in zip(found, raw)]
        self._pieces.store(dict(zip(unseen, ids)))

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
item. Keys longer than ``MAX_CACHED_LEN`` are computed each time and never stored.

Cost: memory is bounded by ``CACHE_LIMIT`` entries per dict (keys at most
``MAX_CACHED_LEN`` characters); a dict that would overflow is cleared, so a stream of
unique text cannot grow it. Time is linear in the text plus BPE of unseen pieces.
``bench/encode.py`` has the figures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from itertools import chain, islice
from typing import Final

from .pre_tokenizers import RegexSplit

__all__ = ["CACHE_LIMIT", "MAX_CACHED_LEN", "PieceCache", "PieceEncoder"]

CACHE_LIMIT: Final = 1 << 17
# Longer keys are rarely repeated; caching them would only evict useful entries.
MAX_CACHED_LEN: Final = 64

Ids = tuple[int, ...]


class _Cold(Exception):
    """A part that was never seen: restart the call on the bulk path."""


class _Unicode16(Exception):
    """A new piece holds a character that Unicode 16.0 classes differently."""


def _clean(element: str) -> bool:
    # str.isspace is a superset of White_Space, so "clean" is conservative.
    return bool(element) and not element[-1].isspace()


class _Bounded(dict[str, Ids]):
    """A dict of at most ``CACHE_LIMIT`` short keys."""

    __slots__ = ()

    def store(self, fresh: Mapping[str, Ids]) -> bool:
        """Insert the short keys of ``fresh``; True when older entries were evicted."""
        keep = {k: v for k, v in fresh.items() if len(k) <= MAX_CACHED_LEN}
        evict = len(self) + len(keep) > CACHE_LIMIT
        if evict:
            self.clear()
        self.update(keep)
        return evict


class PieceCache(_Bounded):
    """pre-token -> ids; a miss is computed (and kept when short).

    ``list(chain.from_iterable(map(cache.__getitem__, pieces)))`` encodes a list of
    pieces with no Python frame per hit.
    """

    __slots__ = ("compute",)

    def __init__(self, compute: Callable[[str], Ids]) -> None:
        super().__init__()
        self.compute = compute

    def __missing__(self, key: str) -> Ids:
        ids = self.compute(key)
        if len(key) <= MAX_CACHED_LEN:
            if len(self) >= CACHE_LIMIT:
                self.clear()
            self[key] = ids
        return ids


class _PartCache(_Bounded):
    """part -> ids of ``" " + part``; a short or unclean miss raises ``KeyError``."""

    __slots__ = ("compute",)

    def __init__(self, compute: Callable[[str], Ids]) -> None:
        super().__init__()
        self.compute = compute

    def __missing__(self, key: str) -> Ids:
        if len(key) > MAX_CACHED_LEN and _clean(key):
            return self.compute(" " + key)
        raise KeyError(key)


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

    __slots__ = ("_parts", "_pieces", "_whole", "chunk_ids", "encode_piece", "pre", "ranks")

    def __init__(
        self,
        pre: RegexSplit,
        encode_piece: Callable[[bytes], Ids],
        whole: Callable[[], Mapping[bytes, int]],
    ) -> None:
        self.pre = pre
        self.ranks: Mapping[bytes, int] | None = None  # whole(), on the first cold call
        self._whole = whole
        self.encode_piece = encode_piece
        needs_unicode16 = pre.needs_unicode16

        def checked(piece: str) -> Ids:
            # Every character lands in some piece, and pieces holding one of these
            # characters are never stored, so checking misses catches every such text.
            if needs_unicode16(piece):
                raise _Unicode16
            return encode_piece(piece.encode("utf-8"))

        self._pieces = PieceCache(checked)
        pieces_get = self._pieces.__getitem__
        findall = pre.findall

        def chunk_ids(chunk: str) -> Ids:
            return tuple(chain.from_iterable(map(pieces_get, findall(chunk))))

        self.chunk_ids = chunk_ids
        self._parts = _PartCache(chunk_ids)

    def encode(self, text: str) -> list[int]:
        """The ids of ``text`` (no special-token handling)."""
        try:
            return self._encode(text)
        except _Unicode16:
            return self._encode_unicode16(text)

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
        split = [
            *map(self.pre.findall_ascii, map(" ".__add__, ascii_parts)),
            *map(self.pre.findall, map(" ".__add__, other)),
        ]
        self._fill_pieces(set(chain.from_iterable(split)))
        get = self._pieces.__getitem__
        # Most parts are one piece, whose ids tuple is reused as it is.
        fresh = dict(
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

    def _encode_unicode16(self, text: str) -> list[int]:
        """Rare path for text that tiktoken's Unicode 16.0 splits differently: no caches
        but the piece dict (BPE of bytes does not depend on Unicode versions)."""
        get, encode_piece = self._pieces.get, self.encode_piece
        return list(
            chain.from_iterable([get(p) or encode_piece(p.encode("utf-8")) for p in self.pre.findall_unicode16(text)])
        )

    def _fill_pieces(self, pieces: set[str]) -> None:
        unseen = list(pieces.difference(self._pieces))
        if not unseen:
            return
        if any(map(self.pre.needs_unicode16, unseen)):
            raise _Unicode16
        # Most pieces are tokens themselves: a C-level lookup each, BPE for the rest.
        raw = list(map(str.encode, unseen))
        ranks = self.ranks
        if ranks is None:
            ranks = self.ranks = self._whole()
        found = list(map(ranks.get, raw))
        encode_piece = self.encode_piece
        ids = [(r,) if r is not None else encode_piece(b) for r, b in zip(found, raw)]
        self._pieces.store(dict(zip(unseen, ids)))

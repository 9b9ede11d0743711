r"""``Precompiled``: SentencePiece's compiled normalization rules (``precompiled_charsmap``).

As ``tokenizers``' ``normalizers/precompiled.rs`` (the crate ``spm_precompiled``): the
charsmap's darts-clone trie is read here and applied grapheme cluster by grapheme
cluster with ``tokenizers``' shortest-key rule (the class docstring has the layout and
the rule). ``normalizers/sentencepiece`` walks the same trie for SentencePiece's own
longest-key rule (``longest``, ``continued``, ``next_chars``) and imports the helpers
``cp_ranges`` and ``utf8_length``.

Differences from ``tokenizers``: grapheme clusters come from the ``regex`` module's
``\X`` (Unicode 17.0 in regex 2026.5) where ``tokenizers`` uses ``unicode-segmentation``;
the two can only disagree on clusters of characters new in the later Unicode version.
An empty charsmap is accepted and maps nothing (SentencePiece's reading); ``tokenizers``
refuses to load it.

Not here: building a charsmap (SentencePiece's rule compiler); charsmaps are only read.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
import struct
from collections.abc import Iterable
from typing import Final

import numpy as np
import regex

from ..errors import TokstreamError
from ..json_fields import Build, JsonObject, error, field
from .base import CharSet, Normalizer, Spans

# Two characters that may start one extended grapheme cluster (UAX #29's no-break
# rules for a cluster's first two characters, loosened: a superset is harmless).
_PAIR: Final = (
    r"(?:\r\n"
    r"|\p{Grapheme_Cluster_Break=Prepend}."
    r"|.[\p{Grapheme_Cluster_Break=Extend}\p{Grapheme_Cluster_Break=ZWJ}"
    r"\p{Grapheme_Cluster_Break=SpacingMark}]"
    r"|\p{Grapheme_Cluster_Break=L}[\p{Grapheme_Cluster_Break=L}\p{Grapheme_Cluster_Break=V}"
    r"\p{Grapheme_Cluster_Break=LV}\p{Grapheme_Cluster_Break=LVT}]"
    r"|[\p{Grapheme_Cluster_Break=LV}\p{Grapheme_Cluster_Break=V}]"
    r"[\p{Grapheme_Cluster_Break=V}\p{Grapheme_Cluster_Break=T}]"
    r"|[\p{Grapheme_Cluster_Break=LVT}\p{Grapheme_Cluster_Break=T}]\p{Grapheme_Cluster_Break=T}"
    r"|\p{Grapheme_Cluster_Break=Regional_Indicator}\p{Grapheme_Cluster_Break=Regional_Indicator})"
)
_GRAPHEME: Final = regex.compile(r"\X", regex.DOTALL)
# Each match is one cluster that may hold several characters (group "multi") or a run
# of one-character clusters. \X inside the repetition starts at true cluster
# boundaries, since the scan never stops inside a cluster.
_CLUSTERS: Final = regex.compile(rf"(?P<multi>(?={_PAIR})\X)|(?:(?!{_PAIR})\X)+", regex.DOTALL)
# Results of multi-character clusters, per Precompiled; real text repeats its clusters.
_CLUSTER_CACHE_SIZE: Final = 4096


@functools.lru_cache(maxsize=1)
def _grapheme_joiners() -> CharSet:
    r"""Characters that can continue a cluster (or, Prepend, extend the next one).

    With none of them (and no CR LF), every cluster is one character. Read off the
    ``regex`` module's own tables once per process (about 80 ms), so the test agrees
    with its ``\X``; as explicit ``re`` ranges it scans ten times faster than the
    ``regex`` property class. LV/LVT syllables join only after L, which is listed.
    """
    cps = np.arange(0x110000, dtype="<u4")
    cps[0xD800:0xE000] = 0  # surrogates cannot be decoded
    every = cps.tobytes().decode("utf-32-le")
    joiners = regex.findall(
        r"[\p{Grapheme_Cluster_Break=Extend}\p{Grapheme_Cluster_Break=ZWJ}"
        r"\p{Grapheme_Cluster_Break=SpacingMark}\p{Grapheme_Cluster_Break=Prepend}"
        r"\p{Grapheme_Cluster_Break=L}\p{Grapheme_Cluster_Break=V}\p{Grapheme_Cluster_Break=T}"
        r"\p{Grapheme_Cluster_Break=Regional_Indicator}]",
        every,
    )
    return CharSet(cp_ranges(joiners), runs=False)


_LEAF_BIT: Final = 1 << 8
_LABEL_MASK: Final = (1 << 31) | 0xFF
_VALUE_MASK: Final = (1 << 31) - 1


def _unit_offset(unit: int) -> int:
    # darts-clone's packed offset: 21 bits, shifted left by 8 when bit 9 is set.
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


def utf8_length(lead: int) -> int:
    if lead < 0x80:
        return 1
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xF0 <= lead <= 0xF4:
        return 4
    return 0


class Precompiled(Normalizer):
    r"""SentencePiece's compiled normalization rules (``precompiled_charsmap``).

    The charsmap is ``<u32 trie size><trie: u32 units><normalized strings>``: a
    darts-clone double-array trie over UTF-8 key bytes whose values index NUL-ended
    replacements. ``tokenizers`` (``spm_precompiled``) applies it grapheme by grapheme:
    a cluster of under 6 UTF-8 bytes is looked up as a whole and, if some prefix of its
    bytes is a key, the *shortest* such key's replacement replaces the whole cluster
    (so ``'ﬁ'`` + U+0301 becomes ``'fi'``, the accent dropped); otherwise each character
    is replaced by its own entry, if it has one. A NUL byte ends a lookup.
    SentencePiece itself takes the *longest* key at each position instead (``longest``,
    which ``normalizers/sentencepiece`` uses, with ``continued`` and ``next_chars``).

    Unit layout (32 bits): bits 0-7 label, bit 8 has-leaf, bit 9 offset scale, bits 10-31
    offset; a leaf unit holds the value in bits 0-30 with bit 31 set.

    Cost: building walks the trie once for its one-character keys (O(trie size) with
    numpy: 60 ms for the 44k-unit NFKC map of T5-style models) and keeps the units as a
    list. ``normalize`` on text without grapheme-extending characters (most Latin and
    CJK text) is one ``re`` search for them plus one ``re.sub`` with a callback per run
    of mapped characters. Text with them (Indic scripts, decomposed accents, emoji
    sequences) goes cluster by cluster through ``regex``'s ``\X`` in C, calling Python
    per multi-character cluster and per run of other clusters (2-6 MB/s).

    A one-rule charsmap, U+FB01 (bytes EF AC 81) -> "fi", built by hand:

    >>> import struct
    >>> units = [0] * 256
    >>> units[0] = 0xE0 << 10                          # root: its base is 0xE0
    >>> units[0xE0 ^ 0xEF] = 0xAF << 10 | 0xEF         # byte EF; base 0x0F ^ 0xAF = 0xA0
    >>> units[0xA0 ^ 0xAC] = 0x8C << 10 | 0xAC         # byte AC; base 0x80
    >>> units[0x80 ^ 0x81] = 0x03 << 10 | 1 << 8 | 0x81  # byte 81, a leaf at base 0x02
    >>> units[0x02] = 1 << 31 | 0                      # the value: string offset 0
    >>> p = Precompiled(struct.pack("<I256I", 1024, *units) + b"fi\0")
    >>> p.normalize("\ufb01ne \ufb01\u0301 x\u0301") == "fine fi x\u0301"
    True
    """

    __slots__ = (
        "_charsmap",
        "_children_index",
        "_cluster_cache",
        "_first",
        "_root",
        "_units",
        "_values",
        "continued",
        "mapped",
        "odd",
        "strings",
        "table",
    )
    type_name = "Precompiled"

    @property
    def space_local(self) -> bool:
        """The charsmap maps a space to itself."""
        return self.table.get(" ", " ") == " "

    def keeps(self, char: str) -> bool:
        """No rule maps ``char`` or holds it after its first character."""
        return self.table.get(char, char) == char and not self.space_inside_key(ord(char))

    def __init__(self, precompiled_charsmap: bytes) -> None:
        self._charsmap = bytes(precompiled_charsmap)
        self._values: dict[int, str] = {}
        self.table: dict[str, str] = {}
        #: First characters of keys longer than one character -> the trie node after them.
        self.continued: dict[str, int] = {}
        self.odd = False
        if not self._charsmap:
            self._units: list[int] = [0]
            self.strings = b""
            self._root = 0
        else:
            self._parse()
        #: Characters that start some key: only a cluster starting with one can take
        #: the whole-cluster rule.
        self._first = frozenset(self._walk_first_chars())
        self.mapped = CharSet(cp_ranges(self.table))
        self._cluster_cache: dict[str, str] = {}

    def _parse(self) -> None:
        data = self._charsmap
        if len(data) < 4:
            raise TokstreamError(f"precompiled_charsmap is {len(data)} bytes, too short")
        (trie_size,) = struct.unpack_from("<I", data)
        if trie_size % 4 or trie_size + 4 > len(data) or trie_size == 0:
            raise TokstreamError(
                f"precompiled_charsmap: trie size {trie_size} does not fit the "
                f"{len(data)}-byte charsmap (expected a positive multiple of 4)"
            )
        units = np.frombuffer(data, dtype="<u4", count=trie_size // 4, offset=4)
        self._units = units.tolist()
        self.strings = data[4 + trie_size :]
        try:
            self.strings.decode("utf-8")
        except UnicodeDecodeError as e:
            raise TokstreamError(f"precompiled_charsmap: the normalized strings are not UTF-8 ({e})") from None
        self._root = _unit_offset(self._units[0])
        # Children of each node by reverse lookup (a unit labelled c at index i is the
        # child of the node whose base is i ^ c): one numpy pass instead of 255 probes
        # per node.
        labels = units & np.uint32(_LABEL_MASK)
        index = np.nonzero((labels >= 1) & (labels <= 255))[0]
        parents = index ^ labels[index]
        order = np.argsort(parents, kind="stable")
        self._children_index = (parents[order], index[order])

    def _children(self, node: int) -> list[int]:
        parents, index = self._children_index
        lo = int(np.searchsorted(parents, node, "left"))
        hi = int(np.searchsorted(parents, node, "right"))
        return [int(i) for i in index[lo:hi]]

    def value(self, node: int) -> str:
        """The replacement stored at the leaf below ``node``."""
        if node >= len(self._units):
            raise TokstreamError(f"precompiled_charsmap: leaf {node} is outside the trie")
        offset = self._units[node] & _VALUE_MASK
        cached = self._values.get(offset)
        if cached is not None:
            return cached
        if offset > len(self.strings):
            raise TokstreamError(
                f"precompiled_charsmap: replacement offset {offset} is outside the "
                f"{len(self.strings)}-byte string table"
            )
        end = self.strings.find(b"\0", offset)
        try:
            value = self.strings[offset : end if end >= 0 else None].decode("utf-8")
        except UnicodeDecodeError:
            raise TokstreamError(f"precompiled_charsmap: replacement offset {offset} is not at a character") from None
        self._values[offset] = value
        return value

    def _walk_first_chars(self) -> set[str]:
        """Fill the one-character table; return the characters that start some key.

        Keys are walked down to one whole UTF-8 character. A leaf above that (a key
        that is not whole characters) makes the charsmap "odd": then every text takes
        the exact cluster-by-cluster path.
        """
        first: set[str] = set()
        if not self._charsmap:
            return first
        stack: list[tuple[int, bytes]] = [(self._root, b"")]
        while stack:
            node, path = stack.pop()
            for i in self._children(node):
                unit = self._units[i]
                key = path + bytes([unit & 0xFF])
                child = i ^ _unit_offset(unit)
                need = utf8_length(key[0])
                if unit & _LEAF_BIT:
                    value = self.value(child)
                    if len(key) < need or need == 0:
                        self.odd = True
                    elif len(key) == need:
                        try:
                            self.table[key.decode("utf-8")] = value
                        except UnicodeDecodeError:
                            self.odd = True
                if need == 0 or len(key) > need:
                    continue
                if len(key) < need:
                    stack.append((child, key))
                else:
                    try:
                        char = key.decode("utf-8")
                    except UnicodeDecodeError:
                        continue
                    if self._children(child):
                        self.continued[char] = child
                        first.add(char)
                    elif unit & _LEAF_BIT:
                        first.add(char)
        return first

    def space_inside_key(self, byte: int = 0x20) -> bool:
        """Whether some key holds ``byte`` (a space by default) after its first byte.

        Cost: one numpy pass over the trie's edges (the parent of every edge labelled
        ``byte`` is compared with the root; unreachable units only make it cautious).
        """
        if not self._charsmap:
            return False
        parents, index = self._children_index
        units = np.asarray(self._units, dtype=np.uint32)
        labels = units[index] & np.uint32(_LABEL_MASK)
        return bool(np.any(parents[labels == byte] != self._root))

    def next_chars(self, node: int) -> tuple[set[str], bool]:
        """The whole characters that continue some key from ``node``, and whether a key
        ends inside one of them (an "odd" key, as in ``_walk_first_chars``)."""
        chars: set[str] = set()
        odd = False
        stack: list[tuple[int, bytes]] = [(node, b"")]
        while stack:
            parent, path = stack.pop()
            for i in self._children(parent):
                unit = self._units[i]
                key = path + bytes([unit & 0xFF])
                need = utf8_length(key[0])
                if need == 0:
                    odd = True
                    continue
                if len(key) < need:
                    odd = odd or bool(unit & _LEAF_BIT)
                    stack.append((i ^ _unit_offset(unit), key))
                    continue
                try:
                    chars.add(key.decode("utf-8"))
                except UnicodeDecodeError:
                    odd = True
        return chars, odd

    def longest(self, data: bytes, start: int = 0) -> tuple[int, int, bool]:
        """SentencePiece's rule (``normalizer.cc``): the longest key that prefixes
        ``data[start:]``, as ``(its length in bytes, its leaf node)``, ``(0, -1)`` when
        none; and whether the walk was still inside the trie at the end of ``data``
        (then more data could give a longer key). A NUL byte ends the walk."""
        units = self._units
        n = len(units)
        node = self._root
        best, leaf = 0, -1
        for k in range(start, len(data)):
            byte = data[k]
            i = node ^ byte
            if byte == 0 or i >= n:
                return best, leaf, False
            unit = units[i]
            if unit & _LABEL_MASK != byte:
                return best, leaf, False
            node = i ^ _unit_offset(unit)
            if unit & _LEAF_BIT:
                best, leaf = k + 1 - start, node
        return best, leaf, True

    def _lookup(self, key: bytes) -> str | None:
        """The replacement of the shortest key that prefixes ``key`` (spm's transform)."""
        units = self._units
        n = len(units)
        node = self._root
        for byte in key:
            if byte == 0:
                break
            i = node ^ byte
            if i >= n:
                return None
            unit = units[i]
            if unit & _LABEL_MASK != byte:
                return None
            node = i ^ _unit_offset(unit)
            if unit & _LEAF_BIT:
                return self.value(node)
        return None

    def _map_char(self, char: str) -> str:
        if self.odd:
            value = self._lookup(char.encode("utf-8", "surrogatepass"))
            return char if value is None else value
        return self.table.get(char, char)

    def _map_cluster(self, cluster: str) -> str | None:
        """The whole-cluster replacement, or None when characters map one by one."""
        if len(cluster) < 2 and not self.odd:
            return None
        key = cluster.encode("utf-8", "surrogatepass")
        return self._lookup(key) if len(key) < 6 else None

    def map_run(self, m: re.Match[str]) -> str:
        table = self.table
        return "".join([table[c] for c in m.group()])

    def _map_slow(self, m: regex.Match[str]) -> str:
        text = m.group()
        if m.lastgroup != "multi":
            return self.mapped.sub(self.map_run, text)
        cache = self._cluster_cache
        mapped = cache.get(text)
        if mapped is None:
            whole = self._map_cluster(text) if text[0] in self._first else None
            mapped = self.mapped.sub(self.map_run, text) if whole is None else whole
            if len(cache) < _CLUSTER_CACHE_SIZE:
                cache[text] = mapped
        return mapped

    def __reduce__(self) -> tuple[type[Precompiled], tuple[bytes]]:
        # Rebuild from the charsmap (60 ms) rather than pickle the unpacked trie.
        return (type(self), (self._charsmap,))

    def normalize(self, text: str) -> str:
        if self.odd:
            return self.normalize_aligned(text)[0]
        if not text or not self._first:
            return self.mapped.sub(self.map_run, text)
        if not _grapheme_joiners().search(text) and not ("\r" in self._first and "\r\n" in text):
            # Every grapheme cluster is one character: they all map one by one.
            return self.mapped.sub(self.map_run, text)
        return _CLUSTERS.sub(self._map_slow, text)

    def normalize_aligned(self, text: str) -> tuple[str, Spans]:
        out: list[str] = []
        spans: Spans = []
        for m in _GRAPHEME.finditer(text):
            cluster = m.group()
            start = m.start()
            whole = self._map_cluster(cluster)
            if whole is not None:
                out.append(whole)
                spans.extend([(start, m.end())] * len(whole))
                continue
            for k, char in enumerate(cluster, start):
                mapped = self._map_char(char)
                out.append(mapped)
                spans.extend([(k, k + 1)] * len(mapped))
        return "".join(out), spans

    def to_json(self) -> dict[str, object]:
        return {
            "type": self.type_name,
            "precompiled_charsmap": base64.b64encode(self._charsmap).decode("ascii"),
        }

    def __repr__(self) -> str:
        return f"Precompiled(<{len(self._charsmap)}-byte charsmap>)"

    @classmethod
    def from_json(
        cls, obj: JsonObject, path: str = "normalizer", *, build: Build[Normalizer] | None = None
    ) -> Precompiled:
        encoded = field(obj, "precompiled_charsmap", str, path)
        try:
            data = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError) as e:
            raise error(f"{path}.precompiled_charsmap", f"not valid base64 ({e})") from None
        return cls(data)


def cp_ranges(chars: Iterable[str]) -> list[tuple[int, int]]:
    ranges: list[list[int]] = []
    for cp in sorted(ord(c) for c in chars):
        if 0xD800 <= cp <= 0xDFFF:
            continue  # never in a valid UTF-8 key; re rejects them in classes on some builds
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    return [(a, b) for a, b in ranges]

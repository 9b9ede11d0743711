"""SentencePiece's own normalizer (``normalizer.cc``), for ``.model`` files.

``SentencePieceNormalizer`` is ``sentencepiece``'s ``Normalizer::Normalize`` on ``str``:
user-defined symbols kept, the precompiled charsmap by longest match, extra whitespace
removed, a dummy ``▁`` prefix, spaces escaped as ``▁``. Its ``tokenizer.json`` form
(``to_json``) exists only where Hugging Face normalizers give the same text; a
precompiled charsmap has none (``formats/spm_pipeline.py`` says why).

Not handled: offsets (``normalize_aligned``) take the byte-by-byte path.

Performance notes
-----------------
A charsmap is a darts-clone trie (44k units and ~224k keys for nfkc). Walking every
key in Python took ~8 s per load, and one ``regex`` alternation of every key scanned
Japanese at ~0.3 kB/s (English at ~0.2 kB/s); both are gone. ``normalizers.Precompiled``
reads the trie (its units, one-character table, and the first characters of longer
keys, a walk one character deep); this module adds the characters that can follow such
a first character (another character deep below each: 124 for nfkc, combining marks,
jamo and the like). Text is scanned for those followers with one ``re`` class; only
where one follows a key-starting character, or a user-defined symbol starts, does
Python walk the trie; everything between is mapped by ``Precompiled``'s
one-character table (one ``re.sub``); ASCII text is one ``bytes.translate`` (nothing
at all for printable text under nfkc or nmt_nfkc, whose ASCII rules are controls). Load of a botchan model: 0.07-0.1 s (was ~8-10 s); normalizing
the Japanese corpus (1.1 MB): 50-120 MB/s, English prose 30-50 MB/s whole, ~100 MB/s
line by line (shared 2-core box, best of 3).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from itertools import accumulate

from ..errors import TokstreamError, unsavable
from .base import CharSet, Normalizer, has_astral
from .precompiled import Precompiled, cp_ranges, utf8_length
from .prepend import Prepend
from .replace import Replace
from .sequence import Sequence

__all__ = ["SentencePieceNormalizer"]

Spans = list[tuple[int, int]]

_SPACE = "\u2581"
_SPACE_RUNS = re.compile(" {2,}")


class _OddKey(Exception):
    """A charsmap key ended inside a character: only the byte-level path is exact."""


class SentencePieceNormalizer(Normalizer):
    """``sentencepiece``'s ``Normalizer::Normalize``, on ``str``.

    At each position: the longest user-defined symbol, else the longest charsmap key
    that prefixes the rest of the text's UTF-8 bytes (its replacement), else the
    character itself. Then, with ``remove_extra_whitespaces``, leading, trailing and
    repeated spaces go; a dummy ``▁`` is prepended (``add_dummy_prefix``) and spaces
    become ``▁`` (``escape_whitespaces``).

    Cost: building reads the charsmap through ``Precompiled`` and walks one character
    below each key-starting character: ~65 ms for nfkc's 44k-unit trie (1,349
    key-starting characters, 124 followers). ``normalize`` on ASCII text is one
    ``bytes.translate`` at most (O(1) for printable text under nfkc and nmt_nfkc);
    on other text one ``re`` search for the followers (a BMP class: ~0.7 GB/s on text
    without them) and one ``re.sub`` over the characters with a one-character rule (a
    callback per run of them), then ``str`` methods for the whitespace: 50-120 MB/s
    on Japanese, 30-50 MB/s on English with some non-ASCII characters. Each place
    where a follower comes after a key-starting character (``'e'`` + U+0301,
    ``'か'`` + U+3099) or a user-defined symbol starts costs one search, one slice and
    a Python trie walk: 3-6 us, so text made of nothing else runs at ~1 MB/s. A
    charsmap with a key that ends inside a character (none known) or a replacement
    holding two spaces in a row sends every text down the exact byte-by-byte path
    (``_pieces``, ``_assemble``), ~1 MB/s.

    >>> SentencePieceNormalizer(add_dummy_prefix=True, remove_extra_whitespaces=True,
    ...                         escape_whitespaces=True).normalize("  Hello   world ")
    '▁Hello▁world'
    """

    def __init__(
        self,
        *,
        precompiled_charsmap: bytes = b"",
        user_defined: Iterable[str] = (),
        add_dummy_prefix: bool,
        remove_extra_whitespaces: bool,
        escape_whitespaces: bool,
        treat_whitespace_as_suffix: bool = False,
        rule_name: str = "",
    ) -> None:
        self.precompiled_charsmap = bytes(precompiled_charsmap)
        # Longest first: at one position the longest symbol wins, as PrefixMatcher.
        self.user_defined = tuple(sorted(set(user_defined), key=lambda u: (-len(u), u)))
        self.add_dummy_prefix = add_dummy_prefix
        self.remove_extra_whitespaces = remove_extra_whitespaces
        self.escape_whitespaces = escape_whitespaces
        self.suffix = treat_whitespace_as_suffix
        self.rule_name = rule_name
        self._ws = _SPACE if escape_whitespaces else " "
        self._space_ok: bool | None = None
        pre = self._pre = Precompiled(self.precompiled_charsmap)
        # Characters that can follow a key-starting character inside a longer key.
        followers: set[str] = set()
        odd = pre.odd
        for node in pre.continued.values():
            chars, odd_here = pre.next_chars(node)
            followers |= chars
            odd = odd or odd_here
        self._starts = frozenset(pre.continued)
        self._followers = frozenset(followers)
        # The whitespace rules act per normalized piece; on the joined text they are
        # "collapse runs of spaces, strip the ends" only when no piece holds two
        # spaces in a row (a piece keeps its inner spaces).
        self._bytewise = odd or b"  " in pre.strings or any("  " in u for u in self.user_defined)
        self._user_re = re.compile("|".join(re.escape(u) for u in self.user_defined)) if self.user_defined else None
        # Where the scan leaves the one-character table: a user-defined symbol or a
        # follower. As in normalizers.base.CharSet, the astral followers (a slow part of a
        # re class) are only searched for in text that has astral characters.
        user = [f"(?P<u>{self._user_re.pattern})"] if self._user_re is not None else []
        follow = CharSet(cp_ranges(followers), runs=False)
        bmp = [f"(?P<c>{follow.bmp.pattern})"] if follow.bmp is not None else []
        self._special = re.compile("|".join(user + bmp)) if user or bmp else None
        self._special_astral = (
            re.compile("|".join([*user, f"(?P<c>{follow.any.pattern})"])) if follow.astral is not None else None
        )
        # ASCII text (str.isascii() is O(1)) skips the scan when its rules are one
        # character to at most one ASCII character (nfkc has none, nmt_nfkc maps the
        # controls): one bytes.translate, or nothing for printable text when only
        # controls have rules. No longer key can match: its followers are not ASCII.
        rules = {c: v for c, v in pre.table.items() if c.isascii()}
        self._ascii: tuple[bytes, bytes] | None = None
        self._ascii_quiet = not any(c.isprintable() for c in rules)
        if (
            not self.user_defined
            and not any(c.isascii() for c in followers)
            and all(v.isascii() and len(v) <= 1 for v in rules.values())
        ):
            table = bytearray(range(256))
            for c, v in rules.items():
                if v:
                    table[ord(c)] = ord(v)
            self._ascii = (bytes(table), bytes(ord(c) for c, v in rules.items() if not v))

    # No tokenizer.json type: compared by identity (its to_json may refuse).
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"SentencePieceNormalizer(rule_name={self.rule_name!r}, add_dummy_prefix={self.add_dummy_prefix})"

    # ------------------------------------------------------------------ fast path

    def _map(self, text: str) -> str:
        """Map each character by its one-character rule (text where no longer key or
        user-defined symbol starts)."""
        pre = self._pre
        return pre.mapped.sub(pre.map_run, text)

    def _walk(self, text: str, pos: int) -> tuple[str, int]:
        """One step of the scan at ``pos``: ``(its output, the next position)``."""
        if self._user_re is not None:
            m = self._user_re.match(text, pos)
            if m is not None:
                return m.group(), m.end()
        pre = self._pre
        end = pos + 8
        while True:
            data = text[pos:end].encode("utf-8", "surrogatepass")
            length, leaf, alive = pre.longest(data)
            if not alive or end >= len(text):
                break
            end = pos + 4 * (end - pos)  # the key may run on: look further
        if not length:
            return text[pos], pos + 1
        try:
            n_chars = len(data[:length].decode("utf-8", "surrogatepass"))
        except UnicodeDecodeError:
            raise _OddKey from None
        return pre.value(leaf), pos + n_chars

    def _apply(self, text: str) -> str:
        """The user-defined symbols and charsmap rules, by longest match left to right."""
        if self._ascii is not None and text.isascii():
            if self._ascii_quiet and text.isprintable():
                return text
            return text.encode("ascii").translate(*self._ascii).decode("ascii")
        special = self._special
        if self._special_astral is not None and has_astral(text):
            special = self._special_astral
        if special is None:
            return self._map(text)
        m = special.search(text)
        if m is None:
            return self._map(text)
        starts, followers = self._starts, self._followers
        out: list[str] = []
        pos = 0
        while m is not None:
            at = m.start()
            # Every character before `at` is a one-character step: nothing longer
            # starts there. A longer key may start just before a follower.
            if at > pos and text[at - 1] in starts and text[at] in followers:
                at -= 1
            if at > pos:
                out.append(self._map(text[pos:at]))
            piece, pos = self._walk(text, at)
            out.append(piece)
            m = special.search(text, pos)
        out.append(self._map(text[pos:]))
        return "".join(out)

    # ---------------------------------------------------------------- exact path

    def _pieces(self, text: str) -> list[str]:
        """``normalizer.cc``'s ``NormalizePrefix`` pieces (see ``_piece_spans``)."""
        return self._piece_spans(text)[0]

    def _piece_spans(self, text: str) -> tuple[list[str], Spans]:
        """``normalizer.cc``'s ``NormalizePrefix`` pieces, over the UTF-8 bytes, and the
        ``(start, end)`` code points of ``text`` each came from.

        The slow, obviously faithful form of ``_apply`` (the tests use it as the
        oracle): a key may end inside a character, whose remaining bytes are then
        invalid UTF-8 and each become U+FFFD, as in SentencePiece (a piece that takes
        part of a character spans that character).
        """
        data = text.encode("utf-8", "surrogatepass")
        users = [u.encode("utf-8") for u in self.user_defined]
        pre = self._pre
        out: list[str] = []
        byte_spans: list[tuple[int, int]] = []
        pos = 0
        while pos < len(data):
            start = pos
            user = next((u for u in users if data.startswith(u, pos)), None)
            length = 0
            if user is None:
                length, leaf, _ = pre.longest(data, pos)
            if user is not None:
                out.append(user.decode("utf-8"))
                pos += len(user)
            elif length:
                out.append(pre.value(leaf))
                pos += length
            else:
                n = utf8_length(data[pos])
                try:
                    out.append(data[pos : pos + n].decode("utf-8", "surrogatepass") if n else "\ufffd")
                    pos += n or 1
                except UnicodeDecodeError:
                    out.append("\ufffd")
                    pos += 1
            byte_spans.append((start, pos))
        # Byte offset -> code point: the characters a piece's bytes touch.
        char_starts = [0, *accumulate(len(c.encode("utf-8", "surrogatepass")) for c in text)]
        spans = [(bisect_right(char_starts, a) - 1, bisect_left(char_starts, b)) for a, b in byte_spans]
        return out, spans

    def _assemble(self, pieces: list[str]) -> str:
        """``Normalize``'s whitespace handling over the pieces, as ``normalizer.cc``."""
        return self._assemble_spans(pieces, [(0, 0)] * len(pieces), 0)[0]

    def _assemble_spans(self, pieces: list[str], spans: Spans, end: int) -> tuple[str, Spans]:
        """``_assemble`` with each output character's span: its piece's span, the dummy
        ``▁`` zero-width where it goes (``end`` for a suffix)."""
        remove = self.remove_extra_whitespaces
        i = 0
        if remove:
            while i < len(pieces) and pieces[i] == " ":
                i += 1
        if i == len(pieces):
            return "", []
        ws = self._ws
        out: list[str] = []
        out_spans: Spans = []
        if not self.suffix and self.add_dummy_prefix:
            out.append(ws)
            out_spans.append((spans[i][0], spans[i][0]))
        prev_space = remove
        for sp, span in zip(pieces[i:], spans[i:]):
            if prev_space:
                sp = sp.lstrip(" ")
            if sp:
                shown = sp.replace(" ", ws) if self.escape_whitespaces else sp
                out.append(shown)
                out_spans += [span] * len(shown)
                prev_space = sp.endswith(" ")
            if not remove:
                prev_space = False
        result = "".join(out)
        if remove:
            result = result.rstrip(ws)
            del out_spans[len(result) :]
        if self.suffix and self.add_dummy_prefix:
            result += ws
            out_spans.append((end, end))
        return result, out_spans

    # -------------------------------------------------------------------- public

    def normalize(self, text: str) -> str:
        """The normalized text (``sentencepiece``'s ``normalize``)."""
        if not text:
            return ""
        if not self._bytewise:
            try:
                mapped = self._apply(text)
            except _OddKey:
                pass
            else:
                return self._finish(mapped, text)
        return self._assemble(self._pieces(text))

    def normalize_aligned(self, text: str) -> tuple[str, Spans]:
        """``(normalize(text), spans)``: for each output character the ``(start, end)``
        code points of ``text`` it came from, by the ``normalizers`` module rules (a
        multi-character key's output spans the whole key, the dummy ``▁`` is zero-width
        where it goes, removed spaces are in no span).

        Cost: the byte-by-byte path, ~1 MB/s; it is for offsets.

        >>> SentencePieceNormalizer(add_dummy_prefix=True, remove_extra_whitespaces=True,
        ...                         escape_whitespaces=True).normalize_aligned(" a  b")
        ('▁a▁b', [(1, 1), (1, 2), (2, 3), (4, 5)])
        """
        if not text:
            return "", []
        pieces, spans = self._piece_spans(text)
        return self._assemble_spans(pieces, spans, len(text))

    def normalize_continued(self, text: str) -> str:
        """``normalize`` for text that continues a cut after a non-space
        (``_stability``): no dummy prefix, and a leading run of spaces is kept as one
        space instead of being stripped. Only for a normalizer with ``space_cut_ok``."""
        if not self.space_cut_ok():
            raise TokstreamError("this SentencePiece normalizer cannot continue a cut")
        return self._finish(self._apply(text), text, first=False) if text else ""

    @property
    def space_local(self) -> bool:
        """Stability declaration (``normalizers.Normalizer.space_local``)."""
        return self.space_cut_ok()

    def keeps(self, char: str) -> bool:
        """Stability declaration: no rule touches the ASCII ``char``."""
        return not self.touches_ascii(char)

    def space_cut_ok(self) -> bool:
        """Whether a space after a printable ASCII character always starts a fresh
        normalization step that maps it to a space (``_stability.space_cut``): no
        charsmap key or user-defined symbol holds a space after its first character,
        the space maps to itself, and the exact byte-by-byte path is not needed."""
        if self._space_ok is None:
            pre = self._pre
            self._space_ok = (
                not self.suffix
                and not self._bytewise
                and self.escape_whitespaces
                and pre.table.get(" ", " ") == " "
                and not pre.space_inside_key()
                and not any(" " in u[1:] for u in self.user_defined)
            )
        return self._space_ok

    def touches_ascii(self, char: str) -> bool:
        """Whether a rule may change the ASCII ``char`` or join it to a neighbour: a
        charsmap rule for it, a key or user-defined symbol holding it after its first
        character (``_pipeline._isolated_whitespace``)."""
        pre = self._pre
        return (
            pre.table.get(char, char) != char
            or pre.space_inside_key(ord(char))
            or any(char in u for u in self.user_defined)
        )

    def _finish(self, s: str, text: str, *, first: bool = True) -> str:
        """The whitespace rules on the joined pieces ``s`` of ``text`` (no piece holds
        two spaces in a row): a space survives only after a non-space. A continued
        text (``first=False``) follows a non-space: no dummy prefix, and its leading
        spaces stay as one."""
        ws = self._ws
        dummy = self.add_dummy_prefix and first
        if self.remove_extra_whitespaces:
            if "  " in s:
                s = _SPACE_RUNS.sub(" ", s)
            s = s.strip(" ") if first else s.rstrip(" ")
            if not s:
                # normalizer.cc returns "" early only when every piece is one space.
                if self.suffix and dummy and any(p != " " for p in self._pieces(text)):
                    return ws
                return ""
        if self.escape_whitespaces:
            s = s.replace(" ", _SPACE)
        if dummy and not self.suffix:
            s = ws + s
        if self.remove_extra_whitespaces:
            s = s.rstrip(ws)
        if dummy and self.suffix:
            s += ws
        return s

    def to_json(self) -> dict[str, object]:
        """Hugging Face normalizers with the same output (module notes, Saving)."""
        if self.precompiled_charsmap:
            name = f" ({self.rule_name!r})" if self.rule_name else ""
            raise unsavable(
                f"the precompiled_charsmap{name}",
                "tokenizers' Precompiled maps whole grapheme clusters by their shortest key, "
                "sentencepiece takes the longest key at each position: 'ﬁ\\u0301' becomes "
                "'fi' there, 'fí' here",
            )
        if self.suffix:
            raise unsavable("treat_whitespace_as_suffix", "tokenizers has no normalizer that appends the dummy '▁'")
        if self.user_defined:
            raise unsavable(
                "user-defined pieces",
                "tokenizers matches added tokens in the raw text, sentencepiece in the normalized text",
            )
        ws = self._ws
        steps: list[Normalizer] = []
        if self.remove_extra_whitespaces:
            # \A and (?![\s\S]) mean the same in Oniguruma and `regex` ($ would not).
            steps += [Replace(" {2,}", " ", is_regex=True), Replace(r"\A ", "", is_regex=True)]
        if self.add_dummy_prefix:
            steps.append(Prepend(ws))
        if self.escape_whitespaces:
            steps.append(Replace(" ", _SPACE))
        if self.remove_extra_whitespaces:
            # normalizer.cc strips every trailing ws, a literal '▁' of the text included.
            steps.append(Replace(f"{ws}+(?![\\s\\S])", "", is_regex=True))
        return Sequence(steps).to_json()

"""A SentencePiece ``.model`` as a ``Tokenizer``, with ids equal to ``sentencepiece``'s.

``formats/sentencepiece.py`` reads the protobuf; this module turns it into a pipeline:
SentencePiece's own normalization (``normalizer.cc``: user-defined symbols kept, the
precompiled charsmap by longest match, extra whitespace removed, a dummy ``▁``
prefix, spaces escaped as ``▁``), then the model (``SentencePieceBPE`` or
``Unigram``) on the normalized text, cut before each run of ``▁`` that follows
another character when no piece holds ``▁`` right after another character (then no
merge or lattice path can cross that point, so the cut is exact and each word is
cached), and SentencePiece's decode (``SentencePieceProcessor::Decode``, 0.2).
Control and unknown pieces are special tokens; encoding with
``disallowed_special=()`` gives ``sentencepiece``'s ids for any text.

Not handled: the WORD and CHAR model types (``NotImplementedError``);
``treat_whitespace_as_suffix`` models are encoded without the word cut. Offsets
(``normalize_aligned``) take the byte-by-byte path.

Saving (``to_json``)
--------------------
``Tokenizer.save`` writes the pipeline as a ``tokenizer.json`` only where the Hugging
Face components give the same ids as ``sentencepiece``: the whitespace options become
``Replace`` (regex) / ``Prepend`` normalizers, the word cut a ``Split`` pre-tokenizer,
BPE a merge list ordered by piece score (ties: see ``_check_ties``), Unigram its scored
pieces; control and unknown pieces are special added tokens. What has no exact
equivalent raises ``TokstreamError`` naming the option, never a file with other ids:

- a precompiled charsmap (``nfkc``, ``nmt_nfkc``, ...): ``tokenizers``' ``Precompiled``
  applies it per grapheme cluster and takes the *shortest* key for a whole cluster
  (``'ﬁ'`` + U+0301 -> ``'fi'``; ``'A'`` + three U+0300 stays as is), SentencePiece
  the longest key at each position (``'fí'``, ``'À'`` + two U+0300); no charsmap and
  no mix of the other normalizers reproduces the longest-match scan. (``Precompiled``
  plus ``Strip`` and ``Replace``, the converters' form, also differs on whitespace:
  ``'a▁'``, ``'\\ta'``.)
- ``treat_whitespace_as_suffix``; user-defined pieces (``tokenizers`` matches added
  tokens in the raw text, SentencePiece in the normalized text, inside the model);
  UNUSED pieces; byte pieces of a Unigram model (its lattice would match the text
  ``'<0x41>'``); BPE pieces holding a character that is not a piece itself
  (SentencePiece merges through it, ``tokenizers`` cannot); tied BPE scores other
  than runs of one character.

The file decodes as ``tokenizers`` decodes (``<unk>`` rather than the ``" ⁇ "``
surface, control tokens shown unless skipped, an invalid byte run as one U+FFFD per
byte, one leading space stripped); ids are what it keeps exact. A control or
unknown piece's literal in the text (``"<s>"``) is encoded as that token there, as
``encode(..., allowed_special="all")`` does here; the fingerprint of the file loaded
back equals the original's.

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

import os
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from itertools import accumulate, pairwise
from typing import TYPE_CHECKING, Any

from .._pipeline import AddedToken, Pipeline
from ..errors import TokenizerFileError, TokstreamError
from ..models.bpe import SentencePieceBPE
from ..models.unigram import Unigram
from ..normalizers import Precompiled, _Chars, _cp_ranges, _has_astral

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["SentencePieceDecoder", "SentencePieceNormalizer", "load_sentencepiece"]

Spans = list[tuple[int, int]]

_SPACE = "\u2581"
_SPACE_RUNS = re.compile(" {2,}")

# sentencepiece_model.proto's SentencePiece.Type.
_NORMAL, _UNKNOWN, _CONTROL, _USER_DEFINED, _BYTE, _UNUSED = 1, 2, 3, 4, 6, 5


class _OddKey(Exception):
    """A charsmap key ended inside a character: only the byte-level path is exact."""


def _unrepresentable(option: str, why: str) -> TokstreamError:
    return TokstreamError(
        f"cannot write this SentencePiece model as tokenizer.json: {option} has no exact "
        f"tokenizers equivalent ({why}), so tokenizers would give other ids"
    )


class SentencePieceNormalizer:
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
        odd = pre._odd
        for node in pre._continued.values():
            chars, odd_here = pre._next_chars(node)
            followers |= chars
            odd = odd or odd_here
        self._starts = frozenset(pre._continued)
        self._followers = frozenset(followers)
        # The whitespace rules act per normalized piece; on the joined text they are
        # "collapse runs of spaces, strip the ends" only when no piece holds two
        # spaces in a row (a piece keeps its inner spaces).
        self._bytewise = odd or b"  " in pre._strings or any("  " in u for u in self.user_defined)
        self._user_re = (
            re.compile("|".join(re.escape(u) for u in self.user_defined)) if self.user_defined else None
        )
        # Where the scan leaves the one-character table: a user-defined symbol or a
        # follower. As in normalizers._Chars, the astral followers (a slow part of a
        # re class) are only searched for in text that has astral characters.
        user = [f"(?P<u>{self._user_re.pattern})"] if self._user_re is not None else []
        follow = _Chars(_cp_ranges(followers), runs=False)
        bmp = [f"(?P<c>{follow.bmp.pattern})"] if follow.bmp is not None else []
        self._special = re.compile("|".join(user + bmp)) if user or bmp else None
        self._special_astral = (
            re.compile("|".join([*user, f"(?P<c>{follow.any.pattern})"])) if follow.astral is not None else None
        )
        # ASCII text (str.isascii() is O(1)) skips the scan when its rules are one
        # character to at most one ASCII character (nfkc has none, nmt_nfkc maps the
        # controls): one bytes.translate, or nothing for printable text when only
        # controls have rules. No longer key can match: its followers are not ASCII.
        rules = {c: v for c, v in pre._table.items() if c.isascii()}
        self._ascii: tuple[bytes, bytes] | None = None
        self._ascii_quiet = not any(c.isprintable() for c in rules)
        if not self.user_defined and not any(c.isascii() for c in followers) and all(
            v.isascii() and len(v) <= 1 for v in rules.values()
        ):
            table = bytearray(range(256))
            for c, v in rules.items():
                if v:
                    table[ord(c)] = ord(v)
            self._ascii = (bytes(table), bytes(ord(c) for c, v in rules.items() if not v))

    # ------------------------------------------------------------------ fast path

    def _map(self, text: str) -> str:
        """Map each character by its one-character rule (text where no longer key or
        user-defined symbol starts)."""
        pre = self._pre
        return pre._mapped.sub(pre._map_run, text)

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
            length, leaf, alive = pre._longest(data)
            if not alive or end >= len(text):
                break
            end = pos + 4 * (end - pos)  # the key may run on: look further
        if not length:
            return text[pos], pos + 1
        try:
            n_chars = len(data[:length].decode("utf-8", "surrogatepass"))
        except UnicodeDecodeError:
            raise _OddKey from None
        return pre._value(leaf), pos + n_chars

    def _apply(self, text: str) -> str:
        """The user-defined symbols and charsmap rules, by longest match left to right."""
        if self._ascii is not None and text.isascii():
            if self._ascii_quiet and text.isprintable():
                return text
            return text.encode("ascii").translate(*self._ascii).decode("ascii")
        special = self._special
        if self._special_astral is not None and _has_astral(text):
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
        from ..normalizers import _utf8_length

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
                length, leaf, _ = pre._longest(data, pos)
            if user is not None:
                out.append(user.decode("utf-8"))
                pos += len(user)
            elif length:
                out.append(pre._value(leaf))
                pos += length
            else:
                n = _utf8_length(data[pos])
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
                and pre._table.get(" ", " ") == " "
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
            pre._table.get(char, char) != char
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
        from .. import normalizers as nz

        if self.precompiled_charsmap:
            name = f" ({self.rule_name!r})" if self.rule_name else ""
            raise _unrepresentable(
                f"the precompiled_charsmap{name}",
                "tokenizers' Precompiled maps whole grapheme clusters by their shortest key, "
                "sentencepiece takes the longest key at each position: 'ﬁ\\u0301' becomes "
                "'fi' there, 'fí' here",
            )
        if self.suffix:
            raise _unrepresentable(
                "treat_whitespace_as_suffix", "tokenizers has no normalizer that appends the dummy '▁'"
            )
        if self.user_defined:
            raise _unrepresentable(
                "user-defined pieces",
                "tokenizers matches added tokens in the raw text, sentencepiece in the normalized text",
            )
        ws = self._ws
        steps: list[nz.Normalizer] = []
        if self.remove_extra_whitespaces:
            # \A and (?![\s\S]) mean the same in Oniguruma and `regex` ($ would not).
            steps += [nz.Replace(" {2,}", " ", is_regex=True), nz.Replace(r"\A ", "", is_regex=True)]
        if self.add_dummy_prefix:
            steps.append(nz.Prepend(ws))
        if self.escape_whitespaces:
            steps.append(nz.Replace(" ", _SPACE))
        if self.remove_extra_whitespaces:
            # normalizer.cc strips every trailing ws, a literal '▁' of the text included.
            steps.append(nz.Replace(f"{ws}+(?![\\s\\S])", "", is_regex=True))
        return nz.Sequence(steps).to_json()


class _SpaceRunCut:
    """Cut normalized text before each run of ``▁`` that follows another character.

    Exact when ``▁`` is a piece and no piece holds ``▁`` right after another
    character: then no BPE merge and no lattice path crosses such a point, and no run
    of unknowns either, so the model gives the same ids on the parts as on the whole
    text, and each part (a word) is cached.
    """

    #: ``_pipeline`` may cut streamed text before a run of spaces (``_stability``).
    cuts_before_space_runs = True

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        out: list[str] = []
        for p in pieces:
            out += _RUNS.findall(p)
        return out

    pre_tokenize_continued = pre_tokenize  # nothing is prepended

    def to_json(self) -> dict[str, object]:
        from .. import pre_tokenizers as pt

        return pt.Split(_RUNS.pattern, "Isolated", is_regex=True).to_json()


# A literal "▁" (not \u2581), which Oniguruma reads the same.
_RUNS = re.compile(f"{_SPACE}*[^{_SPACE}]+|{_SPACE}+")


def _cuttable(pieces: list[tuple[str, float, int]]) -> bool:
    """Whether ``_SpaceRunCut`` is exact for these pieces (see there)."""
    matched = [t for t, _, k in pieces if k in (_NORMAL, _USER_DEFINED, _UNUSED)]
    joins = re.compile(f"[^{_SPACE}]{_SPACE}")
    return _SPACE in matched and not any(joins.search(t) for t in matched)


class SentencePieceDecoder:
    """``sentencepiece``'s decode (``SentencePieceProcessor::Decode``, 0.2).

    Control pieces vanish, the unknown piece shows ``unk_surface``, ``▁`` becomes a
    space. A run of byte pieces becomes its bytes read as UTF-8 one character at a
    time, each invalid byte one U+FFFD (not Python's one per maximal invalid part).
    While nothing has been output, a piece loses one leading ``▁`` (the dummy prefix,
    with ``add_dummy_prefix`` or ``remove_extra_whitespaces``); after a piece lost one,
    the next keeps its ``▁`` unless a control piece came between, or unless
    ``remove_extra_whitespaces``, which strips every leading ``▁`` piece.

    >>> d = SentencePieceDecoder(control={"<s>"}, unk="<unk>", unk_surface=" ⁇ ",
    ...     byte_pieces={"<0xE3>", "<0x81>"}, add_dummy_prefix=True, remove_extra_whitespaces=False)
    >>> "".join(d.decode_chain(["<s>", "▁", "▁a", "<0xE3>", "<0x81>", "<unk>"]))
    ' a\ufffd\ufffd ⁇ '
    """

    def __init__(
        self,
        *,
        control: set[str],
        unk: str,
        unk_surface: str,
        byte_pieces: set[str],
        add_dummy_prefix: bool,
        remove_extra_whitespaces: bool,
    ) -> None:
        self.control, self.unk, self.unk_surface = control, unk, unk_surface
        self.byte_pieces = byte_pieces
        self.add_dummy_prefix = add_dummy_prefix
        self.remove_extra_whitespaces = remove_extra_whitespaces

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out: list[str] = []
        pending = bytearray()
        strip = self.add_dummy_prefix or self.remove_extra_whitespaces
        is_bos_ws = True  # may the next piece lose its leading "▁"?
        consumed = False  # did the last piece lose one?
        empty = True  # nothing output yet
        for t in tokens:
            if t in self.byte_pieces:
                pending.append(int(t[3:5], 16))
                continue
            if pending:
                out.append(_decode_bytes(bytes(pending)))
                pending.clear()
                empty = False
            if consumed or not empty:
                is_bos_ws = False
            consumed = False
            if t in self.control:
                continue
            if t == self.unk:
                piece = self.unk_surface
            else:
                if is_bos_ws and strip and t.startswith(_SPACE):
                    t = t[1:]
                    consumed = not self.remove_extra_whitespaces
                piece = t.replace(_SPACE, " ")
            if piece:
                out.append(piece)
                empty = False
        if pending:
            out.append(_decode_bytes(bytes(pending)))
        return out

    def to_json(self) -> dict[str, object]:
        """The usual ``tokenizers`` form (module notes, Saving: decoding differs)."""
        from .. import decoders as dec

        steps: list[dec.Decoder] = [dec.Replace(_SPACE, " ")]
        if self.byte_pieces:
            steps.append(dec.ByteFallback())
        steps.append(dec.Fuse())
        if self.add_dummy_prefix or self.remove_extra_whitespaces:
            steps.append(dec.Strip(content=" ", start=1, stop=0))
        return dec.Sequence(steps).to_json()


def _decode_bytes(data: bytes) -> str:
    """UTF-8 as sentencepiece reads byte pieces: each invalid byte is one U+FFFD."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    out: list[str] = []
    i = 0
    while i < len(data):
        lead = data[i]
        n = 1 if lead < 0x80 else 2 if lead >> 5 == 6 else 3 if lead >> 4 == 14 else 4 if lead >> 3 == 30 else 0
        if n:
            try:
                out.append(data[i : i + n].decode("utf-8"))
                i += n
                continue
            except UnicodeDecodeError:
                pass
        out.append("\ufffd")
        i += 1
    return "".join(out)


class _SentencePieceBPE(SentencePieceBPE):
    """``SentencePieceBPE`` whose ``tokenizer.json`` form is a ``BPE`` with merges."""

    def get_vocab(self) -> dict[str, int]:
        return _vocab(self.pieces)

    def to_json(self) -> dict[str, object]:
        """HF ``BPE``: every split of every normal piece into two normal pieces, by the
        piece's score (highest first), so the lowest rank is SentencePiece's best pair."""
        pieces = self.pieces
        _refuse_unexpressible(pieces)
        normal = {t: (score, i) for i, (t, score, kind) in enumerate(pieces) if kind == _NORMAL}
        for t in normal:
            for c in t:
                if c not in normal:
                    raise _unrepresentable(
                        f"the BPE piece {t!r}, whose character {c!r} is not a piece",
                        "sentencepiece merges through unknown characters, tokenizers cannot",
                    )
        # By score, then the longer left part first: within a run of tied pieces
        # (Llama's "▁▁".."▁"*16) that reproduces sentencepiece's leftmost-first rule,
        # which _check_ties verifies.
        ranked: list[tuple[float, int, int, str, str]] = []
        for t, (score, i) in normal.items():
            for k in range(1, len(t)):
                if t[:k] in normal and t[k:] in normal:
                    ranked.append((-score, -k, i, t[:k], t[k:]))
        ranked.sort()
        merges = [(a, b) for _, _, _, a, b in ranked]
        _check_ties(normal, merges)
        return {
            "type": "BPE",
            "dropout": None,
            "unk_token": pieces[self.unk_id][0],
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": True,
            "byte_fallback": self.byte_fallback,
            "ignore_merges": False,
            "vocab": _vocab(pieces),
            "merges": [[a, b] for a, b in merges],
        }


def _check_ties(normal: dict[str, tuple[float, int]], merges: list[tuple[str, str]]) -> None:
    """Refuse tied BPE scores unless ``merges`` provably merges them as sentencepiece.

    sentencepiece merges the leftmost of equally scored pairs, ``tokenizers`` the pair
    listed first. Accepted: a tied group made of runs ``c * k`` of one character ``c``
    (a piece itself), with no other piece holding ``cc``. Such runs then merge apart
    from everything else, so simulating both rules on runs of every length up to four
    times the longest (beyond that the first symbols are final and the rest repeats)
    proves the order.
    """
    groups: dict[float, list[str]] = {}
    for t, (score, _) in normal.items():
        if len(t) > 1:
            groups.setdefault(score, []).append(t)
    rank = {pair: r for r, pair in enumerate(merges)}
    for group in groups.values():
        if len(group) < 2:
            continue
        c = group[0][0]
        members = set(group)
        lengths = {len(t) for t in group} | {1}
        if (
            c not in normal
            or any(set(t) != {c} for t in group)
            or any(c + c in t and t not in members for t in normal)
            or any(_spm_run(n, lengths) != _hf_run(n, c, rank) for n in range(2, 4 * max(lengths) + 1))
        ):
            shown = ", ".join(repr(t) for t in sorted(group)[:3])
            raise _unrepresentable(
                f"BPE pieces with equal scores ({shown}, ...)",
                "sentencepiece merges the leftmost of tied pairs, tokenizers by list order",
            )


def _spm_run(n: int, lengths: set[int]) -> list[int]:
    """sentencepiece on ``n`` copies of one character whose runs all tie: leftmost first."""
    symbols = [1] * n
    while True:
        at = next((i for i in range(len(symbols) - 1) if symbols[i] + symbols[i + 1] in lengths), None)
        if at is None:
            return symbols
        symbols[at : at + 2] = [symbols[at] + symbols[at + 1]]


def _hf_run(n: int, c: str, rank: dict[tuple[str, str], int]) -> list[int]:
    """``tokenizers``' BPE on the same run: the lowest-ranked pair, leftmost on ties."""
    symbols = [1] * n
    while True:
        found = [(rank[c * a, c * b], i) for i, (a, b) in enumerate(pairwise(symbols)) if (c * a, c * b) in rank]
        if not found:
            return symbols
        _, at = min(found)
        symbols[at : at + 2] = [symbols[at] + symbols[at + 1]]


class _SentencePieceUnigram(Unigram):
    """``Unigram`` over the lattice SentencePiece builds: control, unknown, byte and
    unused pieces never match text (their spelling is empty here)."""

    __slots__ = ("_spm_pieces",)

    def __init__(self, pieces: list[tuple[str, float, int]], *, unk_id: int, byte_fallback: bool) -> None:
        hidden = (_UNKNOWN, _CONTROL, _BYTE, _UNUSED)
        lattice = [("" if kind in hidden else t, score) for t, score, kind in pieces]
        super().__init__(lattice, unk_id=unk_id, byte_fallback=byte_fallback)
        self._spm_pieces = pieces

    def to_json(self) -> dict[str, object]:
        """HF ``Unigram``: the pieces with their real spellings (control and unknown
        pieces are special added tokens, so their text never reaches the model)."""
        _refuse_unexpressible(self._spm_pieces)
        if any(kind == _BYTE for _, _, kind in self._spm_pieces):
            raise _unrepresentable(
                "byte pieces in a Unigram model",
                "tokenizers' Unigram matches '<0x41>' in the text as that piece, sentencepiece never",
            )
        obj = super().to_json()
        obj["vocab"] = [[t, score] for t, score, _ in self._spm_pieces]
        return obj


def _refuse_unexpressible(pieces: list[tuple[str, float, int]]) -> None:
    kinds = {kind for _, _, kind in pieces}
    if _USER_DEFINED in kinds:
        raise _unrepresentable(
            "user-defined pieces",
            "tokenizers matches added tokens in the raw text, sentencepiece in the normalized text",
        )
    if _UNUSED in kinds:
        raise _unrepresentable("UNUSED pieces", "tokenizers has no piece that is kept out of encoding")


def _vocab(pieces: list[tuple[str, float, int]]) -> dict[str, int]:
    """Spelling -> id, the first id of a repeated spelling winning."""
    return {t: i for i, (t, _, _) in reversed(list(enumerate(pieces)))}


def load_sentencepiece(path: str | os.PathLike[str]) -> Tokenizer:
    """Build a ``Tokenizer`` from a SentencePiece ``.model`` file."""
    source = os.fspath(path)
    try:
        with open(source, "rb") as f:
            data = f.read()
    except OSError as e:
        raise TokenizerFileError(f"cannot read sentencepiece model {source!r}: {e.strerror}") from e
    return sentencepiece_from_bytes(data, name=os.path.basename(source))


def sentencepiece_from_bytes(data: bytes, *, name: str) -> Tokenizer:
    """Build a ``Tokenizer`` from the bytes of a ``.model`` file (``name`` for errors).

    The tokenizer keeps the bytes: they are its pickled form, and its fingerprint
    when it has no exact ``tokenizer.json`` form (a precompiled charsmap).
    """
    from ..tokenizer import Tokenizer
    from .sentencepiece import parse_sentencepiece

    m = parse_sentencepiece(data, name)
    pieces = [(p.piece, float(p.score), int(p.type)) for p in m.pieces]
    model_type = int(m.model_type)
    model: Any
    if model_type == 2:
        model = _SentencePieceBPE(pieces, unk_id=m.unk_id, byte_fallback=m.byte_fallback)
    elif model_type == 1:
        model = _SentencePieceUnigram(pieces, unk_id=m.unk_id, byte_fallback=m.byte_fallback)
    else:
        raise NotImplementedError(f"{name}: SentencePiece model type {model_type} is not supported")
    normalizer = SentencePieceNormalizer(
        precompiled_charsmap=m.precompiled_charsmap,
        user_defined=[t for t, _, k in pieces if k == _USER_DEFINED],
        add_dummy_prefix=m.add_dummy_prefix,
        remove_extra_whitespaces=m.remove_extra_whitespaces,
        escape_whitespaces=m.escape_whitespaces,
        treat_whitespace_as_suffix=m.treat_whitespace_as_suffix,
        rule_name=m.normalizer_name,
    )
    pre = _SpaceRunCut() if _cuttable(pieces) and not m.treat_whitespace_as_suffix else None
    # Control pieces (<s>, </s>) and the unknown piece are specials, as in the
    # tokenizer.json files converted from .model files; byte pieces are ordinary.
    added = [
        AddedToken(id=i, content=t, special=True) for i, (t, _, k) in enumerate(pieces) if k in (_UNKNOWN, _CONTROL)
    ]
    decoder = SentencePieceDecoder(
        control={t for t, _, k in pieces if k == _CONTROL},
        unk=pieces[m.unk_id][0],
        unk_surface=m.unk_surface,
        byte_pieces={t for t, _, k in pieces if k == _BYTE},
        add_dummy_prefix=m.add_dummy_prefix,
        remove_extra_whitespaces=m.remove_extra_whitespaces,
    )
    pipeline = Pipeline(
        model=model, vocab=_vocab(pieces), normalizer=normalizer, pre_tokenizer=pre, decoder=decoder, added_tokens=added
    )
    pipeline.id_to_token = {i: t for i, (t, _, _) in enumerate(pieces)}
    tok = Tokenizer._from_pipeline(pipeline, name=name.removesuffix(".model"))
    tok._source = ("sentencepiece", data)
    return tok

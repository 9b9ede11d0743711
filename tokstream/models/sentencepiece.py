"""SentencePiece's models: score-based BPE (``bpe_model.cc``) and its Unigram lattice.

``PieceType`` is SentencePiece's piece kind, defined once here (the ``.model`` reader,
``formats/sentencepiece.py``, and the pipeline builder, ``formats/spm_pipeline.py``, use
it). ``SentencePieceBPE`` merges by piece score; ``SentencePieceUnigram`` is
``Unigram`` over the lattice SentencePiece builds. Both know their ``tokenizer.json``
form, and refuse to write one where ``tokenizers`` would give other ids
(``errors.unsavable``).

Not here: the WORD and CHAR model types.
"""

from __future__ import annotations

import enum
import heapq
from collections.abc import Mapping
from itertools import pairwise

import regex

from ..errors import unsavable
from ..json_fields import Build, JsonObject
from .base import Model
from .unigram import Unigram

__all__ = ["PieceType", "SentencePieceBPE", "SentencePieceUnigram"]


class PieceType(enum.IntEnum):
    """``ModelProto.SentencePiece.Type``: what a piece is for."""

    NORMAL = 1
    UNKNOWN = 2
    CONTROL = 3
    USER_DEFINED = 4
    UNUSED = 5
    BYTE = 6


class SentencePieceBPE(Model):
    """SentencePiece's BPE (``bpe_model.cc``): merges by piece *score*, not by a list.

    The piece starts as its characters, except that user-defined pieces are matched
    whole (longest first) and never merged. Repeatedly, the adjacent pair whose
    concatenation is a piece with the highest score is merged, the leftmost on ties.
    Pieces of type UNUSED may be merged through and are then split back into the
    pieces they were made of. A symbol that is not a piece is unknown: with
    ``byte_fallback`` it becomes its ``<0xXX>`` byte pieces, else ``unk_id``, and a
    run of unknowns is one ``unk_id``, as SentencePiece reports it.

    Cost: O(n log n) per piece with a heap; pieces are cached by the tokenizer.
    """

    def __init__(
        self,
        pieces: list[tuple[str, float, int]],
        *,
        unk_id: int,
        byte_fallback: bool,
    ) -> None:
        # pieces: (text, score, type) by id, types as PieceType.
        self.pieces = pieces
        self.unk_id = unk_id
        self._byte_fallback = byte_fallback
        normal, unused, user = PieceType.NORMAL, PieceType.UNUSED, PieceType.USER_DEFINED
        self._score: dict[str, float] = {}
        self._id: dict[str, int] = {}
        self._unused: set[str] = set()
        self._user: list[str] = []
        for i, (text, score, kind) in enumerate(pieces):
            if kind in (normal, user, unused):
                self._score.setdefault(text, score)
                self._id.setdefault(text, i)
                if kind == unused:
                    self._unused.add(text)
                if kind == user:
                    self._user.append(text)
        byte_pieces = {t: i for i, (t, _, kind) in enumerate(pieces) if kind == PieceType.BYTE}
        self._byte_ids = [byte_pieces.get(f"<0x{b:02X}>") for b in range(256)]
        self._ids_by_spelling = _vocab(pieces)
        self._user_re = (
            regex.compile("|".join(regex.escape(u) for u in sorted(self._user, key=len, reverse=True)))
            if self._user
            else None
        )

    def _symbols(self, piece: str) -> list[tuple[str, bool]]:
        if self._user_re is None:
            return [(c, False) for c in piece]
        out: list[tuple[str, bool]] = []
        pos = 0
        for m in self._user_re.finditer(piece):
            out += [(c, False) for c in piece[pos : m.start()]]
            out.append((m.group(), True))
            pos = m.end()
        out += [(c, False) for c in piece[pos:]]
        return out

    def encode_piece(self, piece: str) -> tuple[int, ...]:
        syms = self._symbols(piece)
        n = len(syms)
        text = [s for s, _ in syms]
        frozen = [f for _, f in syms]
        nxt = list(range(1, n + 1))
        prv = list(range(-1, n - 1))
        score = self._score
        rev: dict[str, tuple[str, str]] = {}
        heap: list[tuple[float, int, int, int]] = []

        def add(left: int, right: int) -> None:
            if left < 0 or right >= n or frozen[left] or frozen[right]:
                return
            merged = text[left] + text[right]
            sc = score.get(merged)
            if sc is None:
                return
            heapq.heappush(heap, (-sc, left, right, len(merged)))
            if merged in self._unused:
                rev[merged] = (text[left], text[right])

        for i in range(1, n):
            add(i - 1, i)
        while heap:
            _, left, right, size = heapq.heappop(heap)
            if not text[left] or not text[right] or len(text[left]) + len(text[right]) != size:
                continue
            text[left] += text[right]
            nxt[left] = nxt[right]
            if nxt[right] < n:
                prv[nxt[right]] = left
            text[right] = ""
            add(prv[left], left)
            add(left, nxt[left])
        out: list[int] = []
        i = 0
        while i < n:
            self._emit(text[i], rev, out)
            i = nxt[i]
        unk = self.unk_id
        if unk in out:
            # SentencePiece merges a run of unknown pieces into one.
            out = [t for k, t in enumerate(out) if t != unk or k == 0 or out[k - 1] != unk]
        return tuple(out)

    def _emit(self, w: str, rev: dict[str, tuple[str, str]], out: list[int]) -> None:
        if w in self._unused and w in rev:
            a, b = rev[w]
            self._emit(a, rev, out)
            self._emit(b, rev, out)
            return
        tid = self._id.get(w)
        if tid is not None:
            out.append(tid)
            return
        if self._byte_fallback:
            ids = [self._byte_ids[b] for b in w.encode("utf-8")]
            if None not in ids:
                out.extend(ids)  # type: ignore[arg-type]
                return
        out.append(self.unk_id)

    def token_to_id(self, spelling: str) -> int | None:
        return self._ids_by_spelling.get(spelling)

    def spellings(self) -> Mapping[int, str]:
        return {i: t for i, (t, _, _) in enumerate(self.pieces)}

    @property
    def vocab_size(self) -> int:
        return len(self.pieces)

    @property
    def unknown_id(self) -> int | None:
        return self.unk_id

    @property
    def byte_tokens(self) -> bool:
        return self._byte_fallback

    def to_json(self) -> dict[str, object]:
        """HF ``BPE``: every split of every normal piece into two normal pieces, by the
        piece's score (highest first), so the lowest rank is SentencePiece's best pair."""
        pieces = self.pieces
        _refuse_unexpressible(pieces)
        normal = {t: (score, i) for i, (t, score, kind) in enumerate(pieces) if kind == PieceType.NORMAL}
        for t in normal:
            for c in t:
                if c not in normal:
                    raise unsavable(
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
            "byte_fallback": self._byte_fallback,
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
            raise unsavable(
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


class SentencePieceUnigram(Unigram):
    """``Unigram`` over the lattice SentencePiece builds: control, unknown, byte and
    unused pieces never match text (their spelling is empty here)."""

    __slots__ = ("_ids_by_spelling", "_spm_pieces")

    def __init__(self, pieces: list[tuple[str, float, int]], *, unk_id: int, byte_fallback: bool) -> None:
        hidden = (PieceType.UNKNOWN, PieceType.CONTROL, PieceType.BYTE, PieceType.UNUSED)
        lattice = [("" if kind in hidden else t, score) for t, score, kind in pieces]
        super().__init__(lattice, unk_id=unk_id, byte_fallback=byte_fallback)
        self._spm_pieces = pieces
        self._ids_by_spelling = _vocab(pieces)

    def token_to_id(self, spelling: str) -> int | None:
        return self._ids_by_spelling.get(spelling)

    def spellings(self) -> Mapping[int, str]:
        """The pieces' real spellings (``<s>``, ``<0x41>``), which the lattice hides."""
        return {i: t for i, (t, _, _) in enumerate(self._spm_pieces)}

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (_unigram, (self._spm_pieces, self.unk_id, self.byte_fallback))

    @classmethod
    def from_json(cls, obj: JsonObject, path: str = "model", *, build: Build[Model] | None = None) -> Unigram:
        """Not ``Unigram.from_json``: the JSON form is a plain ``Unigram`` (piece types are
        not written), which ``Unigram.from_json`` reads."""
        raise NotImplementedError(
            "SentencePieceUnigram has no tokenizer.json type of its own: read what its "
            "to_json writes with Unigram.from_json (or model_from_json)"
        )

    def to_json(self) -> dict[str, object]:
        """HF ``Unigram``: the pieces with their real spellings (control and unknown
        pieces are special added tokens, so their text never reaches the model)."""
        _refuse_unexpressible(self._spm_pieces)
        if any(kind == PieceType.BYTE for _, _, kind in self._spm_pieces):
            raise unsavable(
                "byte pieces in a Unigram model",
                "tokenizers' Unigram matches '<0x41>' in the text as that piece, sentencepiece never",
            )
        obj = super().to_json()
        obj["vocab"] = [[t, score] for t, score, _ in self._spm_pieces]
        return obj


def _unigram(pieces: list[tuple[str, float, int]], unk_id: int, byte_fallback: bool) -> SentencePieceUnigram:
    return SentencePieceUnigram(pieces, unk_id=unk_id, byte_fallback=byte_fallback)


def _refuse_unexpressible(pieces: list[tuple[str, float, int]]) -> None:
    kinds = {kind for _, _, kind in pieces}
    if PieceType.USER_DEFINED in kinds:
        raise unsavable(
            "user-defined pieces",
            "tokenizers matches added tokens in the raw text, sentencepiece in the normalized text",
        )
    if PieceType.UNUSED in kinds:
        raise unsavable("UNUSED pieces", "tokenizers has no piece that is kept out of encoding")


def _vocab(pieces: list[tuple[str, float, int]]) -> dict[str, int]:
    """Spelling -> id, the first id of a repeated spelling winning."""
    return {t: i for i, (t, _, _) in reversed(list(enumerate(pieces)))}

"""Unigram language-model segmentation (SentencePiece's), with ``tokenizers``' semantics.

Every vocabulary piece that occurs in a pre-token is a lattice edge weighted by the
piece's score (a log probability); ``encode_piece`` returns the ids of the best-scoring
path (Viterbi), ``sample`` draws a path with probability proportional to
``exp(alpha * score)`` (subword regularization, forward-filtering backward-sampling),
and ``nbest`` lists the n best paths. Matched exactly, id for id and offset for
offset, against the Rust ``tokenizers`` crate (``models/unigram``), which ports
SentencePiece's ``EncodeOptimized``. SentencePiece itself sums float32 scores, so it
may break a near-tie the other way (1 of 83,580 corpus words in the tests):

- A character that is not itself a piece gets an extra edge with the unknown id and
  score ``min(scores) - 10`` (``K_UNK_PENALTY``). With ``unk_id=None`` there is no such
  edge and encoding raises ``TokstreamError`` exactly where ``tokenizers`` raises
  ``MissingUnkId``: when that edge would have improved the best path to its end.
- Ties between equal-score paths: positions are processed left to right and an end
  position keeps the *first* best candidate (a later one must be strictly greater),
  so the path whose last piece starts earliest wins, recursively.
- Consecutive nodes whose id is ``unk_id`` are fused into one span (``fuse_unk``, always
  on for Unigram), including a literal match of the unk piece's own text. The fused
  text is then looked up again: a vocabulary piece gives its id; otherwise, with
  ``byte_fallback``, its UTF-8 bytes become ``<0xXX>`` pieces if *all* of them exist;
  otherwise it is one ``unk_id``. Every byte token spans the whole fused text.
- A piece listed twice takes the *last* id and that id's score (a hash map built in
  vocabulary order); ``min(scores)`` still counts every entry, as do empty pieces,
  which never match.

Sampling follows SentencePiece's ``Lattice::Sample`` (``alpha`` scales the scores
before the forward pass). ``tokenizers``' ``Lattice::sample`` scales the forward
scores *again* at every step (``theta * (score + alpha[prev])``), so its distribution
is off for ``alpha != 1``; that is not copied. ``nbest`` is exact (k-best dynamic
programming) where both references use A* with an agenda that is pruned when large.

Lone surrogates (possible in a Python ``str``, not in a Rust one) are ordinary
characters; for byte fallback they are encoded with ``surrogatepass``. Scores must be
finite and at most 1e300 in magnitude (``tokenizers``' Python constructor accepts nan
or inf; no ``tokenizer.json`` can hold them).

Not handled here: normalization and the ``Metaspace`` ``▁`` (other stages), caching of
pieces (``tokenizer``), decoding, training (``train/unigram.py``), and
``tokenizers``' ``nbest_size`` sampling among the n best (sample from ``nbest`` for it).

Performance notes
-----------------
- The lattice is never built for ``encode_piece``: Viterbi runs while the pieces
  starting at each position are found, keeping one (score, start, id) per position in
  three flat lists, as SentencePiece's ``EncodeOptimized``.
- Pieces starting at a position are found by walking forward through a prefix table
  (every piece maps to its id, every proper prefix of a piece to -1) until the text
  stops being a prefix of any piece. A ``marisa_trie.Trie.iter_prefixes_with_ids``
  call per position was tried first: 1.7x slower on botchan words (the C call and
  the tuples it yields cost more than the 2-4 dict lookups it saves). Iterating the
  characters (``get(char)`` for the first lookup of a position, no slice) took
  another 12% off.
- The best-score array starts at ``-inf`` and a candidate must be strictly greater,
  which equals the reference's "unset or greater" test because scores are finite and
  at most 1e300 in magnitude (checked at construction), so no path sum over fewer
  than 10^8 pieces can overflow to ``-inf``.
- The unknown-token fusing and byte fallback run only when the path holds ``unk_id``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from heapq import nlargest
from operator import itemgetter
from typing import TYPE_CHECKING

from ..errors import TokstreamError
from ..json_fields import Build, JsonObject, error, expect_object, field, kind
from ._vocab import ABSENT, prefix_table
from .base import Model

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Unigram"]

#: SentencePiece's and tokenizers' ``kUnkPenalty``: unknown score = min score - 10.
K_UNK_PENALTY = 10.0
#: Largest score magnitude accepted: keeps every path sum finite (see module notes).
_MAX_ABS_SCORE = 1e300

_NEG_INF = float("-inf")
_NO_UNK = -3  # stands for unk_id=None in id comparisons (never equals a real id)

_first = itemgetter(0)

# One lattice edge ending at some position: (start, id, score).
_Edge = tuple[int, int, float]


class Unigram(Model):
    """Encode one pre-token into ids with a unigram language model.

    ``vocab`` lists ``(piece, score)`` pairs; a piece's id is its index. ``unk_id`` is
    the id of the unknown piece, or ``None`` (then an unknown character raises
    ``TokstreamError``). ``byte_fallback`` spells unknown text as ``<0xXX>`` byte
    pieces when the vocabulary has them.

    >>> uni = Unigram([("<unk>", 0.0), ("▁he", -2.0), ("llo", -2.5), ("▁hello", -5.0),
    ...                ("l", -3.0), ("o", -3.0)], unk_id=0)
    >>> uni.encode_piece("▁hello"), uni.encode_piece("▁hellxo")
    ((1, 2), (1, 4, 4, 0, 5))
    >>> uni.encode_piece_spans("▁hellxo")
    [(1, 0, 3), (4, 3, 4), (4, 4, 5), (0, 5, 6), (5, 6, 7)]

    Cost: building is O(B) time and memory for B the total length of the pieces (a
    dict of every piece and every proper prefix of one: 2,595 entries for botchan's
    1,000 pieces). ``encode_piece`` on an n-character piece is O(n * d) dict lookups,
    d the depth to which the text at a position stays a prefix of some piece (the
    longest piece at worst, 13 for botchan; 2-4 on English), plus O(n) list work; a
    run of 10^5 copies of one character is linear. ``sample`` and ``nbest`` build the
    lattice explicitly: O(n * d) edges, then O(edges) for ``sample`` and
    O(edges * k log k) for ``nbest(piece, k)``. Measured on the 77,301 words of
    botchan + alice with ``▁`` in front (6.4 code points on average; cold, no cache;
    best of 5, CPU time): ``encode_piece`` 2.8 us, ``encode_piece_spans`` 3.8 us;
    ``tokenizers``' ``Tokenizer.encode`` with this model alone 2.2 us per word, most of
    it the binding's per-call cost (ratio 0.77x, >1: tokstream faster). 10^5 copies
    of one character: 25 ms (``tokenizers`` 26-29 ms).
    """

    piece_spans = True

    type_name = "Unigram"

    __slots__ = (
        "_byte_fallback",
        "_byte_ids",
        "_pieces",
        "_scores",
        "_table",
        "_unk",
        "_unk_id",
        "_unk_score",
        "_vocab",
    )

    def __init__(
        self,
        vocab: Sequence[tuple[str, float]],
        *,
        unk_id: int | None,
        byte_fallback: bool = False,
    ) -> None:
        if isinstance(vocab, (str, bytes)) or not isinstance(vocab, Sequence):
            raise TypeError(f"vocab must be a list of (piece, score) pairs, got {type(vocab).__name__}")
        if unk_id is not None and (isinstance(unk_id, bool) or not isinstance(unk_id, int)):
            raise TypeError(f"unk_id must be an int or None, got {unk_id!r}")
        if not isinstance(byte_fallback, bool):
            raise TypeError(f"byte_fallback must be a bool, got {byte_fallback!r}")
        own: list[tuple[str, float]] = []
        for index, entry in enumerate(vocab):
            if not isinstance(entry, (tuple, list)) or len(entry) != 2:
                raise TypeError(f"vocab[{index}] must be a (piece, score) pair, got {entry!r}")
            piece, score = entry
            if not isinstance(piece, str):
                raise TypeError(f"vocab[{index}] piece must be a str, got {piece!r}")
            if isinstance(score, bool) or not isinstance(score, (int, float)):
                raise TypeError(f"vocab[{index}] score must be a number, got {score!r}")
            score = float(score)
            if not abs(score) <= _MAX_ABS_SCORE:  # also catches nan
                raise TokstreamError(
                    f"vocab[{index}] ({piece!r}) has score {score!r}; scores must be finite "
                    f"and at most 1e300 in magnitude"
                )
            own.append((piece, score))
        if unk_id is not None:
            # tokenizers' EmptyVocabulary / UnkIdNotInVocabulary.
            if not own:
                raise TokstreamError(
                    f"unk_id={unk_id} but the vocabulary is empty; it needs at least the "
                    f"unknown piece (or pass unk_id=None)"
                )
            if not 0 <= unk_id < len(own):
                raise TokstreamError(f"unk_id={unk_id} is out of range for a vocabulary of {len(own)} pieces")

        pieces: dict[str, int] = {}
        min_score = math.inf
        for token_id, (piece, score) in enumerate(own):
            pieces[piece] = token_id  # the last of duplicate pieces wins, as tokenizers
            min_score = min(min_score, score)
        self._vocab = own
        self._pieces = pieces
        self._table = prefix_table(pieces)
        self._scores = [score for _, score in own]
        self._unk_id = unk_id
        self._unk = _NO_UNK if unk_id is None else unk_id
        # inf for an empty vocabulary: then unk_id is None and any text raises.
        self._unk_score = min_score - K_UNK_PENALTY
        self._byte_fallback = byte_fallback
        # id of "<0xXX>" per byte value, -1 when missing.
        self._byte_ids = [pieces.get(f"<0x{b:02X}>", -1) for b in range(256)]

    # ------------------------------------------------------------------ properties

    @property
    def unk_id(self) -> int | None:
        """The id of the unknown piece, or ``None``."""
        return self._unk_id

    @property
    def byte_fallback(self) -> bool:
        """Whether unknown text is spelled with ``<0xXX>`` byte pieces."""
        return self._byte_fallback

    @property
    def vocab_size(self) -> int:
        """The number of pieces, duplicates included (ids are ``range(vocab_size)``)."""
        return len(self._vocab)

    def get_vocab(self) -> list[tuple[str, float]]:
        """A copy of the ``(piece, score)`` list."""
        return list(self._vocab)

    def token_to_id(self, piece: str) -> int | None:
        """The id of ``piece`` (the last one, if listed twice), or ``None``."""
        return self._pieces.get(piece)

    def spellings(self) -> Mapping[int, str]:
        """Every id's piece."""
        return {i: piece for i, (piece, _) in enumerate(self._vocab)}

    @property
    def unknown_id(self) -> int | None:
        return self._unk_id

    @property
    def byte_tokens(self) -> bool:
        return self._byte_fallback

    def id_to_token(self, token_id: int) -> str | None:
        """The piece with id ``token_id``, or ``None`` when out of range."""
        if 0 <= token_id < len(self._vocab):
            return self._vocab[token_id][0]
        return None

    # ---------------------------------------------------------------------- encode

    def encode_piece(self, piece: str) -> tuple[int, ...]:
        """Return the ids of the best segmentation of ``piece`` (Viterbi).

        Raises ``TokstreamError`` when ``unk_id`` is ``None`` and an unknown character
        must be encoded.

        >>> uni = Unigram([("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("ab", -1.5)], unk_id=0)
        >>> uni.encode_piece("abba"), uni.encode_piece("xyab")
        ((3, 2, 1), (0, 3))
        """
        n = len(piece)
        if n == 0:
            return ()
        starts, ids = self._viterbi(piece)
        unk = self._unk
        out: list[int] = []
        end = n
        while end:
            token_id = ids[end]
            if token_id == unk:
                return tuple([t for t, _, _ in self._resolve(piece, starts, ids)])
            out.append(token_id)
            end = starts[end]
        out.reverse()
        return tuple(out)

    def encode_piece_spans(self, piece: str) -> list[tuple[int, int, int]]:
        """Return ``(id, start, end)`` per token of the best segmentation.

        Offsets are code points of ``piece``. A fused run of unknown characters is one
        span; each of its byte-fallback tokens spans the whole run (for one unknown
        character, that character), as ``tokenizers``' offsets.
        """
        if not piece:
            return []
        starts, ids = self._viterbi(piece)
        return self._resolve(piece, starts, ids)

    def _viterbi(self, piece: str) -> tuple[list[int], list[int]]:
        """Best path as back pointers: ``starts[e]``, ``ids[e]`` of the node ending at e."""
        n = len(piece)
        best = [_NEG_INF] * (n + 1)
        best[0] = 0.0
        starts = [0] * (n + 1)
        ids = [0] * (n + 1)
        get = self._table.get
        scores = self._scores
        unk_score = self._unk_score
        # i runs along with the characters: indexing beats slicing for the first
        # (single-character) lookup, the one every position makes.
        i = -1
        for char in piece:
            i += 1
            base = best[i]
            end = i + 1
            token_id = get(char, ABSENT)
            if token_id >= 0:
                cand = scores[token_id] + base
                if cand > best[end]:
                    best[end] = cand
                    starts[end] = i
                    ids[end] = token_id
            else:
                # No single-character piece here: the unknown edge, as populate_nodes.
                cand = unk_score + base
                if cand > best[end]:
                    if self._unk_id is None:
                        raise self._missing_unk(piece, i)
                    best[end] = cand
                    starts[end] = i
                    ids[end] = self._unk_id
                if token_id == ABSENT:
                    continue
            while end < n:
                end += 1
                token_id = get(piece[i:end], ABSENT)
                if token_id >= 0:
                    cand = scores[token_id] + base
                    if cand > best[end]:
                        best[end] = cand
                        starts[end] = i
                        ids[end] = token_id
                elif token_id == ABSENT:
                    break
        return starts, ids

    def _resolve(self, piece: str, starts: list[int], ids: list[int]) -> list[tuple[int, int, int]]:
        """Walk the back pointers from the end; fuse unk runs; apply byte fallback."""
        unk = self._unk
        out: list[tuple[int, int, int]] = []
        end = len(piece)
        run_end = -1  # end of the unk run being collected, -1 when none
        while end:
            start = starts[end]
            token_id = ids[end]
            if token_id == unk:
                if run_end < 0:
                    run_end = end
            else:
                if run_end >= 0:
                    self._emit_unknown(piece, end, run_end, out)
                    run_end = -1
                out.append((token_id, start, end))
            end = start
        if run_end >= 0:
            self._emit_unknown(piece, 0, run_end, out)
        out.reverse()
        return out

    def _emit_unknown(self, piece: str, start: int, end: int, out_reversed: list[tuple[int, int, int]]) -> None:
        """Append the tokens of the fused unknown text ``piece[start:end]``, reversed."""
        text = piece[start:end]
        token_id = self._pieces.get(text)
        if token_id is not None:
            # A run of unknown nodes can spell a piece (tokenizers looks it up again).
            out_reversed.append((token_id, start, end))
            return
        if self._byte_fallback:
            byte_ids = self._byte_ids
            found = [byte_ids[b] for b in text.encode("utf-8", "surrogatepass")]
            if min(found) >= 0:
                out_reversed.extend([(b, start, end) for b in reversed(found)])
                return
        # self._unk_id is not None here: the run consists of nodes with that id.
        out_reversed.append((self._unk, start, end))

    def _missing_unk(self, piece: str, offset: int) -> TokstreamError:
        return TokstreamError(
            f"cannot encode {piece!r}: the character {piece[offset]!r} at offset {offset} "
            f"is not in the Unigram vocabulary and the model has no unk_id (tokenizers "
            f"raises MissingUnkId here); build the model with unk_id= set"
        )

    # -------------------------------------------------------------- the full lattice

    def _lattice(self, piece: str) -> list[list[_Edge]]:
        """``ends[e]``: the edges ``(start, id, score)`` ending at ``e``, by start.

        The same edges ``populate_nodes`` inserts, in the same order: by start, then by
        length, the unknown edge of a start last. No unknown edges when ``unk_id`` is
        ``None`` (positions may then be unreachable).
        """
        n = len(piece)
        ends: list[list[_Edge]] = [[] for _ in range(n + 1)]
        get = self._table.get
        scores = self._scores
        unk_id = self._unk_id
        unk_score = self._unk_score
        for i in range(n):
            end = i + 1
            token_id = get(piece[i:end], ABSENT)
            if token_id >= 0:
                ends[end].append((i, token_id, scores[token_id]))
            else:
                if unk_id is not None:
                    ends[end].append((i, unk_id, unk_score))
                if token_id == ABSENT:
                    continue
            while end < n:
                end += 1
                token_id = get(piece[i:end], ABSENT)
                if token_id >= 0:
                    ends[end].append((i, token_id, scores[token_id]))
                elif token_id == ABSENT:
                    break
        return ends

    def _no_path(self, piece: str) -> TokstreamError:
        return TokstreamError(
            f"cannot segment {piece!r}: some character is not in the Unigram vocabulary "
            f"and the model has no unk_id; build the model with unk_id= set"
        )

    def _ids_of_path(self, piece: str, path: list[_Edge], ends_at: list[int]) -> tuple[int, ...]:
        """Ids (unk fused, byte fallback) of a path given as edges with their ends."""
        n = len(piece)
        starts = [0] * (n + 1)
        ids = [0] * (n + 1)
        for (start, token_id, _), end in zip(path, ends_at):
            starts[end] = start
            ids[end] = token_id
        return tuple([t for t, _, _ in self._resolve(piece, starts, ids)])

    def sample(self, piece: str, *, alpha: float, rng: np.random.Generator) -> tuple[int, ...]:
        """Draw a segmentation with probability proportional to ``exp(alpha * score)``.

        Subword regularization (Kudo 2018) over the whole lattice, as SentencePiece's
        ``encode(..., enable_sampling=True, alpha=alpha, nbest_size=-1)``: forward
        filtering (log-sum-exp of the scaled path scores into each position), then
        backward sampling of one incoming edge per step. ``alpha=0`` is uniform over
        all segmentations; large ``alpha`` approaches ``encode_piece``. Draws
        ``len(piece)`` uniforms from ``rng`` per call, so a seeded generator gives a
        reproducible sequence. Unknown runs are fused and byte fallback applies as in
        ``encode_piece``.
        """
        if not math.isfinite(alpha):
            raise TokstreamError(f"alpha must be a finite number, got {alpha!r}")
        n = len(piece)
        if n == 0:
            return ()
        ends = self._lattice(piece)
        exp, log = math.exp, math.log
        forward = [_NEG_INF] * (n + 1)
        forward[0] = 0.0
        for end in range(1, n + 1):
            terms = [forward[s] + alpha * score for s, _, score in ends[end]]
            if not terms:
                continue
            top = max(terms)
            if top == _NEG_INF:
                continue
            forward[end] = top + log(sum([exp(t - top) for t in terms]))
        if forward[n] == _NEG_INF:
            raise self._no_path(piece)
        uniforms: list[float] = rng.random(n).tolist()
        path: list[_Edge] = []
        path_ends: list[int] = []
        end = n
        draw = 0
        while end:
            edges = ends[end]
            if len(edges) == 1:
                chosen = edges[0]
            else:
                total = forward[end]
                cumulative: list[float] = []
                acc = 0.0
                for start, _, score in edges:
                    acc += exp(forward[start] + alpha * score - total)
                    cumulative.append(acc)
                # Scale by the running sum, not 1, so rounding cannot push the draw past
                # the last edge; if u * acc still rounds up to acc, take the last edge
                # that has any weight (never one from an unreachable start).
                target = uniforms[draw] * acc
                draw += 1
                chosen = edges[0]
                below = 0.0
                for edge, upto in zip(edges, cumulative):
                    if upto > below:
                        chosen = edge
                        if target < upto:
                            break
                    below = upto
            path.append(chosen)
            path_ends.append(end)
            end = chosen[0]
        path.reverse()
        path_ends.reverse()
        return self._ids_of_path(piece, path, path_ends)

    def nbest(self, piece: str, n: int) -> list[tuple[tuple[int, ...], float]]:
        """The ``n`` best segmentations as ``(ids, score)``, best first.

        ``score`` is the path's total log score, summed left to right (unknown
        characters count ``min(scores) - 10`` each, before fusing). Fewer than ``n``
        come back when the piece has fewer segmentations. Equal scores are ordered as
        Viterbi breaks ties, so ``nbest(piece, 1)[0][0] == encode_piece(piece)``.
        Exact: k-best dynamic programming, O(edges * n log n); SentencePiece and
        ``tokenizers`` use A* and agree except where they prune their agenda.
        """
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(f"n must be an int, got {n!r}")
        if n <= 0 or not piece:
            return [((), 0.0)] if n > 0 else []
        length = len(piece)
        ends = self._lattice(piece)
        # best[e]: up to n entries (score, start, id, rank in best[start]), best first.
        # Candidates are generated by start, then edge order, then rank, and nlargest
        # is stable, so among equal scores the first generated wins, as in Viterbi.
        best: list[list[tuple[float, int, int, int]]] = [[] for _ in range(length + 1)]
        best[0] = [(0.0, -1, -1, -1)]
        for end in range(1, length + 1):
            cands = [
                (score + prev[0], start, token_id, rank)
                for start, token_id, score in ends[end]
                for rank, prev in enumerate(best[start])
            ]
            best[end] = nlargest(n, cands, key=_first) if len(cands) > n else sorted(cands, key=_first, reverse=True)
        if not best[length]:
            raise self._no_path(piece)
        results: list[tuple[tuple[int, ...], float]] = []
        for entry in best[length]:
            path: list[_Edge] = []
            path_ends: list[int] = []
            end, node = length, entry
            while end:
                _, start, token_id, rank = node
                path.append((start, token_id, 0.0))
                path_ends.append(end)
                end, node = start, best[start][rank]
            path.reverse()
            path_ends.reverse()
            results.append((self._ids_of_path(piece, path, path_ends), entry[0]))
        return results

    # ------------------------------------------------------------------------ JSON

    def to_json(self) -> dict[str, object]:
        """The ``tokenizer.json`` ``"model"`` object, keys in ``tokenizers``' order."""
        return {
            "type": "Unigram",
            "unk_id": self._unk_id,
            "vocab": [[piece, score] for piece, score in self._vocab],
            "byte_fallback": self._byte_fallback,
        }

    @classmethod
    def from_json(cls, obj: JsonObject, path: str = "model", *, build: Build[Model] | None = None) -> Unigram:
        """Build from a ``tokenizer.json`` ``"model"`` object.

        As ``tokenizers``: ``vocab`` is required, ``unk_id`` and ``byte_fallback`` may
        be absent or null, ``type`` must be ``"Unigram"`` when present, other keys are
        ignored. Malformed input raises ``TokenizerFileError`` (a ``ValueError``)
        naming the JSON path, ``path`` being the object's own.
        """
        o = expect_object(obj, path, "a Unigram model object")
        if o.get("type", "Unigram") != "Unigram":
            raise error(f"{path}.type", f"expected 'Unigram', got {o['type']!r}")
        if "vocab" not in o:
            raise error(path, "missing field 'vocab'")
        raw = o["vocab"]
        if not isinstance(raw, list):
            raise error(f"{path}.vocab", f"expected an array of [piece, score] pairs, got {kind(raw)}")
        vocab: list[tuple[str, float]] = []
        for index, entry in enumerate(raw):
            where = f"{path}.vocab[{index}]"
            if not isinstance(entry, list) or len(entry) != 2:
                raise error(where, f"expected a [piece, score] pair, got {entry!r:.80}")
            piece, score = entry
            if not isinstance(piece, str):
                raise error(f"{where}[0]", f"expected a string, got {kind(piece)}")
            if isinstance(score, bool) or not isinstance(score, (int, float)):
                raise error(f"{where}[1]", f"expected a number, got {kind(score)}")
            if not abs(score) <= _MAX_ABS_SCORE:
                raise error(f"{where}[1]", f"score {score!r} is not finite or above 1e300 in magnitude")
            vocab.append((piece, float(score)))
        unk_id = o.get("unk_id")
        if unk_id is not None and (type(unk_id) is not int or unk_id < 0):
            raise error(f"{path}.unk_id", f"expected a non-negative integer or null, got {unk_id!r:.80}")
        if unk_id is not None and unk_id >= len(vocab):
            raise error(f"{path}.unk_id", f"{unk_id} is out of range for {path}.vocab ({len(vocab)} pieces)")
        byte_fallback = field(o, "byte_fallback", bool, path, False)
        return cls(vocab, unk_id=unk_id, byte_fallback=byte_fallback)

    # ------------------------------------------------------------------ plumbing

    def __repr__(self) -> str:
        return f"Unigram(vocab_size={len(self._vocab)}, unk_id={self._unk_id}, byte_fallback={self._byte_fallback})"

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        # Pickle the vocabulary only; the prefix table is rebuilt on load.
        return (_rebuild, (self._vocab, self._unk_id, self._byte_fallback))


def _rebuild(vocab: list[tuple[str, float]], unk_id: int | None, byte_fallback: bool) -> Unigram:
    return Unigram(vocab, unk_id=unk_id, byte_fallback=byte_fallback)

"""WordPiece: greedy longest-match-first segmentation, with ``tokenizers``' semantics.

A word is cut from left to right: at each position the longest vocabulary entry that
starts there is taken. Entries after the first are looked up with the continuing-
subword prefix (``"##"``) in front, so ``"playing"`` becomes ``"play"`` + ``"##ing"``.
If some position has no match at all, the *whole* word becomes the single unknown
token, as does a word longer than ``max_input_chars_per_word`` characters. This is what
the Rust ``tokenizers`` crate's ``WordPiece::tokenize`` computes (and Google's BERT
``WordpieceTokenizer`` before it); the differential tests check it id for id against
``tokenizers.models.WordPiece`` on the BERT uncased vocabulary.

Lengths and offsets are code points (``str`` indices), as ``tokenizers`` counts
``chars()``. A Python ``str`` may hold lone surrogates, which Rust strings cannot; they
are ordinary characters here (almost always unknown, so the word becomes unk).

Not handled here: normalization and pre-tokenization (BERT's lowercasing and splitting
on punctuation are other stages), caching of words (``tokenizer``), decoding (the
WordPiece decoder strips the prefix and joins) and training (``train/wordpiece.py``).

Deliberate differences from ``tokenizers``:

- A vocabulary without ``unk_token`` is refused at construction (``tokenizers`` only
  fails when a word first needs the unknown token).
- ``to_json`` lists every token; ``tokenizers`` writes one token per id, so two tokens
  sharing an id would lose one of them there.

Performance notes
-----------------
- Most words of real text are one vocabulary entry: the first check is one dict lookup.
- The greedy search walks *forward* through a prefix table (every prefix of every
  entry maps to its id, or to -1 when it is only a prefix), stopping as soon as the
  text stops being a prefix of any entry, and remembers the last full match. The
  reference walks *backward* from the end of the word for every token, O(n^2) per
  word (harmless under the default 100-character limit; 10^5 characters under a
  raised limit take minutes there, 0.1 s here), and a character no entry contains
  costs it n - start lookups, 1 here. Walking backward from ``min(n, longest
  entry)`` for the first token was tried: no faster on real words.
- Continuation entries live in a second table keyed *without* the prefix, so no
  ``"##" + substring`` string is built per lookup.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import TokstreamError
from ..json_fields import (
    MAX_ID,
    Build,
    JsonObject,
    error,
    expect_object,
    field,
    token_ids,
)
from ._vocab import ABSENT, PREFIX_ONLY, prefix_table
from .base import Model

__all__ = ["WordPiece"]


class WordPiece(Model):
    """Encode one word (pre-token) into ids by greedy longest match.

    ``vocab`` maps token to id. Continuation tokens carry ``continuing_subword_prefix``
    (``"##ing"``); ``unk_token`` must be in ``vocab``. A word longer than
    ``max_input_chars_per_word`` code points, or one with a position where no token
    matches, encodes as ``(unk_id,)``. The empty word encodes as ``()``.

    >>> wp = WordPiece({"[UNK]": 0, "play": 1, "##ing": 2, "##s": 3})
    >>> wp.encode_piece("playing"), wp.encode_piece("plays"), wp.encode_piece("player")
    ((1, 2), (1, 3), (0,))
    >>> wp.encode_piece_spans("playing")
    [(1, 0, 4), (2, 4, 7)]

    Cost: building is O(B) time and memory for B the total length of the tokens (two
    prefix tables holding every prefix of every token, about 2x the vocabulary's
    string memory). ``encode_piece`` is one dict lookup for a word in the vocabulary;
    otherwise O(n * d) lookups for an n-character word, d the depth to which the text
    at a position keeps being a token prefix (d <= the longest token, 18 characters for
    BERT uncased; typically 3-6). n is at most ``max_input_chars_per_word``. Measured
    on 97,872 lowercased botchan + alice words (BERT-style punctuation split; cold, no
    cache; best of 5, CPU time): 0.27 us per word, ``tokenizers``' ``Tokenizer.encode``
    with this model alone 1.6 us (ratio 5.8x, >1: tokstream faster); on the 3,136 of
    them that are not one token 2.3 us against 2.1 us (0.93x).
    """

    piece_spans = True

    type_name = "WordPiece"

    __slots__ = (
        "_cont",
        "_first",
        "_max_chars",
        "_prefix",
        "_unk",
        "_unk_id",
        "_unk_token",
        "_vocab",
    )

    def __init__(
        self,
        vocab: Mapping[str, int],
        *,
        unk_token: str = "[UNK]",
        continuing_subword_prefix: str = "##",
        max_input_chars_per_word: int = 100,
    ) -> None:
        if not isinstance(vocab, Mapping):
            raise TypeError(f"vocab must be a dict of token to id, got {type(vocab).__name__}")
        if not isinstance(unk_token, str):
            raise TypeError(f"unk_token must be a str, got {type(unk_token).__name__}")
        if not isinstance(continuing_subword_prefix, str):
            raise TypeError(f"continuing_subword_prefix must be a str, got {type(continuing_subword_prefix).__name__}")
        if isinstance(max_input_chars_per_word, bool) or not isinstance(max_input_chars_per_word, int):
            raise TypeError(f"max_input_chars_per_word must be an int, got {type(max_input_chars_per_word).__name__}")
        if max_input_chars_per_word < 0:
            raise TokstreamError(f"max_input_chars_per_word must be >= 0, got {max_input_chars_per_word}")
        own: dict[str, int] = {}
        for token, token_id in vocab.items():
            if not isinstance(token, str):
                raise TypeError(f"vocab keys must be str, got {token!r}")
            if isinstance(token_id, bool) or not isinstance(token_id, int):
                raise TypeError(f"vocab[{token!r}] must be an int id, got {token_id!r}")
            if not 0 <= token_id < MAX_ID:
                raise TokstreamError(f"vocab[{token!r}] = {token_id} is not a valid id (0 <= id < 2**32)")
            own[token] = token_id
        unk_id = own.get(unk_token)
        if unk_id is None:
            raise TokstreamError(
                f"the WordPiece vocabulary ({len(own)} tokens) has no unk_token "
                f"{unk_token!r}; add it to the vocabulary or pass unk_token= naming one "
                f"of its tokens"
            )
        cut = len(continuing_subword_prefix)
        self._vocab = own
        self._first = prefix_table(own)
        self._cont = prefix_table(
            {token[cut:]: token_id for token, token_id in own.items() if token.startswith(continuing_subword_prefix)}
        )
        self._unk_id = unk_id
        self._unk = (unk_id,)
        self._unk_token = unk_token
        self._prefix = continuing_subword_prefix
        self._max_chars = max_input_chars_per_word

    # ------------------------------------------------------------------ properties

    @property
    def unk_token(self) -> str:
        """The token a word becomes when it cannot be segmented."""
        return self._unk_token

    @property
    def unk_id(self) -> int:
        """The id of ``unk_token``."""
        return self._unk_id

    @property
    def continuing_subword_prefix(self) -> str:
        """The prefix of tokens that continue a word (``"##"``)."""
        return self._prefix

    @property
    def max_input_chars_per_word(self) -> int:
        """Words longer than this (in code points) encode as the unknown token."""
        return self._max_chars

    @property
    def vocab_size(self) -> int:
        """The number of tokens (as ``tokenizers``' ``get_vocab_size``)."""
        return len(self._vocab)

    def get_vocab(self) -> dict[str, int]:
        """A copy of the token-to-id map."""
        return dict(self._vocab)

    def spellings(self) -> Mapping[int, str]:
        """Every id's token."""
        return {i: t for t, i in self._vocab.items()}

    @property
    def unknown_id(self) -> int | None:
        return self._unk_id

    @property
    def subword_prefix(self) -> str:
        return self._prefix

    def token_to_id(self, token: str) -> int | None:
        """The id of ``token``, or ``None`` when it is not in the vocabulary."""
        return self._vocab.get(token)

    # ---------------------------------------------------------------------- encode

    def encode_piece(self, piece: str) -> tuple[int, ...]:
        """Return the ids of one word.

        >>> WordPiece({"[UNK]": 0, "un": 1, "##aff": 2, "##able": 3}).encode_piece("unaffable")
        (1, 2, 3)
        """
        n = len(piece)
        if n > self._max_chars:
            return self._unk
        table = self._first
        whole = table.get(piece, ABSENT)
        if whole >= 0:
            return (whole,)
        if n == 0:
            return ()
        out: list[int] = []
        start = 0
        while start < n:
            get = table.get
            best = PREFIX_ONLY
            best_end = end = start
            while end < n:
                end += 1
                token_id = get(piece[start:end], ABSENT)
                if token_id >= 0:
                    best = token_id
                    best_end = end
                elif token_id == ABSENT:
                    break
            if best < 0:
                return self._unk  # one unmatched position: the whole word is unknown
            out.append(best)
            start = best_end
            table = self._cont
        return tuple(out)

    def encode_piece_spans(self, piece: str) -> list[tuple[int, int, int]]:
        """Return ``(id, start, end)`` per token, offsets in code points of ``piece``.

        The unknown token spans the whole word, as in ``tokenizers``' offsets.

        >>> WordPiece({"[UNK]": 0, "a": 1}).encode_piece_spans("ab")
        [(0, 0, 2)]
        """
        # Same loop as encode_piece (kept separate so the ids-only hot path builds no
        # span tuples); the tests check that the two agree.
        n = len(piece)
        if n == 0:
            return []
        unk = [(self._unk_id, 0, n)]
        if n > self._max_chars:
            return unk
        table = self._first
        whole = table.get(piece, ABSENT)
        if whole >= 0:
            return [(whole, 0, n)]
        out: list[tuple[int, int, int]] = []
        start = 0
        while start < n:
            get = table.get
            best = PREFIX_ONLY
            best_end = end = start
            while end < n:
                end += 1
                token_id = get(piece[start:end], ABSENT)
                if token_id >= 0:
                    best = token_id
                    best_end = end
                elif token_id == ABSENT:
                    break
            if best < 0:
                return unk
            out.append((best, start, best_end))
            start = best_end
            table = self._cont
        return out

    # ------------------------------------------------------------------------ JSON

    def to_json(self) -> dict[str, object]:
        """The ``tokenizer.json`` ``"model"`` object, keys in ``tokenizers``' order.

        The vocabulary is ordered by id (then token), which is what ``tokenizers``
        writes for a vocabulary with one token per id.
        """
        ordered = sorted(self._vocab.items(), key=lambda item: (item[1], item[0]))
        return {
            "type": "WordPiece",
            "unk_token": self._unk_token,
            "continuing_subword_prefix": self._prefix,
            "max_input_chars_per_word": self._max_chars,
            "vocab": dict(ordered),
        }

    @classmethod
    def from_json(cls, obj: JsonObject, path: str = "model", *, build: Build[Model] | None = None) -> WordPiece:
        """Build from a ``tokenizer.json`` ``"model"`` object.

        As ``tokenizers``: ``type`` may be absent but must be ``"WordPiece"`` when
        present; ``unk_token``, ``continuing_subword_prefix``,
        ``max_input_chars_per_word`` and ``vocab`` are required; other keys are
        ignored. Malformed input raises ``TokenizerFileError`` (a ``ValueError``)
        naming the JSON path, ``path`` being the object's own.
        """
        o = expect_object(obj, path, "a WordPiece model object")
        if o.get("type", "WordPiece") != "WordPiece":
            raise error(f"{path}.type", f"expected 'WordPiece', got {o['type']!r}")
        unk_token = field(o, "unk_token", str, path)
        prefix = field(o, "continuing_subword_prefix", str, path)
        max_chars = field(o, "max_input_chars_per_word", int, path)
        if max_chars < 0:
            raise error(f"{path}.max_input_chars_per_word", f"expected a non-negative integer, got {max_chars!r}")
        vocab = token_ids(o, "vocab", path)
        if unk_token not in vocab:
            raise error(
                f"{path}.unk_token",
                f"{unk_token!r} is not in {path}.vocab ({len(vocab)} tokens); WordPiece needs it "
                f"for words it cannot segment",
            )
        return cls(
            vocab,
            unk_token=unk_token,
            continuing_subword_prefix=prefix,
            max_input_chars_per_word=max_chars,
        )

    # ------------------------------------------------------------------ plumbing

    def __repr__(self) -> str:
        return (
            f"WordPiece(vocab_size={len(self._vocab)}, unk_token={self._unk_token!r}, "
            f"continuing_subword_prefix={self._prefix!r}, "
            f"max_input_chars_per_word={self._max_chars})"
        )

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        # Pickle the vocabulary only; the prefix tables are rebuilt on load.
        return (_rebuild, (self._vocab, self._unk_token, self._prefix, self._max_chars))


def _rebuild(vocab: dict[str, int], unk_token: str, prefix: str, max_chars: int) -> WordPiece:
    return WordPiece(
        vocab,
        unk_token=unk_token,
        continuing_subword_prefix=prefix,
        max_input_chars_per_word=max_chars,
    )

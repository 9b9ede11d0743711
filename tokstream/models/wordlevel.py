"""WordLevel: each pre-token is one vocabulary entry, as ``tokenizers``' ``WordLevel``.

A pre-token that is in the vocabulary encodes as its id; any other becomes the unknown
token, whole. The model never splits: the pre-tokenizer decides the words (a WordLevel
``tokenizer.json`` without one maps the whole normalized text to one id).

As in ``tokenizers``:

- ``unk_token`` is required in the JSON, but need not be in the vocabulary: such a
  file loads, and encoding raises ``TokstreamError`` when a word first needs the
  unknown token (``tokenizers``: "WordLevel error: Missing [UNK] token from the
  vocabulary"), so text made only of known words still encodes;
- ``vocab_size`` counts the entries, not the ids;
- the unknown token's offsets span the whole word.

Deliberate difference: ``to_json`` lists every token; ``tokenizers`` writes one token
per id, so of two tokens sharing an id it keeps one (which one depends on its hash map).
Which of them ``spellings`` gives an id (the last listed) is equally arbitrary there.

Not handled here: pre-tokenization, decoding (``tokenizers`` joins WordLevel tokens with
spaces when there is no decoder, as the pipeline does) and training.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import TokstreamError
from ..json_fields import MAX_ID, Build, JsonObject, error, expect_object, field, token_ids
from .base import Model

__all__ = ["WordLevel"]


class WordLevel(Model):
    """Map each word (pre-token) to its id, or to ``unk_token``'s.

    ``vocab`` maps token to id; ``unk_token`` may be missing from it (then a word that
    is not in ``vocab`` raises ``TokstreamError``). The empty word encodes as ``()``.

    >>> wl = WordLevel({"<unk>": 0, "hello": 1, "world": 2}, unk_token="<unk>")
    >>> wl.encode_piece("hello"), wl.encode_piece("there")
    ((1,), (0,))
    >>> wl.encode_piece_spans("there")
    [(0, 0, 5)]

    Cost: building copies the vocabulary (O(V)); ``encode_piece`` is one dict lookup.
    """

    piece_spans = True

    type_name = "WordLevel"

    __slots__ = ("_unk", "_unk_id", "_unk_token", "_vocab")

    def __init__(self, vocab: Mapping[str, int], *, unk_token: str = "<unk>") -> None:
        if not isinstance(vocab, Mapping):
            raise TypeError(f"vocab must be a dict of token to id, got {type(vocab).__name__}")
        if not isinstance(unk_token, str):
            raise TypeError(f"unk_token must be a str, got {type(unk_token).__name__}")
        own: dict[str, int] = {}
        for token, token_id in vocab.items():
            if not isinstance(token, str):
                raise TypeError(f"vocab keys must be str, got {token!r}")
            if isinstance(token_id, bool) or not isinstance(token_id, int):
                raise TypeError(f"vocab[{token!r}] must be an int id, got {token_id!r}")
            if not 0 <= token_id < MAX_ID:
                raise TokstreamError(f"vocab[{token!r}] = {token_id} is not a valid id (0 <= id < 2**32)")
            own[token] = token_id
        self._vocab = own
        self._unk_token = unk_token
        self._unk_id = own.get(unk_token)
        self._unk: tuple[int, ...] | None = None if self._unk_id is None else (self._unk_id,)

    # ------------------------------------------------------------------ properties

    @property
    def unk_token(self) -> str:
        """The token a word outside the vocabulary becomes."""
        return self._unk_token

    @property
    def unknown_id(self) -> int | None:
        """The id of ``unk_token``, or None when the vocabulary lacks it."""
        return self._unk_id

    @property
    def vocab_size(self) -> int:
        """The number of tokens (as ``tokenizers``' ``get_vocab_size``)."""
        return len(self._vocab)

    def get_vocab(self) -> dict[str, int]:
        """A copy of the token-to-id map."""
        return dict(self._vocab)

    def spellings(self) -> Mapping[int, str]:
        """Every id's token (of tokens sharing an id, the last listed)."""
        return {i: t for t, i in self._vocab.items()}

    def token_to_id(self, spelling: str) -> int | None:
        """The id of ``spelling``, or None when it is not in the vocabulary."""
        return self._vocab.get(spelling)

    # ---------------------------------------------------------------------- encode

    def encode_piece(self, piece: str) -> tuple[int, ...]:
        """The id of one word: its own, or the unknown token's.

        >>> WordLevel({"a": 0}, unk_token="<unk>").encode_piece("b")
        Traceback (most recent call last):
        ...
        tokstream.errors.TokstreamError: 'b' is not in the WordLevel vocabulary and neither is its unk_token '<unk>'; ...
        """
        if not piece:
            return ()
        token_id = self._vocab.get(piece)
        if token_id is not None:
            return (token_id,)
        if self._unk is None:
            raise TokstreamError(
                f"{piece[:40]!r} is not in the WordLevel vocabulary and neither is its unk_token "
                f"{self._unk_token!r}; add {self._unk_token!r} to the vocabulary"
            )
        return self._unk

    def encode_piece_spans(self, piece: str) -> list[tuple[int, int, int]]:
        """``[(id, 0, len(piece))]``: the one token covers the word (``[]`` for ``""``)."""
        return [(token_id, 0, len(piece)) for token_id in self.encode_piece(piece)]

    # ------------------------------------------------------------------------ JSON

    def to_json(self) -> dict[str, object]:
        """The ``tokenizer.json`` ``"model"`` object, keys in ``tokenizers``' order; the
        vocabulary ordered by id (then token), as ``tokenizers`` writes it."""
        ordered = sorted(self._vocab.items(), key=lambda item: (item[1], item[0]))
        return {"type": "WordLevel", "vocab": dict(ordered), "unk_token": self._unk_token}

    @classmethod
    def from_json(cls, obj: JsonObject, path: str = "model", *, build: Build[Model] | None = None) -> WordLevel:
        """Build from a ``tokenizer.json`` ``"model"`` object.

        As ``tokenizers``: ``type`` may be absent but must be ``"WordLevel"`` when
        present; ``vocab`` and ``unk_token`` are required (``unk_token`` need not be
        in ``vocab``); other keys are ignored. Malformed input raises
        ``TokenizerFileError`` naming the JSON path.
        """
        o = expect_object(obj, path, "a WordLevel model object")
        if o.get("type", "WordLevel") != "WordLevel":
            raise error(f"{path}.type", f"expected 'WordLevel', got {o['type']!r}")
        vocab = token_ids(o, "vocab", path)
        return cls(vocab, unk_token=field(o, "unk_token", str, path))

    def __repr__(self) -> str:
        return f"WordLevel(vocab_size={len(self._vocab)}, unk_token={self._unk_token!r})"

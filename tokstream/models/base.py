"""What every segmentation model is to the pipeline: one pre-token in, ids out.

A model also declares, as data, what the layers around it may rely on:

- ``byte_encoder(spelling)``: whether it can encode a piece given as raw UTF-8 bytes
  (the rank-file fast path, ``_fastpath.PieceEncoder``, caches whole cut parts of text
  for such models);
- ``native_text(spelling)``: the compiled core's pair table and whole-token map, for
  the compiled text encoder (``_native_text``), which replaces that fast path;
- ``cut_char()``: a character at whose runs a text can be cut without changing the ids
  (SentencePiece-style BPE with no pre-tokenizer is cached word by word);
- ``piece_spans``: whether ``encode_piece_spans`` says which characters each token
  covers (offsets); otherwise offsets match each token's spelling along the piece;
- ``unknown_id``, ``byte_fallback``, ``subword_prefix``, ``word_suffix``: what that
  spelling match needs;
- ``type_name`` and ``from_json`` / ``to_json``: its ``tokenizer.json`` form. Models
  without a type of their own (``RankBPE``, the SentencePiece models) save as a BPE or
  Unigram object and load back as that.

A model that declares nothing gets the general path: correct, only not cached as well.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from enum import Enum
from typing import TYPE_CHECKING, ClassVar

from ..byte_level import proxies_to_bytes
from ..json_fields import Build, JsonObject

if TYPE_CHECKING:
    from .._native import PairTable

__all__ = ["ByteEncoder", "Model", "NativeText", "Spelling"]

Ids = tuple[int, ...]
#: ``(encode_bytes, whole)``: encode a piece's UTF-8 bytes; ``whole()`` gives the map of
#: a piece's bytes to its id when that piece is one token without merging (may be
#: empty), called on the first cold encode (it is O(V) to build for a spelled vocabulary).
ByteEncoder = tuple[Callable[[bytes], Ids], Callable[[], Mapping[bytes, int]]]
#: ``Model.native_text``: the compiled core's pair table and the whole-token map.
NativeText = tuple["PairTable", Mapping[bytes, int] | None]


class Spelling(Enum):
    """How a pre-tokenizer hands pieces to the model."""

    #: The text itself (tiktoken: the model merges the piece's UTF-8 bytes).
    TEXT = "text"
    #: GPT-2's byte-level alphabet, one proxy character per byte (``"Ġhello"``).
    BYTE_LEVEL = "byte_level"


class Model(ABC):
    """A segmentation model (module notes)."""

    __slots__ = ()

    #: ``encode_piece_spans`` is implemented (WordPiece, Unigram).
    piece_spans: ClassVar[bool] = False
    #: The ``tokenizer.json`` ``"type"`` of the class (``"BPE"``); see the module notes
    #: for the models without one.
    type_name: ClassVar[str]

    @abstractmethod
    def encode_piece(self, piece: str) -> tuple[int, ...]:
        """The ids of one pre-token."""

    def encode_piece_spans(self, piece: str) -> list[tuple[int, int, int]]:
        """``(id, start, end)`` per token: the characters of ``piece`` it covers
        (only where ``piece_spans``)."""
        raise NotImplementedError(f"{type(self).__name__} does not give token spans")

    @abstractmethod
    def to_json(self) -> dict[str, object]:
        """The ``tokenizer.json`` ``"model"`` object."""

    @classmethod
    def from_json(cls, obj: JsonObject, path: str = "model", *, build: Build[Model] | None = None) -> Model:
        """Build from a ``tokenizer.json`` ``"model"`` object (``path`` names it in
        errors). This default: the class has no JSON form of its own."""
        raise NotImplementedError(
            f"{cls.__name__} has no tokenizer.json type of its own: read what its to_json writes with model_from_json"
        )

    @abstractmethod
    def token_to_id(self, spelling: str) -> int | None:
        """The id of a vocabulary spelling, as the model looks it up (``tokenizers``:
        the last of a repeated Unigram piece), or None."""

    @abstractmethod
    def spellings(self) -> Mapping[int, str]:
        """Every id's spelling."""

    @property
    @abstractmethod
    def vocab_size(self) -> int:
        """The number of entries (``tokenizers``' ``get_vocab_size``, which decides the
        ids of added tokens)."""

    @property
    def id_limit(self) -> int:
        """The largest id plus one."""
        return max(self.spellings(), default=-1) + 1

    # ------------------------------------------------------------- declarations

    def byte_encoder(self, spelling: Spelling) -> ByteEncoder | None:
        """``(encode_bytes, whole)`` when pieces spelled ``spelling`` can be encoded
        from their raw UTF-8 bytes; None (the default) when they cannot."""
        return None

    def native_text(self, spelling: Spelling) -> NativeText | None:
        """``(pair table, whole)`` for the compiled text encoder (``_native_text``) when
        pieces spelled ``spelling`` encode from their bytes by that table's merge loop
        (``whole``: token bytes -> id for a piece that is one token without merging,
        or None to merge every piece); None (the default) where the pure path runs."""
        return None

    def byte_level_bytes(self) -> Mapping[int, bytes | None]:
        """Each id's spelling read in the byte-level alphabet (None where a spelling
        holds a character outside it): the bytes of a byte-level vocabulary's tokens."""
        spellings = self.spellings()
        return dict(zip(spellings, proxies_to_bytes(spellings.values())))

    def raw_bytes(self) -> Mapping[bytes, int] | None:
        """Token bytes -> id when the tokens *are* their bytes (a rank file), whatever
        the decoder; None (the default) when a token's bytes come from its spelling."""
        return None

    def rank_form(self, spelling: Spelling, specials: Mapping[str, int]) -> Mapping[bytes, int] | None:
        """The tiktoken ranks this model encodes as, for pieces spelled ``spelling``
        (``specials``: the tokenizer's, which a vocabulary may list), else None. Models
        with equal rank forms share a fingerprint."""
        return None

    def cut_char(self) -> str | None:
        """A character at whose runs text cuts without changing the ids, or None."""
        return None

    @property
    def unknown_id(self) -> int | None:
        """The id that stands for text the model cannot spell, or None."""
        return None

    @property
    def byte_tokens(self) -> bool:
        """Unknown text is spelled with ``<0xXX>`` byte tokens (byte fallback)."""
        return False

    @property
    def subword_prefix(self) -> str:
        """The prefix of tokens that continue a word (WordPiece's ``"##"``), or ""."""
        return ""

    @property
    def word_suffix(self) -> str:
        """The suffix of tokens that end a word (``"</w>"``), or ""."""
        return ""

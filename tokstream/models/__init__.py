"""Segmentation models: turn one pre-token into ids.

- ``ranks.py``: tiktoken's byte-level BPE over merge ranks (rank files);
- ``bpe.py``: Hugging Face's BPE over an ordered merge list;
- ``wordpiece.py``: greedy longest match (BERT);
- ``wordlevel.py``: one vocabulary entry per pre-token;
- ``unigram.py``: a unigram language model (Viterbi, sampling, n-best);
- ``sentencepiece.py``: SentencePiece's score-based BPE and its Unigram lattice;
- ``base.py``: what the pipeline needs from every model, and what a model declares.

``model_from_json`` (here) builds a ``tokenizer.json`` ``"model"`` object by its type
(``JSON_TYPES``: BPE, WordPiece, WordLevel, Unigram); each class's ``from_json`` reads its fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ..json_fields import from_table
from .base import Model, Spelling
from .bpe import BPE
from .ranks import RankBPE, merges_for_ranks
from .sentencepiece import PieceType, SentencePieceBPE, SentencePieceUnigram
from .unigram import Unigram
from .wordlevel import WordLevel
from .wordpiece import WordPiece

__all__ = [
    "BPE",
    "JSON_TYPES",
    "Model",
    "PieceType",
    "RankBPE",
    "SentencePieceBPE",
    "SentencePieceUnigram",
    "Spelling",
    "Unigram",
    "WordLevel",
    "WordPiece",
    "merges_for_ranks",
    "model_from_json",
]

#: ``tokenizer.json`` ``"type"`` -> class, for ``model_from_json``.
JSON_TYPES: Final[Mapping[str, type[Model]]] = {cls.type_name: cls for cls in (BPE, WordPiece, WordLevel, Unigram)}


def model_from_json(obj: object, path: str = "model") -> Model:
    """Build the model of a ``tokenizer.json`` ``"model"`` object.

    The class is ``JSON_TYPES[obj["type"]]``; an unknown ``"type"`` raises
    ``NotImplementedError`` naming it and ``path``; a malformed object raises
    ``TokenizerFileError`` (a ``ValueError``) naming the JSON path.

    >>> model = model_from_json({"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]})
    >>> model.encode_piece("abb")
    (2, 1)
    >>> model_from_json({"type": "BPE", "vocab": {"a": 0}, "ignore_merges": "yes"})
    Traceback (most recent call last):
    ...
    tokstream.errors.TokenizerFileError: model.ignore_merges: expected a boolean, got the string 'yes'
    """
    return from_table(JSON_TYPES, obj, path, "model")

"""Segmentation models: turn one pre-token into ids.

- ``ranks.py``: tiktoken's byte-level BPE over merge ranks (rank files);
- ``bpe.py``: Hugging Face's BPE over an ordered merge list;
- ``wordpiece.py``: greedy longest match (BERT);
- ``unigram.py``: a unigram language model (Viterbi, sampling, n-best);
- ``sentencepiece.py``: SentencePiece's score-based BPE and its Unigram lattice;
- ``base.py``: what the pipeline needs from every model, and what a model declares.
"""

from .base import Model, Spelling
from .bpe import BPE
from .ranks import RankBPE, merges_for_ranks
from .sentencepiece import PieceType, SentencePieceBPE, SentencePieceUnigram
from .unigram import Unigram
from .wordpiece import WordPiece

__all__ = [
    "BPE",
    "Model",
    "PieceType",
    "RankBPE",
    "SentencePieceBPE",
    "SentencePieceUnigram",
    "Spelling",
    "Unigram",
    "WordPiece",
    "merges_for_ranks",
]

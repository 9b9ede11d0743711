"""tokstream: exact, fast tokenization for the inference side of LLMs.

The public names of the API contract, and nothing else.

>>> import tokstream
>>> tok = tokstream.load("cl100k_base")
>>> tok.encode("hello world")
[15339, 1917]
"""

from __future__ import annotations

import os

from .errors import (
    HashMismatchError,
    InvalidTokenIdError,
    SpecialTokenError,
    TokenizerFileError,
    TokstreamError,
    UnknownTokenizerError,
)
from .tokenizer import Tokenizer
from .stream import StreamDecoder, StreamEncoder, adecode, aencode
from .cache import CachePlan, PrefixCachePlanner, PrefixIndex
from .constrain import (
    Constraint,
    Healing,
    TokenMasker,
    choice_constraint,
    heal,
    prefix_constraint,
    unreachable_tokens,
    verify_draft,
)
from . import metrics
from .train.bpe import train_bpe
from .train.counting import count_pretokens
from .train.extend import ExtensionReport, extend, extension_report
from .train.unigram import train_unigram
from .train.wordpiece import train_wordpiece

__version__ = "0.1.0"

__all__ = [
    "Tokenizer",
    "load",
    "count_pretokens",
    "train_bpe",
    "train_wordpiece",
    "train_unigram",
    "metrics",
    "StreamDecoder",
    "StreamEncoder",
    "adecode",
    "aencode",
    "heal",
    "Healing",
    "prefix_constraint",
    "choice_constraint",
    "Constraint",
    "TokenMasker",
    "unreachable_tokens",
    "verify_draft",
    "PrefixCachePlanner",
    "CachePlan",
    "PrefixIndex",
    "extend",
    "extension_report",
    "ExtensionReport",
    "TokstreamError",
    "InvalidTokenIdError",
    "SpecialTokenError",
    "UnknownTokenizerError",
    "TokenizerFileError",
    "HashMismatchError",
]


def load(name_or_path: str | os.PathLike[str]) -> Tokenizer:
    """Load a tokenizer by name or path.

    Names: ``"cl100k_base"``, ``"o200k_base"``, ``"r50k_base"`` (alias ``"gpt2"``),
    ``"p50k_base"`` and ``"default"`` (o200k_base), all embedded and sha256-checked, so
    no network is needed. A path may be a ``.tiktoken`` rank file named after one of
    those encodings (its pattern and specials come from the name), or a folder holding
    one. Unknown names raise ``UnknownTokenizerError`` (a ``ValueError``) listing the
    known ones. ``tokenizer.json`` files and SentencePiece ``.model`` files load too.

    >>> load("gpt2").name
    'r50k_base'
    """
    from .formats.registry import load as _load

    return _load(name_or_path)

"""tokstream: exact, fast tokenization for the inference side of LLMs.

The public names of the API contract, and nothing else.

>>> import tokstream
>>> tok = tokstream.load("cl100k_base")
>>> tok.encode("hello world")
[15339, 1917]
"""

from __future__ import annotations

import os

from . import metrics
from ._native_loader import native_available
from .cache import CachePlan, PrefixCachePlanner, PrefixIndex
from .constrain import (
    Constraint,
    Healing,
    TokenMasker,
    choice_constraint,
    grammar_constraint,
    heal,
    json_schema_constraint,
    prefix_constraint,
    regex_constraint,
    unreachable_tokens,
    verify_draft,
)
from .constrain.compile import compile_cache_info, compile_constraint, compile_constraint_async
from .errors import (
    HashMismatchError,
    InvalidTokenIdError,
    SpecialTokenError,
    TokenizerFileError,
    TokstreamError,
    UnknownTokenizerError,
    UnsupportedGrammarError,
    UnsupportedSchemaError,
)
from .stream import StreamDecoder, StreamEncoder, adecode, aencode
from .tokenizer import Tokenizer
from .train.bpe import train_bpe
from .train.counting import count_pretokens
from .train.extend import ExtensionReport, extend, extension_report
from .train.unigram import train_unigram
from .train.wordpiece import train_wordpiece

__version__ = "0.1.0"

__all__ = [
    "CachePlan",
    "Constraint",
    "ExtensionReport",
    "HashMismatchError",
    "Healing",
    "InvalidTokenIdError",
    "PrefixCachePlanner",
    "PrefixIndex",
    "SpecialTokenError",
    "StreamDecoder",
    "StreamEncoder",
    "TokenMasker",
    "Tokenizer",
    "TokenizerFileError",
    "TokstreamError",
    "UnknownTokenizerError",
    "UnsupportedGrammarError",
    "UnsupportedSchemaError",
    "adecode",
    "aencode",
    "choice_constraint",
    "compile_cache_info",
    "compile_constraint",
    "compile_constraint_async",
    "count_pretokens",
    "extend",
    "extension_report",
    "grammar_constraint",
    "heal",
    "json_schema_constraint",
    "load",
    "metrics",
    "native_available",
    "prefix_constraint",
    "regex_constraint",
    "train_bpe",
    "train_unigram",
    "train_wordpiece",
    "unreachable_tokens",
    "verify_draft",
]


def load(name_or_path: str | os.PathLike[str]) -> Tokenizer:
    """Load a tokenizer by name or path.

    Names: ``"cl100k_base"``, ``"o200k_base"``, ``"r50k_base"`` (alias ``"gpt2"``),
    ``"p50k_base"`` and ``"default"`` (o200k_base), all embedded and sha256-checked, so
    no network is needed. A path may be a ``.tiktoken`` rank file named after one of
    those encodings (its pattern and specials come from the name), or a folder holding
    one. Unknown names raise ``UnknownTokenizerError`` (a ``ValueError``) listing the
    known ones. ``tokenizer.json`` files and SentencePiece ``.model`` files load too.

    >>> load("gpt2").name  # as tiktoken's get_encoding("gpt2"); r50k_base's ranks
    'gpt2'
    """
    from .formats.registry import load as _load

    return _load(name_or_path)

"""Named encodings: the four OpenAI rank files embedded in the package, and ``load``.

The rank files ship xz-compressed in ``tokstream/data`` (2.2 MB for all four) and are
checked against their published sha256 on every load, so ``load("cl100k_base")`` works
offline and cannot silently use a damaged file. Loaded tokenizers are kept per process,
as tiktoken keeps its encodings.
"""

from __future__ import annotations

import lzma
import os
import threading
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Final

from ..errors import TokenizerFileError, UnknownTokenizerError
from . import gc_paused
from .tiktoken import check_sha256, parse_ranks

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["ALIASES", "DEFAULT", "ENCODINGS", "known_names", "load", "load_embedded"]

_ENDOFTEXT = "<|endoftext|>"


@dataclass(frozen=True)
class _Encoding:
    sha256: str
    pattern: str  # a name in pre_tokenizers.PATTERNS
    special_tokens: dict[str, int]
    n_vocab: int


ENCODINGS: Final[dict[str, _Encoding]] = {
    "r50k_base": _Encoding(
        "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
        "r50k_base",
        {_ENDOFTEXT: 50256},
        50257,
    ),
    "p50k_base": _Encoding(
        "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
        "p50k_base",
        {_ENDOFTEXT: 50256},
        50281,
    ),
    "cl100k_base": _Encoding(
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        "cl100k_base",
        {
            _ENDOFTEXT: 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
        100277,
    ),
    "o200k_base": _Encoding(
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "o200k_base",
        {_ENDOFTEXT: 199999, "<|endofprompt|>": 200018},
        200019,
    ),
}

#: The embedded default tokenizer: OpenAI's newest public encoding.
DEFAULT: Final = "o200k_base"
ALIASES: Final[dict[str, str]] = {"gpt2": "r50k_base", "default": DEFAULT}
#: Aliases that are tiktoken's own encoding names: tiktoken's ``get_encoding("gpt2")``
#: is an encoding *named* ``"gpt2"`` over r50k_base's ranks, so ours is too (sharing
#: r50k_base's pipeline); ``"default"`` is ours, and gives the encoding itself.
_NAMED_ALIASES: Final = frozenset({"gpt2"})

_loaded: dict[str, Tokenizer] = {}
_lock = threading.Lock()


def known_names() -> list[str]:
    """Every name ``load`` accepts, aliases included."""
    return [*ENCODINGS, *ALIASES]


def load_embedded(name: str) -> Tokenizer:
    """Load a named encoding from the package data (cached per process)."""
    from ..tokenizer import Tokenizer

    canonical = ALIASES.get(name, name)
    if canonical not in ENCODINGS:
        raise UnknownTokenizerError(f"unknown tokenizer {name!r}; known names: {', '.join(known_names())}")
    if name in _NAMED_ALIASES:
        base = load_embedded(canonical)
        with _lock:
            tok = _loaded.get(name)
            if tok is None:
                tok = _loaded[name] = Tokenizer(pipeline=base.pipeline, name=name, recipe=(load_embedded, (name,)))
        return tok
    with _lock:
        tok = _loaded.get(canonical)
        if tok is None:
            spec = ENCODINGS[canonical]
            label = f"{canonical}.tiktoken"
            packed = resources.files("tokstream").joinpath("data", label + ".xz").read_bytes()
            try:
                data = lzma.decompress(packed)
            except lzma.LZMAError as e:
                raise TokenizerFileError(f"embedded {label}.xz is damaged: {e}") from e
            check_sha256(data, spec.sha256, label)
            with gc_paused():
                tok = Tokenizer(
                    parse_ranks(data, label),
                    pattern=spec.pattern,
                    special_tokens=spec.special_tokens,
                    name=canonical,
                    explicit_n_vocab=spec.n_vocab,
                    recipe=(load_embedded, (canonical,)),  # pickles as its name
                )
            _loaded[canonical] = tok
    return tok


def load(name_or_path: str | os.PathLike[str]) -> Tokenizer:
    """Load a tokenizer by name or from a path (see ``tokstream.load``).

    A path dispatches on the file kind: ``*.json`` (Hugging Face), ``*.model``
    (SentencePiece), ``*.tiktoken`` (rank file named after a known encoding), or a
    folder holding one of them.
    """
    from ..tokenizer import Tokenizer

    if isinstance(name_or_path, str) and (name_or_path in ENCODINGS or name_or_path in ALIASES):
        return load_embedded(name_or_path)
    path = os.fspath(name_or_path)
    if not isinstance(path, str):
        raise TypeError(f"load() takes a name or a path, not {type(name_or_path).__name__}")
    if os.path.isdir(path):
        path = _find_in_folder(path)
    elif not os.path.exists(path):
        looks_like_path = os.sep in path or "." in os.path.basename(path)
        if looks_like_path:
            raise TokenizerFileError(f"no such tokenizer file: {path!r}")
        raise UnknownTokenizerError(f"unknown tokenizer {path!r}; known names: {', '.join(known_names())}")
    base = os.path.basename(path)
    if base.endswith(".tiktoken"):
        stem = base[: -len(".tiktoken")]
        spec = ENCODINGS.get(ALIASES.get(stem, stem))
        if spec is None:
            raise UnknownTokenizerError(
                f"{base}: cannot tell which pre-tokenizer pattern this rank file uses; "
                f"name it after a known encoding ({', '.join(ENCODINGS)}) or call "
                f"Tokenizer.from_tiktoken(path, pattern=..., special_tokens=...)"
            )
        return Tokenizer.from_tiktoken(
            path,
            pattern=spec.pattern,
            special_tokens=spec.special_tokens,
            name=stem,
            expected_hash=spec.sha256,
        )
    if base.endswith(".json"):
        return Tokenizer.from_file(path)
    if base.endswith(".model"):
        return Tokenizer.from_sentencepiece(path)
    raise UnknownTokenizerError(
        f"{base}: not a tokenizer file tokstream can read (expected tokenizer.json, a "
        f"SentencePiece .model or a .tiktoken rank file)"
    )


def _find_in_folder(folder: str) -> str:
    candidates = sorted(f for f in os.listdir(folder) if f == "tokenizer.json" or f.endswith((".tiktoken", ".model")))
    if not candidates:
        raise TokenizerFileError(f"{folder!r} holds no tokenizer.json, .tiktoken or .model file")
    return os.path.join(folder, candidates[0])

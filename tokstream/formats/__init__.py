"""Tokenizer files: each format is read into (and written from) the core's stages.

- ``tiktoken.py``: rank files (``<base64 token> <rank>`` lines), checked line by line;
- ``registry.py``: the four embedded OpenAI encodings, sha256-checked, and ``load``;
- ``hf_json.py``: Hugging Face ``tokenizer.json``: the table from its keys to the stage
  packages' ``from_json`` dispatchers, and ``tokenizers``' rule for added-token ids;
- ``sentencepiece.py``: the ``.model`` protobuf, read without ``protobuf``;
- ``spm_pipeline.py``: the pipeline a ``.model`` implies.

Readers return pipelines or ranks, never a ``Tokenizer``: ``Tokenizer.from_*`` import
them lazily and wrap the result, so no import runs in a circle. Each reader runs inside
``reading(source)``, which puts the file's name in front of any error its components
raise (they name only the JSON path or line), so no component needs the file name.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import TokenizerFileError, TokstreamError, UnsupportedComponentError

__all__ = ["gc_paused", "reading"]


@contextmanager
def reading(source: str) -> Iterator[None]:
    """Make every error raised inside name ``source`` (``"{source}: {message}"``).

    A ``TokenizerFileError`` keeps its class (``HashMismatchError``, ...); any other
    ``TokstreamError`` (a component's own check) becomes a ``TokenizerFileError``; a
    ``NotImplementedError`` (a component tokstream does not implement) an
    ``UnsupportedComponentError``; a ``RecursionError`` (a structure nested past what
    the readers bound) a ``TokenizerFileError`` saying so. A message that starts with
    ``source`` already is left alone.
    """
    try:
        yield
    except TokenizerFileError as e:
        if str(e).startswith(source):
            raise
        raise type(e)(f"{source}: {e}") from e
    except NotImplementedError as e:
        raise UnsupportedComponentError(f"{source}: {e}") from e
    except TokstreamError as e:
        raise TokenizerFileError(f"{source}: {e}") from e
    except RecursionError as e:
        raise TokenizerFileError(f"{source}: nested too deeply to read ({e})") from None


@contextmanager
def gc_paused() -> Iterator[None]:
    """Run a reader with the cyclic garbage collector off: building a vocabulary
    makes hundreds of thousands of objects, none of them cyclic garbage, and the
    collections they trigger cost ~10% of loading Llama 3's ``tokenizer.json``. The
    collector's previous state is restored (a caller that had disabled it keeps it off).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()

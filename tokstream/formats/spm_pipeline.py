"""A SentencePiece ``.model`` as a pipeline, with ids equal to ``sentencepiece``'s.

``formats/sentencepiece.py`` reads the protobuf; this module builds the pipeline from
its stages (``normalizers.SentencePieceNormalizer``, ``pre_tokenizers.SpaceRunCut``,
``models.SentencePieceBPE`` / ``SentencePieceUnigram``, ``decoders.SentencePieceDecoder``):
SentencePiece's own normalization (``normalizer.cc``: user-defined symbols kept, the
precompiled charsmap by longest match, extra whitespace removed, a dummy ``▁``
prefix, spaces escaped as ``▁``), then the model (``SentencePieceBPE`` or
``Unigram``) on the normalized text, cut before each run of ``▁`` that follows
another character when no piece holds ``▁`` right after another character (then no
merge or lattice path can cross that point, so the cut is exact and each word is
cached), and SentencePiece's decode (``SentencePieceProcessor::Decode``, 0.2).
Control and unknown pieces are special tokens; encoding with
``disallowed_special=()`` gives ``sentencepiece``'s ids for any text.

Not handled: the WORD and CHAR model types (``NotImplementedError``);
``treat_whitespace_as_suffix`` models are encoded without the word cut. Offsets
(``normalize_aligned``) take the byte-by-byte path.

Saving (``to_json``)
--------------------
``Tokenizer.save`` writes the pipeline as a ``tokenizer.json`` only where the Hugging
Face components give the same ids as ``sentencepiece``: the whitespace options become
``Replace`` (regex) / ``Prepend`` normalizers, the word cut a ``Split`` pre-tokenizer,
BPE a merge list ordered by piece score (ties: see ``_check_ties``), Unigram its scored
pieces; control and unknown pieces are special added tokens. What has no exact
equivalent raises ``TokstreamError`` naming the option, never a file with other ids:

- a precompiled charsmap (``nfkc``, ``nmt_nfkc``, ...): ``tokenizers``' ``Precompiled``
  applies it per grapheme cluster and takes the *shortest* key for a whole cluster
  (``'ﬁ'`` + U+0301 -> ``'fi'``; ``'A'`` + three U+0300 stays as is), SentencePiece
  the longest key at each position (``'fí'``, ``'À'`` + two U+0300); no charsmap and
  no mix of the other normalizers reproduces the longest-match scan. (``Precompiled``
  plus ``Strip`` and ``Replace``, the converters' form, also differs on whitespace:
  ``'a▁'``, ``'\\ta'``.)
- ``treat_whitespace_as_suffix``; user-defined pieces (``tokenizers`` matches added
  tokens in the raw text, SentencePiece in the normalized text, inside the model);
  UNUSED pieces; byte pieces of a Unigram model (its lattice would match the text
  ``'<0x41>'``); BPE pieces holding a character that is not a piece itself
  (SentencePiece merges through it, ``tokenizers`` cannot); tied BPE scores other
  than runs of one character.

The file decodes as ``tokenizers`` decodes (``<unk>`` rather than the ``" ⁇ "``
surface, control tokens shown unless skipped, an invalid byte run as one U+FFFD per
byte, one leading space stripped); ids are what it keeps exact. A control or
unknown piece's literal in the text (``"<s>"``) is encoded as that token there, as
``encode(..., allowed_special="all")`` does here; the fingerprint of the file loaded
back equals the original's.
"""

from __future__ import annotations

import os

from ..added_vocabulary import AddedToken
from ..decoders import SentencePieceDecoder
from ..errors import TokenizerFileError
from ..models.base import Model
from ..models.sentencepiece import PieceType, SentencePieceBPE, SentencePieceUnigram
from ..normalizers.sentencepiece import SentencePieceNormalizer
from ..pipeline import Pipeline
from ..pre_tokenizers.sentencepiece import SpaceRunCut, cuttable
from . import gc_paused, reading
from .sentencepiece import parse_sentencepiece

__all__ = ["read_sentencepiece_file", "sentencepiece_pipeline"]


def read_sentencepiece_file(path: str | os.PathLike[str]) -> tuple[bytes, str]:
    """A ``.model`` file's bytes and its name (the file's stem; pass the file's own
    name as ``sentencepiece_pipeline``'s ``source``)."""
    source = os.fspath(path)
    try:
        with open(source, "rb") as f:
            data = f.read()
    except OSError as e:
        raise TokenizerFileError(f"cannot read sentencepiece model {source!r}: {e.strerror}") from e
    return data, os.path.basename(source).removesuffix(".model")


def sentencepiece_pipeline(data: bytes, *, name: str, source: str | None = None) -> Pipeline:
    """The pipeline of a ``.model`` file's bytes; ``source`` (the file's name, by
    default ``name``) starts every error message."""
    source = source or name
    with reading(source), gc_paused():
        return _pipeline(data, source)


def _pipeline(data: bytes, source: str) -> Pipeline:
    m = parse_sentencepiece(data, source)
    pieces = [(p.piece, float(p.score), int(p.type)) for p in m.pieces]
    kinds = [k for _, _, k in pieces]
    # As sentencepiece: the unknown id is the UNKNOWN piece's (exactly one, checked by
    # the reader), not trainer_spec.unk_id, which only the trainer reads.
    unk_id = kinds.index(PieceType.UNKNOWN)
    model_type = int(m.model_type)
    model: Model
    if model_type == 2:
        model = SentencePieceBPE(pieces, unk_id=unk_id, byte_fallback=m.byte_fallback)
    elif model_type == 1:
        model = SentencePieceUnigram(pieces, unk_id=unk_id, byte_fallback=m.byte_fallback)
    else:
        raise NotImplementedError(f"SentencePiece model type {m.model_type.name} is not supported")
    normalizer = SentencePieceNormalizer(
        precompiled_charsmap=m.precompiled_charsmap,
        user_defined=[t for t, _, k in pieces if k == PieceType.USER_DEFINED],
        add_dummy_prefix=m.add_dummy_prefix,
        remove_extra_whitespaces=m.remove_extra_whitespaces,
        escape_whitespaces=m.escape_whitespaces,
        treat_whitespace_as_suffix=m.treat_whitespace_as_suffix,
        rule_name=m.normalizer_name,
    )
    pre = SpaceRunCut() if cuttable(pieces) and not m.treat_whitespace_as_suffix else None
    # Control pieces (<s>, </s>) and the unknown piece are specials, as in the
    # tokenizer.json files converted from .model files; byte pieces are ordinary.
    added = [
        AddedToken(id=i, content=t, special=True)
        for i, (t, _, k) in enumerate(pieces)
        if k in (PieceType.UNKNOWN, PieceType.CONTROL)
    ]
    decoder = SentencePieceDecoder(
        control={t for t, _, k in pieces if k == PieceType.CONTROL},
        unk=pieces[unk_id][0],
        unk_surface=m.unk_surface,
        byte_pieces={t for t, k in zip((p for p, _, _ in pieces), kinds) if k == PieceType.BYTE},
        add_dummy_prefix=m.add_dummy_prefix,
        remove_extra_whitespaces=m.remove_extra_whitespaces,
    )
    return Pipeline(model=model, added=added, normalizer=normalizer, pre_tokenizer=pre, decoder=decoder)

"""SentencePiece ``.model`` files: the ``ModelProto`` message, read without protobuf.

A ``.model`` file is one serialized ``sentencepiece.ModelProto`` (``sentencepiece_model.proto``
in google/sentencepiece). This module reads its protobuf wire format itself and returns plain
frozen dataclasses, so tokstream does not depend on the ``protobuf`` package. It reads the
fields that decide how text is encoded and decoded:

- ``pieces`` (field 1): each ``SentencePiece`` with its ``piece``, ``score`` and ``type``;
- ``trainer_spec`` (field 2): the model type, byte fallback, the special pieces and ids, and
  the splitting options (``split_by_whitespace``, ``split_digits``, ...);
- ``normalizer_spec`` (field 3): the normalization rule name, its precompiled charsmap and
  the whitespace options;
- ``denormalizer_spec`` (field 5), when present.

Absent fields take their proto2 defaults from the ``.proto`` (``bos_id`` 1, ``pad_id`` -1,
``add_dummy_prefix`` true, ...); these are the dataclass defaults below. Protobuf semantics
are kept where a writer may rely on them: fields may come in any order, a repeated scalar
field keeps its last value, a repeated sub-message (``trainer_spec`` twice) is merged, and
unknown fields (including the removed ``self_test_data``, field 4) are skipped by wire type.

It is stricter than protobuf about damage, because a ``.model`` file is written once by
sentencepiece and anything odd in it is a broken file, not a newer writer. Each of these
raises ``TokenizerFileError`` naming the file, the byte offset and, where known, the field
path (``pieces[1234].piece``): a truncated file, a length running past the end of the file
or of its enclosing message, a varint longer than 10 bytes or beyond 64 bits, a wire type
that is invalid (6, 7), a group (3, 4; deprecated, never written by sentencepiece), field
number 0, a known field with the wrong wire type (protobuf would file it as unknown), a
bool other than 0/1, an int32 or enum out of its 32-bit range, an unknown piece or model
type (proto2 would keep the default), and invalid UTF-8 in a string. A file without
``trainer_spec`` or ``normalizer_spec`` is refused as truncated: sentencepiece always writes
both, after the pieces, so only a cut file lacks them (a cut that lands exactly on a field
boundary after them cannot be told from a complete file; such a prefix parses). A file
that fails before its first piece and does not start as every ``.model`` does (``0x0a``,
the first piece's tag) is reported as ``not a SentencePiece model``, with its first
bytes (a ``tokenizer.json``, a text file), rather than by the wire-format detail.

It also makes the checks sentencepiece makes when it loads a model (``InitializePieces``):
an empty piece, a piece defined twice, no or two ``UNKNOWN`` pieces, a ``BYTE`` piece that
is not ``<0x00>``..``<0xFF>`` or is in a model without ``byte_fallback``, and a
``byte_fallback`` model without all 256. Not these: the checks of a particular model type
(a unigram model without ``NORMAL`` pieces), and the NUL in a piece that sentencepiece
>= 0.2.2 refuses but earlier versions load.

Not read: ``self_test_data``, the training-only ``trainer_spec`` fields (input files,
vocabulary size, sampling options, ``control_symbols`` / ``user_defined_symbols``, whose
pieces are in ``pieces`` anyway) and ``normalization_rule_tsv``; extensions (fields 200 and
up) are skipped like other unknown fields. Interpreting ``precompiled_charsmap`` is the
normalizer's job, not this module's.

Performance notes: the Mistral 7B model (32,000 pieces, 493 KB) parses in about 40 ms:
18 ms reading the pieces, 16 ms building the ``Piece`` objects (a frozen dataclass costs
about 0.5 us to construct), 4 ms for the checks. Reading every piece field by field with
``_read_message`` took 128 ms, nearly all of it per-field dispatch; so
``_read_pieces_fast`` matches the layout sentencepiece writes for almost every piece
(``0a L 0a l <piece> [15 <score>] [18 <type>]``, one-byte lengths) by direct byte indexing,
and hands anything else, one piece at a time, to ``_read_message``. Both produce the same
result; the tests check that with pieces written in unusual layouts. Pieces are collected
as three columns so the checks run on plain lists (``set``, ``list.count``) at C speed.
"""

from __future__ import annotations

import enum
import os
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, NoReturn

from ..errors import TokenizerFileError
from ..models.sentencepiece import PieceType  # defined once, with the models that use it

__all__ = [
    "ModelType",
    "NormalizerSpec",
    "Piece",
    "PieceType",
    "SentencePieceModel",
    "parse_sentencepiece",
    "read_sentencepiece",
]


class ModelType(enum.IntEnum):
    """``TrainerSpec.ModelType``: the segmentation algorithm of the model."""

    UNIGRAM = 1
    BPE = 2
    WORD = 3
    CHAR = 4


@dataclass(frozen=True, slots=True)
class Piece:
    """One vocabulary entry: its text, its score (log probability or merge rank) and type.

    >>> Piece("\u2581the", -3.5)
    Piece(piece='▁the', score=-3.5, type=<PieceType.NORMAL: 1>)
    """

    piece: str
    score: float = 0.0
    type: PieceType = PieceType.NORMAL


@dataclass(frozen=True, slots=True)
class NormalizerSpec:
    """A ``NormalizerSpec`` message (used here for ``denormalizer_spec``), with proto defaults."""

    name: str = ""
    precompiled_charsmap: bytes = b""
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True


@dataclass(frozen=True, slots=True)
class SentencePieceModel:
    """The encoding-relevant content of a SentencePiece ``ModelProto``.

    ``pieces[i]`` is the piece of id ``i``. The other fields are ``trainer_spec`` and
    ``normalizer_spec`` fields under their proto names (``normalizer_name`` is
    ``normalizer_spec.name``); their defaults are the proto2 defaults that apply when a
    field is absent from the file. The ``*_id`` fields are what the trainer recorded
    (-1: none); sentencepiece's ``bos_id()`` etc. look the ``*_piece`` up among the
    pieces instead, which agrees for every model sentencepiece trains.

    >>> model = SentencePieceModel(pieces=(Piece("<unk>", type=PieceType.UNKNOWN),))
    >>> model.model_type, model.bos_id, model.pad_id, model.add_dummy_prefix
    (<ModelType.UNIGRAM: 1>, 1, -1, True)
    """

    pieces: tuple[Piece, ...]
    # trainer_spec
    model_type: ModelType = ModelType.UNIGRAM
    byte_fallback: bool = False
    unk_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    pad_id: int = -1
    unk_piece: str = "<unk>"
    bos_piece: str = "<s>"
    eos_piece: str = "</s>"
    pad_piece: str = "<pad>"
    unk_surface: str = " \u2047 "
    max_sentencepiece_length: int = 16
    split_by_unicode_script: bool = True
    split_by_number: bool = True
    split_by_whitespace: bool = True
    treat_whitespace_as_suffix: bool = False
    allow_whitespace_only_pieces: bool = False
    split_digits: bool = False
    # normalizer_spec
    normalizer_name: str = ""
    precompiled_charsmap: bytes = b""
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True
    # denormalizer_spec, None when the file has none
    denormalizer: NormalizerSpec | None = None


# ---------------------------------------------------------------- the schema

# Wire types.
_VARINT: Final = 0
_I64: Final = 1
_LEN: Final = 2
_SGROUP: Final = 3
_EGROUP: Final = 4
_I32: Final = 5

# Field kinds, each with the wire type it must arrive in.
_BOOL: Final = 0
_INT32: Final = 1
_STRING: Final = 2
_BYTES: Final = 3
_FLOAT: Final = 4
_PIECE_TYPE: Final = 5
_MODEL_TYPE: Final = 6
_KIND_WIRE: Final = (_VARINT, _VARINT, _LEN, _LEN, _I32, _VARINT, _VARINT)
_KIND_NAME: Final = ("bool", "int32", "string", "bytes", "float", "enum Type", "enum ModelType")
_WIRE_NAME: Final = ("varint", "64-bit", "length-delimited", "group start", "group end", "32-bit")

# A message schema: field number -> (name in the .proto, kind, attribute name in our class).
_Schema = dict[int, tuple[str, int, str]]

_PIECE_FIELDS: Final[_Schema] = {
    1: ("piece", _STRING, "piece"),
    2: ("score", _FLOAT, "score"),
    3: ("type", _PIECE_TYPE, "type"),
}

# Only the trainer_spec fields that matter after training; the rest are skipped.
_TRAINER_FIELDS: Final[_Schema] = {
    number: (name, kind, name)
    for number, name, kind in [
        (3, "model_type", _MODEL_TYPE),
        (20, "max_sentencepiece_length", _INT32),
        (21, "split_by_unicode_script", _BOOL),
        (22, "split_by_whitespace", _BOOL),
        (23, "split_by_number", _BOOL),
        (24, "treat_whitespace_as_suffix", _BOOL),
        (25, "split_digits", _BOOL),
        (26, "allow_whitespace_only_pieces", _BOOL),
        (35, "byte_fallback", _BOOL),
        (40, "unk_id", _INT32),
        (41, "bos_id", _INT32),
        (42, "eos_id", _INT32),
        (43, "pad_id", _INT32),
        (44, "unk_surface", _STRING),
        (45, "unk_piece", _STRING),
        (46, "bos_piece", _STRING),
        (47, "eos_piece", _STRING),
        (48, "pad_piece", _STRING),
    ]
}

_NORMALIZER_BASE: Final = [
    (1, "name", _STRING),
    (2, "precompiled_charsmap", _BYTES),
    (3, "add_dummy_prefix", _BOOL),
    (4, "remove_extra_whitespaces", _BOOL),
    (5, "escape_whitespaces", _BOOL),
]
# normalizer_spec lands in SentencePieceModel (``name`` as ``normalizer_name``) ...
_NORMALIZER_FIELDS: Final[_Schema] = {
    number: (name, kind, "normalizer_name" if name == "name" else name) for number, name, kind in _NORMALIZER_BASE
}
# ... denormalizer_spec in a NormalizerSpec.
_DENORMALIZER_FIELDS: Final[_Schema] = {number: (name, kind, name) for number, name, kind in _NORMALIZER_BASE}

_PIECE_TYPES: Final = {int(t): t for t in PieceType}
# sentencepiece's ByteToPiece: "<0x%02X>", upper-case hex.
_BYTE_PIECES: Final = {f"<0x{b:02X}>": b for b in range(256)}
_MODEL_TYPES: Final = {int(t): t for t in ModelType}
_unpack_f32: Final[Callable[[bytes, int], tuple[float]]] = struct.Struct("<f").unpack_from

_PLAIN_TYPES: Final = (PieceType.NORMAL, PieceType.USER_DEFINED, PieceType.UNUSED)

# The largest tag (key): field number 2**29 - 1, wire type 7.
_MAX_KEY: Final = (1 << 32) - 1


# ---------------------------------------------------------------- errors


def _fail(source: str, offset: int, path: str, message: str) -> NoReturn:
    where = f"{source}, byte {offset}, {path}" if path else f"{source}, byte {offset}"
    raise TokenizerFileError(f"{where}: {message}")


def _past(end: int, size: int, parent: str) -> str:
    """What a value runs past: the end of the file, or of its enclosing message."""
    if end >= size:
        return f"the end of the file ({size} bytes); the file looks truncated"
    return f"the end of its enclosing message {parent} at byte {end}"


# ---------------------------------------------------------------- wire format
#
# Every reader takes the message's ``end`` (so nothing runs past its message), the
# ``path`` of the value for error messages and the ``parent`` path of its message.


def _read_varint(data: bytes, pos: int, end: int, source: str, path: str, parent: str) -> tuple[int, int]:
    """The varint at ``pos`` and the position after it."""
    if pos < end and data[pos] < 0x80:
        return data[pos], pos + 1
    start = pos
    result = 0
    shift = 0
    while True:
        if pos >= end:
            _fail(source, start, path, f"varint runs past {_past(end, len(data), parent)}")
        b = data[pos]
        pos += 1
        if shift == 63 and b > 1:
            _fail(source, start, path, "varint is longer than 10 bytes or exceeds 64 bits")
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


def _read_tag(data: bytes, pos: int, end: int, source: str, parent: str) -> tuple[int, int, int]:
    """``(field number, wire type, position after the tag)`` of a valid, non-group tag."""
    key, after = _read_varint(data, pos, end, source, parent, parent)
    number = key >> 3
    wire = key & 7
    if key > _MAX_KEY or number == 0:
        _fail(source, pos, parent, f"invalid field number {number} (tag {key:#x})")
    if wire == _SGROUP or wire == _EGROUP:
        message = "groups are not supported (sentencepiece never writes them)"
        _fail(source, pos, parent, f"field {number} is a group (wire type {wire}); {message}")
    if wire > _I32:
        _fail(source, pos, parent, f"field {number} has invalid wire type {wire}")
    return number, wire, after


def _read_length(data: bytes, pos: int, end: int, source: str, path: str, parent: str) -> tuple[int, int]:
    """The length prefix at ``pos``: ``(payload start, payload end)``."""
    length, start = _read_varint(data, pos, end, source, path, parent)
    if start + length > end:
        _fail(source, pos, path, f"length {length} runs past {_past(end, len(data), parent)}")
    return start, start + length


def _read_fixed(data: bytes, pos: int, width: int, end: int, source: str, path: str, parent: str) -> int:
    """Check that a ``width``-byte value fits at ``pos``; returns the position after it."""
    if pos + width > end:
        _fail(
            source,
            pos,
            path,
            f"{width * 8}-bit value runs past {_past(end, len(data), parent)}",
        )
    return pos + width


def _skip_field(data: bytes, wire: int, pos: int, end: int, source: str, path: str, parent: str) -> int:
    """Skip the payload of a field the schema does not hold; returns the position after it."""
    if wire == _VARINT:
        return _read_varint(data, pos, end, source, path, parent)[1]
    if wire == _LEN:
        return _read_length(data, pos, end, source, path, parent)[1]
    return _read_fixed(data, pos, 8 if wire == _I64 else 4, end, source, path, parent)


def _decode_utf8(data: bytes, start: int, stop: int, source: str, path: str) -> str:
    try:
        return data[start:stop].decode("utf-8")
    except UnicodeDecodeError as e:
        raise TokenizerFileError(
            f"{source}, byte {start + e.start}, {path}: invalid UTF-8 ({e.reason}) in the "
            f"{stop - start}-byte string at byte {start}: {data[start:stop][:40]!r}"
        ) from e


def _read_message(
    data: bytes,
    pos: int,
    end: int,
    schema: _Schema,
    values: dict[str, Any],
    source: str,
    path: str,
) -> None:
    """Read the message in ``data[pos:end]`` into ``values`` (by attribute name).

    Fields not in ``schema`` are skipped; a field seen twice keeps its last value.
    """
    while pos < end:
        tag_pos = pos
        number, wire, pos = _read_tag(data, pos, end, source, path)
        field = schema.get(number)
        if field is None:
            pos = _skip_field(data, wire, pos, end, source, f"{path}.<field {number}>", path)
            continue
        name, kind, attr = field
        fpath = f"{path}.{name}"
        expected = _KIND_WIRE[kind]
        if wire != expected:
            _fail(
                source,
                tag_pos,
                fpath,
                f"field {number} ({_KIND_NAME[kind]}) has wire type {wire} "
                f"({_WIRE_NAME[wire]}), expected {expected} ({_WIRE_NAME[expected]})",
            )
        value: Any
        if kind == _STRING:
            start, pos = _read_length(data, pos, end, source, fpath, path)
            value = _decode_utf8(data, start, pos, source, fpath)
        elif kind == _BYTES:
            start, pos = _read_length(data, pos, end, source, fpath, path)
            value = data[start:pos]
        elif kind == _FLOAT:
            start = pos
            pos = _read_fixed(data, pos, 4, end, source, fpath, path)
            value = _unpack_f32(data, start)[0]
        else:
            start = pos
            raw, pos = _read_varint(data, pos, end, source, fpath, path)
            value = _convert_varint(raw, kind, source, start, fpath)
        values[attr] = value


def _convert_varint(raw: int, kind: int, source: str, offset: int, path: str) -> Any:
    """A varint field's value: ``bool``, ``int`` (int32) or an enum member."""
    if kind == _BOOL:
        if raw > 1:
            _fail(source, offset, path, f"bool value {raw}, expected 0 or 1")
        return raw == 1
    # int32 and enums are written as 64-bit two's complement: -1 takes 10 bytes.
    if raw >= 1 << 63:
        raw -= 1 << 64
    if not -(1 << 31) <= raw < 1 << 31:
        _fail(source, offset, path, f"value {raw} is out of the int32 range")
    if kind == _INT32:
        return raw
    members = _PIECE_TYPES if kind == _PIECE_TYPE else _MODEL_TYPES
    if raw not in members:
        what = "piece type" if kind == _PIECE_TYPE else "model type"
        known = ", ".join(f"{value} {member.name}" for value, member in members.items())
        _fail(source, offset, path, f"unknown {what} {raw}; known: {known}")
    return members[raw]


# ---------------------------------------------------------------- pieces


class _Pieces:
    """The pieces read so far, as three columns; ``Piece`` objects are built at the end."""

    __slots__ = ("scores", "texts", "types")

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.scores: list[float] = []
        self.types: list[PieceType] = []

    def build(self) -> tuple[Piece, ...]:
        return tuple(map(Piece, self.texts, self.scores, self.types))


def _read_pieces_fast(data: bytes, pos: int, size: int, pieces: _Pieces) -> int:
    """Read the pieces at ``pos`` that are in sentencepiece's usual layout.

    The layout: ``0a L 0a l <piece> [15 <f32 score>] [18 <type>]``, one-byte lengths
    ``L`` and ``l``, a non-empty valid UTF-8 piece, a known type, and the piece message
    ending right after its last field. Stops at the first field that is anything else
    (an unusual layout, another field, damage) and returns its position, for
    ``_read_message`` to read or to report.
    """
    add_text = pieces.texts.append
    add_score = pieces.scores.append
    add_type = pieces.types.append
    unpack = _unpack_f32
    types = _PIECE_TYPES
    normal = PieceType.NORMAL
    try:
        while pos + 1 < size and data[pos] == 0x0A:
            length = data[pos + 1]
            start = pos + 2
            stop = start + length
            if length >= 0x80 or length < 3 or stop > size or data[start] != 0x0A:
                break
            n = data[start + 1]
            p = start + 2 + n
            if n >= 0x80 or n == 0 or p > stop:
                break
            text = data[start + 2 : p].decode("utf-8")
            score = 0.0
            if p < stop and data[p] == 0x15:
                if p + 5 > stop:
                    break
                score = unpack(data, p + 1)[0]
                p += 5
            if p == stop:
                kind = normal
            elif p + 2 == stop and data[p] == 0x18 and data[p + 1] in types:
                kind = types[data[p + 1]]
            else:
                break
            add_text(text)
            add_score(score)
            add_type(kind)
            pos = stop
    except UnicodeDecodeError:
        pass  # _read_message reports it, with its offset
    return pos


def _read_piece(data: bytes, start: int, stop: int, pieces: _Pieces, source: str) -> None:
    """Read one ``SentencePiece`` message in ``data[start:stop]``, in any layout."""
    path = f"pieces[{len(pieces.texts)}]"
    values: dict[str, Any] = {}
    _read_message(data, start, stop, _PIECE_FIELDS, values, source, path)
    text = values.get("piece", "")
    if not text:
        _fail(
            source,
            start,
            f"{path}.piece",
            "the piece is empty or missing (sentencepiece: 'piece must not be empty.')",
        )
    pieces.texts.append(text)
    pieces.scores.append(values.get("score", 0.0))
    pieces.types.append(values.get("type", PieceType.NORMAL))


def _check_pieces(pieces: _Pieces, byte_fallback: bool, source: str) -> None:
    """The checks sentencepiece makes when it loads a model (``InitializePieces``).

    sentencepiece refuses a model that fails one; the messages quote its own. Each check
    is a C-speed test first (a set, ``list.count``) and a Python loop only to name the
    culprit. sentencepiece >= 0.2.2 also refuses a NUL in a piece; that is not checked
    here, because earlier versions load such models and published ones have them.
    """
    texts = pieces.texts
    types = pieces.types
    if len(set(texts)) != len(texts):
        # NORMAL, USER_DEFINED and UNUSED pieces share one namespace, the other types
        # another: sentencepiece allows '<s>' as both a CONTROL and a NORMAL piece.
        first_ids: tuple[dict[str, int], dict[str, int]] = ({}, {})
        for i, (text, kind) in enumerate(zip(texts, types)):
            first = first_ids[kind in _PLAIN_TYPES].setdefault(text, i)
            if first != i:
                raise TokenizerFileError(
                    f"{source}, pieces[{i}]: the piece {text!r} is already defined as "
                    f"pieces[{first}] (sentencepiece: '{text} is already defined.')"
                )
    n_unknown = types.count(PieceType.UNKNOWN)
    if n_unknown == 0:
        raise TokenizerFileError(
            f"{source}: no piece has type UNKNOWN; a model needs exactly one (sentencepiece: 'unk is not defined.')"
        )
    if n_unknown > 1:
        first = types.index(PieceType.UNKNOWN)
        second = types.index(PieceType.UNKNOWN, first + 1)
        raise TokenizerFileError(
            f"{source}, pieces[{second}]: a second UNKNOWN piece {texts[second]!r} after "
            f"pieces[{first}] (sentencepiece: 'unk is already defined.')"
        )
    n_bytes = types.count(PieceType.BYTE)
    if n_bytes == 0 and not byte_fallback:
        return
    byte_texts = {text for text, kind in zip(texts, types) if kind == PieceType.BYTE}
    if byte_fallback and len(byte_texts) == 256 and byte_texts <= _BYTE_PIECES.keys():
        return  # (the duplicate check above saw to it that there are 256 byte pieces)
    for i, (text, kind) in enumerate(zip(texts, types)):
        if kind != PieceType.BYTE:
            continue
        if not byte_fallback:
            raise TokenizerFileError(
                f"{source}, pieces[{i}]: byte piece {text!r} in a model without "
                f"byte_fallback (sentencepiece: 'byte piece {text} is found although "
                f"`byte_fallback` is false.')"
            )
        if text not in _BYTE_PIECES:
            raise TokenizerFileError(
                f"{source}, pieces[{i}]: byte piece {text!r} is not '<0x00>' to '<0xFF>' "
                f"(sentencepiece: 'byte piece {text} is invalid.')"
            )
    missing = " ".join(text for text in _BYTE_PIECES if text not in byte_texts)
    raise TokenizerFileError(
        f"{source}: trainer_spec.byte_fallback is true but {256 - len(byte_texts)} of the "
        f"256 byte pieces are missing: {missing[:70]}{'...' if len(missing) > 70 else ''} "
        f"(sentencepiece: 'there are not 256 byte pieces although `byte_fallback` is true.')"
    )


# ---------------------------------------------------------------- the model

_SUBMESSAGES: Final = {
    2: ("trainer_spec", _TRAINER_FIELDS),
    3: ("normalizer_spec", _NORMALIZER_FIELDS),
    5: ("denormalizer_spec", _DENORMALIZER_FIELDS),
}


def parse_sentencepiece(data: bytes, source: str = "<bytes>") -> SentencePieceModel:
    """Parse the bytes of a SentencePiece ``.model`` file.

    ``source`` names the file in error messages. Damage raises ``TokenizerFileError``
    naming the byte offset and field path (the module docstring lists what is checked);
    no other exception escapes, whatever the bytes.

    >>> data = bytes.fromhex(
    ...     "0a090a053c756e6b3e1802"  # pieces[0]: piece '<unk>', type 2 (UNKNOWN)
    ...     "0a0b0a04e2968161150000c0bf"  # pieces[1]: piece '▁a', score -1.5
    ...     "0a0a0a03e2968115000000c0"  # pieces[2]: piece '▁', score -2.0
    ...     "12021802"  # trainer_spec: model_type 2 (BPE)
    ...     "1a0a0a086964656e74697479"  # normalizer_spec: name 'identity'
    ... )
    >>> model = parse_sentencepiece(data)
    >>> model.pieces[1]
    Piece(piece='▁a', score=-1.5, type=<PieceType.NORMAL: 1>)
    >>> model.model_type, model.normalizer_name, model.bos_id, model.add_dummy_prefix
    (<ModelType.BPE: 2>, 'identity', 1, True)
    >>> parse_sentencepiece(data[:20], "cut.model")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
      ...
    tokstream.errors.TokenizerFileError: cut.model, byte 12, pieces[1]: length 11 runs past ...
    """
    if not isinstance(data, bytes):
        data = bytes(data)  # bytearray, memoryview: slices must be bytes
    if not data:
        raise TokenizerFileError(f"{source}: not a SentencePiece model: the file is empty")
    pieces = _Pieces()
    try:
        return _parse(data, source, pieces)
    except TokenizerFileError as e:
        if pieces.texts or data[0] == 0x0A:
            raise
        # Every .model starts with its first piece (field 1, length-delimited: 0x0a);
        # damage before any piece in a file that does not is most likely no .model.
        hint = ""
        if data.lstrip()[:1] in (b"{", b"["):
            hint = " (it looks like JSON: a tokenizer.json? Tokenizer.from_file reads those)"
        detail = str(e).removeprefix(f"{source}, ")
        raise TokenizerFileError(
            f"{source}: not a SentencePiece model{hint}: it starts with {data[:12]!r}; {detail}"
        ) from e


def _parse(data: bytes, source: str, pieces: _Pieces) -> SentencePieceModel:
    size = len(data)
    # Sub-message values by field number; a sub-message seen twice is merged, as in protobuf.
    specs: dict[int, dict[str, Any]] = {}
    pos = 0
    while pos < size:
        pos = _read_pieces_fast(data, pos, size, pieces)
        if pos >= size:
            break
        number, wire, after = _read_tag(data, pos, size, source, "")
        if number == 1 or number in _SUBMESSAGES:
            if number == 1:
                path = f"pieces[{len(pieces.texts)}]"
            else:
                path = _SUBMESSAGES[number][0]
            if wire != _LEN:
                _fail(
                    source,
                    pos,
                    path,
                    f"field {number} (a message) has wire type {wire} ({_WIRE_NAME[wire]}), "
                    f"expected 2 (length-delimited)",
                )
            start, stop = _read_length(data, after, size, source, path, "")
            if number == 1:
                _read_piece(data, start, stop, pieces, source)
            else:
                values = specs.setdefault(number, {})
                _read_message(data, start, stop, _SUBMESSAGES[number][1], values, source, path)
            pos = stop
        else:
            pos = _skip_field(data, wire, after, size, source, f"<field {number}>", "")
    for number in (2, 3):
        if number not in specs:
            name = _SUBMESSAGES[number][0]
            _fail(
                source,
                size,
                name,
                f"the file ends without {name}, which sentencepiece always writes after the "
                f"pieces ({len(pieces.texts)} read); the file looks truncated",
            )
    trainer = specs[2]
    _check_pieces(pieces, trainer.get("byte_fallback", False), source)
    denormalizer = specs.get(5)
    return SentencePieceModel(
        pieces=pieces.build(),
        **trainer,
        **specs[3],
        denormalizer=None if denormalizer is None else NormalizerSpec(**denormalizer),
    )


def read_sentencepiece(path: str | os.PathLike[str]) -> SentencePieceModel:
    """Read a SentencePiece ``.model`` file from disk (see ``parse_sentencepiece``).

    Errors name the file by its base name; an unreadable file raises ``TokenizerFileError``
    with the full path and the OS reason.
    """
    source = os.fspath(path)
    try:
        with open(source, "rb") as f:
            data = f.read()
    except OSError as e:
        raise TokenizerFileError(f"cannot read sentencepiece model {source!r}: {e.strerror}") from e
    return parse_sentencepiece(data, os.path.basename(source))

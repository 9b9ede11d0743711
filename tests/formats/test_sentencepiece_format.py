"""``tokstream.formats.sentencepiece``: the ``.model`` reader, against sentencepiece and protobuf.

- **Differential, fixtures:** every ``spm/*.model`` fixture against
  ``sentencepiece.SentencePieceProcessor`` (piece count, every piece, score and type, the
  special ids) and, when ``sentencepiece.sentencepiece_model_pb2`` imports (it needs the
  ``protobuf`` package, which is not a test dependency: those tests skip without it),
  every field against protobuf's own parse.
- **Differential, generated:** hypothesis writes models in the layouts protobuf allows
  (fields in any order, explicit defaults, unknown fields of every wire type, non-minimal
  varints, repeated fields, a ``trainer_spec`` split in two) with a small writer in this
  file; the reader must return what was written, what sentencepiece loads and what
  protobuf parses. This also checks the reader's fast path for pieces against its
  general one, since unusual layouts take the general one.
- **Damage:** a file cut at every byte of its first 2 KB, every byte of its tail, and at
  random points; hypothesis-mutated files; random bytes. Only ``TokenizerFileError`` may
  escape, its message names the file and a byte offset, and a parse succeeds only where a
  cut lands on a top-level field boundary (and then agrees with protobuf).
- **Errors:** each kind of damage names its byte offset and field path; each check
  sentencepiece makes on load is one sentencepiece makes too (it refuses the same file).

The fixture models are vendored in ``tests/data/spm`` (``helpers.fixture_file``).
"""

from __future__ import annotations

import functools
import math
import random
import struct
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import protowire
import pytest
from helpers import FIXTURES, assert_sequences_equal, fixture_file, fixture_names, has_fixture, missing_fixture
from hypothesis import assume, given
from hypothesis import strategies as st
from strategies import hyp_settings

from tokstream.errors import TokenizerFileError
from tokstream.formats.sentencepiece import (
    ModelType,
    NormalizerSpec,
    Piece,
    PieceType,
    SentencePieceModel,
    parse_sentencepiece,
    read_sentencepiece,
)

spm = pytest.importorskip("sentencepiece")

MODEL_NAMES = fixture_names("spm", "*.model") or ["<no spm fixtures>"]

#: The hypothesis budget of this file (``TOKSTREAM_MAX_EXAMPLES`` scales it, see strategies).
EXAMPLES = 500


def fixture_model(name: str) -> Path:
    return fixture_file(f"spm/{name}")


@functools.cache
def fixture_bytes(name: str) -> bytes:
    return fixture_model(name).read_bytes()


@functools.cache
def fixture_parsed(name: str) -> SentencePieceModel:
    return parse_sentencepiece(fixture_bytes(name), name)


@functools.lru_cache(maxsize=1)
def _model_pb2() -> Any:
    """``sentencepiece.sentencepiece_model_pb2``, or None when protobuf is unusable."""
    try:
        from sentencepiece import sentencepiece_model_pb2
    except Exception:
        return None
    return sentencepiece_model_pb2


def pb2_or_skip() -> Any:
    pb2 = _model_pb2()
    if pb2 is None:
        pytest.skip(
            "sentencepiece.sentencepiece_model_pb2 does not import: it needs the protobuf "
            "package (a test dependency: pip install '.[test]')"
        )
    return pb2


@pytest.fixture(params=MODEL_NAMES)
def model_name(request: pytest.FixtureRequest) -> str:
    name = str(request.param)
    fixture_model(name)
    return name


# ---------------------------------------------------------------- a protobuf writer

# The oracle side of the generated tests: a few lines that write the wire format, so a
# test can state what it wrote and compare that with what the reader returns.

VARINT, I64, LEN, I32 = 0, 1, 2, 5


def varint(value: int, *, pad: int = 0) -> bytes:
    """``value`` as a varint (negatives as 64-bit two's complement), ``pad`` extra bytes long."""
    if value < 0:
        value += 1 << 64
    pad = min(pad, 10 - max(1, (value.bit_length() + 6) // 7))  # at most 10 bytes in all
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value == 0 and pad == 0:
            out.append(byte)
            return bytes(out)
        if value == 0:
            pad -= 1  # a redundant continuation byte: non-minimal but valid
        out.append(byte | 0x80)


def tag(number: int, wire: int, *, pad: int = 0) -> bytes:
    return varint(number << 3 | wire, pad=pad)


def f_varint(number: int, value: int, *, pad: int = 0) -> bytes:
    return tag(number, VARINT) + varint(value, pad=pad)


def f_len(number: int, payload: bytes, *, pad: int = 0) -> bytes:
    return tag(number, LEN) + varint(len(payload), pad=pad) + payload


def f_float(number: int, value: float) -> bytes:
    return tag(number, I32) + struct.pack("<f", value)


# The reader's field tables, restated from sentencepiece_model.proto (the pb2 descriptor
# of the installed sentencepiece): number -> (attribute in SentencePieceModel, kind).
TRAINER_FIELDS = {
    3: ("model_type", "enum"),
    20: ("max_sentencepiece_length", "int32"),
    21: ("split_by_unicode_script", "bool"),
    22: ("split_by_whitespace", "bool"),
    23: ("split_by_number", "bool"),
    24: ("treat_whitespace_as_suffix", "bool"),
    25: ("split_digits", "bool"),
    26: ("allow_whitespace_only_pieces", "bool"),
    35: ("byte_fallback", "bool"),
    40: ("unk_id", "int32"),
    41: ("bos_id", "int32"),
    42: ("eos_id", "int32"),
    43: ("pad_id", "int32"),
    44: ("unk_surface", "string"),
    45: ("unk_piece", "string"),
    46: ("bos_piece", "string"),
    47: ("eos_piece", "string"),
    48: ("pad_piece", "string"),
}
NORMALIZER_FIELDS = {
    1: ("name", "string"),
    2: ("precompiled_charsmap", "bytes"),
    3: ("add_dummy_prefix", "bool"),
    4: ("remove_extra_whitespaces", "bool"),
    5: ("escape_whitespaces", "bool"),
}
# Proto2 defaults, copied from sentencepiece_model.proto (not from the reader).
PROTO_DEFAULTS = {
    "model_type": 1,
    "max_sentencepiece_length": 16,
    "split_by_unicode_script": True,
    "split_by_whitespace": True,
    "split_by_number": True,
    "treat_whitespace_as_suffix": False,
    "split_digits": False,
    "allow_whitespace_only_pieces": False,
    "byte_fallback": False,
    "unk_id": 0,
    "bos_id": 1,
    "eos_id": 2,
    "pad_id": -1,
    "unk_surface": " \u2047 ",
    "unk_piece": "<unk>",
    "bos_piece": "<s>",
    "eos_piece": "</s>",
    "pad_piece": "<pad>",
    "name": "",
    "precompiled_charsmap": b"",
    "add_dummy_prefix": True,
    "remove_extra_whitespaces": True,
    "escape_whitespaces": True,
}


def encode_scalar(number: int, kind: str, value: Any, *, pad: int = 0) -> bytes:
    if kind in ("string", "bytes"):
        payload = value.encode("utf-8") if kind == "string" else value
        return f_len(number, payload, pad=pad)
    return f_varint(number, int(value), pad=pad)


def unknown_field(draw: st.DrawFn, *, number: int | None = None) -> bytes:
    """A field the reader does not know, of any valid (non-group) wire type."""
    if number is None:
        number = draw(st.sampled_from([4, 9, 15, 16, 100, 199, 200, 5000, (1 << 29) - 1]))
    wire = draw(st.sampled_from([VARINT, I64, LEN, I32]))
    if wire == VARINT:
        # Small values too: "48 03" (field 9, value 3) looks like a type field to a
        # reader that checks the length but not the tag.
        return f_varint(number, draw(st.integers(0, 127) | st.integers(-(1 << 63), (1 << 64) - 1)))
    if wire == LEN:
        return f_len(number, draw(st.binary(max_size=20)))
    return tag(number, wire) + draw(st.binary(min_size=8 if wire == I64 else 4, max_size=8 if wire == I64 else 4))


@dataclass
class Written:
    """A generated model file and the model it should parse to."""

    data: bytes
    expected: SentencePieceModel


def _write_piece(draw: st.DrawFn, piece: Piece) -> bytes:
    """One SentencePiece message, in a layout drawn from what protobuf allows."""
    # An earlier value of a field that occurs again later: the last one wins.
    decoy = draw(st.sampled_from([None, None, None, None, "piece", "score", "type"]))
    parts: list[bytes] = []
    pad = draw(st.sampled_from([0, 0, 0, 1]))
    parts.append(f_len(1, piece.piece.encode("utf-8"), pad=pad))
    bits = struct.unpack("<I", struct.pack("<f", piece.score))[0]
    if bits != 0 or decoy == "score" or draw(st.booleans()):  # +0.0 is the default
        parts.append(f_float(2, piece.score))
    if piece.type != PieceType.NORMAL or decoy == "type" or draw(st.booleans()):
        parts.append(f_varint(3, piece.type, pad=draw(st.sampled_from([0, 0, 0, 2]))))
    if draw(st.integers(0, 5)) == 0:
        parts.insert(draw(st.integers(0, len(parts))), unknown_field(draw))
    if draw(st.integers(0, 4)) == 0:
        parts = draw(st.permutations(parts))
    if decoy is not None:
        parts.insert(
            0,
            {
                "piece": f_len(1, b"decoy"),
                "score": f_float(2, 123.0),
                "type": f_varint(3, 5),
            }[decoy],
        )
    message = b"".join(parts)
    return f_len(1, message, pad=draw(st.sampled_from([0, 0, 0, 0, 1])))


def _write_spec(draw: st.DrawFn, number: int, schema: dict[int, tuple[str, str]], values: dict[str, Any]) -> bytes:
    """A trainer_spec / normalizer_spec holding ``values``, maybe split in two messages."""
    parts = []
    for num, (name, kind) in schema.items():
        if name in values:
            pad = draw(st.sampled_from([0, 0, 1]))
            parts.append(encode_scalar(num, kind, values[name], pad=pad))
        elif draw(st.integers(0, 7)) == 0:
            # Explicitly written default.
            parts.append(encode_scalar(num, kind, PROTO_DEFAULTS[name]))
    parts += [
        unknown_field(draw, number=n)
        for n in draw(st.lists(st.sampled_from([1, 2, 7, 10, 11, 19, 30, 31, 33, 53, 54, 55, 200, 1000]), max_size=3))
        if n not in schema
    ]
    parts = draw(st.permutations(parts))
    split = draw(st.integers(0, len(parts)))
    if draw(st.booleans()) and 0 < split < len(parts):
        # Protobuf merges a sub-message that occurs twice.
        return f_len(number, b"".join(parts[:split])) + f_len(number, b"".join(parts[split:]))
    return f_len(number, b"".join(parts))


BYTE_PIECES = {
    f"<0x{b:02X}>": f_len(1, f_len(1, f"<0x{b:02X}>".encode()) + f_varint(3, PieceType.BYTE)) for b in range(256)
}

_piece_text = st.text(st.characters(codec="utf-8"), min_size=1, max_size=12) | st.text(
    st.characters(codec="utf-8"), min_size=30, max_size=60
)
_score = st.floats(width=32, allow_nan=False, allow_infinity=False) | st.sampled_from([0.0, -0.0, -1.5])
_plain_types = st.sampled_from(
    [PieceType.NORMAL, PieceType.NORMAL, PieceType.CONTROL, PieceType.USER_DEFINED, PieceType.UNUSED]
)


@st.composite
def written_models(draw: st.DrawFn) -> Written:
    """A valid model file, in a protobuf layout drawn at random, and its expected parse."""
    texts = draw(st.lists(_piece_text, unique=True, max_size=40))
    texts = [t for t in texts if not (t.startswith("<0x") and len(t) == 6)]
    pieces = [Piece(t, draw(_score), draw(_plain_types)) for t in texts]
    # A unigram model needs a NORMAL piece (sentencepiece: 'no pieces are loaded.'); that
    # check belongs to the unigram model, not to the file reader.
    normal = draw(_piece_text.filter(lambda t: t not in texts and not t.startswith("<")))
    pieces.insert(draw(st.integers(0, len(pieces))), Piece(normal, draw(_score)))
    unk_text = draw(st.sampled_from(["<unk>", "<UNK>", "\u2047"]))
    assume(unk_text not in texts)
    unk = Piece(unk_text, draw(_score), PieceType.UNKNOWN)
    pieces.insert(draw(st.integers(0, len(pieces))), unk)
    with_bytes = draw(st.integers(0, 9)) == 0
    if with_bytes:
        byte_pieces = [Piece(f"<0x{b:02X}>", 0.0, PieceType.BYTE) for b in range(256)]
        at = draw(st.integers(0, len(pieces)))
        pieces[at:at] = byte_pieces

    trainer: dict[str, Any] = {}
    for name, kind in TRAINER_FIELDS.values():
        if draw(st.integers(0, 2)) == 0:
            if name == "model_type":
                trainer[name] = draw(st.sampled_from(list(ModelType)))
            elif kind == "bool":
                trainer[name] = draw(st.booleans())
            elif kind == "int32":
                trainer[name] = draw(st.sampled_from([-(1 << 31), -1, 0, 1, 7, (1 << 31) - 1]))
            else:
                trainer[name] = draw(st.text(st.characters(codec="utf-8"), max_size=6))
    trainer["byte_fallback"] = with_bytes
    if not with_bytes and draw(st.booleans()):
        del trainer["byte_fallback"]
    normalizer: dict[str, Any] = {}
    for name, kind in NORMALIZER_FIELDS.values():
        if draw(st.integers(0, 2)) == 0:
            if kind == "bool":
                normalizer[name] = draw(st.booleans())
            elif kind == "string":
                normalizer[name] = draw(st.sampled_from(["", "identity", "nmt_nfkc", "nfkc_cf"]))
            else:
                # sentencepiece parses a charsmap when it loads; only an empty one is safe.
                normalizer[name] = b""
    has_denormalizer = draw(st.integers(0, 3)) == 0
    denormalizer: dict[str, Any] = {}
    if has_denormalizer:
        denormalizer = {name: value for name, value in normalizer.items() if draw(st.booleans())}

    # The 256 byte pieces are written in the usual layout (drawing a layout for each
    # made generation slow); the other pieces in drawn ones.
    parts = [
        BYTE_PIECES[piece.piece] if piece.type == PieceType.BYTE else _write_piece(draw, piece) for piece in pieces
    ]
    tail = [
        _write_spec(draw, 2, TRAINER_FIELDS, trainer),
        _write_spec(draw, 3, NORMALIZER_FIELDS, normalizer),
    ]
    if has_denormalizer:
        tail.append(_write_spec(draw, 5, NORMALIZER_FIELDS, denormalizer))
    if draw(st.integers(0, 3)) == 0:
        # The old self_test_data (field 4) and other unknown top-level fields are skipped.
        tail.insert(draw(st.integers(0, len(tail))), unknown_field(draw))
    parts = parts + tail
    if draw(st.integers(0, 4)) == 0:
        # Protobuf writes fields in number order; a reader must not rely on it. The
        # pieces keep their order (it is the id order); the other fields go anywhere.
        for item in draw(st.permutations(tail)):
            parts.remove(item)
            parts.insert(draw(st.integers(0, len(parts))), item)
    normalizer_attrs = {("normalizer_name" if k == "name" else k): v for k, v in normalizer.items()}
    expected = SentencePieceModel(
        pieces=tuple(pieces),
        **trainer,
        **normalizer_attrs,
        denormalizer=NormalizerSpec(**denormalizer) if has_denormalizer else None,
    )
    return Written(b"".join(parts), expected)


# ---------------------------------------------------------------- comparison helpers


def _f32(x: float) -> bytes:
    return struct.pack("<f", x)


def comparable(model: SentencePieceModel) -> tuple[Any, ...]:
    """The model as a tuple that tells -0.0 from 0.0 and equates NaNs (by float32 bits)."""
    pieces = tuple((p.piece, _f32(p.score), int(p.type)) for p in model.pieces)
    rest = tuple((f.name, getattr(model, f.name)) for f in fields(model) if f.name != "pieces")
    return (pieces, rest)


def _by_f32(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A ``(piece, score, ...)`` row compared with its score's float32 bits."""
    return (row[0], _f32(row[1]), row[2:])


def assert_same_model(ours: SentencePieceModel, ref: SentencePieceModel, what: str) -> None:
    if comparable(ours) == comparable(ref):
        return
    assert_sequences_equal(
        [(p.piece, p.score, p.type.name) for p in ours.pieces],
        [(p.piece, p.score, p.type.name) for p in ref.pieces],
        what=f"{what}: pieces by id",
        names=("ours", "reference"),
        key=_by_f32,
        context=2,
    )
    diffs = [
        f"{f.name}: ours {getattr(ours, f.name)!r:.80} vs {getattr(ref, f.name)!r:.80}"
        for f in fields(ours)
        if f.name != "pieces" and getattr(ours, f.name) != getattr(ref, f.name)
    ]
    pytest.fail(f"{what}: " + "; ".join(diffs))


def from_pb2(data: bytes) -> SentencePieceModel:
    """Protobuf's parse of ``data`` (the official ModelProto class), as our dataclass."""
    pb2 = pb2_or_skip()
    proto = pb2.ModelProto()
    proto.ParseFromString(data)
    ts, ns = proto.trainer_spec, proto.normalizer_spec
    trainer = {name: getattr(ts, name) for name, _ in TRAINER_FIELDS.values()}
    normalizer = {
        ("normalizer_name" if name == "name" else name): getattr(ns, name) for name, _ in NORMALIZER_FIELDS.values()
    }
    denormalizer = None
    if proto.HasField("denormalizer_spec"):
        ds = proto.denormalizer_spec
        denormalizer = NormalizerSpec(**{name: getattr(ds, name) for name, _ in NORMALIZER_FIELDS.values()})
    return SentencePieceModel(
        pieces=tuple(Piece(p.piece, p.score, PieceType(p.type)) for p in proto.pieces),
        **trainer,
        **normalizer,
        denormalizer=denormalizer,
    )


def assert_like_sentencepiece(model: SentencePieceModel, sp: Any, what: str) -> None:
    """Pieces, scores and types as ``SentencePieceProcessor`` reports them."""
    n = sp.get_piece_size()
    assert len(model.pieces) == n, f"{what}: {len(model.pieces)} pieces, sentencepiece {n}"
    ids = list(range(n))
    ref = list(
        zip(
            sp.id_to_piece(ids),
            sp.get_score(ids),
            sp.is_unknown(ids),
            sp.is_control(ids),
            sp.is_unused(ids),
            sp.is_byte(ids),
        )
    )
    # (piece, score, unknown, control, unused, byte), as sentencepiece reports them
    ours = [
        (
            p.piece,
            p.score,
            p.type == PieceType.UNKNOWN,
            p.type == PieceType.CONTROL,
            p.type == PieceType.UNUSED,
            p.type == PieceType.BYTE,
        )
        for p in model.pieces
    ]
    assert_sequences_equal(
        ours, ref, what=f"{what}: pieces by id", names=("ours", "sentencepiece"), key=_by_f32, context=2
    )


def top_level_fields(data: bytes) -> list[tuple[int, int, int]]:
    """``(field number, start, end)`` of each top-level field of a well-formed file."""
    return [(number, start, end) for number, start, end, _ in protowire.fields(data)]


@functools.cache
def reduced(name: str, keep: int = 300) -> bytes:
    """The fixture with only its first ``keep`` pieces: the same tail, 100 times cheaper."""
    data = fixture_bytes(name)
    out = []
    n = 0
    for number, start, end in top_level_fields(data):
        if number == 1:
            n += 1
            if n > keep:
                continue
        out.append(data[start:end])
    return b"".join(out)


def parse_or_error(data: bytes, source: str) -> SentencePieceModel | TokenizerFileError:
    """The parse, or its ``TokenizerFileError``; any other exception fails the test."""
    try:
        return parse_sentencepiece(data, source)
    except TokenizerFileError as e:
        message = str(e)
        assert message.startswith(f"{source}"), message
        if message.startswith(f"{source}, byte "):
            offset = int(message[len(source) + 7 :].split(",")[0].split(":")[0])
            assert 0 <= offset <= len(data), message
        return e


# ---------------------------------------------------------------- fixture models


def test_fixture_models_present() -> None:
    if MODEL_NAMES == ["<no spm fixtures>"]:
        missing_fixture(f"no SentencePiece fixture models in tests/data/spm or {FIXTURES / 'spm'}")


def test_against_sentencepiece(model_name: str) -> None:
    path = fixture_model(model_name)
    model = read_sentencepiece(path)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    assert_like_sentencepiece(model, sp, model_name)
    assert (model.unk_id, model.bos_id, model.eos_id, model.pad_id) == (
        sp.unk_id(),
        sp.bos_id(),
        sp.eos_id(),
        sp.pad_id(),
    )
    # The special pieces name the pieces sentencepiece finds for them.
    for piece, ref_id in [
        (model.unk_piece, sp.unk_id()),
        (model.bos_piece, sp.bos_id()),
        (model.eos_piece, sp.eos_id()),
    ]:
        if ref_id >= 0:
            assert model.pieces[ref_id].piece == piece


def test_against_protobuf(model_name: str) -> None:
    data = fixture_bytes(model_name)
    assert_same_model(parse_sentencepiece(data, model_name), from_pb2(data), model_name)


def test_types_are_enums(model_name: str) -> None:
    model = fixture_parsed(model_name)
    assert type(model.model_type) is ModelType
    assert all(type(p.type) is PieceType for p in model.pieces)
    assert model.denormalizer is None or type(model.denormalizer) is NormalizerSpec


def test_read_accepts_str_and_pathlike(model_name: str) -> None:
    path = fixture_model(model_name)
    assert read_sentencepiece(str(path)) == read_sentencepiece(path) == fixture_parsed(model_name)


def test_known_values_of_mistral() -> None:
    # From sentencepiece itself (spm_export_vocab / SentencePieceProcessor) on this file.
    name = "mistral_7b_v1_tokenizer.model"
    model = fixture_parsed(name)
    sp = spm.SentencePieceProcessor(model_file=str(fixture_model(name)))
    assert len(model.pieces) == sp.get_piece_size() == 32000
    assert model.model_type == ModelType.BPE
    assert model.byte_fallback
    assert [p.piece for p in model.pieces[:4]] == [sp.id_to_piece(i) for i in range(4)]
    byte_ids = [i for i in range(sp.get_piece_size()) if sp.is_byte(i)]
    assert [i for i, p in enumerate(model.pieces) if p.type == PieceType.BYTE] == byte_ids
    assert len(byte_ids) == 256


# ---------------------------------------------------------------- generated models


@pytest.mark.slow
@hyp_settings(EXAMPLES)
@given(written_models())
def test_generated_models(written: Written) -> None:
    """Whatever layout a model is written in, the reader returns what was written."""
    model = parse_sentencepiece(written.data, "generated.model")
    assert_same_model(model, written.expected, "reader vs writer")
    if not any("\x00" in p.piece for p in model.pieces):
        # sentencepiece >= 0.2.2 refuses a piece with a NUL ('piece must not include null
        # character'); older versions and the reader accept it.
        sp = spm.SentencePieceProcessor(model_proto=written.data)
        assert_like_sentencepiece(model, sp, "reader vs sentencepiece")
    if _model_pb2() is not None:
        assert_same_model(model, from_pb2(written.data), "reader vs protobuf")


@pytest.mark.parametrize(
    "layout",
    [
        "canonical",
        "score first",
        "two-byte lengths",
        "explicit normal",
        "unknown field",
        "repeated piece",
        "unknown varint last",
        "unknown fixed32 last",
    ],
)
def test_piece_layouts_fast_and_general(layout: str) -> None:
    """The fast path's layout and its near misses give the same pieces."""
    unk = f_len(1, f_len(1, b"<unk>") + f_varint(3, 2))
    body = {
        # Same length as a type field, other tags: not a type.
        "unknown varint last": f_len(1, b"\xe2\x96\x81a") + f_float(2, -1.5) + f_varint(3, 4) + f_varint(9, 3),
        "unknown fixed32 last": f_len(1, b"\xe2\x96\x81a")
        + f_varint(3, 4)
        + tag(4, I32)
        + struct.pack("<f", -1.5)
        + f_float(2, -1.5),
        "canonical": f_len(1, b"\xe2\x96\x81a") + f_float(2, -1.5) + f_varint(3, 4),
        "score first": f_float(2, -1.5) + f_len(1, b"\xe2\x96\x81a") + f_varint(3, 4),
        "two-byte lengths": f_len(1, b"\xe2\x96\x81a", pad=1) + f_float(2, -1.5) + f_varint(3, 4),
        "explicit normal": f_len(1, b"\xe2\x96\x81a") + f_float(2, -1.5) + f_varint(3, 4),
        "unknown field": f_len(1, b"\xe2\x96\x81a") + f_float(2, -1.5) + f_varint(9, 1) + f_varint(3, 4),
        "repeated piece": f_len(1, b"x")
        + f_float(2, 7.0)
        + f_len(1, b"\xe2\x96\x81a")
        + f_float(2, -1.5)
        + f_varint(3, 3)
        + f_varint(3, 4),
    }[layout]
    outer_pad = 1 if layout == "two-byte lengths" else 0
    data = unk + f_len(1, body, pad=outer_pad) + f_len(2, b"") + f_len(3, b"")
    model = parse_sentencepiece(data)
    assert model.pieces == (Piece("<unk>", 0.0, PieceType.UNKNOWN), Piece("\u2581a", -1.5, PieceType.USER_DEFINED))
    sp = spm.SentencePieceProcessor(model_proto=data)
    assert_like_sentencepiece(model, sp, layout)


def test_long_pieces_take_the_general_path() -> None:
    long_text = "\u2581" + "x" * 300
    data = (
        f_len(1, f_len(1, b"<unk>") + f_varint(3, 2))
        + f_len(1, f_len(1, long_text.encode()) + f_float(2, -2.0))
        + f_len(2, b"")
        + f_len(3, b"")
    )
    model = parse_sentencepiece(data)
    assert model.pieces[1] == Piece(long_text, -2.0, PieceType.NORMAL)
    assert_like_sentencepiece(model, spm.SentencePieceProcessor(model_proto=data), "long")


def test_absent_fields_take_proto_defaults() -> None:
    data = f_len(1, f_len(1, b"<unk>") + f_varint(3, 2)) + f_len(2, b"") + f_len(3, b"")
    model = parse_sentencepiece(data)
    for name, default in PROTO_DEFAULTS.items():
        attr = "normalizer_name" if name == "name" else name
        assert getattr(model, attr) == default, name
    assert model.denormalizer is None
    assert model.pieces == (Piece("<unk>", 0.0, PieceType.UNKNOWN),)
    if _model_pb2() is not None:
        assert_same_model(model, from_pb2(data), "defaults")


def test_denormalizer_spec() -> None:
    data = (
        f_len(1, f_len(1, b"<unk>") + f_varint(3, 2))
        + f_len(2, b"")
        + f_len(3, f_len(1, b"nmt_nfkc"))
        + f_len(5, f_len(1, b"custom") + f_len(2, b"\x00\x01") + f_varint(3, 0))
    )
    model = parse_sentencepiece(data)
    assert model.normalizer_name == "nmt_nfkc"
    assert model.denormalizer == NormalizerSpec(name="custom", precompiled_charsmap=b"\x00\x01", add_dummy_prefix=False)
    if _model_pb2() is not None:
        assert_same_model(model, from_pb2(data), "denormalizer")


def test_int32_negative_and_non_minimal_varints() -> None:
    spec = f_varint(43, -1) + f_varint(40, 3, pad=3) + f_varint(41, -(1 << 31))
    assert len(varint(-1)) == 10
    data = f_len(1, f_len(1, b"<unk>") + f_varint(3, 2)) + f_len(2, spec) + f_len(3, b"")
    model = parse_sentencepiece(data)
    assert (model.pad_id, model.unk_id, model.bos_id) == (-1, 3, -(1 << 31))


# ---------------------------------------------------------------- damage


def _cuts(data: bytes, rng: random.Random, n_random: int) -> list[int]:
    head = range(min(len(data), 2048) + 1)
    random_cuts = {rng.randrange(len(data) + 1) for _ in range(n_random)}
    return sorted(set(head) | random_cuts | {len(data)})


def _check_cut(
    data: bytes, cut: int, boundaries: set[int], full: SentencePieceModel, source: str
) -> SentencePieceModel | TokenizerFileError:
    result = parse_or_error(data[:cut], source)
    if isinstance(result, TokenizerFileError):
        return result
    assert cut in boundaries, f"a cut at byte {cut}, inside a field, parsed without error"
    assert result.pieces == full.pieces[: len(result.pieces)]
    if _model_pb2() is not None:
        assert_same_model(result, from_pb2(data[:cut]), f"cut at {cut}")
    return result


@pytest.mark.slow
def test_truncated_fixture(model_name: str) -> None:
    """Every cut in the first 2 KB and random ones: an error, or a top-level boundary."""
    data = fixture_bytes(model_name)
    full = fixture_parsed(model_name)
    boundaries = {0} | {end for _, _, end in top_level_fields(data)}
    rng = random.Random(f"{model_name} cuts")
    for cut in _cuts(data, rng, 60):
        _check_cut(data, cut, boundaries, full, model_name)
    assert isinstance(parse_or_error(data[:-1], model_name), TokenizerFileError)


def test_truncated_tail(model_name: str) -> None:
    """Every cut through trainer_spec, normalizer_spec and the file's last 512 bytes.

    The cuts run on the fixture with its first 300 pieces only (``reduced``): the same
    tail, parsed a hundred times faster.
    """
    data = reduced(model_name)
    full = parse_sentencepiece(data, model_name)
    top = top_level_fields(data)
    boundaries = {0} | {end for _, _, end in top}
    tail_start = next(start for number, start, _ in top if number != 1)
    cuts = set(range(tail_start, min(len(data), tail_start + 1024) + 1))
    cuts |= set(range(max(0, len(data) - 512), len(data) + 1))
    for cut in sorted(cuts):
        result = _check_cut(data, cut, boundaries, full, model_name)
        if cut < len(data):
            # Only the complete file has both specs: every shorter cut is an error.
            assert isinstance(result, TokenizerFileError), cut


@pytest.mark.slow
@hyp_settings(EXAMPLES // 5)
@given(written_models(), st.data())
def test_truncated_generated(written: Written, data: st.DataObject) -> None:
    """Generated models (some with denormalizer_spec or unknown fields last) cut anywhere."""
    full = written.data
    top = top_level_fields(full)
    boundaries = {0} | {end for _, _, end in top}
    if len(full) <= 600:
        cuts = set(range(len(full) + 1))
    else:
        cuts = set(data.draw(st.lists(st.integers(0, len(full)), max_size=100)))
        cuts |= {c + d for c in boundaries for d in (-1, 0, 1) if 0 <= c + d <= len(full)}
    for cut in sorted(cuts):
        _check_cut(full, cut, boundaries, written.expected, "generated.model")


@st.composite
def mutated(draw: st.DrawFn, base: bytes) -> bytes:
    data = bytearray(base)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "set", "insert", "delete", "overwrite", "cut"]))
        at = draw(st.integers(0, max(0, len(data) - 1)))
        if kind == "flip" and data:
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "set" and data:
            data[at] = draw(
                st.sampled_from([0x00, 0x7F, 0x80, 0xFF, 0x0A, 0x12, 0x1A, 0x15, 0x18, 0x0B, 0x0C, 0x0E, 0x0F, 0x2A])
            )
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=12))
        elif kind == "delete":
            del data[at : at + draw(st.integers(1, 16))]
        elif kind == "overwrite":
            chunk = draw(st.binary(min_size=1, max_size=12))
            data[at : at + len(chunk)] = chunk
        else:
            del data[at:]
    return bytes(data)


def _mutation_bases() -> st.SearchStrategy[tuple[str, bytes]]:
    generated = written_models().map(lambda w: ("generated.model", w.data))
    fixtures = [name for name in MODEL_NAMES if has_fixture(f"spm/{name}")]
    if not fixtures:
        return generated
    # The reduced fixtures keep their real tails (a 237 KB charsmap for the botchan ones).
    return st.one_of(generated, st.sampled_from(fixtures).map(lambda n: (n, reduced(n))))


@pytest.mark.slow
@hyp_settings(EXAMPLES)
@given(st.data())
def test_mutated_bytes(data: st.DataObject) -> None:
    """Mutated models: only TokenizerFileError escapes; an accepted file parses like protobuf."""
    source, base = data.draw(_mutation_bases())
    damaged = data.draw(mutated(base))
    result = parse_or_error(damaged, source)
    if isinstance(result, SentencePieceModel) and _model_pb2() is not None:
        assert_same_model(result, from_pb2(damaged), "accepted mutation vs protobuf")


@hyp_settings(EXAMPLES)
@given(st.binary(max_size=300))
def test_random_bytes(data: bytes) -> None:
    parse_or_error(data, "random.model")


# ---------------------------------------------------------------- error messages

UNK = f_len(1, f_len(1, b"<unk>") + f_varint(3, 2))
SPECS = f_len(2, b"") + f_len(3, b"")


def _error(data: bytes, source: str = "bad.model") -> str:
    with pytest.raises(TokenizerFileError) as info:
        parse_sentencepiece(data, source)
    return str(info.value)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        # Cut inside the second piece: its length runs past the end of the file.
        pytest.param(
            UNK + f_len(1, f_len(1, b"abc"))[:-1],
            f"bad.model, byte {len(UNK) + 1}, pieces[1]: length 5 runs past the end "
            f"of the file ({len(UNK) + 6} bytes); the file looks truncated",
            id="truncated piece",
        ),
        pytest.param(
            UNK + f_len(1, f_len(1, b"ab\xffc")) + SPECS,
            f"bad.model, byte {len(UNK) + 6}, pieces[1].piece: invalid UTF-8",
            id="invalid utf-8",
        ),
        # Length 5 runs past the piece message, though not past the file.
        pytest.param(
            UNK + f_len(1, tag(1, LEN) + varint(5) + b"abc") + SPECS,
            f"bad.model, byte {len(UNK) + 3}, pieces[1].piece: length 5 runs past the "
            f"end of its enclosing message pieces[1] at byte {len(UNK) + 7}",
            id="length past message",
        ),
        pytest.param(
            UNK + bytes([0x0E]) + SPECS,
            f"bad.model, byte {len(UNK)}: field 1 has invalid wire type 6",
            id="wire type 6",
        ),
        pytest.param(
            UNK + tag(7, 3) + SPECS, f"bad.model, byte {len(UNK)}: field 7 is a group (wire type 3)", id="group"
        ),
        pytest.param(
            UNK + f_len(2, tag(40, VARINT) + b"\xff" * 10 + b"\x01") + f_len(3, b""),
            f"bad.model, byte {len(UNK) + 4}, trainer_spec.unk_id: varint is longer than 10 bytes",
            id="overlong varint",
        ),
        pytest.param(
            UNK + f_len(2, tag(40, VARINT) + b"\xff" * 9 + b"\x02") + f_len(3, b""),
            f"bad.model, byte {len(UNK) + 4}, trainer_spec.unk_id: varint is longer than 10 bytes or exceeds 64 bits",
            id="varint over 64 bits",
        ),
        pytest.param(
            UNK + f_len(1, tag(1, VARINT) + varint(3)) + SPECS,
            f"bad.model, byte {len(UNK) + 2}, pieces[1].piece: field 1 (string) has wire type 0 (varint), expected 2",
            id="wrong wire type",
        ),
        pytest.param(
            UNK + f_len(2, f_varint(35, 2)) + f_len(3, b""),
            f"bad.model, byte {len(UNK) + 4}, trainer_spec.byte_fallback: bool value 2",
            id="bool 2",
        ),
        pytest.param(
            UNK + f_len(2, f_varint(41, 1 << 31)) + f_len(3, b""),
            f"bad.model, byte {len(UNK) + 4}, trainer_spec.bos_id: value 2147483648 is out of the int32 range",
            id="int32 range",
        ),
        pytest.param(
            UNK + f_len(1, f_len(1, b"a") + f_varint(3, 7)) + SPECS,
            f"bad.model, byte {len(UNK) + 6}, pieces[1].type: unknown piece type 7",
            id="piece type 7",
        ),
        pytest.param(
            UNK + f_len(2, f_varint(3, 5)) + f_len(3, b""),
            f"bad.model, byte {len(UNK) + 3}, trainer_spec.model_type: unknown model type 5",
            id="model type 5",
        ),
        pytest.param(UNK + b"\x02\x00" + SPECS, f"bad.model, byte {len(UNK)}: invalid field number 0", id="field 0"),
        pytest.param(
            UNK + f_len(1, f_float(2, 1.0)) + SPECS,
            f"bad.model, byte {len(UNK) + 2}, pieces[1].piece: the piece is empty or missing",
            id="no piece",
        ),
        pytest.param(
            UNK + f_len(2, b""),
            f"bad.model, byte {len(UNK) + 2}, normalizer_spec: the file ends without normalizer_spec",
            id="no normalizer_spec",
        ),
        pytest.param(
            UNK, f"bad.model, byte {len(UNK)}, trainer_spec: the file ends without trainer_spec", id="no trainer_spec"
        ),
        pytest.param(b"", "bad.model: not a SentencePiece model: the file is empty", id="empty"),
        pytest.param(
            UNK + tag(1, LEN) + b"\x80" * 3,
            f"bad.model, byte {len(UNK) + 1}, pieces[1]: varint runs past the end of the file",
            id="cut varint",
        ),
        pytest.param(
            UNK + tag(9, I64) + b"1234567",
            f"bad.model, byte {len(UNK) + 1}, <field 9>: 64-bit value runs past the end of the file",
            id="cut fixed64",
        ),
        pytest.param(
            UNK + f_len(1, f_len(1, b"a") + tag(2, I32) + b"\x00\x00") + SPECS,
            f"bad.model, byte {len(UNK) + 6}, pieces[1].score: 32-bit value runs past "
            f"the end of its enclosing message pieces[1]",
            id="score past message",
        ),
    ],
)
def test_error_names_offset_and_field(data: bytes, expected: str) -> None:
    assert _error(data).startswith(expected)


def test_error_in_fixture_names_piece_index(model_name: str) -> None:
    """Invalid UTF-8 deep in a real file: the message names the piece index and offset."""
    data = bytearray(fixture_bytes(model_name))
    top = top_level_fields(bytes(data))
    piece_starts = [start for number, start, _ in top if number == 1]
    index = len(piece_starts) - 5
    start = piece_starts[index]
    # The piece's text starts after its outer tag+length and inner tag+length.
    text_at = start + 2 + (1 if data[start + 1] >= 0x80 else 0) + 2
    data[text_at] = 0xFF
    message = _error(bytes(data), model_name)
    where = f"{model_name}, byte {text_at}, pieces[{index}].piece"
    assert message.startswith(f"{where}: invalid UTF-8")


# ---------------------------------------------------------------- sentencepiece's own checks

A = f_len(1, f_len(1, b"a") + f_float(2, -1.0))
BYTES = b"".join(f_len(1, f_len(1, f"<0x{b:02X}>".encode()) + f_varint(3, 6)) for b in range(256))


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(
            UNK + A + A + SPECS, "bad.model, pieces[2]: the piece 'a' is already defined as pieces[1]", id="duplicate"
        ),
        pytest.param(A + SPECS, "bad.model: no piece has type UNKNOWN", id="no unk"),
        pytest.param(
            UNK + f_len(1, f_len(1, b"<u>") + f_varint(3, 2)) + SPECS,
            "bad.model, pieces[1]: a second UNKNOWN piece '<u>' after pieces[0]",
            id="two unk",
        ),
        pytest.param(
            UNK + f_len(1, f_len(1, b"<0x41>") + f_varint(3, 6)) + SPECS,
            "bad.model, pieces[1]: byte piece '<0x41>' in a model without byte_fallback",
            id="byte without fallback",
        ),
        pytest.param(
            UNK + BYTES + f_len(1, f_len(1, b"<0x4g>") + f_varint(3, 6)) + f_len(2, f_varint(35, 1)) + f_len(3, b""),
            "bad.model, pieces[257]: byte piece '<0x4g>' is not '<0x00>' to '<0xFF>'",
            id="bad byte piece",
        ),
        pytest.param(
            UNK + BYTES[:-12] + f_len(2, f_varint(35, 1)) + f_len(3, b""),
            "bad.model: trainer_spec.byte_fallback is true but 1 of the 256 byte "
            "pieces are missing: <0xFF> (sentencepiece",
            id="missing byte piece",
        ),
        pytest.param(UNK + f_len(1, f_len(1, b"") + f_float(2, 1.0)) + SPECS, "bad.model, byte", id="empty piece"),
    ],
)
def test_sentencepiece_load_checks(data: bytes, expected: str) -> None:
    assert BYTES[-12:].startswith(b"\x0a\x0a") and len(BYTES) == 256 * 12
    assert _error(data).startswith(expected)
    with pytest.raises(RuntimeError):  # sentencepiece refuses the same file
        spm.SentencePieceProcessor(model_proto=data)


def test_allowed_duplicates_and_byte_fallback() -> None:
    """A CONTROL '<s>' and a NORMAL '<s>' may coexist, as in sentencepiece."""
    data = (
        UNK
        + f_len(1, f_len(1, b"<s>") + f_varint(3, 3))
        + f_len(1, f_len(1, b"<s>"))
        + BYTES
        + f_len(2, f_varint(35, 1))
        + f_len(3, b"")
    )
    model = parse_sentencepiece(data)
    assert [p.piece for p in model.pieces[:3]] == ["<unk>", "<s>", "<s>"]
    assert model.byte_fallback
    assert_like_sentencepiece(model, spm.SentencePieceProcessor(model_proto=data), "dups")


def test_read_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.model"
    with pytest.raises(TokenizerFileError, match=r"cannot read sentencepiece model .*nope.model"):
        read_sentencepiece(missing)


def test_read_names_file_by_base_name(tmp_path: Path) -> None:
    path = tmp_path / "cut.model"
    path.write_bytes(UNK[:-1])
    with pytest.raises(TokenizerFileError, match=r"^cut\.model, byte 1, pieces\[0\]: length"):
        read_sentencepiece(path)


def test_dataclasses_are_frozen() -> None:
    model = parse_sentencepiece(UNK + SPECS)
    with pytest.raises(AttributeError):
        model.bos_id = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        model.pieces[0].score = 1.0  # type: ignore[misc]
    assert replace(model, bos_id=5).bos_id == 5
    assert math.isfinite(model.pieces[0].score)

"""SentencePiece ``.model`` files: ids, decode and normalization equal to ``sentencepiece``'s.

SentencePiece never matches a control piece's text (``<s>``), so the comparison encodes
with ``disallowed_special=()``: special literals are plain text, as there. Every
distinct corpus line (cut at 300 characters) of every corpus goes through each model,
plus hypothesis text: adversarial text, and text made of the characters where the
charsmap's longest-match scan leaves its fast path (characters that start a key
longer than one character, the characters that can follow them, spaces).

Expectations come from ``sentencepiece`` only. The normalizer is also checked against
its own byte-by-byte form (``_pieces``/``_assemble``), the slow obvious oracle, and its
``normalize_aligned`` for the span invariants (``tests/test_offsets.py`` compares the
offsets with sentencepiece's).
"""

from __future__ import annotations

import random
from itertools import pairwise

import pytest
from helpers import CORPORA, assert_sequences_equal, fixture_file, fixture_text
from hypothesis import given
from hypothesis import strategies as st
from strategies import adversarial_text, hyp_settings, replace_surrogates

import tokstream
from tokstream import Tokenizer
from tokstream.normalizers import SentencePieceNormalizer

spm = pytest.importorskip("sentencepiece")

MODELS = ["spm_botchan_en_bpe_1000.model", "spm_botchan_en_unigram_1000.model", "mistral_7b_v1_tokenizer.model"]
_cache: dict[str, tuple[Tokenizer, object]] = {}


def pair(name: str) -> tuple[Tokenizer, object]:
    path = fixture_file(f"spm/{name}")
    if name not in _cache:
        _cache[name] = (Tokenizer.from_sentencepiece(path), spm.SentencePieceProcessor(model_file=str(path)))
    return _cache[name]


def normalizer(ours: Tokenizer) -> SentencePieceNormalizer:
    norm = ours.pipeline.normalizer
    assert isinstance(norm, SentencePieceNormalizer)
    return norm


def assert_ids(got: list[int], want: list[int], text: str, ours: Tokenizer) -> None:
    __tracebackhide__ = True
    assert_sequences_equal(
        got, want, names=("tokstream", "sentencepiece"), show=lambda t: f"{t}={ours.id_to_token(t)!r}", text=text
    )


def check(ours: Tokenizer, ref: object, text: str) -> None:
    want = ref.encode(text)  # type: ignore[attr-defined]
    assert_ids(ours.encode(text, disallowed_special=()), want, text, ours)
    assert ours.decode(want) == ref.decode(want), text[:200]  # type: ignore[attr-defined]
    norm = normalizer(ours)
    assert norm.normalize(text) == ref.normalize(text), text[:200]  # type: ignore[attr-defined]
    assert norm.normalize(text) == norm._assemble(norm._pieces(text)), text[:200]
    # token_bytes is the bytes a piece stands for: ▁ as a space, <0xXX> as its byte.
    for i in want:
        if ref.is_unknown(i) or ref.is_control(i):  # type: ignore[attr-defined]
            continue
        piece = ref.id_to_piece(i)  # type: ignore[attr-defined]
        expected = bytes([int(piece[3:5], 16)]) if ref.is_byte(i) else piece.replace("\u2581", " ").encode()  # type: ignore[attr-defined]
        assert ours.token_bytes(i) == expected, (i, piece)


def check_aligned(ours: Tokenizer, text: str) -> None:
    """``normalize_aligned``: the same text, one monotone in-range span per character."""
    norm = normalizer(ours)
    out, spans = norm.normalize_aligned(text)
    assert out == norm.normalize(text), text[:200]
    assert len(spans) == len(out)
    assert all(0 <= a <= b <= len(text) for a, b in spans), spans
    assert all(a1 <= a2 and b1 <= b2 for (a1, b1), (a2, b2) in pairwise(spans)), spans


@pytest.mark.slow
@pytest.mark.parametrize("corpus", CORPORA)
@pytest.mark.parametrize("name", MODELS)
def test_corpus_lines(name: str, corpus: str) -> None:
    ours, ref = pair(name)
    text = fixture_text(f"corpora/{corpus}")
    lines = sorted({line[:300] for line in text.splitlines()})
    want = ref.encode(lines)  # type: ignore[attr-defined]
    for line, ids in zip(lines, want):
        assert_ids(ours.encode(line, disallowed_special=()), ids, line, ours)
    norm = normalizer(ours)
    for line, normalized in zip(lines, ref.normalize(lines)):  # type: ignore[attr-defined]
        assert norm.normalize(line) == normalized, line
    for ids, decoded in zip(want, ref.decode(want)):  # type: ignore[attr-defined]
        assert ours.decode(ids) == decoded, ids
    # A long multi-line text in one call (the scan across lines, the word cache).
    check(ours, ref, text[:100_000])


_spm_text = adversarial_text().map(replace_surrogates)  # sentencepiece takes UTF-8 only


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
@hyp_settings(200)
@given(text=_spm_text)
def test_adversarial_text(name: str, text: str) -> None:
    ours, ref = pair(name)
    check(ours, ref, text)
    check_aligned(ours, text)


_EDGE_CHARS = [
    " ",
    "  ",
    "\u3000",
    "\t",
    "\n",
    "\x00",
    "\u2581",
    "a",
    "A",
    "e",
    "=",
    "\u0301",
    "\u0300",
    "\u0323",
    "\u0302",
    "\u0338",
    "\ufb01",
    "\u304b",
    "\u3099",
    "\uff76",
    "\uff9e",
    "\u1100",
    "\u1161",
    "\u11a8",
    "\uac00",
    "\U0001d400",
    "\U0001d157",
    "\U0001d165",
    "\u2460",
    "<s>",
    "</s>",
    "<unk>",
]


@st.composite
def _charsmap_text(draw: st.DrawFn, name: str) -> str:
    """Characters that start longer keys, characters that can follow them, spaces."""
    ours, _ = pair(name)
    norm = normalizer(ours)
    pools = [st.sampled_from(_EDGE_CHARS)]
    if norm._starts:
        pools.append(st.sampled_from(sorted(norm._starts)))
        pools.append(st.sampled_from(sorted(norm._followers)))
    return "".join(draw(st.lists(st.one_of(pools), max_size=24)))


@pytest.mark.parametrize("name", MODELS)
@hyp_settings(200)
@given(data=st.data())
def test_charsmap_longest_match(name: str, data: st.DataObject) -> None:
    ours, ref = pair(name)
    text = data.draw(_charsmap_text(name))
    check(ours, ref, text)
    check_aligned(ours, text)


@pytest.mark.parametrize("name", MODELS)
def test_random_ids_decode(name: str) -> None:
    ours, ref = pair(name)
    rng = random.Random(7)
    size = ref.get_piece_size()  # type: ignore[attr-defined]
    for _ in range(2000):
        ids = [rng.randrange(size) for _ in range(rng.randint(0, 10))]
        assert ours.decode(ids) == ref.decode(ids), ids  # type: ignore[attr-defined]


_interesting: dict[str, list[int]] = {}


def _interesting_ids(name: str) -> list[int]:
    """Byte, control and unknown pieces, and the first pieces that start with ``▁``."""
    if name not in _interesting:
        _, ref = pair(name)
        ids = [
            i
            for i in range(ref.get_piece_size())  # type: ignore[attr-defined]
            if ref.is_byte(i) or ref.is_control(i) or ref.is_unknown(i)  # type: ignore[attr-defined]
        ]
        spaced = [
            i
            for i in range(ref.get_piece_size())  # type: ignore[attr-defined]
            if ref.id_to_piece(i).startswith("\u2581")  # type: ignore[attr-defined]
        ]
        _interesting[name] = ids + spaced[:100]
    return _interesting[name]


@pytest.mark.parametrize("name", MODELS)
@hyp_settings(200)
@given(data=st.data())
def test_decode_edge_ids(name: str, data: st.DataObject) -> None:
    """Runs of byte pieces (invalid UTF-8 included), lone ``▁``, controls, unknowns."""
    ours, ref = pair(name)
    size = ref.get_piece_size()  # type: ignore[attr-defined]
    interesting = _interesting_ids(name)
    ids = data.draw(st.lists(st.one_of(st.sampled_from(interesting), st.integers(0, size - 1)), max_size=12))
    assert ours.decode(ids) == ref.decode(ids), ids  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("text", ["a" * 100_000, "\u3000 " * 50_000, "e" + "\u0301" * 100_000, "\u304b\u3099" * 50_000])
def test_long_runs(name: str, text: str) -> None:
    ours, ref = pair(name)
    want = ref.encode(text)  # type: ignore[attr-defined]
    assert_ids(ours.encode(text, disallowed_special=()), want, text, ours)
    assert ours.decode(want) == ref.decode(want)  # type: ignore[attr-defined]


def test_load_dispatches_on_model() -> None:
    path = fixture_file("spm/mistral_7b_v1_tokenizer.model")
    assert tokstream.load(path).encode("Hello world", disallowed_special=()) == spm.SentencePieceProcessor(
        model_file=str(path)
    ).encode("Hello world")


def test_normalizer_options_without_charsmap() -> None:
    """Each whitespace option alone, against the byte-by-byte form (spm's own rules)."""
    texts = ["", " ", "  a  b  ", "\u2581a \u2581", "a\u2581\u2581", " \t x"]
    for dummy in (False, True):
        for remove in (False, True):
            for escape in (False, True):
                for suffix in (False, True):
                    norm = SentencePieceNormalizer(
                        add_dummy_prefix=dummy,
                        remove_extra_whitespaces=remove,
                        escape_whitespaces=escape,
                        treat_whitespace_as_suffix=suffix,
                        user_defined=["a b", "x"],
                    )
                    for text in texts:
                        want = norm._assemble(norm._pieces(text)) if text else ""
                        assert norm.normalize(text) == want, (dummy, remove, escape, suffix, text)


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
def test_fingerprint_and_pickle(name: str) -> None:
    import pickle

    ours, ref = pair(name)
    again = pickle.loads(pickle.dumps(ours))
    assert (
        again.fingerprint == ours.fingerprint == Tokenizer.from_sentencepiece(fixture_file(f"spm/{name}")).fingerprint
    )
    text = "Hello  wörld ﬁ\u0301 日本語 <s>"
    assert again.encode(text, disallowed_special=()) == ref.encode(text)  # type: ignore[attr-defined]


def test_fingerprints_differ_between_models() -> None:
    assert len({pair(name)[0].fingerprint for name in MODELS}) == len(MODELS)


# ------------------------------------------------------------------ hostile files


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (the varint length written out by hand)."""
    from protowire import put_varint

    return put_varint(number << 3 | 2) + put_varint(len(payload)) + payload


@pytest.mark.parametrize("unk_id", [3, 5000])
def test_unknown_id_is_the_unknown_pieces(tmp_path, unk_id: int) -> None:  # type: ignore[no-untyped-def]
    """sentencepiece takes the unknown id from the UNKNOWN piece; ``trainer_spec.unk_id``
    is the trainer's. A second trainer_spec (merged, as protobuf does) that sets it to
    another piece gave other ids, and past the pieces an IndexError."""
    from protowire import put_varint

    data = fixture_file("spm/spm_botchan_en_bpe_1000.model").read_bytes()
    data += _field(2, put_varint(40 << 3) + put_varint(unk_id))  # trainer_spec.unk_id
    path = tmp_path / "unk.model"
    path.write_bytes(data)
    ref = spm.SentencePieceProcessor(model_file=str(path))
    ours = Tokenizer.from_sentencepiece(path)
    for text in ["Hello \u2603 world", "日本語", "plain"]:
        assert ours.encode(text, disallowed_special=()) == ref.encode(text)


def test_errors_name_the_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """They named the stem ("cut, byte 12"), not the file."""
    data = fixture_file("spm/spm_botchan_en_bpe_1000.model").read_bytes()
    path = tmp_path / "cut.model"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(tokstream.TokenizerFileError, match=r"^cut\.model, byte \d+"):
        Tokenizer.from_sentencepiece(path)


def test_charsmap_errors_name_the_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The charsmap's own checks (a string table that is not UTF-8) named no file."""
    from protowire import fields

    data = fixture_file("spm/spm_botchan_en_bpe_1000.model").read_bytes()
    spec = next((s, e, p) for n, s, e, p in fields(data) if n == 3)  # normalizer_spec
    inner = data[spec[2] : spec[1]]
    _, start, end, payload = next(f for f in fields(inner) if f[0] == 2)  # precompiled_charsmap
    charsmap = bytearray(inner[payload:end])
    charsmap[-3] = 0xFF  # inside the last normalized string
    new_inner = inner[:start] + _field(2, bytes(charsmap)) + inner[end:]
    path = tmp_path / "charsmap.model"
    path.write_bytes(data[: spec[0]] + _field(3, new_inner) + data[spec[1] :])
    with pytest.raises(tokstream.TokenizerFileError, match=r"^charsmap\.model: precompiled_charsmap: .*not UTF-8"):
        Tokenizer.from_sentencepiece(path)


@pytest.mark.parametrize(
    ("data", "hint"),
    [
        (b"hello world\n" * 10, "not a SentencePiece model: it starts with b'hello world"),
        (b'{"version": "1.0", "model": {}}', "not a SentencePiece model (it looks like JSON"),
        (b"", "not a SentencePiece model: the file is empty"),
    ],
)
def test_not_a_sentencepiece_model(tmp_path, data: bytes, hint: str) -> None:  # type: ignore[no-untyped-def]
    """Said ``field 13 is a group (wire type 4)``."""
    path = tmp_path / "other.model"
    path.write_bytes(data)
    with pytest.raises(tokstream.TokenizerFileError, match=r"^other\.model: ") as info:
        Tokenizer.from_sentencepiece(path)
    assert hint in str(info.value)


def test_unsupported_model_type_names_the_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from protowire import put_varint

    from tokstream.errors import UnsupportedComponentError

    data = fixture_file("spm/spm_botchan_en_bpe_1000.model").read_bytes()
    path = tmp_path / "word.model"
    path.write_bytes(data + _field(2, put_varint(3 << 3) + put_varint(3)))  # model_type WORD
    with pytest.raises(UnsupportedComponentError, match=r"^word\.model: SentencePiece model type WORD"):
        Tokenizer.from_sentencepiece(path)

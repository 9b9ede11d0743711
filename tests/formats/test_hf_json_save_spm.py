"""``Tokenizer.save`` of SentencePiece models: a ``tokenizer.json`` with ``sentencepiece``'s ids.

For each model that has an exact ``tokenizer.json`` form:

(a) ``tokenizers`` loads the saved file to the ids ``sentencepiece`` gives. A text
    holding a control or unknown piece's literal (``"<s>"``) is the exception: the file
    lists those pieces as special added tokens, so ``tokenizers`` encodes the literal as
    that token, as tokstream does with ``allowed_special="all"``; that is checked
    instead.
(b) ``tokstream`` loads the file back to the same ids, the same ``to_json()`` and so
    the same ``fingerprint``.

The models: Mistral 7B v1 (BPE, byte fallback, no charsmap) as published, and the two
botchan models with their nfkc / nmt_nfkc charsmap cut out of the protobuf (identity
normalization with ``remove_extra_whitespaces`` on: Unigram and score-ranked BPE
merges). The botchan models as published have no exact form (``tokenizers``'
``Precompiled`` is not SentencePiece's longest match): saving them raises.
"""

from __future__ import annotations

import json
from pathlib import Path

import protowire
import pytest
from helpers import CORPORA, fixture_file, fixture_text
from hypothesis import given
from strategies import adversarial_text, hyp_settings, replace_surrogates

from tokstream import Tokenizer
from tokstream.errors import TokstreamError
from tokstream.models.sentencepiece import SentencePieceBPE, SentencePieceUnigram
from tokstream.normalizers import SentencePieceNormalizer

spm = pytest.importorskip("sentencepiece")
tokenizers = pytest.importorskip("tokenizers")

# name -> (the .model fixture, whether to cut its charsmap out)
MODELS = {
    "mistral": ("mistral_7b_v1_tokenizer.model", False),
    "botchan-bpe-identity": ("spm_botchan_en_bpe_1000.model", True),
    "botchan-unigram-identity": ("spm_botchan_en_unigram_1000.model", True),
}
LITERALS = ("<s>", "</s>", "<unk>")


# ---------------------------------------------------------------- protobuf surgery


def _fields(data: bytes) -> list[tuple[int, bytes, bytes | None]]:
    """``(field number, the whole field's bytes, the payload of a length-delimited one)``."""
    return [
        (number, data[start:end], None if payload is None else data[payload:end])
        for number, start, end, payload in protowire.fields(data)
    ]


def _without_charsmap(model: bytes) -> bytes:
    """The ``.model`` bytes with ``normalizer_spec`` (field 3) renamed "identity" and its
    ``precompiled_charsmap`` (field 2 inside) removed; everything else kept."""
    out = bytearray()
    for number, whole, payload in _fields(model):
        if number != 3 or payload is None:
            out += whole
            continue
        spec = bytearray(b"\x0a" + protowire.put_varint(8) + b"identity")
        spec += b"".join(w for n, w, _ in _fields(payload) if n not in (1, 2))
        out += b"\x1a" + protowire.put_varint(len(spec)) + spec
    return bytes(out)


# ------------------------------------------------------------------------- setup


class Saved:
    """The original tokenizer, sentencepiece, and the saved file loaded both ways."""

    def __init__(self, model_path: Path, json_path: Path) -> None:
        self.ours = Tokenizer.from_sentencepiece(model_path)
        self.ref = spm.SentencePieceProcessor(model_file=str(model_path))
        self.ours.save(json_path)
        self.json_path = json_path
        self.hf = tokenizers.Tokenizer.from_file(str(json_path))
        self.reloaded = Tokenizer.from_file(json_path)


@pytest.fixture(scope="module", params=list(MODELS))
def saved(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Saved:
    fixture, cut = MODELS[request.param]
    path = fixture_file(f"spm/{fixture}")
    folder = tmp_path_factory.mktemp(request.param)
    if cut:
        identity = folder / fixture
        identity.write_bytes(_without_charsmap(path.read_bytes()))
        path = identity
    return Saved(path, folder / "tokenizer.json")


def test_identity_models_are_identity(saved: Saved) -> None:
    """The surgery worked: no charsmap rule applies, the whitespace options stay."""
    normalized = saved.ref.normalize("\ufb01  \uff76 ")  # type: ignore[attr-defined]
    assert normalized.strip("\u2581").replace("\u2581\u2581", "\u2581") == "\ufb01\u2581\uff76"


def assert_same(saved: Saved, texts: list[str]) -> None:
    want = saved.ref.encode(texts)  # type: ignore[attr-defined]
    got_hf = [e.ids for e in saved.hf.encode_batch(texts, add_special_tokens=False)]
    for text, spm_ids, hf_ids in zip(texts, want, got_hf):
        if any(lit in text for lit in LITERALS):
            ours = saved.ours.encode(text, allowed_special="all")
            assert hf_ids == ours, text[:200]
            assert saved.reloaded.encode(text, allowed_special="all") == ours, text[:200]
        else:
            # Without literals the special-token policy changes nothing.
            assert hf_ids == spm_ids, text[:200]
            assert saved.reloaded.encode(text, disallowed_special=()) == spm_ids, text[:200]


# ------------------------------------------------------------------------- tests


@pytest.mark.slow
@pytest.mark.parametrize("corpus", CORPORA)
def test_corpus_lines(saved: Saved, corpus: str) -> None:
    text = fixture_text(f"corpora/{corpus}")
    lines = sorted({line[:300] for line in text.splitlines()})
    if corpus.startswith("shakespeare"):
        lines = lines[::10]  # 11k of its 114k distinct lines keep the file's time budget
    assert_same(saved, [*lines, text[:50_000]])


def test_fingerprint_survives_save(saved: Saved) -> None:
    written = json.loads(saved.json_path.read_text("utf-8"))
    assert written == saved.ours.pipeline.to_json() == saved.reloaded.pipeline.to_json()
    assert saved.reloaded.fingerprint == saved.ours.fingerprint


_spm_text = adversarial_text().map(replace_surrogates)


@hyp_settings(120)
@given(text=_spm_text)
def test_adversarial_text(saved: Saved, text: str) -> None:
    assert_same(saved, [text])


@pytest.mark.parametrize("fixture", ["spm_botchan_en_unigram_1000.model", "spm_botchan_en_bpe_1000.model"])
def test_charsmap_model_refuses(fixture: str, tmp_path: Path) -> None:
    tok = Tokenizer.from_sentencepiece(fixture_file(f"spm/{fixture}"))
    with pytest.raises(TokstreamError, match=r"precompiled_charsmap \('(nmt_)?nfkc'\)"):
        tok.save(tmp_path / "tokenizer.json")
    assert not (tmp_path / "tokenizer.json").exists()


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"treat_whitespace_as_suffix": True}, "treat_whitespace_as_suffix"),
        ({"user_defined": ["<sep>"]}, "user-defined pieces"),
    ],
)
def test_normalizer_options_refuse(options: dict[str, object], named: str) -> None:
    norm = SentencePieceNormalizer(
        add_dummy_prefix=True,
        remove_extra_whitespaces=True,
        escape_whitespaces=True,
        **options,  # type: ignore[arg-type]
    )
    with pytest.raises(TokstreamError, match=named):
        norm.to_json()


def test_unigram_byte_pieces_refuse() -> None:
    pieces = [("<unk>", 0.0, 2), ("a", -1.0, 1), ("<0x41>", 0.0, 6)]
    model = SentencePieceUnigram(pieces, unk_id=0, byte_fallback=True)
    with pytest.raises(TokstreamError, match="byte pieces in a Unigram model"):
        model.to_json()


@pytest.mark.parametrize(
    ("pieces", "named"),
    [
        ([("a", -1.0, 1), ("b", -2.0, 1), ("ab", -3.0, 1), ("ba", -3.0, 1)], "equal scores"),
        ([("a", -1.0, 1), ("ab", -3.0, 1)], "character 'b' is not a piece"),
        ([("a", -1.0, 1), ("b", -2.0, 5)], "UNUSED pieces"),
        ([("a", -1.0, 1), ("b", -2.0, 4)], "user-defined pieces"),
    ],
)
def test_bpe_pieces_refuse(pieces: list[tuple[str, float, int]], named: str) -> None:
    model = SentencePieceBPE([("<unk>", 0.0, 2), *pieces], unk_id=0, byte_fallback=False)
    with pytest.raises(TokstreamError, match=named):
        model.to_json()

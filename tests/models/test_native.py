"""The compiled core (``tokstream._native``) against the pure-Python merge loops it
replaces, on every fixture tokenizer whose model merges pairs (rank files and
``tokenizer.json`` BPE), and the switches that choose between them.

Each side is an independent implementation: ``models/ranks.py``'s bucket loop and
``models/bpe.py``'s scan and heap are the oracle (they are themselves checked against
tiktoken and tokenizers across the suite), ``_native.c`` the code under test. A piece is
any byte string, so the inputs here are raw bytes as well as text.

CI sets ``TOKSTREAM_EXPECT_NATIVE=1``: there the compiled core must be the one running,
so a build failure cannot pass as a pure-Python run.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import TOKENIZER_IDS, fixture_tokenizer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import adversarial_text, max_examples

import tokstream
from tokstream.byte_level import bytes_to_proxy
from tokstream.models import BPE, RankBPE
from tokstream.models.base import Spelling

#: The fixture tokenizers whose models run the pair merge loop.
MERGING = [
    tid
    for tid in TOKENIZER_IDS
    if not tid.startswith("spm/") and "bert" not in tid and "unigram" not in tid and "wordpiece" not in tid
]

needs_native = pytest.mark.skipif(
    not tokstream.native_available(),
    reason="the compiled core is not built here (pip install . with a C compiler) or TOKSTREAM_PURE is set",
)


def _model(tid: str) -> RankBPE | BPE:
    model = fixture_tokenizer(tid).pipeline.model
    if not isinstance(model, (RankBPE, BPE)):
        pytest.skip(f"{tid}: {type(model).__name__} has no pair merge loop")
    return model


def _same(model: RankBPE | BPE, piece: bytes) -> None:
    """Native and pure ids of one piece agree: its bytes for a rank file; its text, and
    its bytes through the byte-level encoder, for a merge list."""
    if isinstance(model, RankBPE):
        assert model.encode_bytes(piece) == model.encode_bytes_pure(piece), piece[:80]
        return
    text = piece.decode("utf-8", "replace")
    assert model.encode_piece(text) == model.encode_piece_pure(text), text[:80]
    encoders = model.byte_encoder(Spelling.BYTE_LEVEL)
    assert encoders is not None
    assert encoders[0](piece) == model.encode_piece_pure(bytes_to_proxy(piece)), piece[:80]


def test_native_runs_where_ci_expects_it() -> None:
    if os.environ.get("TOKSTREAM_EXPECT_NATIVE") == "1":
        assert tokstream.native_available(), "CI expects the compiled core: did the C build fail?"
    if os.environ.get("TOKSTREAM_PURE") == "1":
        assert not tokstream.native_available()


def test_pure_switch_in_a_fresh_process(tmp_path: Path) -> None:
    """``TOKSTREAM_PURE=1`` runs the pure path, and both paths give tiktoken's ids."""
    script = (
        "import tokstream, sys; tok = tokstream.load('o200k_base');"
        "print(tokstream.native_available(), tok.encode('Cold text: 東京スカイツリー supercalifragilistic ' * 3))"
    )
    runs = {}
    for pure in ("1", "0"):
        env = {**os.environ, "TOKSTREAM_PURE": pure}
        # cwd: not the clone, whose tokstream/ (no compiled module) ``-c`` would import.
        out = subprocess.run(
            [sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True, check=True
        )
        flag, ids = out.stdout.split(" ", 1)
        runs[pure] = (flag, ids)
    assert runs["1"][0] == "False"
    # TOKSTREAM_PURE=0 runs the compiled core wherever it was built.
    built = importlib.util.find_spec("tokstream._native") is not None
    assert runs["0"][0] == str(built)
    assert runs["1"][1] == runs["0"][1]
    tiktoken = pytest.importorskip("tiktoken")
    from helpers import tiktoken_reference

    ref: tiktoken.Encoding = tiktoken_reference("o200k_base")
    assert runs["0"][1].strip() == str(ref.encode("Cold text: 東京スカイツリー supercalifragilistic " * 3))


@needs_native
@pytest.mark.parametrize("tid", MERGING)
@settings(max_examples=max_examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_native_equals_pure_on_hypothesis_text(tid: str, data: st.DataObject) -> None:
    model = _model(tid)
    text = data.draw(adversarial_text(surrogates_ok=False))
    raw = data.draw(st.binary(max_size=200))
    for piece in re.findall(r"\s*\S+|\s+", text):  # word-like pieces, and the whole text below
        _same(model, piece.encode("utf-8"))
    # Whole texts as one piece: long runs cross the scan/heap threshold (48 symbols).
    _same(model, text.encode("utf-8"))
    _same(model, raw)


@needs_native
@pytest.mark.parametrize("tid", MERGING)
def test_native_equals_pure_on_long_runs(tid: str) -> None:
    """Runs of one character, of a pair, of CJK and of random bytes, up to 100k bytes
    (the heap path; the 1M-byte runs are in the slow test below)."""
    import random

    model = _model(tid)
    rng = random.Random(tid)
    pieces = [
        b"a" * 5000,
        b"ab" * 3000,
        " ".join(["x"] * 2000).encode(),
        "日本語のテキスト".encode() * 500,
        bytes(rng.randrange(256) for _ in range(20_000)),
        "".join(rng.choice("abcdeあいう漢字 \n1") for _ in range(30_000)).encode(),
    ]
    for n in range(1, 130):  # every length around the threshold
        pieces.append(bytes(rng.choice(b"aabbcde") for _ in range(n)))
    for piece in pieces:
        _same(model, piece)


@needs_native
@pytest.mark.slow
@pytest.mark.parametrize("tid", MERGING)
def test_native_equals_pure_on_million_byte_runs(tid: str) -> None:
    import random

    model = _model(tid)
    rng = random.Random(1)
    for piece in (
        b"a" * 1_000_000,
        "".join(rng.choice("ab漢") for _ in range(400_000)).encode(),
        bytes(rng.randrange(256) for _ in range(1_000_000)),
    ):
        _same(model, piece)


def test_native_table_is_not_built_on_the_pure_path() -> None:
    tok = tokstream.load("cl100k_base")
    model = tok.pipeline.model
    assert isinstance(model, RankBPE)
    tok.encode("warm-up with pieces that need merging: qzxv ")
    assert (model.native_table() is not None) == tokstream.native_available()

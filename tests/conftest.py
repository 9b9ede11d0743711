"""Shared fixtures: the fixture files, offline reference tiktoken encodings, ours.

Fixture files (rank files, corpora, test vectors) live outside the repository, in
``../shared/fixtures`` from the repository root; ``TOKSTREAM_FIXTURES`` overrides the
location. A test that needs a missing file skips with the reason, never passes.

The reference ``tiktoken.Encoding`` objects are built fully offline: tiktoken's own
constructors (``tiktoken_ext.openai_public``) supply the pattern and specials, and
their ``load_tiktoken_bpe`` is pointed at the local rank file for the duration of the
call (the file's sha256 is still checked against tiktoken's expected hash).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from unittest import mock

import pytest
from hypothesis import HealthCheck, settings
from strategies import max_examples

import tokstream

ENCODING_NAMES = ("cl100k_base", "o200k_base", "r50k_base", "p50k_base")
#: The corpora in fixtures/corpora.
CORPORA = (
    "corpus_alice_in_wonderland_en.txt",
    "corpus_botchan_en.txt",
    "corpus_us_constitution_en.txt",
    "corpus_wagahaiwa_nekodearu_ja.txt",
    "shakespeare_gutenberg_modern.txt",
)
#: The tokenizer.json fixtures, in fixtures/hf.
HF_FILES = (
    "gpt2_tokenizer.json",
    "llama3_tokenizer.json",
    "mistral_7b_v1_tokenizer.json",
    "bert_minilm_tokenizer.json",
    "botchan_unigram_1000_tokenizer.json",
)


def _fixtures_root() -> Path:
    override = os.environ.get("TOKSTREAM_FIXTURES")
    if override:
        return Path(override)
    # tests/conftest.py -> repo root -> its parent holds shared/fixtures
    return Path(__file__).resolve().parents[2] / "shared" / "fixtures"


#: Where the fixture files are (may not exist: tests then skip).
FIXTURES = _fixtures_root()

# The default for every hypothesis test in the suite (STYLE.md: no deadline, the
# example count from TOKSTREAM_MAX_EXAMPLES: hypothesis's 100, scaled as
# strategies.max_examples explains). Tests with their own budget use
# strategies.hyp_settings(default).
settings.register_profile(
    "tokstream",
    max_examples=max_examples(100),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("tokstream")


def pytest_configure(config: pytest.Config) -> None:
    # On a failing example hypothesis imports libcst (to print an @example patch), and
    # libcst 1.0 subclasses the deprecated mypy_extensions.TypedDict. Under the
    # project's filterwarnings = error that DeprecationWarning turned every hypothesis
    # failure into a pytest INTERNALERROR that hid the failing example.
    config.addinivalue_line(
        "filterwarnings", "ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning"
    )


def missing_fixture(reason: str) -> None:
    """Skip for a missing fixture; in CI (TOKSTREAM_REQUIRE_FIXTURES=1) fail instead."""
    if os.environ.get("TOKSTREAM_REQUIRE_FIXTURES") == "1":
        pytest.fail(f"{reason}; CI requires the fixtures", pytrace=False)
    pytest.skip(reason)


def fixture_file(relpath: str) -> Path:
    """The path of a fixture file; skips the calling test when it is absent."""
    path = FIXTURES / relpath
    if not path.is_file():
        missing_fixture(f"fixture file {relpath} not found under {FIXTURES} (set TOKSTREAM_FIXTURES)")
    return path


def require_fixture(relpath: str | Path) -> Path:
    """``fixture_file`` for a ``Path``."""
    return fixture_file(str(relpath))


def hf_reference(path: Path):  # type: ignore[no-untyped-def]
    """``tokenizers.Tokenizer`` for a tokenizer.json, padding and truncation off (the
    BERT fixture ships with both on; they shape batches, not ids)."""
    tokenizers = pytest.importorskip("tokenizers")
    ref = tokenizers.Tokenizer.from_file(str(path))
    ref.no_padding()
    ref.no_truncation()
    return ref


#: Every fixture tokenizer by id: the four embedded encodings, the tokenizer.json
#: files (``hf/...``) and the SentencePiece models (``spm/...``).
TOKENIZER_IDS = (
    *ENCODING_NAMES,
    *(f"hf/{name}" for name in HF_FILES),
    "spm/mistral_7b_v1_tokenizer.model",
    "spm/spm_botchan_en_bpe_1000.model",
    "spm/spm_botchan_en_unigram_1000.model",
)
#: The byte-level ones (every token is raw bytes; decode is byte-local).
BYTE_LEVEL_IDS = ("o200k_base", "r50k_base", "hf/llama3_tokenizer.json")
_TOKENIZERS: dict[str, tokstream.Tokenizer] = {}


def fixture_tokenizer(tid: str) -> tokstream.Tokenizer:
    """A tokenizer from ``TOKENIZER_IDS``, loaded once; skips when its file is absent."""
    if tid not in _TOKENIZERS:
        if tid.startswith("hf/"):
            _TOKENIZERS[tid] = tokstream.Tokenizer.from_file(fixture_file(tid))
        elif tid.startswith("spm/"):
            _TOKENIZERS[tid] = tokstream.Tokenizer.from_sentencepiece(fixture_file(tid))
        else:
            _TOKENIZERS[tid] = tokstream.load(tid)
    return _TOKENIZERS[tid]


_PUBLIC_BYTES: dict[str, tuple[bytes, ...]] = {}


def public_token_bytes(tid: str) -> tuple[bytes, ...]:
    """Each id's bytes of a ``TOKENIZER_IDS`` tokenizer read by the public API, id by
    id (``tok.token_bytes``), ``b""`` for special tokens and ids without text: the
    brute-force reference of the constraint and mask tests."""
    if tid not in _PUBLIC_BYTES:
        tok = fixture_tokenizer(tid)
        specials = set(tok.special_tokens.values())
        out = []
        for i in range(tok.n_vocab):
            try:
                data = tok.token_bytes(i)
            except ValueError:
                data = b""
            out.append(b"" if i in specials else data)
        _PUBLIC_BYTES[tid] = tuple(out)
    return _PUBLIC_BYTES[tid]


def load_example(name: str) -> ModuleType:
    """Import ``examples/<name>.py`` by path (the examples are scripts, not a package)."""
    path = Path(__file__).resolve().parents[1] / "examples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"{name}_example", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """The fixture folder; skips when it is absent."""
    if not FIXTURES.is_dir():
        missing_fixture(f"fixture folder {FIXTURES} not found (set TOKSTREAM_FIXTURES)")
    return FIXTURES


@pytest.fixture(scope="session")
def reference() -> Callable[[str], object]:
    """Factory: encoding name -> the reference ``tiktoken.Encoding``, built offline.

    Skips the test when tiktoken or the rank file is missing.
    """
    cache: dict[str, object] = {}

    def build(name: str):
        if name not in cache:
            pytest.importorskip("tiktoken")
            import tiktoken
            import tiktoken.load
            from tiktoken_ext import openai_public

            local = fixture_file(f"tiktoken/{name}.tiktoken")
            real_load = tiktoken.load.load_tiktoken_bpe

            def load_local(blobpath: str, expected_hash: str | None = None):
                # Only the file name of tiktoken's URL matters; the hash is still checked.
                assert blobpath.rsplit("/", 1)[-1] == local.name, blobpath
                return real_load(str(local), expected_hash)

            # TIKTOKEN_CACHE_DIR="" stops tiktoken copying the file into its cache dir.
            with mock.patch.object(
                openai_public, "load_tiktoken_bpe", load_local
            ), mock.patch.dict(os.environ, {"TIKTOKEN_CACHE_DIR": ""}):
                spec = openai_public.ENCODING_CONSTRUCTORS[name]()
            cache[name] = tiktoken.Encoding(**spec)
        return cache[name]

    return build


@pytest.fixture(scope="session")
def ours() -> Callable[[str], tokstream.Tokenizer]:
    """Factory: encoding name -> ``tokstream.load(name)`` (the embedded tokenizer)."""
    return tokstream.load


@pytest.fixture(scope="session", params=ENCODING_NAMES)
def encoding_name(request: pytest.FixtureRequest) -> str:
    """Each of the four OpenAI encodings in turn."""
    return request.param


@pytest.fixture(scope="session")
def pair(encoding_name, ours, reference):
    """``(tokstream tokenizer, reference tiktoken encoding)`` for ``encoding_name``."""
    return ours(encoding_name), reference(encoding_name)


@pytest.fixture(scope="session")
def all_pairs(ours, reference):
    """``{name: (tokstream tokenizer, reference encoding)}`` for all four encodings."""
    return {name: (ours(name), reference(name)) for name in ENCODING_NAMES}


@pytest.fixture(scope="session")
def fixture_path() -> Callable[[str], Path]:
    """Factory: path relative to the fixture folder -> ``Path``; skips when absent."""
    return fixture_file


def _corpus_names() -> list[str]:
    folder = FIXTURES / "corpora"
    names = sorted(p.name for p in folder.glob("*.txt")) if folder.is_dir() else []
    return names or ["<corpora missing>"]


@pytest.fixture(scope="session", params=_corpus_names())
def corpus_name(request: pytest.FixtureRequest) -> str:
    """Each corpus file name in ``fixtures/corpora`` in turn."""
    return request.param


@pytest.fixture(scope="session")
def read_corpus() -> Callable[[str], str]:
    """Factory: corpus file name -> its text (cached); skips when absent."""
    cache: dict[str, str] = {}

    def read(name: str) -> str:
        if name not in cache:
            cache[name] = fixture_file(f"corpora/{name}").read_text(encoding="utf-8")
        return cache[name]

    return read

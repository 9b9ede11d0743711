"""Shared pytest fixtures: the offline reference tiktoken encodings, ours, the corpora.

Plain functions and constants (fixture paths, fixture tokenizers, references, the
mismatch reports) are in ``helpers.py``; this file holds the pytest fixtures built on
them, the hypothesis profile and the pytest configuration.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import ENCODING_NAMES, FIXTURES, fixture_names, fixture_text, missing_fixture, tiktoken_reference
from hypothesis import HealthCheck, settings
from strategies import max_examples

import tokstream

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
    config.addinivalue_line("filterwarnings", "ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning")


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """The fixture folder; skips when it is absent."""
    if not FIXTURES.is_dir():
        missing_fixture(f"fixture folder {FIXTURES} not found (set TOKSTREAM_FIXTURES)")
    return FIXTURES


@pytest.fixture(scope="session")
def reference() -> Callable[[str], object]:
    """Factory: encoding name -> the reference ``tiktoken.Encoding``, built offline
    (``helpers.tiktoken_reference``). Skips the test when tiktoken or the rank file is
    missing."""
    return tiktoken_reference


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


@pytest.fixture(scope="session", params=fixture_names("corpora", "*.txt") or ["<corpora missing>"])
def corpus_name(request: pytest.FixtureRequest) -> str:
    """Each corpus file name in ``fixtures/corpora`` in turn."""
    return request.param


@pytest.fixture(scope="session")
def read_corpus() -> Callable[[str], str]:
    """Factory: corpus file name -> its text (read once); skips when absent."""
    return lambda name: fixture_text(f"corpora/{name}")

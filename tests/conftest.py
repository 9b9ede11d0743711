"""Shared pytest fixtures: the offline reference tiktoken encodings, ours, the corpora.

Plain functions and constants (fixture paths, fixture tokenizers, references, the
mismatch reports) are in ``helpers.py``; this file holds the pytest fixtures built on
them, the hypothesis profile and the pytest configuration.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest
from helpers import ENCODING_NAMES, fixture_names, fixture_text, tiktoken_reference
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


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-slow",
        action="store_true",
        default=False,
        help="also run the tests marked slow (CI does, with TOKSTREAM_RUN_SLOW=1)",
    )


def _run_slow(config: pytest.Config) -> bool:
    # An explicit -m naming the marker ("-m slow") selects them too.
    return bool(
        config.getoption("--run-slow")
        or os.environ.get("TOKSTREAM_RUN_SLOW") == "1"
        or "slow" in config.option.markexpr
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The few long property and corpus tests are deselected by default (not skipped: a
    # skip would read as a missing fixture or package), so that `pytest` on a laptop
    # takes minutes; CI runs them all.
    if _run_slow(config):
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item.get_closest_marker("slow") is None]
        config.stash[_SLOW_KEY] = len(slow)
        workeroutput = getattr(config, "workeroutput", None)  # a pytest-xdist worker
        if workeroutput is not None:
            workeroutput["slow_deselected"] = len(slow)


_SLOW_KEY = pytest.StashKey[int]()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    # pytest-xdist's controller collects nothing itself: its workers tell the count.
    n = getattr(node, "workeroutput", {}).get("slow_deselected", 0)
    config = node.config
    config.stash[_SLOW_KEY] = max(config.stash.get(_SLOW_KEY, 0), n)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    n = config.stash.get(_SLOW_KEY, 0)
    if n:
        terminalreporter.write_line(
            f"{n} slow tests were deselected; run them with `pytest --run-slow` (or TOKSTREAM_RUN_SLOW=1), as CI does"
        )


def pytest_configure(config: pytest.Config) -> None:
    # On a failing example hypothesis imports libcst (to print an @example patch), and
    # libcst 1.0 subclasses the deprecated mypy_extensions.TypedDict. Under the
    # project's filterwarnings = error that DeprecationWarning turned every hypothesis
    # failure into a pytest INTERNALERROR that hid the failing example.
    config.addinivalue_line("filterwarnings", "ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning")


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

"""The ``>>>`` examples in every module's docstrings run as shown (they are the
documentation; STYLE.md: examples cannot drift from the code).

The modules come from a walk over the package (``pkgutil.walk_packages``), so a new
module is covered without a list to keep up, and a module that does not import fails
the collection instead of dropping out of the walk. Each module is one test; a module
without examples passes once it imports. The optional integrations
(``integrations.transformers``, ``integrations.vllm``) import without torch,
transformers or vllm, and their examples use numpy only: they run here like the
others, never skipped. The examples use the embedded encodings, no fixture file.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re

import pytest

import tokstream


def _reraise(name: str) -> None:
    # walk_packages calls this inside its `except` when a package fails to import;
    # without it an ImportError there would silently drop the package from the walk.
    raise


MODULES = [
    tokstream.__name__,
    *(m.name for m in pkgutil.walk_packages(tokstream.__path__, tokstream.__name__ + ".", onerror=_reraise)),
]


def _doctests(module: str) -> list[doctest.DocTest]:
    return doctest.DocTestFinder().find(importlib.import_module(module))


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples(module: str) -> None:
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []  # the runner writes each failure here
    failed = sum(runner.run(test, out=report.append).failed for test in _doctests(module))
    assert failed == 0, "".join(report)


def test_every_example_is_found() -> None:
    """Each ``>>>`` line in a module's source is an example the walk runs: none hides
    where the finder cannot see it (an object from another module, a wrapper)."""
    missed = {}
    for module in MODULES:
        mod = importlib.import_module(module)
        assert mod.__file__ is not None
        if not mod.__file__.endswith(".py"):
            continue  # the compiled core (tokstream._native): no Python source to read
        with open(mod.__file__, encoding="utf-8") as f:
            prompts = len(re.findall(r"^\s*>>> ", f.read(), re.M))
        found = sum(len(t.examples) for t in _doctests(module))
        if found != prompts:
            missed[module] = (found, prompts)
    assert not missed, f"(examples found, >>> lines) differ: {missed}"


def test_walk_reaches_method_examples() -> None:
    """Methods' examples are in the walk (``Tokenizer.stable_boundary``'s, say)."""
    (test,) = [t for t in _doctests("tokstream.tokenizer") if t.name.endswith("Tokenizer.stable_boundary")]
    assert test.examples
    assert "tokstream.stream.encoder" in MODULES and "tokstream.integrations.vllm" in MODULES

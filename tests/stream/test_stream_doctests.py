"""The examples in the streaming modules' docstrings run (they are the documentation)."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize(
    "module", ["tokstream.stream.encoder", "tokstream.stream.decoder", "tokstream.stream.stops", "tokstream.stream.aio"]
)
def test_docstring_examples(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_stable_boundary_example() -> None:
    from tokstream import Tokenizer

    finder = doctest.DocTestFinder()
    (test,) = finder.find(Tokenizer.stable_boundary, "stable_boundary", globs={})
    assert test.examples
    assert doctest.DocTestRunner().run(test).failed == 0

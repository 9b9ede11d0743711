"""The examples in the inference-side modules' docstrings run (they are the
documentation): streaming, constraints and masks, prefix cache, integrations."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "tokstream.stream.encoder",
    "tokstream.stream.decoder",
    "tokstream.stream.stops",
    "tokstream.stream.aio",
    "tokstream.vocab",
    "tokstream.constrain.constraint",
    "tokstream.constrain.healing",
    "tokstream.constrain.masks",
    "tokstream.constrain.unreachable",
    "tokstream.constrain.speculative",
    "tokstream.cache.planner",
    "tokstream.cache.index",
    "tokstream.integrations.transformers",
    "tokstream.integrations.vllm",
    "tokstream.demo",
]


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_stable_boundary_example() -> None:
    from tokstream import Tokenizer

    finder = doctest.DocTestFinder()
    (test,) = finder.find(Tokenizer.stable_boundary, "stable_boundary", globs={})
    assert test.examples
    assert doctest.DocTestRunner().run(test).failed == 0

"""The scripts in examples/ run as a user would run them, offline."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO

EXAMPLES = sorted((REPO / "examples").glob("*.py"))


@pytest.mark.slow
@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(script: Path) -> None:
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.slow
def test_distributed_counting_trains_the_same_tokenizer() -> None:
    script = next(p for p in EXAMPLES if p.name == "distributed_counting.py")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=True).stdout
    assert "same as training on the texts: True" in out


def test_readme_examples() -> None:
    """The ``>>>`` examples in README.md run as shown."""
    import doctest

    readme = REPO / "README.md"
    result = doctest.testfile(str(readme), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0

"""The test tree mirrors the package: ``tests/<pkg>/`` holds the tests of
``tokstream/<pkg>/``, and every subpackage with code has its folder (``tokstream/data``
holds only the embedded rank files)."""

from __future__ import annotations

from pathlib import Path

from helpers import REPO

PACKAGE = REPO / "tokstream"
TESTS = REPO / "tests"
NO_CODE = {"data"}


def _folders(root: Path) -> set[str]:
    return {p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}


def test_every_test_folder_is_a_subpackage() -> None:
    strays = sorted(_folders(TESTS) - _folders(PACKAGE))
    assert not strays, f"tests/{strays[0]}/ mirrors no tokstream/{strays[0]}/ subpackage: move its tests"


def test_every_subpackage_has_a_test_folder() -> None:
    missing = sorted(_folders(PACKAGE) - NO_CODE - _folders(TESTS))
    assert not missing, f"tokstream/{missing[0]}/ has no tests/{missing[0]}/ folder"


def test_subpackages_are_packages() -> None:
    for name in sorted(_folders(PACKAGE) - NO_CODE):
        assert (PACKAGE / name / "__init__.py").is_file(), f"tokstream/{name}/ has no __init__.py"

"""``pip install .`` with and without a C compiler: the compiled core is optional.

The wheel is built from a copy of the package (``pip wheel --no-deps``, pip's own build
isolation fetching setuptools), once with the compiler and once with ``CC`` pointing at
nothing, as on a machine without gcc: the build must succeed both times, with the
extension in the first wheel only. The pure-Python path that a compiler-less install
runs is the one ``TOKSTREAM_PURE=1`` selects (CI's second pass).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _wheel(tmp: Path, env_extra: dict[str, str]) -> list[str]:
    src = tmp / "src"
    shutil.copytree(REPO / "tokstream", src / "tokstream", ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    out = tmp / "wheels"
    env = {**os.environ, **env_extra, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(out), str(src)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    (wheel,) = out.glob("tokstream-*.whl")
    return zipfile.ZipFile(wheel).namelist()


@pytest.mark.slow
def test_wheel_without_a_compiler_has_no_extension(tmp_path: Path) -> None:
    names = _wheel(tmp_path, {"CC": str(tmp_path / "no-such-cc")})
    assert "tokstream/tokenizer.py" in names
    # Package data: the token inspector's page (tokstream view) and the rank files.
    assert {
        "tokstream/view/static/index.html",
        "tokstream/view/static/app.js",
        "tokstream/view/static/style.css",
    } <= set(names)
    assert "tokstream/data/o200k_base.tiktoken.xz" in names
    assert not [n for n in names if n.startswith("tokstream/_native.") and n.endswith((".so", ".pyd"))], names


@pytest.mark.slow
@pytest.mark.skipif(shutil.which(os.environ.get("CC", "gcc")) is None, reason="no C compiler on PATH")
def test_wheel_with_a_compiler_has_the_extension(tmp_path: Path) -> None:
    names = _wheel(tmp_path, {})
    assert [n for n in names if n.startswith("tokstream/_native.") and n.endswith((".so", ".pyd"))], names

"""What the view tests share: ``tokstream view`` run as its own process."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

ViewCommand = Callable[..., AbstractContextManager[str]]


@contextmanager
def _view_command(cwd: Path, *args: str) -> Iterator[str]:
    """``python -m tokstream view --port 0 *args`` in ``cwd`` (not the clone: ``-m`` must
    import the installed package): yields the URL it prints, then stops it with SIGINT,
    as Ctrl-C, and checks it exits 0."""
    argv = [sys.executable, "-m", "tokstream", "view", "--port", "0", *args]
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.fullmatch(r"tokstream view: serving on (http://127\.0\.0\.1:\d+/)\n", line)
        assert found is not None, (line, proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
        yield found.group(1)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture(scope="module")
def view_command(tmp_path_factory: pytest.TempPathFactory) -> ViewCommand:
    """``view_command(*args)``: a context manager running ``tokstream view`` (above)."""
    cwd = tmp_path_factory.mktemp("view-cwd")
    return lambda *args: _view_command(cwd, *args)

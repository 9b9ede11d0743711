"""Which merge loop runs: the optional compiled core or the pure-Python oracle.

``tokstream._native`` (``_native.c``) is built by ``pip install .`` when a C compiler
is there; without one the install still succeeds and the pure-Python loops run.
``TOKSTREAM_PURE=1`` (read at import) forces the pure path, which the tests use to
check one against the other.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

__all__ = ["native", "native_available"]


def _load() -> ModuleType | None:
    if os.environ.get("TOKSTREAM_PURE", "") not in ("", "0"):
        return None
    try:
        # By name: ``from . import _native`` would import the package, which imports this.
        return importlib.import_module(__name__.rpartition(".")[0] + "._native")
    except ImportError:  # not built: no compiler at install time
        return None


#: The compiled module, or None when the pure-Python path runs.
native: ModuleType | None = _load()


def native_available() -> bool:
    """True when tokstream's compiled core runs (built at install, and
    ``TOKSTREAM_PURE`` not set); False when the pure-Python path runs. Both give the
    same ids; the compiled one merges BPE pieces faster."""
    return native is not None

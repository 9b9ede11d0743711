"""``python -m tokstream``: the same program as the ``tokstream`` command."""

from __future__ import annotations

# Guarded so that importing this module (pytest --doctest-modules does) runs nothing.
if __name__ == "__main__":
    import sys

    from .cli import main

    sys.exit(main())

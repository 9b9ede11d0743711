"""``tokstream/pre_tokenizers/_tables.py`` is what ``tools/gen_tokenizers_classes.py``
writes for the installed ``tokenizers``: the classes are read off the library again and
compared, and the file is compared byte for byte with the generator's output."""

from __future__ import annotations

import re

import pytest
from helpers import REPO, load_tool

from tokstream.pre_tokenizers import _tables

pytest.importorskip("tokenizers")

TABLES = REPO / "tokstream" / "pre_tokenizers" / "_tables.py"


def _points(cls: str) -> set[int]:
    """The code points of a class as the generator writes it (``[\\U..\\U..-\\U..]``)."""
    found: set[int] = set()
    for a, b in re.findall(r"\\U([0-9A-F]{8})(?:-\\U([0-9A-F]{8}))?", cls):
        found.update(range(int(a, 16), int(b or a, 16) + 1))
    return found


def test_tables_regenerate() -> None:
    gen = load_tool("gen_tokenizers_classes")
    punct, numeric = gen.classes()
    for name, points in (("PUNCT", punct), ("NUMERIC", numeric)):
        committed = getattr(_tables, name)
        if committed != gen.as_class(points):
            extra = sorted(_points(committed) - set(points))
            missing = sorted(set(points) - _points(committed))
            pytest.fail(
                f"{name} differs from tokenizers {gen.tokenizers.__version__}: it also holds "
                f"{[hex(c) for c in extra[:8]]} ({len(extra)}), lacks {[hex(c) for c in missing[:8]]} "
                f"({len(missing)}); run tools/gen_tokenizers_classes.py"
            )
    text = TABLES.read_text(encoding="utf-8")
    # The classes are the installed library's; the header names the version they were
    # read off, which may be another release with the same tables.
    version = re.search(r"from tokenizers (\S+);", text)
    assert version is not None, "the header of _tables.py names no tokenizers version"
    assert text == gen.render(punct, numeric, version=version[1]), (
        "_tables.py is not the generator's output; run tools/gen_tokenizers_classes.py"
    )

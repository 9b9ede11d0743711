"""``tokstream/normalizers/_tables.py`` is what ``tools/gen_normalizer_tables.py`` finds.

The generator probes the installed ``tokenizers`` with every code point; here it runs in
process, and each table it writes must equal the file's, as values and byte for byte as
source text (so a hand edit of the file, or a ``tokenizers`` release that moved a
character, fails here, naming the table). ``NF_PROTECTED`` needs ``unicodedata2`` 17.0
(the Unicode version the table is defined against) and ``LOWER_ADDED`` the Age property
of ``unicodedataplus``; both are in the test extra, and the table skips without them.
"""

from __future__ import annotations

import pytest
from helpers import load_tool

pytest.importorskip("tokenizers")

gen = load_tool("gen_normalizer_tables")


def _require(name: str) -> None:
    if name == "NF_PROTECTED":
        ud = pytest.importorskip("unicodedata2")
        if ud.unidata_version != gen.UNICODE:
            pytest.skip(f"unicodedata2 has Unicode {ud.unidata_version}; the table is read against {gen.UNICODE}")
    elif name == "LOWER_ADDED":
        pytest.importorskip("unicodedataplus")


def test_file_holds_the_generated_tables():
    # No table added or dropped by hand; the header says the file is generated.
    text = gen.TARGET.read_text(encoding="utf-8")
    assert text.splitlines()[0] == gen.header().splitlines()[0]
    assert list(gen.split_blocks(text)) == list(gen.TABLES)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(gen.TABLES))
def test_table_regenerates(name):
    _require(name)
    from tokstream.normalizers import _tables

    value = gen.TABLES[name][1]()
    assert getattr(_tables, name) == value
    written = gen.split_blocks(gen.TARGET.read_text(encoding="utf-8"))[name]
    assert written == gen.block(name, value)

"""The shared test helpers (``tests/helpers.py``) do what the suite relies on: a missing
fixture skips, or fails under ``TOKSTREAM_REQUIRE_FIXTURES=1``; a mismatch report names
the first differing index; the examples in the module's docstrings run."""

from __future__ import annotations

import doctest

import helpers
import pytest
from helpers import assert_sequences_equal, describe_difference, first_difference, fixture_file, missing_fixture


def test_examples() -> None:
    result = doctest.testmod(helpers, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_missing_fixture_skips(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOKSTREAM_REQUIRE_FIXTURES", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no such file"):
        missing_fixture("no such file")
    with pytest.raises(pytest.skip.Exception, match=r"fixture file nope/absent\.txt not found under"):
        fixture_file("nope/absent.txt")


def test_missing_fixture_fails_when_fixtures_are_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKSTREAM_REQUIRE_FIXTURES", "1")
    with pytest.raises(pytest.fail.Exception, match="no such file; CI requires the fixtures"):
        missing_fixture("no such file")
    with pytest.raises(pytest.fail.Exception, match=r"nope/absent\.txt"):
        fixture_file("nope/absent.txt")


def test_first_difference() -> None:
    assert first_difference([], []) is None
    assert first_difference([1], []) == 0
    assert first_difference([1, 2], [1, 2, 3]) == 2
    assert first_difference([(1, 0.0)], [(1, -0.0)]) is None
    assert first_difference([(1, 0.0)], [(1, -0.0)], key=lambda x: str(x[1])) == 0


def test_report_names_the_index_and_its_neighbours() -> None:
    ours, theirs = list(range(20)), list(range(20))
    theirs[12] = 99
    with pytest.raises(AssertionError) as info:
        assert_sequences_equal(ours, theirs, what="encode", names=("tokstream", "tiktoken"), text="x" * 400)
    message = str(info.value)
    assert message.splitlines()[0] == "encode: first difference at index 12 (tokstream: length 20, tiktoken: length 20)"
    assert "tokstream[9:16] = [9, 10, 11, 12, 13, 14, 15]" in message
    assert "tiktoken[9:16]  = [9, 10, 11, 99, 13, 14, 15]" in message
    assert "... (400 chars)" in message
    # A rendering that raises shows the error in place of the item.
    report = describe_difference([1, 2], [1, 3], show=lambda t: f"{t}={[b'a', b'b'][t]!r}")
    assert "2=<IndexError: list index out of range>" in report and "1=b'b'" in report

"""Rank files (``formats/tiktoken.py``) that tiktoken reads and we used to refuse, or
the reverse: the empty token's ``=`` line, and a file with no tokens.

The damaged-file cases (bad lines, duplicates, truncation, hashes) are in
``tests/test_errors.py``; huge ranks in ``test_hostile_files.py``.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from helpers import fixture_file

import tokstream
from tokstream import Tokenizer
from tokstream.errors import TokenizerFileError
from tokstream.formats.tiktoken import parse_ranks

tiktoken = pytest.importorskip("tiktoken")
tiktoken_load = pytest.importorskip("tiktoken.load")

TEXTS = ["Hello, world! It's 2024.", "", " \n\n  x", "日本語 👍🏽", "aaaaaaaaaaaaaaaaaaaaaaaaaaaa"]


def _with_empty_token(tmp_path: Path, where: str) -> tuple[Path, int]:
    """The first 1,000 lines of r50k_base and a line for the empty token, ``= 1000``."""
    lines = fixture_file("tiktoken/r50k_base.tiktoken").read_bytes().splitlines(keepends=True)[:1000]
    empty = b"= 1000\n"
    body = [empty, *lines] if where == "first" else [*lines[:500], empty, *lines[500:]]
    path = tmp_path / "with_empty.tiktoken"
    path.write_bytes(b"".join(body))
    return path, 1000


@pytest.mark.parametrize("where", ["first", "middle"])
def test_empty_token_loads_as_tiktoken_reads_it(tmp_path: Path, where: str) -> None:
    """tiktoken reads ``=`` as ``b""`` (``base64.b64decode(b"=")``); the id exists,
    decodes to nothing, and encode never produces it."""
    path, empty_id = _with_empty_token(tmp_path, where)
    ranks = tiktoken_load.load_tiktoken_bpe(str(path))
    assert ranks[b""] == empty_id
    assert parse_ranks(path.read_bytes(), path.name) == ranks
    from tiktoken_ext.openai_public import r50k_pat_str as pattern

    ref = tiktoken.Encoding("with_empty", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    tok = Tokenizer.from_tiktoken(path, pattern="r50k_base")
    for text in TEXTS:
        ids = tok.encode(text)
        assert ids == ref.encode_ordinary(text)
        assert empty_id not in ids
    assert tok.decode_bytes([empty_id]) == ref.decode_bytes([empty_id]) == b""
    assert tok.decode([empty_id, 71]) == ref.decode([empty_id, 71])
    assert tok.token_bytes(empty_id) == b""
    assert tok.vocab.token_bytes(empty_id) == b""


def test_empty_token_is_never_allowed_by_a_constraint(tmp_path: Path) -> None:
    """A zero-byte token would let a constrained generation loop forever without
    progress: the vocabulary index leaves it out of every match."""
    path, empty_id = _with_empty_token(tmp_path, "middle")
    tok = Tokenizer.from_tiktoken(path, pattern="r50k_base")
    masker = tokstream.TokenMasker(tok)
    for constraint in (
        tokstream.prefix_constraint(tok, b"hel"),
        tokstream.choice_constraint(tok, ["yes", "no"]),
    ):
        assert empty_id not in constraint.allowed_ids().tolist()
        assert not masker.mask(constraint)[empty_id]
        assert not constraint.accept(empty_id)


def test_other_padding_only_tokens_stay_refused(tmp_path: Path) -> None:
    """Only ``=`` stands for the empty token; ``==`` is no base64 tiktoken writes."""
    lines = fixture_file("tiktoken/r50k_base.tiktoken").read_bytes().splitlines(keepends=True)[:300]
    data = b"".join(lines) + b"== 300\n"
    with pytest.raises(TokenizerFileError, match=r"x\.tiktoken, line 301: bad base64"):
        parse_ranks(data, "x.tiktoken")


@pytest.mark.parametrize("data", [b"", b"\n", b"\n\n\n"])
def test_a_file_with_no_tokens_is_refused(tmp_path: Path, data: bytes) -> None:
    """It parsed as an empty vocabulary."""
    path = tmp_path / "empty.tiktoken"
    path.write_bytes(data)
    with pytest.raises(TokenizerFileError, match=r"^empty\.tiktoken: no tokens"):
        Tokenizer.from_tiktoken(path, pattern="r50k_base")


def test_a_truncated_last_line_says_so(tmp_path: Path) -> None:
    """A rank cut short can clash with another rank: the missing newline is reported
    first, since it explains both."""
    lines = fixture_file("tiktoken/r50k_base.tiktoken").read_bytes().splitlines(keepends=True)[:300]
    cut = b"".join(lines)[:-2]  # "... 29" of the last line "... 299\n"
    assert base64.b64decode(lines[-1].split()[0]) != b""
    with pytest.raises(TokenizerFileError, match=r"x\.tiktoken, line 300: no newline at the end"):
        parse_ranks(cut, "x.tiktoken")

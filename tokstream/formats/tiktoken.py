"""tiktoken rank files: one ``<base64 token> <rank>`` line per token.

Reads the format tiktoken's ``load_tiktoken_bpe`` reads, and is stricter about damage:
a bad line, bad base64, a duplicate token or rank, a file with no tokens, or a wrong
sha256 raises ``TokenizerFileError`` naming the file and the line. Base64 must be
canonical, with one exception tiktoken's files use: ``=`` for the empty token
(``base64.b64decode(b"=") == b""``; the canonical ``""`` would leave the line one
field). Ranks must be dense enough for per-id tables (``json_fields.check_dense_ids``):
a rank of 10**8 in a 50k-token file is refused, naming its line.
"""

from __future__ import annotations

import binascii
import functools
import hashlib
import os
import re
import sys

from ..errors import HashMismatchError, TokenizerFileError
from ..json_fields import SPARE_IDS, check_dense_ids, sparse_ids_message
from . import gc_paused, reading

__all__ = ["check_sha256", "parse_ranks", "read_rank_file"]

if sys.version_info >= (3, 11):
    _b64decode = functools.partial(binascii.a2b_base64, strict_mode=True)
else:  # pragma: no cover - strict_mode is new in 3.11
    _B64 = re.compile(rb"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")

    def _b64decode(token: bytes) -> bytes:
        if _B64.fullmatch(token) is None:
            raise binascii.Error("not canonical base64")
        return binascii.a2b_base64(token)


def check_sha256(data: bytes, expected: str, source: str) -> None:
    """Raise ``HashMismatchError`` unless ``sha256(data) == expected``."""
    got = hashlib.sha256(data).hexdigest()
    if got != expected.lower():
        raise HashMismatchError(
            f"{source}: sha256 {got[:12]}..., expected {expected[:12]}...; damaged file or another version?"
        )


def parse_ranks(data: bytes, source: str) -> dict[bytes, int]:
    """Parse rank-file bytes into ``{token_bytes: rank}``.

    ``source`` names the file in error messages. The fast loop assumes a good file;
    on any failure a second, careful pass reads it line by line and names the first
    bad line (or, for the empty token's ``=``, reads it).
    """
    ranks: dict[bytes, int] = {}
    lines = data.splitlines()
    if data and not data.endswith(b"\n"):
        # A file cut mid-line can still parse (a rank cut short), or fail as a
        # duplicate rank: say what happened first.
        raise TokenizerFileError(f"{source}, line {len(lines)}: no newline at the end; the file looks truncated")
    a2b = _b64decode
    try:
        for line in lines:
            if line:
                token, rank = line.split()
                ranks[a2b(token)] = int(rank)
    except (ValueError, binascii.Error):
        ranks = _read_carefully(lines, source)
    else:
        n_lines = sum(1 for line in lines if line)
        if len(ranks) != n_lines or len(set(ranks.values())) != n_lines or (ranks and min(ranks.values()) < 0):
            ranks = _read_carefully(lines, source)
    if not ranks:
        raise TokenizerFileError(f"{source}: no tokens; the rank file is empty")
    if not check_dense_ids(len(ranks), max(ranks.values())):
        _raise_sparse(lines, len(ranks), source)
    return ranks


def _read_carefully(lines: list[bytes], source: str) -> dict[bytes, int]:
    """The ranks, read line by line: the first bad line raises, naming it."""
    ranks: dict[bytes, int] = {}
    seen_ranks: dict[int, int] = {}
    lines_of: dict[bytes, int] = {}
    for lineno, line in enumerate(lines, 1):
        if not line:
            continue
        fields = line.split()
        where = f"{source}, line {lineno}"
        if len(fields) != 2:
            raise TokenizerFileError(f"{where}: expected '<base64 token> <rank>', got {line[:60]!r}")
        try:
            token = b"" if fields[0] == b"=" else _b64decode(fields[0])
        except binascii.Error as e:
            raise TokenizerFileError(f"{where}: bad base64 {fields[0][:60]!r} ({e})") from e
        try:
            rank = int(fields[1])
        except ValueError as e:
            raise TokenizerFileError(f"{where}: rank {fields[1][:30]!r} is not an integer") from e
        if rank < 0:
            raise TokenizerFileError(f"{where}: negative rank {rank}")
        if token in ranks:
            raise TokenizerFileError(
                f"{where}: token {token!r} already has rank {ranks[token]} (line {lines_of[token]})"
            )
        if rank in seen_ranks:
            raise TokenizerFileError(f"{where}: duplicate rank {rank} (first on line {seen_ranks[rank]})")
        ranks[token] = rank
        seen_ranks[rank] = lines_of[token] = lineno
    return ranks


def _raise_sparse(lines: list[bytes], n_tokens: int, source: str) -> None:
    """Name the first line whose rank ``check_dense_ids`` refuses."""
    limit = 2 * n_tokens + SPARE_IDS  # the first refused id
    for lineno, line in enumerate(lines, 1):
        fields = line.split()
        if fields and int(fields[1]) >= limit:
            raise TokenizerFileError(f"{source}, line {lineno}: {sparse_ids_message(n_tokens, int(fields[1]))}")
    raise AssertionError("unreachable")  # pragma: no cover


def read_rank_file(path: str | os.PathLike[str], *, expected_hash: str | None = None) -> tuple[dict[bytes, int], str]:
    """Read a rank file from disk: ``(ranks, stem)``, the stem of the file's name
    naming the tokenizer by default."""
    source = os.fspath(path)
    try:
        with open(source, "rb") as f:
            data = f.read()
    except OSError as e:
        raise TokenizerFileError(f"cannot read rank file {source!r}: {e.strerror}") from e
    label = os.path.basename(source)
    with reading(label):
        if expected_hash is not None:
            check_sha256(data, expected_hash, label)
        with gc_paused():
            return parse_ranks(data, label), label.split(".")[0]

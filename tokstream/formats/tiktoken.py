"""tiktoken rank files: one ``<base64 token> <rank>`` line per token.

Reads the format tiktoken's ``load_tiktoken_bpe`` reads, and is stricter about damage:
a bad line, bad base64, a duplicate token or rank, or a wrong sha256 raises
``TokenizerFileError`` naming the file and the line.
"""

from __future__ import annotations

import binascii
import functools
import hashlib
import os
import re
import sys

from ..errors import HashMismatchError, TokenizerFileError
from . import gc_paused

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
    on any failure a second, careful pass finds the first bad line and names it.
    """
    ranks: dict[bytes, int] = {}
    lines = data.splitlines()
    a2b = _b64decode
    try:
        for line in lines:
            if line:
                token, rank = line.split()
                ranks[a2b(token)] = int(rank)
    except (ValueError, binascii.Error):
        pass
    else:
        n_lines = sum(1 for line in lines if line)
        if len(ranks) == n_lines and len(set(ranks.values())) == n_lines:
            if not ranks or min(ranks.values()) >= 0:
                if data and not data.endswith(b"\n") and n_lines:
                    # A file cut mid-line can still parse; require the final newline.
                    raise TokenizerFileError(
                        f"{source}, line {len(lines)}: no newline at the end; the file looks truncated"
                    )
                return ranks
    _raise_first_bad_line(lines, source)
    raise AssertionError("unreachable")  # pragma: no cover


def _raise_first_bad_line(lines: list[bytes], source: str) -> None:
    seen_tokens: dict[bytes, int] = {}
    seen_ranks: dict[int, int] = {}
    for lineno, line in enumerate(lines, 1):
        if not line:
            continue
        fields = line.split()
        where = f"{source}, line {lineno}"
        if len(fields) != 2:
            raise TokenizerFileError(f"{where}: expected '<base64 token> <rank>', got {line[:60]!r}")
        try:
            token = _b64decode(fields[0])
        except binascii.Error as e:
            raise TokenizerFileError(f"{where}: bad base64 {fields[0][:60]!r} ({e})") from e
        try:
            rank = int(fields[1])
        except ValueError as e:
            raise TokenizerFileError(f"{where}: rank {fields[1][:30]!r} is not an integer") from e
        if rank < 0:
            raise TokenizerFileError(f"{where}: negative rank {rank}")
        if token in seen_tokens:
            raise TokenizerFileError(
                f"{where}: token {token!r} already has rank {seen_tokens[token]} "
                f"(line {seen_ranks[seen_tokens[token]]})"
            )
        if rank in seen_ranks:
            raise TokenizerFileError(f"{where}: duplicate rank {rank} (first on line {seen_ranks[rank]})")
        seen_tokens[token] = rank
        seen_ranks[rank] = lineno


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
    if expected_hash is not None:
        check_sha256(data, expected_hash, label)
    with gc_paused():
        return parse_ranks(data, label), label.split(".")[0]

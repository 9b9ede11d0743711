"""``CharDelimiterSplit``: split on one character, which is removed, as ``tokenizers``'
``CharDelimiterSplit``.

Empty pieces are dropped (``"a,,b,"`` on ``","`` gives ``"a"``, ``"b"``): ``Split`` with
``behavior="Removed"`` on the same literal cuts the same pieces. The delimiter is one
code point, as the Rust ``char`` it is read into.
"""

from __future__ import annotations

from ..json_fields import Build, JsonObject, error, field, kind
from .base import PreTokenizer, SpannedPiece, sliced

__all__ = ["CharDelimiterSplit"]


class CharDelimiterSplit(PreTokenizer):
    """Split on ``delimiter`` (one character), dropping it and empty pieces.

    >>> CharDelimiterSplit("|").pre_tokenize(["a|b||c|", "|d"])
    ['a', 'b', 'c', 'd']
    """

    type_name = "CharDelimiterSplit"

    def __init__(self, delimiter: str) -> None:
        if not isinstance(delimiter, str) or len(delimiter) != 1:
            raise ValueError(f"the delimiter must be one character, got {delimiter!r}")
        self.delimiter = delimiter

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        d = self.delimiter
        return [s for p in pieces for s in p.split(d) if s]

    def _ranges(self, text: str) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        start = 0
        for part in text.split(self.delimiter):
            end = start + len(part)
            if part:
                out.append((start, end))
            start = end + 1
        return out

    def pre_tokenize_spans(self, pieces: list[SpannedPiece]) -> list[SpannedPiece]:
        return [s for piece in pieces for s in sliced(piece, self._ranges(piece[0]))]

    def to_json(self) -> dict[str, object]:
        return {"type": "CharDelimiterSplit", "delimiter": self.delimiter}

    @classmethod
    def from_json(
        cls, obj: JsonObject, path: str = "pre_tokenizer", *, build: Build[PreTokenizer] | None = None
    ) -> CharDelimiterSplit:
        """``delimiter`` is required and one character."""
        delimiter = field(obj, "delimiter", str, path)
        if len(delimiter) != 1 or "\ud800" <= delimiter <= "\udfff":
            raise error(f"{path}.delimiter", f"expected one character (not a surrogate), got {kind(delimiter)}")
        return cls(delimiter)

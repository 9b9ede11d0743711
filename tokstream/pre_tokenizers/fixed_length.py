"""``FixedLength``: cut every piece into chunks of ``length`` characters, as ``tokenizers``'
``FixedLength``.

The last chunk of a piece holds what is left (``"Hello world"`` by 5: ``"Hello"``,
``" worl"``, ``"d"``). Lengths count code points, as ``tokenizers`` counts ``chars()``.

Deliberate difference: ``length`` 0 is refused when the file is read; ``tokenizers``
loads it and panics ("chunk size must be non-zero") on the first non-empty text.
"""

from __future__ import annotations

from ..errors import TokstreamError
from ..json_fields import Build, JsonObject, error, field
from .base import PreTokenizer, SpannedPiece, sliced

__all__ = ["FixedLength"]


class FixedLength(PreTokenizer):
    """Chunks of ``length`` characters (default 5, as ``tokenizers``).

    >>> FixedLength(3).pre_tokenize(["Hello 👋 world"])
    ['Hel', 'lo ', '👋 w', 'orl', 'd']
    """

    type_name = "FixedLength"

    def __init__(self, length: int = 5) -> None:
        if isinstance(length, bool) or not isinstance(length, int):
            raise TypeError(f"length must be an int, got {type(length).__name__}")
        if length <= 0:
            raise TokstreamError(f"FixedLength needs a length of at least 1, got {length}")
        self.length = length

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        n = self.length
        return [p[i : i + n] for p in pieces for i in range(0, len(p), n)]

    def pre_tokenize_spans(self, pieces: list[SpannedPiece]) -> list[SpannedPiece]:
        n = self.length
        return [s for piece in pieces for s in sliced(piece, [(i, i + n) for i in range(0, len(piece[0]), n)])]

    def to_json(self) -> dict[str, object]:
        return {"type": "FixedLength", "length": self.length}

    @classmethod
    def from_json(
        cls, obj: JsonObject, path: str = "pre_tokenizer", *, build: Build[PreTokenizer] | None = None
    ) -> FixedLength:
        """``length`` may be absent (5), not null (as ``tokenizers``: serde's default
        applies to a missing field only); it must be at least 1 (module notes)."""
        length = field(obj, "length", int, path) if "length" in obj else 5
        if length <= 0:
            raise error(f"{path}.length", f"expected a length of at least 1, got {length}")
        return cls(length)

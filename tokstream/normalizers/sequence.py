"""``Sequence``: apply several normalizers in order, composing their spans.

As ``Sequence`` in ``tokenizers``' ``normalizers/utils.rs``. ``from_json`` builds its
members with the ``build`` callable that ``normalizer_from_json`` passes in.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..json_fields import Build, JsonObject, members
from .base import Normalizer, Spans, compose_spans, identity_spans


class Sequence(Normalizer):
    """Apply several normalizers in order.

    Cost: the sum of its members'; ``normalize_aligned`` composes spans in O(n) per member.

    >>> from tokstream.normalizers import Prepend, Replace
    >>> Sequence([Prepend("▁"), Replace(" ", "▁")]).normalize("a b")
    '▁a▁b'
    """

    __slots__ = ("normalizers",)
    type_name = "Sequence"

    @property
    def space_local(self) -> bool:
        return all(n.space_local for n in self.normalizers)

    def keeps(self, char: str) -> bool:
        return all(n.keeps(char) for n in self.normalizers)

    def __init__(self, normalizers: Iterable[Normalizer]) -> None:
        self.normalizers: tuple[Normalizer, ...] = tuple(normalizers)

    def normalize(self, text: str) -> str:
        for n in self.normalizers:
            text = n.normalize(text)
        return text

    def normalize_continued(self, text: str) -> str:
        for n in self.normalizers:
            text = n.normalize_continued(text)
        return text

    def normalize_aligned(self, text: str) -> tuple[str, Spans]:
        spans = identity_spans(0, len(text))
        for n in self.normalizers:
            text, outer = n.normalize_aligned(text)
            spans = compose_spans(spans, outer)
        return text, spans

    def to_json(self) -> dict[str, object]:
        return {"type": self.type_name, "normalizers": [n.to_json() for n in self.normalizers]}

    def __repr__(self) -> str:
        return f"Sequence({list(self.normalizers)!r})"

    @classmethod
    def from_json(
        cls, obj: JsonObject, path: str = "normalizer", *, build: Build[Normalizer] | None = None
    ) -> Sequence:
        return cls(members(obj, "normalizers", path, build))

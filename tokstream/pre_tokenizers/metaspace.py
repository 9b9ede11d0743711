"""``Metaspace``: SentencePiece's whitespace handling, as ``tokenizers``' ``Metaspace``.

Spaces become the ``replacement`` (``▁``), which is also prepended according to
``prepend_scheme`` (``always``, ``first``, ``never``), and with ``split`` each
replacement starts a new piece. ``pre_tokenize_continued`` serves text that continues
a stable cut (nothing is prepended to its first piece).

Not handled: the ``add_prefix_space`` field of ``tokenizer.json`` files written before
``prepend_scheme`` existed (``tokenizers`` < 0.14); ``formats.hf_json`` reads only
``prepend_scheme``.
"""

from __future__ import annotations

from ..json_fields import Build, JsonObject, MetaspaceFields
from ..stability import NO_CUT, Cut, CutKind
from .base import (
    PreTokenizer,
    SpannedPiece,
    inserted_spans,
    sliced,
    split_ranges,
    split_spans,
)


class Metaspace(PreTokenizer):
    """SentencePiece whitespace: spaces become ``replacement`` (``▁``), which is also
    prepended (``prepend_scheme`` "always", or "first" for the first piece only), and
    with ``split`` each ``▁`` starts a new piece."""

    type_name = "Metaspace"

    def cut_rule(self) -> Cut:
        """With ``split``, every piece starts at a run of ``▁`` (spaces)."""
        return Cut(CutKind.SPACE_RUN) if self.split else NO_CUT

    def __init__(self, *, replacement: str = "\u2581", prepend_scheme: str = "always", split: bool = True) -> None:
        if prepend_scheme not in ("always", "first", "never"):
            raise ValueError(f"unknown prepend_scheme {prepend_scheme!r}")
        if len(replacement) != 1:
            # As tokenizers' (a char); an empty one would match between every character.
            raise ValueError(f"replacement must be one character, got {replacement!r}")
        self.replacement, self.prepend_scheme, self.split = replacement, prepend_scheme, split

    def pre_tokenize(self, pieces: list[str], *, first: bool = True, continued: bool = False) -> list[str]:
        out: list[str] = []
        rep = self.replacement
        for i, p in enumerate(pieces):
            if not p:
                continue
            p = p.replace(" ", rep)
            prepend = (self.prepend_scheme == "always" and not (continued and i == 0)) or (
                self.prepend_scheme == "first" and first and not continued and i == 0
            )
            if prepend and not p.startswith(rep):
                p = rep + p
            if self.split:
                spans = [(m, m + len(rep)) for m in _find_all(p, rep)]
                out += split_spans(p, spans, "MergedWithNext", False)
            elif p:
                out.append(p)
        return out

    def pre_tokenize_continued(self, pieces: list[str]) -> list[str]:
        return self.pre_tokenize(pieces, continued=True)

    def pre_tokenize_spans(self, pieces: list[SpannedPiece], *, first: bool = True) -> list[SpannedPiece]:
        out: list[SpannedPiece] = []
        rep = self.replacement
        for i, (p, spans) in enumerate(pieces):
            if not p:
                continue
            if " " in p:
                spans = [s for c, s in zip(p, spans) for _ in range(len(rep) if c == " " else 1)]
                p = p.replace(" ", rep)
            prepend = self.prepend_scheme == "always" or (self.prepend_scheme == "first" and first and i == 0)
            if prepend and not p.startswith(rep):
                p, spans = rep + p, inserted_spans(spans, len(rep)) + spans
            if self.split:
                marks = [(m, m + len(rep)) for m in _find_all(p, rep)]
                out += sliced((p, spans), split_ranges(p, marks, "MergedWithNext", False))
            elif p:
                out.append((p, spans))
        return out

    def to_json(self) -> dict[str, object]:
        return MetaspaceFields(self.replacement, self.prepend_scheme, self.split).to_json()

    @classmethod
    def from_json(
        cls, obj: JsonObject, path: str = "pre_tokenizer", *, build: Build[PreTokenizer] | None = None
    ) -> Metaspace:
        return cls(**MetaspaceFields.from_json(obj, path)._asdict())


def _find_all(text: str, sub: str) -> list[int]:
    found, i = [], text.find(sub)
    while i >= 0:
        found.append(i)
        i = text.find(sub, i + len(sub))
    return found

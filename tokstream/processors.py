"""Post-processors: add the model's special tokens around encoded text.

Implemented: TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel (changes
no ids) and Sequence, named after their ``tokenizer.json`` "type". They run when
``encode(..., add_special_tokens=True)``; only the single-sequence form is used (the
``pair`` template is kept for saving).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "PostProcessor",
    "TemplateProcessing",
    "BertProcessing",
    "RobertaProcessing",
    "ByteLevel",
    "Sequence",
]


class PostProcessor:
    """Base class: ``process(ids) -> ids`` for one sequence."""

    def process(self, ids: list[int]) -> list[int]:
        raise NotImplementedError

    def added_ids(self) -> tuple[list[int], list[int]]:
        """The ids this processor puts before and after the sequence."""
        raise NotImplementedError

    def to_json(self) -> dict[str, object]:
        raise NotImplementedError


class TemplateProcessing(PostProcessor):
    """A template such as ``[CLS] $A [SEP]``; its special tokens may each stand for
    several ids."""

    def __init__(
        self,
        single: list[dict[str, object]],
        pair: list[dict[str, object]],
        special_tokens: Mapping[str, Mapping[str, object]],
    ) -> None:
        self.single, self.pair, self.special_tokens = single, pair, dict(special_tokens)
        before: list[int] = []
        after: list[int] = []
        seen_sequence = False
        for i, item in enumerate(single):
            if "Sequence" in item:
                seen_sequence = True
            elif "SpecialToken" in item:
                name = item["SpecialToken"]["id"]  # type: ignore[index]
                spec = self.special_tokens.get(name)
                if spec is None:
                    raise ValueError(
                        f"post_processor.single[{i}]: special token {name!r} is not in "
                        f"post_processor.special_tokens"
                    )
                ids = [int(x) for x in spec["ids"]]  # type: ignore[attr-defined]
                (after if seen_sequence else before).extend(ids)
            else:
                raise ValueError(f"post_processor.single[{i}]: expected SpecialToken or Sequence")
        self._before, self._after = before, after

    def process(self, ids: list[int]) -> list[int]:
        return [*self._before, *ids, *self._after]

    def added_ids(self) -> tuple[list[int], list[int]]:
        return list(self._before), list(self._after)

    def to_json(self) -> dict[str, object]:
        return {
            "type": "TemplateProcessing",
            "single": self.single,
            "pair": self.pair,
            "special_tokens": self.special_tokens,
        }


class BertProcessing(PostProcessor):
    """``[CLS] A [SEP]``; ``sep`` and ``cls`` are ``(token, id)`` pairs."""

    def __init__(self, sep: tuple[str, int], cls: tuple[str, int]) -> None:
        self.sep, self.cls = (sep[0], int(sep[1])), (cls[0], int(cls[1]))

    def process(self, ids: list[int]) -> list[int]:
        return [self.cls[1], *ids, self.sep[1]]

    def added_ids(self) -> tuple[list[int], list[int]]:
        return [self.cls[1]], [self.sep[1]]

    def to_json(self) -> dict[str, object]:
        return {"type": "BertProcessing", "sep": list(self.sep), "cls": list(self.cls)}


class RobertaProcessing(BertProcessing):
    """``<s> A </s>``; offsets options are kept for saving."""

    def __init__(
        self, sep: tuple[str, int], cls: tuple[str, int], *, trim_offsets: bool = True, add_prefix_space: bool = True
    ) -> None:
        super().__init__(sep, cls)
        self.trim_offsets, self.add_prefix_space = trim_offsets, add_prefix_space

    def to_json(self) -> dict[str, object]:
        return {
            "type": "RobertaProcessing",
            "sep": list(self.sep),
            "cls": list(self.cls),
            "trim_offsets": self.trim_offsets,
            "add_prefix_space": self.add_prefix_space,
        }


class ByteLevel(PostProcessor):
    """Only trims offsets in ``tokenizers``; ids are unchanged."""

    def __init__(self, **options: object) -> None:
        self.options = options

    def process(self, ids: list[int]) -> list[int]:
        return ids

    def added_ids(self) -> tuple[list[int], list[int]]:
        return [], []

    def to_json(self) -> dict[str, object]:
        return {"type": "ByteLevel", **self.options}


class Sequence(PostProcessor):
    """Apply processors in order."""

    def __init__(self, processors: list[PostProcessor]) -> None:
        self.processors = processors

    def process(self, ids: list[int]) -> list[int]:
        for p in self.processors:
            ids = p.process(ids)
        return ids

    def added_ids(self) -> tuple[list[int], list[int]]:
        before: list[int] = []
        after: list[int] = []
        for p in self.processors:
            b, a = p.added_ids()
            before = b + before
            after = after + a
        return before, after

    def to_json(self) -> dict[str, object]:
        return {"type": "Sequence", "processors": [p.to_json() for p in self.processors]}

"""Post-processors: add the model's special tokens around encoded text.

Implemented: TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel (changes
no ids) and Sequence, named after their ``tokenizer.json`` "type". They add their ids
when ``encode(..., add_special_tokens=True)``; only the single-sequence form is used (the
``pair`` template is kept for saving).

Offsets: ``ByteLevel`` and ``RobertaProcessing`` with ``trim_offsets`` move every
token's offsets off its leading and trailing spaces (``offsets.trim_spaces``), with or
without special tokens, as ``tokenizers`` does; a processor declares it with
``trims_offsets`` and does it in ``process_offsets``, which ``encode_with_offsets``
calls on the text's tokens before the special tokens are added. In a ``Sequence`` the
first token's rule holds for the text's first token whatever the order of its members
(``tokenizers`` 0.23 trims ``[TemplateProcessing, ByteLevel]`` as ``[ByteLevel,
TemplateProcessing]``: tested).

``processor_from_json`` builds one from its ``tokenizer.json`` object by its type
(``JSON_TYPES``); each class's ``from_json`` reads its own fields.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from collections.abc import Sequence as Seq
from typing import ClassVar, Final

from .errors import TokenizerFileError
from .json_fields import Build, JsonObject, field, from_table, members, token_pair
from .offsets import Spans, trim_spaces

__all__ = [
    "JSON_TYPES",
    "BertProcessing",
    "ByteLevel",
    "PostProcessor",
    "RobertaProcessing",
    "Sequence",
    "TemplateProcessing",
    "processor_from_json",
]


class PostProcessor(ABC):
    """Base class: ``process(ids) -> ids`` for one sequence."""

    #: The ``tokenizer.json`` ``"type"`` of the class.
    type_name: ClassVar[str]

    @abstractmethod
    def process(self, ids: list[int]) -> list[int]:
        """The ids of one sequence with the template's special tokens around them."""

    @abstractmethod
    def added_ids(self) -> tuple[list[int], list[int]]:
        """The ids this processor puts before and after the sequence."""

    @property
    def trims_offsets(self) -> bool:
        """``process_offsets`` changes offsets (by default it does not, and is not called)."""
        return False

    def process_offsets(
        self,
        ids: list[int],
        offsets: Spans,
        spellings: Seq[str | None],
        *,
        add_special_tokens: bool,
    ) -> Spans:
        """The offsets of the text's tokens ``ids`` (before any special token is added)
        after this processor (``spellings``: by id). By default unchanged."""
        return offsets

    @abstractmethod
    def to_json(self) -> dict[str, object]:
        """The ``tokenizer.json`` object of this post-processor."""

    @classmethod
    def from_json(
        cls, obj: JsonObject, path: str = "post_processor", *, build: Build[PostProcessor] | None = None
    ) -> PostProcessor:
        """Build from its ``tokenizer.json`` object (``path`` names it in errors;
        ``build`` makes a ``Sequence``'s members)."""
        raise NotImplementedError(f"{cls.__name__} does not read tokenizer.json")


class TemplateProcessing(PostProcessor):
    """A template such as ``[CLS] $A [SEP]``; its special tokens may each stand for
    several ids. ``where`` names the processor in errors (its JSON path)."""

    type_name = "TemplateProcessing"

    def __init__(
        self,
        single: list[dict[str, object]],
        pair: list[dict[str, object]],
        special_tokens: Mapping[str, Mapping[str, object]],
        *,
        where: str = "post_processor",
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
                    raise ValueError(f"{where}.single[{i}]: special token {name!r} is not in {where}.special_tokens")
                ids = [int(x) for x in spec["ids"]]  # type: ignore[attr-defined]
                (after if seen_sequence else before).extend(ids)
            else:
                raise ValueError(f"{where}.single[{i}]: expected SpecialToken or Sequence")
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

    @classmethod
    def from_json(
        cls, obj: JsonObject, path: str = "post_processor", *, build: Build[PostProcessor] | None = None
    ) -> TemplateProcessing:
        try:
            return cls(
                field(obj, "single", list, path),
                field(obj, "pair", list, path, []),
                field(obj, "special_tokens", dict, path, {}),
                where=path,
            )
        except TokenizerFileError:
            raise
        except ValueError as e:  # the message names the path already
            raise TokenizerFileError(str(e)) from e


class BertProcessing(PostProcessor):
    """``[CLS] A [SEP]``; ``sep`` and ``cls`` are ``(token, id)`` pairs."""

    type_name = "BertProcessing"

    def __init__(self, sep: tuple[str, int], cls: tuple[str, int]) -> None:
        self.sep, self.cls = (sep[0], int(sep[1])), (cls[0], int(cls[1]))

    def process(self, ids: list[int]) -> list[int]:
        return [self.cls[1], *ids, self.sep[1]]

    def added_ids(self) -> tuple[list[int], list[int]]:
        return [self.cls[1]], [self.sep[1]]

    def to_json(self) -> dict[str, object]:
        return {"type": "BertProcessing", "sep": list(self.sep), "cls": list(self.cls)}

    @classmethod
    def from_json(
        cls, obj: JsonObject, path: str = "post_processor", *, build: Build[PostProcessor] | None = None
    ) -> BertProcessing:
        return cls(token_pair(obj, "sep", path), token_pair(obj, "cls", path))


class RobertaProcessing(BertProcessing):
    """``<s> A </s>``; with ``trim_offsets`` the offsets of tokens are trimmed off their
    spaces (module notes).

    As ``tokenizers``: an object lacking ``trim_offsets`` or ``add_prefix_space`` (or with
    null there) is read as a ``BertProcessing`` (its untagged enum falls through to that
    variant), so it trims nothing and saves as one.
    """

    type_name = "RobertaProcessing"

    def __init__(
        self, sep: tuple[str, int], cls: tuple[str, int], *, trim_offsets: bool = True, add_prefix_space: bool = True
    ) -> None:
        super().__init__(sep, cls)
        self.trim_offsets, self.add_prefix_space = trim_offsets, add_prefix_space

    @property
    def trims_offsets(self) -> bool:
        return self.trim_offsets

    def process_offsets(
        self,
        ids: list[int],
        offsets: Spans,
        spellings: Seq[str | None],
        *,
        add_special_tokens: bool,
    ) -> Spans:
        if not self.trim_offsets:
            return offsets
        return trim_spaces(ids, offsets, spellings, add_prefix_space=self.add_prefix_space)

    def to_json(self) -> dict[str, object]:
        return {
            "type": "RobertaProcessing",
            "sep": list(self.sep),
            "cls": list(self.cls),
            "trim_offsets": self.trim_offsets,
            "add_prefix_space": self.add_prefix_space,
        }

    @classmethod
    def from_json(
        cls, obj: JsonObject, path: str = "post_processor", *, build: Build[PostProcessor] | None = None
    ) -> BertProcessing:
        sep, cls_token = token_pair(obj, "sep", path), token_pair(obj, "cls", path)
        trim = field(obj, "trim_offsets", bool, path, None)
        prefix = field(obj, "add_prefix_space", bool, path, None)
        if trim is None or prefix is None:
            return BertProcessing(sep, cls_token)
        return cls(sep, cls_token, trim_offsets=trim, add_prefix_space=prefix)


class ByteLevel(PostProcessor):
    """Changes no ids; with ``trim_offsets`` the offsets of tokens are trimmed off their
    spaces, keeping the first token's one inserted space when ``add_prefix_space``
    (module notes).

    As ``tokenizers``: ``add_prefix_space`` and ``trim_offsets`` are required,
    ``use_regex`` defaults to true (it only matters to the pre-tokenizer of that name).

    >>> p = ByteLevel(add_prefix_space=False, trim_offsets=True)
    >>> p.process_offsets([0, 1], [(0, 2), (2, 7)], ["My", "Ġname"], add_special_tokens=False)
    [(0, 2), (3, 7)]
    """

    type_name = "ByteLevel"

    def __init__(self, *, add_prefix_space: bool = True, trim_offsets: bool = True, use_regex: bool = True) -> None:
        self.add_prefix_space, self.trim_offsets, self.use_regex = add_prefix_space, trim_offsets, use_regex

    def process(self, ids: list[int]) -> list[int]:
        return ids

    def added_ids(self) -> tuple[list[int], list[int]]:
        return [], []

    @property
    def trims_offsets(self) -> bool:
        return self.trim_offsets

    def process_offsets(
        self,
        ids: list[int],
        offsets: Spans,
        spellings: Seq[str | None],
        *,
        add_special_tokens: bool,
    ) -> Spans:
        if not self.trim_offsets:
            return offsets
        return trim_spaces(ids, offsets, spellings, add_prefix_space=self.add_prefix_space)

    def to_json(self) -> dict[str, object]:
        return {
            "type": "ByteLevel",
            "add_prefix_space": self.add_prefix_space,
            "trim_offsets": self.trim_offsets,
            "use_regex": self.use_regex,
        }

    @classmethod
    def from_json(
        cls, obj: JsonObject, path: str = "post_processor", *, build: Build[PostProcessor] | None = None
    ) -> ByteLevel:
        return cls(
            add_prefix_space=field(obj, "add_prefix_space", bool, path),
            trim_offsets=field(obj, "trim_offsets", bool, path),
            use_regex=field(obj, "use_regex", bool, path, True),
        )


class Sequence(PostProcessor):
    """Apply processors in order."""

    type_name = "Sequence"

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

    @property
    def trims_offsets(self) -> bool:
        return any(p.trims_offsets for p in self.processors)

    def process_offsets(
        self,
        ids: list[int],
        offsets: Spans,
        spellings: Seq[str | None],
        *,
        add_special_tokens: bool,
    ) -> Spans:
        for p in self.processors:
            if p.trims_offsets:
                offsets = p.process_offsets(ids, offsets, spellings, add_special_tokens=add_special_tokens)
        return offsets

    def to_json(self) -> dict[str, object]:
        return {"type": "Sequence", "processors": [p.to_json() for p in self.processors]}

    @classmethod
    def from_json(
        cls, obj: JsonObject, path: str = "post_processor", *, build: Build[PostProcessor] | None = None
    ) -> Sequence:
        """Its members are built by ``build`` (``processor_from_json``)."""
        return cls(members(obj, "processors", path, build))


#: ``tokenizer.json`` ``"type"`` -> class, for ``processor_from_json``.
JSON_TYPES: Final[Mapping[str, type[PostProcessor]]] = {
    cls.type_name: cls for cls in (TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel, Sequence)
}


def processor_from_json(obj: object, path: str = "post_processor") -> PostProcessor | None:
    """Build the post-processor of a ``tokenizer.json`` ``"post_processor"`` object.

    ``None`` (JSON ``null``) gives ``None``. The class is ``JSON_TYPES[obj["type"]]``;
    an unknown ``"type"`` raises ``NotImplementedError`` naming it and ``path``; a
    missing or mistyped field raises ``TokenizerFileError`` naming the JSON path.

    >>> p = processor_from_json({"type": "BertProcessing", "sep": ["[SEP]", 102], "cls": ["[CLS]", 101]})
    >>> p.process([7592])
    [101, 7592, 102]
    >>> processor_from_json({"type": "BertProcessing", "sep": ["[SEP]"], "cls": ["[CLS]", 101]})
    Traceback (most recent call last):
    ...
    tokstream.errors.TokenizerFileError: post_processor.sep: expected a [token, id] pair, got ['[SEP]']
    """
    return None if obj is None else from_table(JSON_TYPES, obj, path, "post-processor")

"""``ByteLevel``: GPT-2's byte-level pre-tokenizer, as ``tokenizers``' ``ByteLevel``.

An optional prefix space, an optional split by GPT-2's pattern (as ``tokenizers``
writes it, without possessive quantifiers; by Unicode 16.0 classes, ``unicode16``),
then each piece's UTF-8 bytes spelled in the byte-level alphabet
(``tokstream.byte_level``, shared with the decoder). A pre-tokenizer that is "one regex
split, then byte-level" (GPT-2's, Llama 3's) runs on the pipeline's cached fast path
(``_fastpath``): ``ByteLevel`` with its regex declares it (``byte_level_split``), and
so does a ``Sequence`` of an isolating ``Split`` and a ``ByteLevel`` that only spells
bytes.

Not handled: ``trim_offsets`` is kept for ``to_json`` only (``tokenizers`` reads it
when ``ByteLevel`` serves as post-processor, ``tokstream.processors``).
"""

from __future__ import annotations

import regex

from ..json_fields import Build, JsonObject, field
from ..models.base import Spelling
from ..stability import Cut
from .base import PreTokenizer, SpannedPiece, inserted_spans
from .patterns import BYTE_LEVEL_PATTERN
from .regex_split import RegexSplit, regex_cut_rule
from .unicode16 import findall16, spans16


class ByteLevel(PreTokenizer):
    """GPT-2 byte-level: optional prefix space, optional GPT-2 regex split, then each
    piece's UTF-8 bytes spelled in the byte-level alphabet (``tokstream.byte_level.BYTE_TO_CHAR``)."""

    type_name = "ByteLevel"

    def __init__(self, *, add_prefix_space: bool = True, use_regex: bool = True, trim_offsets: bool = True) -> None:
        self.add_prefix_space, self.use_regex, self.trim_offsets = add_prefix_space, use_regex, trim_offsets
        self._regex = regex.compile(BYTE_LEVEL_PATTERN)
        self._shape: tuple[RegexSplit, bool, Spelling] | None = None
        if use_regex:  # GPT-2's pattern, by Unicode 16.0 classes as tokenizers' Oniguruma
            self._shape = (RegexSplit(BYTE_LEVEL_PATTERN, unicode16=True), add_prefix_space, Spelling.BYTE_LEVEL)

    def byte_level_split(self) -> tuple[RegexSplit, bool, Spelling] | None:
        return self._shape

    @property
    def spells_bytes_only(self) -> bool:
        return not self.use_regex and not self.add_prefix_space

    def cut_rule(self) -> Cut:
        return regex_cut_rule(self._shape)

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        from ..byte_level import bytes_to_proxy

        out: list[str] = []
        for p in pieces:
            if not p:
                continue
            if self.add_prefix_space and not p.startswith(" "):
                p = " " + p
            parts = findall16(self._regex, p) if self.use_regex else [p]
            out += [bytes_to_proxy(s.encode("utf-8", "surrogatepass")) for s in parts if s]
        return out

    def pre_tokenize_spans(self, pieces: list[SpannedPiece]) -> list[SpannedPiece]:
        from ..byte_level import bytes_to_proxy

        out: list[SpannedPiece] = []
        for p, spans in pieces:
            if not p:
                continue
            if self.add_prefix_space and not p.startswith(" "):
                p, spans = " " + p, inserted_spans(spans, 1) + spans
            ranges = spans16(self._regex, p) if self.use_regex else [(0, len(p))]
            for a, b in ranges:
                if b <= a:
                    continue
                part = p[a:b]
                data = part.encode("utf-8", "surrogatepass")
                if len(data) == len(part):
                    byte_spans = spans[a:b]
                else:  # each byte's proxy character spans its character
                    byte_spans = []
                    for c, span in zip(part, spans[a:b]):
                        byte_spans += [span] * len(c.encode("utf-8", "surrogatepass"))
                out.append((bytes_to_proxy(data), byte_spans))
        return out

    def to_json(self) -> dict[str, object]:
        return {
            "type": "ByteLevel",
            "add_prefix_space": self.add_prefix_space,
            "trim_offsets": self.trim_offsets,
            "use_regex": self.use_regex,
        }

    @classmethod
    def from_json(
        cls, obj: JsonObject, path: str = "pre_tokenizer", *, build: Build[PreTokenizer] | None = None
    ) -> ByteLevel:
        return cls(
            add_prefix_space=field(obj, "add_prefix_space", bool, path, True),
            use_regex=field(obj, "use_regex", bool, path, True),
            trim_offsets=field(obj, "trim_offsets", bool, path, True),
        )

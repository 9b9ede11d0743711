"""The pre-tokenizer interface, and the span and split helpers its classes share.

``PreTokenizer`` is the interface of the Hugging Face pre-tokenizers of this package
(``tokenizers``' ``PreTokenizer`` trait): each takes the current list of pieces and
returns the new list, as ``tokenizers`` applies a pre-tokenizer to every split of the
one before it. Names and options follow the ``tokenizer.json`` "type" and fields.
``split_ranges`` is ``tokenizers``' ``SplitDelimiterBehavior``.

Offsets
-------
Every Hugging Face pre-tokenizer also has ``pre_tokenize_spans``, the same pieces
each carried with one ``(start, end)`` span per character (``SpannedPiece``): spans of
the original text, passed in by the caller and sliced, repeated or invented as the
piece is cut and rewritten. A character a pre-tokenizer rewrites keeps its span
(``ByteLevel`` gives each UTF-8 byte's proxy character the span of its character,
``Metaspace`` gives ``▁`` the span of the space); a character it inserts (``ByteLevel``'s
prefix space, ``Metaspace``'s prepended ``▁``) gets the zero-width span at the start of
the piece's first character. ``located_spans`` serves a pre-tokenizer that has no such
method, when it only cuts text. The span variants are for ``encode_with_offsets``; they
walk characters in Python and leave ``pre_tokenize`` (the encode path) as it was.

Not modelled: ``tokenizers``' ``PreTokenizedString`` and ``NormalizedString``. Pieces
are plain strings; offsets, when asked for, travel beside them as spans.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from ..json_fields import Build, JsonObject, fieldless
from ..stability import NO_CUT, Cut

if TYPE_CHECKING:
    from ..models.base import Spelling
    from .regex_split import RegexSplit

#: A piece and, for each of its characters, the ``(start, end)`` span it stands for.
SpannedPiece = tuple[str, list[tuple[int, int]]]


class PreTokenizer(ABC):
    """Base class: ``pre_tokenize(pieces)`` splits (and may rewrite) every piece;
    ``pre_tokenize_spans`` does the same carrying each character's span (module notes).

    Declarations (data the pipeline and the stability rule read; the defaults are the
    safe ones): ``cut_rule`` (what appending text can change), ``byte_level_split``
    (this stage is one known total regex whose pieces the model may encode from their
    bytes: the cached fast path), and, for ``Sequence`` to recognise that shape,
    ``isolated_regex`` and ``spells_bytes_only``.
    """

    __slots__ = ()

    #: The ``tokenizer.json`` ``"type"`` of the class; a class without one (``RegexSplit``)
    #: is written as other types and has no JSON form of its own to read.
    type_name: ClassVar[str]

    @abstractmethod
    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        """The pieces every piece of ``pieces`` splits into, in order."""

    def pre_tokenize_continued(self, pieces: list[str]) -> list[str]:
        """``pre_tokenize`` for text that continues a cut (``stability``): the first
        piece does not start the text, so nothing is prepended to it."""
        return self.pre_tokenize(pieces)

    def pre_tokenize_spans(self, pieces: list[SpannedPiece]) -> list[SpannedPiece]:
        """``pre_tokenize`` with spans; by default ``located_spans`` (exact for a
        pre-tokenizer that only cuts text)."""
        return located_spans(self.pre_tokenize, pieces)

    @abstractmethod
    def to_json(self) -> dict[str, object]:
        """The ``tokenizer.json`` object of this pre-tokenizer."""

    @classmethod
    def from_json(
        cls, obj: JsonObject, path: str = "pre_tokenizer", *, build: Build[PreTokenizer] | None = None
    ) -> PreTokenizer:
        """Build from its ``tokenizer.json`` object (``path`` names it in errors;
        ``build`` makes a ``Sequence``'s members). This default serves the types with no
        fields."""
        return fieldless(cls, "pre_tokenizer_from_json")

    # ------------------------------------------------------------- declarations

    def cut_rule(self) -> Cut:
        """What appending text can change (``stability``); by default everything after
        the start stays open."""
        return NO_CUT

    def byte_level_split(self) -> tuple[RegexSplit, bool, Spelling] | None:
        """``(split, prefix_space, spelling)`` when this stage is one known total regex
        whose pieces reach the model spelled ``spelling`` (``prefix_space``: a space is
        put before a text that lacks one); else None."""
        return None

    def isolated_regex(self) -> RegexSplit | None:
        """The known total pattern whose matches this stage isolates, as they are, or
        None (a ``Split`` may)."""
        return None

    @property
    def spells_bytes_only(self) -> bool:
        """This stage only spells each piece in the byte-level alphabet (no split, no
        prefix space)."""
        return False


def split_spans(text: str, spans: list[tuple[int, int]], behavior: str, invert: bool) -> list[str]:
    """Apply a ``SplitDelimiterBehavior`` given the delimiter spans found in ``text``."""
    return [text[a:b] for a, b in split_ranges(text, spans, behavior, invert)]


def split_ranges(text: str, spans: list[tuple[int, int]], behavior: str, invert: bool) -> list[tuple[int, int]]:
    """The non-empty ``(start, end)`` ranges of the pieces ``split_spans`` returns."""
    marks: list[tuple[int, int, bool]] = []
    pos = 0
    for a, b in spans:
        if a > pos:
            marks.append((pos, a, False))
        # An empty match is kept, as tokenizers keeps it: it parts its neighbours
        # (Contiguous joins runs of one kind, and an empty match is a run of matches).
        marks.append((a, b, True))
        pos = b
    if pos < len(text):
        marks.append((pos, len(text), False))
    if invert:
        marks = [(a, b, not m) for a, b, m in marks]
    out: list[tuple[int, int]] = []
    if behavior == "Removed":
        out = [(a, b) for a, b, m in marks if not m]
    elif behavior == "Isolated":
        out = [(a, b) for a, b, _ in marks]
    elif behavior == "MergedWithPrevious":
        prev_match = False
        for a, b, m in marks:
            if m and out and not prev_match:
                out[-1] = (out[-1][0], b)
            else:
                out.append((a, b))
            prev_match = m
    elif behavior == "MergedWithNext":
        pending: int | None = None
        for a, b, m in marks:
            if m:
                if pending is None:
                    pending = a
                else:
                    out.append((pending, a))
                    pending = a
            else:
                out.append((a if pending is None else pending, b))
                pending = None
        if pending is not None:
            out.append((pending, len(text)))
    elif behavior == "Contiguous":
        # tokenizers joins neighbours with the same flag (with invert, adjacent matches
        # turned content are joined too).
        prev = False
        for a, b, m in marks:
            if m == prev and out:
                out[-1] = (out[-1][0], b)
            else:
                out.append((a, b))
            prev = m
    else:
        raise ValueError(f"unknown split behavior {behavior!r}")
    return [(a, b) for a, b in out if b > a]


def sliced(piece: SpannedPiece, ranges: list[tuple[int, int]]) -> list[SpannedPiece]:
    text, spans = piece
    return [(text[a:b], spans[a:b]) for a, b in ranges if b > a]


def inserted_spans(spans: list[tuple[int, int]], count: int) -> list[tuple[int, int]]:
    """Spans of ``count`` characters inserted before the ones of ``spans`` (non-empty):
    zero-width, at the start of the first one."""
    start = spans[0][0]
    return [(start, start)] * count


def located_spans(pre_tokenize: Callable[[list[str]], list[str]], pieces: list[SpannedPiece]) -> list[SpannedPiece]:
    """``pre_tokenize_spans`` for a pre-tokenizer that only cuts its pieces (and may drop
    text between them): each output piece is looked up, in order, in the input pieces.

    Exact when nothing is dropped; a piece after dropped text that repeats the start of
    that text is placed too early. Raises ``NotImplementedError`` when an output piece
    is not a slice of its input (the pre-tokenizer rewrites text and needs its own
    ``pre_tokenize_spans``).
    """
    out: list[SpannedPiece] = []
    k, pos = 0, 0
    for piece in pre_tokenize([text for text, _ in pieces]):
        while k < len(pieces):
            at = pieces[k][0].find(piece, pos)
            if at >= 0:
                break
            k, pos = k + 1, 0
        else:
            raise NotImplementedError(
                f"pre-tokenizer {getattr(pre_tokenize, '__self__', pre_tokenize)!r} rewrote "
                f"text into {piece[:40]!r}; offsets need it to define pre_tokenize_spans"
            )
        out.append((piece, pieces[k][1][at : at + len(piece)]))
        pos = at + len(piece)
    return out

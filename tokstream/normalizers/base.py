r"""The ``Normalizer`` interface and what the normalizer families share.

- ``Normalizer``: the abstract step (``normalize``, ``normalize_continued``,
  ``normalize_aligned``, ``to_json``), compared by its ``tokenizer.json`` form; the
  package docstring states the span rules every ``normalize_aligned`` follows.
- The span helpers: ``identity_spans`` (each character spans itself), ``remove_aligned``
  (deleting runs) and ``compose_spans`` (a second step's spans mapped through the first's).
- ``CharSet``: a character table as fast stdlib ``re`` classes; ``parse_ranges``,
  ``char_class`` and ``has_astral`` around it.

The ``from_json`` constructors read their fields with ``tokstream.json_fields``.

``tokenizers`` keeps its ``Normalizer`` trait and ``NormalizedString`` alignment in
``normalizer.rs``; nothing here builds a ``NormalizedString``: a step returns its text and,
on request, the spans.

Performance notes
-----------------
A mixed ``re`` class of a few hundred ranges scans at only 5-15 MB/s: ``re`` keeps the
BMP part as a bitmap but tests every astral range, one by one, for every character.
``CharSet`` splits each table into a BMP class (400-1500 MB/s) and an astral class that
only runs on text holding an astral character (a UTF-16 length check, at GB/s).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from typing import ClassVar

from ..json_fields import Build, JsonObject, fieldless

Spans = list[tuple[int, int]]


def parse_ranges(spec: str) -> list[tuple[int, int]]:
    """``"300-36F 483"`` -> ``[(0x300, 0x36F), (0x483, 0x483)]``."""
    out = []
    for item in spec.split():
        lo, _, hi = item.partition("-")
        out.append((int(lo, 16), int(hi or lo, 16)))
    return out


def char_class(ranges: Iterable[tuple[int, int]]) -> str:
    """A regex character class (for ``re`` and ``regex``) holding the given ranges."""
    body = "".join(f"\\U{a:08X}" if a == b else f"\\U{a:08X}-\\U{b:08X}" for a, b in ranges)
    return f"[{body}]"


def has_astral(text: str) -> bool:
    """Whether ``text`` holds a character above U+FFFF (UTF-16 encoding runs at GB/s)."""
    return not text.isascii() and len(text.encode("utf-16-le", "surrogatepass")) != 2 * len(text)


class CharSet:
    """A set of code points as stdlib ``re`` classes: the BMP part and the rest.

    ``re`` keeps the BMP part of a class as a bitmap but tests its astral ranges one
    by one for every character, so one mixed class of a few hundred ranges scans at
    5-15 MB/s where its BMP part alone scans at 400-1500 MB/s (Python 3.11). Astral
    characters are rare: the astral class only runs on text that has some.
    ``runs`` makes the patterns match runs of members rather than single ones.
    """

    __slots__ = ("any", "astral", "bmp")

    def __init__(self, ranges: Iterable[tuple[int, int]], *, runs: bool = True) -> None:
        ranges = list(ranges)
        low = [(a, min(b, 0xFFFF)) for a, b in ranges if a <= 0xFFFF]
        high = [(max(a, 0x10000), b) for a, b in ranges if b > 0xFFFF]
        plus = "+" if runs else ""
        parts = []
        self.bmp = self.astral = None
        if low:
            parts.append(char_class(low) + plus)
            self.bmp = re.compile(parts[-1])
        if high:
            # The lookahead turns BMP characters away with one comparison.
            parts.append(r"(?=[\U00010000-\U0010FFFF])" + char_class(high) + plus)
            self.astral = re.compile(char_class(high) + plus)
        #: Both parts in one pattern, for single-pass rewrites of text with astral chars.
        self.any = re.compile("|".join(parts) or "(?!)")

    def search(self, text: str) -> bool:
        if self.bmp is not None and self.bmp.search(text) is not None:
            return True
        return self.astral is not None and has_astral(text) and self.astral.search(text) is not None

    def remove(self, text: str) -> str:
        """Delete every member (two passes: removals commute)."""
        if self.bmp is not None:
            text = self.bmp.sub("", text)
        if self.astral is not None and has_astral(text):
            text = self.astral.sub("", text)
        return text

    def sub(self, repl: Callable[[re.Match[str]], str], text: str) -> str:
        """Replace every match of a member (run) by ``repl(match)``, in one pass."""
        if self.astral is not None and has_astral(text):
            return self.any.sub(repl, text)
        if self.bmp is None:
            return text
        return self.bmp.sub(repl, text)


# ------------------------------------------------------------------------ spans


def identity_spans(a: int, b: int) -> Spans:
    return [(k, k + 1) for k in range(a, b)]


def remove_aligned(text: str, pattern: re.Pattern[str]) -> tuple[str, Spans]:
    """``pattern.sub("", text)`` with spans; ``pattern`` matches runs of removed chars."""
    out: list[str] = []
    spans: Spans = []
    pos = 0
    for m in pattern.finditer(text):
        out.append(text[pos : m.start()])
        spans.extend(identity_spans(pos, m.start()))
        pos = m.end()
    out.append(text[pos:])
    spans.extend(identity_spans(pos, len(text)))
    return "".join(out), spans


def compose_spans(inner: Spans, outer: Spans) -> Spans:
    """Spans of a second step (over the first step's output) mapped to the input.

    ``inner`` maps the intermediate text to the input, ``outer`` the output to the
    intermediate text. Both are monotone, so a span's image is the first start and the
    last end of the intermediate characters it covers: O(1) per character. A zero-width
    span between two intermediate characters that share input becomes their overlap, so
    the result stays monotone.
    """
    n = len(inner)
    result: Spans = []
    append = result.append
    for s, e in outer:
        if s < e:
            append((inner[s][0], inner[e - 1][1]))
        elif s < n:
            start = inner[s][0]
            append((start, max(start, inner[s - 1][1]) if s else start))
        elif n:
            end = inner[-1][1]
            append((end, end))
        else:
            append((0, 0))
    return result


# ------------------------------------------------------------------------ interface


class Normalizer(ABC):
    """A normalization step: ``normalize`` text, optionally with a map back to the input.

    Subclasses are small immutable values, compared by their ``tokenizer.json`` form.
    """

    __slots__ = ()

    #: The ``tokenizer.json`` ``"type"`` of the class.
    type_name: ClassVar[str]

    @property
    def space_local(self) -> bool:
        """Stability declaration (``stability``): a printable ASCII character and a
        space each map to themselves (or to one fixed character), one at a time, and
        every rule acts only on runs of spaces or at the ends. False (nothing declared)
        keeps streamed text open."""
        return False

    def keeps(self, char: str) -> bool:
        """Stability declaration: the ASCII whitespace ``char`` between two printable
        characters is left alone and joined to neither. False unless declared."""
        return False

    @abstractmethod
    def normalize(self, text: str) -> str:
        """Return the normalized ``text`` (the fast path: no alignment)."""

    def normalize_continued(self, text: str) -> str:
        """``normalize`` for text that continues a cut (``stability``): rules that
        apply only at the start of a text (Prepend, a left Strip) are left out."""
        return self.normalize(text)

    @abstractmethod
    def normalize_aligned(self, text: str) -> tuple[str, Spans]:
        """Return ``(out, spans)``: ``out == normalize(text)``, and ``spans[i]`` is the
        ``(start, end)`` code-point span of ``text`` that ``out[i]`` came from (see the
        ``tokstream.normalizers`` docstring for the rules)."""

    def to_json(self) -> dict[str, object]:
        """The ``tokenizer.json`` object of this normalizer."""
        return {"type": self.type_name}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Normalizer):
            return NotImplemented
        return type(self) is type(other) and self.to_json() == other.to_json()

    def __hash__(self) -> int:
        return hash(repr(self))

    def __repr__(self) -> str:
        fields = {k: v for k, v in self.to_json().items() if k != "type"}
        inner = ", ".join(f"{k}={v!r}" for k, v in fields.items())
        return f"{type(self).__name__}({inner})"

    @classmethod
    def from_json(
        cls, obj: JsonObject, path: str = "normalizer", *, build: Build[Normalizer] | None = None
    ) -> Normalizer:
        """Build from its ``tokenizer.json`` object (``path`` names it in errors;
        ``build`` makes a ``Sequence``'s members). This default serves the types with no
        fields; a class with no ``type_name`` has no JSON form of its own."""
        return fieldless(cls, "normalizer_from_json")

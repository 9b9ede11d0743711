r"""``Replace``: replace every match of a string or regex pattern with literal content.

As ``tokenizers``' ``normalizers/replace.rs`` in release 0.23.3.

Differences from ``tokenizers``: a ``Regex`` pattern is compiled with the ``regex``
module, ``tokenizers`` compiles it with Oniguruma. The usual syntax (literals, classes,
``\s``, ``\d``, ``\p{..}``, quantifiers, lookaround) means the same, with two gaps:
Oniguruma's Unicode tables are 16.0 and ``regex``'s 17.0 (``\d`` matches the new digits
U+11DE0..U+11DE9 here only), and Oniguruma's ``\w`` is letters, marks, numbers and
connectors (so ``'²'`` is a word character there, U+200C/U+200D are not), ``regex``'s is
Unicode's (the reverse). Oniguruma-only syntax (``\h``, ``(?m)`` meaning dot-all) is not
translated. Empty matches follow Oniguruma: none in empty text, none right where the
previous match ended.

Refused when read from a ``tokenizer.json`` (``from_json``; built in Python it works,
with the rule for empty matches above): a pattern that matches the empty string itself (``""``, ``x*``, ``a|``), which
would insert ``content`` between every two characters. ``tokenizers`` loads it, but its
alignments break on an insertion at the start of the text: with a ``ByteLevel``
pre-tokenizer it doubles that insertion (``"__"`` for ``"_"``), with Llama 3's it
panics. A pattern that matches empty text only in context (``(?=a)``, ``\b``, ``\A``)
is read, and matches as in ``tokenizers`` except at the start of the text under
``ByteLevel``, where ``tokenizers`` doubles the insertion.

Not here: ``Replace``'s ``$1`` group expansion from ``tokenizers``' main branch (0.23.3
inserts ``content`` literally, as here).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

import regex

from ..errors import TokstreamError
from ..json_fields import Build, JsonObject, error, field, pattern
from .base import Normalizer, Spans, identity_spans


def _can_match_empty(pattern: str, compiled: regex.Pattern[str]) -> bool:
    """Whether ``pattern`` may match the empty string somewhere (conservative).

    Without lookaround, anchors or word boundaries, a pattern matches empty text in
    every context iff it matches ``""``; with them we assume it can.
    """
    if compiled.fullmatch("") is not None:
        return True
    return bool(regex.search(r"\(\?<?[=!]|\\[bBAZzGKmMy]|[$^]", pattern))


#: ``Replace`` regexes that match only spaces or ``▁`` (what SentencePiece's
#: ``tokenizer.json`` form writes): they leave every other character alone.
_SPACE_ONLY_PATTERNS: Final = frozenset({" {2,}", " +", r"\A ", "\u2581+" + r"(?![\s\S])", r" +(?![\s\S])"})


class Replace(Normalizer):
    """Replace every match of ``pattern`` with ``content``, left to right.

    ``pattern`` is a literal string, or a regex with ``is_regex=True`` (the JSON
    ``{"Regex": ...}``). ``content`` is inserted literally (no group references).
    Empty matches follow ``tokenizers``: none in empty text, and none where the previous
    match ended (``"x*"`` over ``"axb"`` gives 3 matches, not Python's 4).

    Cost: ``str.replace`` for a string; one ``regex.sub`` for a regex that cannot match
    empty text, else a Python loop over the matches.

    >>> Replace(" ", "▁").normalize("a b")
    'a▁b'
    >>> Replace(" {2,}", "▁", is_regex=True).normalize_aligned("a   b")
    ('a▁b', [(0, 1), (1, 4), (4, 5)])
    """

    __slots__ = ("_empty", "_regex", "_template", "content", "is_regex", "pattern")
    type_name = "Replace"

    @property
    def space_local(self) -> bool:
        """Spaces replaced, or runs of them."""
        return self.pattern == " " or (self.is_regex and self.pattern in (" {2,}", " +"))

    def keeps(self, char: str) -> bool:
        if not self.is_regex:
            return char not in self.pattern and char not in self.content
        return self.pattern in _SPACE_ONLY_PATTERNS and char not in self.content

    def __init__(self, pattern: str, content: str, *, is_regex: bool = False) -> None:
        self.pattern = pattern
        self.content = content
        self.is_regex = is_regex
        try:
            self._regex = regex.compile(pattern if is_regex else regex.escape(pattern))
        except regex.error as e:
            raise TokstreamError(f"Replace pattern {pattern!r} does not compile: {e}") from None
        # regex.sub reads backslashes in its template; content is literal.
        self._template = content.replace("\\", "\\\\")
        self._empty = _can_match_empty(pattern, self._regex) if is_regex else not pattern

    def _matches(self, text: str) -> Iterable[tuple[int, int]]:
        """Oniguruma's ``find_iter``: skip an empty match where the last match ended."""
        if not text:
            return
        pos = 0
        last_end = -1
        search = self._regex.search
        while pos <= len(text):
            m = search(text, pos)
            if m is None:
                return
            s, e = m.span()
            if s == e == last_end:
                # After an empty match the next search from the same place finds it
                # again; after a non-empty one an empty match there is not taken.
                pos = e + 1
                continue
            yield s, e
            last_end = pos = e

    def normalize(self, text: str) -> str:
        if not text:
            return text
        if not self.is_regex and self.pattern:
            return text.replace(self.pattern, self.content)
        if not self._empty:
            return self._regex.sub(self._template, text)
        out: list[str] = []
        pos = 0
        for s, e in self._matches(text):
            out.append(text[pos:s])
            out.append(self.content)
            pos = e
        out.append(text[pos:])
        return "".join(out)

    def normalize_aligned(self, text: str) -> tuple[str, Spans]:
        out: list[str] = []
        spans: Spans = []
        pos = 0
        width = len(self.content)
        for s, e in self._matches(text):
            out.append(text[pos:s])
            spans.extend(identity_spans(pos, s))
            out.append(self.content)
            spans.extend([(s, e)] * width)
            pos = e
        out.append(text[pos:])
        spans.extend(identity_spans(pos, len(text)))
        return "".join(out), spans

    def to_json(self) -> dict[str, object]:
        kind = "Regex" if self.is_regex else "String"
        return {"type": self.type_name, "pattern": {kind: self.pattern}, "content": self.content}

    def __repr__(self) -> str:
        flag = ", is_regex=True" if self.is_regex else ""
        return f"Replace({self.pattern!r}, {self.content!r}{flag})"

    @classmethod
    def from_json(cls, obj: JsonObject, path: str = "normalizer", *, build: Build[Normalizer] | None = None) -> Replace:
        """Read a ``"Replace"`` object; a pattern matching the empty string is refused
        (module notes), though the constructor takes it."""
        text, is_regex = pattern(obj, path)
        self = cls(text, field(obj, "content", str, path), is_regex=is_regex)
        if self._regex.fullmatch("") is not None:
            raise error(
                f"{path}.pattern",
                f"{text!r} matches the empty string: it would insert {self.content!r} between "
                f"every two characters (tokenizers' alignments break on it: it doubles the "
                f"first insertion under ByteLevel, or panics)",
            )
        return self

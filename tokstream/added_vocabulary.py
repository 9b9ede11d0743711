"""Added and special tokens: the entries matched in the text before the model sees it.

Every tokenizer has one ``AddedVocabulary``: the specials of a rank file (tiktoken's
``special_tokens``), or a ``tokenizer.json``'s ``added_tokens``, or a SentencePiece
model's control pieces. It owns the one matcher, with ``tokenizers``' options:

- ``lstrip`` / ``rstrip``: the match takes the whitespace before / after the literal;
- ``single_word``: the literal matches only where no word character touches it;
- at one offset the longest literal wins (``tokenizers``' leftmost-longest
  Aho-Corasick; tiktoken's alternation order is unspecified there, and OpenAI's
  specials never overlap).

Which tokens are matched in one call is the special-token policy's business
(``specials.resolve_policy``, tiktoken's semantics): a non-special added token always
is, a special one only when allowed. A special that is not allowed is *plain text*
for that call: it is not a token at all, so it cannot shadow another match.

Not handled: ``normalized=True`` tokens are matched in the raw text like the others,
where ``tokenizers`` matches them in the normalized text.

Cost: ``matcher(allowed)`` compiles one regex per distinct ``allowed`` set (cached, 64
sets): ~1 ms for Llama 3's 256 literals. A split first scans for the literals' first
characters (one C pass); only text holding one runs the alternation.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import regex

from .json_fields import expect_object, field

__all__ = ["AddedToken", "AddedVocabulary", "Matcher"]


@dataclass(frozen=True)
class AddedToken:
    """An entry of ``tokenizer.json``'s ``added_tokens`` (a rank file's specials are
    ``special=True`` entries with the other options off)."""

    id: int
    content: str
    special: bool = False
    single_word: bool = False
    lstrip: bool = False
    rstrip: bool = False
    normalized: bool = False

    def to_json(self) -> dict[str, object]:
        """The ``added_tokens`` entry, keys in ``tokenizers``' order."""
        return {
            "id": self.id,
            "content": self.content,
            "single_word": self.single_word,
            "lstrip": self.lstrip,
            "rstrip": self.rstrip,
            "normalized": self.normalized,
            "special": self.special,
        }

    @classmethod
    def from_json(cls, obj: object, path: str = "added_tokens[0]") -> AddedToken:
        """Read an ``added_tokens`` entry (``path`` names it in errors), with the ``id``
        written there. ``tokenizers`` ignores that id on load and assigns its own
        (``formats.hf_json``); it must still be present and an integer.

        >>> AddedToken.from_json({"id": 5, "content": "<s>", "special": True})
        AddedToken(id=5, content='<s>', special=True, single_word=False, lstrip=False, rstrip=False, normalized=False)
        """
        o = expect_object(obj, path)
        return cls(
            id=field(o, "id", int, path),
            content=field(o, "content", str, path),
            special=field(o, "special", bool, path, False),
            single_word=field(o, "single_word", bool, path, False),
            lstrip=field(o, "lstrip", bool, path, False),
            rstrip=field(o, "rstrip", bool, path, False),
            normalized=field(o, "normalized", bool, path, False),
        )

    @property
    def plain(self) -> bool:
        """Matched as its literal alone (no strip or word rule)."""
        return not (self.single_word or self.lstrip or self.rstrip)


#: No match at all: the class of first characters when there are no literals.
_NOTHING: Final = "(?!)"


class Matcher:
    """The tokens one call matches (one policy's active set) and the regex over them.

    ``tokens`` are the active tokens; ``split(text)`` cuts ``text`` into plain runs
    and matched tokens; ``finditer(text, pos, endpos)`` yields ``(start, end, token)``.
    """

    __slots__ = ("_by_group", "_first", "_regex", "has_lstrip", "has_single_word", "tokens")

    def __init__(self, tokens: Sequence[AddedToken]) -> None:
        self.tokens: tuple[AddedToken, ...] = tuple(tokens)
        alternatives = []
        by_group: dict[str, AddedToken] = {}
        # Longest content first: at the leftmost offset the longest literal wins.
        for k, t in enumerate(sorted(self.tokens, key=lambda t: (-len(t.content), t.content))):
            body = regex.escape(t.content)
            if t.single_word:
                body = rf"(?<!\w){body}(?!\w)"
            if t.lstrip:
                body = rf"\s*{body}"
            if t.rstrip:
                body = rf"{body}\s*"
            by_group[f"t{k}"] = t
            alternatives.append(f"(?P<t{k}>{body})")
        self._regex = regex.compile("|".join(alternatives) or _NOTHING)
        self._by_group = by_group
        # No literal matches in text without one of its first characters (lstrip only
        # adds whitespace before it), which one C scan rules out.
        firsts = sorted({t.content[0] for t in self.tokens if t.content})
        self._first = regex.compile("[" + "".join(map(regex.escape, firsts)) + "]" if firsts else _NOTHING)
        self.has_lstrip = any(t.lstrip for t in self.tokens)
        self.has_single_word = any(t.single_word for t in self.tokens)

    def may_match(self, text: str, pos: int = 0, endpos: int | None = None) -> bool:
        """False when no token can match in ``text[pos:endpos]`` (a fast scan)."""
        end = len(text) if endpos is None else endpos
        return self._first.search(text, pos, end) is not None

    def finditer(self, text: str, pos: int = 0, endpos: int | None = None) -> Iterator[tuple[int, int, AddedToken]]:
        """``(start, end, token)`` of each match in ``text[pos:endpos]``, left to right."""
        end = len(text) if endpos is None else endpos
        by_group = self._by_group
        for m in self._regex.finditer(text, pos, end):
            yield m.start(), m.end(), by_group[m.lastgroup or ""]

    def split(self, text: str) -> list[tuple[str, AddedToken | None]]:
        """Cut ``text`` at matches: ``(plain_text, None)`` and ``(match, token)`` in order."""
        if self._first.search(text) is None:
            return [(text, None)]
        out: list[tuple[str, AddedToken | None]] = []
        pos = 0
        for start, end, token in self.finditer(text):
            if start > pos:
                out.append((text[pos:start], None))
            out.append((text[start:end], token))
            pos = end
        if pos < len(text):
            out.append((text[pos:], None))
        return out


class AddedVocabulary:
    """The added and special tokens of one tokenizer (module notes).

    >>> added = AddedVocabulary([AddedToken(100, "<|end|>", special=True), AddedToken(101, "<tool>")])
    >>> added.special_tokens
    {'<|end|>': 100}
    >>> [(piece, t and t.id) for piece, t in added.matcher(frozenset()).split("a<tool>b<|end|>")]
    [('a', None), ('<tool>', 101), ('b<|end|>', None)]
    """

    __slots__ = ("__weakref__", "_by_content", "_matchers", "special_tokens", "tokens")

    def __init__(self, tokens: Sequence[AddedToken] = ()) -> None:
        self.tokens: tuple[AddedToken, ...] = tuple(tokens)
        #: literal -> id of the special tokens (the policy resolves against these).
        self.special_tokens: dict[str, int] = {t.content: t.id for t in self.tokens if t.special}
        by_content: dict[str, int] = {}
        for t in self.tokens:
            by_content.setdefault(t.content, t.id)
        self._by_content = by_content
        self._matchers: dict[frozenset[str], Matcher | None] = {}

    @classmethod
    def from_specials(cls, specials: Mapping[str, int]) -> AddedVocabulary:
        """A rank file's specials: plain special tokens."""
        return cls([AddedToken(sid, text, special=True) for text, sid in specials.items()])

    def token_to_id(self, content: str) -> int | None:
        """The id of the added token spelled ``content``, or None."""
        return self._by_content.get(content)

    @property
    def ids(self) -> frozenset[int]:
        """Every added token's id."""
        return frozenset(t.id for t in self.tokens)

    @property
    def plain_specials(self) -> bool:
        """Every token is a special one with no strip, word or normalization rule (a
        rank file's specials, tiktoken's semantics)."""
        return all(t.special and t.plain and not t.normalized for t in self.tokens)

    def matcher(self, allowed: frozenset[str]) -> Matcher | None:
        """The tokens one call matches: every non-special token and the ``allowed``
        specials; None when there are none (the text is all plain). Built once per
        ``allowed`` set (64 sets are kept)."""
        try:
            return self._matchers[allowed]
        except KeyError:
            pass
        active = [t for t in self.tokens if not t.special or t.content in allowed]
        found = Matcher(active) if active else None
        if len(self._matchers) >= 64:
            self._matchers.clear()
        self._matchers[allowed] = found
        return found

    def to_json(self) -> list[dict[str, object]]:
        """``tokenizer.json``'s ``added_tokens``, in this vocabulary's order."""
        return [t.to_json() for t in self.tokens]

    def __reduce__(self) -> tuple[type[AddedVocabulary], tuple[tuple[AddedToken, ...]]]:
        return (AddedVocabulary, (self.tokens,))

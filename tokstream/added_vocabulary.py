"""Added and special tokens: the entries matched in the text before the model sees it.

Every tokenizer has one ``AddedVocabulary``: the specials of a rank file (tiktoken's
``special_tokens``), or a ``tokenizer.json``'s ``added_tokens``, or a SentencePiece
model's control pieces. It builds the matchers, with the semantics of ``tokenizers``'
``AddedVocabulary`` (``added_vocabulary.rs``, checked against ``tokenizers`` 0.23.3 by
``tests/test_added_vocabulary.py``):

- two sets of literals (``Trie``, ``tokenizers``' ``MatchingSet``): the tokens with
  ``normalized=False`` are matched in the input text; every piece of text between
  their matches is then normalized, and the ``normalized=True`` tokens are matched in
  it, each spelled as the normalizer writes its content (``"<tool>"`` is ``"▁<tool>"``
  under Mistral's ``Prepend``, so ``"a <tool>"`` holds it and ``"<tool><tool>"`` only
  once). With no normalizer their content is matched as it is, still second;
- in one text, matches are found leftmost-longest and never overlap (Aho-Corasick);
  each match is then judged by its token's options, and a match a rule rejects is
  still consumed (the search goes on after it):

  - ``single_word``: rejected when a word character (``\\w``, Unicode 16.0, as Rust's
    ``regex``) touches it inside the text searched (its piece, for a normalized token);
  - ``lstrip``: the match takes the whitespace (``\\s``, Unicode White_Space) before it,
    back to the end of the previous match;
  - ``rstrip``: the match takes the whitespace after it; the search still resumes
    right after the literal, so a literal starting in that whitespace matches too, and
    the two pieces overlap (as in ``tokenizers``).

Entries are read as ``tokenizers`` reads them: an entry with empty content is no token
(``formats.hf_json`` skips it; ``AddedVocabulary`` refuses it); entries that share a
content share one id, and the last one's options apply; a literal of a special entry
is matched by the first such entry only. A normalized token whose content normalizes
to nothing (a control character under BERT) is refused: ``tokenizers`` matches its
empty literal between every two characters, and panics on non-ASCII text.

Which tokens are matched in one call is the special-token policy's business
(``specials.resolve_policy``, tiktoken's semantics): a non-special added token always
is, a special one only when allowed. A special that is not allowed is *plain text*
for that call: it is not in the sets at all, so it cannot shadow another match
(``tokenizers``' ``encode_special_tokens`` skips such a match but still consumes it).

Decoding (``decode_spellings``, ``skip_ids``): as ``tokenizers`` 0.23, a normalized
token reaches the decoder spelled as its normalized content (``"kuća"`` under a
``ByteLevel`` normalizer is ``"kuÄĩa"``, which the ``ByteLevel`` decoder turns back into
``"kuća"``); ``skip_special_tokens`` drops the ids whose spelling is a special token's
content, so a normalized special spelled otherwise is kept.

Cost: ``matcher(allowed)`` compiles one regex per set and distinct ``allowed`` set
(cached, 64 sets): ~1 ms for Llama 3's 256 literals. A split first scans for the
literals' first characters (one C pass); only text holding one runs the alternation,
and the options cost a few Python steps per match.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import regex

from .errors import TokstreamError
from .json_fields import expect_object, field
from .surrogates import has_surrogates

if TYPE_CHECKING:
    from .normalizers import Normalizer

__all__ = ["WHITE_SPACE", "AddedToken", "AddedVocabulary", "Matcher", "Trie", "empty_literal_message", "is_word_char"]


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


#: Rust's ``\\s`` (Unicode White_Space), which ``lstrip`` / ``rstrip`` take; the
#: ``\\x1c``-``\\x1f`` that ``str.isspace`` adds are not in it.
WHITE_SPACE: Final = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

_WORD: Final = regex.compile(r"\w")


@functools.lru_cache(maxsize=4096)
def is_word_char(c: str) -> bool:
    """Whether ``c`` is ``\\w`` to Rust's ``regex`` (``single_word``): Alphabetic, a
    mark, a decimal digit, a connector or a join control, by Unicode 16.0 (a code point
    a newer ``regex`` release assigns is no word character there)."""
    if c.isascii():
        return c.isalnum() or c == "_"
    from .pre_tokenizers.unicode16 import unicode16_fixes

    guard, table = unicode16_fixes()
    if guard is not None and guard.match(c) is not None:
        c = c.translate(table)
    return _WORD.match(c) is not None


def empty_literal_message(token: AddedToken) -> str:
    """Why a normalized token whose content normalizes to nothing is refused."""
    return (
        f"added token {token.id} ({token.content!r}) is normalized, and the normalizer turns its "
        f"content into empty text; tokenizers would then cut the text between every character "
        f'(and fail on non-ASCII text). Set its "normalized" to false, or remove it'
    )


#: No match at all: the class of first characters when there are no literals.
_NOTHING: Final = "(?!)"

#: ``(start, end, token)`` pieces of a split: ``token`` None for plain text.
Span = tuple[int, int, "AddedToken | None"]


class Trie:
    """One set of literals matched as ``tokenizers`` matches them (module notes):
    leftmost-longest, then each match judged by its token's options.

    ``entries`` are ``(literal, token)`` in ``tokenizers``' order: of equal literals the
    first one's token is matched. Empty literals are left out.
    """

    __slots__ = ("_first", "_regex", "has_lstrip", "has_rstrip", "has_single_word", "literals", "plain")

    def __init__(self, entries: Sequence[tuple[str, AddedToken]]) -> None:
        literals: dict[str, AddedToken] = {}
        for literal, token in entries:
            if literal:
                literals.setdefault(literal, token)
        #: Each literal and the token it matches.
        self.literals: Mapping[str, AddedToken] = literals
        # Longest first: at the leftmost offset the longest literal wins (a literal's
        # alternatives there are prefixes of one another).
        order = sorted(literals, key=lambda s: (-len(s), s))
        self._regex = regex.compile("|".join(map(regex.escape, order)) or _NOTHING)
        # No literal matches in text without one of its first characters (one C scan).
        firsts = sorted({s[0] for s in literals})
        self._first = regex.compile("[" + "".join(map(regex.escape, firsts)) + "]" if firsts else _NOTHING)
        tokens = literals.values()
        self.has_lstrip = any(t.lstrip for t in tokens)
        self.has_rstrip = any(t.rstrip for t in tokens)
        self.has_single_word = any(t.single_word for t in tokens)
        #: No token has an option: a split is the literal matches alone.
        self.plain = not (self.has_lstrip or self.has_rstrip or self.has_single_word)

    def may_match(self, text: str, pos: int = 0, endpos: int | None = None) -> bool:
        """False when no literal can match in ``text[pos:endpos]`` (a fast scan)."""
        return self._first.search(text, pos, len(text) if endpos is None else endpos) is not None

    def spans(self, text: str) -> list[Span]:
        """``text`` cut at the tokens: ``(start, end, token)``, ``token`` None for plain
        text, in order, covering ``text`` (pieces overlap only where a literal starts in
        the whitespace an ``rstrip`` match took; module notes). Empty pieces are left
        out: ``tokenizers`` drops them, and a token with them."""
        if self._first.search(text) is None:
            return [(0, len(text), None)] if text else []
        literals = self.literals
        out: list[Span] = []
        pos = 0  # the end of the last piece (tokenizers' start_offset)
        n = len(text)
        plain = self.plain
        for m in self._regex.finditer(text):
            start, stop = m.span()
            token = literals[m.group()]
            if not plain:
                if token.single_word and (
                    (start > 0 and is_word_char(text[start - 1])) or (stop < n and is_word_char(text[stop]))
                ):
                    continue  # consumed all the same: the search resumes after it
                if token.lstrip:
                    s = start
                    while s > 0 and text[s - 1] in WHITE_SPACE:
                        s -= 1
                    start = max(s, pos)
                if token.rstrip:
                    while stop < n and text[stop] in WHITE_SPACE:
                        stop += 1
            if pos < start:
                out.append((pos, start, None))
            if start < stop:  # an lstrip pushed past a whitespace literal: tokenizers panics
                out.append((start, stop, token))
            pos = stop  # back inside an rstrip's whitespace, if this literal began there
        if pos < n:
            out.append((pos, n, None))
        return out

    def split(self, text: str) -> list[tuple[str, AddedToken | None]]:
        """``spans(text)`` as ``(piece, token)``: plain runs have ``token`` None."""
        if self._first.search(text) is None:
            return [(text, None)] if text else []
        return [(text[a:b], token) for a, b, token in self.spans(text)]


class Matcher:
    """The tokens one call matches (one policy's active set), as two ``Trie``:
    ``raw`` (``normalized=False``, matched in the input) and ``normalized`` (matched in
    each normalized piece between ``raw``'s matches, spelled normalized); either may be
    None.

    ``tokens`` are the active tokens; ``split(text)`` is the first step, ``raw``'s
    split of the input.
    """

    __slots__ = ("has_lstrip", "has_single_word", "normalized", "raw", "tokens")

    def __init__(self, tokens: Sequence[AddedToken], raw: Trie | None, normalized: Trie | None) -> None:
        self.tokens: tuple[AddedToken, ...] = tuple(tokens)
        self.raw = raw
        self.normalized = normalized
        self.has_lstrip = any(t.lstrip for t in self.tokens)
        self.has_single_word = any(t.single_word for t in self.tokens)

    def may_match(self, text: str, pos: int = 0, endpos: int | None = None) -> bool:
        """False when no raw token can match in ``text[pos:endpos]`` (a fast scan)."""
        return self.raw is not None and self.raw.may_match(text, pos, endpos)

    def spans(self, text: str) -> list[Span]:
        """``raw``'s ``spans(text)`` (the whole text, plain, when there is no raw token)."""
        if self.raw is None:
            return [(0, len(text), None)] if text else []
        return self.raw.spans(text)

    def split(self, text: str) -> list[tuple[str, AddedToken | None]]:
        """Cut ``text`` at raw matches: ``(plain_text, None)`` and ``(match, token)``."""
        if self.raw is None:
            return [(text, None)] if text else []
        return self.raw.split(text)


class AddedVocabulary:
    """The added and special tokens of one tokenizer (module notes); ``normalizer``
    spells the normalized tokens (the pipeline's, which ``Pipeline`` passes).

    >>> added = AddedVocabulary([AddedToken(100, "<|end|>", special=True), AddedToken(101, "<tool>")])
    >>> added.special_tokens
    {'<|end|>': 100}
    >>> [(piece, t and t.id) for piece, t in added.matcher(frozenset()).split("a<tool>b<|end|>")]
    [('a', None), ('<tool>', 101), ('b<|end|>', None)]
    """

    __slots__ = (
        "__weakref__",
        "_by_content",
        "_entries",
        "_matchers",
        "_spelled",
        "normalizer",
        "special_tokens",
        "tokens",
    )

    def __init__(self, tokens: Sequence[AddedToken] = (), *, normalizer: Normalizer | None = None) -> None:
        self.tokens: tuple[AddedToken, ...] = tuple(tokens)
        self.normalizer = normalizer
        for t in self.tokens:
            if not t.content:
                raise TokstreamError(
                    f"added token {t.id} has empty content; an empty literal would match everywhere "
                    f"(tokenizers skips such entries on load)"
                )
            if has_surrogates(t.content):
                raise TokstreamError(
                    f"added token {t.id} ({t.content!r:.60}) holds a surrogate code point: encode replaces "
                    f"those before matching (module surrogates), so it could never match, and neither "
                    f"tiktoken nor tokenizers can hold it; write the character itself"
                )
        #: literal -> id of the special tokens (the policy resolves against these).
        self.special_tokens: dict[str, int] = {}
        # As tokenizers: the last entry of a content gives the options of its id.
        last: dict[str, AddedToken] = {}
        by_content: dict[str, int] = {}
        for t in self.tokens:
            if t.special:
                self.special_tokens.setdefault(t.content, t.id)
            last[t.content] = t
            by_content.setdefault(t.content, t.id)
        self._by_content = by_content
        # tokenizers' trie order: the first entry of each special content, then every
        # entry of a content no special has; each in the set its own flag names.
        firsts: dict[str, AddedToken] = {}
        for t in self.tokens:
            if t.special:
                firsts.setdefault(t.content, t)
        ordered = [*firsts.values(), *(t for t in self.tokens if t.content not in self.special_tokens)]
        self._entries: tuple[tuple[bool, AddedToken], ...] = tuple((t.normalized, last[t.content]) for t in ordered)
        self._spelled: dict[str, str] = {}
        self._matchers: dict[frozenset[str], Matcher | None] = {}
        if normalizer is not None:
            for t in self.tokens:
                if t.normalized and not self.spelled(t.content):
                    raise TokstreamError(empty_literal_message(t))

    @classmethod
    def from_specials(cls, specials: Mapping[str, int]) -> AddedVocabulary:
        """A rank file's specials: plain special tokens."""
        return cls([AddedToken(sid, text, special=True) for text, sid in specials.items()])

    def with_normalizer(self, normalizer: Normalizer | None) -> AddedVocabulary:
        """This vocabulary spelled by ``normalizer`` (itself when it already is)."""
        if normalizer is self.normalizer:
            return self
        return AddedVocabulary(self.tokens, normalizer=normalizer)

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

    @property
    def has_normalized(self) -> bool:
        """Some token is matched in normalized text."""
        return any(normalized for normalized, _ in self._entries)

    def spelled(self, content: str) -> str:
        """``content`` as the normalizer writes it (as it is with no normalizer)."""
        found = self._spelled.get(content)
        if found is None:
            found = self._spelled[content] = content if self.normalizer is None else self.normalizer.normalize(content)
        return found

    def decode_spellings(self) -> dict[int, str]:
        """Each added id's spelling for the decoder: a normalized token's normalized
        content, any other's content (``tokenizers`` 0.23; module notes). Entries that
        share an id: the last one's flag decides, as its options do."""
        spelled = self.spelled if self.normalizer is not None else None
        return {t.id: spelled(t.content) if t.normalized and spelled else t.content for t in self.tokens}

    @property
    def skip_ids(self) -> frozenset[int]:
        """The ids ``decode(skip_special_tokens=True)`` drops: those whose decoder
        spelling (``decode_spellings``) is a special token's content (``tokenizers``
        filters on that string, so a normalized special spelled otherwise is kept)."""
        specials = self.special_tokens
        return frozenset(i for i, s in self.decode_spellings().items() if s in specials)

    def matcher(self, allowed: frozenset[str]) -> Matcher | None:
        """The tokens one call matches: every non-special token and the ``allowed``
        specials; None when there are none (the text is all plain). Built once per
        ``allowed`` set (64 sets are kept)."""
        try:
            return self._matchers[allowed]
        except KeyError:
            pass
        specials = self.special_tokens
        raw: list[tuple[str, AddedToken]] = []
        normalized: list[tuple[str, AddedToken]] = []
        active: dict[int, AddedToken] = {}
        for is_normalized, t in self._entries:
            if t.content in specials and t.content not in allowed:
                continue
            active.setdefault(t.id, t)
            if is_normalized:
                normalized.append((self.spelled(t.content), t))
            else:
                raw.append((t.content, t))
        found = (
            Matcher(list(active.values()), Trie(raw) if raw else None, Trie(normalized) if normalized else None)
            if active
            else None
        )
        if len(self._matchers) >= 64:
            self._matchers.clear()
        self._matchers[allowed] = found
        return found

    def to_json(self) -> list[dict[str, object]]:
        """``tokenizer.json``'s ``added_tokens``, in this vocabulary's order."""
        return [t.to_json() for t in self.tokens]

    def __reduce__(self) -> tuple[type[AddedVocabulary], tuple[tuple[AddedToken, ...]]]:
        # The normalizer is the pipeline's, which passes it again (Pipeline.__init__).
        return (AddedVocabulary, (self.tokens,))

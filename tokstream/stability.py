"""Where appended text can no longer change the ids: the one stability rule behind
``Tokenizer.stable_boundary``, ``Tokenizer.encode_stable``, ``StreamEncoder`` and
``PrefixCachePlanner``.

A *cut* in a text is an offset ``b`` such that, for every string ``s``, the ids of
``text + s`` are the ids of ``text[:b]`` followed by the ids of ``text[b:] + s``
encoded as a continuation (no start-of-text rule such as a dummy prefix applies to
it). Each function here returns the largest cut its rule can prove, from the
pre-tokenizer's and the model's own rules; none of them runs a trial encoding. 0 is
always a cut, so an unknown shape is sound, only not eager.

Regex pre-tokenizers (tiktoken, GPT-2, Llama 3): ``regex_cut``. The known patterns
(``pre_tokenizers.PATTERNS``) are alternations of greedy runs (letters, digits,
punctuation, whitespace) with a one-character lookahead (``\\s+(?!\\S)``), bounded
contractions (``'s`` .. ``'ll``, at most 3 characters) and ``\\s*[\\r\\n]+``, whose
``\\s*`` reads to the end of a whitespace run. So a piece is final when the text
goes on past it: it is not the last piece, it does not reach into the trailing
whitespace run, and no apostrophe in the last two characters can still start a
contraction (``'``, ``'r``, ``'v``, ``'l`` at the end; then the piece before the apostrophe, which a contraction suffix may
join, is not final either). o200k's two letter classes add one more: a piece of
uppercase or caseless letters (``"日本"``) right before a last letter piece
(``"ABC"``) joins it once lowercase follows, so it is not final. And a cut never
follows whitespace: at the end of
``text[:b]`` a run of it splits otherwise (``\\s+(?!\\S)`` keeps it whole there, but
gives its last character to the next word). Cost: a ``split`` of the tail from the
last space that follows a word, O(tail).

``▁`` and whitespace pipelines (SentencePiece, Mistral, BERT): ``space_cut``. Their
pieces start at a space that follows another character (``SpaceRunCut``,
``Metaspace(split=True)``, BERT's whitespace split), and their normalizers map a
printable ASCII character and a space each to themselves, one character at a time.
So the start of the last run of spaces that follows printable ASCII is a cut: the
run (which normalizers may collapse or strip) and everything after it lie on one
side. BERT's pre-tokenizer splits at any whitespace, so any ASCII whitespace run
counts there; and a newline, tab or carriage return that no normalizer rule touches
and no vocabulary piece holds with another character counts too (a model never joins
it to a neighbour: Mistral's and botchan's newlines). Text without such a place
(Japanese) has no cut before its end. Cost: one
``rfind`` per run of spaces looked at.

Added and special tokens (``SpecialHold``): text that may still complete a literal
is held back, so a literal split across chunks is seen whole; a token the call
matches is a hard boundary (the text after it opens a new section, with start rules);
``single_word`` tokens look behind and keep everything open, ``lstrip`` tokens hold
the trailing whitespace, an ``rstrip`` match at the end stays open.

Declarations
------------
The rule of a tokenizer is built once (``Stability``) from what its stages declare,
never from their classes:

- the pre-tokenizer's ``cut_rule()`` (``Cut``): ``REGEX`` (a known total pattern, and
  the exact split to run), ``SPACE_RUN`` (every piece starts at a run of spaces that
  follows another character: ``Metaspace(split=True)``, SentencePiece's word cut),
  ``WHITESPACE`` (every ASCII whitespace splits: BERT, ``Whitespace``), or ``NONE``;
- with no pre-tokenizer, the pipeline's ``word_cut`` (the model's cut character, when
  the normalizer turns a space into it) is a ``SPACE_RUN``;
- the normalizer's ``space_local`` (it maps a printable ASCII character and a space
  each to themselves or to one fixed character, one at a time, with rules acting only
  on runs of spaces or at the ends), ``keeps(char)`` (an ASCII whitespace character
  between two printable ones is left alone) and ``normalize_continued``;
- the model's spellings (for the isolated whitespace characters).

A stage that declares nothing (the defaults: ``Cut(NONE)``, ``space_local = False``,
``keeps`` false) keeps everything open: streaming stays exact, only not eager.
"""

from __future__ import annotations

import enum
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Final

import regex

from .surrogates import has_surrogates, index_map, replace_surrogates, settled_end

if TYPE_CHECKING:
    from .added_vocabulary import Matcher, Trie
    from .pipeline import Pipeline
    from .specials import SpecialPolicy

__all__ = ["ASCII_WHITESPACE", "WHITESPACE", "Cut", "CutKind", "SpecialHold", "Stability", "regex_cut", "space_cut"]

#: Every character that is whitespace to ``str.isspace`` or to regex ``\s`` /
#: Unicode White_Space (Rust's and Oniguruma's ``\s``): the union, so a trailing
#: whitespace run is never underestimated (tests check it against both).
WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)

#: The printable ASCII characters other than a space.
_PRINTABLE_ASCII = "".join(map(chr, range(0x21, 0x7F)))
#: ASCII whitespace that BERT's and the whitespace pre-tokenizers split at (BERT's
#: normalizer deletes \x0b and \x0c as control characters, joining their neighbours).
ASCII_WHITESPACE = " \t\n\r"
#: Whitespace that every regex engine involved counts as ``\s``.
_PLAIN_SPACE = " \t\n\r"
#: A piece that starts with a letter or mark.
_LETTER = regex.compile(r"[\p{L}\p{M}]")
#: A piece that o200k's first alternative can absorb as its uppercase part: letters
#: and marks (after an optional non-letter), no lowercase ASCII letter.
_CASELESS_RUN = regex.compile(r"[^\r\n\p{L}\p{N}]?(?:(?![a-z])[\p{L}\p{M}])+")
#: A contraction (``'re``) is at most this many characters, apostrophe included.
_CONTRACTION = 3
#: Endings that a longer contraction (``'s 't 're 've 'm 'll 'd``, any case) extends.
_OPEN_CONTRACTIONS = frozenset({"'", "'r", "'v", "'l"})


def regex_cut(
    split: Callable[[str], list[str]],
    text: str,
    first: bool = False,
    *,
    last_space_apart: bool = False,
    prefix_space: bool = False,
) -> int:
    """The largest cut of ``text`` under a known regex pattern (module notes);
    ``last_space_apart`` for GPT-2's pattern (see the comment below); with
    ``prefix_space`` and ``first`` the encoders see ``" " + text`` (a text that lacks
    one), so a cut there, moved back by one, is the cut."""
    return _regex_cut(split, last_space_apart, prefix_space, text, first)


def _regex_cut(
    split: Callable[[str], list[str]], last_space_apart: bool, prefix_space: bool, text: str, first: bool
) -> int:
    """``regex_cut`` with positional options (a rule binds them with ``partial``).

    ``split`` must return pieces that concatenate to ``text`` (the named patterns
    match every character); otherwise nothing is provably final and 0 is returned.
    Only a tail is split: the known patterns start a piece at every space that
    follows a non-space (``pre_tokenizers.patterns.SPACE_SAFE_PATTERNS``), and the last such space
    with more than whitespace after it is itself a cut, so the largest cut lies in
    the tail from there and the split of that tail agrees with the whole text's.
    """
    if prefix_space and first and not text.startswith(" "):
        return max(_regex_cut(split, last_space_apart, False, " " + text, False) - 1, 0)
    end = len(text.rstrip(WHITESPACE))
    base = _resync(text, end)
    pieces = split(text[base:] if base else text)
    starts: list[int] = []
    pos = base
    for p in pieces:
        starts.append(pos)
        pos += len(p)
    if pos != len(text) or not starts:
        return 0
    limit = min(starts[-1], end)
    # o200k: a letter piece made only of uppercase / caseless letters and marks, right
    # before the last piece, joins it when lowercase follows ("日本" "ABC" + "d" is
    # one piece). Lowercase ASCII (the same in every Unicode version) rules that out.
    k = len(starts) - 1
    while k > 0 and _LETTER.match(text, starts[k]) and _CASELESS_RUN.fullmatch(text, starts[k - 1], starts[k]):
        k -= 1
        limit = min(limit, starts[k])
    apostrophe = text.find("'", max(0, len(text) - _CONTRACTION + 1))
    if apostrophe >= 0 and text[apostrophe:].lower() in _OPEN_CONTRACTIONS:
        # The piece holding the character before the apostrophe may take a
        # contraction suffix (o200k); the apostrophe's own piece may become one.
        held = starts[bisect_right(starts, apostrophe - 1) - 1] if apostrophe > starts[0] else 0
        limit = min(limit, held)
    # A cut right after whitespace would leave the run at the end of text[:b], where
    # ``\s+(?!\S)`` and ``\s++$`` split it otherwise than before the next word. With
    # GPT-2's pattern (``last_space_apart``) a run before a word is exactly its
    # whole-run piece and its last character, so a cut before that character holds.
    k = bisect_right(starts, limit) - 1
    while k > 0 and text[starts[k] - 1] in WHITESPACE:
        if last_space_apart and text[starts[k] - 1] in _PLAIN_SPACE and text[starts[k]] in _PLAIN_SPACE:
            break
        k -= 1
    return starts[k] if k >= 0 else 0


def _resync(text: str, end: int) -> int:
    """The last space before ``end`` (where the trailing whitespace starts) that
    follows a non-space (0 when there is none); cost O(length of the tail looked at)."""
    j = end
    while True:
        j = text.rfind(" ", 0, j)
        if j <= 0:
            return 0
        if text[j - 1] not in WHITESPACE:
            return j


def space_cut(text: str, *, hard: str = " ", left: str = _PRINTABLE_ASCII) -> int:
    """The start of the last run of ``hard`` characters (spaces, by default) that
    follows one of ``left`` (printable ASCII other than a space); 0 when there is
    none (module notes)."""
    end = len(text)
    while True:
        j = max(text.rfind(c, 0, end) for c in hard) if len(hard) > 1 else text.rfind(hard, 0, end)
        if j <= 0:
            return 0
        while j > 0 and text[j - 1] in hard:
            j -= 1
        if j > 0 and text[j - 1] in left:
            return j
        end = j


class SpecialHold:
    """Where a literal (of an added or special token) might still be completing.

    ``hold(text, end)`` is the start of the longest suffix of ``text[:end]`` that is
    a proper prefix of a literal, or ``end``. Cost: a ``str.find`` for each
    character that starts a literal within the last (longest literal - 1)
    characters, then one set lookup per place found.
    """

    __slots__ = ("_firsts", "_longest", "_prefixes")

    def __init__(self, literals: Iterable[str]) -> None:
        prefixes: set[str] = set()
        longest = 0
        for lit in literals:
            longest = max(longest, len(lit))
            prefixes.update(lit[:k] for k in range(1, len(lit)))
        self._prefixes = frozenset(prefixes)
        self._longest = longest
        self._firsts = "".join(sorted({p[0] for p in prefixes}))

    def hold(self, text: str, end: int) -> int:
        lo = max(0, end - self._longest + 1)
        best = end
        prefixes = self._prefixes
        for c in self._firsts:
            j = text.find(c, lo, end)
            while 0 <= j < best:
                if text[j:end] in prefixes:
                    best = j
                    break
                j = text.find(c, j + 1, end)
        return best


class CutKind(enum.Enum):
    """What a pre-tokenizer lets appended text change (module notes, Declarations)."""

    NONE = "none"
    REGEX = "regex"
    SPACE_RUN = "space_run"
    WHITESPACE = "whitespace"


@dataclass(frozen=True)
class Cut:
    """A pre-tokenizer's declaration. ``REGEX`` needs ``split`` (the exact pieces, as
    the encoders cut them), ``last_space_apart`` (GPT-2's pattern) and
    ``prefix_space`` (a space is prepended to the first piece of a text)."""

    kind: CutKind = CutKind.NONE
    split: Callable[[str], list[str]] | None = None
    last_space_apart: bool = False
    prefix_space: bool = False


#: Nothing declared.
NO_CUT: Final = Cut()

#: ``rule(text, first) -> cut`` of plain text (no added token in it).
PlainRule = Callable[[str, bool], int]


def _no_cut(text: str, first: bool) -> int:
    return 0


def _space_rule(hard: str, left: str, text: str, first: bool) -> int:
    return space_cut(text, hard=hard, left=left)


def plain_rule(pipeline: Pipeline) -> PlainRule:
    """The cut rule for ``pipeline``'s plain text, from its stages' declarations."""
    normalizer, pre = pipeline.normalizer, pipeline.pre_tokenizer
    if pre is not None:
        cut = pre.cut_rule()
    elif pipeline.word_cut is not None and normalizer is not None and normalizer.space_local:
        # The word cut at runs of the model's cut character is a space-run cut when the
        # normalizer turns each space into that character (space_local: one at a time).
        cut = Cut(CutKind.SPACE_RUN) if normalizer.normalize_continued(" ") == pipeline.word_cut else NO_CUT
    else:
        cut = NO_CUT
    if cut.kind is CutKind.REGEX:
        if normalizer is not None or cut.split is None:
            return _no_cut
        return partial(_regex_cut, cut.split, cut.last_space_apart, cut.prefix_space)
    if cut.kind is CutKind.NONE or (normalizer is not None and not normalizer.space_local):
        return _no_cut
    if cut.kind is CutKind.WHITESPACE:
        return partial(_space_rule, ASCII_WHITESPACE, _PRINTABLE_ASCII)
    hard, left = _isolated_whitespace(pipeline)
    return partial(_space_rule, " " + hard, left)


def _isolated_whitespace(pipeline: Pipeline) -> tuple[str, str]:
    """``(hard, left)``: the ASCII whitespace characters besides the space that the
    normalizer keeps (``keeps``) and no vocabulary piece holds with another character,
    and the printable ASCII characters that are pieces of their own.

    A model never joins an isolated character to a neighbour (no merge or lattice
    path holds both), so text can be cut before a run of them that follows one of
    ``left`` (a known piece, so no run of unknowns spans the cut either).
    Cost: one pass over the vocabulary, once per tokenizer.
    """
    pieces = list(pipeline.model.spellings().values())
    singles = {p for p in pieces if len(p) == 1}
    left = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) in singles)
    normalizer = pipeline.normalizer
    hard = ""
    for c in "\n\t\r":
        if normalizer is not None and not normalizer.keeps(c):
            continue
        if any(c in piece and len(piece) > 1 for piece in pieces):
            continue
        hard += c
    return hard, left


class Stability:
    """One tokenizer's stability rule, built once from its pipeline (module notes).

    ``cut(text, policy, matcher, first)`` is ``(b, first_after)``: ``text[:b]`` is
    final, and ``first_after`` says whether ``text[b:]`` opens a new section (after a
    token: start rules apply) rather than continuing one. ``policy`` and ``matcher``
    are the call's (``Tokenizer._policy``); ``first``: whether ``text`` itself opens a
    section.

    Cost: a ``SpecialHold`` scan of the last (longest literal) characters, one scan for
    the added tokens' first characters, and the plain rule's tail scan (``regex_cut``,
    ``space_cut``); the rule itself is built on first use (one pass over the vocabulary
    for space-run pipelines).
    """

    __slots__ = ("_holds", "_pipeline", "_plain", "_trie_holds")

    def __init__(self, pipeline: Pipeline) -> None:
        self._pipeline = pipeline
        self._plain: PlainRule | None = None
        self._holds: dict[tuple[frozenset[str], frozenset[str]], SpecialHold] = {}
        self._trie_holds: dict[int, tuple[Trie, SpecialHold]] = {}

    def cut(self, text: str, policy: SpecialPolicy, matcher: Matcher | None, first: bool) -> tuple[int, bool]:
        if has_surrogates(text):
            return self._surrogate_cut(text, policy, matcher, first)
        limit = len(text)
        if matcher is None:
            # No token can match: only a disallowed literal may be completing (raise).
            start = 0
            if policy.disallowed:
                limit = self._hold(policy, matcher).hold(text, limit)
        else:
            start, limit = self._open_section(text, limit, policy, matcher)
            if start < 0:  # an added token's word rule looks behind: no streaming rule
                return 0, first
        cut = 0
        if start < limit:
            plain = self._plain
            if plain is None:
                plain = self._plain = plain_rule(self._pipeline)
            opens = first or start > 0
            cut = plain(text[start:limit], opens)
            normalizer = self._pipeline.normalizer
            if cut > 0 and matcher is not None and matcher.normalized is not None and normalizer is not None:
                normalize = normalizer.normalize if opens else normalizer.normalize_continued
                cut = self._normalized_cut(text[start:limit], cut, opens, normalize, plain, matcher.normalized)
        if cut > 0:
            return start + cut, False
        if start > 0:
            return start, True
        return 0, first

    def _surrogate_cut(
        self, text: str, policy: SpecialPolicy, matcher: Matcher | None, first: bool
    ) -> tuple[int, bool]:
        """``cut`` of text holding surrogates: the cut of what ``encode`` sees (module
        ``surrogates``: lone ones are U+FFFD, pairs joined), mapped back to ``text``'s
        indices, never between a pair's halves. A trailing high surrogate is left out,
        since appended text may complete its pair; the cut of that prefix is a cut of
        ``text`` (the replaced text of ``text + s`` starts with the prefix's)."""
        head = text[: settled_end(text)]
        fixed = replace_surrogates(head)
        b, opens = self.cut(fixed, policy, matcher, first)
        return (index_map(head)[b] if len(fixed) != len(head) else b), opens

    def _hold(self, policy: SpecialPolicy, matcher: Matcher | None) -> SpecialHold:
        """The ``SpecialHold`` of the call's literals matched in the input (the raw
        tokens', and with no normalizer the normalized ones' too) and the disallowed
        literals."""
        # The two sets, not their union: callers pass the same (cached) frozensets, whose
        # hashes are cached and compare by identity.
        key = (policy.allowed, policy.disallowed)
        hold = self._holds.get(key)
        if hold is None:
            literals: list[str] = []
            if matcher is not None:
                if matcher.raw is not None:
                    literals += matcher.raw.literals
                if matcher.normalized is not None and self._pipeline.normalizer is None:
                    literals += matcher.normalized.literals
            if len(self._holds) >= 64:  # callers passing fresh sets each time
                self._holds.clear()
            hold = self._holds[key] = SpecialHold([*literals, *policy.disallowed])
        return hold

    def _open_section(self, text: str, limit: int, policy: SpecialPolicy, matcher: Matcher) -> tuple[int, int]:
        """``(start, limit)``: where the last section of ``text[:limit]`` that appended
        text can still change starts (after the last added token the call matches in
        the input: a raw one, or with no normalizer a normalized one, found in the
        pieces between raw ones), and the end of what is final at most (a literal may
        be completing). ``start`` is -1 when a ``single_word`` token rules streaming
        out."""
        if matcher.has_single_word:
            return -1, limit
        limit = self._hold(policy, matcher).hold(text, limit)
        if matcher.has_lstrip:  # a later token may take the whitespace before it
            limit = min(limit, len(text[:limit].rstrip(WHITESPACE)))
        second = matcher.normalized if self._pipeline.normalizer is None else None
        if not matcher.may_match(text, 0, limit) and (second is None or not second.may_match(text, 0, limit)):
            return 0, limit
        start = 0
        head = text[:limit]
        for a, b, token in matcher.spans(head):
            if token is None:
                if second is None or not second.may_match(head, a, b):
                    continue
                found = [(a + c, a + d, t) for c, d, t in second.spans(head[a:b]) if t is not None]
            else:
                found = [(a, b, token)]
            for c, d, t in found:
                if t.rstrip and d == limit:  # more whitespace may follow
                    return start, c
                start = max(start, d)
        return start, limit

    def _normalized_cut(
        self, section: str, cut: int, opens: bool, normalize: Callable[[str], str], plain: PlainRule, trie: Trie
    ) -> int:
        """The largest cut at most ``cut`` (a cut of the plain rule in ``section``, the
        text after the last raw token) that no normalized added token (``trie``) can
        cross: the normalized text before it ends with no proper prefix of a
        normalized literal, no whitespace a later ``lstrip`` token could take, and no
        match (its ``rstrip`` may grow, and the text after a match is pre-tokenized as
        a piece of its own, which a continuation is not). A cut that fails gives way to
        the plain rule's cut of the text before it (a cut of a prefix is a cut of the
        whole), up to 8 times."""
        hold = self._trie_holds.get(id(trie))
        if hold is None or hold[0] is not trie:
            if len(self._trie_holds) >= 64:
                self._trie_holds.clear()
            hold = self._trie_holds[id(trie)] = (trie, SpecialHold(trie.literals))
        for _ in range(8):
            head = normalize(section[:cut])
            n = len(head)
            final = hold[1].hold(head, n) == n
            if final and trie.has_lstrip and head and head[-1] in WHITESPACE:
                final = False
            if final and trie.may_match(head):
                # A match ending at the cut: its rstrip may take more, and the text after
                # it is a piece of its own (pre-tokenized afresh, not continued).
                final = not any(t is not None and b == n for _, b, t in trie.spans(head))
            if final:
                return cut
            cut = plain(section[: cut - 1], opens) if cut > 1 else 0
            if cut <= 0:
                return 0
        return 0

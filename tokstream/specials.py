"""Special tokens: the allow/disallow policy, resolved by one function every encode path
uses (``resolve_policy``); the matching of allowed literals is ``added_vocabulary``'s.

Semantics are tiktoken's:

- ``allowed_special`` (``"all"`` or a set) names specials whose literal text encodes
  atomically to the special's id;
- ``disallowed_special`` (default ``"all"``, meaning every special not allowed) names
  specials whose literal text in the input is an error;
- a special that is neither is encoded as plain text, and so is every special in
  ``encode_ordinary``.

Where two specials could match at one offset, the longer one wins (tiktoken's Rust
alternation order is unspecified there; OpenAI's specials never overlap).
"""

from __future__ import annotations

import functools
from collections.abc import Collection
from typing import Literal

import regex

from .errors import SpecialTokenError

__all__ = ["SpecialPolicy", "SpecialSet", "resolve_policy"]

#: What callers pass for ``allowed_special`` / ``disallowed_special``.
SpecialSet = Literal["all"] | Collection[str]


class SpecialPolicy:
    """The resolved policy for one call: which specials split the text, which raise."""

    __slots__ = ("_first", "allowed", "disallowed")

    def __init__(self, allowed: frozenset[str], disallowed: frozenset[str]) -> None:
        self.allowed = allowed
        self.disallowed = disallowed
        # Text without a disallowed literal's first character holds none (one C scan).
        self._first = _starts(disallowed).search if disallowed else None

    def check(self, text: str, offset: int = 0) -> None:
        """Raise ``SpecialTokenError`` for the first disallowed special in ``text``;
        ``offset`` is where ``text`` starts in a longer stream (for the message)."""
        first = self._first
        if first is not None and first(text) is not None:
            m = _matcher(self.disallowed).search(text)
            if m is not None:
                raise SpecialTokenError(m.group(), offset + m.start())


def resolve_policy(
    specials: Collection[str],
    allowed_special: SpecialSet,
    disallowed_special: SpecialSet,
) -> SpecialPolicy:
    """Resolve the two arguments against the tokenizer's specials, as tiktoken does."""
    known = frozenset(specials)
    allowed = known if allowed_special == "all" else _as_set(allowed_special, "allowed_special")
    if disallowed_special == "all":
        disallowed = known - allowed
    else:
        disallowed = _as_set(disallowed_special, "disallowed_special")
    # Only registered specials encode as a token. Any string named in disallowed_special
    # is checked, registered or not, as tiktoken checks it.
    return SpecialPolicy(allowed & known, disallowed)


def _as_set(value: object, what: str) -> frozenset[str]:
    if isinstance(value, str):
        raise TypeError(f"{what} must be 'all' or a collection of strings, got {value!r}")
    try:
        return frozenset(value)  # type: ignore[call-overload,no-any-return]
    except TypeError as e:
        raise TypeError(f"{what} must be 'all' or a collection of strings") from e


@functools.lru_cache(maxsize=64)
def _matcher(specials: frozenset[str]) -> regex.Pattern[str]:
    alternatives = sorted(specials, key=lambda s: (-len(s), s))
    return regex.compile("|".join(regex.escape(s) for s in alternatives))


@functools.lru_cache(maxsize=64)
def _starts(specials: frozenset[str]) -> regex.Pattern[str]:
    """A class of the specials' first characters: text without any of them holds no
    special, which one C scan shows (Llama 3's 256 literals all start with "<")."""
    firsts = sorted({s[0] for s in specials if s})
    return regex.compile("[" + "".join(map(regex.escape, firsts)) + "]" if firsts else "(?!)")

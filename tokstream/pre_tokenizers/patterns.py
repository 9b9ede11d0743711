r"""tiktoken's pre-tokenizer patterns by name, and the facts about them the fast paths use.

The patterns are tiktoken's exact ones (``gpt2``/``r50k_base``, ``p50k_base``,
``cl100k_base``, ``o200k_base``) and Llama 3's, plus GPT-2's as ``tokenizers``'
``ByteLevel`` writes it. The ``regex`` module supports the possessive quantifiers and
``\\p{..}`` classes of tiktoken's Rust ``fancy-regex``, and its ``\\s`` is Unicode
``White_Space`` exactly as Rust's is, so the pieces are the same (by Unicode 16.0
classes: ``unicode16``).

The space cut
-------------
For the named patterns, a space that follows a non-space character is always a piece
boundary, and the pieces on either side of it do not depend on each other. Proof
sketch, for every named pattern: no alternative matches a non-space character followed
by a space (a space is only ever the optional first character of a piece, or part of an
all-whitespace piece); the only lookahead is ``(?!\\S)`` after whitespace and ``$`` after
whitespace, neither of which can end on the non-space character; and no alternative
looks behind. So the text can be cut at those spaces (``SAFE_SPACE``) and each part
split on its own. ``SPACE_SAFE_PATTERNS`` lists the patterns this is proven for; user patterns
do not get it unless the caller vouches for them (``RegexSplit(space_safe=True)``).

ASCII translations
------------------
For ASCII input ``\p{L}`` is ``[A-Za-z]``, ``\p{N}`` is ``[0-9]``, ``\s`` is
``[\t\n\v\f\r ]``, ``\p{M}``/``\p{Lt}``/``\p{Lm}``/``\p{Lo}`` are empty and ``$`` is
``\Z``, so ``ASCII_EQUIVALENT``, a stdlib ``re`` translation of each named pattern
under ``re.ASCII`` (possessive quantifiers need Python >= 3.11), is exact there.

Not here: matching (``regex_split``), the Unicode 16.0 corrections (``unicode16``) and
the stability rules derived from these patterns (``tokstream._stability.regex_cut``).
"""

from __future__ import annotations

import re
from typing import Final

import regex

_GPT2: Final = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
_CL100K: Final = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_O200K: Final = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_LLAMA3: Final = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

#: Pre-tokenizer patterns by name. ``r50k_base``, ``p50k_base`` and ``gpt2`` share one.
PATTERNS: Final[dict[str, str]] = {
    "gpt2": _GPT2,
    "r50k_base": _GPT2,
    "p50k_base": _GPT2,
    "cl100k_base": _CL100K,
    "o200k_base": _O200K,
    "llama3": _LLAMA3,
}

# The GPT-2 pattern as tokenizers' ByteLevel writes it (no possessive quantifiers).
BYTE_LEVEL_PATTERN: Final = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

# Patterns for which the space cut described in the module docstring is proven safe.
# Each also matches every character, so findall drops nothing (tokenizers' Split keeps
# unmatched text as pieces; for these there is none).
SPACE_SAFE_PATTERNS: Final = frozenset({_GPT2, _CL100K, _O200K, _LLAMA3, BYTE_LEVEL_PATTERN})


def splits_last_space_apart(pattern: str) -> bool:
    """Whether ``pattern`` is GPT-2's (``\\s+(?!\\S)|\\s``: a whitespace run before a
    word is one piece and its last character; ``_stability.regex_cut``)."""
    return pattern in (_GPT2, BYTE_LEVEL_PATTERN)


def known_pattern(pattern: str) -> bool:
    """Whether ``pattern`` is one of the named patterns whose stability rule
    ``_stability.regex_cut`` was derived for (and tested on)."""
    return pattern in SPACE_SAFE_PATTERNS


_A_L, _A_N = "A-Za-z", "0-9"
# Exact translations of the named patterns for ASCII-only input (see module notes).
ASCII_EQUIVALENT: Final[dict[str, str]] = {
    _GPT2: rf"""'(?:[sdmt]|ll|ve|re)| ?[{_A_L}]++| ?[{_A_N}]++| ?[^\s{_A_L}{_A_N}]++|\s++\Z|\s+(?!\S)|\s""",
    _CL100K: (
        rf"""'(?i:[sdmt]|ll|ve|re)|[^\r\n{_A_L}{_A_N}]?+[{_A_L}]++|[{_A_N}]{{1,3}}+"""
        rf"""| ?[^\s{_A_L}{_A_N}]++[\r\n]*+|\s++\Z|\s*[\r\n]|\s+(?!\S)|\s"""
    ),
    _O200K: "|".join(
        [
            rf"""[^\r\n{_A_L}{_A_N}]?[A-Z]*[a-z]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            rf"""[^\r\n{_A_L}{_A_N}]?[A-Z]+[a-z]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            rf"""[{_A_N}]{{1,3}}""",
            rf""" ?[^\s{_A_L}{_A_N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
    _LLAMA3: (
        rf"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n{_A_L}{_A_N}]?[{_A_L}]+|[{_A_N}]{{1,3}}"""
        rf"""| ?[^\s{_A_L}{_A_N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
    ),
}


# A space whose previous character is not whitespace. The pattern starts with a literal
# so `re` jumps between spaces at memchr speed; stdlib `\S` (not str.isspace) is a subset
# of "not White_Space", so the cut is only ever more conservative than the proof needs.
SAFE_SPACE: Final = re.compile(r" (?<=\S )")


def oniguruma_spelling(pattern: str) -> str:
    r"""``pattern`` as ``tokenizers``' Oniguruma reads it the same way.

    In Oniguruma's Ruby syntax ``{n,m}+`` is ``{n,m}`` repeated, not possessive (cl100k's
    ``\p{N}{1,3}+``). In the named patterns nothing follows that quantifier inside its
    alternative, so the greedy ``{n,m}`` matches the same.
    """
    return regex.sub(r"(\{\d+(?:,\d*)?\})\+", r"\1", pattern)


def resolve_pattern(pattern: str) -> str:
    """Return the regex for ``pattern``, which is a name from ``PATTERNS`` or a regex."""
    return PATTERNS.get(pattern, pattern)


#: A named pattern (or tokenizers' GPT-2 spelling) from its Oniguruma spelling.
BY_ONIGURUMA: Final = {oniguruma_spelling(p): p for p in SPACE_SAFE_PATTERNS} | {p: p for p in SPACE_SAFE_PATTERNS}

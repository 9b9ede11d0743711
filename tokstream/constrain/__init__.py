"""Constrained generation: prefix, choice, regex and grammar constraints (``grammar``),
JSON Schema constraints on the grammar engine (``json_schema``),
token healing and logits masks (``masks``), on the tokenizer's public vocabulary.

``tok.vocab.index`` (token bytes sorted and in a trie, ``tokstream.vocab``) is built
once per tokenizer; the constraints are small immutable-state values on top of it;
``masks.TokenMasker`` turns what a constraint allows into bool masks, xgrammar-layout
int32 bitmasks or ``-inf`` logits.
"""

from __future__ import annotations

from .constraint import Allowed, Constraint, choice_constraint, prefix_constraint
from .grammar.constraint import GrammarConstraint, grammar_constraint, regex_constraint
from .healing import Healing, heal
from .json_schema import json_schema_constraint
from .masks import TokenMasker
from .speculative import verify_draft
from .unreachable import token_witness, unreachable_tokens

__all__ = [
    "Allowed",
    "Constraint",
    "GrammarConstraint",
    "Healing",
    "TokenMasker",
    "choice_constraint",
    "grammar_constraint",
    "heal",
    "json_schema_constraint",
    "prefix_constraint",
    "regex_constraint",
    "token_witness",
    "unreachable_tokens",
    "verify_draft",
]

"""JSON Schema constraints on the grammar engine, the folder following the pipeline:

- ``schema``: a schema document read into flat records (``Norm``), local ``$ref``
  resolution, the ``allOf`` merge;
- ``numbers``: numeric ranges and ``multipleOf`` as exact regex trees over JSON
  number texts;
- ``strings``: ``pattern`` (ECMA-262, search semantics) and ``format`` as trees over
  a string's characters;
- ``spelling``: a string value's JSON spellings (raw or escaped characters);
- ``compiler``: records -> rules and terminals (one DFA when nothing recurses);
- ``constraint``: ``json_schema_constraint``, on ``grammar.constraint``.
"""

from __future__ import annotations

from .constraint import MAX_WHITESPACE, json_schema_constraint

__all__ = ["MAX_WHITESPACE", "json_schema_constraint"]

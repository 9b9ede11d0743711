"""The grammar engine: regexes and Lark-style context-free grammars as exact token
constraints.

The folder follows the pipeline, text to masks:

- ``nodes``: the regular-expression tree every layer shares (sets of code points,
  concatenation, alternation, bounded repetition);
- ``charset``: code-point range sets, and Python ``re``'s classes (``\\d \\w \\s``);
- ``regex``: the regular subset of Python ``re`` syntax -> a ``nodes`` tree;
- ``lark``: Lark-style grammar text -> a ``Cfg`` (BNF rules over named terminals);
- ``automaton``: a terminal's tree -> a byte-level DFA over UTF-8, pruned to the
  states from which acceptance is reachable;
- ``earley``: the parser (Earley items whose terminals are scanned byte by byte by
  those DFAs);
- ``constraint``: ``regex_constraint`` / ``grammar_constraint``, the vocabulary-wide
  token walks and their per-state masks.
"""

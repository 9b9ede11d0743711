"""What the vocabulary models (``wordpiece.py``, ``unigram.py``) share: the prefix table
their matching loops walk.

Not here: the models' own checks and loops (each stays readable in its module), their
``from_json`` field helpers (``tokstream.json_fields``, shared by every component), and
BPE, which looks up whole pieces and merge ranks instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

#: Prefix table value: a proper prefix of some entry, not an entry itself.
PREFIX_ONLY: Final = -1
#: Prefix table default (``table.get(text, ABSENT)``): not even a prefix; stop extending.
ABSENT: Final = -2


def prefix_table(entries: Mapping[str, int]) -> dict[str, int]:
    """Map each entry to its id and each proper prefix of an entry to ``PREFIX_ONLY``.

    A matching loop extends the text at a position one character at a time while the
    lookup is not ``ABSENT``, and keeps the ids it meets. The empty entry is left out: a
    lookup is always at least one character long (and ``tokenizers``' trie never yields
    an empty piece).

    >>> prefix_table({"ab": 0, "abc": 1, "b": 2})
    {'ab': 0, 'abc': 1, 'b': 2, 'a': -1}

    Cost: O(B) time and memory for B the total length of the entries (every proper
    prefix once; 2,595 keys for botchan's 1,000 unigram pieces).
    """
    table: dict[str, int] = {key: token_id for key, token_id in entries.items() if key}
    for key in entries:
        # Longest prefix first: once a prefix-only entry is met, all shorter prefixes
        # were added with it, so the walk can stop there.
        for end in range(len(key) - 1, 0, -1):
            prefix = key[:end]
            known = table.get(prefix)
            if known is None:
                table[prefix] = PREFIX_ONLY
            elif known == PREFIX_ONLY:
                break
    return table

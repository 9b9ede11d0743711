"""A small prefix index: chained block keys -> payloads, LRU-bounded by block count.

For clients and routers that keep their own view of what a server has cached (which
replica holds a prompt's KV blocks, which request id wrote them). It stores the
``block_keys`` of ``CachePlan``s, one entry per block, and answers "how many leading
blocks of this plan are stored, and what payload sits at the deepest of them"; the
shape of vLLM's block-hash table and of SGLang's radix tree over blocks.

Keys are the planner's chained hex digests: block ``i``'s key commits to blocks
``0..i``, the tokenizer's fingerprint and the salt. So a hit is a prefix match by
construction, and plans from another tokenizer or salt never match (tenant
isolation needs no code here). A key is trusted only under the parent it was stored
with, so a hand-built plan cannot splice chains.

Eviction is LRU by blocks, leaves first. A lookup walks a chain from its first block,
so a block whose parent was evicted could never match again (an orphan). Every
insert and match therefore touches its chain from the deepest block to the first:
after it, each block is more recently used than all its descendants, the
least-recently-used block is always a leaf, and ``popitem(last=False)`` on the
``OrderedDict`` evicts exactly the leaf LRU. (Tracking child counts and searching for
the oldest leaf was the alternative; the ordering makes it a plain pop.) Child
counts are still kept, for ``remove``.

Plans of different ``block_size`` may share an index but never match each other's
keys (a key commits to the block size); ``n_blocks`` counts in the plan's own blocks.
Not handled: thread safety (guard an index shared between threads with a lock) and
persistence.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

from .planner import CachePlan

__all__ = ["PrefixIndex"]

P = TypeVar("P")


class _Block(Generic[P]):
    """One stored block: its payload, its parent's key (``None`` for a first block)
    and how many stored blocks name it as their parent."""

    __slots__ = ("children", "parent", "payload")

    def __init__(self, payload: P, parent: str | None) -> None:
        self.payload = payload
        self.parent = parent
        self.children = 0


class PrefixIndex(Generic[P]):
    """Chained block keys -> payloads, with LRU eviction by block count (module notes).

    ``insert(plan, payload)`` stores every block key of ``plan`` and sets ``payload``
    on each of them; on a block shared with an earlier plan the newest payload wins
    (the last writer of a shared prefix is the one a router sends the next request
    to). ``longest_match(plan)`` returns ``(n_blocks, payload)``: how many leading
    keys of ``plan`` are stored and the payload of the deepest of them, or
    ``(0, None)``. Both count as a use of the blocks they touch. When more than
    ``max_blocks`` blocks are stored, the least recently used leaf goes first; a
    block is never evicted before its descendants.

    >>> import tokstream
    >>> from tokstream.cache import PrefixCachePlanner
    >>> planner = PrefixCachePlanner(tokstream.load("cl100k_base"), block_size=4)
    >>> index = PrefixIndex[str](max_blocks=1000)
    >>> index.insert(planner.plan("The quick brown fox jumps over the lazy dog. It'"), "replica-1")
    2
    >>> index.longest_match(planner.plan("The quick brown fox jumps over the lazy dog. It's late."))
    (2, 'replica-1')
    >>> index.longest_match(planner.plan("The slow brown fox"))
    (0, None)

    **Cost.** ``insert``, ``longest_match`` and ``remove`` are O(k) dict operations
    for the k blocks of the plan (``insert`` looks at the first ``max_blocks`` only:
    deeper blocks would be evicted at once); eviction is O(1) per evicted block.
    Memory is one ``OrderedDict`` entry, one slotted node and the 64-character key
    string per stored block: about 260 bytes per block on CPython 3.11 (~150 for the
    entry and node, ~113 for the key), plus the payload, shared between the blocks of
    one ``insert``. ``bench/cache.py`` times ``plan``
    itself, which dominates: one encode plus one sha256 per block.
    """

    def __init__(self, *, max_blocks: int) -> None:
        if isinstance(max_blocks, bool) or not isinstance(max_blocks, int):
            raise TypeError(f"max_blocks must be an int, not {type(max_blocks).__name__}")
        if max_blocks < 1:
            raise ValueError(f"max_blocks must be at least 1, got {max_blocks}")
        self._max_blocks = max_blocks
        # Least recently used first. Invariant: every block comes before its parent.
        self._blocks: OrderedDict[str, _Block[P]] = OrderedDict()

    @property
    def max_blocks(self) -> int:
        """The most blocks stored at once."""
        return self._max_blocks

    def __len__(self) -> int:
        """The number of blocks stored."""
        return len(self._blocks)

    def __contains__(self, key: object) -> bool:
        """Whether the block key ``key`` is stored (no use recorded)."""
        return key in self._blocks

    def insert(self, plan: CachePlan, payload: P) -> int:
        """Store ``plan``'s block keys with ``payload`` on each; return how many
        blocks were new.

        Blocks already stored get ``payload`` too (newest wins). A plan with more
        than ``max_blocks`` blocks keeps its first ``max_blocks``. Then the least
        recently used leaves are evicted down to ``max_blocks``. A key stored under
        another parent, or repeated in the plan, raises ``ValueError``; the planner's
        sha256 chains never do either.
        """
        keys = _keys(plan)[: self._max_blocks]
        blocks = self._blocks
        # Validate everything before changing anything: a bad plan leaves no trace.
        if len(set(keys)) != len(keys):
            raise ValueError("the plan repeats a block key; block keys must come from PrefixCachePlanner")
        parent: str | None = None
        for key in keys:
            block = blocks.get(key)
            if block is not None and block.parent != parent:
                raise ValueError(
                    f"block key {key[:16]}... is stored under another parent; block keys must come from PrefixCachePlanner"
                )
            parent = key
        new = 0
        parent = None
        for key in keys:
            block = blocks.get(key)
            if block is None:
                blocks[key] = _Block(payload, parent)
                if parent is not None:
                    blocks[parent].children += 1
                new += 1
            else:
                block.payload = payload
            parent = key
        self._touch(keys)
        while len(blocks) > self._max_blocks:
            # The LRU block is a leaf (invariant), so no stored block loses its parent.
            _, evicted = blocks.popitem(last=False)
            if evicted.parent is not None:
                blocks[evicted.parent].children -= 1
        return new

    def longest_match(self, plan: CachePlan) -> tuple[int, P | None]:
        """``(n, payload)``: ``n`` leading block keys of ``plan`` are stored, and
        ``payload`` is the deepest one's; ``(0, None)`` when the first is not. The
        matched blocks count as used."""
        keys = _keys(plan)
        n = self._match(keys)
        if n == 0:
            return 0, None
        self._touch(keys[:n])
        return n, self._blocks[keys[n - 1]].payload

    def remove(self, plan: CachePlan) -> int:
        """Forget the blocks of ``plan`` that no other stored chain passes through:
        from its deepest stored block towards the first, while the block has no
        stored children. Returns how many were removed; blocks shared with longer
        chains stay (with whatever payload they hold)."""
        keys = _keys(plan)
        blocks = self._blocks
        removed = 0
        for key in reversed(keys[: self._match(keys)]):
            block = blocks[key]
            if block.children:
                break
            del blocks[key]
            if block.parent is not None:
                blocks[block.parent].children -= 1
            removed += 1
        return removed

    def clear(self) -> None:
        """Forget every block."""
        self._blocks.clear()

    def _match(self, keys: list[str]) -> int:
        """How many leading ``keys`` are stored, each under the key before it."""
        blocks = self._blocks
        parent: str | None = None
        n = 0
        for key in keys:
            block = blocks.get(key)
            if block is None or block.parent != parent:
                break
            parent = key
            n += 1
        return n

    def _touch(self, chain: list[str]) -> None:
        # Deepest first, so each block ends up more recent than its children: the
        # LRU order then always puts leaves before their parents.
        move = self._blocks.move_to_end
        for key in reversed(chain):
            move(key)

    def __repr__(self) -> str:
        return f"PrefixIndex(max_blocks={self._max_blocks}, blocks={len(self._blocks)})"


def _keys(plan: object) -> list[str]:
    if not isinstance(plan, CachePlan):
        raise TypeError(f"expected a CachePlan (from PrefixCachePlanner.plan), not {type(plan).__name__}")
    return plan.block_keys

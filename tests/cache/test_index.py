"""PrefixIndex: longest match over chained block keys, payload of the deepest block,
LRU eviction by blocks that never orphans a block, isolation by salt and tokenizer,
bad input; checked against a slow reference model written here."""

from __future__ import annotations

import doctest
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import hyp_settings

import tokstream
from tokstream.cache import CachePlan, PrefixCachePlanner
from tokstream.cache import index as index_module
from tokstream.cache.index import PrefixIndex

CL100K = tokstream.load("cl100k_base")
# Small blocks over a tiny id alphabet: many shared prefixes and divergent branches.
IDS_PLANNER = PrefixCachePlanner(CL100K, block_size=2)


def ids_plan(ids: list[int]) -> CachePlan:
    return IDS_PLANNER.plan_ids(ids)


class ReferenceIndex:
    """The rules, spelled out slowly: key -> [payload, last_use, parent]. Eviction
    picks the least recently used block among those no stored block names as parent
    (a leaf), so it never orphans anything by construction; the tests check the real
    index makes the same choices with its plain LRU pop."""

    def __init__(self, max_blocks: int) -> None:
        self.max_blocks = max_blocks
        self.blocks: dict[str, list[Any]] = {}
        self.clock = 0

    def _children(self, key: str) -> list[str]:
        return [k for k, (_, _, parent) in self.blocks.items() if parent == key]

    def _touch(self, chain: list[str]) -> None:
        for key in reversed(chain):  # the first block ends up the most recent
            self.clock += 1
            self.blocks[key][1] = self.clock

    def _match(self, keys: list[str]) -> int:
        n, parent = 0, None
        for key in keys:
            if key not in self.blocks or self.blocks[key][2] != parent:
                break
            n, parent = n + 1, key
        return n

    def insert(self, keys: list[str], payload: object) -> int:
        keys = keys[: self.max_blocks]
        new, parent = 0, None
        for key in keys:
            if key not in self.blocks:
                new += 1
                self.blocks[key] = [payload, 0, parent]
            self.blocks[key][0] = payload
            parent = key
        self._touch(keys)
        while len(self.blocks) > self.max_blocks:
            leaves = [k for k in self.blocks if not self._children(k)]
            victim = min(leaves, key=lambda k: self.blocks[k][1])
            # The global LRU block is that leaf: plain LRU never has to skip a parent.
            assert victim == min(self.blocks, key=lambda k: self.blocks[k][1])
            del self.blocks[victim]
        return new

    def longest_match(self, keys: list[str]) -> tuple[int, object]:
        n = self._match(keys)
        if not n:
            return 0, None
        self._touch(keys[:n])
        return n, self.blocks[keys[n - 1]][0]

    def remove(self, keys: list[str]) -> int:
        removed = 0
        for key in reversed(keys[: self._match(keys)]):
            if self._children(key):
                break
            del self.blocks[key]
            removed += 1
        return removed


def assert_same(index: PrefixIndex[Any], ref: ReferenceIndex) -> None:
    """Same blocks, payloads, parents and LRU order; no orphan; children counted right."""
    blocks = index._blocks
    assert set(blocks) == set(ref.blocks)
    assert len(index) == len(ref.blocks) <= index.max_blocks
    for key, block in blocks.items():
        payload, _, parent = ref.blocks[key]
        assert block.payload == payload and block.parent == parent
        assert parent is None or parent in blocks, "an orphan: unreachable by any lookup"
        assert block.children == len(ref._children(key))
    assert list(blocks) == sorted(ref.blocks, key=lambda k: ref.blocks[k][1])


# -- matching ----------------------------------------------------------------------


def test_longest_match_shared_prefix_and_divergent_branches() -> None:
    planner = PrefixCachePlanner(CL100K, block_size=4)
    base = "The quick brown fox jumps over the lazy dog, and then it"
    a = planner.plan(base + " runs far away into the dark forest behind the hill.")
    b = planner.plan(base + " sleeps under the old oak tree until the sun goes down.")
    shared = next(i for i, (x, y) in enumerate(zip(a.block_keys, b.block_keys)) if x != y)
    assert 0 < shared < min(len(a.block_keys), len(b.block_keys))

    index: PrefixIndex[str] = PrefixIndex(max_blocks=1000)
    assert index.longest_match(a) == (0, None)
    assert index.insert(a, "A") == len(a.block_keys)
    assert index.insert(b, "B") == len(b.block_keys) - shared  # the shared blocks are stored once
    assert len(index) == len(a.block_keys) + len(b.block_keys) - shared

    # A longer prompt down branch A: all of A's blocks, A's payload.
    longer_a = planner.plan(base + " runs far away into the dark forest behind the hill. Then it rested.")
    assert longer_a.block_keys[: len(a.block_keys)] == a.block_keys
    assert index.longest_match(longer_a) == (len(a.block_keys), "A")
    # A third branch stops at the shared blocks, whose payload is the newest insert's.
    other = planner.plan(base + " swims across the wide river to the other bank at night.")
    n = next(i for i, (x, y) in enumerate(zip(other.block_keys, a.block_keys)) if x != y)
    assert index.longest_match(other) == (n, "B")
    assert index.longest_match(planner.plan("A different start entirely, nothing shared here.")) == (0, None)


def test_payload_is_the_deepest_matched_blocks() -> None:
    long_plan = ids_plan([1, 2, 3, 4, 5, 6, 7, 8])
    short_plan = ids_plan([1, 2, 3, 4])
    index: PrefixIndex[str] = PrefixIndex(max_blocks=100)
    index.insert(long_plan, "long")
    index.insert(short_plan, "short")  # newest wins on the two shared blocks
    assert index.longest_match(long_plan) == (4, "long")
    assert index.longest_match(short_plan) == (2, "short")
    assert index.longest_match(ids_plan([1, 2, 3, 4, 5, 6, 0, 0])) == (3, "long")
    assert index.longest_match(ids_plan([1, 2, 0, 0])) == (1, "short")
    assert index.longest_match(ids_plan([1])) == (0, None)  # no full block: nothing to match


def test_stable_tail_is_never_keyed_so_an_extension_matches_every_stored_block() -> None:
    # "it'" may become "it's": the planner leaves the unstable tail out, so every
    # stored key is a prefix of the longer prompt's keys.
    planner = PrefixCachePlanner(CL100K, block_size=2)
    index: PrefixIndex[int] = PrefixIndex(max_blocks=1000)
    text = "Sure, here is the summary you asked for. I think it'"
    plan = planner.plan(text)
    index.insert(plan, 1)
    assert index.longest_match(planner.plan(text + "s done.")) == (len(plan.block_keys), 1)


# -- eviction ----------------------------------------------------------------------


def test_eviction_is_lru_by_blocks_and_leaves_first() -> None:
    index: PrefixIndex[str] = PrefixIndex(max_blocks=5)
    a = ids_plan([1, 1, 2, 2, 3, 3])  # blocks a0 a1 a2
    b = ids_plan([1, 1, 2, 2, 4, 4])  # shares a0 a1, adds b2
    c = ids_plan([5, 5, 6, 6])  # c0 c1
    index.insert(a, "a")
    index.insert(b, "b")
    assert len(index) == 4
    assert index.longest_match(a) == (3, "a")  # a2 still holds "a"; chain a is now the most recent
    index.insert(c, "c")  # 6 blocks > 5: the LRU leaf is b2, not a0 (older, but a parent)
    assert len(index) == 5
    assert b.block_keys[2] not in index
    assert all(k in index for k in a.block_keys + c.block_keys)
    assert index.longest_match(b) == (2, "b")  # a0 a1 carry b's payload (newest insert)
    # LRU first: a2 (its parents were just used through b), then c1, then c0.
    index.insert(ids_plan([7, 7]), "d")
    assert a.block_keys[2] not in index and index.longest_match(a) == (2, "b")
    index.insert(ids_plan([8, 8]), "e")
    assert c.block_keys[1] not in index and c.block_keys[0] in index  # the leaf before its parent
    index.insert(ids_plan([9, 9]), "f")
    assert c.block_keys[0] not in index
    assert a.block_keys[0] in index and a.block_keys[1] in index and len(index) == 5


def test_a_plan_longer_than_the_index_keeps_its_first_blocks() -> None:
    index: PrefixIndex[str] = PrefixIndex(max_blocks=3)
    index.insert(ids_plan([9, 9]), "old")
    plan = ids_plan(list(range(20)))  # 10 blocks
    assert index.insert(plan, "p") == 3
    assert [k in index for k in plan.block_keys] == [True] * 3 + [False] * 7
    assert index.longest_match(plan) == (3, "p")
    assert len(index) == 3


def test_max_blocks_one() -> None:
    index: PrefixIndex[str] = PrefixIndex(max_blocks=1)
    plan = ids_plan([1, 2, 3, 4])
    index.insert(plan, "x")
    assert len(index) == 1 and index.longest_match(plan) == (1, "x")
    index.insert(ids_plan([5, 6]), "y")
    assert index.longest_match(plan) == (0, None)


def test_random_operations_never_orphan_a_block() -> None:
    """Many random inserts, lookups and removals over a tiny alphabet with a small
    ``max_blocks``: after every step the index equals the reference model, and every
    stored block's parent is stored (checked by brute force)."""
    rng = random.Random(20240611)
    for max_blocks in (1, 2, 3, 7, 16):
        index: PrefixIndex[int] = PrefixIndex(max_blocks=max_blocks)
        ref = ReferenceIndex(max_blocks)
        for step in range(600):
            plan = ids_plan([rng.randrange(3) for _ in range(2 * rng.randrange(1, 7))])
            op = rng.random()
            if op < 0.5:
                assert index.insert(plan, step) == ref.insert(plan.block_keys, step)
            elif op < 0.9:
                assert index.longest_match(plan) == ref.longest_match(plan.block_keys)
            else:
                assert index.remove(plan) == ref.remove(plan.block_keys)
            assert_same(index, ref)


@hyp_settings(200)
@given(
    max_blocks=st.integers(1, 10),
    ops=st.lists(
        st.tuples(
            st.sampled_from(["insert", "match", "remove"]),
            st.lists(st.integers(0, 2), max_size=14),
            st.integers(0, 5),
        ),
        max_size=40,
    ),
)
def test_matches_the_reference_model(max_blocks: int, ops: list[tuple[str, list[int], int]]) -> None:
    index: PrefixIndex[int] = PrefixIndex(max_blocks=max_blocks)
    ref = ReferenceIndex(max_blocks)
    for op, ids, payload in ops:
        plan = ids_plan(ids)
        if op == "insert":
            assert index.insert(plan, payload) == ref.insert(plan.block_keys, payload)
        elif op == "match":
            assert index.longest_match(plan) == ref.longest_match(plan.block_keys)
        else:
            assert index.remove(plan) == ref.remove(plan.block_keys)
        assert_same(index, ref)


# -- remove, clear -----------------------------------------------------------------


def test_remove_keeps_blocks_other_chains_pass_through() -> None:
    index: PrefixIndex[str] = PrefixIndex(max_blocks=100)
    a = ids_plan([1, 1, 2, 2, 3, 3])
    b = ids_plan([1, 1, 2, 2, 4, 4])
    index.insert(a, "a")
    index.insert(b, "b")
    assert index.remove(ids_plan([1, 1, 2, 2])) == 0  # a prefix of stored chains
    assert index.remove(a) == 1  # only a2 is a's alone
    assert index.longest_match(a) == (2, "b")
    assert index.remove(b) == 3
    assert len(index) == 0
    assert index.remove(b) == 0
    index.insert(a, "a")
    index.clear()
    assert len(index) == 0 and index.longest_match(a) == (0, None)


# -- isolation ---------------------------------------------------------------------


def test_salts_isolate_tenants() -> None:
    text = "<|endoftext|>You are a helpful assistant. Answer briefly and cite your sources.\n"
    tenant_a = PrefixCachePlanner(CL100K, block_size=4, salt=b"tenant-a")
    tenant_b = PrefixCachePlanner(CL100K, block_size=4, salt=b"tenant-b")
    plan_a = tenant_a.plan(text, allowed_special="all")
    plan_b = tenant_b.plan(text, allowed_special="all")
    assert plan_a.ids == plan_b.ids and plan_a.block_keys
    assert not set(plan_a.block_keys) & set(plan_b.block_keys)
    index: PrefixIndex[str] = PrefixIndex(max_blocks=1000)
    index.insert(plan_a, "a")
    assert index.longest_match(plan_b) == (0, None)
    assert index.longest_match(tenant_a.plan(text + "Hi", allowed_special="all"))[1] == "a"
    index.insert(plan_b, "b")  # both stored side by side, neither overwrites the other
    assert index.longest_match(plan_a) == (len(plan_a.block_keys), "a")
    assert index.longest_match(plan_b) == (len(plan_b.block_keys), "b")


def test_tokenizers_are_isolated_even_with_equal_ids() -> None:
    o200k = tokstream.load("o200k_base")
    ids = list(range(1000, 1032))  # valid in both vocabularies
    ours = PrefixCachePlanner(CL100K, block_size=4).plan_ids(ids)
    theirs = PrefixCachePlanner(o200k, block_size=4).plan_ids(ids)
    index: PrefixIndex[str] = PrefixIndex(max_blocks=1000)
    index.insert(ours, "cl100k")
    assert index.longest_match(theirs) == (0, None)
    text = "The same text under another tokenizer never shares a key."
    index.insert(PrefixCachePlanner(CL100K, block_size=4).plan(text), "cl100k")
    assert index.longest_match(PrefixCachePlanner(o200k, block_size=4).plan(text)) == (0, None)


def test_block_sizes_do_not_mix() -> None:
    ids = list(range(64))
    index: PrefixIndex[str] = PrefixIndex(max_blocks=1000)
    index.insert(PrefixCachePlanner(CL100K, block_size=4).plan_ids(ids), "4")
    assert index.longest_match(PrefixCachePlanner(CL100K, block_size=8).plan_ids(ids)) == (0, None)


# -- bad input ---------------------------------------------------------------------


@pytest.mark.parametrize("bad", [0, -1])
def test_max_blocks_below_one(bad: int) -> None:
    with pytest.raises(ValueError, match="max_blocks must be at least 1"):
        PrefixIndex(max_blocks=bad)


@pytest.mark.parametrize("bad", [1.5, True, "3", None])
def test_max_blocks_not_an_int(bad: object) -> None:
    with pytest.raises(TypeError, match="max_blocks must be an int"):
        PrefixIndex(max_blocks=bad)  # type: ignore[arg-type]


def test_max_blocks_is_keyword_only() -> None:
    with pytest.raises(TypeError):
        PrefixIndex(10)  # type: ignore[call-arg]


@pytest.mark.parametrize("bad", ["some text", [1, 2, 3], ["a" * 64], None])
def test_not_a_plan(bad: object) -> None:
    index: PrefixIndex[str] = PrefixIndex(max_blocks=10)
    for call in (lambda: index.insert(bad, "x"), lambda: index.longest_match(bad), lambda: index.remove(bad)):  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="expected a CachePlan"):
            call()
    assert len(index) == 0


def test_hand_built_chains_are_rejected_without_a_trace() -> None:
    index: PrefixIndex[str] = PrefixIndex(max_blocks=10)
    good = ids_plan([1, 1, 2, 2])
    index.insert(good, "good")
    k0, k1 = good.block_keys
    with pytest.raises(ValueError, match="repeats a block key"):
        index.insert(CachePlan([], 0, [k0, k0], 2), "bad")
    with pytest.raises(ValueError, match="stored under another parent"):
        index.insert(CachePlan([], 0, ["x" * 64, k1], 2), "bad")  # splices k1 under another parent
    assert len(index) == 2 and "x" * 64 not in index
    assert index.longest_match(good) == (2, "good")
    # A lookup trusts a key only under the parent it was stored with.
    assert index.longest_match(CachePlan([], 0, [k1], 2)) == (0, None)


def test_repr_and_docstring_examples() -> None:
    assert repr(PrefixIndex(max_blocks=3)) == "PrefixIndex(max_blocks=3, blocks=0)"
    result = doctest.testmod(index_module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0

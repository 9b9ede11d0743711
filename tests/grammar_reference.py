"""An independent reference for a ``Cfg``: terminals become Python ``re`` patterns
(matched with ``fullmatch``), rules are recognised by a span fixpoint (every
``(i, j)`` a symbol derives), and ``%ignore`` strings may sit around any terminal.

Slow (quadratic ``fullmatch`` calls per terminal, a fixpoint over all spans) but
short and obviously right for the few dozen characters the tests use. Also: a random
sampler of a tree and of a ``Cfg``, for generating probably-valid strings.
"""

from __future__ import annotations

import random
import re

from tokstream.constrain.grammar.lark import Cfg
from tokstream.constrain.grammar.nodes import Alt, Chars, Concat, Node


def to_pattern(node: Node) -> str:
    """A Python ``re`` pattern with the language of ``node``."""
    if isinstance(node, Chars):
        if not node.ranges:
            return "(?!)"
        return "[" + "".join(f"\\U{lo:08x}" + (f"-\\U{hi:08x}" if hi > lo else "") for lo, hi in node.ranges) + "]"
    if isinstance(node, Concat):
        return "(?:" + "".join(to_pattern(i) for i in node.items) + ")"
    if isinstance(node, Alt):
        return "(?:" + "|".join(to_pattern(i) for i in node.items) + ")"
    hi = "" if node.max is None else str(node.max)
    return f"(?:{to_pattern(node.item)}){{{node.min},{hi}}}"


def recognizes(cfg: Cfg, text: str) -> bool:
    """Whether ``text`` is in the scannerless language of ``cfg``."""
    n = len(text)
    pats = {name: re.compile(to_pattern(tree)) for name, tree in cfg.terminals.items()}
    raw = {t: [{j for j in range(i, n + 1) if p.fullmatch(text, i, j)} for i in range(n + 1)] for t, p in pats.items()}
    # skip[i]: the positions reachable from i over zero or more ignored strings.
    skip = [set() for _ in range(n + 1)]
    for i in range(n, -1, -1):
        skip[i].add(i)
        for t in cfg.ignore:
            for j in raw[t][i]:
                if j > i:
                    skip[i] |= skip[j]
    spans: dict[str, list[set[int]]] = {
        t: [{j for k in skip[i] for j in raw[t][k]} for i in range(n + 1)] for t in cfg.terminals
    }
    for rule in cfg.rules:
        spans[rule] = [set() for _ in range(n + 1)]
    changed = True
    while changed:
        changed = False
        for rule, alts in cfg.rules.items():
            for i in range(n + 1):
                got = spans[rule][i]
                size = len(got)
                for alt in alts:
                    ends = {i}
                    for sym in alt:
                        ends = {j for e in ends for j in spans[sym][e]}
                        if not ends:
                            break
                    got |= ends
                changed |= len(got) != size
    return any(n in skip[j] for j in spans[cfg.start][0])


def sample_tree(node: Node, rng: random.Random) -> str:
    """A random string of ``node`` (mostly ASCII where the sets allow it)."""
    if isinstance(node, Chars):
        ascii_parts = [(lo, min(hi, 0x7F)) for lo, hi in node.ranges if lo <= 0x7F]
        parts = ascii_parts if ascii_parts and rng.random() < 0.9 else list(node.ranges)
        lo, hi = rng.choice(parts)
        return chr(rng.randint(lo, hi))
    if isinstance(node, Concat):
        return "".join(sample_tree(i, rng) for i in node.items)
    if isinstance(node, Alt):
        return sample_tree(rng.choice(node.items), rng)
    top = node.min + 3 if node.max is None else min(node.max, node.min + 3)
    return "".join(sample_tree(node.item, rng) for _ in range(rng.randint(node.min, top)))


def _heights(cfg: Cfg) -> dict[str, int]:
    """The least derivation height of each symbol (terminals: 0)."""
    h = dict.fromkeys(cfg.terminals, 0)
    changed = True
    while changed:
        changed = False
        for rule, alts in cfg.rules.items():
            for alt in alts:
                if all(s in h for s in alt):
                    best = 1 + max((h[s] for s in alt), default=0)
                    if best < h.get(rule, 1 << 30):
                        h[rule] = best
                        changed = True
    return h


def sample_cfg(cfg: Cfg, rng: random.Random, depth: int = 6) -> str:
    """A random string of ``cfg``: random expansion, cheapest alternatives once deep."""
    heights = _heights(cfg)
    out: list[str] = []

    def ignored() -> None:
        if cfg.ignore and rng.random() < 0.3:
            out.append(sample_tree(cfg.terminals[rng.choice(cfg.ignore)], rng))

    def expand(sym: str, d: int) -> None:
        if sym in cfg.terminals:
            ignored()
            out.append(sample_tree(cfg.terminals[sym], rng))
            return
        alts = cfg.rules[sym]
        if d >= depth:
            low = min(1 + max((heights[s] for s in a), default=0) for a in alts)
            alts = tuple(a for a in alts if 1 + max((heights[s] for s in a), default=0) == low)
        for s in rng.choice(alts):
            expand(s, d + 1)

    expand(cfg.start, 0)
    ignored()
    return "".join(out)


def mutate(text: str, alphabet: str, rng: random.Random) -> str:
    """``text`` with one to three random edits (insert, delete, replace, swap)."""
    chars = list(text)
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(4)
        k = rng.randint(0, len(chars))
        if op == 0 or not chars:
            chars.insert(k, rng.choice(alphabet))
        elif op == 1:
            del chars[min(k, len(chars) - 1)]
        elif op == 2:
            chars[min(k, len(chars) - 1)] = rng.choice(alphabet)
        elif len(chars) > 1:
            k = min(k, len(chars) - 2)
            chars[k], chars[k + 1] = chars[k + 1], chars[k]
    return "".join(chars)

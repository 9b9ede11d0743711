"""Prefix caching for a multi-turn chat: which KV blocks each request can reuse. Offline.

    python examples/prefix_cache_chat.py

Every request of a chat sends the whole conversation so far, so a server keeps the KV
cache of earlier prompts and only prefills what is new. Routers and clients that keep
their own view of that cache key it by blocks of 16 token ids, chained (vLLM's
automatic prefix caching). Here `PrefixCachePlanner` encodes each prompt and keys only
the blocks that no continuation of the text can change, and a `PrefixIndex` plays the
router's table: look the prompt up, print the blocks reused, insert it.

Two requests end in the middle of a word, as real ones do: a reply cut off by
max_tokens at "it'" and then continued (Hugging Face's `continue_final_message`), and
a prefill sent while the user is still typing ("Ma" of "Mara"). The next prompt
re-merges those last characters ("'" + "s" -> "'s"), so the ids there change. A naive
planner that keys every full block of `tok.encode(text)` keys the block holding them
anyway, and its keys for one prompt are then not a prefix of the next prompt's: a
cache keyed by text reuses that block for ids the prompt no longer has, and a cache
keyed by ids never matches it again. The planner never keys those ids, so everything
it reuses is right; the price is an occasional block whose ids the continuation
happened to leave alone (none in this chat).
"""

from __future__ import annotations

import tokstream
from tokstream.cache import CachePlan, PrefixCachePlanner
from tokstream.cache.index import PrefixIndex

BLOCK_SIZE = 16  # vLLM's default KV block

# cl100k_base has no ChatML tokens; add them as specials the way gpt-3.5-turbo's
# tokenizer does (here at ids 100277 and 100278, after the last id).
TOK = tokstream.extend(tokstream.load("cl100k_base"), ["<|im_start|>", "<|im_end|>"], special=True)

SYSTEM = "You are the order assistant of a small bakery in Lyon. Answer briefly, in plain English."
# (user message, assistant reply); the third reply is cut off by max_tokens at CUT
# and finished by a "continue" request; the fourth user message is prefilled while
# the user is still typing it, up to DRAFT.
TURNS = [
    ("What time do you open on Saturdays?", "We open at 7:30 on Saturdays and close at 2 in the afternoon."),
    (
        "Do you have gluten-free bread?",
        "Yes: a buckwheat loaf and a seeded sourdough made without wheat, baked on Tuesdays, Thursdays and Saturdays.",
    ),
    (
        "Can I order a birthday cake for next Friday? Chocolate, for about twelve people.",
        (
            "Of course. A twelve-portion chocolate cake costs 45 euros and needs two days' notice, so order "
            "by Wednesday. For the icing, it's best to choose one: ganache, buttercream or whipped cream."
        ),
    ),
    ("Ganache please. Can you write 'Happy birthday, Mara' on it?", "Yes, in white chocolate script, no extra charge."),
    ("Great. Where do I pick it up?", "At the shop, 12 rue des Capucins, from 8 on Friday morning."),
    ("Can I pay when I collect it?", "Yes, by card or cash when you collect it. See you on Friday!"),
]
CUT = (2, "For the icing, it'")  # TURNS[2]'s reply stops right after this
DRAFT = (3, "Ganache please. Can you write 'Happy birthday, Ma")  # TURNS[3]'s user message, typed so far


def message(role: str, content: str, *, closed: bool = True) -> str:
    """One ChatML message; an open one (being generated or typed) has no end token."""
    return f"<|im_start|>{role}\n{content}" + ("<|im_end|>\n" if closed else "")


def requests() -> list[tuple[str, str]]:
    """(label, prompt) of every request, in order; each prompt is the whole chat so far."""
    out = []
    chat = message("system", SYSTEM)
    for i, (user, reply) in enumerate(TURNS):
        if i == DRAFT[0]:
            out.append(("prefill while typing", chat + message("user", DRAFT[1], closed=False)))
        chat += message("user", user)
        out.append((f"user turn {i + 1}", chat + "<|im_start|>assistant\n"))
        if i == CUT[0]:
            cut = reply[: reply.index(CUT[1]) + len(CUT[1])]
            out.append(("continue cut reply", chat + message("assistant", cut, closed=False)))
        chat += message("assistant", reply)
    return out


def main() -> None:
    planner = PrefixCachePlanner(TOK, block_size=BLOCK_SIZE)
    index: PrefixIndex[int] = PrefixIndex(max_blocks=10_000)  # block keys -> request number
    naive_index: PrefixIndex[int] = PrefixIndex(max_blocks=10_000)
    reqs = requests()
    print(f"{len(reqs)} requests, cl100k_base + ChatML specials, blocks of {BLOCK_SIZE} ids\n")
    print(f"{'request':<25}{'ids':>4} {'stable':>6}  {'ours: reused':<15}naive by text: reused, wrong")
    totals = {"blocks": 0, "ours": 0, "naive": 0, "wrong": 0, "by_ids": 0}
    ours_plans: list[CachePlan] = []
    earlier: list[tuple[str, CachePlan]] = []  # (prompt, naive plan) of each request
    for r, (label, prompt) in enumerate(reqs, start=1):
        # ChatML markers are real specials here, so allow them (user text containing
        # "<|im_start|>" must then be escaped, or the specials passed by id).
        plan = planner.plan(prompt, allowed_special="all")
        n, source = index.longest_match(plan)
        if source is not None:
            # The KV we reuse was computed for request `source`'s ids; the keys chain
            # the ids, so those are exactly this prompt's first n blocks.
            assert ours_plans[source - 1].ids[: n * BLOCK_SIZE] == plan.ids[: n * BLOCK_SIZE]

        # The naive planner keys every full block of encode(text), stable or not. A
        # cache keyed by text reuses the blocks of the longest earlier prompt whose text
        # starts this one; check each of them against the ids this prompt really has.
        naive = planner.plan_ids(plan.ids)
        starts = [i for i, (text, _) in enumerate(earlier) if prompt.startswith(text)]
        prev_r = max(starts, key=lambda i: len(earlier[i][0]), default=-1) + 1  # 0: none
        prev = earlier[prev_r - 1][1] if prev_r else None
        reused = prev.block_keys if prev is not None else []
        wrong = [b for b, key in enumerate(reused) if key != naive.block_keys[b]]
        # A cache keyed by the ids instead never matches those blocks again.
        totals["by_ids"] += naive_index.longest_match(naive)[0]

        full = len(plan.ids) // BLOCK_SIZE
        for name, value in (("blocks", full), ("ours", n), ("naive", len(reused)), ("wrong", len(wrong))):
            totals[name] += value
        ours = f"{n:>2}/{full}" + (f" (req {source})" if source is not None else "")
        naive_col = f"{len(reused):>2}/{full}, {len(wrong)} wrong"
        print(f"{r} {label:<23}{len(plan.ids):>4} {plan.stable_len:>6}  {ours:<15}{naive_col}")
        if wrong and prev is not None:
            end = len(prev.ids)
            before, now = pieces(prev.ids[end - 3 :]), pieces(plan.ids[end - 3 : end + 1])
            print(f"  ^ req {prev_r}'s naive keys are not a prefix of these: it ended {before}, now {now}")
        index.insert(plan, r)  # (a server would also key the reply's ids: plan_ids)
        ours_plans.append(plan)
        naive_index.insert(naive, r)
        earlier.append((prompt, naive))

    print(f"\nours:                reused {totals['ours']} of {totals['blocks']} blocks, none wrong")
    print(
        f"naive keyed by text: reused {totals['naive']}, {totals['wrong']} of them computed for other ids "
        f"(the model would attend to tokens the prompt does not have)"
    )
    print(
        f"naive keyed by ids:  reused {totals['by_ids']}, and keeps {totals['wrong']} keys no later prompt matches "
        f"(those blocks hold ids that the text's continuation re-merged)"
    )


def pieces(ids: list[int]) -> list[str]:
    """Each token's text (this chat is ASCII, so every token decodes on its own)."""
    return [TOK.decode([i]) for i in ids]


if __name__ == "__main__":
    main()

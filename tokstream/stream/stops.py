"""Stop strings over streamed text: an Aho-Corasick automaton fed character by character.

``StopMatcher`` finds the stop string that *completes first* in text that arrives in
pieces (the earliest end position; ties go to the stop listed first), and holds back
only what could still become a stop: the longest suffix of the text seen so far that
is a proper prefix of some stop. That suffix is exactly what the automaton's state
spells, so the hold-back costs nothing extra to know. ``StreamDecoder`` runs one on its
decoded text; it knows nothing about tokens or bytes.

Not handled: regular expressions, stops on token ids (compare ids before decoding),
case-insensitive matching.

Cost
----
Build: O(S * A) time and memory for stops of total length S over A distinct
characters (a complete transition table without its root edges; a few stops of a few
dozen characters make a few hundred dict entries).
Feed: O(1) per call plus one dict lookup per character of the text, except that while
nothing is held back, a chunk holding none of the stops' first characters is passed on
after one ``frozenset.isdisjoint`` (C), so ordinary prose costs one set scan per token.
Time is linear in the text: each character is looked at once, however long the stops
(a ``str.find`` over held + new text would rescan the held part, up to the longest stop,
on every call). Memory: the held suffix, shorter than the longest stop.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["StopMatcher"]


class StopMatcher:
    """Match stop strings in text fed in chunks; the earliest-completing stop wins.

    ``feed(chunk)`` returns the text that is now final: everything except the held
    suffix that could still start a stop, and, once a stop completes, the text before
    it (``matched`` is then that stop and later feeds return ``""``). ``flush()``
    returns the held suffix at the end of the stream. Stops may overlap or contain one
    another: the one whose last character comes first wins (``"there"`` with stops
    ``["re", "he"]`` stops at ``"he"``); stops ending at the same character are ranked
    by their order in ``stops``. An empty stop string raises ``ValueError``.

    Example: ``m = StopMatcher(["\\n\\nUser:"])``; ``m.feed("Hi\\n")`` returns ``"Hi"``
    (the newline may start the stop), ``m.feed("\\nUser: x")`` returns ``""`` and sets
    ``m.matched = "\\n\\nUser:"``.

    Cost: see the module notes; ``copy()`` is O(1) (the automaton is shared).
    """

    __slots__ = ("_delta", "_depth", "_held", "_match", "first_chars", "matched", "state", "stops")

    def __init__(self, stops: str | Iterable[str]) -> None:
        if isinstance(stops, (bytes, bytearray)):
            raise TypeError("stop strings must be str, not bytes; decode them first")
        stops = (stops,) if isinstance(stops, str) else tuple(stops)
        for s in stops:
            if not isinstance(s, str):
                raise TypeError(f"stop strings must be str, not {type(s).__name__}")
            if not s:
                raise ValueError("an empty stop string would match before any text; remove it")
        #: The stop strings, in priority order.
        self.stops: tuple[str, ...] = stops
        #: The stop that completed, or None.
        self.matched: str | None = None
        self._delta, self._depth, self._match = _automaton(stops)
        #: The characters a stop starts with: text with none of them, fed while nothing
        #: is held (``state == 0``), passes whole (``StreamDecoder`` inlines that test).
        self.first_chars: frozenset[str] = frozenset(s[0] for s in stops)
        #: The automaton state: the held suffix, as a trie node (0: nothing held).
        self.state = 0
        self._held = ""  # the text of that node (len == self._depth[state])

    @property
    def held(self) -> str:
        """The text held back because it may still begin a stop."""
        return self._held

    def feed(self, text: str) -> str:
        """Take the next chunk; return the text that can no longer be part of a stop."""
        if self.matched is not None:
            return ""
        state = self.state
        if not state and self.first_chars.isdisjoint(text):
            return text  # nothing held and nothing here can start a stop
        delta, match = self._delta, self._match
        for i, c in enumerate(text):
            state = delta[state].get(c, 0)
            k = match[state]
            if k >= 0:
                stop = self.stops[k]
                pending = self._held + text[: i + 1]
                self.matched = stop
                self.state, self._held = 0, ""
                return pending[: len(pending) - len(stop)]
        pending = self._held + text
        keep = self._depth[state]
        self.state = state
        self._held = pending[len(pending) - keep :] if keep else ""
        return pending[: len(pending) - keep]

    def flush(self) -> str:
        """End of text: return the held suffix (it can no longer become a stop)."""
        held, self._held, self.state = self._held, "", 0
        return held if self.matched is None else ""

    def copy(self) -> StopMatcher:
        """An independent matcher in the same state (the automaton is shared)."""
        other = StopMatcher.__new__(StopMatcher)
        other.stops, other.matched = self.stops, self.matched
        other._delta, other._depth, other._match = self._delta, self._depth, self._match
        other.first_chars, other.state, other._held = self.first_chars, self.state, self._held
        return other


def _automaton(stops: tuple[str, ...]) -> tuple[list[dict[str, int]], list[int], list[int]]:
    """Aho-Corasick as a DFA: ``(delta, depth, match)`` per state.

    ``delta[q][c]`` is the next state (absent means the root), ``depth[q]`` the length of
    the prefix that state ``q`` spells, ``match[q]`` the index of the first-listed stop
    that is a suffix of that prefix, or -1.
    """
    goto: list[dict[str, int]] = [{}]
    depth = [0]
    term = [-1]
    for k, s in enumerate(stops):
        q = 0
        for c in s:
            nxt = goto[q].get(c)
            if nxt is None:
                nxt = len(goto)
                goto[q][c] = nxt
                goto.append({})
                depth.append(depth[q] + 1)
                term.append(-1)
            q = nxt
        if term[q] < 0:
            term[q] = k  # a repeated stop keeps its first rank
    n = len(goto)
    fail = [0] * n
    match = list(term)
    delta: list[dict[str, int]] = [{} for _ in range(n)]
    delta[0] = dict(goto[0])
    order = list(goto[0].values())
    for q in order:  # breadth first: a failure target is finished before its users
        f = fail[q]
        inherited = match[f]  # stops ending here that are suffixes of q's prefix
        if inherited >= 0 and (match[q] < 0 or inherited < match[q]):
            match[q] = inherited
        # delta[q] = delta[fail[q]] overridden by q's own trie edges.
        delta[q] = {**delta[f], **goto[q]}
        for c, child in goto[q].items():
            fail[child] = delta[f].get(c, 0)
            order.append(child)
    return delta, depth, match

"""Lone surrogates: the one rule every pipeline follows, tiktoken's.

A Python ``str`` may hold surrogate code points (U+D800..U+DFFF), which no UTF-8 text
and no Rust string can. tiktoken's ``encode`` catches the ``UnicodeEncodeError`` and
retries with ``text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")``:
a high surrogate followed by a low one joins into their character, every other
surrogate becomes U+FFFD. ``Tokenizer`` applies exactly that before any stage runs,
for every pipeline (rank file, ``tokenizer.json``, SentencePiece) and every entry
point that takes text, so ``"a\\udcb5b"`` encodes as ``"a\\ufffdb"`` does everywhere.
Offsets stay in code points of the caller's text (``index_map``).

Streaming needs one more fact: a high surrogate at the very end of a text is not lone
yet, since appended text may start with its low half (``settled_end``).

Cost: ``has_surrogates`` is free for ASCII text and a strict UTF-8 encode otherwise
(~1.5 ms/MB, about 2% of a byte-level encode; stdlib ``re`` on a character class
runs 2-4x slower); replacing is only done for text that holds one.
"""

from __future__ import annotations

__all__ = ["has_surrogates", "index_map", "replace_surrogates", "settled_end"]


def has_surrogates(text: str) -> bool:
    """Whether ``text`` holds a surrogate code point (lone or in a pair).

    >>> has_surrogates("a\\udcb5b"), has_surrogates("héllo")
    (True, False)
    """
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def replace_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD and each surrogate pair
    joined into its character (tiktoken's fallback); ``text`` itself when it holds no
    surrogate.

    >>> replace_surrogates("a\\udcb5b"), replace_surrogates("\\ud83d\\ude00") == "\\U0001f600"
    ('a\\ufffdb', True)
    """
    if not has_surrogates(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def index_map(text: str) -> list[int]:
    """For each index of ``replace_surrogates(text)`` (and its end), the index in
    ``text`` it comes from: a joined pair maps to its high half.

    >>> index_map("a\\ud83d\\ude00b\\udcb5")
    [0, 1, 3, 4, 5]
    """
    back: list[int] = []
    i = 0
    n = len(text)
    while i < n:
        back.append(i)
        pair = "\ud800" <= text[i] <= "\udbff" and i + 1 < n and "\udc00" <= text[i + 1] <= "\udfff"
        i += 2 if pair else 1
    back.append(n)
    return back


def settled_end(text: str) -> int:
    """The end of the part of ``text`` whose surrogates are settled: ``len(text)``, or
    one less when ``text`` ends in a high surrogate, which a low one appended later
    would join. ``replace_surrogates(text + s)`` starts with
    ``replace_surrogates(text[:settled_end(text)])`` for every ``s``.

    >>> settled_end("ab\\ud83d"), settled_end("ab\\udcb5")
    (2, 3)
    """
    n = len(text)
    return n - 1 if n and "\ud800" <= text[-1] <= "\udbff" else n

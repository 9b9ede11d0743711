"""Vocabulary extension that keeps the old world (seed tutorial §4.5).

``extend(tok, tokens, special=...)`` adds tokens with new ids after ``tok.n_vocab``;
``train_bpe(..., base=tok)`` (``train/bpe.py``) adds merges after the old ones. Either
way every old id keeps its bytes. ``extension_report(old, new, texts)`` then says which
texts now encode differently, whether the old special tokens behave as before, and
which texts that round-tripped before no longer do: the regression suite to run before
shipping an extended tokenizer.

Added ordinary tokens follow ``tokenizers``' added-token semantics (matched in the raw
text before pre-tokenization, so ``"hello world"`` can be one token): the result is a
``tokenizer.json``-style tokenizer even when ``tok`` was a rank file. Added special
tokens keep a rank-file tokenizer a rank file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..added_vocabulary import AddedToken
from ..errors import TokstreamError
from ..models.ranks import RankBPE
from ..tokenizer import Tokenizer

__all__ = ["ExtensionReport", "extend", "extension_report"]


def extend(tok: Tokenizer, tokens: Iterable[str], *, special: bool = False) -> Tokenizer:
    """A copy of ``tok`` with ``tokens`` added after its last id; old ids are unchanged.

    ``special=True`` adds special tokens (encoded only when allowed, as the existing
    ones). Otherwise they are ordinary added tokens, matched wherever they occur in the
    text, as ``tokenizers``' ``add_tokens``. A token that ``tok`` already has (as a
    special token, or as an added token) is skipped.

    >>> import tokstream
    >>> tok = extend(tokstream.load("r50k_base"), ["<|im_start|>"], special=True)
    >>> tok.encode("<|im_start|>", allowed_special="all")
    [50257]
    """
    if isinstance(tokens, str):
        raise TypeError("extend takes an iterable of token strings, not one str")
    new = [t for t in dict.fromkeys(tokens) if t not in tok.special_tokens]
    for t in new:
        if not isinstance(t, str) or not t:
            raise TypeError(f"tokens must be non-empty str, got {t!r}")
    if special and isinstance(tok.pipeline.model, RankBPE):
        specials = tok.special_tokens
        specials.update({t: tok.n_vocab + i for i, t in enumerate(new)})
        return Tokenizer(
            tok.pipeline.model.ranks, pattern=tok.pattern, special_tokens=specials, name=f"{tok.name}+{len(new)}"
        )
    obj = tok.pipeline.to_json()
    have = {a["content"] for a in obj["added_tokens"]}
    obj["added_tokens"] += [
        AddedToken(id=tok.n_vocab + i, content=t, special=special).to_json()
        for i, t in enumerate(t for t in new if t not in have)
    ]
    # Ids are assigned as tokenizers assigns them on load (formats.hf_json), so the file
    # we would save gives the same ids there; check that no old id moved.
    out = Tokenizer.from_str(json.dumps(obj, ensure_ascii=False), name=f"{tok.name}+added")
    # An added token that lands on an old id whose bytes are not its text (its content
    # spells a vocabulary token: "é" is byte 0xE9 in byte-level vocabularies) would make
    # text encode to that id, which decodes to other bytes.
    ids = {a.content: a.id for a in out.pipeline.added.tokens}
    old_table, new_table = tok.vocab.table, out.vocab.table
    clashes = {
        ids[t]: t for t in new if ids.get(t, tok.n_vocab) < tok.n_vocab and new_table[ids[t]] != t.encode("utf-8")
    }
    for i in range(tok.n_vocab):
        if old_table[i] != new_table[i] or i in clashes:
            now = f"the added token {clashes[i]!r}" if i in clashes else repr(new_table[i])
            raise TokstreamError(
                f"extending {tok.name!r} would change token id {i} ({old_table[i]!r} -> "
                f"{now}): tokenizers' id rules for added tokens clash with this vocabulary"
            )
    return out


@dataclass(frozen=True)
class ExtensionReport:
    """What changed between an old tokenizer and its extension, on some texts.

    ``changed``: indices of the texts whose ids differ. ``ids_kept``: every old id
    has the same bytes in the new tokenizer. ``specials_kept``: every old special token
    has its old id and still encodes (when allowed) and decodes as before.
    ``round_trip_lost``: indices of texts that decoded back to themselves under the old
    tokenizer and no longer do.
    """

    changed: tuple[int, ...]
    ids_kept: bool
    specials_kept: bool
    round_trip_lost: tuple[int, ...]

    @property
    def ok(self) -> bool:
        """True when old ids, specials and round trips all behave as before."""
        return self.ids_kept and self.specials_kept and not self.round_trip_lost


def extension_report(old: Tokenizer, new: Tokenizer, texts: Sequence[str]) -> ExtensionReport:
    """Compare ``old`` and ``new`` (an extension of it) on ``texts``.

    Texts are encoded with special-token literals as plain text. Only texts that hold
    the bytes of some new token are encoded (a text without them cannot change: BPE
    cannot form a token whose bytes are not in the text, and an added token is matched
    on its text); every text is encoded when that shortcut is not sound (added tokens
    matched after normalization, or a rank file extended into a pipeline).
    """
    if isinstance(texts, str):
        raise TypeError("extension_report takes a sequence of texts, not one str")
    n_old = old.n_vocab
    old_table, new_table = old.vocab.table, new.vocab.table
    ids_kept = new.n_vocab >= n_old and all(old_table[i] == new_table[i] for i in range(n_old))
    specials_kept = all(
        new.special_tokens.get(s) == i and new.encode(s, allowed_special={s}) == [i]
        for s, i in old.special_tokens.items()
    )
    triggers = [b for i, b in enumerate(new_table) if b and (i >= n_old or b != old_table[i])]
    # Encode every text when the filter is not sound: added tokens matched after
    # normalization, or a rank file extended into a tokenizer.json-style pipeline.
    every = isinstance(old.pipeline.model, RankBPE) != isinstance(new.pipeline.model, RankBPE) or any(
        t.normalized for t in new.pipeline.added.tokens
    )
    changed: list[int] = []
    lost: list[int] = []
    for k, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts[{k}] is {type(text).__name__}, not str")
        data = text.encode("utf-8", "surrogatepass")
        if not every and not any(t in data for t in triggers):
            continue
        before = old.encode(text, disallowed_special=())
        after = new.encode(text, disallowed_special=())
        if before != after:
            changed.append(k)
            if old.decode(before) == text and new.decode(after) != text:
                lost.append(k)
    return ExtensionReport(tuple(changed), ids_kept, specials_kept, tuple(lost))

"""``Tokenizer``: the pipeline text -> pre-tokens -> model -> ids, and decode back.

This module composes the stages; each stage lives in its own module, and the cached
encode path in ``_fastpath``. It matches tiktoken's ``Encoding`` for byte-level BPE on
rank files (ids, decode, special-token policy, lone surrogates).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import struct
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from ._fastpath import PieceEncoder
from ._pipeline import Pipeline
from ._stability import SpecialHold, regex_cut
from .byte_level import bytes_to_proxy, proxy_to_bytes
from .errors import InvalidTokenIdError, TokstreamError
from .models.bpe import BytePairEncoder
from .pre_tokenizers import RegexSplit, known_pattern, splits_last_space_apart
from .specials import SpecialPolicy, SpecialSet, resolve_policy
from .specials import _matcher as _special_matcher

if TYPE_CHECKING:
    from os import PathLike

__all__ = ["Tokenizer"]

# encode_batch goes to worker processes above this many characters in total.
_PARALLEL_MIN_CHARS: Final = 4 << 20


class Tokenizer:
    """A tokenizer: encode text to ids and decode ids to text, exactly as the reference.

    Build one with ``tokstream.load(name_or_path)`` or a ``Tokenizer.from_*`` method.

    >>> import tokstream
    >>> tok = tokstream.load("cl100k_base")
    >>> tok.encode("hello world")
    [15339, 1917]
    >>> tok.decode([15339, 1917])
    'hello world'
    """

    def __init__(
        self,
        ranks: Mapping[bytes, int],
        *,
        pattern: str,
        special_tokens: Mapping[str, int] | None = None,
        name: str | None = None,
        explicit_n_vocab: int | None = None,
    ) -> None:
        """Build a byte-level BPE tokenizer from merge ranks and a pre-tokenizer regex.

        ``pattern`` is a regex or a name from ``tokstream.pre_tokenizers.PATTERNS``.
        """
        self.name = name or "tokenizer"
        self._ranks: Mapping[bytes, int] = ranks
        self._model = BytePairEncoder(ranks)
        self._pre = RegexSplit(pattern)
        self._special_tokens: dict[str, int] = dict(special_tokens or {})
        self._special_ids: frozenset[int] = frozenset(self._special_tokens.values())
        self._source: tuple[Any, ...] | None = None
        self._fingerprint: str | None = None
        self._pipeline: Pipeline | None = None
        self._holds: dict[frozenset[str], SpecialHold] = {}
        self._policies: dict[tuple[SpecialSet, SpecialSet], SpecialPolicy] = {}

        n_vocab = max([*ranks.values(), *self._special_tokens.values()], default=-1) + 1
        table: list[bytes | None] = [None] * n_vocab
        for token_bytes, rank in ranks.items():
            table[rank] = token_bytes
        if len(ranks) != len(set(ranks.values())):
            raise ValueError("two tokens share one rank; ranks must be unique")
        for text, sid in self._special_tokens.items():
            if table[sid] is not None:
                raise ValueError(f"special token {text!r} reuses the id {sid} of a token")
            table[sid] = text.encode("utf-8")
        if explicit_n_vocab is not None and explicit_n_vocab != n_vocab:
            raise ValueError(
                f"{self.name}: expected {explicit_n_vocab} token ids, the ranks and "
                f"specials give {n_vocab}"
            )
        self._table = table
        self._n_vocab = n_vocab

        self._fast = PieceEncoder(self._pre, self._model.encode_piece, ranks)
        self._known_pattern = known_pattern(self._pre.pattern)
        self._last_space_apart = splits_last_space_apart(self._pre.pattern)

    # ------------------------------------------------------------------ loading

    @classmethod
    def from_tiktoken(
        cls,
        path: str | PathLike[str],
        *,
        pattern: str,
        special_tokens: Mapping[str, int] | None = None,
        name: str | None = None,
        expected_hash: str | None = None,
    ) -> Tokenizer:
        """Load a tiktoken rank file (``<base64 token> <rank>`` per line).

        ``pattern`` is the pre-tokenizer regex or a known name (``"cl100k_base"``).
        ``expected_hash``, when given, is the file's sha256; a mismatch raises
        ``HashMismatchError``.
        """
        from .formats.tiktoken import load_tiktoken_file

        return load_tiktoken_file(
            path,
            pattern=pattern,
            special_tokens=special_tokens,
            name=name,
            expected_hash=expected_hash,
        )

    @classmethod
    def _from_pipeline(cls, pipeline: Pipeline, *, name: str) -> Tokenizer:
        """A tokenizer over a ``tokenizers``-style pipeline (see ``_pipeline``)."""
        tok = cls.__new__(cls)
        tok.name = name
        tok._pipeline = pipeline
        tok._ranks = {}
        tok._model = None  # type: ignore[assignment]
        tok._pre = None  # type: ignore[assignment]
        tok._special_tokens = {t.content: t.id for t in pipeline.added_tokens if t.special}
        tok._special_ids = frozenset(tok._special_tokens.values())
        tok._source = None
        tok._fingerprint = None
        tok._holds = {}
        tok._policies = {}
        tok._known_pattern = tok._last_space_apart = False
        ids = [*pipeline.vocab.values(), *(t.id for t in pipeline.added_tokens)]
        tok._n_vocab = max(ids, default=-1) + 1
        tok._table = pipeline.token_bytes_table(tok._n_vocab)
        tok._fast = None  # type: ignore[assignment]
        return tok

    @classmethod
    def from_file(cls, path: str | PathLike[str]) -> Tokenizer:
        """Load a Hugging Face ``tokenizer.json``.

        An unknown component raises ``NotImplementedError`` naming it and its JSON path;
        a malformed file raises ``TokenizerFileError`` (a ``ValueError``) naming the path.
        """
        from .formats.hf_json import load_hf_json

        return load_hf_json(path)

    @classmethod
    def from_sentencepiece(cls, path: str | PathLike[str]) -> Tokenizer:
        """Load a SentencePiece ``.model`` (BPE or Unigram); ids equal ``sentencepiece``'s."""
        from .formats.spm_pipeline import load_sentencepiece

        return load_sentencepiece(path)

    def save(self, path: str | PathLike[str]) -> None:
        """Write a ``tokenizer.json`` that ``tokenizers`` and ``from_file`` load."""
        from .formats.hf_json import save_hf_json

        save_hf_json(self, path)

    # ----------------------------------------------------------------- encoding

    def encode(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
        add_special_tokens: bool = False,
    ) -> list[int]:
        """Encode ``text`` to ids with tiktoken's special-token semantics.

        A special token's literal in ``text`` raises ``SpecialTokenError`` (a
        ``ValueError``) unless it is allowed (then it encodes to its id) or not
        disallowed (then it is plain text). Lone surrogates are replaced by U+FFFD
        first, as tiktoken does; a valid surrogate pair becomes its character.

        >>> tok = __import__("tokstream").load("cl100k_base")
        >>> tok.encode("<|endoftext|>", allowed_special="all")
        [100257]
        """
        _check_text(text)
        policy = self._policy(allowed_special, disallowed_special)
        policy.check(text)
        ids = self._encode_part(text, policy, first=True)
        if add_special_tokens and self._pipeline is not None:
            ids = self._pipeline.post_process(ids)
        return ids

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode ``text`` treating every special token's literal as plain text.

        >>> tok = __import__("tokstream").load("cl100k_base")
        >>> tok.encode_ordinary("<|endoftext|>")
        [27, 91, 8862, 728, 428, 91, 29]
        """
        _check_text(text)
        try:
            return self._encode_plain(text)
        except UnicodeEncodeError:
            return self._encode_plain(_replace_surrogates(text))

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        max_workers: int | None = None,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
        add_special_tokens: bool = False,
    ) -> list[list[int]]:
        """Encode each text; the same ids as ``encode`` on each.

        Batches above 4 MiB of text in total run on a process pool of ``max_workers``
        (default: the CPU count); the tokenizer pickles compactly for that. Errors are
        raised as from ``encode`` on the first failing text.
        """
        if isinstance(texts, str):
            raise TypeError("encode_batch takes a sequence of strings, not one string")
        texts = list(texts)
        for text in texts:
            _check_text(text)
        kw = dict(
            allowed_special=allowed_special,
            disallowed_special=disallowed_special,
            add_special_tokens=add_special_tokens,
        )
        workers = max_workers if max_workers is not None else (os.cpu_count() or 1)
        total = sum(map(len, texts))
        if workers > 1 and len(texts) > 1 and total >= _PARALLEL_MIN_CHARS:
            from ._parallel import encode_in_pool

            return encode_in_pool(self, texts, kw, workers)
        return [self.encode(t, **kw) for t in texts]  # type: ignore[arg-type]

    def encode_with_offsets(
        self, text: str, **encode_kw: Any
    ) -> tuple[list[int], list[tuple[int, int]]]:
        """Encode and return ``(ids, offsets)``; ``offsets[i] = (start, end)`` in code points.

        ``ids`` equal ``encode(text, **encode_kw)``. A token covers every character that
        any of its bytes belongs to. When a character's UTF-8 bytes are split over
        several tokens (an emoji in byte-level BPE, ``<0xXX>`` byte fallback), each of
        those tokens covers the whole character, so their spans overlap; the same
        convention as Hugging Face ``tokenizers``. Offsets index the original ``text``
        even where lone surrogates were replaced.

        For ``tokenizer.json`` and SentencePiece tokenizers, offsets go through the
        normalizer's alignment: a token covers the original characters its normalized
        characters came from (``_pipeline`` module notes). Characters normalized
        together (an NFC composite, a ``Replace`` match) are covered whole, where
        ``tokenizers`` gives only their first or last character; a token made only of
        inserted text (a prepended ``▁``) is zero-width where it was inserted. An added
        token covers its match, with the whitespace its ``lstrip``/``rstrip`` took;
        special tokens the post-processor adds (``add_special_tokens=True``) get
        ``(0, 0)``, as in ``tokenizers``.

        >>> tok = __import__("tokstream").load("cl100k_base")
        >>> tok.encode_with_offsets("hi there")
        ([6151, 1070], [(0, 2), (2, 8)])
        """
        if self._pipeline is not None:
            return self._encode_pipeline_offsets(text, **encode_kw)
        ids = self.encode(text, **encode_kw)
        fixed = text
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            fixed = _replace_surrogates(text)
            data = fixed.encode("utf-8")
        offsets = _char_offsets(data, [len(self._table[i] or b"") for i in ids])
        if fixed is not text and len(fixed) != len(text):
            back = _surrogate_index_map(text)
            offsets = [(back[a], back[b]) for a, b in offsets]
        return ids, offsets

    def _encode_pipeline_offsets(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
        add_special_tokens: bool = False,
    ) -> tuple[list[int], list[tuple[int, int]]]:
        """``encode_with_offsets`` in pipeline mode: ``encode``'s steps, with spans."""
        pipeline = self._pipeline
        assert pipeline is not None  # only called in pipeline mode
        _check_text(text)
        policy = self._policy(allowed_special, disallowed_special)
        policy.check(text)
        try:
            ids, offsets = self._pipeline_offsets(text, policy.allowed)
        except UnicodeEncodeError:
            fixed = _replace_surrogates(text)
            ids, offsets = self._pipeline_offsets(fixed, policy.allowed)
            if len(fixed) != len(text):
                back = _surrogate_index_map(text)
                offsets = [(back[a], back[b]) for a, b in offsets]
        if add_special_tokens and pipeline.post_processor is not None:
            before, after = pipeline.post_processor.added_ids()
            ids = pipeline.post_process(ids)
            offsets = [(0, 0)] * len(before) + offsets + [(0, 0)] * len(after)
        return ids, offsets

    def _pipeline_offsets(
        self, text: str, allowed: frozenset[str]
    ) -> tuple[list[int], list[tuple[int, int]]]:
        """``_encode_pipeline`` with offsets: an added token spans its match."""
        pipeline = self._pipeline
        assert pipeline is not None  # only called in pipeline mode
        ids: list[int] = []
        offsets: list[tuple[int, int]] = []
        plain_start: int | None = None
        pos = 0
        for piece, token in pipeline.split_added(text):
            end = pos + len(piece)
            if token is None or (token.special and token.content not in allowed):
                if plain_start is None:
                    plain_start = pos
            else:
                if plain_start is not None:
                    more_ids, more = pipeline.encode_plain_offsets(text[plain_start:pos], plain_start)
                    ids += more_ids
                    offsets += more
                    plain_start = None
                ids.append(token.id)
                offsets.append((pos, end))
            pos = end
        if plain_start is not None:
            more_ids, more = pipeline.encode_plain_offsets(text[plain_start:], plain_start)
            ids += more_ids
            offsets += more
        return ids, offsets

    def _encode_checked(self, text: str, policy: SpecialPolicy, first: bool = True) -> list[int]:
        """Ids of ``text`` (already checked against the policy); ``first=False``: it
        continues a cut (``stable_boundary``), so no start-of-text rules apply."""
        if self._pipeline is not None:
            return self._encode_pipeline(text, policy.allowed, first)
        if not policy.allowed:
            return self._encode_plain(text)
        out: list[int] = []
        specials = self._special_tokens
        for plain, special in policy.segments(text):
            if plain:
                out += self._encode_plain(plain)
            if special is not None:
                out.append(specials[special])
        return out

    def _encode_plain(self, text: str) -> list[int]:
        if self._pipeline is not None:
            return self._encode_pipeline(text, frozenset())
        return self._fast.encode(text)

    def _encode_pipeline(self, text: str, allowed: frozenset[str], first: bool = True) -> list[int]:
        """Added tokens split first; a special that is not allowed is plain text, and
        neighbouring plain text is encoded as one run. ``first=False``: ``text``
        continues a cut (``stable_boundary``), so its opening run has no start rules."""
        pipeline = self._pipeline
        assert pipeline is not None  # only called in pipeline mode
        out: list[int] = []
        plain = ""
        for piece, token in pipeline.split_added(text):
            if token is None or (token.special and token.content not in allowed):
                plain += piece
                continue
            if plain:
                out += pipeline.encode_plain(plain, first=first)
                plain = ""
            first = True
            out.append(token.id)
        if plain:
            out += pipeline.encode_plain(plain, first=first)
        return out

    # ---------------------------------------------------------------- stability

    def stable_boundary(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
    ) -> int:
        """The largest offset ``b`` this tokenizer's rules prove final: for every
        string ``s``, ``encode(text[:b])`` is a prefix of ``encode(text + s)`` (same
        special-token options; they raise as ``encode`` does).

        It comes from the pre-tokenizer's and the model's own rules (module
        ``_stability``), never from trial encodings, so it is sound; it is tight for
        the named regex patterns and cuts before runs of spaces for SentencePiece,
        Mistral and BERT pipelines. Text that may still complete a special token's
        literal, a trailing whitespace run and a lone surrogate are never passed.

        >>> tok = __import__("tokstream").load("cl100k_base")
        >>> text = "Hello world, how are"
        >>> b = tok.stable_boundary(text)
        >>> text[:b], text[b:]
        ('Hello world, how', ' are')
        """
        _check_text(text)
        policy = self._policy(allowed_special, disallowed_special)
        policy.check(text)
        return self._stream_cut(text, policy, first=True)[0]

    def _stream_cut(self, text: str, policy: SpecialPolicy, *, first: bool) -> tuple[int, bool]:
        """``(b, new_section)``: a cut of ``text`` (``stable_boundary``), and whether
        ``text[b:]`` opens a new section (after a token: start rules apply) rather
        than continuing one. ``first``: whether ``text`` itself opens a section."""
        limit = len(text)
        m = _SURROGATE.search(text)
        if m is not None:  # a pair may still form; encode replaces lone ones
            limit = m.start()
        pipeline = self._pipeline
        if pipeline is None:
            limit = self._special_hold(policy).hold(text, limit)
            start = 0
            if policy.allowed:
                for special_match in _special_matcher(policy.allowed).finditer(text, 0, limit):
                    start = special_match.end()
            cut = (
                regex_cut(self._pre.split_exact, text[start:limit], last_space_apart=self._last_space_apart)
                if self._known_pattern
                else 0
            )
        else:
            start, limit = pipeline.open_section(text, limit, policy.allowed, policy.disallowed)
            if start < 0:  # this pipeline's added tokens have no streaming rule
                return 0, first
            cut = pipeline.stream_cut(text[start:limit]) if start < limit else 0
        if cut > 0:
            return start + cut, False
        if start > 0:
            return start, True
        return 0, first

    def _policy(self, allowed_special: SpecialSet, disallowed_special: SpecialSet) -> SpecialPolicy:
        """``resolve_policy`` for this tokenizer, cached for hashable arguments (the
        defaults, "all", frozensets): resolving 256 specials per call is ~5 us."""
        try:
            key = (allowed_special, disallowed_special)
            policy = self._policies.get(key)
        except TypeError:  # a set or a list: resolve every time
            return resolve_policy(self._special_tokens, allowed_special, disallowed_special)
        if policy is None:
            policy = resolve_policy(self._special_tokens, allowed_special, disallowed_special)
            if len(self._policies) < 64:
                self._policies[key] = policy
        return policy

    def _special_hold(self, policy: SpecialPolicy) -> SpecialHold:
        key = policy.allowed | policy.disallowed
        hold = self._holds.get(key)
        if hold is None:
            hold = self._holds[key] = SpecialHold(key)
        return hold

    def _encode_part(self, text: str, policy: SpecialPolicy, *, first: bool) -> list[int]:
        """Ids of policy-checked ``text``; ``first=False`` when it continues a cut
        (as ``_stream_cut`` returned it). Lone surrogates are replaced as tiktoken does."""
        try:
            return self._encode_checked(text, policy, first)
        except UnicodeEncodeError:
            return self._encode_checked(_replace_surrogates(text), policy, first)

    # ----------------------------------------------------------------- decoding

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """Concatenate the tokens' bytes (tiktoken's ``decode_bytes``).

        Raises ``InvalidTokenIdError`` (a ``ValueError``) naming the first id that is
        not in the vocabulary.
        """
        ids = ids if isinstance(ids, (list, tuple)) else list(ids)
        table = self._table
        try:
            data = b"".join(map(table.__getitem__, ids))  # type: ignore[arg-type]
        except (IndexError, TypeError):
            data = None
        if data is None or (ids and min(ids) < 0):
            self._raise_bad_id(ids)
        return data  # type: ignore[return-value]

    def decode(
        self, ids: Iterable[int], *, skip_special_tokens: bool = False, errors: str = "replace"
    ) -> str:
        """Decode ids to text; invalid UTF-8 becomes U+FFFD under ``errors="replace"``.

        >>> tok = __import__("tokstream").load("cl100k_base")
        >>> tok.decode([15339, 100257], skip_special_tokens=True)
        'hello'
        """
        ids = ids if isinstance(ids, (list, tuple)) else list(ids)
        if skip_special_tokens and self._special_ids:
            self.decode_bytes(ids)  # validates every id, skipped ones included
            special = self._special_ids
            ids = [i for i in ids if i not in special]
        if self._pipeline is not None:
            self.decode_bytes(ids)  # validates
            return self._pipeline.decode(ids)
        return self.decode_bytes(ids).decode("utf-8", errors)

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes this token contributes to decoded text.

        >>> __import__("tokstream").load("cl100k_base").token_bytes(15339)
        b'hello'
        """
        table = self._table
        if not isinstance(token_id, (int, np.integer)) or not 0 <= token_id < len(table):
            raise InvalidTokenIdError(token_id, self.name, self._n_vocab)
        data = table[token_id]
        if data is None:
            raise InvalidTokenIdError(token_id, self.name, self._n_vocab)
        return data

    def _raise_bad_id(self, ids: Sequence[int]) -> None:
        table = self._table
        for i in ids:
            if (
                not isinstance(i, (int, np.integer))
                or not 0 <= i < len(table)
                or table[i] is None
            ):
                raise InvalidTokenIdError(i, self.name, self._n_vocab)
        raise AssertionError("unreachable: no bad id found")  # pragma: no cover

    # --------------------------------------------------------------- vocabulary

    @property
    def n_vocab(self) -> int:
        """The largest id plus one (ids in between may be unused)."""
        return self._n_vocab

    @property
    def special_tokens(self) -> dict[str, int]:
        """The special tokens' literals and ids (a copy)."""
        return dict(self._special_tokens)

    @property
    def pattern(self) -> str:
        """The pre-tokenizer regex ("" for tokenizers without one)."""
        return self._pre.pattern if self._pre is not None else ""

    def id_to_token(self, token_id: int) -> str:
        """The vocabulary's spelling of a token: the byte-level proxy (``"Ġhello"``).

        Special tokens are spelled as their literal.
        """
        data = self.token_bytes(token_id)
        if self._pipeline is not None:
            return self._pipeline.id_to_token[token_id]
        if token_id in self._special_ids:
            return data.decode("utf-8")
        return bytes_to_proxy(data)

    def token_to_id(self, token: str) -> int | None:
        """The id of a vocabulary spelling (as ``id_to_token`` gives), or None."""
        if token in self._special_tokens:
            return self._special_tokens[token]
        if self._pipeline is not None:
            for t in self._pipeline.added_tokens:
                if t.content == token:
                    return t.id
            return self._pipeline.vocab.get(token)
        data = proxy_to_bytes(token)
        return None if data is None else self._ranks.get(data)

    @property
    def fingerprint(self) -> str:
        """sha256 hex over everything that decides ids and decoding.

        Equal for tokenizers that encode and decode alike by construction: a rank-file
        tokenizer and the ``tokenizer.json`` its ``save`` writes share one, as does a
        ``tokenizer.json`` and the file we save from it. Computed once (up to ~1 s for
        a large ``tokenizer.json``).
        """
        if self._fingerprint is None:
            form = self._pipeline.rank_file_form() if self._pipeline is not None else None
            if self._pipeline is not None and form is None:
                self._fingerprint = self._pipeline_fingerprint()
            else:
                ranks, pattern, specials = form or (self._ranks, self._pre.pattern, self._special_tokens)
                self._fingerprint = _rank_fingerprint(ranks, pattern, specials)
        return self._fingerprint

    def _pipeline_fingerprint(self) -> str:
        assert self._pipeline is not None  # only called in pipeline mode
        try:
            canonical = json.dumps(self._pipeline.to_json(), sort_keys=True, ensure_ascii=False)
        except TokstreamError:
            # No exact tokenizer.json form (a SentencePiece charsmap): the model file's
            # bytes decide the ids instead.
            if self._source is None or self._source[0] != "sentencepiece":
                raise
            return hashlib.sha256(b"tokstream-fingerprint-v1\0sentencepiece\0" + self._source[1]).hexdigest()
        h = hashlib.sha256(b"tokstream-fingerprint-v1\0pipeline\0")
        h.update(canonical.encode("utf-8", "surrogatepass"))
        return h.hexdigest()

    def __repr__(self) -> str:
        return f"<Tokenizer {self.name!r} n_vocab={self._n_vocab}>"

    # ------------------------------------------------------------------ pickling

    def __reduce__(self) -> tuple[Any, ...]:
        from ._parallel import reduce_tokenizer

        return reduce_tokenizer(self)


def _rank_fingerprint(ranks: Mapping[bytes, int], pattern: str, specials: Mapping[str, int]) -> str:
    h = hashlib.sha256(b"tokstream-fingerprint-v1\0byte-level-bpe\0")
    items = sorted((r, b) for b, r in ranks.items())
    h.update(struct.pack("<Q", len(items)))
    h.update(b"".join(struct.pack("<QI", r, len(b)) + b for r, b in items))
    h.update(pattern.encode("utf-8", "surrogatepass") + b"\0")
    for text, sid in sorted(specials.items()):
        h.update(struct.pack("<Q", sid) + text.encode("utf-8", "surrogatepass") + b"\0")
    return h.hexdigest()


_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _check_text(text: object) -> None:
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")


def _replace_surrogates(text: str) -> str:
    # tiktoken's own fallback: pairs of surrogates join, lone ones become U+FFFD.
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _surrogate_index_map(text: str) -> list[int]:
    """Index in ``_replace_surrogates(text)`` -> index in ``text`` (plus the end)."""
    back: list[int] = []
    i = 0
    while i < len(text):
        back.append(i)
        pair = (
            "\ud800" <= text[i] <= "\udbff"
            and i + 1 < len(text)
            and "\udc00" <= text[i + 1] <= "\udfff"
        )
        i += 2 if pair else 1
    back.append(len(text))
    return back


def _char_offsets(data: bytes, lengths: list[int]) -> list[tuple[int, int]]:
    """Code-point spans of consecutive byte runs of ``lengths`` over UTF-8 ``data``."""
    if not lengths:
        return []
    arr = np.frombuffer(data, dtype=np.uint8)
    # chars_before[b] = number of characters that start before byte b.
    starts = (arr & 0xC0) != 0x80
    chars_upto = np.concatenate(([0], np.cumsum(starts)))
    ends = np.cumsum(np.asarray(lengths, dtype=np.int64))
    begins = ends - np.asarray(lengths, dtype=np.int64)
    # The character holding the first byte, through the one holding the last.
    first = chars_upto[begins + 1] - 1
    last = chars_upto[np.maximum(ends, 1)]
    first = np.where(ends > begins, first, chars_upto[begins])
    last = np.where(ends > begins, last, chars_upto[begins])
    return list(zip(first.tolist(), last.tolist()))

"""``Tokenizer``: the public face of one ``Pipeline``: encode, decode, offsets, stability.

Every tokenizer is one pipeline of typed stages (``pipeline``), a rank file included.
``Tokenizer`` adds what a user calls: input checks, the special-token policy (tiktoken's
semantics, resolved by ``specials.resolve_policy`` and cached), lone-surrogate
handling as tiktoken's, the token bytes table behind ``decode_bytes`` (``tok.vocab``),
the stability rule (``stability``), pickling and the fingerprint. It matches tiktoken's
``Encoding`` on rank files and ``tokenizers``' ``Tokenizer`` on ``tokenizer.json``.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import chain, islice
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import numpy as np

from ._fastpath import MAX_CACHED_LEN
from .added_vocabulary import Matcher
from .byte_level import bytes_to_proxy
from .decoders import Decoder, byte_local
from .errors import InvalidTokenIdError
from .pipeline import Pipeline
from .pre_tokenizers.patterns import PATTERNS
from .specials import SpecialPolicy, SpecialSet, resolve_policy
from .stability import Stability
from .surrogates import index_map, replace_surrogates
from .vocab import Vocabulary

if TYPE_CHECKING:
    from os import PathLike

__all__ = ["StableEncoder", "StableEncoding", "Tokenizer", "check_text"]

#: No argument yet (``Tokenizer._policy``'s last-call check).
_NO_ARG: Final = object()

# encode_batch goes to worker processes above this many characters in total.
_PARALLEL_MIN_CHARS: Final = 4 << 20
#: encode_batch's thread pool, where the compiled text encoder runs, above this total.
_THREAD_MIN_CHARS: Final = 256 << 10

#: How to rebuild a tokenizer in another process: a picklable function and its args.
Recipe = tuple[Callable[..., "Tokenizer"], tuple[Any, ...]]


class StableEncoding(NamedTuple):
    """``Tokenizer.encode_stable``'s result (a named tuple: it is made on every
    streaming scan, and a frozen dataclass costs ~1 us to build).

    ``ids`` are the text's ids (only the stable ones with ``tail=False``);
    ``stable_len`` the leading ids no continuation of the text changes; ``boundary``
    the text offset they end at (``stable_boundary``); ``continued``: the text after
    ``boundary`` continues the section (encode it with ``continued=True``) rather than
    opening a new one after a token.
    """

    ids: list[int]
    stable_len: int
    boundary: int
    continued: bool


class Tokenizer:
    """A tokenizer: encode text to ids and decode ids to text, exactly as the reference.

    Build one with ``tokstream.load(name_or_path)``, a ``Tokenizer.from_*`` method, or
    from tiktoken-style ranks: ``Tokenizer(ranks, pattern=..., special_tokens=...)``.

    >>> import tokstream
    >>> tok = tokstream.load("cl100k_base")
    >>> tok.encode("hello world")
    [15339, 1917]
    >>> tok.decode([15339, 1917])
    'hello world'
    """

    def __init__(
        self,
        ranks: Mapping[bytes, int] | None = None,
        *,
        pattern: str | None = None,
        special_tokens: Mapping[str, int] | None = None,
        name: str | None = None,
        explicit_n_vocab: int | None = None,
        pipeline: Pipeline | None = None,
        recipe: Recipe | None = None,
        source_bytes: bytes | None = None,
    ) -> None:
        """Build a tokenizer from a rank file's ``ranks`` and ``pattern`` (a regex or a
        name from ``tokstream.pre_tokenizers.PATTERNS``) with ``special_tokens``, or
        from a ``pipeline`` of stages.

        ``recipe`` is how another process rebuilds it (pickling; by default the
        stages pickle themselves); ``source_bytes`` the file it came from, which
        decides the fingerprint when the stages have no exact ``tokenizer.json`` form.
        """
        if pipeline is None:
            if ranks is None or pattern is None:
                raise TypeError("Tokenizer needs ranks and pattern=, or pipeline=")
            pipeline = Pipeline.from_ranks(ranks, pattern, special_tokens)
        elif ranks is not None or pattern is not None or special_tokens is not None:
            raise TypeError("pass either ranks (with pattern= and special_tokens=) or pipeline=, not both")
        self.name = name or "tokenizer"
        self.pipeline = pipeline
        n_vocab = pipeline.n_vocab
        if explicit_n_vocab is not None and explicit_n_vocab != n_vocab:
            raise ValueError(
                f"{self.name}: expected {explicit_n_vocab} token ids, the ranks and specials give {n_vocab}"
            )
        self._n_vocab = n_vocab
        self._special_tokens = dict(pipeline.added.special_tokens)
        # The ids decode(skip_special_tokens=True) drops: tokenizers drops an id whose
        # spelling is a special's content (a normalized special spelled otherwise stays).
        special_ids = pipeline.added.skip_ids
        self._vocab = Vocabulary(
            pipeline.token_bytes_table,
            n_vocab=n_vocab,
            special_ids=special_ids,
            added_ids=pipeline.added_ids,
            spellings=pipeline.spellings,
            name=self.name,
        )
        self._special_ids = special_ids
        # Byte-local decoders (a rank file's, a lone ByteLevel): decode is the table.
        self._byte_decode = byte_local(pipeline.decoder)
        self._stability = Stability(pipeline)
        # StableEncoder's cache of a stream's first and last parts, shared by streams.
        self._stream_edges: dict[str, tuple[int, ...]] = {}
        self._policies: dict[tuple[SpecialSet, SpecialSet], tuple[SpecialPolicy, Matcher | None]] = {}
        # The last hashable (so immutable) arguments and their policy.
        self._last_policy: tuple[object, object, tuple[SpecialPolicy, Matcher | None] | None] = (_NO_ARG, _NO_ARG, None)
        self._recipe = recipe
        self._source_bytes = source_bytes
        self._fingerprint: str | None = None
        # The fingerprint is built once even when threads ask together (up to ~4 s for
        # Llama 3 on a busy machine). The other first-use builds are locked where they
        # live (Vocabulary, the BPE pair table) or idempotent: a complete object is
        # built, then assigned in one step, so a racing thread builds an equal one.
        self._fingerprint_lock = threading.Lock()
        self._identity = uuid.uuid4().hex

    # ------------------------------------------------------------------ loading

    @classmethod
    def from_pipeline(cls, pipeline: Pipeline, *, name: str | None = None) -> Tokenizer:
        """A tokenizer over ``pipeline``'s stages (``tokstream.pipeline``)."""
        return cls(pipeline=pipeline, name=name)

    @classmethod
    def from_str(cls, json_text: str | bytes, *, name: str = "tokenizer") -> Tokenizer:
        """A tokenizer from the text of a ``tokenizer.json`` (``tokenizers``'
        ``Tokenizer.from_str``)."""
        from .formats.hf_json import pipeline_from_json

        return cls(pipeline=pipeline_from_json(json_text, source=name), name=name)

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
        from .formats.tiktoken import read_rank_file

        ranks, stem = read_rank_file(path, expected_hash=expected_hash)
        return cls(ranks, pattern=pattern, special_tokens=special_tokens, name=name or stem)

    @classmethod
    def from_file(cls, path: str | PathLike[str]) -> Tokenizer:
        """Load a Hugging Face ``tokenizer.json``.

        An unknown component raises ``NotImplementedError`` naming it and its JSON path;
        a malformed file raises ``TokenizerFileError`` (a ``ValueError``) naming the path.
        """
        from .formats.hf_json import read_hf_json

        pipeline, name = read_hf_json(path)
        return cls(pipeline=pipeline, name=name)

    @classmethod
    def from_sentencepiece(cls, path: str | PathLike[str]) -> Tokenizer:
        """Load a SentencePiece ``.model`` (BPE or Unigram); ids equal ``sentencepiece``'s."""
        from .formats.spm_pipeline import read_sentencepiece_file, sentencepiece_pipeline

        data, name = read_sentencepiece_file(path)
        return cls(
            pipeline=sentencepiece_pipeline(data, name=name, source=os.path.basename(path)),
            name=name,
            recipe=(_from_sentencepiece_bytes, (data, name)),
            source_bytes=data,
        )

    def save(self, path: str | PathLike[str]) -> None:
        """Write a ``tokenizer.json`` that ``tokenizers`` and ``from_file`` load."""
        from .formats.hf_json import write_hf_json

        write_hf_json(self.pipeline, path)

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
        if type(text) is not str:
            check_text(text)
        policy, matcher = self._policy(allowed_special, disallowed_special)
        policy.check(text)
        ids = self._encode_part(text, matcher, False)
        if add_special_tokens:
            ids = self.pipeline.post_process(ids)
        return ids

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode ``text`` treating every special token's literal as plain text.

        >>> tok = __import__("tokstream").load("cl100k_base")
        >>> tok.encode_ordinary("<|endoftext|>")
        [27, 91, 8862, 728, 428, 91, 29]
        """
        if type(text) is not str:
            check_text(text)
        return self._encode_part(text, self._policy((), ())[1], False)

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

        Where the compiled text encoder runs (``Pipeline.encodes_without_gil``),
        batches above 256 KiB of text in total run on a thread pool of ``max_workers``
        (default: the CPU count): texts of 4 KB or more encode without the GIL. Else
        batches above 4 MiB run on a process pool; the tokenizer pickles compactly for
        that. Errors are raised as from ``encode`` on the first failing text.
        """
        if isinstance(texts, str):
            raise TypeError("encode_batch takes a sequence of strings, not one string")
        texts = list(texts)
        for text in texts:
            check_text(text)
        kw: dict[str, Any] = dict(
            allowed_special=allowed_special,
            disallowed_special=disallowed_special,
            add_special_tokens=add_special_tokens,
        )
        workers = max_workers if max_workers is not None else (os.cpu_count() or 1)
        total = sum(map(len, texts))
        if workers > 1 and len(texts) > 1 and total >= _THREAD_MIN_CHARS and self.pipeline.encodes_without_gil():
            # The compiled text encoder lets go of the GIL on long texts: threads share
            # this tokenizer and its caches, with nothing to pickle (tiktoken's way).
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=min(workers, len(texts))) as pool:
                return list(pool.map(lambda text: self.encode(text, **kw), texts))
        if workers > 1 and len(texts) > 1 and total >= _PARALLEL_MIN_CHARS:
            from ._parallel import encode_in_pool

            return encode_in_pool(self, texts, kw, workers)
        return [self.encode(t, **kw) for t in texts]

    def encode_with_offsets(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
        add_special_tokens: bool = False,
    ) -> tuple[list[int], list[tuple[int, int]]]:
        """Encode and return ``(ids, offsets)``; ``offsets[i] = (start, end)`` in code points.

        ``ids`` equal ``encode(text, ...)``. A token covers every character that any
        of its bytes belongs to. When a character's UTF-8 bytes are split over
        several tokens (an emoji in byte-level BPE, ``<0xXX>`` byte fallback), each of
        those tokens covers the whole character, so their spans overlap; the same
        convention as Hugging Face ``tokenizers``. Offsets index the original ``text``
        even where lone surrogates were replaced.

        Through a normalizer, offsets follow its alignment: a token covers the
        original characters its normalized characters came from (``offsets`` module
        notes). Characters normalized together (an NFC composite, a ``Replace``
        match) are covered whole, where ``tokenizers`` gives only their first or last
        character; a token made only of inserted text (a prepended ``▁``) is
        zero-width where it was inserted. An added token covers its match, with the
        whitespace its ``lstrip``/``rstrip`` took (a normalized one, the characters its
        match in normalized text came from); special tokens the post-processor
        adds (``add_special_tokens=True``) get ``(0, 0)``, as in ``tokenizers``.

        >>> tok = __import__("tokstream").load("cl100k_base")
        >>> tok.encode_with_offsets("hi there")
        ([6151, 1070], [(0, 2), (2, 8)])
        """
        check_text(text)
        policy, matcher = self._policy(allowed_special, disallowed_special)
        policy.check(text)
        ids, offsets = self._offsets(text, matcher)
        post = self.pipeline.post_processor
        if post is not None and post.trims_offsets:  # ByteLevel's trim_offsets (processors notes)
            offsets = post.process_offsets(ids, offsets, self._vocab.spellings, add_special_tokens=add_special_tokens)
        if add_special_tokens:
            before, after = self.pipeline.added_ids
            ids = self.pipeline.post_process(ids)
            offsets = [(0, 0)] * len(before) + offsets + [(0, 0)] * len(after)
        return ids, offsets

    def _offsets(self, text: str, matcher: Matcher | None) -> tuple[list[int], list[tuple[int, int]]]:
        """Ids and offsets of policy-checked ``text``: an added token spans its match.
        Surrogates are replaced as ``_encode_part`` does; offsets index ``text``."""
        pipeline = self.pipeline
        if pipeline.refuses_surrogates:
            try:
                return pipeline.encode_offsets(text, matcher, table=self._vocab.table)
            except UnicodeEncodeError:
                pass
        fixed = replace_surrogates(text)
        ids, offsets = pipeline.encode_offsets(fixed, matcher, table=self._vocab.table)
        if len(fixed) != len(text):  # joined pairs: map back to the caller's indices
            back = index_map(text)
            offsets = [(back[a], back[b]) for a, b in offsets]
        return ids, offsets

    def _encode_part(self, text: str, matcher: Matcher | None, continued: bool) -> list[int]:
        """Ids of policy-checked ``text``; ``continued`` when it continues a cut.
        Surrogates are replaced as tiktoken does (module ``surrogates``), for every
        pipeline: where the pipeline refuses them (``Pipeline.refuses_surrogates``) only
        after it raises, so other text pays nothing."""
        pipeline = self.pipeline
        if pipeline.refuses_surrogates:
            try:
                return pipeline.encode(text, matcher, continued=continued)
            except UnicodeEncodeError:
                pass
        return pipeline.encode(replace_surrogates(text), matcher, continued=continued)

    def _policy(
        self, allowed_special: SpecialSet, disallowed_special: SpecialSet
    ) -> tuple[SpecialPolicy, Matcher | None]:
        """The resolved policy and the added tokens it matches, cached for hashable
        arguments (the defaults, "all", frozensets): resolving 256 specials is ~5 us.
        The last arguments are checked first, by identity (a stream passes the same
        sets at every scan)."""
        last = self._last_policy
        if last[0] is allowed_special and last[1] is disallowed_special and last[2] is not None:
            return last[2]
        try:
            key = (allowed_special, disallowed_special)
            found = self._policies.get(key)
        except TypeError:  # a set or a list: resolve every time
            policy = resolve_policy(self._special_tokens, allowed_special, disallowed_special)
            return policy, self.pipeline.added.matcher(policy.allowed)
        if found is None:
            policy = resolve_policy(self._special_tokens, allowed_special, disallowed_special)
            found = (policy, self.pipeline.added.matcher(policy.allowed))
            if len(self._policies) < 64:
                self._policies[key] = found
        self._last_policy = (allowed_special, disallowed_special, found)
        return found

    def special_policy(
        self, allowed_special: SpecialSet = frozenset(), disallowed_special: SpecialSet = "all"
    ) -> SpecialPolicy:
        """The special-token policy ``encode`` resolves for these arguments (which
        literals split as tokens, which raise): what a streaming caller checks chunks
        against (``SpecialPolicy.check`` with a stream offset)."""
        return self._policy(allowed_special, disallowed_special)[0]

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

        It comes from the stages' declared rules (module ``stability``), never from
        trial encodings, so it is sound; it is tight for the named regex patterns and
        cuts before runs of spaces for SentencePiece, Mistral and BERT pipelines. Text
        that may still complete a special token's literal, a trailing whitespace run
        and a trailing high surrogate (appended text may complete its pair) are never
        passed; other surrogates count as what ``encode`` makes of them (U+FFFD, or
        the character of a pair), and the boundary never splits a pair.

        >>> tok = __import__("tokstream").load("cl100k_base")
        >>> text = "Hello world, how are"
        >>> b = tok.stable_boundary(text)
        >>> text[:b], text[b:]
        ('Hello world, how', ' are')
        """
        check_text(text)
        policy, matcher = self._policy(allowed_special, disallowed_special)
        policy.check(text)
        return self._stability.cut(text, policy, matcher, True)[0]

    def encode_stable(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
        add_special_tokens: bool = False,
        continued: bool = False,
        tail: bool = True,
    ) -> StableEncoding:
        """Encode ``text`` split at its stable boundary: the one call behind
        ``StreamEncoder`` and ``PrefixCachePlanner``.

        ``ids`` equal ``encode(text, ...)``; ``ids[:stable_len]`` are the ids of
        ``text[:boundary]``, which ``encode(text + s)`` keeps for every ``s``.
        ``continued=True`` encodes ``text`` as the rest of a stream after an earlier
        boundary whose ``continued`` was True (no start-of-text rules).
        ``tail=False`` skips encoding the text after the boundary (``ids`` are then
        only the stable ones). With ``add_special_tokens`` the post-processor's
        leading ids count as stable and its trailing ones never do.

        >>> tok = __import__("tokstream").load("cl100k_base")
        >>> r = tok.encode_stable("Hello world, how are")
        >>> r.ids == tok.encode("Hello world, how are"), r.stable_len, r.boundary
        (True, 4, 16)
        """
        if type(text) is not str:
            check_text(text)
        policy, matcher = self._policy(allowed_special, disallowed_special)
        policy.check(text)
        return self._encode_stable(text, policy, matcher, continued, tail, add_special_tokens)

    def _encode_stable(
        self, text: str, policy: SpecialPolicy, matcher: Matcher | None, continued: bool, tail: bool, post: bool
    ) -> StableEncoding:
        """``encode_stable`` of policy-checked text: the one shared cut-and-encode."""
        boundary, opens = self._stability.cut(text, policy, matcher, not continued)
        ids = self._encode_part(text[:boundary], matcher, continued) if boundary else []
        stable = len(ids)
        if tail and boundary < len(text):
            ids += self._encode_part(text[boundary:], matcher, not opens)
        if post:
            ids = self.pipeline.post_process(ids)
            stable += len(self.pipeline.added_ids[0])
        return _new_stable(StableEncoding, (ids, stable, boundary, not opens))

    def stable_encoder(
        self, *, allowed_special: SpecialSet = frozenset(), disallowed_special: SpecialSet = "all"
    ) -> StableEncoder:
        """``encode_stable`` under one special-token policy resolved once, for a caller
        that cuts many texts (a stream; ``StableEncoder``)."""
        policy, matcher = self._policy(allowed_special, disallowed_special)
        return StableEncoder(self, policy, matcher)

    def encode_continued(
        self, text: str, *, allowed_special: SpecialSet = frozenset(), disallowed_special: SpecialSet = "all"
    ) -> list[int]:
        """The ids of ``text`` as the rest of a stream after a stable boundary whose
        ``StableEncoding.continued`` was True: no start-of-text rule (a dummy prefix,
        a prefix space) applies. ``encode(head + text)`` is then ``encode(head)``
        followed by these ids, for the head before that boundary.

        >>> tok = __import__("tokstream").load("cl100k_base")
        >>> r = tok.encode_stable("Hello world, how are")
        >>> rest = tok.encode_continued(" are you") if r.continued else tok.encode(" are you")
        >>> r.ids[: r.stable_len] + rest == tok.encode("Hello world, how are you")
        True
        """
        if type(text) is not str:
            check_text(text)
        policy, matcher = self._policy(allowed_special, disallowed_special)
        policy.check(text)
        return self._encode_part(text, matcher, True)

    # ----------------------------------------------------------------- decoding

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """Concatenate the tokens' bytes (tiktoken's ``decode_bytes``).

        Raises ``InvalidTokenIdError`` (a ``ValueError`` and a ``KeyError``) naming the
        first id that is not in the vocabulary; a ``bool`` is not an id.
        """
        ids = ids if isinstance(ids, (list, tuple)) else list(ids)
        table = self._vocab.table
        try:
            data = b"".join(map(table.__getitem__, ids))  # type: ignore[arg-type]
        except (IndexError, TypeError):
            data = None
        # The table takes negative indices and bools (True is 1): check both, in C.
        if data is None or (ids and (min(ids) < 0 or bool in set(map(type, ids)))):
            self._raise_bad_id(ids)
        return data  # type: ignore[return-value]

    def decode(self, ids: Iterable[int], *, skip_special_tokens: bool = False, errors: str = "replace") -> str:
        """Decode ids to text; invalid UTF-8 becomes U+FFFD under ``errors="replace"``.

        >>> tok = __import__("tokstream").load("cl100k_base")
        >>> tok.decode([15339, 100257], skip_special_tokens=True)
        'hello'
        """
        ids = ids if isinstance(ids, (list, tuple)) else list(ids)
        data = self.decode_bytes(ids)  # validates every id, skipped ones included
        if skip_special_tokens and self._special_ids:
            special = self._special_ids
            ids = [i for i in ids if i not in special]
            if self._byte_decode:
                data = self.decode_bytes(ids)
        if self._byte_decode:
            return data.decode("utf-8", errors)
        return self.pipeline.decode(ids, self._vocab.spellings)

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes this token contributes to decoded text.

        >>> __import__("tokstream").load("cl100k_base").token_bytes(15339)
        b'hello'
        """
        return self._vocab.token_bytes(token_id)

    def _raise_bad_id(self, ids: Sequence[int]) -> None:
        table = self._vocab.table
        for i in ids:
            if (
                isinstance(i, bool)
                or not isinstance(i, (int, np.integer))
                or not 0 <= i < len(table)
                or table[i] is None
            ):
                raise InvalidTokenIdError(i, self.name, self._n_vocab)
        raise AssertionError("unreachable: no bad id found")  # pragma: no cover

    # --------------------------------------------------------------- vocabulary

    @property
    def vocab(self) -> Vocabulary:
        """The public vocabulary (token bytes, special ids, the index) that
        ``stream/``, ``constrain/`` and ``cache/`` build on (``tokstream.vocab``)."""
        return self._vocab

    @property
    def n_vocab(self) -> int:
        """The largest id plus one (ids in between may be unused)."""
        return self._n_vocab

    @property
    def special_tokens(self) -> dict[str, int]:
        """The special tokens' literals and ids (a copy)."""
        return dict(self._special_tokens)

    @property
    def decoder(self) -> Decoder | None:
        """The decoder stage (``tokstream.decoders``), or None."""
        return self.pipeline.decoder

    @property
    def pattern(self) -> str:
        """The pre-tokenizer regex of a byte-level regex tokenizer ("" for others)."""
        split = self.pipeline.regex_split
        return split.pattern if split is not None else ""

    def id_to_token(self, token_id: int) -> str:
        """The vocabulary's spelling of a token: the byte-level proxy (``"Ġhello"``).

        Special tokens are spelled as their literal.
        """
        self.token_bytes(token_id)  # validates
        spelling = self._vocab.spellings[token_id]
        return spelling if spelling is not None else bytes_to_proxy(self.token_bytes(token_id))

    def token_to_id(self, token: str) -> int | None:
        """The id of a vocabulary spelling (as ``id_to_token`` gives), or None."""
        found = self.pipeline.added.token_to_id(token)
        return found if found is not None else self.pipeline.model.token_to_id(token)

    @property
    def fingerprint(self) -> str:
        """sha256 hex over everything that decides ids and decoding.

        Equal for tokenizers that encode and decode alike by construction: a rank-file
        tokenizer and the ``tokenizer.json`` its ``save`` writes share one, as does a
        ``tokenizer.json`` and the file we save from it. Computed once (up to ~1 s for
        a large ``tokenizer.json``).
        """
        found = self._fingerprint
        if found is None:
            with self._fingerprint_lock:
                found = self._fingerprint
                if found is None:
                    found = self._fingerprint = self.pipeline.fingerprint(self._source_bytes)
        return found

    def __repr__(self) -> str:
        return f"<Tokenizer {self.name!r} n_vocab={self._n_vocab}>"

    # ------------------------------------------------------------------ pickling

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as a recipe: the one the loader gave (an embedded name, the bytes of a
        ``.model``), else the stages, which pickle compactly (a rank file as one bytes
        blob). A process rebuilds each tokenizer once (``_restore``)."""
        recipe = self._recipe or (_from_pipeline, (self.pipeline, self.name))
        return (_restore, (self._identity, recipe, self._fingerprint))


class StableEncoder:
    """``Tokenizer.encode_stable`` under one resolved special-token policy
    (``Tokenizer.stable_encoder``): what a stream calls at every scan.

    The caller checks its text against ``policy`` itself (``SpecialPolicy.check`` with
    a stream offset, chunk by chunk, so that a disallowed literal split across chunks
    raises from the chunk that completes it); ``encode`` and ``encode_rest`` do not
    check again.

    >>> tok = __import__("tokstream").load("cl100k_base")
    >>> enc = tok.stable_encoder()
    >>> r = enc.encode("Hello world, how are", tail=False)
    >>> r.ids + enc.encode_rest("Hello world, how are you"[r.boundary :], continued=r.continued)
    [9906, 1917, 11, 1268, 527, 499]
    """

    __slots__ = (
        "_compute_part",
        "_edges",
        "_matcher",
        "_store_part",
        "_tok",
        "line_cuts",
        "part_ids",
        "policy",
        "segment_ids",
    )

    def __init__(self, tok: Tokenizer, policy: SpecialPolicy, matcher: Matcher | None) -> None:
        self._tok = tok
        self.policy = policy
        self._matcher = matcher
        # The safe-space path (``encode_segment``): a rank-file-like pipeline (no
        # normalizer, no prefix space, a pattern proven space safe) and no added token
        # to match. It shares the pipeline's part cache, so one-shot encodes and
        # streams warm each other.
        fast = tok.pipeline._fast
        #: With ``safe_spaces``: a part (the text after a safe space, up to the next)
        #: -> the ids of ``" " + part``, raising ``KeyError`` for a part not cached
        #: (short and unseen, or unclean: empty or ending in whitespace).
        self.part_ids: Callable[[str], tuple[int, ...]] | None = None
        #: Whether a place after a newline, before a character that is neither
        #: whitespace nor ``/``, is a cut too (``safe_spaces`` and a pattern in
        #: ``_LINE_CUT_PATTERNS``).
        self.line_cuts = False
        self._edges = tok._stream_edges
        if matcher is None and fast is not None and tok.pipeline._direct is not None and fast.pre.space_safe:
            parts = fast._parts
            self.part_ids = parts.__getitem__
            self._store_part: Callable[[Mapping[str, tuple[int, ...]]], bool] = parts.store
            self._compute_part: Callable[[str], tuple[int, ...]] = fast.chunk_ids
            self.line_cuts = fast.pre.pattern in _LINE_CUT_PATTERNS
        #: With ``safe_spaces`` and the compiled text encoder: ``encode_segment`` in one
        #: C call (it raises ``UnicodeEncodeError`` on surrogates, which the exact
        #: path answers); else None.
        self.segment_ids: Callable[[str], list[int]] | None = None
        if self.part_ids is not None and fast is not None:
            self.segment_ids = fast.native_encoder()

    @property
    def safe_spaces(self) -> bool:
        """Whether every space that follows a non-space character is a cut (the
        pre-tokenizer's proven space cut, ``pre_tokenizers.patterns``) and
        ``encode_segment`` applies: a named regex pattern, no normalizer, no prefix
        space, no added token matched under this policy."""
        return self.part_ids is not None

    def encode_segment(self, text: str) -> list[int]:
        """``encode_rest(text, continued=True)`` for ``text`` between two cuts of a
        stream (only when ``safe_spaces``), with no regex for text seen before.

        The spaces in ``text`` that follow a non-space character are cuts (the
        pre-tokenizer's space cut), so ``text`` is its first part (before its first
        space), then ``" " + part`` for each later one, each encoded alone: the parts
        in between are lookups in the pipeline's part cache (``_fastpath``), the first
        and the last (which ends at the stream's cut, maybe in a newline) lookups in
        a small cache of this encoder's.

        Cost: a ``split(" ")`` and one C-level ``map`` over the cache when every part
        was seen (~1 us for a few words); an unseen ASCII part is encoded alone and
        cached (the same entry ``_fastpath`` would store); other misses encode the
        whole text the exact way.
        """
        get = self.part_ids
        assert get is not None, "encode_segment needs safe_spaces"
        if self.segment_ids is not None:
            # Text between two cuts encodes alone: the compiled encoder's whole-text
            # ids are exact; a surrogate takes the exact path.
            try:
                return self.segment_ids(text)
            except UnicodeEncodeError:
                return self._tok._encode_part(text, None, True)
        parts = text.split(" ")
        first = parts[0]
        n = len(parts)
        if n == 1:
            return list(self._edge(first))
        last = parts[-1]
        if first and first[-1].isspace():  # the space after it is not safe
            return self._tok._encode_part(text, None, True)
        try:
            out = list(self._edge(first)) if first else []
            if last and not last[-1].isspace():  # a clean part, in the part cache
                out += chain.from_iterable(map(get, islice(parts, 1, None)))
            else:
                out += chain.from_iterable(map(get, islice(parts, 1, n - 1)))
                out += self._edge(" " + last)
            return out
        except KeyError:
            pass
        except Exception:  # a long part computed in the cache: surrogates, Unicode 16.0
            return self._tok._encode_part(text, None, True)
        # A part that is unclean (empty, or ending in whitespace: the space after it is
        # not safe) or not ASCII (surrogates, Unicode 16.0 stand-ins): the exact path.
        middle = parts[1:-1] if not last or last[-1].isspace() else parts[1:]
        if not all(p and p.isascii() and not p[-1].isspace() for p in middle):
            return self._tok._encode_part(text, None, True)
        out = list(self._edge(first)) if first else []
        fresh: dict[str, tuple[int, ...]] = {}
        for p in middle:
            try:
                ids = get(p)
            except KeyError:
                ids = fresh[p] = self._compute_part(" " + p)
            out += ids
        if len(middle) < n - 1:
            out += self._edge(" " + last)
        self._store_part({p: ids for p, ids in fresh.items() if len(p) <= MAX_CACHED_LEN})
        return out

    def _edge(self, text: str) -> tuple[int, ...]:
        """The ids of ``text``, a part that starts and ends at cuts, cached when ASCII
        and short (line starts and ends repeat: speaker names, ``"\\n\\n"``)."""
        edges = self._edges
        ids = edges.get(text)
        if ids is None:
            if not text.isascii():  # surrogates, Unicode 16.0 stand-ins: never stored
                return tuple(self._tok._encode_part(text, None, True))
            ids = self._compute_part(text)
            if len(text) <= MAX_CACHED_LEN:
                if len(edges) >= _EDGE_LIMIT:
                    edges.clear()
                edges[text] = ids
        return ids

    def encode(self, text: str, *, continued: bool = False, tail: bool = True) -> StableEncoding:
        """``Tokenizer.encode_stable(text, continued=..., tail=...)`` (no policy check)."""
        return self._tok._encode_stable(text, self.policy, self._matcher, continued, tail, False)

    def encode_rest(self, text: str, *, continued: bool = False) -> list[int]:
        """The ids of the rest of a stream, after a boundary whose ``continued`` was
        ``continued`` (no cut, no policy check)."""
        return self._tok._encode_part(text, self._matcher, continued)


#: Entries of ``StableEncoder._edges`` (cleared when full).
_EDGE_LIMIT: Final = 1 << 12

#: Patterns in which a newline ends every piece that holds it unless a newline or ``/``
#: follows (``\s*[\r\n]+`` before ``\s+(?!\S)``, and punctuation takes only trailing
#: newlines, and in o200k slashes): so a place after a newline, before a character
#: that is neither whitespace nor ``/``, is a piece boundary whatever follows, and the
#: text before it splits alone as in the whole text (cl100k's ``\s++$`` takes the same
#: newline-ended run as ``\s*[\r\n]``). Not GPT-2's: there ``\s+(?!\S)`` splits a
#: newline run before a word and ``\s++$`` keeps it whole at the end.
_LINE_CUT_PATTERNS: Final = frozenset(PATTERNS[name] for name in ("cl100k_base", "o200k_base", "llama3"))

#: ``tuple.__new__``: builds a ``StableEncoding`` in C (its ``__new__`` is Python code).
_new_stable: Final = tuple.__new__

_rebuilt: dict[str, Tokenizer] = {}
_rebuilt_lock = threading.Lock()


def _restore(identity: str, recipe: Recipe, fingerprint: str | None) -> Tokenizer:
    """Unpickle: the tokenizer this process already rebuilt from ``identity``, or a new
    one from ``recipe``."""
    with _rebuilt_lock:
        tok = _rebuilt.get(identity)
    if tok is not None:
        return tok
    fn, args = recipe
    tok = fn(*args)
    if fingerprint is not None and tok._fingerprint is None:
        tok._fingerprint = fingerprint
    with _rebuilt_lock:
        return _rebuilt.setdefault(identity, tok)


def _from_pipeline(pipeline: Pipeline, name: str) -> Tokenizer:
    return Tokenizer(pipeline=pipeline, name=name)


def _from_sentencepiece_bytes(data: bytes, name: str) -> Tokenizer:
    from .formats.spm_pipeline import sentencepiece_pipeline

    return Tokenizer(
        pipeline=sentencepiece_pipeline(data, name=name),
        name=name,
        recipe=(_from_sentencepiece_bytes, (data, name)),
        source_bytes=data,
    )


def check_text(text: object) -> None:
    """Raise ``TypeError`` unless ``text`` is a ``str``."""
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")

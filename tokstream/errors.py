"""The exceptions tokstream raises.

Every error is a ``ValueError`` subclass, so code written against the contract
(``except ValueError``) keeps working, while callers that care can catch precisely::

    ValueError
     └── TokstreamError                 base of everything below
          ├── InvalidTokenIdError       not an id of the vocabulary (decode, token_bytes, ...);
          │                             also a KeyError, as tiktoken's lookups raise
          ├── SpecialTokenError         a disallowed special token's literal text in the input
          ├── UnknownTokenizerError     tokstream.load() got a name it does not know
          ├── UnsupportedGrammarError   a regex or grammar uses a construct the grammar engine
          │                             cannot express (or is malformed); names offset or line
          │    └── UnsupportedSchemaError  a JSON Schema keyword or case json_schema_constraint
          │                             cannot enforce exactly; names the keyword and JSON pointer
          └── TokenizerFileError        a tokenizer file is malformed; names the file and line
               ├── HashMismatchError    a rank file's sha256 is not the expected one
               └── UnsupportedComponentError  a component type tokstream does not implement
                                        (also a NotImplementedError)

Wrong *types* (a ``bytes`` where ``str`` is expected) raise the built-in ``TypeError``,
except where an id is expected: a ``bool``, a ``float`` or a ``str`` given as a token
id raises ``InvalidTokenIdError`` like any other id the vocabulary does not have
(``True`` is an ``int`` to Python, and would otherwise decode as id 1).
"""

from __future__ import annotations

__all__ = [
    "HashMismatchError",
    "InvalidTokenIdError",
    "SpecialTokenError",
    "TokenizerFileError",
    "TokstreamError",
    "UnknownTokenizerError",
    "UnsupportedComponentError",
    "UnsupportedGrammarError",
    "UnsupportedSchemaError",
    "unsavable",
]


class TokstreamError(ValueError):
    """Base class of every tokstream error."""


class InvalidTokenIdError(TokstreamError, KeyError):
    """A token id that the tokenizer does not have: negative, too large, a hole, or
    not an ``int`` at all (a ``bool`` is not an id).

    Also a ``KeyError``, so code written for tiktoken (``except KeyError``) catches it;
    unlike a plain ``KeyError``, ``str()`` gives the message unquoted.

    >>> e = InvalidTokenIdError(True, "cl100k_base", 100277)
    >>> print(e)
    token id True is a bool, not an int, so it is no token id of 'cl100k_base'; pass int ids
    >>> isinstance(e, KeyError) and isinstance(e, ValueError)
    True
    """

    def __init__(self, token_id: object, name: str, n_vocab: int) -> None:
        self.token_id = token_id
        self._args = (token_id, name, n_vocab)
        if isinstance(token_id, bool) or not _is_int(token_id):
            message = (
                f"token id {token_id!r:.40} is a {type(token_id).__name__}, not an int, "
                f"so it is no token id of {name!r}; pass int ids"
            )
        elif 0 <= token_id < n_vocab:  # type: ignore[operator]
            message = f"token id {token_id!r} is unused in {name!r}: no token has it (n_vocab={n_vocab})"
        else:
            message = f"token id {token_id!r} is out of range for {name!r} (n_vocab={n_vocab})"
        self.message = message
        super().__init__(message)

    def __str__(self) -> str:
        # KeyError.__str__ would quote the message (it reprs a lone argument).
        return self.message

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        # Errors cross process boundaries (encode_batch's pool) by pickling.
        return (type(self), self._args)


def _is_int(value: object) -> bool:
    """An ``int`` or a numpy integer (without importing numpy)."""
    return isinstance(value, int) or (hasattr(value, "__index__") and type(value).__module__ == "numpy")


class SpecialTokenError(TokstreamError):
    """The text holds the literal of a special token that the caller did not allow."""

    def __init__(self, token: str, offset: int) -> None:
        self.token = token
        self.offset = offset
        self._args = (token, offset)
        super().__init__(
            f"text contains the special token {token!r} at offset {offset}; pass "
            f"allowed_special={{{token!r}}} to encode it as that token, or "
            f"disallowed_special=() to encode it as plain text"
        )

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return (type(self), self._args)


class UnknownTokenizerError(TokstreamError):
    """``tokstream.load`` was given a name that is neither known nor a path."""


class UnsupportedGrammarError(TokstreamError):
    """A regex or grammar the grammar engine cannot take: a construct outside what a
    finite automaton (regex) or a context-free grammar expresses (backreferences,
    lookarounds), or malformed text. ``offset`` is the 0-based character offset in the
    pattern; for grammar text ``line`` and ``column`` (1-based) say where. Any of them
    is None when unknown.

    >>> e = UnsupportedGrammarError("a lookahead (?=...) is not regular", offset=3)
    >>> print(e), e.offset
    a lookahead (?=...) is not regular (at offset 3)
    (None, 3)
    """

    def __init__(
        self, message: str, offset: int | None = None, line: int | None = None, column: int | None = None
    ) -> None:
        self.message = message
        self.offset = offset
        self.line = line
        self.column = column
        where = []
        if line is not None:
            where.append(f"line {line}" + (f", column {column}" if column is not None else ""))
        elif offset is not None:
            where.append(f"at offset {offset}")
        super().__init__(f"{message} ({where[0]})" if where else message)

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return (type(self), (self.message, self.offset, self.line, self.column))


class UnsupportedSchemaError(UnsupportedGrammarError):
    """A JSON Schema that ``json_schema_constraint`` cannot enforce exactly: an unknown
    or unsupported keyword, a case of a supported one it cannot express (``oneOf``
    whose branches may overlap), or a malformed schema. ``keyword`` names the keyword
    and ``pointer`` is the JSON pointer (RFC 6901) of the schema object holding it;
    either is None when unknown; the message shows the pointer as a URI fragment
    (``#`` is the root). Refusing is the rule: a constraint looser than the
    schema would let invalid output through.

    >>> e = UnsupportedSchemaError("not supported", keyword="not", pointer="/properties/a")
    >>> print(e)
    the keyword 'not' at #/properties/a: not supported
    """

    def __init__(self, message: str, keyword: str | None = None, pointer: str | None = None) -> None:
        self.keyword = keyword
        self.pointer = pointer
        self.message = message
        self.offset = self.line = self.column = None
        where = ""
        if keyword is not None:
            where = f"the keyword {keyword!r}"
        if pointer is not None:
            where = f"{where} at #{pointer}" if where else f"at #{pointer}"
        ValueError.__init__(self, f"{where}: {message}" if where else message)

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return (type(self), (self.message, self.keyword, self.pointer))


class TokenizerFileError(TokstreamError):
    """A tokenizer file is malformed. The message names the file and the line or JSON path."""


class HashMismatchError(TokenizerFileError):
    """A rank file does not have the sha256 it is published with."""


class UnsupportedComponentError(TokenizerFileError, NotImplementedError):
    """A tokenizer file names a component (a ``"type"``, a SentencePiece model type)
    that tokstream does not implement: the file cannot be read, so it is a
    ``TokenizerFileError``, and a ``NotImplementedError`` for callers that tell
    unsupported features from damage."""


def unsavable(option: str, why: str) -> TokstreamError:
    """The error for a SentencePiece model option that has no exact ``tokenizer.json``
    form: ``Tokenizer.save`` refuses rather than write a file with other ids."""
    return TokstreamError(
        f"cannot write this SentencePiece model as tokenizer.json: {option} has no exact "
        f"tokenizers equivalent ({why}), so tokenizers would give other ids"
    )

"""The exceptions tokstream raises.

Every error is a ``ValueError`` subclass, so code written against the contract
(``except ValueError``) keeps working, while callers that care can catch precisely::

    ValueError
     └── TokstreamError                 base of everything below
          ├── InvalidTokenIdError       an id outside the vocabulary (decode, token_bytes, ...)
          ├── SpecialTokenError         a disallowed special token's literal text in the input
          ├── UnknownTokenizerError     tokstream.load() got a name it does not know
          └── TokenizerFileError        a tokenizer file is malformed; names the file and line
               ├── HashMismatchError    a rank file's sha256 is not the expected one
               └── UnsupportedComponentError  a component type tokstream does not implement
                                        (also a NotImplementedError)

Wrong *types* (a ``bytes`` where ``str`` is expected) raise the built-in ``TypeError``.
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
    "unsavable",
]


class TokstreamError(ValueError):
    """Base class of every tokstream error."""


class InvalidTokenIdError(TokstreamError):
    """A token id that the tokenizer does not have (negative, too large, or a hole)."""

    def __init__(self, token_id: object, name: str, n_vocab: int) -> None:
        self.token_id = token_id
        self._args = (token_id, name, n_vocab)
        super().__init__(f"token id {token_id!r} is out of range for {name!r} (n_vocab={n_vocab})")

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        # Errors cross process boundaries (encode_batch's pool) by pickling.
        return (type(self), self._args)


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

"""Types of the optional compiled core (``_native.c``)."""

from collections.abc import Mapping, Sequence

class PairTable:
    """(left id, right id) -> (rank, merged id), and the BPE merge loop over it."""

    @staticmethod
    def from_merges(lefts: object, rights: object, merged: object) -> PairTable: ...
    @staticmethod
    def from_ranks(ranks: Mapping[bytes, int]) -> PairTable: ...
    def encode_bytes(self, piece: bytes) -> tuple[int, ...] | None: ...
    def merge(self, symbols: Sequence[int]) -> tuple[int, ...]: ...
    def set_byte_ids(self, ids: Sequence[int | None]) -> None: ...
    def pair_count(self) -> int: ...

class TextEncoder:
    """A whole text to ids for a named pre-tokenizer pattern (``_native_text.c``)."""

    def __init__(self, kind: int, table: PairTable, whole: dict[bytes, int] | None, classes: bytes) -> None: ...
    def encode(self, text: str) -> list[int]: ...
    def count(self, text: str) -> int: ...
    def split(self, text: str) -> list[str]: ...

def chain_keys(
    seed: bytes, extra: bytes, data: bytes, block_bytes: int, count: int, portable: bool = False
) -> list[str]:
    """The chained sha256 block keys, as hex (``block_hash``)."""

def sha_extensions() -> bool:
    """Whether ``chain_keys`` runs on the CPU's SHA extensions."""

class TokenTrie:
    """The vocabulary's byte trie walked through a lazy DFA's table (``_native_walk.c``)."""

    def __init__(
        self,
        byte: bytes,
        child_lo: object,
        child_hi: object,
        has_tok: bytes,
        has_kids: bytes,
        sub_lo: object,
        tok_n: object,
        sub_hi: object,
    ) -> None: ...
    def walk(
        self,
        table: object,
        expanded: object,
        accepting: object,
        nodes: bytes,
        states: bytes,
        crossings: bool,
        allowed: object = ...,
    ) -> tuple[bytes, bytes, bytes, bytes]: ...
    def refused(self, nodes: bytes, allowed: object) -> bytes: ...

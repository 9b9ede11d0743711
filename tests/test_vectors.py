"""llama.cpp's tokenizer test vectors for GPT-2 (= r50k_base).

File format (llama.cpp ``convert_hf_to_gguf_update.py`` writes it):

- ``.inp``: every input followed by ``"\\n__ggml_vocab_test__\\n"``, so the file is
  ``input_0 SEP input_1 SEP ... input_n SEP``. Inputs may be empty or consist only of
  newlines; splitting on the full separator (newline included on both sides) and
  dropping the empty tail recovers them exactly. The file must be read as bytes:
  universal-newline text mode would rewrite any ``\\r``.
- ``.out``: one line per input, its ids each preceded by a space (an empty line for
  the empty input).

The expected ids come from the ``.out`` file only; ``test_parsing_agrees_with_tiktoken``
checks the parsing itself against tiktoken.
"""

from __future__ import annotations

import pytest
from helpers import fixture_file

import tokstream

SEPARATOR = "\n__ggml_vocab_test__\n"
VOCAB = "ggml-vocab-gpt-2.gguf"


def parse_vectors(inp: bytes, out: bytes) -> list[tuple[str, list[int]]]:
    """Pair each input of a ``.inp`` file with its ids from the ``.out`` file."""
    inputs = inp.decode("utf-8").split(SEPARATOR)
    if inputs[-1] != "":
        raise ValueError("the .inp file does not end with the separator line")
    inputs.pop()
    lines = out.decode("utf-8").split("\n")
    if lines[-1] == "":
        lines.pop()
    if len(lines) != len(inputs):
        raise ValueError(f"{len(inputs)} inputs but {len(lines)} id lines")
    return [(text, [int(x) for x in line.split()]) for text, line in zip(inputs, lines)]


@pytest.fixture(scope="module")
def vectors():
    inp = fixture_file(f"vectors/{VOCAB}.inp").read_bytes()
    out = fixture_file(f"vectors/{VOCAB}.out").read_bytes()
    return parse_vectors(inp, out)


def test_parsing_agrees_with_tiktoken(vectors, reference):
    """Guard the parser: the reference tokenizer reproduces every line of the .out file."""
    enc = reference("r50k_base")
    texts = [text for text, _ in vectors]
    assert len(vectors) == 46
    # Inputs that only a faithful parse keeps: empty, whitespace-only, newline-only.
    assert "" in texts and " " in texts and "\n\n\n" in texts and "\t\n" in texts
    assert all(enc.encode(text) == ids for text, ids in vectors)


# 46 inputs in the fixture; indices are stable because the file is pinned by SHA256SUMS.
@pytest.mark.parametrize("index", range(46))
@pytest.mark.parametrize("name", ["r50k_base", "gpt2"])
def test_gpt2_vector(vectors, index, name):
    text, expected = vectors[index]
    tok = tokstream.load(name)
    assert tok.encode(text) == expected, f"input {index}: {text!r}"
    assert tok.encode_ordinary(text) == expected
    assert tok.decode(expected) == text

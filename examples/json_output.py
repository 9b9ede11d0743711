"""JSON output: a tool call that follows a JSON Schema, token by token. Offline.

    python examples/json_output.py

The "model" is a seeded random logits vector per step with a nudge towards short
answers (replace ``fake_logits`` with your forward pass). ``json_schema_constraint``
compiles the schema into an exact token constraint: whatever the model prefers, the
mask leaves only tokens after which the JSON can still be completed to a valid
instance, so sampling until EOS always yields a call with a known tool name, every
required argument, ``days`` in 1..14, a ``city`` of at most 24 characters and a
``unit`` from the enum.
"""

from __future__ import annotations

import json

import numpy as np

import tokstream
from tokstream.constrain.json_schema import json_schema_constraint

tok = tokstream.load("default")  # o200k_base, embedded
EOS = tok.special_tokens["<|endoftext|>"]
masker = tokstream.TokenMasker(tok)
rng = np.random.default_rng(0)

# A tool call, as function-calling APIs describe one.
TOOL_CALL = {
    "type": "object",
    "properties": {
        "name": {"enum": ["get_weather", "get_forecast"]},
        "arguments": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "minLength": 1, "maxLength": 24},
                "days": {"type": "integer", "minimum": 1, "maximum": 14},
                "unit": {"enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city", "days", "unit"],
            "additionalProperties": False,
        },
    },
    "required": ["name", "arguments"],
    "additionalProperties": False,
}

# A random model likes long strings as much as short ones; a real one ends them. Nudge
# the closing quote and EOS up so the toy output reads like an answer.
BIAS = np.zeros(tok.n_vocab, dtype=np.float32)
BIAS[[EOS, *tok.encode('"'), *tok.encode('",')]] = 4.0


def fake_logits() -> np.ndarray:
    """A model's next-token scores (random here, plus the nudge)."""
    return rng.standard_normal(tok.n_vocab).astype(np.float32) + BIAS


def generate(constraint: tokstream.Constraint, max_tokens: int = 300) -> str:
    """Sample until EOS: mask the logits (-inf where refused), softmax, draw."""
    ids: list[int] = []
    for _ in range(max_tokens):
        logits = masker.apply(fake_logits(), constraint)
        p = np.exp(logits - logits.max())
        t = int(rng.choice(tok.n_vocab, p=p / p.sum()))
        if t == EOS:  # only allowed once the JSON is complete
            break
        assert constraint.accept(t)
        ids.append(t)
    return tok.decode(ids)


def main() -> None:
    # whitespace="compact": no whitespace between tokens (the default allows JSON
    # whitespace after { [ : , and after values, at most 20 characters at one place).
    constraint = json_schema_constraint(tok, TOOL_CALL, eos_id=EOS, whitespace="compact")
    for _ in range(3):
        text = generate(constraint.fork())  # fork: a fresh copy of the start state
        print(text)
        # A structural check (the jsonschema package would do the full validation).
        call = json.loads(text)
        args = call["arguments"]
        assert call["name"] in ("get_weather", "get_forecast")
        assert set(args) == {"city", "days", "unit"}
        # JSON Schema's "integer" is a number with no fractional part: 11 or 11.0.
        assert float(args["days"]).is_integer() and 1 <= args["days"] <= 14
        assert isinstance(args["city"], str) and 1 <= len(args["city"]) <= 24
        assert args["unit"] in ("celsius", "fahrenheit")
    print("all three calls are valid")


if __name__ == "__main__":
    main()

"""examples/token_healing.py: it runs as a user runs it, and what it shows is true.

The claim of the example, checked with tiktoken's ids: after healing, prompt plus
generation is the canonical tokenization of the final text (what a model sees in
training), and that text starts with the whole prompt.
"""

from __future__ import annotations

import subprocess
import sys
from types import ModuleType

from helpers import REPO, load_example

SCRIPT = REPO / "examples" / "token_healing.py"


def _load() -> ModuleType:
    return load_example("token_healing")


def test_runs_offline() -> None:
    proc = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count("reproduces the removed text: True") == len(_load().PROMPTS)


def test_healed_generation_is_canonical(reference) -> None:  # type: ignore[no-untyped-def]
    example = _load()
    enc = reference("o200k_base")
    import tokstream
    from tokstream.constrain import heal

    tok = tokstream.load("default")
    model = example.NgramModel(tok, example.CORPUS)
    for prompt in example.PROMPTS:
        prompt_ids = tok.encode(prompt)
        assert prompt_ids == enc.encode(prompt)
        healing = heal(tok, prompt_ids, max_backoff=2)
        assert healing.removed >= 1
        assert enc.decode_bytes(prompt_ids[len(healing.prompt_ids) :]) == healing.prefix

        healed = healing.prompt_ids + example.generate(tok, model, healing.prompt_ids, healing)
        text = enc.decode(healed)
        assert text.startswith(prompt)
        assert enc.encode(text) == healed

        # Unhealed, the toy model is lost after a boundary its corpus never had.
        plain = prompt_ids + example.generate(tok, model, prompt_ids)
        assert enc.decode(plain) != text

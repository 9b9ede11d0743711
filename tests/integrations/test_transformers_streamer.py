"""``TokstreamStreamer`` under a real transformers ``generate``: the streamed text is
exactly the decode of the ids, checked against tokstream's ``tok.decode`` and against
transformers' own tokenizer (``PreTrainedTokenizerFast`` over the same tokenizer.json).

The models are tiny random GPT-2s whose vocabulary is the fixture tokenizer's (GPT-2,
Llama 3, Mistral 7B), so random ids exercise the real decoders: byte-level for GPT-2
and Llama 3, SentencePiece-style pieces (``▁``, byte fallback) for Mistral. Needs
torch and transformers (optional extras, absent in CI: the module skips there) and the
fixture files (skips when absent).
"""

from __future__ import annotations

import functools
import threading
from typing import Any

import pytest
from helpers import fixture_file, fixture_tokenizer

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import tokstream
from tokstream.integrations.transformers import TokstreamIteratorStreamer, TokstreamStreamer

#: fixture tokenizer id -> (EOS id, prompt text, whether the prompt gets a BOS)
CASES = {
    "hf/gpt2_tokenizer.json": (50256, "Hello, world", False),
    "hf/llama3_tokenizer.json": (128001, "Hello, world", False),
    "hf/mistral_7b_v1_tokenizer.json": (2, "Hello, world", True),
}
TIDS = list(CASES)


@functools.cache
def _model(vocab_size: int) -> Any:
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=vocab_size, n_positions=64, n_embd=16, n_layer=1, n_head=2)
    return transformers.GPT2LMHeadModel(config).eval()


@functools.cache
def _hf(tid: str) -> Any:
    return transformers.PreTrainedTokenizerFast(tokenizer_file=str(fixture_file(tid)))


class _Case:
    """A fixture tokenizer, its HF twin, a tiny model over its vocabulary and a prompt."""

    def __init__(self, tid: str) -> None:
        self.tok = fixture_tokenizer(tid)
        self.hf = _hf(tid)
        self.eos, text, bos = CASES[tid]
        self.prompt = self.tok.encode(text, add_special_tokens=bos)
        self.model = _model(self.tok.n_vocab)

    def generate(self, streamer: Any = None, *, seed: int | None = None, **kwargs: Any) -> list[int]:
        """The new ids of ``generate`` on the prompt (greedy unless ``seed``: sampling)."""
        if seed is not None:
            torch.manual_seed(seed)
            kwargs.setdefault("do_sample", True)
        kwargs.setdefault("max_new_tokens", 16)
        out = self.model.generate(
            torch.tensor([self.prompt]),
            attention_mask=torch.ones(1, len(self.prompt), dtype=torch.long),
            streamer=streamer,
            eos_token_id=self.eos,
            pad_token_id=self.eos,
            **kwargs,
        )
        new: list[int] = out[0, len(self.prompt) :].tolist()
        return new

    def continuation(self, ids: list[int], skip: bool = False) -> str:
        """The exact text ``ids`` add after the prompt: ``tok.decode(prompt + ids)`` minus
        ``tok.decode(prompt)`` (the prompts here end on a whole character)."""
        full = self.tok.decode(self.prompt + ids, skip_special_tokens=skip)
        head = self.tok.decode(self.prompt, skip_special_tokens=skip)
        assert full.startswith(head)
        return full[len(head) :]


class _Collect:
    """A callback that records ``(text, final)`` calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, bool]] = []

    def __call__(self, text: str, final: bool) -> None:
        self.calls.append((text, final))

    @property
    def text(self) -> str:
        assert [f for _, f in self.calls].count(True) == 1 and self.calls[-1][1], "one final call, the last"
        return "".join(t for t, _ in self.calls)


@pytest.mark.slow
@pytest.mark.parametrize("skip_special_tokens", [False, True])
@pytest.mark.parametrize("skip_prompt", [False, True])
@pytest.mark.parametrize("seed", [None, 1, 2])  # None: greedy; else sampling with that seed
@pytest.mark.parametrize("tid", TIDS)
def test_streamed_text_is_the_decode(tid: str, seed: int | None, skip_prompt: bool, skip_special_tokens: bool) -> None:
    """The streamed pieces join to ``tok.decode`` of the ids (the continuation only with
    ``skip_prompt``), and that is what transformers' tokenizer decodes too."""
    case = _Case(tid)
    got = _Collect()
    streamer = TokstreamStreamer(
        case.tok, skip_prompt=skip_prompt, skip_special_tokens=skip_special_tokens, callback=got
    )
    ids = case.generate(streamer, seed=seed)
    assert streamer.prompt_ids == case.prompt and streamer.generated_ids == ids
    everything = case.prompt + ids
    hf_full = case.hf.decode(everything, skip_special_tokens=skip_special_tokens)
    assert case.tok.decode(everything, skip_special_tokens=skip_special_tokens) == hf_full
    if skip_prompt:
        want = case.continuation(ids, skip_special_tokens)
        assert hf_full == case.hf.decode(case.prompt, skip_special_tokens=skip_special_tokens) + want
    else:
        want = hf_full
    assert got.text == want == streamer.text


def test_textstreamer_drops_the_sentencepiece_space() -> None:
    """On Mistral, the first generated token "▁world" continues the prompt as " world":
    transformers' ``TextStreamer(skip_prompt=True)`` decodes the generated ids alone, so
    the ``▁`` is a leading one that the decoder strips and the space is lost; ours keeps it."""
    case = _Case("hf/mistral_7b_v1_tokenizer.json")
    world = case.tok.token_to_id("▁world")
    assert world is not None

    def force_world_first(input_ids: Any, scores: Any) -> Any:
        if input_ids.shape[1] == len(case.prompt):
            scores[:, :world] = float("-inf")
            scores[:, world + 1 :] = float("-inf")
        return scores

    pieces: list[str] = []

    class Recorder(transformers.TextStreamer):  # type: ignore[misc]
        def on_finalized_text(self, text: str, stream_end: bool = False) -> None:
            pieces.append(text)

    theirs = Recorder(case.hf, skip_prompt=True, skip_special_tokens=True)
    processors = transformers.LogitsProcessorList([force_world_first])
    ids = case.generate(theirs, logits_processor=processors, max_new_tokens=6)
    got = _Collect()
    ours = TokstreamStreamer(case.tok, skip_prompt=True, skip_special_tokens=True, callback=got)
    assert case.generate(ours, logits_processor=processors, max_new_tokens=6) == ids
    exact = case.continuation(ids, skip=True)
    assert ids[0] == world and exact.startswith(" world")
    hf_full = case.hf.decode(case.prompt + ids, skip_special_tokens=True)
    assert hf_full == case.hf.decode(case.prompt, skip_special_tokens=True) + exact  # HF's own decode agrees
    assert "".join(pieces) == exact[1:]  # TextStreamer: the space is gone
    assert got.text == exact


@pytest.mark.parametrize("tid", TIDS)
def test_iterator_streamer_in_a_thread(tid: str) -> None:
    """``generate`` in a thread, the text read by iterating; the end ends the iteration."""
    case = _Case(tid)
    streamer = TokstreamIteratorStreamer(case.tok, skip_prompt=True, timeout=60)
    result: list[list[int]] = []
    thread = threading.Thread(target=lambda: result.append(case.generate(streamer, seed=3)))
    thread.start()
    pieces = list(streamer)
    thread.join(60)
    assert not thread.is_alive() and len(result) == 1
    assert all(pieces) and "".join(pieces) == case.continuation(result[0]) == streamer.text


def _stop_in(text: str) -> str:
    """A two-letter ASCII stop string from the middle of ``text`` (the test's choice of
    stop: random models produce no fixed word)."""
    for k in range(len(text) // 3, len(text) - 1):
        if text[k : k + 2].isascii() and text[k : k + 2].isalnum():
            return text[k : k + 2]
    pytest.fail(f"no ASCII letters in {text!r}")


@pytest.mark.slow
@pytest.mark.parametrize("skip_prompt", [True, False])
@pytest.mark.parametrize("include_stop", [False, True])
@pytest.mark.parametrize("tid", TIDS)
def test_stop_strings(tid: str, include_stop: bool, skip_prompt: bool) -> None:
    """The text ends before the stop (at its end with ``include_stop``); a stop in the
    prompt does not count; ``generate`` goes on, or ends at the stop with
    ``stopping_criteria()``."""
    case = _Case(tid)
    ids = case.generate(max_new_tokens=24)
    whole = case.continuation(ids)
    stop = _stop_in(whole)
    cut = whole.index(stop) + (len(stop) if include_stop else 0)
    head = "" if skip_prompt else case.tok.decode(case.prompt)
    prompt_stop = case.tok.decode(case.prompt)[-3:]  # a stop found only in the prompt: ignored
    got = _Collect()
    streamer = TokstreamStreamer(
        case.tok, skip_prompt=skip_prompt, stop=[stop, prompt_stop], include_stop=include_stop, callback=got
    )
    assert case.generate(streamer, max_new_tokens=24) == ids  # generate did not stop
    assert got.text == head + whole[:cut]
    assert streamer.stopped and streamer.stop_reason == stop
    # With the criterion, generate ends on the id that completed the stop.
    got = _Collect()
    streamer = TokstreamStreamer(case.tok, skip_prompt=skip_prompt, stop=stop, include_stop=include_stop, callback=got)
    criteria = transformers.StoppingCriteriaList([streamer.stopping_criteria()])
    short = case.generate(streamer, max_new_tokens=24, stopping_criteria=criteria)
    assert short == ids[: len(short)] and len(short) < len(ids)
    assert stop in case.continuation(short) and stop not in case.continuation(short[:-1])
    assert got.text == head + whole[:cut] and streamer.generated_ids == short


@pytest.mark.parametrize("tid", TIDS)
def test_stop_token_ids(tid: str) -> None:
    """A stop id ends the text before its own: what was held back comes out then."""
    case = _Case(tid)
    ids = case.generate(seed=4)
    j = next(k for k in range(3, len(ids)) if ids.index(ids[k]) == k)  # a stop id first seen at k
    got = _Collect()
    streamer = TokstreamStreamer(case.tok, skip_prompt=True, stop_token_ids=[ids[j]], callback=got)
    assert case.generate(streamer, seed=4) == ids
    assert got.text == case.continuation(ids[:j]) and streamer.stopped
    assert streamer.generated_ids == ids[: j + 1]  # the stop id included


def test_streamer_serves_generate_calls_one_after_another() -> None:
    case = _Case("hf/gpt2_tokenizer.json")
    got = _Collect()
    streamer = TokstreamStreamer(case.tok, skip_prompt=True, callback=got)
    first = case.generate(streamer, seed=5)
    assert got.text == case.continuation(first) == streamer.text
    got.calls.clear()
    second = case.generate(streamer, seed=6)
    assert first != second and got.text == case.continuation(second) == streamer.text


def test_default_on_text_prints(capsys: pytest.CaptureFixture[str]) -> None:
    """Without a callback the text is printed, with a newline at the end (like TextStreamer)."""
    case = _Case("hf/gpt2_tokenizer.json")
    streamer = TokstreamStreamer(case.tok, skip_prompt=True)
    ids = case.generate(streamer)
    assert capsys.readouterr().out == case.continuation(ids) + "\n"


def test_errors() -> None:
    tok = tokstream.load("r50k_base")
    streamer = TokstreamStreamer(tok, callback=lambda text, final: None)
    with pytest.raises(ValueError, match="streams one sequence, got 2 rows"):
        streamer.put(torch.tensor([[1, 2], [3, 4]]))
    with pytest.raises(ValueError, match="has not seen the prompt"):
        streamer.stopping_criteria()(torch.tensor([[1, 2]]), None)
    with pytest.raises(ValueError):
        TokstreamStreamer(tok, stop="")  # an empty stop string, refused at once
    # Plain lists and numpy-like shapes are taken too: (seq,), (1, n), a 0-d tensor.
    got = _Collect()
    streamer = TokstreamStreamer(tok, callback=got)
    hello = tok.encode("Hello world")
    streamer.put(hello[:1])
    streamer.put(torch.tensor(hello[1]))
    streamer.end()
    assert got.text == "Hello world"

"""Training: tokstream's trainers against Hugging Face ``BpeTrainer`` and the
``sentencepiece`` unigram trainer, on the same corpus in the same run.

Run ``python bench/train.py`` from the repository root (``quick`` as the first argument:
vocab 1,000 and 2,000 only). Each measurement runs in a fresh child process, so its peak
memory (``ru_maxrss``) is its own. Printed per case: training time, peak memory, and
held-out bytes per token (the corpus is split 90/10 by position; bytes of the original
held-out text over the number of ids).

- **BPE**: ours (byte-level, o200k pattern, ``min_frequency=2``) against ``BpeTrainer``
  with the same pattern (``Split`` + ``ByteLevel``) and the 256-byte initial alphabet.
- **Unigram**: ours against ``sentencepiece`` (``model_type=unigram``), made lossless on
  both sides: newlines mapped to a visible symbol and ``remove_extra_whitespaces=False``
  for sentencepiece, whose default would otherwise drop newlines and collapse spaces.
- **Linearity**: our BPE merge time (after counting) on 10% of the corpus against all of
  it.

Needs ``../shared/fixtures/corpora/shakespeare_gutenberg_modern.txt``, ``tokenizers`` and
``sentencepiece``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(os.environ.get("TOKSTREAM_FIXTURES", Path(__file__).resolve().parents[2] / "shared" / "fixtures"))
CORPUS = FIXTURES / "corpora" / "shakespeare_gutenberg_modern.txt"

# Each child: read the corpus, train, measure; print one JSON line.
CHILD = r"""
import json, resource, sys, time
kind, vocab, fraction = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
text = open(sys.argv[4], encoding="utf-8").read()
cut = int(len(text) * 0.9)
train, held = text[:int(cut * fraction)], text[cut:]
lines = train.splitlines(keepends=True)
out = {}
if kind == "ours-bpe":
    from tokstream.train.bpe import train_bpe
    from tokstream.train.counting import count_pretokens
    t = time.perf_counter(); counts = count_pretokens(lines); out["count_s"] = time.perf_counter() - t
    t = time.perf_counter(); tok = train_bpe(counts, vocab); out["merge_s"] = time.perf_counter() - t
    out["train_s"] = out["count_s"] + out["merge_s"]
    ids = tok.encode(held, disallowed_special=())
    assert tok.decode(ids) == held
elif kind == "hf-bpe":
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from tokstream.pre_tokenizers import PATTERNS, oniguruma_spelling
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(oniguruma_spelling(PATTERNS["o200k_base"])), "isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab, min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    t = time.perf_counter(); tok.train_from_iterator(lines, trainer); out["train_s"] = time.perf_counter() - t
    ids = tok.encode(held).ids
elif kind == "ours-unigram":
    from tokstream.train.unigram import train_unigram
    t = time.perf_counter(); tok = train_unigram(lines, vocab); out["train_s"] = time.perf_counter() - t
    ids = tok.encode(held, disallowed_special=())
    assert tok.decode(ids) == held
elif kind == "spm-unigram":
    import io, sentencepiece as spm
    NL = "\u2424"  # newlines as a visible symbol: sentencepiece would drop them
    model = io.BytesIO()
    t = time.perf_counter()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter([l.replace("\n", NL) for l in lines]), model_writer=model,
        model_type="unigram", vocab_size=vocab, character_coverage=1.0,
        remove_extra_whitespaces=False, normalization_rule_name="identity",
        input_sentence_size=10**8, max_sentence_length=1 << 20, byte_fallback=False,
        user_defined_symbols=[NL], minloglevel=2,
    )
    out["train_s"] = time.perf_counter() - t
    sp = spm.SentencePieceProcessor(model_proto=model.getvalue())
    ids = [i for l in held.splitlines(keepends=True) for i in sp.encode(l.replace("\n", NL))]
out["held_bytes_per_token"] = len(held.encode("utf-8")) / len(ids)
out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def run(kind: str, vocab: int, fraction: float = 1.0) -> dict[str, float]:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, kind, str(vocab), str(fraction), str(CORPUS)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{kind} at {vocab} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> int:
    if not CORPUS.is_file():
        print(f"corpus not found at {CORPUS}; set TOKSTREAM_FIXTURES", file=sys.stderr)
        return 1
    sizes = [1000, 2000] if sys.argv[1:2] == ["quick"] else [1000, 2000, 8000]
    mb = CORPUS.stat().st_size / 1e6
    print(f"corpus {CORPUS.name}: {mb:.1f} MB, train on the first 90%, measure on the last 10%")
    for vocab in sizes:
        ours, ref = run("ours-bpe", vocab), run("hf-bpe", vocab)
        print(
            f"train  bpe      vocab {vocab:5d}  ours {ours['train_s']:6.2f} s {ours['peak_mb']:5.0f} MB "
            f"{ours['held_bytes_per_token']:.3f} B/tok   tokenizers {ref['train_s']:6.2f} s {ref['peak_mb']:5.0f} MB "
            f"{ref['held_bytes_per_token']:.3f} B/tok   time ratio {ours['train_s'] / ref['train_s']:5.2f}x "
            f"(target <= 3)  compression {ours['held_bytes_per_token'] / ref['held_bytes_per_token']:.4f} (target >= 0.99)",
            flush=True,
        )
    for vocab in sizes:
        try:
            ours = run("ours-unigram", vocab)
        except SystemExit as e:
            print(f"train  unigram  vocab {vocab:5d}  ours failed: {e}")
            continue
        ref = run("spm-unigram", vocab)
        print(
            f"train  unigram  vocab {vocab:5d}  ours {ours['train_s']:6.2f} s {ours['peak_mb']:5.0f} MB "
            f"{ours['held_bytes_per_token']:.3f} B/tok   sentencepiece {ref['train_s']:6.2f} s {ref['peak_mb']:5.0f} MB "
            f"{ref['held_bytes_per_token']:.3f} B/tok   time ratio {ours['train_s'] / ref['train_s']:5.2f}x "
            f"(target <= 5)  compression {ours['held_bytes_per_token'] / ref['held_bytes_per_token']:.4f} (target >= 0.98)",
            flush=True,
        )
    small, big = run("ours-bpe", 2000, 0.1), run("ours-bpe", 2000, 1.0)
    print(
        f"train  bpe      linearity at 2000: merge time 10% {small['merge_s']:.2f} s, 100% {big['merge_s']:.2f} s, "
        f"x{big['merge_s'] / small['merge_s']:.2f} (target <= 12); counting {small['count_s']:.2f} s -> {big['count_s']:.2f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

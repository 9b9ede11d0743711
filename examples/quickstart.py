"""tokstream in one page: copy what you need. Runs offline (the encodings are embedded).

python examples/quickstart.py
"""

from __future__ import annotations

import tokstream

# The embedded default encoding (o200k_base, GPT-4o's); any of cl100k_base, o200k_base,
# r50k_base (alias gpt2), p50k_base, or a path to a .tiktoken file works the same way.
tok = tokstream.load("default")
print(tok)

# Text to ids and back.
ids = tok.encode("Hello, world! 👋")
print("ids:", ids)
print("text:", tok.decode(ids))

# Special tokens are safe by default: their literal text in untrusted input is an error,
# not a silent control token. Choose explicitly what it means.
text = "user says <|endoftext|>"
try:
    tok.encode(text)
except tokstream.SpecialTokenError as e:  # a ValueError, as in tiktoken
    print("error:", e)
# ... as the special token itself,
print("as the token:", tok.encode(text, allowed_special={"<|endoftext|>"}))
# ... or as plain text (encode_ordinary does the same for every special token).
print("as plain text:", tok.encode(text, disallowed_special=()))
assert tok.encode(text, disallowed_special=()) == tok.encode_ordinary(text)

# Offsets: (start, end) in code points of the original string. A character split over
# several byte-level tokens (the emoji) is covered by each of them.
text = "naïve 👋"
ids, offsets = tok.encode_with_offsets(text)
for token_id, (start, end) in zip(ids, offsets):
    print(f"{token_id:>7} {tok.token_bytes(token_id)!r:<16} {text[start:end]!r}")

# Counting, e.g. to fit a prompt into a context window.
prompt = "Summarize the following text in one sentence."
print("tokens:", len(tok.encode(prompt)))
print("batch:", [len(ids) for ids in tok.encode_batch(["one", "two words", "three more words"])])

# Out-of-range ids are an error that names the id, never a wrong string.
try:
    tok.decode([tok.n_vocab])
except tokstream.InvalidTokenIdError as e:
    print("error:", e)

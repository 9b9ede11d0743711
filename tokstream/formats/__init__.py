"""Tokenizer files: each format is read into (and written from) the core's stages.

- ``tiktoken.py``: rank files (``<base64 token> <rank>`` lines), checked line by line;
- ``registry.py``: the four embedded OpenAI encodings, sha256-checked, and ``load``;
- ``hf_json.py``: Hugging Face ``tokenizer.json``: the table from its keys to the stage
  packages' ``from_json`` dispatchers, and ``tokenizers``' rule for added-token ids;
- ``sentencepiece.py``: the ``.model`` protobuf, read without ``protobuf``;
- ``spm_pipeline.py``: the pipeline a ``.model`` implies.

Readers return pipelines or ranks, never a ``Tokenizer``: ``Tokenizer.from_*`` import
them lazily and wrap the result, so no import runs in a circle.
"""

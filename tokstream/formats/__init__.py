"""Tokenizer file formats: tiktoken rank files and the embedded registry."""

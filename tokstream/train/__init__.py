"""Training: counting pre-tokens (the map step) and the BPE, WordPiece and Unigram
trainers. Trainers produce what the models consume and return a ``Tokenizer``."""

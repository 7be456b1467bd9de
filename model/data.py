"""Corpora and splits. The checksummed loader arrives with the tiny-Shakespeare pipeline."""


def split(tokens, train_fraction: float = 0.9):
    """A contiguous split: the first int(0.9 N) tokens train, the rest are held out."""
    n = int(train_fraction * len(tokens))
    return tokens[:n], tokens[n:]

"""Byte-level BPE-1024 on tiny Shakespeare: our pure-Python BPE beside Rust `tokenizers`,
timed in one run on this machine. Prints figures; asserts nothing.

    python benchmarks/bpe_speed.py
"""
import time

from suite import settings

settings.load()  # an entry point: CLAIMS_* read here, before the catalogue's seeds

from experiments.bpe import train_bpe  # noqa: E402
from experiments.data import load_text  # noqa: E402


def timed(f, *a):
    t = time.perf_counter()
    r = f(*a)
    return r, time.perf_counter() - t


def main():
    text = load_text("tinyshakespeare")
    bpe, t_train = timed(train_bpe, text, 1024)
    ids, t_enc = timed(bpe.encode, text)
    rows = [("ours (experiments/bpe.py)", t_train, t_enc, len(ids))]
    try:
        import tokenizers as tk
        tok = tk.Tokenizer(tk.models.BPE())
        tok.pre_tokenizer = tk.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        trainer = tk.trainers.BpeTrainer(vocab_size=1024, show_progress=False,
                                         initial_alphabet=tk.pre_tokenizers.ByteLevel.alphabet())
        _, t_tr = timed(tok.train_from_iterator, [text], trainer)
        enc, t_en = timed(tok.encode, text)
        rows.append((f"tokenizers {tk.__version__}", t_tr, t_en, len(enc.ids)))
    except ImportError:
        print("tokenizers is not installed: no comparison")
    print(f"{'':24s} {'train s':>8s} {'encode s':>9s} {'tokens':>8s}")
    for name, a, b, n in rows:
        print(f"{name:24s} {a:8.2f} {b:9.2f} {n:8,d}")
    print("document: 459,760 tokens; targets: train <= 5 s, encode <= 7 s")


if __name__ == "__main__":
    main()

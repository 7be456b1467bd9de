"""Corpora: found on disk or downloaded once, and never used unless their sha256 matches.

Where a corpus is looked for, in order:
  1. ``<data folder>/<file>``, the folder a caller names (``use_places``);
  2. the cache folder (``use_places``; by default ``$XDG_CACHE_HOME/claimcheck``), under ``data/``;
  3. its origin URL, downloaded into that cache.
Whatever goes wrong (no file, no network, a checksum mismatch) raises ``CorpusUnavailable``
with one line that says what is wrong and how to fix it. Tests turn it into a skip.
"""
import hashlib
import os
import io
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path


class CorpusUnavailable(RuntimeError):
    """The corpus cannot be had, or is not the one the claims were made on."""


@dataclass(frozen=True)
class Corpus:
    name: str
    filename: str
    url: str
    sha256: str
    chars: int  # characters after UTF-8 decoding


CORPORA = {
    "tinyshakespeare": Corpus(
        "tinyshakespeare", "tinyshakespeare.txt",
        "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt",
        "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed", 1_115_394),
    "pan-tadeusz": Corpus(
        "pan-tadeusz", "pan-tadeusz.txt",
        "https://wolnelektury.pl/media/book/txt/pan-tadeusz.txt",
        "d7dceb593b1ad7e1c38985dad54abf5930c831a3442acf3254e74debfa419719", 446_976),
}


@dataclass(frozen=True)
class Places:
    """Where corpora are found and what is cached is kept: the caller's folders."""
    data_dir: Path | None = None   # a folder holding the corpora' files, looked in first
    cache_dir: Path | None = None  # None: $XDG_CACHE_HOME/claimcheck (~/.cache/claimcheck)


_places = Places()


def use_places(places: Places) -> None:
    """Set the folders this module reads (an entry point's call)."""
    global _places
    _places = places


def places() -> Places:
    return _places


def cache_dir() -> Path:
    """Where downloads, trained tokenizers and training runs are kept between sessions."""
    if _places.cache_dir:
        return Path(_places.cache_dir)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "claimcheck"


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _checked(path: Path, c: Corpus) -> Path:
    got = sha256_of(path)
    if got != c.sha256:
        raise CorpusUnavailable(f"{path}: sha256 {got[:12]}… is not the expected {c.sha256[:12]}… "
                                f"for {c.name}; replace the file with the one from {c.url}")
    return path


def _download(c: Corpus, dest: Path, timeout: float) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + f".part{os.getpid()}")
    try:
        with urllib.request.urlopen(c.url, timeout=timeout) as r, open(part, "wb") as f:
            f.write(r.read())
    except (urllib.error.URLError, OSError, ValueError) as e:
        part.unlink(missing_ok=True)
        reason = getattr(e, "reason", e)
        raise CorpusUnavailable(f"{c.filename} is not in the data folder or the cache, and "
                                f"downloading {c.url} failed ({reason}); name a data folder "
                                f"holding {c.filename}") from None
    try:
        _checked(part, c)
    except CorpusUnavailable:
        part.unlink(missing_ok=True)
        raise CorpusUnavailable(f"downloaded {c.url}, but its sha256 does not match the pinned "
                                f"{c.sha256[:12]}…; the origin changed: get the pinned revision "
                                "into the data folder") from None
    part.replace(dest)
    return dest


def corpus_path(name: str, *, download: bool = True, timeout: float = 30.0) -> Path:
    """The checked path of a corpus; see the module docstring for where it is looked for."""
    if name not in CORPORA:
        raise KeyError(f"unknown corpus {name!r}; known: {', '.join(CORPORA)}")
    c = CORPORA[name]
    folder = _places.data_dir
    if folder and (Path(folder) / c.filename).is_file():
        return _checked(Path(folder) / c.filename, c)
    cached = cache_dir() / "data" / c.filename
    if cached.is_file():
        return _checked(cached, c)
    if not download:
        raise CorpusUnavailable(f"{c.filename} is in neither the data folder ({folder or 'none named'}) "
                                f"nor {cached.parent}; name a data folder holding it, or allow the download")
    return _download(c, cached, timeout)


def load_text(name: str, **kw) -> str:
    return corpus_path(name, **kw).read_text(encoding="utf-8")


def split(tokens, train_fraction: float = 0.9):
    """A contiguous split: the first int(0.9 N) tokens train, the rest are held out."""
    n = int(train_fraction * len(tokens))
    return tokens[:n], tokens[n:]


def write_atomic(path: Path, data: bytes) -> None:
    """Write to a temporary file beside ``path`` and rename it over: a reader (another xdist
    worker, or the next session after a kill) sees the old file or the whole new one."""
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    tmp.write_bytes(data)
    tmp.replace(path)


def _bpe_code() -> str:
    """The tokenizer's source: a change to what it learns invalidates the cached merges."""
    import hashlib
    return hashlib.sha256((Path(__file__).parent / "bpe.py").read_bytes()).hexdigest()[:12]


def bpe_tokens(name: str = "tinyshakespeare", vocab_size: int = 1024):
    """(tokens as an int64 numpy array, the trained BPE), trained once per (corpus, vocab).

    The merges and the encoded corpus are cached under ``cache_dir()/bpe``, keyed by the
    corpus sha256 and the vocabulary size; a file lock makes parallel workers train it once.
    """
    import numpy as np
    from filelock import FileLock

    from .bpe import BPE, train_bpe

    path = corpus_path(name)
    key = f"{CORPORA[name].sha256[:16]}-v{vocab_size}-bpe{_bpe_code()}"
    d = cache_dir() / "bpe"
    d.mkdir(parents=True, exist_ok=True)
    merges, toks = d / f"{key}.json", d / f"{key}.npy"
    with FileLock(str(d / f"{key}.lock")):
        if merges.is_file() and toks.is_file():
            return np.load(toks), BPE.from_json(merges.read_text())
        text = path.read_text(encoding="utf-8")
        bpe = train_bpe(text, vocab_size)
        ids = np.asarray(bpe.encode(text), dtype=np.int64)
        buf = io.BytesIO()
        np.save(buf, ids)
        write_atomic(toks, buf.getvalue())
        write_atomic(merges, bpe.to_json().encode())
        return ids, bpe

"""The caches as components: run keys, memo, the run cache, the tokenizer cache, downloads.

What a cached result is named by (``RunSpec.key``, ``memo_key``), where it is kept under
``cache_dir()``, that it is computed once under its key's lock and read back after, that a job
another worker holds is skipped and then waited for, and that a corpus is downloaded and read
the way data.py's docstring says. Every test points the cache at ``tmp_path`` and uses a toy
corpus or a stub loader: no real corpus, no network, no training (train() is a stub here; it is
tested in test_experiments_units.py). Expected keys are rebuilt by hand from the recipe the
docstrings state.
"""
import dataclasses
import hashlib
import io
import json
import os
import sys
import threading
from pathlib import Path

import numpy as np
from dataclasses import replace

import pytest
import torch
from filelock import FileLock, Timeout

from experiments import bpe as bpe_mod
from experiments import data, runs
from experiments.bpe import BPE
from experiments.data import CorpusUnavailable
from experiments.train import TrainConfig
from model.gpt import GPTConfig

pytestmark = pytest.mark.fast

TINY = GPTConfig(vocab_size=7, block_size=4, d_model=8, n_head=2)
STEPS2 = TrainConfig(steps=2, batch_size=2, lr=1e-2)


def _flat(obj) -> dict:
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}


def _sha(blob: bytes) -> str:
    return hashlib.sha256(blob).hexdigest()


def _corpus(monkeypatch, tmp_path, name: str, content: bytes) -> data.Corpus:
    """A toy corpus in the data folder, pinned to its own sha256; the cache at a folder that does
    not exist yet, two levels down (whoever writes into it must make the parents)."""
    c = data.Corpus(name, f"{name}.txt", f"http://example.invalid/{name}.txt", _sha(content), len(content))
    monkeypatch.setitem(data.CORPORA, name, c)
    (tmp_path / "data").mkdir(exist_ok=True)
    (tmp_path / "data" / c.filename).write_bytes(content)
    monkeypatch.setattr(data, "_places", replace(data.places(), data_dir=tmp_path / "data"))
    monkeypatch.setattr(data, "_places", replace(data.places(), cache_dir=tmp_path / "deep" / "cache"))
    return c


def _lock_is_held(lock: Path) -> bool:
    """Whether someone holds this lock file (a second FileLock, non-blocking, is refused)."""
    try:
        with FileLock(str(lock), timeout=0):
            return False
    except Timeout:
        return True


# ---- runs.py: keys ---------------------------------------------------------------------------------

def test_a_run_key_is_the_hash_of_the_specs_fields_corpus_sha_device_type_torch_and_code(monkeypatch):
    """The key recipe, rebuilt by hand: sha256 of the sorted JSON of every field but the label,
    with the device reduced to its type, plus the corpus sha256, torch's version and the code
    hash, cut to 20 hex digits. A change to the recipe orphans every cached run: it must be
    deliberate."""
    monkeypatch.setattr(runs, "code_version", lambda: "c0dec0dec0de")
    monkeypatch.setattr(torch, "__version__", "9.8.7+test")
    cfg = TrainConfig(steps=5, batch_size=3, lr=2e-3, betas=(0.8, 0.9))
    spec = runs.RunSpec(TINY, cfg, seeds=(3, 1), corpus="pan-tadeusz", vocab_size=300, train_slice=0.25,
                        device="cuda:1", step="compiled", label="not hashed")
    by_hand = {"model": _flat(TINY), "train": _flat(cfg), "seeds": [3, 1], "corpus": "pan-tadeusz",
               "vocab_size": 300, "train_slice": 0.25, "device": "cuda", "step": "compiled",
               "corpus_sha": data.CORPORA["pan-tadeusz"].sha256, "torch": "9.8.7+test", "code": "c0dec0dec0de"}
    assert spec.key() == _sha(json.dumps(by_hand, sort_keys=True).encode())[:20]


def test_a_run_key_changes_with_the_corpus_contents_device_type_torch_and_code_not_the_label(monkeypatch):
    """What test_experiments_units does not vary: the corpus's pinned sha256 under the same name,
    the device type (cuda vs cpu; the index is not part of it), torch's version, the code hash;
    a spec of numpy seeds (as from np.arange) still has a key."""
    spec = runs.RunSpec(TINY, STEPS2, seeds=(0, 1))
    base = spec.key()
    assert runs.RunSpec(TINY, STEPS2, seeds=(0, 1), device="cuda").key() != base
    assert runs.RunSpec(TINY, STEPS2, seeds=(0, 1), device="cuda:1").key() == \
        runs.RunSpec(TINY, STEPS2, seeds=(0, 1), device="cuda").key()
    with monkeypatch.context() as m:
        m.setitem(runs.CORPORA, "tinyshakespeare",
                  dataclasses.replace(runs.CORPORA["tinyshakespeare"], sha256="0" * 64))
        assert spec.key() != base
    with monkeypatch.context() as m:
        m.setattr(torch, "__version__", "0.0.0")
        assert spec.key() != base
    with monkeypatch.context() as m:
        m.setattr(runs, "code_version", lambda: "000000000000")
        assert spec.key() != base
    assert spec.key() == base and dataclasses.replace(spec, label="x").key() == base
    numpy_seeds = runs.RunSpec(TINY, STEPS2, seeds=tuple(np.arange(2)))
    assert numpy_seeds.key() == base  # the same runs: not a second key through str(np.int64(1))
    with pytest.raises(TypeError):
        runs.RunSpec(TINY, STEPS2, seeds=(0, 2.7))


def test_a_memo_key_is_the_hash_of_kind_params_torch_and_code_plus_the_source_module(monkeypatch):
    """memo_key's recipe by hand: sorted JSON of kind, params (non-JSON values as str), torch's
    version and the code hash, the latter extended by the first 12 hex digits of the sha256 of
    the module that defines ``source`` (here this file, read from disk); 20 hex digits."""
    monkeypatch.setattr(runs, "code_version", lambda: "c0dec0dec0de")
    monkeypatch.setattr(torch, "__version__", "9.8.7+test")
    params = {"b": 2, "a": [1, 2]}

    def by_hand(code):
        return _sha(json.dumps({"kind": "unit", "params": params, "torch": "9.8.7+test", "code": code},
                               sort_keys=True).encode())[:20]

    assert runs.memo_key("unit", params) == by_hand("c0dec0dec0de")
    mine = _sha(Path(__file__).read_bytes())[:12]
    here = sys.modules[__name__]
    assert runs.memo_key("unit", params, source=here) == by_hand("c0dec0dec0de" + mine)
    # a function stands for its module
    assert runs.memo_key("unit", params, source=_sha) == runs.memo_key("unit", params, source=here)
    # the order params were written in does not matter; a Path is named by its text
    assert runs.memo_key("unit", {"a": [1, 2], "b": 2}) == runs.memo_key("unit", params)
    assert runs.memo_key("unit", {"p": Path("/x/y")}) == runs.memo_key("unit", {"p": "/x/y"})
    # the code hash enters whether or not a source is given
    with_source = runs.memo_key("unit", params, source=here)
    monkeypatch.setattr(runs, "code_version", lambda: "111111111111")
    assert runs.memo_key("unit", params, source=here) != with_source
    monkeypatch.setattr(torch, "__version__", "0.0.0")
    assert runs.memo_key("unit", params) != by_hand("111111111111")


# ---- runs.py: memo and memo_many ---------------------------------------------------------------------

def test_memo_writes_under_cache_dir_runs_holding_the_keys_lock_while_it_computes(places, tmp_path, monkeypatch):
    """The record goes to cache_dir()/runs/<key>.json, the folders made as needed; compute runs
    while <key>.lock beside it is held, so a second worker waits instead of computing too."""
    cache = tmp_path / "not" / "made" / "yet"
    places(cache_dir=cache)
    held = []
    assert runs.memo("k1", lambda: held.append(_lock_is_held(cache / "runs" / "k1.lock")) or {"v": 1}) == {"v": 1}
    assert held == [True]
    assert [p.name for p in (cache / "runs").glob("*.json")] == ["k1.json"]
    assert json.loads((cache / "runs" / "k1.json").read_text()) == {"v": 1}


@pytest.mark.parametrize("other_finishes", [True, False], ids=["other-writes-B", "other-dies-on-B"])
def test_memo_many_skips_a_job_another_worker_holds_then_waits_for_it(places, tmp_path, monkeypatch, other_finishes):
    """Jobs A (done before), B (another worker holds its lock) and C (new): memo_many must pass
    over A and B without waiting and compute C while B is still held; then read B's record once
    the other worker lets go, or compute B itself if it let go without one. A watchdog releases
    B after 5 s, so a memo_many that waits on B fails instead of hanging."""
    places(cache_dir=tmp_path)
    assert runs.memo("A", lambda: {"v": "A"}) == {"v": "A"}
    other = FileLock(str(tmp_path / "runs" / "B.lock"), thread_local=False)
    other.acquire()
    events = []

    def job(name):
        def compute():
            events.append((name, other.is_locked))
            if name == "C" and other.is_locked:  # the other worker lets go of B now
                if other_finishes:
                    data.write_atomic(tmp_path / "runs" / "B.json", json.dumps({"v": "B by other"}).encode())
                other.release()
            return {"v": name}
        return compute

    watchdog = threading.Timer(5.0, other.release)  # long enough for a loaded CI machine
    watchdog.start()
    try:
        got = runs.memo_many([(k, job(k)) for k in "ABC"])
    finally:
        watchdog.cancel()
        if other.is_locked:
            other.release()
    if other_finishes:
        assert got == [{"v": "A"}, {"v": "B by other"}, {"v": "C"}] and events == [("C", True)]
    else:
        assert got == [{"v": "A"}, {"v": "B"}, {"v": "C"}] and events == [("C", True), ("B", False)]
    assert json.loads((tmp_path / "runs" / "B.json").read_text()) == got[1]
    assert json.loads((tmp_path / "runs" / "C.json").read_text()) == {"v": "C"}


# ---- runs.py: training an arm ------------------------------------------------------------------------

def test_train_an_arm_on_its_corpus_slice_and_label_its_records(monkeypatch):
    """_train with stubs for the tokenizer and train(): the spec's corpus and vocabulary, the 90/10
    split, the leading train_slice of the training part, every argument passed on, the step
    callback made by progress(label or key, steps), and each record labelled with the spec, its
    key, the slice, torch's version and the code hash."""
    tokens = np.arange(1000, 1100)
    asked, trained, made = [], [], []

    def fake_bpe(name, vocab_size):
        asked.append((name, vocab_size))
        return tokens, "the bpe"

    def fake_train(model, cfg, tr, va, *, seeds, device, log, progress, step):
        trained.append(dict(model=model, cfg=cfg, tr=tr.tolist(), va=va.tolist(), seeds=seeds, device=device,
                            log=log, progress=progress, step=step))
        return [{"seed": s} for s in seeds]

    def progress(label, steps):
        made.append((label, steps))
        return "the callback"

    monkeypatch.setattr(runs, "bpe_tokens", fake_bpe)
    monkeypatch.setattr(runs, "train", fake_train)
    log = [].append
    spec = runs.RunSpec(TINY, STEPS2, seeds=(4, 2), corpus="pan-tadeusz", vocab_size=300, train_slice=0.5,
                        device="cpu", label="arm")
    got = runs._train(spec, log, progress)
    assert asked == [("pan-tadeusz", 300)] and made == [("arm", 2)]
    assert trained == [dict(model=TINY, cfg=STEPS2, tr=list(range(1000, 1045)), va=list(range(1090, 1100)),
                            seeds=(4, 2), device="cpu", log=log, progress="the callback", step="eager")]
    extra = dict(label="arm", key=spec.key(), train_slice=0.5, torch=torch.__version__, code=runs.code_version())
    assert got == {"runs": [{"seed": 4, **extra}, {"seed": 2, **extra}]}
    # no label: the callback is named by the key; no progress: train gets none
    unnamed = runs.RunSpec(TINY, STEPS2, seeds=(0,), train_slice=0.3)
    runs._train(unnamed, None, progress)
    assert made[-1] == (unnamed.key(), 2) and len(trained[-1]["tr"]) == 27
    runs._train(unnamed, None, None)
    assert trained[-1]["progress"] is None and len(made) == 2
    runs._train(dataclasses.replace(unnamed, step="compiled"), None, None)
    assert trained[-1]["step"] == "compiled"  # the spec's step reaches train


def test_get_and_ensure_train_an_arm_once_and_read_its_record_after(places, tmp_path, monkeypatch):
    """get trains an arm (its log and step callback see the training) and stores {"runs":
    records} at runs/<key>.json; asked again (under another label: not part of the key) it reads
    that file. ensure reads the cached arm, trains the new one, and hands back one list of
    records per spec, in order. train() is a stub that logs and reports each step like the real
    one: a first real training in a process costs seconds of torch imports."""
    places(cache_dir=tmp_path)
    monkeypatch.setattr(runs, "bpe_tokens", lambda name, vocab_size: (np.arange(200) % 7, None))
    trained = []

    def fake_train(model, cfg, tr, va, *, seeds, device, log, progress, step):
        trained.append(len(tr))
        for step in range(1, cfg.steps + 1):
            log(f"step {step}")
            progress(step)
        return [{"seed": s, "tokens": int(tr.sum()), "betas": cfg.betas} for s in seeds]  # betas: a tuple

    monkeypatch.setattr(runs, "train", fake_train)
    logs, named, steps = [], [], []

    def progress(label, n):
        named.append((label, n))
        return steps.append

    one = runs.RunSpec(TINY, STEPS2, seeds=(0, 1), label="one")
    (first,) = runs.ensure([one], log=logs.append, progress=progress)
    assert trained == [180] and logs == ["step 1", "step 2"] and named == [("one", 2)] and steps == [1, 2]
    assert [r["seed"] for r in first] == [0, 1] and all(r["key"] == one.key() for r in first)
    stored = json.loads((tmp_path / "runs" / f"{one.key()}.json").read_text())
    assert stored == {"runs": json.loads(json.dumps(first))} and stored["runs"][0]["betas"] == [0.9, 0.999]
    (again,) = runs.ensure([dataclasses.replace(one, label="renamed")], log=logs.append, progress=progress)
    assert again == stored["runs"] and trained == [180] and len(named) == 1

    two = runs.RunSpec(TINY, STEPS2, seeds=(0,), train_slice=0.5, label="two")
    both = runs.ensure([one, two], log=logs.append, progress=progress)
    assert trained == [180, 90] and named == [("one", 2), ("two", 2)] and len(logs) == 4
    assert both[0] == stored["runs"]
    assert [r["seed"] for r in both[1]] == [0] and both[1][0]["key"] == two.key()
    assert both[1][0]["train_slice"] == 0.5 and both[1][0]["label"] == "two"
    assert both[1][0]["tokens"] == int((np.arange(90) % 7).sum())
    assert json.loads((tmp_path / "runs" / f"{two.key()}.json").read_text()) == \
        {"runs": json.loads(json.dumps(both[1]))}
    assert runs.ensure([two, one]) == json.loads(json.dumps([both[1], both[0]])) and len(trained) == 2


# ---- data.py: the tokenizer cache --------------------------------------------------------------------

TOY = "the cat sat on the mat; the cat ate the rat.\n" * 4


def test_bpe_tokens_train_once_per_corpus_and_vocab_and_read_the_cache_after(tmp_path, monkeypatch):
    """The merges and the ids are trained on the corpus's text under <key>.lock, with <key> =
    first 16 hex digits of the corpus sha256, the vocabulary, and the first 12 of bpe.py's
    sha256; stored as cache_dir()/bpe/<key>.json and .npy; read back (not retrained) while both
    are there, retrained when one is missing."""
    c = _corpus(monkeypatch, tmp_path, "toy", TOY.encode())
    ref = bpe_mod.train_bpe(TOY, 262)
    assert len(ref.merges) == 6
    code = _sha(Path(bpe_mod.__file__).read_bytes())[:12]
    key = f"{c.sha256[:16]}-v262-bpe{code}"
    d = tmp_path / "deep" / "cache" / "bpe"
    real, trained = bpe_mod.train_bpe, []

    def spy(text, vocab_size):
        trained.append((text, vocab_size, _lock_is_held(d / f"{key}.lock")))
        return real(text, vocab_size)

    monkeypatch.setattr(bpe_mod, "train_bpe", spy)
    ids, bpe = data.bpe_tokens("toy", 262)
    assert trained == [(TOY, 262, True)]
    assert bpe == ref and ids.dtype == np.int64 and ids.tolist() == ref.encode(TOY)
    assert {p.name for p in d.iterdir()} - {f"{key}.lock"} == {f"{key}.json", f"{key}.npy"}
    assert json.loads((d / f"{key}.json").read_text()) == {"merges": [list(p) for p in ref.merges]}
    assert np.load(d / f"{key}.npy").tolist() == ids.tolist()

    # while both files are there they are what is returned: a planted array comes back as is
    buf = io.BytesIO()
    np.save(buf, np.array([7, 7, 7], dtype=np.int64))
    (d / f"{key}.npy").write_bytes(buf.getvalue())
    ids2, bpe2 = data.bpe_tokens("toy", 262)
    assert len(trained) == 1 and ids2.tolist() == [7, 7, 7] and bpe2 == ref
    assert isinstance(bpe2.merges, tuple) and all(isinstance(p, tuple) for p in bpe2.merges)

    (d / f"{key}.npy").unlink()  # half a cache is no cache
    ids3, _ = data.bpe_tokens("toy", 262)
    assert len(trained) == 2 and ids3.tolist() == ids.tolist() == np.load(d / f"{key}.npy").tolist()
    data.bpe_tokens("toy", 258)  # another vocabulary: another key
    assert trained[-1][1] == 258 and (d / f"{c.sha256[:16]}-v258-bpe{code}.npy").is_file()


def test_bpe_tokens_are_int64_even_for_an_empty_corpus(tmp_path, monkeypatch):
    _corpus(monkeypatch, tmp_path, "empty", b"")
    for _ in range(2):  # trained, then read back
        ids, bpe = data.bpe_tokens("empty", 256)
        assert ids.dtype == np.int64 and ids.shape == (0,) and bpe.merges == ()


class _FileOnACp1252Platform:
    """A corpus file as read where the default encoding is cp1252 (Windows): read_text without
    an encoding would garble UTF-8."""

    def __init__(self, raw: bytes):
        self.raw = raw

    def read_text(self, encoding=None):
        return self.raw.decode(encoding or "cp1252")


def test_corpora_are_read_as_utf8_whatever_the_platforms_default(tmp_path, monkeypatch):
    """load_text and the tokenizer decode the corpus as UTF-8 explicitly: with 256 tokens (no
    merges) the ids are the text's UTF-8 bytes."""
    text = "zażółć gęślą jaźń\n"
    _corpus(monkeypatch, tmp_path, "pl", text.encode())
    monkeypatch.setattr(data, "corpus_path", lambda name, **kw: _FileOnACp1252Platform(text.encode()))
    assert data.load_text("pl") == text
    ids, _ = data.bpe_tokens("pl", 256)
    assert ids.tolist() == list(text.encode("utf-8"))


def test_bpe_tokens_default_to_tiny_shakespeare_at_1024_tokens(places, tmp_path, monkeypatch):
    """What the conftest's shakespeare_tokens relies on. The corpus file is a stub (a few words)
    so nothing is trained on the real text; the key is still tiny Shakespeare's pinned sha256."""
    places(cache_dir=tmp_path)
    asked, trained = [], []
    real = bpe_mod.train_bpe
    monkeypatch.setattr(data, "corpus_path", lambda name, **kw: asked.append(name) or _FileOnACp1252Platform(b"to be"))
    monkeypatch.setattr(bpe_mod, "train_bpe", lambda text, vocab: trained.append(vocab) or real(text, vocab))
    data.bpe_tokens()
    sha = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"
    assert asked == ["tinyshakespeare"] and trained == [1024]
    assert [p.name for p in (tmp_path / "bpe").glob("*.npy")] == \
        [f"{sha[:16]}-v1024-bpe{_sha(Path(bpe_mod.__file__).read_bytes())[:12]}.npy"]


def test_load_text_passes_download_and_timeout_on(tmp_path, monkeypatch):
    """download=False: a missing corpus is an error, never a download; timeout= reaches urlopen."""
    c = _corpus(monkeypatch, tmp_path, "toy", b"pinned\n")
    (tmp_path / "data" / c.filename).unlink()
    calls = []

    def urlopen(url, timeout):
        calls.append(timeout)
        raise data.urllib.error.URLError("offline")

    monkeypatch.setattr(data.urllib.request, "urlopen", urlopen)
    with pytest.raises(CorpusUnavailable, match="toy.txt is in neither the data folder"):
        data.load_text("toy", download=False)
    assert calls == []
    with pytest.raises(CorpusUnavailable, match=r"failed \(offline\)"):
        data.load_text("toy", timeout=4.5)
    assert calls == [4.5]


# ---- data.py: downloads and the cache folder ---------------------------------------------------------

class _Response:
    """urlopen's answer: ``body``; what is in ``folder`` when it is read is kept in ``seen``."""

    def __init__(self, body, folder, seen=None):
        self.body, self.folder, self.seen = body, folder, seen if seen is not None else []

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False

    def read(self):
        self.seen.append(sorted(p.name for p in self.folder.iterdir()))
        return self.body


def test_download_writes_a_pid_named_part_and_renames_it_only_if_its_sha256_matches(tmp_path, monkeypatch):
    """_download makes the destination's folders, writes <file>.part<pid> while reading, and
    replaces the destination with it once its sha256 is the pin."""
    body = b"the pinned text\n"
    c = data.Corpus("toy", "toy.txt", "http://example.invalid/toy.txt", _sha(body), len(body))
    dest, seen = tmp_path / "x" / "y" / "toy.txt", []
    answer = {(c.url, 3): body}  # any other url or timeout gets an empty body: a sha256 mismatch
    monkeypatch.setattr(data.urllib.request, "urlopen",
                        lambda url, timeout: _Response(answer.get((url, timeout), b""), dest.parent, seen))
    assert data._download(c, dest, 3) == dest and dest.read_bytes() == body
    assert seen == [[f"toy.txt.part{os.getpid()}"]] and [p.name for p in dest.parent.iterdir()] == ["toy.txt"]


@pytest.mark.parametrize("error, reason", [(ValueError("unknown url type: 'x'"), "unknown url type: 'x'"),
                                           (TimeoutError("timed out"), "timed out"),
                                           (data.urllib.error.URLError("no route"), "no route")])
def test_a_failed_download_names_the_file_the_url_and_the_reason(tmp_path, monkeypatch, error, reason):
    """Any error of urlopen (a URLError's reason, or the error itself when it has none) becomes
    one CorpusUnavailable line, with no chained traceback, and no partial file is left."""
    c = data.Corpus("toy", "toy.txt", "http://example.invalid/toy.txt", "0" * 64, 1)

    def urlopen(url, timeout):
        raise error

    monkeypatch.setattr(data.urllib.request, "urlopen", urlopen)
    with pytest.raises(CorpusUnavailable) as e:
        data._download(c, tmp_path / "toy.txt", 1.0)
    assert str(e.value) == ("toy.txt is not in the data folder or the cache, and downloading "
                            f"http://example.invalid/toy.txt failed ({reason}); name a data folder "
                            "holding toy.txt")
    assert e.value.__cause__ is None and e.value.__suppress_context__
    assert list(tmp_path.iterdir()) == []


def test_a_download_that_is_not_the_pinned_file_says_the_origin_changed(tmp_path, monkeypatch):
    sha = _sha(b"the pinned text\n")
    c = data.Corpus("toy", "toy.txt", "http://example.invalid/toy.txt", sha, 16)
    monkeypatch.setattr(data.urllib.request, "urlopen", lambda url, timeout: _Response(b"changed\n", tmp_path))
    with pytest.raises(CorpusUnavailable) as e:
        data._download(c, tmp_path / "toy.txt", 1.0)
    assert str(e.value) == (f"downloaded http://example.invalid/toy.txt, but its sha256 does not match the "
                            f"pinned {sha[:12]}…; the origin changed: get the pinned revision "
                            "into the data folder")
    assert e.value.__cause__ is None and e.value.__suppress_context__
    assert list(tmp_path.iterdir()) == []


def test_the_cache_dir_defaults_to_dot_cache_claimcheck_in_the_home_folder(places, tmp_path, monkeypatch):
    """Neither a cache folder nor XDG_CACHE_HOME: ~/.cache/claimcheck."""
    monkeypatch.setenv("HOME", str(tmp_path))
    places(cache_dir=None)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert data.cache_dir() == tmp_path / ".cache" / "claimcheck"


# ---- bpe.py: the tokenizer's file format -------------------------------------------------------------

def test_a_bpe_is_stored_as_its_merge_list_and_read_back_equal():
    """to_json writes {"merges": [[a, b], ...]} and nothing else; from_json gives back the same
    merges as tuples (hashable: ranks are looked up by pair), which encode as the original."""
    bpe = BPE(((104, 101), (116, 256), (32, 257)))  # "he", "the", " the"
    assert bpe.to_json() == '{"merges": [[104, 101], [116, 256], [32, 257]]}'
    back = BPE.from_json('{"merges": [[104, 101], [116, 256], [32, 257]]}')
    assert back == bpe and back.merges == ((104, 101), (116, 256), (32, 257))
    assert type(back.merges) is tuple and all(type(p) is tuple for p in back.merges)
    assert back.encode("the the he") == bpe.encode("the the he") == [257, 258, 32, 256]
    assert BPE.from_json(BPE(()).to_json()) == BPE(())

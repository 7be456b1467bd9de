"""The suite's settings: read from the environment once, by an entry point, and passed down.

    CLAIMS_SEED_OFFSET   an integer that shifts every training seed (default 0)
    CLAIMS_DEVICE        'cpu' or 'cuda': where the gpu tier trains (default: CUDA if present)
    CLAIMS_STEP          'eager' or 'compiled': how a training step runs (default: compiled on
                         CUDA, eager on the CPU, where compiling costs more than it saves)
    CLAIMS_REQUIRE_DATA  '1': a missing corpus fails its tests instead of skipping them
    CLAIMS_TRAIN_LOG     set: the training runs print their log lines
    CLAIMS_DATA_DIR      a folder holding the corpora (default: ../shared/data beside the checkout,
                         or beside the checkout it was cloned from, when there is one)
    CLAIMS_CACHE_DIR     downloads, tokenizers and training runs (default ~/.cache/claimcheck)
    CLAIMS_COMMIT        the commit an evidence record names, for a copy of the tree without .git

The entry points are the root conftest and the commands' ``main``: each calls ``load()`` first,
which reads ``Settings.read(os.environ)``, keeps it for ``current()``, and hands the folders to
``experiments.data``. A bad value is one line in ``problems``: the conftest stops the run with
it before any test, a command exits with it, and nothing reads the bad value.
"""
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from experiments import data

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Settings:
    seed_offset: int = 0
    device: str | None = None        # None: CUDA when torch sees one
    step: str | None = None          # None: compiled on CUDA, eager on the CPU (step_for)
    require_data: bool = False
    train_log: bool = False
    data_dir: Path | None = None
    cache_dir: Path | None = None    # None: experiments.data's default
    commit: str | None = None        # None: asked of git
    problems: tuple[str, ...] = field(default=(), compare=False)

    @classmethod
    def read(cls, environ) -> "Settings":
        """Settings from a mapping of environment variables; each bad value is kept as one line
        in ``problems`` and its setting left at its default."""
        problems, out = [], {}
        raw = environ.get("CLAIMS_SEED_OFFSET") or "0"
        if re.fullmatch(r"\s*-?\d+\s*", raw):
            out["seed_offset"] = int(raw)
        else:
            problems.append(f"CLAIMS_SEED_OFFSET={raw!r}: give an integer that shifts every training seed, "
                            "or leave it unset")
        raw = environ.get("CLAIMS_DEVICE") or None
        if raw in (None, "cpu", "cuda"):
            out["device"] = raw
        else:
            problems.append(f"CLAIMS_DEVICE={raw!r}: use 'cpu' or 'cuda', or leave it unset")
        raw = environ.get("CLAIMS_STEP") or None
        if raw in (None, "eager", "compiled"):
            out["step"] = raw
        else:
            problems.append(f"CLAIMS_STEP={raw!r}: use 'eager' or 'compiled', or leave it unset")
        data = environ.get("CLAIMS_DATA_DIR")
        cache = environ.get("CLAIMS_CACHE_DIR")
        return cls(**out, require_data=environ.get("CLAIMS_REQUIRE_DATA") == "1",
                   train_log=environ.get("CLAIMS_TRAIN_LOG") is not None,
                   data_dir=Path(data) if data else default_data_dir(),
                   cache_dir=Path(cache) if cache else None,
                   commit=environ.get("CLAIMS_COMMIT") or None, problems=tuple(problems))

    def step_for(self, device) -> str:
        """How a training step runs on ``device``: CLAIMS_STEP, else compiled on CUDA (launches
        dominate an eager step there) and eager on the CPU (docs/notes/speed.md: inductor gains 1.28x
        on a CI shape but takes about 20 s to compile each arm)."""
        import torch
        return self.step or ("compiled" if torch.device(device).type == "cuda" else "eager")

    def seeds(self, *base: int) -> tuple[int, ...]:
        """The seeds a scale trains, shifted by the seed offset."""
        return tuple(s + self.seed_offset for s in base)


def default_data_dir(root: Path = ROOT) -> Path | None:
    """``shared/data`` beside the checkout, or beside the checkout this clone was made from."""
    beside = root.parent / "shared" / "data"
    if beside.is_dir():
        return beside
    try:
        origin = subprocess.run(["git", "config", "--get", "remote.origin.url"], cwd=root,
                                capture_output=True, text=True).stdout.strip()
    except OSError:
        return None
    there = Path(origin).parent / "shared" / "data" if origin and "://" not in origin else None
    return there if there is not None and there.is_dir() else None


_current = Settings()


def load(environ=None) -> Settings:
    """For entry points: read the environment, keep the result for ``current()``, and hand the
    folders to ``experiments.data``."""
    global _current
    _current = Settings.read(os.environ if environ is None else environ)
    data.use_places(data.Places(_current.data_dir, _current.cache_dir))
    return _current


def current() -> Settings:
    """What the entry point loaded (the defaults when none did: a library call in a unit test)."""
    return _current


def use(settings: Settings) -> Settings:
    """Set the settings directly (a test's own); returns the previous ones."""
    global _current
    previous, _current = _current, settings
    data.use_places(data.Places(settings.data_dir, settings.cache_dir))
    return previous


def child_environ(extra: dict[str, str]) -> dict[str, str]:
    """The environment for a child process an entry point starts: its own, with ``extra`` set
    (the replay spread's other kernels, which a running torch cannot switch to)."""
    return {**os.environ, **extra}


def exit_on_problem(settings: Settings) -> None:
    """For commands: exit with the one line when a variable is bad."""
    if settings.problems:
        raise SystemExit(f"error: {settings.problems[0]}")


def seeds(*base: int) -> tuple[int, ...]:
    """Seeds a test trains itself, shifted by the loaded seed offset."""
    return current().seeds(*base)


class DeclaredSeeds:
    """For a frozen dataclass with a ``declared_seeds`` field (the seeds the catalogue declares):
    ``seeds`` are those shifted by the loaded seed offset, computed when they are read, so no seed
    is fixed when a module is imported and the entry point's settings are the ones that count."""
    declared_seeds: tuple[int, ...]

    @property
    def seeds(self) -> tuple[int, ...]:
        return current().seeds(*self.declared_seeds)


def no_corpus(err: Exception):
    """A corpus is missing or fails its checksum: skip with its one line, or fail with it when
    CLAIMS_REQUIRE_DATA=1 (a CI job whose badge must not quietly lose the training claims)."""
    line = f"{err} (the suite's data folder: CLAIMS_DATA_DIR)"
    if current().require_data:
        pytest.fail(f"CLAIMS_REQUIRE_DATA=1: {line}", pytrace=False)
    # report the skip at the test that needed the corpus, not at this helper (-rs shows where)
    raise pytest.skip.Exception(line, _use_item_location=True)


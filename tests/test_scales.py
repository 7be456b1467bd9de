"""How the training scales are trained: every CI scale a run will read, up front, the largest
job first, each once, whichever xdist worker gets to it (suite/scales.py train_up_front)."""
from types import SimpleNamespace

import pytest

from suite import catalogue
from suite import scales
from suite import settings
from experiments.runs import Job, memo_many, n_params
from model.gpt import GPT

pytestmark = pytest.mark.fast


def _job(order, name, work, fails=False):
    def compute():
        order.append(name)
        if fails:
            raise RuntimeError(f"{name} failed")
        return {"v": name}
    return Job(name, compute, work)


def test_the_ci_scales_train_up_front_the_largest_job_first_and_each_once(places, tmp_path, monkeypatch):
    places(cache_dir=tmp_path)
    order = []
    a = SimpleNamespace(jobs=lambda: [_job(order, "small", 1.0), _job(order, "big", 9.0)])
    b = SimpleNamespace(jobs=lambda: [_job(order, "mid", 5.0), _job(order, "big", 9.0)])  # a shared run
    assert scales.train_up_front([a, b]) == []
    assert order == ["big", "mid", "small"]
    scales.train_up_front([b])  # cached: nothing trains again
    assert order == ["big", "mid", "small"]


def test_a_scale_or_job_that_fails_up_front_leaves_the_rest_training_and_is_met_again_when_read(
        places, tmp_path, monkeypatch):
    """A scale whose corpus is missing cannot list its jobs; a job can raise while it trains.
    Neither stops the others, and the job's error comes back to whoever reads it."""
    places(cache_dir=tmp_path)
    order = []

    def no_corpus():
        pytest.skip("pan-tadeusz.txt: not found")

    broken = SimpleNamespace(name="tiny-lab", jobs=no_corpus)
    failing = [_job(order, "big", 9.0, fails=True), _job(order, "small", 1.0)]
    assert scales.train_up_front([broken, SimpleNamespace(jobs=lambda: failing)]) == ["tiny-lab", "big"]
    assert order == ["big", "small"]
    with pytest.raises(RuntimeError, match="big failed"):
        memo_many(failing)


def test_only_the_scales_that_train_on_the_cpu_are_trained_up_front():
    """Full scales train on CUDA when a test reads them, or read their records; the cost
    measurements time themselves and must not share the cores; other fixtures are not scales."""
    c = catalogue
    got = c.ci_scales([c.LADDER_CI, c.LADDER_FULL, c.COST_CI, c.NORM03_GRADS, c.TINY_LAB, c.WINOGRAD])
    assert got == [c.LADDER_CI, c.NORM03_GRADS, c.TINY_LAB, c.WINOGRAD]


def test_every_scale_of_the_catalogue_is_in_its_list_once():
    """catalogue.SCALES lists every scale a test may declare (the tests that walk them all)."""
    named = {k for k, v in vars(catalogue).items() if k.isupper() and hasattr(v, "runs")}
    listed = {k for k, v in vars(catalogue).items() if any(v is s for s in catalogue.SCALES)}
    assert named - listed == set()
    assert len({id(s) for s in catalogue.SCALES}) == len(catalogue.SCALES)


def test_a_runs_work_is_its_parameters_times_its_predictions_over_its_seeds():
    spec = catalogue.SQRT_CI.spec("div-32", (0, 1))
    built = sum(p.numel() for p in GPT(spec.model).parameters())
    assert n_params(spec.model) == built
    assert spec.work() == built * 1000 * 16 * 32 * 2  # steps x batch x window x seeds


@pytest.mark.parametrize("scale", [catalogue.LADDER_FULL, catalogue.NORM_FULL, catalogue.LADDER_CI, catalogue.POS_CI],
                         ids=lambda s: s.name)
def test_on_cuda_every_seed_of_an_arm_trains_in_one_stacked_step_and_the_cpu_keeps_the_scales_choice(scale):
    on_cuda = scale.specs(device="cuda")
    assert [s.seeds for _, s in on_cuda] == [scale.seeds] * len(scale.arms)  # one spec per arm, all seeds
    assert {s.step for _, s in on_cuda} == {settings.current().step_for("cuda")}  # CLAIMS_STEP, else compiled
    on_cpu = [s.seeds for _, s in scale.specs(device="cpu")]
    assert on_cpu == ([scale.seeds] if scale.stack else [(s,) for s in scale.seeds]) * len(scale.arms)

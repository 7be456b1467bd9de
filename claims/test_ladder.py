"""IT 3.8 The ablation ladder: its parameter arithmetic (its perplexities are the slow tier)."""
import dataclasses

import pytest

from model import GPT, ladder
from model.params import config_params, count

pytestmark = pytest.mark.fast


def test_each_rung_adds_one_piece_to_the_rung_above():
    """A chain of small edits: two fields where a piece has two parts (a head *replacing*,
    four heads *with* W_o), one everywhere else."""
    rungs = list(ladder().values())
    for above, below in zip(rungs, rungs[1:]):
        changed = {f.name for f in dataclasses.fields(above) if getattr(above, f.name) != getattr(below, f.name)}
        assert 1 <= len(changed) <= 2, changed


@pytest.mark.parametrize("name", list(ladder()))
def test_every_rung_builds_with_the_count_its_formula_predicts(name):
    c = ladder()[name]
    assert count(GPT(c)) == config_params(c).total


@pytest.mark.claim("ABL-02")
def test_four_heads_cost_one_output_projection(claim_record):
    r = ladder()
    extra = claim_record("ABL-02", count(GPT(r["4-heads"])) - count(GPT(r["head-added"])),
                         expected=16_512, tolerance="exact", label="extra parameters")
    assert extra == 128 * 128 + 128 == 16_512


@pytest.mark.claim("ABL-05")
def test_layernorm_costs_768_parameters(claim_record):
    r = ladder()
    extra = claim_record("ABL-05", count(GPT(r["+layernorm"])) - count(GPT(r["+mlp"])),
                         expected=768, tolerance="exact", label="LayerNorm parameters")
    assert extra == 3 * 2 * 128 == 768  # ln1, ln2, ln_f: gain and bias each


@pytest.mark.claim("ABL-06")
def test_the_shakespeare_model_is_about_half_a_million_parameters(claim_record):
    n = claim_record("ABL-06", count(GPT(ladder()["+layernorm"])), expected=500_000,
                     tolerance="400k..600k ('500.000' is a round figure)")
    assert 400_000 <= n <= 600_000

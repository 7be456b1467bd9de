"""tools.mutation's score: killed / (all - equivalent), with stale equivalents named."""
import pytest

from tools.mutation import equivalents, results, score

RESULTS = """    model.mask.x_causal_mask__mutmut_1: killed
    model.mask.x_causal_mask__mutmut_2: survived
    model.mask.x_causal_mask__mutmut_3: survived
    model.gpt.x_ladder__mutmut_7: timeout
    model.gpt.x_ladder__mutmut_8: no tests
"""
DOC = """# Mutation testing
## Equivalent mutants
- `model.mask.x_causal_mask__mutmut_2`: `diagonal=1` -> `diagonal=+1` — the same integer
- `model.mask.x_causal_mask__mutmut_1`: `ones` -> `zeros` — was equivalent once
text that is not an entry
## Survivors
- `model.mask.x_causal_mask__mutmut_3`: named here, and not an equivalent
"""


@pytest.mark.fast
def test_the_score_leaves_out_equivalents_and_names_stale_ones():
    eq = equivalents(DOC)
    assert eq == {"model.mask.x_causal_mask__mutmut_2": "`diagonal=1` -> `diagonal=+1` — the same integer",
                  "model.mask.x_causal_mask__mutmut_1": "`ones` -> `zeros` — was equivalent once"}
    s = score(results(RESULTS), eq)
    assert (s["all"], s["killed"], s["equivalent"]) == (5, 2, 1)
    assert s["score"] == 2 / 4  # a timeout is caught (the fast tier hangs); an untested mutant is not
    assert s["survivors"] == ["model.gpt.x_ladder__mutmut_8", "model.mask.x_causal_mask__mutmut_3"]
    assert s["stale"] == ["model.mask.x_causal_mask__mutmut_1"]  # killed: no longer an equivalent

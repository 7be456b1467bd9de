"""The evidence records' shapes, declared with pydantic: the types and ranges no run can break.

Every kind's ``problems`` (families.py, lab.py, winograd.py, measured.py) checks a record against
its model here first: a perplexity is a finite number >= 1, a loss finite and positive, a share in
[0, 1], a time positive, a seed >= 0, and the provenance every record carries. What depends on the
catalogue (the point, the arm, the config, the steps a scale trains) and what ties two fields
together (a curve's last point and the final value) the kind checks after, in its own module.

Each problem is one line that names its field, as the record spells it:
``result.curve.val_ppl[3]: input should be greater than or equal to 1, got float 0.5``.
"""
import re
from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator

from experiments.train import FIRST_LOSSES

Finite = Annotated[float, Field(allow_inf_nan=False)]
Perplexity = Annotated[float, Field(ge=1, allow_inf_nan=False)]
Loss = Annotated[float, Field(gt=0, allow_inf_nan=False)]
Share = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
Seed = Annotated[int, Field(ge=0)]
Text = Annotated[str, Field(min_length=1)]


def _iso(date: str) -> str:
    try:
        datetime.fromisoformat(date)
    except ValueError:
        raise ValueError("an ISO date expected") from None
    return date


FirstLosses = Annotated[list[Loss], Field(min_length=FIRST_LOSSES, max_length=FIRST_LOSSES)]


class Shape(BaseModel):
    """No coercion ("3" is not 3, true is not 1); fields a model does not name are left alone."""
    model_config = ConfigDict(strict=True, extra="allow")


class Provenance(Shape):
    device: Text
    device_name: Text
    machine: Text
    torch: Text
    commit: Text
    code: Text
    date: Annotated[Text, AfterValidator(_iso)]
    wall_s: Positive
    same_run_as: Text = None  # a record trained with another: its path (absent, never null)


class FamilyProvenance(Provenance):
    tokens_per_s: Positive


class Record(Shape):
    provenance: Provenance


# ---- the Shakespeare families (families.py) ----------------------------------------------------

class Curve(Shape):
    step: Annotated[list[int], Field(min_length=1)]
    train_ppl: Annotated[list[Perplexity], Field(min_length=1)]
    val_ppl: Annotated[list[Perplexity], Field(min_length=1)]
    loss: Annotated[list[Finite], Field(min_length=1)]

    @field_validator("step")
    @classmethod
    def _increasing(cls, steps):
        if any(b <= a for a, b in zip(steps, steps[1:])):
            raise ValueError("increasing integers expected")
        return steps


class Attention(Shape):
    score_std: NonNegative
    entropy: NonNegative
    saturated: Share


class Trace(Shape):
    step: list[int]
    loss: list[Finite | None]  # null at step 0, where nothing has trained
    attention: list[Attention] | None = None


class FamilyResult(Shape):
    val_ppl: Perplexity
    train_ppl: Perplexity
    curve: Curve
    trace: Trace | None
    val_ppl_at_length: dict[Annotated[str, Field(pattern=r"^\d+$")], Perplexity]


class FamilyRecord(Record):
    family: str
    arm: str
    scale: str
    seed: Seed
    config: dict
    point: Text = None  # a grid point's records only (absent, never null)
    first_losses: FirstLosses
    result: FamilyResult
    provenance: FamilyProvenance


# ---- the Polish lab (lab.py) --------------------------------------------------------------------

class LabResult(Shape):
    runs: list[Annotated[list[int], Field(min_length=2, max_length=2)]]  # (excerpt, seed)
    checkpoints: list[int]
    train: list[list[Perplexity]]  # per run, at every checkpoint
    val: list[list[Perplexity]]
    test: list[list[Perplexity]]
    first_losses: list[FirstLosses]


class LabRecord(Record):
    family: Literal["lab"]
    point: str
    arm: str
    config: dict
    result: LabResult


# ---- the Winograd task (winograd.py) ------------------------------------------------------------

class Scores(Shape):
    accuracy: Share
    pair_accuracy: Share
    wrong_noun: Share


class Evaluation(Scores):
    step: int
    select: Scores = None  # a select_apart point's halves (experiments.winograd.halves); absent, never null
    report: Scores = None


Row = Annotated[list[Share], Field(min_length=15, max_length=15)]  # one weight per token
Rows = dict[str, Annotated[list[Row], Field(min_length=2, max_length=2)]]  # adjective -> one row per block


class WinogradRun(Shape):
    seed: Seed
    curve: Annotated[list[Evaluation], Field(min_length=1)]
    final: Evaluation
    first_losses: FirstLosses
    rows: Rows = None       # the two-block model's, on the fixed task (absent, never null)
    rows_held: Rows = None


class WinogradResult(Shape):
    runs: list[WinogradRun]


class WinogradRecord(Record):
    family: Literal["winograd"]
    point: str
    arm: str
    config: dict
    result: WinogradResult


# ---- measurements (measured.py) -----------------------------------------------------------------

class MeasuredRecord(Record):
    family: Literal["measured"]
    scale: str
    config: dict | list
    result: dict | list  # non-empty, its leaves finite and >= 0: measured.py


def one_of(rec: dict, field: str, options) -> list[str]:
    """The one line when ``rec[field]`` is not among ``options`` (what the catalogue declares)."""
    if rec[field] in options:
        return []
    return [f"{field}: one of {', '.join(options)} expected, got {rec[field]!r:.60}"]


def problems(model: type[BaseModel], rec) -> list[str]:
    """Every way ``rec`` breaks ``model``, one line each naming its field; empty when sound. A
    value that fits none of a field's types (an object or a list) is one line naming them all."""
    try:
        model.model_validate(rec)
    except ValidationError as e:
        lines: dict[tuple[str, str], list[str]] = {}
        for err in e.errors(include_url=False):
            where, what, got = _line(err)
            lines.setdefault((where, got), []).append(what)
        return [f"{where}: {_either(whats)}{got}" for (where, got), whats in lines.items()]
    return []


def _either(whats: list[str]) -> str:
    """"an object or a list expected" from a union's "an object expected" and "a list expected"."""
    whats = list(dict.fromkeys(whats))
    if len(whats) > 1 and all(w.endswith(" expected") for w in whats):
        return " or ".join(w.removesuffix(" expected") for w in whats) + " expected"
    return "; ".join(whats)


# pydantic's wording for a wrong type, in the words the rest of the suite's messages use
_EXPECTED = {"model_type": "an object", "dict_type": "an object", "list_type": "a list", "string_type": "a string",
             "float_type": "a number", "int_type": "an integer"}


def _line(err: dict) -> tuple[str, str, str]:
    """(the field, what it should be, what it is) for one pydantic error. Its location, as the
    record spells it: a list item in brackets; pydantic's own parts (a union member's type, a
    dict key's marker) left out."""
    loc = [p for p in err["loc"] if isinstance(p, int) or not (p == "[key]" or re.fullmatch(r"[\w-]+\[.*\]", p))]
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".") or "record"
    if err["type"] == "missing":
        return where, "missing", ""
    if err["type"] == "literal_error":
        what = f"{err['ctx']['expected']} expected"
    elif err["type"] in _EXPECTED:
        what = f"{_EXPECTED[err['type']]} expected"
    else:
        msg = err["msg"].removeprefix("Value error, ")
        what = msg[0].lower() + msg[1:]
    return where, what, f", got {type(err['input']).__name__} {err['input']!r:.60}"

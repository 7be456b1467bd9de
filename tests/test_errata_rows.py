"""The suite's own errata rows, as an author reads them: each claim whose test marks a record
``subject=True`` shows that record, the number its sentence is about, every erratum carries a proposed correction or says what
it waits for, and no reason starts with a node ID or ends with provenance. Read from a real run
of the evidence-judged full-scale tests (a subprocess: the report is written at its end)."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from suite.scales import evidence_mode

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    if not evidence_mode():
        pytest.skip("the full-scale tests train here (CUDA or CLAIMS_DEVICE=cpu): this reads the committed evidence")
    out = tmp_path_factory.mktemp("errata")
    run = subprocess.run([sys.executable, "-m", "pytest", "-m", "fast", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                          "claims/test_sqrt_dk.py", "claims/test_norm.py", "claims/test_winograd.py",
                          f"--claims-report-dir={out}", "--claims-report-scope=run"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    return json.loads((out / "claims.json").read_text(encoding="utf-8"))


def test_each_subject_is_the_number_the_row_shows(report):
    from claimcheck.verdict import headline_records, headline_value
    marked = {c["id"]: [r for r in headline_records(c) if r.get("subject")] for c in report["claims"]}
    assert {"SQRT-09", "SQRT-11", "NORM-04", "NORM-05", "NORM-06"} <= {cid for cid, rs in marked.items() if rs}
    for c in report["claims"]:
        if marked[c["id"]] and c["status"] in ("diverges", "holds", "undecided"):
            _, ours, label = headline_value(c)
            assert label == marked[c["id"]][-1]["label"], (c["id"], label)


def test_every_erratum_proposes_or_says_what_it_waits_for_and_reads_plainly(report):
    errata = [c for c in report["claims"] if c["status"] == "diverges"]
    assert errata
    for c in errata:
        p = c["correction_proposal"]
        assert p["proposed"] or p["missing"], c["id"]
        assert not re.match(r"\S+\.py::", c["reason"]), c["id"]
        assert not re.search(r"(evidence recorded on|measured on) [^;]*$", c["reason"]), c["id"]
        assert "-inf" not in json.dumps(c["reason"]), c["id"]

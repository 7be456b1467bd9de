"""index.html in a real browser: headless Chromium shows every claim and the summary's counts."""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from claimcheck import report as render
from claimcheck.registry import load_registry
from claimcheck.suite import read

pytestmark = pytest.mark.fast

ROOT = Path(__file__).resolve().parents[1]


def _chromium():
    return shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").is_file() else None)


def _fast_run_of_the_suite(registry) -> dict:
    """The report of a `pytest -m fast` run, without running it: fast tests pass (or diverge
    where marked), the others are skipped. Enough to fill all 139 rows with several statuses."""
    tests = {}
    for t in read(ROOT, ["claims"]):
        fast = t.tiers == ("fast",)
        outcome = ("xfailed" if t.xfails else "passed") if fast else "skipped"
        tests[f"{t.path}::{t.name}"] = {
            "outcome": outcome, "reason": {"passed": "", "xfailed": "xfail: marked diverges"}.get(
                outcome, f"{t.tiers[0]} tier: needs --runslow"),
            "tier": t.tiers[0], "scale": t.scale, "claims": list(t.claims), "records": [],
            "figures": [], "pins": []}
    return render.build(registry, tests, [{"generated": "now", "commit": "test", "torch": "-", "device": "cpu"}],
                        {c for t in tests.values() for c in t["claims"]})


def test_chromium_shows_every_claim_row_and_the_summary_counts(tmp_path):
    chromium = _chromium()
    if chromium is None:
        pytest.skip("no Chromium found: apt-get install chromium (Debian) to run the browser test")
    registry = load_registry(ROOT / "fixtures" / "claims.toml")
    doc = _fast_run_of_the_suite(registry)
    render.write(doc, tmp_path / "report")
    shot = ROOT / "reports" / "report-screenshot.png"
    shot.parent.mkdir(exist_ok=True)
    shot.unlink(missing_ok=True)
    # One headless run dumps the DOM after the page's script ran and takes the screenshot.
    run = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", "--hide-scrollbars", "--window-size=1280,2000",
         f"--screenshot={shot}", "--dump-dom", (tmp_path / "report" / "index.html").as_uri()],
        capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, f"chromium exited {run.returncode}: {run.stderr.strip()[-300:]}"
    dom = run.stdout
    shown = re.search(r'<output id="row-count" data-by-status="([^"]*)">(\d+)</output>', dom)
    assert shown, "the page's script did not count the rows (is JavaScript running?)"
    assert int(shown[2]) == len(registry) == 139
    by_status = dict((s, int(n)) for s, n in (kv.split(":") for kv in shown[1].split()))
    assert by_status == {s: n for s, n in doc["summary"].items() if n}
    assert len(by_status) >= 3  # holds, diverges, descriptive, not-run: the colours are exercised
    counts = re.findall(r'<li class="[^"]*" data-status="([\w-]+)"><b>(\d+)</b>', dom)
    assert {s: int(n) for s, n in counts} == doc["summary"]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

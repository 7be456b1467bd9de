"""tools/device_gpu_tier.sh, the one call on a lent GPU, run here on the CPU (CLAIMS_DEVICE=cpu)
on one gpu-tier test: the plugin found, the report and the log brought back to $OUT."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.scale("ci")
def test_the_gpu_tier_script_brings_back_the_report_and_the_log(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "CLAIMCHECK_"))}
    # the script starts python3 from PATH: this interpreter's folder first, so the venv that runs
    # these tests runs it too, activated or not
    env.update(CLAIMS_DEVICE="cpu", OUT=str(tmp_path),
               PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]))
    proc = subprocess.run(["bash", "tools/device_gpu_tier.sh", "120", "-k", "test_on_cuda_the_projections_grow_linearly"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert {p.name for p in tmp_path.iterdir()} >= {"claims.json", "claims.md", "log.txt", "gpu.txt"}
    doc = json.loads((tmp_path / "claims.json").read_text(encoding="utf-8"))
    assert doc["tiers"] == [] or doc["tiers"] == ["gpu"]  # the one test skips without CUDA
    log = (tmp_path / "log.txt").read_text(encoding="utf-8")
    assert "of a 120 s budget; pytest exit 0" in log and "summary:" in log

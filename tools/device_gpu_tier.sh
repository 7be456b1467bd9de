#!/usr/bin/env bash
# The gpu tier on a lent GPU, in one call of the device tool: everything trained afresh (an empty
# run cache), within a budget, and back come claims.json, claims.md and the log.
#
#   here:    bash tools/device_evidence.sh prepare     # corpus + BPE cache into .device-cache/ (venv active)
#   device:  run(command="bash tools/device_gpu_tier.sh 420", carry=[".device-cache"], timeout_s=540)
#   here:    claimcheck diff reports/claims.json <files_at>/claims.json     # against the evidence-judged one
#
# 420 s of pytest leaves the machine's start and the transfers inside 8 of a session's 15 device
# minutes. At the budget the run gets SIGINT (Ctrl-C): the report then holds what ran, marked
# interrupted. Extra arguments after the budget go to pytest (`-k norm`). On the CPU, for a test
# of the script itself: CLAIMS_DEVICE=cpu OUT=/tmp/out bash tools/device_gpu_tier.sh 60 -k <test>.
set -uo pipefail
cd "$(dirname "$0")/.."
budget="${1:-420}"; shift || true
cache=.device-cache
out="${OUT:-/tmp/device-out}"; mkdir -p "$out"
export PYTHONUNBUFFERED=1
export CLAIMS_DATA_DIR="${CLAIMS_DATA_DIR:-$PWD/$cache/data}"
export CLAIMS_COMMIT="$(cat "$cache/commit" 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)"
fresh="$(mktemp -d)"  # an empty run cache: every run trained here; the tokenizer is no training
[ -d "$cache/bpe" ] && mkdir -p "$fresh/bpe" && cp "$cache"/bpe/* "$fresh/bpe/"
export CLAIMS_CACHE_DIR="$fresh"
# the plugin: already importable (a checkout installed here), else installed from this copy
python3 -c "import claimcheck" 2>/dev/null \
  || python3 -m pip install -q --no-deps --no-build-isolation -e . >"$out/install.txt" 2>&1 \
  || { echo "error: could not install the plugin from this tree (see install.txt)" | tee "$out/log.txt"; exit 2; }
cards=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
workers=()
[ "${cards:-0}" -gt 1 ] && workers=(-n "$cards")  # one card per xdist worker (suite/devices.py)
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >"$out/gpu.txt" 2>/dev/null || echo "no GPU" >"$out/gpu.txt"
start=$(date +%s)
timeout -s INT "$budget" python3 -m pytest -m gpu --runslow -p no:cacheprovider "${workers[@]}" \
  --claims-report-dir "$fresh/report" --claims-report-scope=run "$@" 2>&1 | tee "$out/log.txt"
code=${PIPESTATUS[0]}
echo "wall: $(( $(date +%s) - start )) s of a $budget s budget; pytest exit $code" | tee -a "$out/log.txt"
for f in claims.json claims.md; do cp "$fresh/report/$f" "$out/" 2>/dev/null || echo "no $f" | tee -a "$out/log.txt"; done
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('summary:', d['summary'], '(interrupted)' if d.get('interrupted') else '')" \
  "$out/claims.json" 2>/dev/null | tee -a "$out/log.txt"
exit "$code"

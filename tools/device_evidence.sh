#!/usr/bin/env bash
# The one script for a lent GPU (the device tool): record every pending full-scale and diagnosis
# run (`python -m suite.evidence pending`) within a time budget, seeds stacked, and bring the
# records back. Three steps:
#
#   here:    bash tools/device_evidence.sh prepare        # corpus + BPE cache into .device-cache/ (venv active)
#   device:  run(command="bash tools/device_evidence.sh record 420", carry=[".device-cache"], timeout_s=540)
#   here:    bash tools/device_evidence.sh unpack <files_at>   # records into fixtures/evidence/
#
# 420 s of training leaves the machine's start and the transfers inside an 8-minute share of a
# session's 15 device minutes, and time to rerun once. Records carry their provenance
# (device, torch, commit, date); CLAIMS_COMMIT names the commit, since the copy there has no
# history of ours. Review and commit them here; their replay check runs in the slow tier.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=.device-cache
case "${1:-}" in
  prepare)
    data="${CLAIMS_DATA_DIR:-$(cd .. && pwd)/shared/data}"
    mkdir -p "$cache/data" "$cache/bpe"
    cp "$data/tinyshakespeare.txt" "$cache/data/"
    python -c "from suite import settings; settings.load(); from experiments.data import bpe_tokens; bpe_tokens('tinyshakespeare', 1024)"  # trained once here
    bpe="${CLAIMS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/claimcheck}/bpe"
    cp "$bpe"/*.json "$bpe"/*.npy "$cache/bpe/"
    git rev-parse --short HEAD > "$cache/commit"
    python -m suite.evidence pending | tee "$cache/pending.txt"
    du -sh "$cache" ;;
  record)
    budget="${2:-420}"
    export CLAIMS_DATA_DIR="$PWD/$cache/data" CLAIMS_CACHE_DIR="$PWD/$cache" PYTHONUNBUFFERED=1
    export CLAIMS_COMMIT="$(cat "$cache/commit" 2>/dev/null || echo unknown)"
    out="${OUT:-/tmp/device-out}"; mkdir -p "$out"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/gpu.txt" || true
    find fixtures/evidence -name '*.json' | sort > /tmp/records-before
    set +e
    python3 -m suite.evidence pending --record --device cuda --budget-s "$budget" 2>&1 | tee "$out/log.txt"
    code=${PIPESTATUS[0]}
    set -e
    # the records this run wrote: those that were not there before it
    find fixtures/evidence -name '*.json' | sort | comm -13 /tmp/records-before - > /tmp/records-new
    tar czf "$out/records.tgz" -T /tmp/records-new
    tar tzf "$out/records.tgz" | wc -l | sed 's/^/records: /' | tee -a "$out/log.txt"
    exit "$code" ;;
  unpack)
    [ -n "${2:-}" ] || { echo "usage: $0 unpack <files_at>"; exit 2; }
    tar xzf "$2/records.tgz"
    python -m suite.evidence status ;;
  *)
    echo "usage: $0 prepare | record [budget_s] | unpack <files_at>"; exit 2 ;;
esac

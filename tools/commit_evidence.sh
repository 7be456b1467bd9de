#!/usr/bin/env bash
# Commit each evidence record as it lands, one commit per record, so a session that ends (or a
# machine that goes) loses at most the run in progress. Run beside the campaign:
#   nohup tools/commit_evidence.sh <commit that declared the looks> > logs/committer.log 2>&1 &
# Only the new record is committed (git commit -o), never the work in progress beside it.
# A record that moves a kind or a verdict fails the fast tier until fixtures/kinds.toml or
# fixtures/verdicts.toml changes in the same commit, with the reason: such records wait, named in
# the log, for a commit made by hand (docs/reference/evidence.md).
set -u
declared="${1:?usage: tools/commit_evidence.sh <commit that declared the looks being recorded>}"
cd "$(dirname "$0")/.."
py=.venv/bin/python; [ -x "$py" ] || py=python3
mkdir -p logs
held=""
while true; do
  new=$(git ls-files --others --exclude-standard fixtures/evidence)
  if [ -n "$new" ] && [ "$new $(git rev-parse HEAD)" = "$held" ]; then sleep 60; continue; fi
  # Each new record's replay spread under other kernels goes in with it (docs/reference/replay.md);
  # a record whose spread could not be measured waits for the next pass.
  if [ -n "$new" ] && ! nice -n 10 env OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 "$py" -m suite.evidence spread \
      > logs/spread.log 2>&1; then
    echo "$(date -u +%H:%M) the replay spread failed (logs/spread.log); not committing $new"
    sleep 60; continue
  fi
  if [ -n "$new" ] && ! nice -n 10 env OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 "$py" -m pytest -m fast -q \
      -p no:cacheprovider --claims-report-dir=logs/committer-report > logs/committer-fast.log 2>&1; then
    echo "$(date -u +%H:%M) the fast tier fails with $new (logs/committer-fast.log): a kind or a verdict moved?" \
         "commit it by hand with its pin"
    held="$new $(git rev-parse HEAD)"; continue
  fi
  spread=$(git status --porcelain -- fixtures/replay_spread.toml | cut -c4-)
  for f in $new; do
    name="${f#fixtures/evidence/}"
    if git add "$f" $spread && git commit -q -o "$f" $spread -m "Evidence: $name at full scale (recorded on one core by the background campaign; its look was declared in $declared before it ran)"; then
      echo "$(date -u +%H:%M) committed $f${spread:+ and its replay spread}"
      spread=""
    fi
  done
  sleep 60
done

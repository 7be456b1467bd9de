#!/usr/bin/env bash
# Commit each evidence record as it lands, one commit per record, so a session that ends (or a
# machine that goes) loses at most the run in progress. Run beside the campaign:
#   nohup tools/commit_evidence.sh <commit that declared the looks> > logs/committer.log 2>&1 &
# Only the new record is committed (git commit -o), never the work in progress beside it.
set -u
declared="${1:?usage: tools/commit_evidence.sh <commit that declared the looks being recorded>}"
cd "$(dirname "$0")/.."
py=.venv/bin/python; [ -x "$py" ] || py=python3
while true; do
  new=$(git ls-files --others --exclude-standard fixtures/evidence)
  # Each new configuration's replay spread under other kernels goes in with its record (issue 58):
  # the slow tier replays it at 3x that figure (docs/reference/replay.md).
  [ -n "$new" ] && nice -n 10 env OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 "$py" -m suite.evidence spread >/dev/null 2>&1
  spread=$(git status --porcelain -- fixtures/replay_spread.toml | cut -c4-)
  for f in $new; do
    name="${f#fixtures/evidence/}"
    git add "$f" $spread && git commit -q -o "$f" $spread -m "Evidence: $name at full scale (recorded on one core by the background campaign; its look was declared in $declared before it ran)" \
      && echo "$(date -u +%H:%M) committed $f${spread:+ and its replay spread}"
    spread=""
  done
  sleep 60
done

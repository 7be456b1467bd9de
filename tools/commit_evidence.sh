#!/usr/bin/env bash
# Commit each evidence record as it lands, one commit per record, so a session that ends (or a
# machine that goes) loses at most the run in progress. Run beside the campaign:
#   nohup tools/commit_evidence.sh <commit that declared the looks> > logs/committer.log 2>&1 &
# Only the new record is committed (git commit -o), never the work in progress beside it.
# Each record is first judged by the fast tier in a clean tree at HEAD plus that record and the
# replay spread, so neither the work in progress nor another record decides it. A record that
# moves a kind or a verdict fails there until fixtures/kinds.toml or fixtures/verdicts.toml
# changes in the same commit, with the reason: it waits, named in the log, for a commit by hand,
# and is tried again when HEAD moves or every 30 minutes (docs/reference/evidence.md).
set -u
declared="${1:?usage: tools/commit_evidence.sh <commit that declared the looks being recorded>}"
cd "$(dirname "$0")/.."
py=$PWD/.venv/bin/python; [ -x "$py" ] || py=python3
mkdir -p logs
data=$("$py" -c 'from suite.settings import default_data_dir; print(default_data_dir() or "")')
wt=$(mktemp -d)/tree
git worktree add -q --detach "$wt" HEAD || exit 1
trap 'git worktree remove --force "$wt"' EXIT
trap 'exit 143' TERM INT

passes_fast() {  # the fast tier at HEAD with this record and the working tree's replay spread
  git -C "$wt" reset -q --hard "$(git rev-parse HEAD)" && git -C "$wt" clean -qfdx fixtures/evidence || return 1
  mkdir -p "$wt/$(dirname "$1")" && cp "$1" "$wt/$1" && cp fixtures/replay_spread.toml "$wt/fixtures/" || return 1
  (cd "$wt" && nice -n 10 env OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH="$wt/plugin:$wt" \
     CLAIMS_DATA_DIR="$data" "$py" -m pytest -m fast -q -p no:cacheprovider \
     --claims-report-dir="$wt/reports") > logs/committer-fast.log 2>&1
}

declare -A held  # record -> "HEAD at its last try, and when"
while true; do
  new=$(git ls-files --others --exclude-standard fixtures/evidence)
  # Each new record's replay spread under other kernels goes in with it (docs/reference/replay.md);
  # a record whose spread could not be measured waits for the next pass.
  if [ -n "$new" ] && ! nice -n 10 env OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 "$py" -m suite.evidence spread \
      > logs/spread.log 2>&1; then
    echo "$(date -u +%H:%M) the replay spread failed (logs/spread.log); not committing $new"
    sleep 60; continue
  fi
  for f in $new; do
    head=$(git rev-parse HEAD)
    last=${held[$f]:-}
    if [ -n "$last" ] && [ "${last% *}" = "$head" ] && [ $(( $(date +%s) - ${last#* } )) -lt 1800 ]; then continue; fi
    if ! passes_fast "$f"; then
      held[$f]="$head $(date +%s)"
      echo "$(date -u +%H:%M) the fast tier fails with $f (logs/committer-fast.log): a kind or a verdict" \
           "moved? Commit it by hand: git commit -o $f fixtures/replay_spread.toml <its pin>"
      continue
    fi
    unset "held[$f]"
    spread=$(git status --porcelain -- fixtures/replay_spread.toml | cut -c4-)
    name="${f#fixtures/evidence/}"
    if git add "$f" $spread && git commit -q -o "$f" $spread -m "Evidence: $name at full scale (recorded on one core by the background campaign; its look was declared in $declared before it ran)"; then
      echo "$(date -u +%H:%M) committed $f${spread:+ and its replay spread}"
    fi
  done
  sleep 60
done

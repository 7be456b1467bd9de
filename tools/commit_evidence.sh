#!/usr/bin/env bash
# Commit each evidence record as it lands, one commit per record, so a session that ends (or a
# machine that goes) loses at most the run in progress. Run beside the campaign:
#   nohup tools/commit_evidence.sh <commit that declared the looks> > logs/committer.log 2>&1 &
# Only the new record is committed (git commit -o), never the work in progress beside it.
set -u
declared="${1:?usage: tools/commit_evidence.sh <commit that declared the looks being recorded>}"
cd "$(dirname "$0")/.."
while true; do
  git ls-files --others --exclude-standard fixtures/evidence | while read -r f; do
    name="${f#fixtures/evidence/}"
    git add "$f" && git commit -q -o "$f" -m "Evidence: $name at full scale (recorded on one core by the background campaign; its look was declared in $declared before it ran)" \
      && echo "$(date -u +%H:%M) committed $f"
  done
  sleep 60
done

"""Apply a report's patches to pristine copies of the texts they name, and check them.

    python tools/check_patches.py reports-fast

Every erratum with a template must have built its proposal or draft. For each
``chapters/<source>.patch`` of the report: ``git apply`` on a fresh repository holding
the file as committed; then the patch may change only the lines that hold a corrected passage,
and every quote of a claim it does not correct must still be found in the patched text. One
line per source; exit 1 on any failure. CI runs it on the fast tier's report.
"""
import difflib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from claimcheck.fingerprint import places
from claimcheck.registry import QUOTE_JOIN

ROOT = Path(__file__).resolve().parents[1]


def touched_lines(text: str, passages: list[str]) -> set[int]:
    """1-based numbers of the lines each passage's first place spans."""
    out = set()
    for p in passages:
        found = places(text, p)
        if found:
            a, b = found[0].start, found[0].end
            out |= set(range(text.count("\n", 0, a) + 1, text.count("\n", 0, b) + 2))
    return out


def drafts(doc: dict) -> list[str]:
    """Every erratum whose registry row gives a correction must have built it (a proposal, or a
    draft while its kind is open): a template that cannot be filled is a problem, not a gap."""
    problems, none = [], []
    for c in doc["claims"]:
        p = c.get("correction_proposal")
        if not p:
            continue
        if not c.get("correction"):
            none.append(c["id"])
        elif not (p.get("proposed") or p.get("draft")):
            problems.append(f"{c['id']}: its correction template was not built: {p.get('missing')}")
    print(f"errata: {sum(1 for c in doc['claims'] if c.get('correction_proposal'))}, each with a template built"
          + (f", except those without a template: {', '.join(none)}" if none else ""))
    return problems


def check(report: Path) -> list[str]:
    doc = json.loads((report / "claims.json").read_text(encoding="utf-8"))
    problems = drafts(doc)
    for src in doc["sources"]:
        before = len(problems)
        diff = report / "chapters" / f"{src['id']}.patch"
        if not diff.exists():
            print(f"{src['id']}: no patch (no erratum of kind text or unstated)")
            continue
        claims = [c for c in doc["claims"] if c["source"] == src["id"]]
        fixed = [c for c in claims if (c.get("correction_proposal") or {}).get("proposed")]
        original = (ROOT / src["path"]).read_text(encoding="utf-8")
        with tempfile.TemporaryDirectory() as tmp:
            target = Path(tmp) / src["path"]
            target.parent.mkdir(parents=True)
            shutil.copy(ROOT / src["path"], target)
            subprocess.run(["git", "init", "-q"], cwd=tmp, check=True)
            done = subprocess.run(["git", "apply", str(diff.resolve())], cwd=tmp, capture_output=True, text=True)
            if done.returncode:
                problems.append(f"{src['id']}: git apply failed: {done.stderr.strip()}")
                continue
            patched = target.read_text(encoding="utf-8")
        old, new = original.splitlines(), patched.splitlines()
        allowed = touched_lines(original, [e["replaces"] for c in fixed for e in c["correction_proposal"]["edits"]])
        changed = set()  # 1-based old lines: those replaced or deleted; for a pure insertion, the line before it
        for tag, i1, i2, _, _ in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
            if tag != "equal":
                changed |= set(range(i1 + 1, i2 + 1)) if i2 > i1 else {max(i1, 1)}
        if changed - allowed:
            problems.append(f"{src['id']}: the patch changes lines no correction touches: {sorted(changed - allowed)}")
        lost = [c["id"] for c in claims if c not in fixed
                and any(not places(patched, q) for q in c["quote"].split(QUOTE_JOIN))]
        if lost:
            problems.append(f"{src['id']}: after the patch these claims' quotes are gone: {', '.join(lost)}")
        if len(problems) == before:
            print(f"{src['id']}: the patch applies to {src['path']} as committed; {len(fixed)} correction(s), "
                  f"{len(changed)} line(s) changed, each a corrected sentence's; the other "
                  f"{len(claims) - len(fixed)} claims' quotes are still found")
    return problems


if __name__ == "__main__":
    problems = check(Path(sys.argv[1] if len(sys.argv) > 1 else "reports"))
    for p in problems:
        print(f"error: {p}")
    raise SystemExit(1 if problems else 0)

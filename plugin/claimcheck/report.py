"""The report of one run, or of several merged: build the document (claims.json), write every
file of it into a folder, and the lines the terminal shows."""
import json
import os
from pathlib import Path

from .badge import badge_json, badge_svg, badge_text
from .chapters import annotate
from .corrections import CorrectionError, patch, propose
from .fingerprint import places
from .fmt import plural
from .html import page
from .markdown import corrections_md, markdown
from .marks import DEFAULT, MarkSettings
from .registry import QUOTE_JOIN
from .marks import TIER_SKIP
from .verdict import AT_CAP, RAN, STATUSES, checkable, figures, pins, status_text, summary, tiers_run, verdicts


def build(registry, tests: dict, runs: list[dict], suite=(), settings: MarkSettings = DEFAULT,
          suspects: dict | None = None, title: str | None = None, texts: dict[str, str] | None = None,
          root: Path | None = None) -> dict:
    """The claims.json document for these tests, from one run or several merged. ``suite``:
    the claim IDs some test of the whole suite names (to tell 'not collected' from 'untested');
    ``suspects``: the claims whose sentence changed (``fingerprint.check``); ``texts``: source
    ID -> its text, for the line each claim's quote starts on; ``root``: the folder a source's
    ``path`` (the one its patch names) is relative to, the working directory by default."""
    claims = verdicts(registry, tests, set(suite), settings, suspects)
    sources = getattr(registry, "sources", {})
    for c in claims:
        found = places(texts[c["source"]], c["quote"].split(QUOTE_JOIN)[0]) if c["source"] in (texts or {}) else []
        c["line"] = found[0].line if found else None
        language = sources[c["source"]].language if c["source"] in sources else "en"
        if not c.get("broken") and (proposal := propose(c, language)) is not None:  # a broken test proposes nothing
            c["correction_proposal"] = proposal
            lost = [e["replaces"] for e in proposal["edits"] if c["source"] in (texts or {})
                    and not places(texts[c["source"]], e["replaces"])]
            if proposal["proposed"] and lost:
                proposal.update(proposed=None, edits=[], missing=f"the passage it rewrites is not in the text: "
                                f"{lost[0]!r} (fix the claim's `replaces` in the registry)")
    last = runs[-1] if runs else {}

    def joined(key):
        return " + ".join(dict.fromkeys(str(r.get(key)) for r in runs)) or "unknown"

    paths = {s.id: _relative(s.path, root) for s in sources.values()}
    patches, problems = {}, []
    for sid, text in (texts or {}).items():
        try:
            patches[sid] = patch(paths[sid], _on_disk(sources[sid], text), [c for c in claims if c["source"] == sid]) \
                if sid in paths else ""
        except CorrectionError as e:  # the report is still written; corrections.md says why no patch
            problems.append(str(e))
    return {
        "title": title,
        "generated": last.get("generated"),
        "commit": joined("commit"),
        # what the document's conftest reports of each run (pytest_claimcheck_run_info)
        "info": {k: " + ".join(dict.fromkeys(str((r.get("info") or {}).get(k)) for r in runs))
                 for k in dict.fromkeys(k for r in runs for k in (r.get("info") or {}))},
        "tiers": tiers_run(tests, settings),
        "scales": settings.words,
        "sources": [{"id": s.id, "title": s.title, "language": s.language, "file": s.file,
                     "path": paths[s.id]} for s in sources.values()],
        "patches": {sid: p for sid, p in patches.items() if p},
        "patch_problems": problems,
        "summary": summary(claims),
        "claims": claims,
        "runs": runs,
        "pins": pins(tests),
        "figures": figures(tests),
        "suite": sorted(suite),
        "tests": tests,
    }


def _relative(path: Path, root: Path | None) -> str:
    """``path`` relative to ``root`` (the working directory), in a patch's spelling; absolute
    where it cannot be (another drive)."""
    try:
        return Path(os.path.relpath(Path(path), root or Path.cwd())).as_posix()
    except ValueError:
        return Path(path).as_posix()


def _on_disk(source, text: str) -> str:
    """The source's file as it is on disk, its line ends kept (a patch must match them); the
    text read for the report where the file cannot be read again."""
    try:
        with open(source.path, encoding="utf-8", newline="") as f:
            return f.read()
    except (OSError, AttributeError, UnicodeDecodeError):
        return text


def reached(t: dict) -> bool:
    """Whether a run reached a test: it ran, or skipped for a reason of its own (no corpus, no
    CUDA), not because its tier or a -k/-m expression left it out, nor because the run stopped."""
    return t.get("outcome") in RAN or (t.get("outcome") == "skipped" and t.get("reason") != TIER_SKIP)


def latest_results(docs: list[dict], keep=lambda nodeid: True) -> tuple[dict, list[dict]]:
    """(tests, runs): each test as the latest run that reached it saw it, from several runs'
    claims.json documents, oldest first; a test no run reached, as the latest run saw it. So a
    slow-only run after a fast one shows both, and ``-k``, one file, ``-x`` or Ctrl-C replace only
    the tests they reached. ``keep(nodeid)``: whether the test is still in the suite (a deleted
    test's old result is dropped). ``runs``: the runs some test comes from, each with ``tests``,
    how many."""
    tests: dict[str, dict] = {}
    source: dict[str, int] = {}
    for i, doc in enumerate(docs):
        for nodeid, t in (doc.get("tests") or {}).items():
            if keep(nodeid) and (reached(t) or nodeid not in tests or not reached(tests[nodeid])):
                tests[nodeid], source[nodeid] = t, i
    count = {i: sum(1 for j in source.values() if j == i) for i in set(source.values())}
    runs = [dict(r, tests=count[i]) for i in sorted(count) for r in (docs[i].get("runs") or [{}])[:1]]
    return tests, runs


def write(doc: dict, outdir: Path, texts: dict[str, str] | None = None) -> list[Path]:
    """Every file of the report into ``outdir``; with ``texts`` (source ID -> its text), each
    source annotated with its claims' verdicts under ``chapters/``."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    label, message, hexc, _ = badge_text(doc)
    files = {
        "claims.json": json.dumps(doc, indent=1, ensure_ascii=False, default=str),
        "claims.md": markdown(doc),
        "badge.svg": badge_svg(label, message, hexc),
        "badge.json": badge_json(doc),
        "index.html": page(doc),
    }
    stale = [outdir / "chapters" / f"{sid}.patch" for sid in (texts or {})]
    for sid, text in (texts or {}).items():
        files[f"chapters/{sid}.html"] = annotate(doc, sid, text)
        if (doc.get("patches") or {}).get(sid):
            files[f"chapters/{sid}.patch"] = doc["patches"][sid]
    files["corrections.md"] = corrections_md(doc)
    for p in stale:  # a patch of an earlier run whose corrections are gone
        if p.name not in {Path(n).name for n in files} and p.exists():
            p.unlink()
    paths = []
    for name, text in files.items():
        p = outdir / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        paths.append(p)
    return paths


REASON_CHARS = 150  # a terminal line's share for a verdict's reason: the report holds it whole


def terminal_lines(doc: dict) -> list[str]:
    s = doc["summary"]
    cap = f" ({s[AT_CAP]} at the cap)" if s.get(AT_CAP) else ""
    lines = [f"{plural(checkable(s), 'checkable claim')}: " + ", ".join(f"{s[k]} {k}" + cap * (k == "undecided") for k in STATUSES
                                                              if k != "descriptive" and (k not in ("suspect", "undecided") or s.get(k)))
             + f"; {s['descriptive']} descriptive"]
    for c in doc["claims"]:
        if c["status"] in ("fails", "diverges", "undecided", "suspect"):
            where = f"[{c['scale']}] " if c.get("scale") else ""
            shown = "BROKEN" if c.get("broken") else status_text(c).upper()  # the test's failure, not the text's
            lines.append(f"  {shown:9s} {c['id']:9s} {where}{c['reason'][:REASON_CHARS]}")
    stale = [p for p in doc.get("pins", []) if p["status"] == "stale"]
    for p in stale:
        lines.append(f"  STALE PIN {p['file']}: {p['reason'][:REASON_CHARS]}")
    return lines

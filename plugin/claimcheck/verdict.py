"""From test outcomes to one verdict per claim. Pure functions: the plugin and the merge
command share them, so a merged report is computed exactly like a single run's.

A test's outcome is one of: passed, failed, error, xfailed, undecided, xpassed, skipped,
deselected, not-reported. Each test measures at one scale (analytic, ci, full). At each scale, a claim's
status is, in this order of precedence:

    fails        a test that names it failed or errored (a strict xfail that passed included)
    diverges     a test recorded, with ``diverges``, that our measurement disagrees with the text
    undecided    a test measured, and its rule could not decide (``undecided``): an interval
                 straddles its band; more seeds decide, and it is neither a pass nor an erratum
    not-run      some test that names it was skipped, deselected or never reported
    not-measured every test that names it ran and passed, and none recorded a value for it
                 (``claim_record``): a pass that shows no evidence is not a *holds*
    holds        every test that names it ran and passed, and one recorded what it measured

Scales and tiers are the document's (``marks.MarkSettings``); the defaults are analytic < ci < full.

The claim's **headline** is ``fails`` if it fails at any scale; otherwise the status at the
highest scale where it holds, diverges or is undecided; otherwise ``not-measured`` where some
scale passed without a record; otherwise ``not-run``. A claim no collected test
names is ``not-run`` (not collected) when some test in the suite names it, ``descriptive``
when the catalogue marks it untestable, and ``untested`` otherwise. A claim whose quoted
sentence changed since it was stamped (``fingerprint``) is ``suspect`` whatever its tests say:
the verdict refers to a sentence that is no longer the same.
"""
from collections import defaultdict

from .marks import DEFAULT, NO_SCALE, MarkSettings

# A test that raised an exception other than a failed assertion (a typo'd ID, a crash, a fixture
# error): the claim reads fails, but it is the test's failure, listed apart from the errata.
BROKEN = "the test broke (an exception, not a failed assertion), so the sentence was not judged"

STATUSES = ("holds", "fails", "diverges", "undecided", "suspect", "not-measured", "not-run", "untested",
            "descriptive")
RAN = ("passed", "failed", "error", "xfailed", "undecided", "xpassed")
_RANK = {"failed": 6, "error": 6, "xfailed": 5, "undecided": 4, "xpassed": 3, "passed": 3,
         "skipped": 2, "deselected": 1, "not-reported": 0}


def _outcome(t: dict) -> str:
    if t["outcome"] not in _RANK:  # a typo must not read as a pass
        raise ValueError(f"unknown test outcome {t['outcome']!r}; expected one of {', '.join(_RANK)}")
    return t["outcome"]


def merge_test(a: dict | None, b: dict) -> dict:
    """One test seen by two runs: keep the one that ran; among two that ran, the worse. Ties
    (failed/error, passed/xpassed, equal outcomes) break on the outcome and then the reason, so
    the merge is the same in any order."""
    if a is None:
        _outcome(b)
        return b
    key = lambda t: (_RANK[_outcome(t)], t["outcome"], str(t.get("reason")))  # noqa: E731
    return max(a, b, key=key)


def tiers_run(tests: dict, settings: MarkSettings = DEFAULT) -> list[str]:
    ran = {t["tier"] for t in tests.values() if t["outcome"] in RAN and t.get("tier")}
    return [t for t in settings.tiers if t in ran] + sorted(ran - set(settings.tiers))


def measured_scale(test: dict, settings: MarkSettings = DEFAULT) -> str:
    """The scale a test measured at; a record without one (an older run) gets its tier's."""
    if not settings.scales:
        return NO_SCALE
    return test.get("scale") or settings.default_scale.get(test.get("tier")) or ("ci" if "ci" in settings.scales else list(settings.scales)[-1])


def _value(records, key):
    vals = [r for r in records if r.get(key) is not None]
    if not vals:
        return None
    if len(vals) == 1:
        return vals[0][key]
    out = {}
    for r in vals:
        label = r.get("label") or r["test"].rsplit("::", 1)[-1]
        while label in out:
            label += "'"
        out[label] = r[key]
    return out


def plain(reason: str, claim_id: str | None = None) -> str:
    """A test's reason as a reader reads it: without pytest's "xfail: " or "undecided: " and
    without the claim's own ID in front (the row already names it)."""
    reason = reason.removeprefix("xfail: ").removeprefix("undecided at the cap: ").removeprefix("undecided: ")
    if claim_id and reason.startswith(claim_id):
        head, sep, rest = reason[len(claim_id):].partition(": ")
        if sep and (not head or (head.startswith(" (") and head.endswith(")"))):
            reason = rest
    return reason


def scale_verdict(tests: list[tuple[str, dict]], claim_id: str | None = None) -> tuple[str, str, list[str]]:
    """(status, reason, details) from the tests that name a claim at one scale. ``reason``: the
    tests' own sentences; ``details``: which test said it, and whose evidence it judged. With
    ``claim_id``, a pass needs one of them to have recorded a value for that claim."""
    by = defaultdict(list)
    for nodeid, t in tests:
        by[_outcome(t)].append((nodeid, t))
    # full-scale tests that judged committed evidence say whose: "evidence recorded on <device>, <date>"
    evidence = list(dict.fromkeys(t["evidence"] for _, t in tests if t.get("evidence")))

    def said(outcome):
        return ("; ".join(dict.fromkeys(plain(t["reason"], claim_id) for _, t in by[outcome])),
                [f"{n}: {outcome}" for n, _ in by[outcome]] + evidence)

    if by["failed"] or by["error"]:
        failing = by["failed"] + by["error"]
        nodeid, t = next(((n, t) for n, t in failing if not t.get("broken")), failing[0])
        reason = t["reason"] if not t.get("broken") else f"{BROKEN}: {t['reason']}"
        return "fails", reason, [f"{nodeid}: {t['outcome']}"] + evidence
    if by["xfailed"]:
        return ("diverges", *said("xfailed"))
    if by["undecided"]:
        return ("undecided", *said("undecided"))
    missing = by["skipped"] + by["deselected"] + by["not-reported"]
    if missing:
        reasons = list(dict.fromkeys(t["reason"] for _, t in missing))
        ran = len(tests) - len(missing)
        tail = f"; the {ran} that ran passed" if ran else ""
        return ("not-run", f"{len(missing)} of {len(tests)} tests not run: {'; '.join(reasons)}{tail}",
                [f"{n}: {t['outcome']}" for n, t in missing])
    note = " (an expected divergence did not show: xpassed)" if by["xpassed"] else ""
    passed = f"{len(tests)} test{'s' * (len(tests) > 1)} passed"
    details = [f"{n}: {t['outcome']}" for n, t in tests] + evidence
    if claim_id is not None and not any(r.get("claim") == claim_id for _, t in tests for r in t.get("records") or ()):
        return "not-measured", (f"{passed}{note}, and none recorded a value for {claim_id}: claim_record(...) "
                                "puts what a test measured in the report"), details
    return "holds", f"{passed}{note}", details


def claim_verdict(claim, tests: list[tuple[str, dict]], in_suite: bool = False,
                  settings: MarkSettings = DEFAULT) -> dict:
    """The claim's headline ``status``, its ``scale`` and ``reason``, and ``scales``: the
    verdict at every scale some test measures it at."""
    if not tests:
        if in_suite:
            status, reason = "not-run", "not collected: no test selected in this run names it"
        elif claim.descriptive:
            status, reason = "descriptive", claim.untestable
        else:
            status, reason = "untested", "no test names this claim"
        return {"status": status, "scale": None, "reason": reason, "scales": {}}
    at = defaultdict(list)
    for nodeid, t in tests:
        at[measured_scale(t, settings)].append((nodeid, t))
    scales = {}
    words = settings.words
    for s in [*settings.scales, *sorted(set(at) - set(settings.scales))]:
        if at[s]:
            status, reason, details = scale_verdict(at[s], getattr(claim, "id", None))
            scales[s] = {"status": status, "reason": reason, "details": details, "tests": [n for n, _ in at[s]]}
            stuck = [t for _, t in at[s] if t["outcome"] == "undecided"]
            if status == "undecided" and all(t.get("at_cap") for t in stuck):
                scales[s]["at_cap"] = True  # its declared looks are spent: final
            if any(t["outcome"] in ("skipped", "deselected", "not-reported") for _, t in at[s]):
                scales[s]["partial"] = True  # some test of it did not run: a verdict of part of it
    failing = [s for s in scales if scales[s]["status"] == "fails"]
    ran = [s for s in scales if scales[s]["status"] in ("holds", "diverges", "undecided")]
    unmeasured = [s for s in scales if scales[s]["status"] == "not-measured"]
    if failing:
        head = failing[-1]
    elif ran or unmeasured:
        head = (ran or unmeasured)[-1]
    else:
        reasons = "; ".join((f"{words.get(s, s)}: " if words.get(s, s) else "") + v["reason"] for s, v in scales.items())
        return {"status": "not-run", "scale": None, "reason": reasons, "scales": scales}
    broken = scales[head]["status"] == "fails" and scales[head]["reason"].startswith(BROKEN)
    return {"status": scales[head]["status"], "scale": head, "reason": scales[head]["reason"], "broken": broken,
            "details": scales[head]["details"], "scales": scales, "at_cap": scales[head].get("at_cap", False)}


def headline_text(claim: dict, words: dict | None = None) -> str:
    """'holds (full scale); diverges at CI scale': the headline, then what other scales say.
    A report's claims carry it as ``headline``."""
    if claim.get("headline") and words is None:
        return claim["headline"]
    words = words or DEFAULT.words
    if claim["status"] == "suspect":
        return f"suspect (was {claim['was']})" if claim.get("was") else "suspect"
    if not claim.get("scale"):
        return claim["status"]
    others = [f"{status_text(v)} at {words.get(s, s)}" for s, v in claim["scales"].items()
              if s != claim["scale"] and status_text(v) != status_text(claim)]
    return "; ".join([f"{status_text(claim)} ({words.get(claim['scale'], claim['scale'])})"] + others)


def status_text(v: dict) -> str:
    """A claim's or a scale's status as a reader reads it: *undecided at the cap* when its
    declared looks are spent."""
    return "undecided at the cap" if v["status"] == "undecided" and v.get("at_cap") else v["status"]


def lower_scale_divergences(claim: dict) -> list[str]:
    """Scales below the headline's where the claim diverges (the headline itself holds or is
    undecided, so the claim is in no errata table of its own)."""
    if claim["status"] not in ("holds", "undecided"):
        return []
    return [s for s, v in claim["scales"].items() if v["status"] == "diverges"]


KIND_TEXT = {
    "setup": "our setup was wrong, and is fixed: the verdict is judged on the chapter's configuration",
    "unstated": "reproduces only under a setting the text leaves unstated: the text should state it",
    "text": "diverges under every setting tried: the text's number or sentence does not reproduce",
    "pending": "not classified yet: a setting the text leaves unstated is not yet measured on its declared looks",
    "undecided at the cap": "every setting tried is measured on its declared looks, and some stay undecided or hold on "
                            "one look only: the text's reading could not be settled within them",
}


UNCLASSIFIED = ("not classified: nothing has checked whether something the text leaves unstated explains the "
                "difference; where nothing could (arithmetic, a count), say so with `no_setting` in the registry")


def kind_text(diagnosis: dict | None) -> str:
    """What an erratum's kind means, in words that fit the claim: a claim the registry declares
    has nothing to try (arithmetic, a count) is not said to have had settings tried."""
    d = diagnosis or {}
    if d.get("kind") == "text" and not d.get("grid"):
        return "the text's number or sentence does not reproduce, and it leaves nothing unstated that could explain it"
    return KIND_TEXT.get(d.get("kind")) or "not classified yet"


POINT_STATES = {True: "yes", False: "no", None: "not measured"}


def point_state(entry: dict) -> str:
    """Whether the claim would hold at a grid point: "yes", "no", "undecided" (measured on its
    declared seeds, an interval across its band's edge: more seeds, declared first, would decide;
    the entry says so as ``"state": "undecided"``, with ``holds`` None) or "not measured" (wholly
    or in part)."""
    if entry["holds"] is None and entry.get("state") == "undecided":
        return "undecided"
    return POINT_STATES[entry["holds"]]


def point_looks(grid: list[dict]) -> dict[str, str]:
    """Each point tried (not the stated one, not a second look) -> what its looks show:
    ``explains`` (it holds, and holds again on a second look at seeds disjoint from the first's),
    ``no`` (its latest look does not hold), ``once`` (its latest look holds, and no second look on
    fresh seeds has held yet), or ``open`` (its latest look is unmeasured or undecided). Each look
    is judged by the claim's rule at the grid's Bonferroni level (``read_grid``)."""
    out = {}
    for e in grid:
        if e["point"] == "stated" or e.get("supersedes"):
            continue
        looks = [e] + [x for x in grid if x.get("supersedes") == e["point"]]
        held = [x for x in looks if x["holds"] is True]
        fresh = any(set(a.get("seeds") or ()).isdisjoint(b.get("seeds") or ()) and a.get("seeds") and b.get("seeds")
                    for i, a in enumerate(held) for b in held[i + 1:])
        last = looks[-1]["holds"]
        out[e["point"]] = "explains" if fresh else "no" if last is False else "once" if last else "open"
    return out


def _last(grid: list[dict], point: str) -> dict:
    """A point's latest look: its last second look, or the point itself."""
    return [x for x in grid if x["point"] == point or x.get("supersedes") == point][-1]


def erratum_kind(status: str, diagnosis: dict | None) -> dict | None:
    """Which kind of erratum a claim is, from its diagnosis grid: ``setup`` when our
    configuration was fixed and the claim now holds; for a divergence, ``unstated`` (naming the
    points) when a point tried holds at the grid's Bonferroni level and again on a second look at
    fresh seeds, ``text`` when every point tried was measured and none holds, ``pending`` while
    some point's declared looks are not all measured, and ``undecided at the cap`` once they are
    and some point stays undecided or holds on one look only (``point_looks``): a kind that
    cannot stay pending for ever."""
    if not diagnosis:
        return None
    grid = diagnosis.get("grid") or []
    if status == "holds":
        return {"kind": "setup", "reason": diagnosis["fixed"]} if diagnosis.get("fixed") else None
    if status != "diverges":
        return None
    looks = point_looks(grid)
    explains = [p for p, v in looks.items() if v == "explains"]
    if explains:
        return {"kind": "unstated", "points": explains, "reason": "holds at " + ", ".join(explains)
                + ", at the grid's Bonferroni level and again on fresh seeds"}
    if grid and all(v == "no" for v in looks.values()):
        return {"kind": "text", "reason": f"none of the {len(looks)} settings tried holds"}
    # a point with any declared look not yet measured is not measured, whatever its other looks show
    unmeasured = [p for p in looks if any(point_state(x) == "not measured" for x in grid
                                          if x["point"] == p or x.get("supersedes") == p)]
    once = [p for p, v in looks.items() if v == "once" and p not in unmeasured]
    undecided = [p for p, v in looks.items() if v == "open" and p not in unmeasured
                 and point_state(_last(grid, p)) == "undecided"]
    n = len(looks)
    if grid and not unmeasured:
        said = {p: "chosen on the split it is reported on" if _last(grid, p).get("selected_on_report") else "undecided"
                for p in undecided}
        remain = [f"{p} ({said.get(p, 'holds on one look')})" for p in [*undecided, *once]]
        return {"kind": "undecided at the cap", "points": [*undecided, *once],
                "reason": f"every point is measured on its declared looks; the readings that remain: {', '.join(remain)}"}
    parts = [f"{len(unmeasured)} of {n} points not measured yet: " + ", ".join(unmeasured)] * bool(unmeasured)
    parts += [f"{len(undecided)} of {n} points undecided on their declared seeds: " + ", ".join(undecided)] * bool(undecided)
    parts += [f"{len(once)} of {n} points hold on one look, and need a second on fresh seeds: "
              + ", ".join(once)] * bool(once)
    return {"kind": "pending", "reason": "; ".join(parts) or "no grid point declared"}


def diagnoses(tests: dict) -> dict[str, dict]:
    """claim ID -> the diagnosis a test reported for it (the worse outcome's, when merged)."""
    return {t["diagnosis"]["claim"]: t["diagnosis"] for _, t in sorted(tests.items()) if t.get("diagnosis")}


def headline_records(claim: dict) -> list[dict]:
    """The claim's records measured at its headline scale (all of them when it has none)."""
    at = [r for r in claim.get("records", []) if r.get("scale") == claim.get("scale")]
    return at or claim.get("records", [])


def _judged(records: list[dict]) -> list[dict]:
    """The records a rule judged (tolerance not 'reported'), else all of them."""
    return [r for r in records if (r.get("tolerance") or "reported") != "reported"] or records


def marked_record(claim: dict) -> dict | None:
    """The record the sentence is about: the last one at the headline scale that its test
    recorded with ``claim_record(..., subject=True)``; None when no record is so marked."""
    marked = [r for r in headline_records(claim) if r.get("subject") and r.get("measured") is not None]
    return marked[-1] if marked else None


def subject_record(claim: dict) -> dict | None:
    """The record an errata row shows: the marked one (``marked_record``), else the last one a
    rule judged at the headline scale. None when there is no such record."""
    recs = [r for r in headline_records(claim) if r.get("measured") is not None]
    return marked_record(claim) or (_judged(recs)[-1] if recs else None)


def headline_value(claim: dict) -> tuple[object, object, str]:
    """(document's value, ours, label): one line each for an errata row, at the headline scale:
    the record the sentence is about (``subject_record``)."""
    r = subject_record(claim)
    if r is None:
        return claim.get("expected"), claim.get("measured"), ""
    return (r["expected"] if r.get("expected") is not None else claim.get("expected")), r["measured"], \
        r.get("label") or ""


# the registry's fields a correction is made from (claimcheck.corrections), copied into the report
CORRECTION_FIELDS = ("correction", "replaces", "no_setting", "setting_words")


def verdicts(registry: dict, tests: dict, suite: set[str] = frozenset(), settings: MarkSettings = DEFAULT,
             suspects: dict | None = None) -> list[dict]:
    """The report's ``claims`` list, in registry order. ``suite``: the claim IDs some test in
    the whole suite names, collected in this run or not. ``suspects``: claim ID -> ``{why, old,
    new}`` for each claim whose sentence changed since it was stamped (``fingerprint.check``)."""
    naming = defaultdict(list)
    for nodeid, t in sorted(tests.items()):
        for cid in t["claims"]:
            naming[cid].append((nodeid, t))
    out, diag = [], diagnoses(tests)
    for c in registry.values():
        ts = naming.get(c.id, [])
        v = claim_verdict(c, ts, in_suite=c.id in suite, settings=settings)
        records = [dict(r, test=n, scale=measured_scale(t, settings)) for n, t in ts for r in t.get("records", [])
                   if r["claim"] == c.id]
        tolerances = list(dict.fromkeys(r["tolerance"] for r in records if r.get("tolerance")))
        out.append({
            "id": c.id, "source": c.source, "section": c.section, "where": getattr(c, "where", ""), "quote": c.quote,
            "statement": c.statement, "expected": c.value,  # the registry is the one source
            "measured": _value(records, "measured"), "tolerance": "; ".join(tolerances) or None,
            "tier": c.tier, "status": v["status"], "scale": v["scale"], "reason": v["reason"],
            **({"at_cap": True} if v.get("at_cap") else {}), **({"broken": True} if v.get("broken") else {}),
            "details": v.get("details", []), "scales": v["scales"], "tests": [n for n, _ in ts], "records": records,
            **{k: getattr(c, k) for k in CORRECTION_FIELDS if getattr(c, k, None)},
        })
        if c.id in diag:
            out[-1]["diagnosis"] = dict(diag[c.id], **(erratum_kind(v["status"], diag[c.id]) or {}))
        elif v["status"] == "diverges" and getattr(c, "no_setting", None):  # declared: nothing to try
            out[-1]["diagnosis"] = {"claim": c.id, "kind": "text", "grid": [],
                                    "reason": c.no_setting}
        if (suspects or {}).get(c.id):
            sus = suspects[c.id]
            out[-1].update(status="suspect", was=v["status"], suspect=sus,
                           reason=f"{sus['why']}; the tests said: {v['status']}: {v['reason']}")
        out[-1]["headline"] = headline_text(out[-1], settings.words)
    return out


OTHER = "Other"  # the heading of the claims the registry gives no section


def by_section(claims: list[dict]) -> list[tuple[str, list[dict]]]:
    """(section, its claims) in the order sections first appear, each section once however its
    claims interleave in the registry; claims without a section last, under OTHER."""
    groups: dict[str, list[dict]] = {}
    for c in claims:
        groups.setdefault(c.get("section") or "", []).append(c)
    named = [(sec, cs) for sec, cs in groups.items() if sec]
    return named + ([(OTHER, groups[""])] if "" in groups else [])


def pins(tests: dict) -> list[dict]:
    """Every pin a test checked: {name, file, tolerance, meaning, test, status, reason}.
    A pin is fresh when its test passed, stale when it failed, not-run otherwise."""
    out = []
    for nodeid, t in sorted(tests.items()):
        for p in t.get("pins", []):
            status = {"passed": "fresh", "failed": "stale", "error": "stale"}.get(t["outcome"], "not-run")
            out.append(dict(p, test=nodeid, status=status, reason=t["reason"]))
    return out


def figures(tests: dict) -> list[dict]:
    """Every figure the tests attached: {claim, path, test}."""
    return [dict(f, test=n) for n, t in sorted(tests.items()) for f in t.get("figures", [])]


AT_CAP = "undecided at the cap"


def summary(claims: list[dict]) -> dict[str, int]:
    """Claims per status (``STATUSES``), then ``undecided at the cap``: how many of the
    undecided have spent their declared looks (a part of ``undecided``, not added to it)."""
    counts = {s: 0 for s in STATUSES}
    for c in claims:
        counts[c["status"]] += 1
    counts[AT_CAP] = sum(status_text(c) == AT_CAP for c in claims)
    return counts


def checkable(s: dict) -> int:
    """The claims a summary counts, less the descriptive ones."""
    return sum(s[k] for k in STATUSES) - s["descriptive"]


MEASURED_STATUSES = ("holds", "diverges", "undecided", "fails")


def diff(a: dict, b: dict) -> list[dict]:
    """Every claim the two reports judge differently, in a's order then b's: ``{id, a, b,
    disagrees, one_run}``, the headlines, the scales where both runs measured the claim
    (holds, diverges, undecided or fails) and read it differently, and the scales only one run measured.

    A claim ``disagrees`` when some scale both runs measured reads differently, when both give
    it an erratum kind and the kinds differ ("kind"; the headline shows it in brackets), or when
    it is in one report only; a scale whose verdict differs below an equal headline counts too. When
    nothing both measured disagrees, a moved headline comes only from a scale one run could
    not measure (full-scale evidence for seeds nobody recorded, say): ``disagrees`` is empty."""
    def heads(doc):
        return {c["id"]: c for c in doc["claims"]}

    order = list(dict.fromkeys([*(a.get("scales") or DEFAULT.words), *(b.get("scales") or DEFAULT.words)]))
    words = {**DEFAULT.words, **(b.get("scales") or {}), **(a.get("scales") or {})}

    def head(c):
        if c is None:
            return "absent"
        kind = (c.get("diagnosis") or {}).get("kind")
        return (f"{status_text(c)}" + (f" ({words.get(c['scale'], c['scale'])})" if c.get("scale") else "")
                + (f" [{kind}]" if kind else ""))

    def status(c, s):
        v = (c.get("scales") or {}).get(s, {})
        return status_text(v) if v.get("status") in MEASURED_STATUSES else None

    def kind(c):
        return (c.get("diagnosis") or {}).get("kind")

    ca, cb = heads(a), heads(b)
    rows = []
    for cid in list(ca) + [c for c in cb if c not in ca]:
        x, y = ca.get(cid), cb.get(cid)
        if x is None or y is None:
            rows.append({"id": cid, "a": head(x), "b": head(y), "disagrees": ["registry"], "one_run": []})
            continue
        both = [s for s in order if status(x, s) and status(y, s)]
        disagrees = [s for s in both if status(x, s) != status(y, s)]
        one_run = [s for s in order if bool(status(x, s)) != bool(status(y, s))]
        if kind(x) != kind(y) and kind(x) and kind(y):
            disagrees = disagrees + ["kind"]  # the same erratum, explained differently
        if head(x) != head(y) and not one_run:
            disagrees = disagrees or ["headline"]  # e.g. untested against descriptive
        if disagrees or head(x) != head(y):
            rows.append({"id": cid, "a": head(x), "b": head(y), "disagrees": disagrees, "one_run": one_run})
    return rows


def unknown_ids(registry: dict, tests: dict) -> dict[str, list[str]]:
    """Claim IDs named by tests but absent from the registry -> the tests naming them."""
    out = defaultdict(list)
    for nodeid, t in tests.items():
        for cid in t["claims"]:
            if cid not in registry:
                out[cid].append(nodeid)
    return dict(out)

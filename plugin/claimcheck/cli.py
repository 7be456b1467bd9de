"""The ``claimcheck`` command: check the registry, merge runs, compare two reports, stamp fingerprints.

    claimcheck check [--registry claims.toml] [TESTS ...]
    claimcheck merge reports/runs/*/claims.json --out reports
    claimcheck diff A/claims.json B/claims.json [--measured]
    claimcheck stamp [--registry claims.toml] [ID ...]
    claimcheck apply [REPORT_DIR] [--dry-run]

Without --registry, the registry is the one the project's ini names (claimcheck_registry), in the
file pytest reads: pytest.toml, pytest.ini, pyproject.toml, tox.ini or setup.cfg, in the current
folder or the nearest above it that has one.
"""
import argparse
import json
import re
import tomllib
from pathlib import Path

import iniconfig

from . import __version__, check, corrections, fingerprint, report
from .marks import DEFAULT, TIERS, MarkSettings
from .fmt import plural
from .registry import QUOTE_JOIN, Registry, RegistryError, load_registry
from .suite import PYTHON_FILES
from .suite import read as read_suite
from .verdict import diff, merge_test


# pytest's configuration files, in its order within one folder (pytest 9, _pytest/config/findpaths.py):
# the nearest folder, from the invocation up, with one that configures pytest holds the project's.
INI_FILES = ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")


def _pytest_options(path: Path) -> dict | None:
    """The pytest options in the file at ``path`` (one of INI_FILES), as pytest parses it (iniconfig
    for the ini files, native TOML values in ``[pytest]`` and ``[tool.pytest]``); None where the file
    does not configure pytest. A dedicated pytest file configures it even when empty."""
    if path.suffix == ".toml":
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
        if path.name != "pyproject.toml":
            return doc.get("pytest", {})
        tool = doc.get("tool", {}).get("pytest", {})
        native = {k: v for k, v in tool.items() if k != "ini_options"}
        return native or tool.get("ini_options")
    ini = iniconfig.IniConfig(str(path))
    section = "tool:pytest" if path.name == "setup.cfg" else "pytest"
    if section in ini:
        return dict(ini[section].items())
    return {} if path.name in ("pytest.ini", ".pytest.ini") else None


def find_ini(folder: Path) -> tuple[Path | None, dict]:
    """The project's pytest configuration file and its options, found as pytest finds it from
    ``folder``: (None, {}) where no file configures pytest."""
    for base in (folder.resolve(), *folder.resolve().parents):
        for name in INI_FILES:
            if not (base / name).is_file():
                continue
            try:
                options = _pytest_options(base / name)
            except (iniconfig.ParseError, tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
                raise SystemExit(f"claimcheck: {base / name}: {e}; fix the file (pytest reads it too)") from None
            if options is not None:
                return base / name, options
    return None, {}


def ini_value(folder: Path, key: str):
    """An ini option as pytest reads it from ``folder``: a string, a list, or None."""
    return find_ini(folder)[1].get(key)


def ini_root(folder: Path) -> Path:
    """The folder an ini's relative paths start from: its file's (pytest's rootdir), else ``folder``."""
    path, _ = find_ini(folder)
    return path.parent if path else folder


def _lines(value) -> list[str]:
    if value is None:
        return []
    return [v.strip() for v in (value if isinstance(value, list) else value.splitlines()) if v.strip()]


def default_registry(folder: Path = Path(".")) -> Path | None:
    """The registry the project's ini names (``claimcheck_registry``)."""
    path, options = find_ini(folder)
    found = options.get("claimcheck_registry")
    return path.parent / found if found else None  # from the ini's folder, as pytest's paths


def ini_tiers(folder: Path) -> tuple[str, ...]:
    """The tiers the project's ini declares (``claimcheck_tiers``), as the plugin reads them."""
    return tuple(line.partition(":")[0].strip() for line in _lines(ini_value(folder, "claimcheck_tiers"))) or TIERS


def check_command(registry, folder: Path, tests: list[str]) -> int:
    """``claimcheck check``: print every problem, one line each; 1 when any is an error. ``registry``:
    a path (read here with the ini's tiers, as a run reads it: a registry that does not load is
    one error line) or a loaded registry."""
    tiers = ini_tiers(folder)
    if not isinstance(registry, Registry):
        try:
            registry = load_registry(registry, tiers)
        except RegistryError as e:  # the line a pytest run stops with
            print(f"error   {e}")
            print(f"{Path(registry).name}: 1 error(s), 0 warning(s): the registry stops at its first error; fix it "
                  "and run again")
            return 1
    if not tests and (testpaths := [p for v in _lines(ini_value(folder, "testpaths")) for p in v.split()]):
        folder, tests = ini_root(folder), testpaths  # they start from the ini's folder, as pytest's do
    missing = [p for p in tests if not (folder / p).exists()]
    if missing:
        raise SystemExit(f"claimcheck check: no such test file or folder: {', '.join(missing)}")
    patterns = tuple(p for v in _lines(ini_value(folder, "python_files")) for p in v.split()) or PYTHON_FILES
    entries = read_suite(folder, tests, tiers, patterns)
    found = check.problems(registry, _texts(registry), entries)
    for p in found:
        print(("error   " if p.error else "warning ") + str(p))
    errors = sum(p.error for p in found)
    print(f"{registry.path.name}: {plural(len(registry), 'claim')}, {plural(len(entries), 'test')} read; "
          f"{errors} error(s), {len(found) - errors} warning(s)")
    return 1 if errors else 0


def merge(paths, registry) -> dict:
    """One report from several runs' claims.json files."""
    tests, runs, suite = {}, [], set()
    docs = sorted((_load(p) for p in paths), key=lambda d: d.get("generated") or "")
    scales, tiers, title = {}, [], None
    for doc in docs:
        if "tests" not in doc:
            raise SystemExit("merge: a file has no 'tests' section; was it written by claimcheck?")
        runs += doc.get("runs", [])
        suite |= set(doc.get("suite", []))
        scales.update(doc.get("scales") or {})
        tiers += [t for t in doc.get("tiers", []) if t not in tiers]
        title = doc.get("title") or title
        for nodeid, t in doc["tests"].items():
            tests[nodeid] = merge_test(tests.get(nodeid), t)
    settings = MarkSettings(tiers={t: "" for t in [*DEFAULT.tiers, *tiers]},
                        scales={s: (w, "") for s, w in (scales or DEFAULT.words).items()})
    # suspect as the text reads now, whatever the runs said then
    try:
        stamps = fingerprint.load_stamps(fingerprint.stamps_path(registry))
    except ValueError as e:
        raise SystemExit(f"merge: {e}") from None
    texts = _texts(registry)
    suspects = fingerprint.check(registry, texts, stamps)
    return report.build(registry, tests, runs, suite, settings, suspects, title, texts)


def _requote(registry_text: str, cid: str, old: str, new: str) -> str | None:
    """The registry's text with claim ``cid``'s quote (and its ``replaces``, where given) saying
    ``new`` where it said ``old`` (as TOML writes a basic string's contents), or None when its quote
    does not hold ``old`` as written."""
    esc = lambda t: t.replace("\\", "\\\\").replace('"', '\\"')  # noqa: E731
    m = re.search(r'\nid = "%s"\n(.*?)(?=\n\[\[claim\]\]|\Z)' % re.escape(cid), registry_text, re.S)
    if not m:
        return None
    block = m.group(1)
    for key in ("quote", "replaces"):
        q = re.search(r'^%s = (?:"[^\n]*"|\[.*?^\])' % key, block, re.S | re.M)
        if q and esc(old) in q.group(0):
            block = block[:q.start()] + q.group(0).replace(esc(old), esc(new), 1) + block[q.end():]
        elif key == "quote":
            return None
    return registry_text[:m.start(1)] + block + registry_text[m.end(1):]


def apply_command(folder: Path, dry_run: bool = False, registry: Path | None = None) -> int:
    """Each source's proposed corrections, from the report in ``folder``, written into the file the
    report names (relative to the current folder, the run's root), and each corrected claim's
    quote in the registry made to say the new sentence. Everything is worked out first: a passage
    no longer in its text, a quote the registry writes otherwise, or another claim's quote that the
    change would remove is one line each, and nothing is written. The claims it changes then read
    suspect until reviewed and stamped."""
    doc = _load(folder / "claims.json")
    reg_path = registry or default_registry()
    if reg_path is None or not reg_path.is_file():
        raise SystemExit("claimcheck apply: no registry: pass --registry, or run where the ini names claimcheck_registry")
    reg_text = reg_path.read_text(encoding="utf-8")
    writes, problems, fixed_all = [], [], []
    for src in doc.get("sources") or []:
        claims = [c for c in doc["claims"] if c["source"] == src["id"]]
        fixed = [c for c in claims if (c.get("correction_proposal") or {}).get("proposed")]
        if not fixed:
            continue
        path = Path(src.get("path") or src["file"])
        if not path.is_file():
            problems.append(f"{path} is not here: run it from the folder the tests ran in")
            continue
        text = path.read_bytes().decode("utf-8")  # line ends as they are: CRLF stays CRLF
        try:
            new = corrections.corrected(str(path), text, claims)
            diff = corrections.patch(src.get("path") or src["file"], text, claims) if dry_run else ""
        except corrections.CorrectionError as e:
            problems.append(f"{e} (was the text edited since the run? run the tests again)")
            continue
        lost = [c["id"] for c in claims if c not in fixed
                and any(not fingerprint.places(new, q) for q in c["quote"].split(QUOTE_JOIN))]
        if lost:
            problems.append(f"{path}: the corrections would remove the sentences {', '.join(lost)} quote")
        for c in fixed:
            for e in c["correction_proposal"]["edits"]:
                after = _requote(reg_text, c["id"], e["replaces"], e["with"])
                if after is None:
                    problems.append(f"{c['id']}: its quote in {reg_path} does not hold the corrected passage as "
                                    "written: copy the new sentence into its quote by hand")
                else:
                    reg_text = after
        writes.append((path, new, diff, fixed))
        fixed_all += fixed
    if problems:
        raise SystemExit("\n".join(f"claimcheck apply: {p}" for p in problems) + "\nnothing was written")
    if not writes:
        print(f"no proposed correction in {folder / 'claims.json'}")
        return 0
    for path, new, diff, fixed in writes:
        if dry_run:
            print(diff, end="")
            continue
        path.write_bytes(new.encode("utf-8"))
        print(f"{path}: {len(fixed)} correction(s) written ({', '.join(c['id'] for c in fixed)}); their claims "
              "read suspect until reviewed: check each claim's value and statement, then `claimcheck stamp ID ...`")
    if not dry_run:
        reg_path.write_text(reg_text, encoding="utf-8")
        print(f"{reg_path}: the quotes of {', '.join(c['id'] for c in fixed_all)} now say the corrected sentences")
    return 0


def _load(path) -> dict:
    path = Path(path)
    if not path.is_file():
        raise SystemExit(f"no such report file: {path}")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise SystemExit(f"{path} is not a claimcheck report (invalid JSON: {e})") from None


def _registry_path(path) -> Path:
    path = path or default_registry()
    if path is None:
        raise SystemExit("claimcheck: no registry: pass --registry, or run where pyproject.toml or pytest.ini "
                         "names claimcheck_registry")
    return Path(path)


def _registry(path):
    path = _registry_path(path)
    try:
        return load_registry(path, tiers=None)  # the tiers are the document's ini's, checked by the plugin
    except RegistryError as e:
        raise SystemExit(f"claimcheck: {e}") from None


def _texts(registry) -> dict[str, str]:
    try:
        return registry.texts()
    except RegistryError as e:
        raise SystemExit(f"claimcheck: {e}") from None


def main(argv=None):
    ap = argparse.ArgumentParser(prog="claimcheck", description="Check a document's claims with pytest: "
                                 "the registry, stamps, and reports of runs.")
    ap.add_argument("--version", action="version", version=f"claimcheck {__version__}")
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check", help="check the registry against its texts and the tests, without running "
                                     "them: one line per problem; exit 1 when any is an error")
    c.add_argument("tests", nargs="*", help="test files or folders (default: the ini's testpaths, else the "
                                            "current folder)")
    c.add_argument("--registry", help="default: the project's claimcheck_registry")
    m = sub.add_parser("merge", help="merge several runs' claims.json into one report")
    m.add_argument("files", nargs="+", help="the runs' claims.json files (reports/runs/*/claims.json)")
    m.add_argument("--out", default="reports", help="the folder the merged report is written to "
                                                     "(default: reports)")
    m.add_argument("--registry", help="default: the project's claimcheck_registry")
    d = sub.add_parser("diff", help="list the claims two reports judge differently, at any scale; exit 1 "
                                    "when any does")
    d.add_argument("a", help="a report's claims.json")
    d.add_argument("b", help="another report's claims.json")
    d.add_argument("--measured", action="store_true",
                   help="exit 1 only when a scale both runs measured reads differently: for a run that "
                        "cannot measure a scale (seeds with no recorded evidence, say)")
    s = sub.add_parser("stamp", help="fingerprint the sentence each claim quotes, after a review: "
                                     "its claims stop reading suspect")
    s.add_argument("ids", nargs="*", help="only these claims (default: every claim)")
    s.add_argument("--registry", help="default: the project's claimcheck_registry")
    a = sub.add_parser("apply", help="write a report's proposed corrections into the texts they correct, in "
                                     "this checkout (hard wraps kept); the claims they change then read suspect "
                                     "until `claimcheck stamp`")
    a.add_argument("report", nargs="?", help="the report's folder (default: the claimcheck_report_dir ini option, "
                                              "else reports)")
    a.add_argument("--dry-run", action="store_true", help="print the changes as a unified diff; write nothing")
    a.add_argument("--registry", help="default: the project's claimcheck_registry")
    args = ap.parse_args(argv)
    if args.cmd == "apply":
        raise SystemExit(apply_command(Path(args.report or ini_value(Path("."), "claimcheck_report_dir") or "reports"),
                                       args.dry_run, Path(args.registry) if args.registry else None))
    if args.cmd == "diff":
        a, b = _load(args.a), _load(args.b)
        rows = diff(a, b)
        words = {**DEFAULT.words, **(b.get("scales") or {}), **(a.get("scales") or {})}
        said = lambda ss: ", ".join(words.get(s, s) for s in ss)  # noqa: E731
        for r in rows:
            why = (f"disagrees at {said(r['disagrees'])}" if r["disagrees"] else
                   f"agrees wherever both measured; {said(r['one_run'])} measured in one run only")
            print(f"{r['id']:10s} {r['a']:28s} -> {r['b']:28s} {why}")
        disagree = [r for r in rows if r["disagrees"]]
        print(f"{len(rows)} of {len(a['claims'])} claims differ between {args.a} and {args.b}: "
              f"{len(disagree)} disagree at a scale both runs measured, {len(rows) - len(disagree)} only "
              "where one run measured a scale the other did not")
        raise SystemExit(1 if disagree or (rows and not args.measured) else 0)
    if args.cmd == "check":  # read with the project's tiers, as a run reads it
        raise SystemExit(check_command(_registry_path(args.registry), Path("."), args.tests))
    registry = _registry(args.registry)
    if args.cmd == "stamp":
        unknown = [i for i in args.ids if i not in registry]
        if unknown:
            raise SystemExit(f"claimcheck stamp: not in the registry: {', '.join(unknown)}")
        path = fingerprint.stamps_path(registry)
        try:
            old = fingerprint.load_stamps(path) or {}
        except ValueError as e:
            if args.ids:
                raise SystemExit(f"claimcheck stamp: {e}") from None
            old = {}
        now = fingerprint.stamp(registry, _texts(registry))
        ids = args.ids or list(registry)
        # a claim whose quote is not found cannot be stamped: its reviewed stamp stays, and it stays suspect
        stamps = {cid: v for cid, v in old.items() if cid in registry and (cid not in ids or cid not in now)}
        stamps.update({cid: now[cid] for cid in ids if cid in now})
        fingerprint.save_stamps(path, {cid: stamps[cid] for cid in registry if cid in stamps})
        lost = [cid for cid in ids if cid not in now]
        changed = [cid for cid in ids if cid in now and old.get(cid, {}).get("fingerprint") != now[cid]["fingerprint"]]
        print(f"stamped {len(ids) - len(lost)} claim(s) in {path}; {len(changed)} new or changed since the last "
              "stamp" + (f"; quote not found, not stamped: {', '.join(lost)}" if lost else ""))
        raise SystemExit(1 if lost else 0)
    doc = merge(args.files, registry)
    report.write(doc, Path(args.out), _texts(registry))
    print("\n".join(report.terminal_lines(doc)))
    print(f"merged {len(args.files)} run(s) into {args.out}/claims.md")


if __name__ == "__main__":
    main()

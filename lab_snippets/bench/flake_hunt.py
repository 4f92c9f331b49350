"""Flake hunt: run the whole nbval suite N times, some runs with both cores kept busy, and count passes.

    python -m lab_snippets.bench.flake_hunt --runs 10 --hog-runs 3
    python -m lab_snippets.bench.flake_hunt --runs 3 --hog-runs 0 -- -k 06_semaphore   # extra pytest args
    python -m lab_snippets.bench.flake_hunt --runs 10 --hog --neighbour bursty --builds 3

Each run is ``python -m pytest notebooks`` with the project's own pytest options (two xdist workers,
``--dist loadfile``, the leak audit around every notebook) and a JUnit report; a notebook passes a
run when none of its cells (audit cells included) failed or errored. ``--hog-runs`` of the runs,
spread evenly, happen under a CPU hog: one busy-loop process per CPU, started just before the run
and always stopped after it (each also stops itself after ``--hog-max`` seconds or when this
script dies). A constant hog slows both sides of a timing comparison alike; ``--neighbour bursty``
instead alternates random spans of busy loop and sleep (50-400 ms each, seeded) on every CPU, so
one side of a comparison can run loaded and the other not. ``--builds N`` then runs N clean book
builds (``python -m lab_snippets.book.bookbuild --clean`` in a temporary copy) under the neighbour and
names each chapter that failed with the exception that fired. Reports, logs and a ``summary.json``
(wall times, for ``timing.py --from``) are kept in ``--out`` (default ``build/flake_hunt/<time>``).
Exit status 1 when any notebook failed any run.

Notebooks appear while chapters are written: a notebook is counted over the runs it was in.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from lab_snippets import REPO_ROOT

ROOT = REPO_ROOT
TOP_IGNORE = {".git", ".venv", ".nox", "_build", "build", ".ruff_cache", "test-artifacts"}
ANY_IGNORE = shutil.ignore_patterns("__pycache__", ".pytest_cache", "*.egg-info", ".ipynb_checkpoints",
                                    "*.ipynb")


def _copy_ignore(folder: str, names: list[str]) -> set[str]:
    skip = set(ANY_IGNORE(folder, names))
    if Path(folder).resolve() == ROOT.resolve():
        skip |= TOP_IGNORE & set(names)
    return skip


def copy_tree(dest: Path) -> Path:
    """A copy of the working tree (sources only: no .git, venvs or build products)."""
    shutil.copytree(ROOT, dest, ignore=_copy_ignore, symlinks=True)
    return dest


ANSI = re.compile(r"(?:\x1b|#x1B)\[[0-9;]*[A-Za-z]")  # junitxml writes ESC as "#x1B"

# A busy loop that stops by itself at a deadline or when its parent (this script) is gone.
_HOG_CODE = """\
import os, sys, time
deadline = time.monotonic() + float(sys.argv[1])
parent = os.getppid()
while time.monotonic() < deadline and os.getppid() == parent:
    for _ in range(200000):
        pass
"""

# A bursty neighbour (one per CPU): alternates busy and idle spans drawn from [low, high] seconds
# with its own seeded generator, so a comparison's two sides can see different loads. Same stops
# as the busy loop; with a fifth argument it appends each span ("busy 0.123") to that file.
_BURSTY_CODE = """\
import os, random, sys, time
seed, low, high, limit = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
trace = open(sys.argv[5], "a", buffering=1) if len(sys.argv) > 5 else None
rng = random.Random(seed)
deadline = time.monotonic() + limit
parent = os.getppid()
busy = rng.random() < 0.5
while time.monotonic() < deadline and os.getppid() == parent:
    span = rng.uniform(low, high)
    if trace:
        trace.write(("busy" if busy else "idle") + " %.3f\\n" % span)
    end = min(time.monotonic() + span, deadline)
    if busy:
        while time.monotonic() < end:
            for _ in range(20000):
                pass
    else:
        time.sleep(max(0.0, end - time.monotonic()))
    busy = not busy
"""


# ---------------------------------------------------------------- JUnit parsing (pure)


@dataclass
class NotebookRun:
    """One notebook in one run: its cells' outcome and summed time (setup+call+teardown)."""

    name: str
    cells: int = 0
    skipped: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)  # (cell, first line of the message)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return not self.failed and self.cells > 0


def notebook_of(classname: str, name: str) -> str | None:
    """The chapter a JUnit testcase belongs to (``01_async_def``), or None for other tests.

    nbval cells have ``classname="notebooks.01_async_def"``; a notebook that failed to collect
    is reported with an empty classname and its path (``notebooks/01_async_def.py``) as name.
    """
    for text in (classname, name):
        m = re.match(r"^notebooks[./](\d\d_[A-Za-z0-9_]+?)(?:\.py)?$", text or "")
        if m:
            return m.group(1)
    return None


def _first_line(text: str, limit: int = 200) -> str:
    lines = [ln.strip() for ln in ANSI.sub("", text or "").splitlines() if ln.strip()]
    # nbval puts the interesting part (the exception) last; pytest's message first.
    exc = re.compile(r"^[\w.]*(Error|Exception|Timeout)\w*(:|$)")
    pick = next((ln for ln in reversed(lines) if exc.match(ln)), None)
    line = pick or (lines[0] if lines else "")
    return line[:limit]


def parse_junit(source: str | Path) -> dict[str, NotebookRun]:
    """Per-notebook results of one JUnit XML report (a path or the XML text)."""
    text = Path(source).read_text() if isinstance(source, Path) or not str(source).lstrip().startswith("<") \
        else str(source)
    root = ET.fromstring(text)
    out: dict[str, NotebookRun] = {}
    for case in root.iter("testcase"):
        nb = notebook_of(case.get("classname", ""), case.get("name", ""))
        if nb is None:
            continue
        run = out.setdefault(nb, NotebookRun(nb))
        run.cells += 1
        run.seconds += float(case.get("time") or 0.0)
        for tag in ("failure", "error"):
            for bad in case.findall(tag):
                msg = _first_line((bad.text or "") + "\n" + (bad.get("message") or ""))
                run.failed.append((case.get("name", "?"), f"{tag}: {msg}"))
        if case.find("skipped") is not None:
            run.skipped += 1
    return out


# ---------------------------------------------------------------- schedule and tally (pure)


def hog_schedule(runs: int, hog_runs: int) -> list[bool]:
    """Which runs get the hog: ``hog_runs`` of ``runs``, spread evenly, the first run quiet if possible."""
    hog_runs = max(0, min(hog_runs, runs))
    flags = [False] * runs
    for k in range(hog_runs):
        flags[min(runs - 1, (2 * k + 1) * runs // (2 * hog_runs))] = True
    return flags


@dataclass
class Tally:
    runs: int = 0
    passed: int = 0
    hog_runs: int = 0
    hog_passed: int = 0
    failures: list[tuple[int, str, str]] = field(default_factory=list)  # (run number, cell, message)


def tally(results: list[tuple[bool, dict[str, NotebookRun]]]) -> dict[str, Tally]:
    """Pass counts per notebook over ``(hogged, per-notebook results)`` runs, in run order."""
    out: dict[str, Tally] = {}
    for number, (hogged, per_nb) in enumerate(results, start=1):
        for nb, res in per_nb.items():
            t = out.setdefault(nb, Tally())
            t.runs += 1
            t.hog_runs += hogged
            if res.passed:
                t.passed += 1
                t.hog_passed += hogged
            else:
                t.failures.extend((number, cell, msg) for cell, msg in res.failed or [("-", "no cells ran")])
    return dict(sorted(out.items()))


def format_report(counts: dict[str, Tally], hog_flags: list[bool], walls: list[float],
                  label: str = "the CPU hog") -> str:
    """The pass-count table, then every failure with its run and cell."""
    lines = [f"{len(hog_flags)} runs ({sum(hog_flags)} under {label}: runs "
             f"{', '.join(str(i + 1) for i, h in enumerate(hog_flags) if h) or 'none'})"]
    if walls:
        lines.append("wall time per run: " + ", ".join(
            f"{w:.0f}s{'*' if h else ''}" for w, h in zip(walls, hog_flags, strict=False)) + "  (* = hog)")
    width = max([len("notebook"), *map(len, counts)])
    lines.append(f"{'notebook':<{width}}  passed  quiet  {'under hog' if 'hog' in label else 'loaded'}")
    for nb, t in counts.items():
        quiet = f"{t.passed - t.hog_passed}/{t.runs - t.hog_runs}"
        hog = f"{t.hog_passed}/{t.hog_runs}"
        flag = "" if t.passed == t.runs else "   <-- FLAKY" if t.passed else "   <-- FAILS"
        lines.append(f"{nb:<{width}}  {t.passed:>2}/{t.runs:<3}  {quiet:>5}  {hog:>9}{flag}")
    for nb, t in counts.items():
        for number, cell, msg in t.failures:
            lines.append(f"  run {number}{'*' if hog_flags[number - 1] else ''} {nb} {cell}: {msg}")
    return "\n".join(lines)


def build_failures(log_text: str) -> list[tuple[str, str]]:
    """``(chapter, exception line)`` for each chapter a ``bookbuild`` log reports as failed."""
    out = []
    for m in re.finditer(r"^(\d\d_[a-z0-9_]+)\.py failed:\n(.*?)"
                         r"(?=^\d\d_[a-z0-9_]+\.py failed:|^the book was not built|\Z)",
                         log_text, re.M | re.S):
        out.append((m.group(1), _first_line(m.group(2))))
    return out


def format_builds(builds: list[dict], label: str) -> str:
    """One line for the clean builds, then each failure with the assert that fired."""
    if not builds:
        return ""
    good = sum(b["exit"] == 0 for b in builds)
    lines = [f"clean book builds under {label}: {good}/{len(builds)} passed ("
             + ", ".join(f"{b['wall']:.0f}s{'' if b['exit'] == 0 else ' FAILED'}" for b in builds) + ")"]
    for b in builds:
        for chapter, msg in b.get("failed", []):
            lines.append(f"  build {b['build']} {chapter}: {msg}")
        if b["exit"] != 0 and not b.get("failed"):
            lines.append(f"  build {b['build']}: exit {b['exit']}, see {b['log']}")
    return "\n".join(lines)


# ---------------------------------------------------------------- running


class CpuHog:
    """``n`` busy-loop child processes for the duration of a ``with`` block; always stopped on exit."""

    def __init__(self, n: int | None = None, max_seconds: float = 1800.0):
        self.n = n or os.cpu_count() or 2
        self.max_seconds = max_seconds
        self.procs: list[subprocess.Popen] = []

    def __enter__(self) -> CpuHog:
        env = {k: v for k, v in os.environ.items() if k != "LAB_AUDIT_ID"}
        try:
            for i in range(self.n):
                self.procs.append(subprocess.Popen(
                    self.command(i), env=env,
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        except BaseException:
            self.stop()
            raise
        return self

    label = "the CPU hog"

    def command(self, index: int) -> list[str]:
        """The command line of hog process ``index``."""
        return [sys.executable, "-c", _HOG_CODE, str(self.max_seconds)]

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs.clear()

    def __exit__(self, *exc) -> None:
        self.stop()


class BurstyNeighbour(CpuHog):
    """Like ``CpuHog``, but each process alternates busy and idle spans of ``low``..``high`` seconds.

    Process ``i`` draws its spans from ``random.Random(seed * 1000 + i)`` (and starts busy or idle
    at random), so the cores load and unload independently, and a run can be repeated.
    """

    label = "the bursty neighbour"

    def __init__(self, n: int | None = None, max_seconds: float = 1800.0, *, seed: int = 0,
                 low: float = 0.05, high: float = 0.4, trace_dir: Path | None = None):
        super().__init__(n, max_seconds)
        if not 0 < low <= high:
            raise ValueError(f"need 0 < low <= high, got low={low}, high={high}")
        self.seed, self.low, self.high, self.trace_dir = seed, low, high, trace_dir

    def command(self, index: int) -> list[str]:
        cmd = [sys.executable, "-c", _BURSTY_CODE, str(self.seed * 1000 + index), str(self.low),
               str(self.high), str(self.max_seconds)]
        if self.trace_dir is not None:
            cmd.append(str(Path(self.trace_dir) / f"neighbour-{index}.txt"))
        return cmd


def neighbour(kind: str, n: int | None, max_seconds: float, seed: int = 0) -> CpuHog:
    """The load for the loaded runs: ``hog`` (a busy loop per CPU) or ``bursty`` (random bursts)."""
    if kind == "bursty":
        return BurstyNeighbour(n, max_seconds, seed=seed)
    if kind == "hog":
        return CpuHog(n, max_seconds)
    raise ValueError(f"unknown neighbour {kind!r} (hog or bursty)")


def run_suite(junit: Path, log: Path, extra: list[str], timeout: float = 1800.0) -> tuple[int, float]:
    """One full nbval run (the project's pytest options) from the repository root: (exit code, wall s)."""
    cmd = [sys.executable, "-m", "pytest", "notebooks", f"--junitxml={junit}", *extra]
    env = {k: v for k, v in os.environ.items() if k != "LAB_AUDIT_ID"}
    env.setdefault("SLIME_OFFLINE", "1")
    start = time.monotonic()
    with open(log, "w") as out:
        try:
            rc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            rc = -1
            out.write(f"\nflake_hunt: the run exceeded {timeout:.0f} s and was stopped\n")
    return rc, time.monotonic() - start


def run_clean_build(log: Path, timeout: float = 1800.0) -> tuple[int, float]:
    """One clean book build as ``.ci/build`` does it, in a temporary copy of the tree: (exit, wall s)."""
    import tempfile

    env = {k: v for k, v in os.environ.items() if k != "LAB_AUDIT_ID"}
    env.setdefault("SLIME_OFFLINE", "1")
    with tempfile.TemporaryDirectory(prefix="flake-build-") as tmp, open(log, "w") as out:
        tree = copy_tree(Path(tmp) / "repo")
        start = time.monotonic()
        try:
            rc = subprocess.run([sys.executable, "-m", "lab_snippets.book.bookbuild", "--clean", str(tree)],
                                cwd=tree, env=env, stdout=out, stderr=subprocess.STDOUT,
                                timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            rc = -1
            out.write(f"\nflake_hunt: the build exceeded {timeout:.0f} s and was stopped\n")
        return rc, time.monotonic() - start


def report_folder(folder: Path) -> int:
    """Re-read a hunt's ``summary.json`` and JUnit reports and print the table again."""
    summary = json.loads((folder / "summary.json").read_text())
    results = [(s["hog"], parse_junit(folder / s["junit"]) if (folder / s["junit"]).exists() else {})
               for s in summary]
    counts = tally(results)
    meta = json.loads((folder / "builds.json").read_text()) if (folder / "builds.json").exists() else {}
    label = meta.get("label", "the CPU hog")
    print(format_report(counts, [s["hog"] for s in summary], [s["wall"] for s in summary], label))
    builds = meta.get("builds", [])
    if builds:
        print(format_builds(builds, label))
    all_passed = all(t.passed == t.runs for t in counts.values())
    return 0 if all_passed and all(b["exit"] == 0 for b in builds) else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10, help="full nbval runs (default 10)")
    ap.add_argument("--hog", action="store_true", help="run every run under the CPU hog")
    ap.add_argument("--hog-runs", type=int, default=None, help="how many of the runs get the hog")
    ap.add_argument("--hog-procs", type=int, default=None, help="hog processes (default: os.cpu_count())")
    ap.add_argument("--hog-max", type=float, default=1800.0, help="hard stop of each hog process, seconds")
    ap.add_argument("--neighbour", choices=["hog", "bursty"], default="hog",
                    help="the load of the loaded runs: a constant busy loop per CPU (hog, default) or "
                         "random bursts of busy and idle, 50-400 ms each, per CPU (bursty)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the bursty neighbour (run k uses seed+k)")
    ap.add_argument("--builds", type=int, default=0,
                    help="then this many clean book builds (python -m lab_snippets.book.bookbuild --clean, "
                         "in a temporary copy), each under the neighbour")
    ap.add_argument("--out", type=Path, default=None, help="folder for reports and logs")
    ap.add_argument("--report", type=Path, metavar="DIR", help="only re-print the report of an earlier hunt")
    ap.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = ap.parse_args(argv)
    if args.report:
        return report_folder(args.report)
    hog_runs = args.runs if args.hog and args.hog_runs is None else (args.hog_runs or 0)
    label = "the CPU hog" if args.neighbour == "hog" else "the bursty neighbour"
    flags = hog_schedule(args.runs, hog_runs)
    out = args.out or ROOT / "build" / "flake_hunt" / time.strftime("%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    results: list[tuple[bool, dict[str, NotebookRun]]] = []
    summary = []
    for i, hogged in enumerate(flags, start=1):
        junit, log = out / f"run-{i:02d}.xml", out / f"run-{i:02d}.log"
        print(f"run {i}/{args.runs}{' under ' + label if hogged else ''} ...", flush=True)
        if hogged:
            with neighbour(args.neighbour, args.hog_procs, args.hog_max, args.seed + i):
                rc, wall = run_suite(junit, log, args.pytest_args)
        else:
            rc, wall = run_suite(junit, log, args.pytest_args)
        per_nb = parse_junit(junit) if junit.exists() else {}
        results.append((hogged, per_nb))
        bad = [nb for nb, r in per_nb.items() if not r.passed]
        print(f"  exit {rc}, {wall:.1f} s, {len(per_nb)} notebooks, failing: {', '.join(bad) or 'none'}",
              flush=True)
        summary.append({"run": i, "hog": hogged, "exit": rc, "wall": wall, "junit": junit.name,
                        "log": log.name})
        (out / "summary.json").write_text(json.dumps(summary, indent=1))
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    builds = []
    for i in range(1, args.builds + 1):
        log = out / f"build-{i:02d}.log"
        print(f"clean book build {i}/{args.builds} under {label} ...", flush=True)
        with neighbour(args.neighbour, args.hog_procs, args.hog_max, args.seed + 100 + i):
            rc, wall = run_clean_build(log)
        failed = build_failures(log.read_text(errors="replace")) if log.exists() else []
        print(f"  exit {rc}, {wall:.1f} s, failing: {', '.join(c for c, _ in failed) or 'none'}", flush=True)
        builds.append({"build": i, "exit": rc, "wall": wall, "log": log.name, "failed": failed})
        (out / "builds.json").write_text(json.dumps({"label": label, "builds": builds}, indent=1))
    counts = tally(results)
    report = format_report(counts, flags, [s["wall"] for s in summary], label)
    if builds:
        report += "\n" + format_builds(builds, label)
    (out / "report.txt").write_text(report + "\n")
    print(report)
    print(f"reports and logs: {out}")
    nbval_ok = all(t.passed == t.runs for t in counts.values()) and (bool(counts) or not flags)
    return 0 if nbval_ok and all(b["exit"] == 0 for b in builds) else 1


if __name__ == "__main__":
    sys.exit(main())

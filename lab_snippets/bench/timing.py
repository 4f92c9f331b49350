"""Timing: nbval execution time per notebook and in total, and the book build time, against budgets.

    python -m lab_snippets.bench.timing                     # 3 nbval runs, 3 clean + 3 cached builds
    python -m lab_snippets.bench.timing --runs 5 --build-runs 2
    python -m lab_snippets.bench.timing --from build/flake_hunt/main --no-build   # reuse a flake hunt
    python -m lab_snippets.bench.timing --no-nbval --compare --build-runs 2   # serial vs parallel build

nbval: each run is the whole suite as CI runs it (``python -m pytest notebooks``: two xdist workers,
``--dist loadfile``, leak audit). A notebook's time is the sum of its cells' JUnit times (setup, call
and teardown, so the kernel start is in it); the total is the run's wall-clock time. With ``--from``
the quiet (non-hog) runs of a ``flake_hunt`` folder are used instead of new runs.

Book: the working tree is copied into a temporary folder (never the shared ``_build``), then built
as ``.ci/build`` does (``python -m lab_snippets.book.bookbuild``: the chapters pre-executed two at a
time, both editions rendered): clean (``--clean``: ``_build`` removed first) and cached (again, with
nothing changed). Every figure is the median of its runs.

``--compare``: the book build as ``.ci/build`` does it (``python -m lab_snippets.book.bookbuild``: chapters
pre-executed two at a time into the jupyter cache) against today's serial build (``--serial``: the
book executes each chapter in turn), clean, alternating serial and parallel in one run (S P S P ...);
each side's figure is its best of the rounds, and the target is parallel <= 0.75 x serial. Then the
cached rebuild (``bookbuild`` again, nothing changed: the build's input fingerprint says so), the same
with the fingerprint removed (Sphinx checks every page of both editions), and a check that both builds
made the same pages.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lab_snippets.bench.flake_hunt import ROOT, copy_tree, parse_junit, run_suite

BUDGETS = {"suite": 60.0, "notebook": 5.0, "clean": 90.0, "cached": 10.0}


def medians(samples: dict[str, list[float]]) -> dict[str, float]:
    return {k: statistics.median(v) for k, v in sorted(samples.items()) if v}


def per_notebook_samples(reports: list[dict]) -> dict[str, list[float]]:
    """``{notebook: [seconds per run]}`` from ``parse_junit`` results (passing or not)."""
    out: dict[str, list[float]] = {}
    for per_nb in reports:
        for nb, res in per_nb.items():
            out.setdefault(nb, []).append(res.seconds)
    return out


def verdict(value: float | None, budget: float) -> str:
    if value is None:
        return "not measured"
    return f"OK (budget {budget:g} s)" if value <= budget else f"OVER BUDGET ({budget:g} s)"


def format_timing(nb_median: dict[str, float], nb_runs: dict[str, int], suite: list[float],
                  clean: list[float], cached: list[float], build_ok: list[bool] | None = None) -> str:
    """The timing report: per-notebook medians and the totals, each against its budget."""
    lines = []
    if nb_median:
        width = max(len("notebook"), *map(len, nb_median))
        lines.append(f"{'notebook':<{width}}  median s  runs  budget {BUDGETS['notebook']:g} s")
        for nb, sec in nb_median.items():
            mark = "ok" if sec <= BUDGETS["notebook"] else "OVER"
            lines.append(f"{nb:<{width}}  {sec:8.2f}  {nb_runs.get(nb, 0):>4}  {mark}")
        lines.append(f"{'sum of notebooks':<{width}}  {sum(nb_median.values()):8.2f}"
                     "        (serial kernel time; two workers share it)")

    def row(label: str, runs: list[float], key: str) -> str:
        if not runs:
            return f"{label}: not measured"
        med = statistics.median(runs)
        return (f"{label}: median {med:.1f} s of {len(runs)} ({', '.join(f'{r:.1f}' for r in runs)})"
                f"  {verdict(med, BUDGETS[key])}")

    lines.append(row("nbval suite wall time, 2 workers", suite, "suite"))
    lines.append(row("book build, clean", clean, "clean"))
    lines.append(row("book build, cached, nothing changed", cached, "cached"))
    if build_ok is not None and not all(build_ok):
        lines.append(f"note: {build_ok.count(False)} of {len(build_ok)} builds exited non-zero "
                     "(-W: a warning or failing cell); see the logs")
    return "\n".join(lines)


PARALLEL_TARGET = 0.75


def bookbuild(tree: Path, log: Path, *, serial: bool, clean: bool) -> tuple[bool, float]:
    """One ``python -m lab_snippets.book.bookbuild`` of ``tree``: (exit 0, wall seconds)."""
    cmd = [sys.executable, "-m", "lab_snippets.book.bookbuild", *(["--serial"] if serial else []),
           *(["--clean"] if clean else []), str(tree)]
    start = time.monotonic()
    with open(log, "w") as out:
        rc = subprocess.run(cmd, cwd=tree, stdout=out, stderr=subprocess.STDOUT, timeout=1800).returncode
    return rc == 0, time.monotonic() - start


def pages(html: Path) -> set[str]:
    """The HTML pages of a build (relative paths)."""
    return {str(p.relative_to(html)) for p in html.rglob("*.html")}


def format_compare(serial: list[float], parallel: list[float], cached: list[float], ok: list[bool],
                   same_pages: bool | None, unstamped: list[float] | None = None) -> str:
    """Serial vs parallel clean builds (best of each), the ratio against its target, the cached rebuild."""
    lines = []
    if serial and parallel:
        ratio = min(parallel) / min(serial)
        lines.append(f"clean build, serial (the book runs each chapter): best {min(serial):.1f} s of "
                     f"{', '.join(f'{x:.1f}' for x in serial)}")
        lines.append(f"clean build, parallel (bookbuild, 2 at a time):   best {min(parallel):.1f} s of "
                     f"{', '.join(f'{x:.1f}' for x in parallel)}")
        verdict_ = "OK" if ratio <= PARALLEL_TARGET else "OVER"
        lines.append(f"parallel / serial = {ratio:.2f}  ({verdict_}, target <= {PARALLEL_TARGET:g})")
    if cached:
        lines.append(f"cached rebuild: best {min(cached):.1f} s of {', '.join(f'{x:.1f}' for x in cached)}  "
                     f"{verdict(min(cached), BUDGETS['cached'])}")
    if unstamped:
        lines.append(f"cached rebuild with the build's fingerprint removed (Sphinx checks every page of both "
                     f"editions): best {min(unstamped):.1f} s of {', '.join(f'{x:.1f}' for x in unstamped)}  "
                     f"{verdict(min(unstamped), BUDGETS['cached'])}")
    if same_pages is not None:
        lines.append("pages: the same in both builds" if same_pages else "pages: DIFFER between the builds")
    if not all(ok):
        lines.append(f"note: {ok.count(False)} of {len(ok)} builds exited non-zero; see the logs")
    return "\n".join(lines)


def compare_builds(rounds: int, out: Path) -> str:
    """Serial and parallel clean builds alternating in one temporary copy, then cached rebuilds."""
    serial, parallel, cached, unstamped, ok = [], [], [], [], []
    page_sets: dict[str, set[str]] = {}
    with tempfile.TemporaryDirectory(prefix="book-compare-") as tmp:
        tree = copy_tree(Path(tmp) / "repo")
        for i in range(1, rounds + 1):
            for kind in ("serial", "parallel"):
                print(f"clean build {i}/{rounds}, {kind} ...", flush=True)
                good, sec = bookbuild(tree, out / f"build-{kind}-{i:02d}.log", serial=kind == "serial",
                                      clean=True)
                (serial if kind == "serial" else parallel).append(sec)
                ok.append(good)
                page_sets[kind] = pages(tree / "_build" / "html")
                print(f"  {'ok' if good else 'FAILED'}, {sec:.1f} s", flush=True)
        for i in range(1, rounds + 1):
            print(f"cached rebuild {i}/{rounds} ...", flush=True)
            good, sec = bookbuild(tree, out / f"build-cached-{i:02d}.log", serial=False, clean=False)
            cached.append(sec)
            ok.append(good)
            print(f"  {'ok' if good else 'FAILED'}, {sec:.1f} s", flush=True)
        for i in range(1, rounds + 1):
            print(f"cached rebuild {i}/{rounds}, fingerprint removed ...", flush=True)
            (tree / "_build" / ".bookbuild-stamp").unlink(missing_ok=True)
            good, sec = bookbuild(tree, out / f"build-unstamped-{i:02d}.log", serial=False, clean=False)
            unstamped.append(sec)
            ok.append(good)
            print(f"  {'ok' if good else 'FAILED'}, {sec:.1f} s", flush=True)
    same = page_sets.get("serial") == page_sets.get("parallel") if len(page_sets) == 2 else None
    return format_compare(serial, parallel, cached, ok, same, unstamped)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3, help="nbval runs (default 3)")
    ap.add_argument("--build-runs", type=int, default=3, help="clean builds and cached builds (default 3)")
    ap.add_argument("--from", dest="from_dir", type=Path, help="reuse a flake_hunt folder's quiet runs")
    ap.add_argument("--no-nbval", action="store_true")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--compare", action="store_true",
                    help="serial vs parallel clean builds, alternating, then cached rebuilds")
    ap.add_argument("--out", type=Path, default=None, help="folder for reports and logs")
    args = ap.parse_args(argv)
    out = args.out or ROOT / "build" / "timing" / time.strftime("%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)

    reports, suite = [], []
    if args.from_dir:
        for entry in json.loads((args.from_dir / "summary.json").read_text()):
            if not entry["hog"] and (args.from_dir / entry["junit"]).exists():
                reports.append(parse_junit(args.from_dir / entry["junit"]))
                suite.append(entry["wall"])
    elif not args.no_nbval:
        for i in range(1, args.runs + 1):
            print(f"nbval run {i}/{args.runs} ...", flush=True)
            rc, wall = run_suite(out / f"nbval-{i:02d}.xml", out / f"nbval-{i:02d}.log", [])
            reports.append(parse_junit(out / f"nbval-{i:02d}.xml"))
            suite.append(wall)
            print(f"  exit {rc}, {wall:.1f} s", flush=True)
    samples = per_notebook_samples(reports)

    clean, cached, ok = [], [], []
    if args.compare:
        report = compare_builds(args.build_runs, out)
        (out / "compare.txt").write_text(report + "\n")
        print(report)
        print(f"logs: {out}")
        return 0
    if not args.no_build:
        with tempfile.TemporaryDirectory(prefix="book-timing-") as tmp:
            tree = copy_tree(Path(tmp) / "repo")
            for i in range(1, args.build_runs + 1):
                print(f"clean build {i}/{args.build_runs} ...", flush=True)
                good, sec = bookbuild(tree, out / f"build-clean-{i:02d}.log", serial=False, clean=True)
                clean.append(sec)
                ok.append(good)
                print(f"  {'ok' if good else 'FAILED'}, {sec:.1f} s", flush=True)
            for i in range(1, args.build_runs + 1):
                print(f"cached build {i}/{args.build_runs} ...", flush=True)
                good, sec = bookbuild(tree, out / f"build-cached-{i:02d}.log", serial=False, clean=False)
                cached.append(sec)
                ok.append(good)
                print(f"  {'ok' if good else 'FAILED'}, {sec:.1f} s", flush=True)

    report = format_timing(medians(samples), {k: len(v) for k, v in samples.items()}, suite, clean, cached,
                           ok if ok else None)
    (out / "timing.txt").write_text(report + "\n")
    print(report)
    print(f"logs: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Timing: nbval execution time per notebook and in total, and the book build time, against budgets.

    python -m lab_snippets.bench.timing                     # 3 nbval runs, 3 clean + 3 cached builds
    python -m lab_snippets.bench.timing --runs 5 --build-runs 2
    python -m lab_snippets.bench.timing --from build/flake_hunt/main --no-build   # reuse a flake hunt

nbval: each run is the whole suite as CI runs it (``python -m pytest notebooks``: two xdist workers,
``--dist loadfile``, leak audit). A notebook's time is the sum of its cells' JUnit times (setup, call
and teardown, so the kernel start is in it); the total is the run's wall-clock time. With ``--from``
the quiet (non-hog) runs of a ``flake_hunt`` folder are used instead of new runs.

Book: the working tree is copied into a temporary folder (never the shared ``_build``), then built
as ``.ci/build`` does (``jupyter-book build -W -n --keep-going``): clean (``_build`` removed before
each run) and cached (again, with nothing changed). Every figure is the median of its runs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lab_snippets.bench.flake_hunt import ROOT, parse_junit, run_suite

BUDGETS = {"suite": 60.0, "notebook": 5.0, "clean": 90.0, "cached": 10.0}
TOP_IGNORE = {".git", ".venv", ".nox", "_build", "build", ".ruff_cache", "test-artifacts"}
ANY_IGNORE = shutil.ignore_patterns("__pycache__", ".pytest_cache", "*.egg-info", ".ipynb_checkpoints",
                                    "*.ipynb")


def _copy_ignore(folder: str, names: list[str]) -> set[str]:
    skip = set(ANY_IGNORE(folder, names))
    if Path(folder).resolve() == ROOT.resolve():
        skip |= TOP_IGNORE & set(names)
    return skip


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


def copy_tree(dest: Path) -> Path:
    """A copy of the working tree (sources only: no .git, venvs or build products)."""
    shutil.copytree(ROOT, dest, ignore=_copy_ignore, symlinks=True)
    return dest


def build_book(tree: Path, log: Path) -> tuple[bool, float]:
    jb = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jb) if jb.exists() else "jupyter-book", "build", "-W", "-n", "--keep-going", str(tree)]
    start = time.monotonic()
    with open(log, "w") as out:
        rc = subprocess.run(cmd, cwd=tree, stdout=out, stderr=subprocess.STDOUT, timeout=1800).returncode
    return rc == 0, time.monotonic() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3, help="nbval runs (default 3)")
    ap.add_argument("--build-runs", type=int, default=3, help="clean builds and cached builds (default 3)")
    ap.add_argument("--from", dest="from_dir", type=Path, help="reuse a flake_hunt folder's quiet runs")
    ap.add_argument("--no-nbval", action="store_true")
    ap.add_argument("--no-build", action="store_true")
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
    if not args.no_build:
        with tempfile.TemporaryDirectory(prefix="book-timing-") as tmp:
            tree = copy_tree(Path(tmp) / "repo")
            for i in range(1, args.build_runs + 1):
                shutil.rmtree(tree / "_build", ignore_errors=True)
                print(f"clean build {i}/{args.build_runs} ...", flush=True)
                good, sec = build_book(tree, out / f"build-clean-{i:02d}.log")
                clean.append(sec)
                ok.append(good)
                print(f"  {'ok' if good else 'FAILED'}, {sec:.1f} s", flush=True)
            for i in range(1, args.build_runs + 1):
                print(f"cached build {i}/{args.build_runs} ...", flush=True)
                good, sec = build_book(tree, out / f"build-cached-{i:02d}.log")
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

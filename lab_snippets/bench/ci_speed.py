"""The README's test command on two commits, on the same machine: is ``bash .ci/test`` slower?

    python -m lab_snippets.bench.ci_speed run COMMIT --out DIR     # one clean clone, one full run
    python -m lab_snippets.bench.ci_speed run COMMIT --out DIR --build --neighbour bursty   # the README's
                                           # two commands, beside a bursty neighbour on every core
    python -m lab_snippets.bench.ci_speed compare BEFORE/run.json AFTER/run.json
    python -m lab_snippets.bench.ci_speed fixed BEFORE AFTER [--rounds 6]   # the same work, two codes

``run`` clones this repository into ``DIR/clone`` at ``COMMIT`` (a clean clone, as CI makes), runs
``SLIME_OFFLINE=1 bash .ci/test --junitxml=DIR/phase1.xml`` there (what ``.ci/run`` does, with a
per-test record of the first pytest phase), samples the 1-minute load average every 15 s, and
writes ``DIR/run.json``: the wall time, the exit status, each pytest phase's summary line and the
load seen. The clone (and its venv) is removed afterwards unless ``--keep``. ``--build`` first runs
``bash .ci/build`` there (its time, exit status and how many ``IPKernelApp WARNING`` lines it printed
go into ``run.json`` too); ``--neighbour bursty`` (or ``hog``) keeps ``flake_hunt``'s neighbour on
every core for the whole run, so "green on a busy laptop" is a run, not a hope.

``compare`` prints both runs side by side: wall time, tests per phase, and, because two commits do
not run the same tests, the time of the tests both of them ran (their phase-1 junit records matched
by test id) apart from the tests only one of them has. A whole run takes 20-40 minutes of two
cores, so the two runs are taken one after the other; say the load each saw when you quote them.

``fixed`` answers what ``compare`` cannot when the two commits' tests differ (hidden tests rewritten,
chapters added): it times the same fixed work through each commit's code, in two ``git worktree``s
sharing this venv, rounds alternating before/after and after/before. The work: ``labs validate`` of
one tiny lab notebook (a kernel started, run and graded) and nbval of one tiny chapter-shaped
notebook (the plugin and the leak audit around it). ``PYTHONPATH`` points each side's processes, its
kernels included, at that side's ``lab_snippets`` (the venv's editable install points at this one).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from lab_snippets import REPO_ROOT
from lab_snippets.sites.gitcmd import run_git

SUMMARY = re.compile(r"^=+ (.*\b(?:passed|failed|error)\b.*) in ([\d.]+)s")


def _sample_load(into: list[float], stop: threading.Event) -> None:
    while not stop.wait(15.0):
        into.append(os.getloadavg()[0])


def run(commit: str, out: Path, keep: bool = False, timeout: float = 3 * 3600, build: bool = False,
        neighbour: str | None = None, seed: int = 0) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    clone = out / "clone"
    if clone.exists():
        shutil.rmtree(clone)
    steps = ((["clone", "-q", str(REPO_ROOT), str(clone)], None), (["checkout", "-q", commit], clone))
    for args, repo in steps:
        done = run_git(args, repo=repo, timeout=600)
        if done.returncode:
            raise SystemExit(f"git {' '.join(args)}: {done.stderr.decode(errors='replace').strip()}")
    env = {**os.environ, "SLIME_OFFLINE": "1"}
    env.pop("SLIME_SRC", None)
    loads: list[float] = [os.getloadavg()[0]]
    stop = threading.Event()
    sampler = threading.Thread(target=_sample_load, args=(loads, stop), daemon=True)
    sampler.start()
    built: dict = {}
    load = contextlib.nullcontext()
    if neighbour:
        from lab_snippets.bench.flake_hunt import neighbour as make_neighbour
        load = make_neighbour(neighbour, None, max_seconds=timeout, seed=seed)
    with load:
        if build:
            t0 = time.monotonic()
            with open(out / "build.log", "w", encoding="utf-8") as log:
                done = subprocess.run(["bash", ".ci/build"], cwd=clone, env=env, stdout=log,
                                      stderr=subprocess.STDOUT, timeout=timeout)
            text = (out / "build.log").read_text(encoding="utf-8", errors="replace")
            built = {"wall_s": round(time.monotonic() - t0, 1), "exit": done.returncode,
                     "ipkernelapp_warnings": text.count("IPKernelApp] WARNING")}
        start = time.monotonic()
        with open(out / "ci.log", "w", encoding="utf-8") as log:
            proc = subprocess.run(["bash", ".ci/test", f"--junitxml={out / 'phase1.xml'}"], cwd=clone,
                                  env=env, stdout=log, stderr=subprocess.STDOUT, timeout=timeout)
        wall = time.monotonic() - start
    stop.set()
    sampler.join(timeout=20)
    text = (out / "ci.log").read_text(encoding="utf-8", errors="replace")
    phases = [{"summary": m.group(1), "seconds": float(m.group(2))}
              for m in map(SUMMARY.match, text.splitlines()) if m]
    record = {"commit": run_git(["rev-parse", "HEAD"], repo=clone).stdout.decode().strip(),
              "wall_s": round(wall, 1), "exit": proc.returncode, "phases": phases,
              "load": {"min": min(loads), "max": max(loads), "mean": round(sum(loads) / len(loads), 2)},
              "neighbour": neighbour or "none", **({"build": built} if build else {})}
    (out / "run.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
    if not keep:
        shutil.rmtree(clone)
    return record


def test_times(junit: Path) -> dict[str, float]:
    """Each test's time in a junit file, keyed by ``classname::name``."""
    times: dict[str, float] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        key = f"{case.get('classname')}::{case.get('name')}"
        times[key] = times.get(key, 0.0) + float(case.get("time") or 0.0)
    return times


def compare(before: Path, after: Path) -> str:
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in (before, after)]
    times = [test_times(p.parent / "phase1.xml") for p in (before, after)]
    common = times[0].keys() & times[1].keys()
    rows = [("commit", *(r["commit"][:10] for r in runs)),
            ("exit status", *(str(r["exit"]) for r in runs)),
            ("wall time", *(f"{r['wall_s']:.0f} s" for r in runs)),
            ("load (1 min) min-max", *(f"{r['load']['min']:.1f}-{r['load']['max']:.1f}" for r in runs))]
    for i in range(max(len(r["phases"]) for r in runs)):
        cells = [f"{r['phases'][i]['summary']} in {r['phases'][i]['seconds']:.0f} s"
                 if i < len(r["phases"]) else "-" for r in runs]
        rows.append((f"phase {i + 1}", *cells))
    rows.append((f"phase 1, the {len(common)} tests both ran", *(f"{sum(t[k] for k in common):.0f} s"
                                                                  for t in times)))
    rows.append(("phase 1, tests only this one ran", *(
        f"{len(t.keys() - common)} tests, {sum(v for k, v in t.items() if k not in common):.0f} s"
        for t in times)))
    lines = ["| | before | after |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(lines)


PROBE_CHAPTER = """\
# %% [markdown]
# # A probe: a few tasks and one thread, the shape of a chapter's experiment

# %%
import asyncio
import threading
import time


async def echo(i):
    await asyncio.sleep(0.01)
    return i

print(await asyncio.gather(*(echo(i) for i in range(5))))

# %%
worker = threading.Thread(target=time.sleep, args=(0.05,))
worker.start()
worker.join(timeout=5)
assert not worker.is_alive()
"""


def write_probe_lab(path: Path) -> Path:
    """A tiny lab: one course cell, one solution cell, one graded test cell."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    solution = new_code_cell("async def add(a, b):\n    await asyncio.sleep(0.01)\n    return a + b")
    solution.metadata.update(tags=["solution"], nbgrader={"solution": True, "grade": False,
                                                          "grade_id": "add", "schema_version": 3})
    test = new_code_cell("assert (await add(1, 2)) == 3, 'add(1, 2) is 3'")
    test.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "add_test",
                                 "points": 1, "schema_version": 3}
    nb = new_notebook(cells=[new_markdown_cell("# probe"), new_code_cell("import asyncio"), solution, test])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))
    return path


def _fixed_work(tree: Path, lab: Path) -> dict[str, float]:
    """One round of the fixed work through ``tree``'s code: seconds per workload."""
    chapter = tree / "notebooks" / "00_probe.py"
    chapter.write_text(PROBE_CHAPTER, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tree)}
    commands = {
        "validate": [sys.executable, "-m", "lab_snippets.labs", "validate", str(lab)],
        "nbval": [sys.executable, "-m", "pytest", str(chapter), "-q", "-p", "no:xdist", "-o", "addopts=",
                  "-p", "no:cacheprovider", "-p", "lab_snippets.testing.nbplugin", "--nbval-lax",
                  "--nbval-current-env"],
    }
    out = {}
    try:
        for what, cmd in commands.items():
            t0 = time.monotonic()
            done = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, timeout=300)
            out[what] = time.monotonic() - t0
            if done.returncode:
                tail = done.stdout.decode(errors="replace").strip().splitlines()[-3:]
                raise SystemExit(f"{what} failed in {tree.name}: {' | '.join(tail)}")
    finally:
        chapter.unlink(missing_ok=True)
    return out


def fixed(before: str, after: str, rounds: int = 6, work=_fixed_work) -> dict:
    """The fixed work through both commits' code, ``rounds`` times, ABBA; seconds per side and workload."""
    times: dict = {"before": {}, "after": {}, "load": []}
    with tempfile.TemporaryDirectory(prefix="ci-speed-fixed-") as tmp:
        trees = {"before": Path(tmp) / "before", "after": Path(tmp) / "after"}
        lab = write_probe_lab(Path(tmp) / "probe.ipynb")
        try:
            for side, commit in (("before", before), ("after", after)):
                done = run_git(["worktree", "add", "-q", "--detach", str(trees[side]), commit],
                               repo=REPO_ROOT, timeout=120)
                if done.returncode:
                    why = done.stderr.decode(errors="replace").strip()
                    raise SystemExit(f"git worktree add {commit}: {why}")
            for k in range(rounds):
                for side in (("before", "after") if k % 2 == 0 else ("after", "before")):
                    times["load"].append(os.getloadavg()[0])
                    for what, seconds in work(trees[side], lab).items():
                        times[side].setdefault(what, []).append(round(seconds, 3))
        finally:
            # its own two trees only: `git worktree prune` would also drop every other worktree whose
            # folder this process cannot see (run inside .ci/forky-root, that is every one of them)
            for tree in trees.values():
                run_git(["worktree", "remove", "--force", str(tree)], repo=REPO_ROOT, timeout=120)
    return times


def fixed_table(times: dict) -> str:
    lines = ["| workload | before: median (best) | after: median (best) |", "|---|---|---|"]
    for what in times["before"]:
        cells = [f"{statistics.median(times[s][what]):.2f} s ({min(times[s][what]):.2f} s)"
                 for s in ("before", "after")]
        lines.append(f"| {what} | {cells[0]} | {cells[1]} |")
    load = times["load"]
    lines.append(f"\n{len(times['before'][next(iter(times['before']))])} rounds each, "
                 f"load (1 min) {min(load):.1f}-{max(load):.1f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lab_snippets.bench.ci_speed",
                                 description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="one full .ci/test on a clean clone at COMMIT")
    r.add_argument("commit")
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--keep", action="store_true", help="keep the clone and its venv")
    r.add_argument("--build", action="store_true",
                   help="run bash .ci/build first (the README's other command)")
    r.add_argument("--neighbour", choices=["hog", "bursty"],
                   help="a neighbour on every core for the whole run")
    r.add_argument("--seed", type=int, default=0, help="the bursty neighbour's seed")
    c = sub.add_parser("compare", help="two runs side by side")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    f = sub.add_parser("fixed", help="the same fixed work through two commits' code, interleaved")
    f.add_argument("before")
    f.add_argument("after")
    f.add_argument("--rounds", type=int, default=6)
    args = ap.parse_args(argv)
    if args.cmd == "run":
        print(json.dumps(run(args.commit, args.out, args.keep, build=args.build, neighbour=args.neighbour,
                             seed=args.seed), indent=1))
    elif args.cmd == "fixed":
        print(fixed_table(fixed(args.before, args.after, args.rounds)))
    else:
        print(compare(args.before, args.after))
    return 0


if __name__ == "__main__":
    sys.exit(main())

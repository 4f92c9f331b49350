"""The README's test command on two commits, on the same machine: is ``bash .ci/test`` slower?

    python -m lab_snippets.bench.ci_speed run COMMIT --out DIR     # one clean clone, one full run
    python -m lab_snippets.bench.ci_speed compare BEFORE/run.json AFTER/run.json

``run`` clones this repository into ``DIR/clone`` at ``COMMIT`` (a clean clone, as CI makes), runs
``SLIME_OFFLINE=1 bash .ci/test --junitxml=DIR/phase1.xml`` there (what ``.ci/run`` does, with a
per-test record of the first pytest phase), samples the 1-minute load average every 15 s, and
writes ``DIR/run.json``: the wall time, the exit status, each pytest phase's summary line and the
load seen. The clone (and its venv) is removed afterwards unless ``--keep``.

``compare`` prints both runs side by side: wall time, tests per phase, and, because two commits do
not run the same tests, the time of the tests both of them ran (their phase-1 junit records matched
by test id) apart from the tests only one of them has. A whole run takes 20-40 minutes of two
cores, so the two runs are taken one after the other; say the load each saw when you quote them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
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


def run(commit: str, out: Path, keep: bool = False, timeout: float = 3 * 3600) -> dict:
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
    start = time.monotonic()
    with open(out / "ci.log", "w", encoding="utf-8") as log:
        proc = subprocess.run(["bash", ".ci/test", f"--junitxml={out / 'phase1.xml'}"], cwd=clone, env=env,
                              stdout=log, stderr=subprocess.STDOUT, timeout=timeout)
    wall = time.monotonic() - start
    stop.set()
    sampler.join(timeout=20)
    text = (out / "ci.log").read_text(encoding="utf-8", errors="replace")
    phases = [{"summary": m.group(1), "seconds": float(m.group(2))}
              for m in map(SUMMARY.match, text.splitlines()) if m]
    record = {"commit": run_git(["rev-parse", "HEAD"], repo=clone).stdout.decode().strip(),
              "wall_s": round(wall, 1), "exit": proc.returncode, "phases": phases,
              "load": {"min": min(loads), "max": max(loads), "mean": round(sum(loads) / len(loads), 2)}}
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lab_snippets.bench.ci_speed",
                                 description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="one full .ci/test on a clean clone at COMMIT")
    r.add_argument("commit")
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--keep", action="store_true", help="keep the clone and its venv")
    c = sub.add_parser("compare", help="two runs side by side")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = ap.parse_args(argv)
    if args.cmd == "run":
        print(json.dumps(run(args.commit, args.out, args.keep), indent=1))
    else:
        print(compare(args.before, args.after))
    return 0


if __name__ == "__main__":
    sys.exit(main())

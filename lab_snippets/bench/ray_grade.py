"""Grade N submissions on this machine (``--jobs 2``) and on a local 2-node Ray cluster, interleaved.

    python -m lab_snippets.bench.ray_grade [--chapter 01] [--copies 2] [--rounds 2] [--json OUT]

The submissions are a chapter's corpus (its reference, its stub and its wrong solutions), each
``--copies`` times under another student's name. The cluster (``labs.raygrade.local_cluster``)
is a head with no CPU and two 1-CPU nodes that passed the sandbox probe: two gradings at a
time, as ``--jobs 2``. It starts once; then the rounds alternate the two paths (ABBA), each a
whole ``labs grade`` with a fresh journal. Prints, per path, the best and the median wall time,
submissions per minute and the mean seconds one submission took in its worker (``t``); the Ray
overhead per submission is (best Ray wall - best pool wall) x 2 slots / N. Then the arithmetic
for a class, ``N x t / slots``, for 300 students x 29 labs on one 16-core node and on ten.
Not a test: the figures depend on the machine and its load (printed with them).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from lab_snippets import labs
from lab_snippets.labs import corpus, raygrade

CLASS = 300 * 29  # students x labs


def _round(path: str, subs: Path, course: Path, out: Path, opts: labs.Options,
           address: str) -> dict:
    load = os.getloadavg()[0]
    t0 = time.monotonic()
    rows = labs.grade(subs, out=out, course_dir=course, options=opts, log=lambda s: None,
                      ray=address if path == "ray" else None, resume=False)
    wall = time.monotonic() - t0
    graded = [r for r in rows if r.path is not None]
    return {"path": path, "wall": wall, "n": len(graded), "load": load,
            "t": statistics.mean(r.seconds for r in graded),
            "status": sorted({r.status for r in graded}), "csv": out.read_text()}


def summary(rounds: list[dict], slots: int = 2) -> dict:
    """Per path: best and median wall, submissions per minute (best), mean t; the overhead."""
    out: dict = {}
    for path in ("pool", "ray"):
        mine = [r for r in rounds if r["path"] == path]
        if not mine:
            continue
        best = min(r["wall"] for r in mine)
        out[path] = {"best_wall": best, "median_wall": statistics.median(r["wall"] for r in mine),
                     "per_minute": mine[0]["n"] * 60 / best,
                     "t": statistics.mean(r["t"] for r in mine), "n": mine[0]["n"]}
    if "pool" in out and "ray" in out:
        n = out["pool"]["n"]
        out["overhead_per_submission"] = (out["ray"]["best_wall"] - out["pool"]["best_wall"]) * slots / n
        out["same_csv"] = len({r["csv"] for r in rounds}) == 1
    return out


def class_hours(t: float, overhead: float, slots: int) -> float:
    """Hours for ``CLASS`` submissions of ``t`` s (plus the overhead) on ``slots`` at a time."""
    return CLASS * (t + max(overhead, 0.0)) / slots / 3600


def report(s: dict) -> list[str]:
    lines = []
    for path in ("pool", "ray"):
        if path in s:
            p = s[path]
            lines.append(f"{path:<5} N={p['n']}: best {p['best_wall']:.1f}s, median "
                         f"{p['median_wall']:.1f}s, {p['per_minute']:.1f} submissions/min, "
                         f"t = {p['t']:.1f}s per submission in its worker")
    if "overhead_per_submission" in s:
        over, t = s["overhead_per_submission"], s["pool"]["t"]
        lines.append(f"Ray overhead per submission: {over:+.1f}s (same CSV on every round: "
                     f"{s['same_csv']})")
        for nodes in (1, 10):
            lines.append(f"class of {CLASS} at t = {t:.1f}s on {nodes} x 16 slots: "
                         f"{class_hours(t, over, 16 * nodes):.1f} h")
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--chapter", default="01")
    p.add_argument("--copies", type=int, default=2)
    p.add_argument("--rounds", type=int, default=2, help="rounds of each path (ABBA order)")
    p.add_argument("--json", default=str(labs.REPO / "build" / "ray_grade.json"))
    args = p.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="labs-bench-ray-"))
    try:
        course = tmp / "course"
        labs.release([str(corpus.chapter_path(args.chapter))], course_dir=course,
                     log=lambda *a: None)
        subs = tmp / "subs"
        corpus.write_submissions(args.chapter, subs, copies=args.copies)
        opts = labs.Options(jobs=2)
        resources = raygrade.node_resources(1)
        if not resources:
            raise SystemExit("the sandbox probe fails here: nothing to compare")
        rounds = []
        with raygrade.local_cluster(head_cpus=0) as lc:
            lc.add_node(1, resources)
            lc.add_node(1, resources)
            order = [("pool", "ray") if k % 2 == 0 else ("ray", "pool") for k in range(args.rounds)]
            for k, pair in enumerate(order):
                for path in pair:
                    r = _round(path, subs, course, tmp / f"{path}{k}.csv", opts, lc.address)
                    rounds.append(r)
                    print(f"round {k} {path}: {r['wall']:.1f}s for {r['n']}, t {r['t']:.1f}s, "
                          f"load {r['load']:.1f}, statuses {r['status']}", flush=True)
        s = summary(rounds)
        for line in report(s):
            print(line)
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(
            {"rounds": [{k: v for k, v in r.items() if k != "csv"} for r in rounds],
             "summary": s, "cpus": os.cpu_count()}, indent=1))
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())

"""Ray's start in the course venv, with and without keeping jsonschema's grammar out of Ray's processes.

    python -m lab_snippets.bench.ray_start                       # 10 starts each, interleaved
    python -m lab_snippets.bench.ray_start --starts 12 --neighbour bursty

Each start is a fresh driver process (as a notebook kernel is): the offline settings, ``import ray``,
``lab_snippets.raylab.start(attempts=1)`` (``ray.init(num_cpus=2, include_dashboard=False,
log_to_driver=False, _temp_dir=<short tmp>)``; a driver still running after ``--timeout`` is killed
and counted as failed), one remote call,
``raylab.stop``. The two sides differ only in the fix:

- ``fix``: the driver imports ``lab_snippets`` first (which skips ``rfc3987_syntax`` in the driver),
  and ``start`` puts the stub first on the ``PYTHONPATH`` Ray's processes inherit;
- ``plain``: ``raylab.py`` is loaded on its own (so the package's skip does not run) and
  ``start(skip_grammar=False)``: every Ray process compiles the grammar, as with a bare ``ray.init``.

The sides alternate (F P, P F, F P, ...) so both see the same load; the 1-minute load average is
recorded before every start. A start that fails is counted, never retried (``attempts=1``). After
each start the script checks that the driver's temporary folder is gone; of a failed start it keeps
the fatal line of Ray's logs in the results and removes the logs.
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
import time
from pathlib import Path

from lab_snippets import PACKAGE_DIR
from lab_snippets.bench.flake_hunt import ROOT, neighbour

_CHILD = r"""
import json, os, sys, time
mode = sys.argv[1]
t0 = time.perf_counter()
if mode == "fix":
    from lab_snippets import raylab
else:
    import importlib.util
    spec = importlib.util.spec_from_file_location("raylab_alone", sys.argv[2])
    raylab = sys.modules["raylab_alone"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(raylab)
import ray
out = {"mode": mode, "import_s": time.perf_counter() - t0,
       "driver_skipped": sys.modules.get("rfc3987_syntax", 0) is None}
try:
    cluster = raylab.start(num_cpus=2, attempts=1, skip_grammar=(mode == "fix"))
except raylab.RayStartError as exc:
    out.update(ok=False, error=str(exc)[:400])
else:
    out.update(ok=True, init_s=cluster.start_seconds, temp_dir=cluster.temp_dir,
               skipped=len(cluster.skipped()))
    try:
        out["answer"] = raylab.get(ray.remote(lambda x: x * x).remote(7), timeout=60)
    finally:
        raylab.stop(cluster)
    out["stop_s"] = cluster.stop_seconds
print("RESULT " + json.dumps(out))
"""


def one_start(mode: str, timeout: float) -> dict:
    """One fresh driver; returns what it reported (``ok`` False when it failed or died)."""
    env = {k: v for k, v in os.environ.items() if k != "LAB_AUDIT_ID"}
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, mode, str(PACKAGE_DIR / "raylab.py")],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            cwd=ROOT,
        )
    except subprocess.TimeoutExpired:
        return {"mode": mode, "ok": False, "error": "driver did not finish", "load": load}
    found = [line[7:] for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if not found:
        return {
            "mode": mode,
            "ok": False,
            "load": load,
            "wall_s": time.perf_counter() - t0,
            "error": f"driver exited {proc.returncode}: {proc.stderr.strip()[-400:]}",
        }
    result = json.loads(found[0])
    result.update(load=load, wall_s=time.perf_counter() - t0)
    if not result.get("ok"):
        result["cause"] = _fatal_line_and_remove(result.get("error", ""))
    if result.get("temp_dir") and os.path.exists(result["temp_dir"]):
        result.update(ok=False, error=f"left behind {result['temp_dir']}")
    return result


def _fatal_line_and_remove(error: str) -> str:
    """The raylet's or GCS's fatal log line of a failed start; the logs raylab kept are removed."""
    match = re.search(r"logs are kept in (\S+)", error)
    if not match:
        return ""
    kept, cause = match.group(1), ""
    for name in ("raylet.out", "gcs_server.out"):
        with contextlib.suppress(OSError), open(os.path.join(kept, name), errors="replace") as f:
            fatal = [line for line in f if " C " in line[:40] or "Timed out" in line]
            if fatal and not cause:
                cause = f"{name}: {fatal[0].strip()[:300]}"
    shutil.rmtree(os.path.dirname(kept), ignore_errors=True)
    return cause


def _span(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{min(values):.1f}-{max(values):.1f} s (median {statistics.median(values):.1f})"


def report(results: list[dict]) -> str:
    lines = [
        "| side | starts ok | `import ray` | `ray.init` | processes that skipped the grammar "
        "| load (1 min) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for mode in ("fix", "plain"):
        rows = [r for r in results if r["mode"] == mode]
        ok = [r for r in rows if r.get("ok")]
        loads = [r["load"] for r in rows]
        skipped = sorted({r.get("skipped", 0) for r in ok})
        lines.append(
            f"| {mode} | {len(ok)}/{len(rows)} | {_span([r['import_s'] for r in rows if 'import_s' in r])} "
            f"| {_span([r['init_s'] for r in ok])} | {skipped} "
            f"| {min(loads):.1f}-{max(loads):.1f} |"
        )
    for r in results:
        if not r.get("ok"):
            lines.append(
                f"- {r['mode']} failed: {r.get('error', '')[:160]}... cause: {r.get('cause') or '?'}"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--starts", type=int, default=10, help="starts per side (default 10)")
    ap.add_argument("--timeout", type=float, default=180.0, help="bound on each driver, seconds")
    ap.add_argument(
        "--neighbour",
        choices=["none", "hog", "bursty"],
        default="none",
        help="extra load for the whole run (default none: only what else runs here)",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "ray_start.json")
    args = ap.parse_args(argv)
    results: list[dict] = []
    load = neighbour(args.neighbour, None, 3600.0, args.seed) if args.neighbour != "none" else None
    try:
        if load is not None:
            load.__enter__()
        for k in range(args.starts):
            for mode in ("fix", "plain") if k % 2 == 0 else ("plain", "fix"):
                results.append(one_start(mode, args.timeout))
                r = results[-1]
                print(
                    f"{k + 1:2d} {mode:5s} ok={r.get('ok')} import={r.get('import_s', 0):.1f}s "
                    f"init={r.get('init_s', 0):.1f}s skipped={r.get('skipped')} load={r['load']:.1f}",
                    flush=True,
                )
    finally:
        if load is not None:
            load.__exit__(None, None, None)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"neighbour": args.neighbour, "results": results}, indent=1))
    print(report(results))
    return 0 if all(r.get("ok") for r in results if r["mode"] == "fix") else 1


if __name__ == "__main__":
    sys.exit(main())

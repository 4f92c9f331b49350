"""The one-chapter command against the chapter's own run, measured side by side.

    python -m lab_snippets.bench.one_chapter                       # notebooks/06_semaphore.py, 3 rounds
    python -m lab_snippets.bench.one_chapter notebooks/12_processes.py --rounds 5

A: the README's command for one chapter, ``python -m pytest --nbval-lax <chapter>`` from the
repository root (the project's pytest options, the leak audit), timed from start to exit.
B: the chapter's own run: the notebook read with jupytext and executed by nbclient, timed around
``execute()`` only (kernel start and cells; the Python start and imports of that process are not
counted, which favours B). The CPU time of each whole process tree is printed too. The two
alternate (A B A B ...) so that a busy neighbour weighs on both, and each side's figure is its best
of the rounds. Target: A at most 1.5 times B.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from lab_snippets.bench.flake_hunt import ROOT

TARGET = 1.5

# Run one notebook the plain way and print the seconds execute() took (kernel start and cells).
_OWN_RUN = """\
import sys, time
import jupytext
from nbclient import NotebookClient
nb = jupytext.read(sys.argv[1], fmt="py:percent")
client = NotebookClient(nb, timeout=60, kernel_name="python3",
                        resources={"metadata": {"path": sys.argv[2]}})
start = time.perf_counter()
client.execute()
print(time.perf_counter() - start)
"""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "LAB_AUDIT_ID"}
    env.setdefault("SLIME_OFFLINE", "1")
    return env


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


CPU: dict[str, list[float]] = {"command": [], "own": []}  # CPU seconds of each whole process tree


def run_command(chapter: Path, timeout: float = 600) -> float:
    """Wall seconds of the README's one-chapter command (raises when it fails)."""
    cpu = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "--nbval-lax", str(chapter.relative_to(ROOT))],
                          cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - start
    CPU["command"].append(_children_cpu() - cpu)
    if proc.returncode != 0:
        raise RuntimeError(f"the one-chapter command failed (exit {proc.returncode}):\n{proc.stdout[-2000:]}")
    return wall


def run_own(chapter: Path, timeout: float = 600) -> float:
    """Seconds nbclient's ``execute()`` took for the chapter (kernel start and cells)."""
    cpu = _children_cpu()
    proc = subprocess.run([sys.executable, "-c", _OWN_RUN, str(chapter), str(chapter.parent)],
                          cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=timeout)
    CPU["own"].append(_children_cpu() - cpu)
    if proc.returncode != 0:
        raise RuntimeError(f"the chapter's own run failed:\n{proc.stderr[-2000:]}")
    return float(proc.stdout.strip().splitlines()[-1])


def compare(command: list[float], own: list[float]) -> dict:
    """Best of each side and their ratio, with the verdict against the target."""
    best_a, best_b = min(command), min(own)
    ratio = best_a / best_b
    return {"command": command, "own": own, "best_command": best_a, "best_own": best_b,
            "ratio": ratio, "ok": ratio <= TARGET}


def format_comparison(chapter: str, result: dict) -> str:
    return (f"{chapter}: one-chapter command best {result['best_command']:.1f} s "
            f"({', '.join(f'{x:.1f}' for x in result['command'])}); own run best {result['best_own']:.1f} s "
            f"({', '.join(f'{x:.1f}' for x in result['own'])}); ratio {result['ratio']:.2f} "
            f"({'OK' if result['ok'] else 'OVER'}, target <= {TARGET:g})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("chapter", nargs="?", type=Path, default=ROOT / "notebooks" / "06_semaphore.py")
    ap.add_argument("--rounds", type=int, default=3, help="A B pairs (default 3)")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args(argv)
    chapter = args.chapter.resolve()
    command, own = [], []
    for i in range(1, args.rounds + 1):
        command.append(run_command(chapter))
        own.append(run_own(chapter))
        print(f"round {i}/{args.rounds}: command {command[-1]:.1f} s, own run {own[-1]:.1f} s", flush=True)
    result = compare(command, own)
    result["cpu"] = dict(CPU)
    print(format_comparison(chapter.name, result))
    print(f"CPU seconds of the whole process (Python start, imports, kernel, cells): command best "
          f"{min(CPU['command']):.1f}, own run best {min(CPU['own']):.1f} (a check that does not depend "
          "on the neighbour)")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())

"""What drawing every figure a second time, in Chinese, costs the book build (issue 42: <= 10%).

    python -m lab_snippets.bench.zh_figures                    # every chapter that draws a figure
    python -m lab_snippets.bench.zh_figures notebooks/18_process_lifecycle.py --json out.json

Each chapter runs once, as the build's pre-execution runs it (nbclient, ``COURSE_FIGURE_EDITIONS=zh_CN``
in the kernel's environment), with figlang's display hook wrapped by a timer. Both figures come from
the same run, under the same load: ``zh`` is the seconds the hook spent beyond the English PNG it
would have drawn anyway (the Chinese words, the second PNG, its publication), ``run`` the seconds of
the whole execution. The ratio sum(zh) / sum(run) is an upper bound of the growth of the build: the
build also spends time outside the chapters' execution (Sphinx, the other edition), which the
denominator leaves out.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from lab_snippets.bench.flake_hunt import ROOT

TARGET = 0.10

# Runs in the kernel before the chapter: wrap figlang's hook so that it adds up its own extra time.
_TIMER = """\
import os, time
from lab_snippets import figlang as _fl
_fl_both, _fl_png = _fl._display_both, _fl.png
def _timed_both(fig, _both=_fl_both, _png=_fl_png):
    start = time.perf_counter()
    _png(fig, "en")
    english = time.perf_counter() - start
    start = time.perf_counter()
    shown = _both(fig)
    extra = time.perf_counter() - start - english
    with open(os.environ["COURSE_FIGLANG_TIMES"], "a") as f:
        f.write(f"{extra}\\n")
    return shown
_fl._display_both = _timed_both
"""

# Run one notebook with the timer cell first; print the seconds execute() took.
_RUN = """\
import sys, time
import jupytext, nbformat
from nbclient import NotebookClient
nb = jupytext.read(sys.argv[1], fmt="py:percent")
nb.cells.insert(0, nbformat.v4.new_code_cell(sys.argv[3]))
client = NotebookClient(nb, timeout=300, kernel_name="python3",
                        resources={"metadata": {"path": sys.argv[2]}})
start = time.perf_counter()
client.execute()
print(time.perf_counter() - start)
"""


def figure_chapters() -> list[Path]:
    """The chapters whose code draws a figure (a Timeline or matplotlib)."""
    marks = ("Timeline(", "plt.", "subplots(")
    return [p for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
            if any(m in p.read_text(encoding="utf-8") for m in marks)]


def measure(chapter: Path, timeout: float = 900) -> dict:
    """One execution of ``chapter`` with Chinese figures on: its seconds and the hook's extra ones."""
    with tempfile.TemporaryDirectory(prefix="zhfig-") as tmp:
        times = Path(tmp) / "times"
        times.touch()
        env = {k: v for k, v in os.environ.items() if k != "LAB_AUDIT_ID"}
        env.update(SLIME_OFFLINE=env.get("SLIME_OFFLINE", "1"), COURSE_FIGURE_EDITIONS="zh_CN",
                   COURSE_FIGLANG_TIMES=str(times))
        proc = subprocess.run([sys.executable, "-c", _RUN, str(chapter), str(chapter.parent), _TIMER],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(f"{chapter.name} failed:\n{proc.stderr[-2000:]}")
        extra = [float(x) for x in times.read_text().split()]
    return {"chapter": chapter.name, "run": float(proc.stdout.split()[-1]),
            "figures": len(extra), "zh": sum(extra)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("chapters", nargs="*", type=Path, help="default: every chapter that draws a figure")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args(argv)
    rows = []
    for chapter in [c.resolve() for c in args.chapters] or figure_chapters():
        rows.append(measure(chapter))
        r = rows[-1]
        print(f"{r['chapter']}: run {r['run']:.1f} s, {r['figures']} figures, Chinese drawing "
              f"{r['zh']:.2f} s ({r['zh'] / r['run']:.1%})", flush=True)
    run, zh = sum(r["run"] for r in rows), sum(r["zh"] for r in rows)
    ratio = zh / run if run else 0.0
    ok = ratio <= TARGET
    print(f"all: {len(rows)} chapters, {sum(r['figures'] for r in rows)} figures, Chinese drawing "
          f"{zh:.1f} s of {run:.1f} s executing ({ratio:.1%}; {'OK' if ok else 'OVER'}, "
          f"target <= {TARGET:.0%})")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "ratio": ratio, "ok": ok}, indent=1) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

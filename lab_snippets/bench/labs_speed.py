"""Time the lab grader: one submission alone, then a batch of N submissions of one chapter.

    python -m lab_snippets.bench.labs_speed [CHAPTER] [-n 10] [--jobs J] [--timeout S]

CHAPTER is a chapter ``.py`` (default: the test fixture lab).  The chapter is released
into a temporary course directory; the batch alternates reference (full marks) and blank
(student version) submissions.  Prints the total and the per-submission wall time.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from lab_snippets import labs

FIXTURE = labs.REPO / "tests" / "fixtures" / "labs" / "90_fixture_lab.py"


def _submissions(course_dir, stem, n, root):
    src = course_dir / "source" / stem / f"{stem}.ipynb"
    blank = course_dir / "release" / stem / f"{stem}.ipynb"
    for i in range(n):
        d = root / f"student{i:02d}" / stem
        d.mkdir(parents=True)
        shutil.copyfile(src if i % 2 == 0 else blank, d / f"{stem}.ipynb")
    return root


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("chapter", nargs="?", default=str(FIXTURE))
    p.add_argument("-n", type=int, default=10)
    p.add_argument("--jobs", type=int, default=None)
    p.add_argument("--timeout", type=int, default=30)
    args = p.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="labs-bench-"))
    try:
        course_dir = tmp / "course"
        t0 = time.monotonic()
        [released] = labs.release([args.chapter], course_dir=course_dir, log=lambda *a: None)
        stem = released.parent.name
        print(f"release {stem}: {time.monotonic() - t0:.1f}s")
        opts = labs.Options(timeout=args.timeout, jobs=args.jobs)
        quiet = lambda *a: None  # noqa: E731
        one = _submissions(course_dir, stem, 1, tmp / "one")
        t0 = time.monotonic()
        [row] = labs.grade(one, out=tmp / "one.csv", course_dir=course_dir, options=opts,
                           log=quiet)
        total_one = time.monotonic() - t0
        print(f"one submission: {row.seconds:.1f}s in its worker, {total_one:.1f}s for the "
              f"whole `grade` run (probe, backup, gradebook, CSV); score "
              f"{row.score:g}/{row.max_score:g} {row.status}")
        many = _submissions(course_dir, stem, args.n, tmp / "many")
        t0 = time.monotonic()
        rows = labs.grade(many, out=tmp / "many.csv", course_dir=course_dir, options=opts,
                          log=quiet)
        total = time.monotonic() - t0
        print(f"batch of {len(rows)} ({opts.jobs} in parallel): total {total:.1f}s, "
              f"{total / len(rows):.1f}s per submission on average")
        for r in rows:
            print(f"  {r.student}: {r.seconds:5.1f}s  {r.score:g}/{r.max_score:g}  {r.status}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

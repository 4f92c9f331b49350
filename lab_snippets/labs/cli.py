"""``python -m lab_snippets.labs release|validate|grade``: the command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path

import lab_snippets.labs as labs
from lab_snippets.book.chapters import missing_package
from lab_snippets.labs.common import DEFAULT_COURSE_DIR, LabError
from lab_snippets.labs.grader import grade
from lab_snippets.labs.publish import LANGUAGES, release
from lab_snippets.labs.spec import Options
from lab_snippets.labs.student import validate

# A Chinese release gets a course folder of its own (its sources and gradebook beside the English).
ZH_COURSE_DIR = DEFAULT_COURSE_DIR.with_name(DEFAULT_COURSE_DIR.name + "-zh_CN")
# The grader's defaults, read from Options (their one home); ``jobs`` is computed, so it stays None.
_GRADE_DEFAULTS = {f.name: f.default for f in fields(Options) if f.name != "jobs"}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m lab_snippets.labs", description=labs.__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("release", help="build the nbgrader course and the student versions")
    r.add_argument("chapters", nargs="*", help="chapter .py files or stems (default: all "
                   "notebooks/*.py with a solution cell)")
    r.add_argument("--course-dir", default=None,
                   help="default build/labs (build/labs-zh_CN with --lang zh_CN)")
    r.add_argument("--lang", choices=LANGUAGES, default="en",
                   help="zh_CN: the student versions' markdown in Chinese, from the zh catalogues "
                        "(code, tests and what is stripped unchanged)")
    v = sub.add_parser("validate", help="run a notebook and check it against its tests")
    v.add_argument("notebook")
    v.add_argument("--timeout", type=int, default=30, help="per-cell timeout in seconds")
    g = sub.add_parser("grade", help="autograde SUBMISSIONS_DIR/<student>/<assignment>/")
    g.add_argument("submissions_dir")
    g.add_argument("--out", default="grades.csv")
    g.add_argument("--course-dir", default=str(DEFAULT_COURSE_DIR))
    g.add_argument("--timeout", type=int, default=_GRADE_DEFAULTS["timeout"],
                   help=f"per-cell timeout (s), default {_GRADE_DEFAULTS['timeout']}")
    g.add_argument("--submission-timeout", type=int, default=_GRADE_DEFAULTS["submission_timeout"],
                   help="hard wall-clock limit per submission (s), "
                        f"default {_GRADE_DEFAULTS['submission_timeout']}")
    g.add_argument("--jobs", type=int, default=None, help="submissions graded in parallel")
    g.add_argument("--memory-mb", type=int, default=_GRADE_DEFAULTS["memory_mb"],
                   help="address-space limit per kernel")
    g.add_argument("--run-all", action="store_true",
                   help="run every cell, the chapter's experiments too (default: only the cells the "
                        "exercises and their tests need, and every cell a student added or changed)")
    g.add_argument("--hide", action="append", default=[],
                   help="extra path to hide from submissions (repeatable)")
    g.add_argument("--ray", metavar="ADDRESS", default=None,
                   help="grade on the Ray cluster at ADDRESS (or 'auto'), one task per submission, "
                        "on the nodes that advertise the lab_bwrap resource (see node-resources)")
    g.add_argument("--fresh", action="store_true",
                   help="grade everything again (default: take the rows the journal already holds)")
    n = sub.add_parser("node-resources", help="probe the sandbox on this machine; print the value "
                       "of `ray start --resources` that lets it take grading tasks")
    n.add_argument("--cpus", type=int, default=None,
                   help="gradings this node may run at once (default: its CPUs)")
    args = p.parse_args(argv)
    try:
        if args.cmd == "release":
            default = ZH_COURSE_DIR if args.lang == "zh_CN" else DEFAULT_COURSE_DIR
            release(args.chapters or None, course_dir=args.course_dir or default, lang=args.lang)
        elif args.cmd == "node-resources":
            return _node_resources(args.cpus)
        elif args.cmd == "validate":
            missing = missing_package(Path(args.notebook))
            if missing:  # a clear status, not an ImportError in the first cell
                print(f"{Path(args.notebook).name}: SKIPPED: {missing}")
                return 0
            passed, total = validate(args.notebook, timeout=args.timeout)
            return 0 if total and passed == total else 1  # exit code for students / CI
        else:
            opts = Options(timeout=args.timeout, submission_timeout=args.submission_timeout,
                           jobs=args.jobs, memory_mb=args.memory_mb, run_all=args.run_all)
            if not args.ray:  # each node checks its own (raygrade.node_resources)
                from lab_snippets.labs import raygrade
                raygrade.check_temp_dir()  # LabError: the fix, before any submission fails
            grade(args.submissions_dir, out=args.out, course_dir=args.course_dir,
                  options=opts, hide=args.hide, ray=args.ray, resume=not args.fresh)
    except LabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def _node_resources(cpus: int | None) -> int:
    """Print ``{"lab_bwrap": N, ...}`` when the sandbox probe passes here; else the fix, exit 2."""
    import json

    from lab_snippets.labs import raygrade

    print(json.dumps(raygrade.node_resources(cpus, strict=True)))  # LabError: the fix
    return 0

"""Mutation testing of the notebook helpers and the grading code (a maintainer command, not in CI).

``python -m lab_snippets.bench.mutation [MODULE ...]`` runs cosmic-ray (pinned in
``requirements-mutation.txt``, installed into ``build/mutation-venv`` on first use, apart from the course's
venv) over each module, in a scratch copy of the package and its tests (the working tree is never
mutated), with that module's own unit tests as the test command, and prints per module how many
mutants the tests killed and how many survived. ``MODULE`` is a path under ``lab_snippets/``
(``asyncio_tools.py``, ``labs/spec.py``); the default is every scope: each notebook helper at the top
of ``lab_snippets/`` and every module of ``lab_snippets/labs/``. ``--survivors`` lists each surviving
mutant (operator, line) so a test can be written that kills it; ``--json FILE`` records every outcome
and ``--again FILE`` then runs only that report's survivors against the tests as they are now.
``--sample F --seed N`` runs a seeded random fraction ``F`` of each scope's mutants (at least one per
scope): the survivor rate of a sample estimates the whole scope's, and the same seed draws the same
mutants again, so a before/after pair compares like with like.

A surviving mutant is a change the tests accept; some are equivalent (the code means the same), the
others are a missing test. Each mutant costs one pytest start, so a whole run takes hours on a
loaded machine: run the module you changed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from lab_snippets import PACKAGE_DIR, REPO_ROOT

TOOL_VENV = REPO_ROOT / "build" / "mutation-venv"  # build/: no book page, not in git
PINS = REPO_ROOT / "requirements-mutation.txt"
COPIED = ("lab_snippets", "tests", "conftest.py", "pyproject.toml", "jupytext.toml")
# The tests that exercise each scope (the rest of the suite runs notebooks or the sandbox: too slow
# to repeat per mutant). A helper without an entry uses tests/test_<module>.py; a module of labs/ also
# runs tests/test_labs_<module>.py, its own fast unit tests, where that file exists.
TESTS = {
    "grading.py": ["tests/test_grading.py"],
    "labs/": ["tests/test_labs_units.py"],
}
# Only the core plugins and the two the project's conftest needs: a pytest start per mutant.
PYTEST = ("-o", "addopts=", "-p", "nbval", "-p", "xdist", "-q", "-x", "-p", "no:cacheprovider")


def scopes() -> list[str]:
    """Every module the default run mutates, as paths under ``lab_snippets/``."""
    from lab_snippets import NOTEBOOK_MODULES

    top = sorted(f"{m}.py" for m in NOTEBOOK_MODULES if "." not in m and (PACKAGE_DIR / f"{m}.py").is_file())
    labs = sorted(f"labs/{p.name}" for p in (PACKAGE_DIR / "labs").glob("*.py") if p.name != "__init__.py")
    return top + labs


def tests_for(module: str) -> list[str]:
    if module.startswith("labs/"):
        own = f"tests/test_labs_{Path(module).stem}.py"
        return TESTS["labs/"] + ([own] if (REPO_ROOT / own).is_file() else [])
    return TESTS.get(module, [f"tests/test_{Path(module).stem}.py"])


def tool() -> Path:
    """cosmic-ray's command, installed into its own venv on first use."""
    exe = TOOL_VENV / "bin" / "cosmic-ray"
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(TOOL_VENV)], check=True)
        subprocess.run([str(TOOL_VENV / "bin" / "python"), "-m", "pip", "install", "-q", "-r", str(PINS)],
                       check=True)
    return exe


def config(module: str, timeout: float) -> str:
    command = " ".join([sys.executable, "-m", "pytest", *tests_for(module), *PYTEST])
    return (f'[cosmic-ray]\nmodule-path = "lab_snippets/{module}"\ntimeout = {timeout}\n'
            f'excluded-modules = []\ntest-command = "{command}"\n\n'
            '[cosmic-ray.distributor]\nname = "local"\n')


def annotation_spans(source: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Where a module's annotations are, if ``from __future__ import annotations`` keeps them unevaluated.

    A mutant inside one (``X | None`` made ``X & None``) changes no behaviour unless something reads
    the annotations at run time, so a survivor there is counted apart, as equivalent by this rule.
    """
    import ast

    tree = ast.parse(source)
    lazy = any(isinstance(n, ast.ImportFrom) and n.module == "__future__"
               and any(a.name == "annotations" for a in n.names) for n in tree.body)
    if not lazy:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.annotation is not None:
            found.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            found.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            found.append(node.annotation)
    return [((n.lineno, n.col_offset), (n.end_lineno, n.end_col_offset)) for n in found]


def results(exe: Path, session: Path, source: str = "") -> list[dict]:
    """One entry per mutant: operator, line, outcome (``killed``/``survived``/``incompetent``), and
    whether it lies inside an annotation (see ``annotation_spans``)."""
    spans = annotation_spans(source) if source else []
    dump = subprocess.run([str(exe), "dump", str(session)], capture_output=True, text=True, check=True)
    out = []
    for line in dump.stdout.splitlines():
        item, result = json.loads(line)
        if result is None:
            continue
        mutation = item["mutations"][0]
        start, end = tuple(mutation["start_pos"]), tuple(mutation["end_pos"])
        out.append({"operator": mutation["operator_name"], "line": start[0],
                    "occurrence": mutation["occurrence"], "outcome": result["test_outcome"],
                    "annotation": any(a <= start and end <= b for a, b in spans)})
    return out


def keep_only(session: Path, wanted: set[tuple[str, int]]) -> None:
    """Leave in the session only the mutants ``(operator, occurrence)`` in ``wanted``."""
    import sqlite3

    with sqlite3.connect(session) as db:
        jobs = [job for job, op, n in db.execute(
            "SELECT job_id, operator_name, occurrence FROM mutation_specs") if (op, n) not in wanted]
        for table in ("mutation_specs", "work_items"):
            db.executemany(f"DELETE FROM {table} WHERE job_id = ?", [(j,) for j in jobs])


def sample(session: Path, fraction: float, seed: int) -> None:
    """Keep a seeded random ``fraction`` of the session's mutants (at least one), drop the rest.

    The draw is over the mutants in the order of their names (operator, occurrence), not of
    cosmic-ray's job ids, which ``init`` makes at random: so the same seed draws the same mutants
    of a scope in every session."""
    import random
    import sqlite3

    with sqlite3.connect(session) as db:
        jobs = [job for _, _, job in sorted(
            (op, n, job) for job, op, n in db.execute(
                "SELECT job_id, operator_name, occurrence FROM mutation_specs"))]
        if not jobs:
            return
        keep = set(random.Random(f"{seed}:{session.stem}").sample(jobs, max(1, round(fraction * len(jobs)))))
        for table in ("mutation_specs", "work_items"):
            db.executemany(f"DELETE FROM {table} WHERE job_id = ?", [(j,) for j in jobs if j not in keep])


def run_scope(module: str, work: Path, timeout: float, only: list[dict] | None = None,
              fraction: float | None = None, seed: int = 0) -> list[dict]:
    exe = tool()
    cfg = work / f"{module.replace('/', '_')}.toml"
    session = cfg.with_suffix(".sqlite")
    cfg.write_text(config(module, timeout), encoding="utf-8")
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONPATH": str(work)}
    subprocess.run([str(exe), "init", str(cfg), str(session)], cwd=work, env=env, check=True)
    if only is not None:
        keep_only(session, {(r["operator"], r["occurrence"]) for r in only})
    elif fraction is not None:
        sample(session, fraction, seed)
    subprocess.run([str(exe), "exec", str(cfg), str(session)], cwd=work, env=env, check=True)
    return results(exe, session, (work / "lab_snippets" / module).read_text(encoding="utf-8"))


def scratch_copy() -> Path:
    """The package and its tests copied to a temporary folder (mutants are applied there only)."""
    work = Path(tempfile.mkdtemp(prefix="mutation-"))
    for name in COPIED:
        src = REPO_ROOT / name
        if src.is_dir():
            shutil.copytree(src, work / name, ignore=shutil.ignore_patterns("__pycache__", "corpus"))
        elif src.exists():
            shutil.copy2(src, work / name)
    return work


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lab_snippets.bench.mutation",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("modules", nargs="*", help="paths under lab_snippets/ (default: every scope)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per mutant's tests")
    ap.add_argument("--survivors", action="store_true", help="list every surviving mutant")
    ap.add_argument("--json", type=Path, help="write every mutant's outcome here")
    ap.add_argument("--sample", type=float, metavar="F", help="run a random fraction F (0-1] of each scope")
    ap.add_argument("--seed", type=int, default=0, help="the sample's seed (same seed, same mutants)")
    ap.add_argument("--again", type=Path, metavar="JSON",
                    help="run only the survivors recorded in an earlier --json report (after adding tests)")
    args = ap.parse_args(argv)
    if args.sample is not None and not 0 < args.sample <= 1:
        ap.error(f"--sample takes a fraction in (0, 1], not {args.sample}")
    earlier = json.loads(args.again.read_text(encoding="utf-8")) if args.again else None
    work = scratch_copy()
    report: dict[str, list[dict]] = {}
    try:
        for module in args.modules or (list(earlier) if earlier else scopes()):
            only = None if earlier is None else [r for r in earlier.get(module, [])
                                                 if r["outcome"] == "survived" and not r.get("annotation")]
            report[module] = found = run_scope(module, work, args.timeout, only, args.sample, args.seed)
            survived = [r for r in found if r["outcome"] == "survived" and not r["annotation"]]
            equivalent = sum(r["outcome"] == "survived" and r["annotation"] for r in found)
            print(f"{module}: {len(found)} mutants, {len(found) - len(survived) - equivalent} killed, "
                  f"{len(survived)} survived, {equivalent} in annotations (equivalent)", flush=True)
            if args.survivors:
                for r in survived:
                    print(f"  line {r['line']}: {r['operator']} #{r['occurrence']}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

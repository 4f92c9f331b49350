"""``validate``: what a student runs. ``run_tests`` runs a notebook top to bottom, like the grader's
kernel does (with the same recovery from a stuck or dead kernel), and returns one result per test
cell; ``validate`` prints them."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from lab_snippets.labs import deps
from lab_snippets.labs.common import (
    BEGIN_HIDDEN,
    HIDDEN_TAG,
    TESTS_TAG,
    cell_timeout,
    ensure_venv_on_path,
    failure_message,
    infrastructure_failure,
    is_solution_cell,
    kernelspec,
)
from lab_snippets.labs.markers import _points, _tags, read_notebook
from lab_snippets.labs.recovery import RecoveringMixin


def _test_cells(nb):
    out = []
    for i, cell in enumerate(nb.cells):
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and (meta.get("grade") or TESTS_TAG in _tags(cell)):
            name = meta.get("grade_id") or f"test cell {i}"
            hidden = HIDDEN_TAG in _tags(cell) or BEGIN_HIDDEN in cell.source
            out.append((i, name, float(meta.get("points", _points(_tags(cell)))), hidden))
    return out


def _cell_failure(cell):
    """What a student is told about a failed test cell (None when it passed); never its code."""
    return failure_message(cell.get("outputs", []))


@dataclass
class TestResult:
    """One test cell of a notebook after ``run_tests``."""

    __test__ = False  # not a pytest class

    index: int          # cell index in the notebook
    name: str           # nbgrader grade_id (or "test cell N")
    points: float
    hidden: bool        # a hidden-tests cell
    ran: bool           # False: an empty hidden-tests cell (student version), not run
    failure: str | None  # None when it passed; else "ErrorName: message"

    @property
    def passed(self) -> bool:
        return self.ran and self.failure is None

    @property
    def score(self) -> float:
        return self.points if self.passed else 0.0


@dataclass
class TestRun:
    """Everything ``run_tests`` found: per-test results and what happened to the kernel."""

    __test__ = False

    path: Path
    results: list[TestResult]
    seconds: float
    unimplemented: bool = False  # a solution cell still raises NotImplementedError
    restarted: list[int] = field(default_factory=list)  # cells after which the kernel restarted
    dead: str | None = None      # why the kernel could not be restarted
    infrastructure: str | None = None  # a course cell failed before the submission ran (Ray)
    kernel_restarts_at_start: int = 0  # kernels that died before their first reply (started again)
    skipped: int = 0  # code cells not run: experiments the grade does not need (deps.plan)
    trimmed: int = 0  # set-up cells run with only the statements the grade needs

    @property
    def score(self) -> float:
        return sum(r.score for r in self.results if r.ran)

    @property
    def max_score(self) -> float:
        return sum(r.points for r in self.results if r.ran)


def _client(nb, cwd, timeout, failed_replies, kill_at_end=False):
    from nbclient import NotebookClient

    class Client(RecoveringMixin, NotebookClient):
        pass

    def on_executed(cell, cell_index, execute_reply):
        content = execute_reply.get("content", {})
        if content.get("status") == "error":
            failed_replies[cell_index] = f"{content.get('ename')}: {content.get('evalue', '')}"

    return Client(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                  raise_on_iopub_timeout=False, interrupt_on_timeout=True, iopub_timeout=4,
                  resources={"metadata": {"path": str(cwd)}},
                  on_cell_executed=on_executed,
                  shutdown_kernel="immediate" if kill_at_end else "graceful",
                  error_on_timeout={"ename": "CellTimeoutError",
                                    "evalue": f"cell ran longer than {timeout}s",
                                    "traceback": [f"cell ran longer than {timeout}s"]})


# jupyter_client's words (KernelClient.wait_for_ready, which nbclient awaits before it sends any
# cell) when a kernel never becomes ready: its process exited before answering kernel_info (seen
# in a clean-clone CI rehearsal at load 5, 08/unseen_await_cancelled_wrapper), or it did not
# answer within the start-up timeout (seen at load 4-6, 16/unseen_single_wait). Nothing of the
# notebook had run; run_notebook starts one more kernel then, never more, never after a cell ran.
KERNEL_DIED_STARTING = "Kernel died before replying to kernel_info"
KERNEL_NEVER_READY = "Kernel didn't respond in"
KERNEL_START_FAILURES = (KERNEL_DIED_STARTING, KERNEL_NEVER_READY)


def _execute_all(client, nb, failed_replies, run, quiet_kernel=False, skip=frozenset()):
    """Run every code cell but ``skip``; restart a stuck or dead kernel and carry on (see
    RecoveringMixin)."""
    import subprocess

    from nbclient.exceptions import DeadKernelError
    from nbformat.v4 import new_output

    submission_ran = False
    with client.setup_kernel(**({"stderr": subprocess.DEVNULL} if quiet_kernel else {})):
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code" or i in skip:
                continue
            submission_ran = submission_ran or is_solution_cell(cell)
            if run.dead:
                cell.outputs = [new_output("error", ename="KernelDied", evalue=run.dead,
                                           traceback=[])]
                continue
            try:
                failed_replies.pop(i, None)
                client.execute_cell(cell, i)
                if i in failed_replies and not any(o.output_type == "error"
                                                   for o in cell.outputs):
                    ename, _, evalue = failed_replies[i].partition(": ")
                    cell.outputs.append(new_output("error", ename=ename, evalue=evalue,
                                                   traceback=[]))
                if not submission_ran and run.infrastructure is None:
                    run.infrastructure = infrastructure_failure(cell)
                if client.after_cell(cell, i):
                    run.restarted.append(i)
            except DeadKernelError as exc:
                cell.outputs.append(new_output("error", ename="KernelDied",
                                               evalue=f"the kernel died in this cell ({exc})",
                                               traceback=[]))
                try:
                    client.restart_and_replay(i)
                    run.restarted.append(i)
                except Exception as exc2:
                    run.dead = f"the kernel died while running cell {i} ({exc2})"


def run_tests(notebook, timeout=30) -> TestRun:
    """Run a notebook (``.py`` chapter or ``.ipynb``) top to bottom; return one result per test cell.

    The stable entry point for tools that need per-test results (``validate`` prints them).
    A hidden-tests cell runs when its tests are in the file (instructor version, or a chapter);
    an emptied one (student version) is reported with ``ran=False``.
    """
    path = Path(notebook).resolve()
    timeout = cell_timeout(path, timeout)  # a chapter that starts a local Ray: nbval's cell budget
    nb = read_notebook(path)
    if path.suffix == ".py":
        nb.metadata["kernelspec"] = kernelspec()
        deps.record(nb)  # as ``release`` does: the chapter's experiments are not run
    return run_notebook(nb, path.parent, timeout=timeout, path=path)


def run_notebook(nb, cwd, timeout=30, quiet_kernel=False, path=None,
                 kill_at_end=False) -> TestRun:
    """``run_tests`` for a notebook already in memory, run with ``cwd`` as its working folder.

    The one code path that runs tests outside the sandbox: ``validate`` reports it to a student,
    and ``lab_snippets.labs.corpus`` grades the wrong-solution corpus with it. A test cell passes
    when it raised nothing and wrote nothing to stderr, which is how nbgrader's ``determine_grade``
    scores a graded code cell in ``grade``; a failure is described by ``failure_message``, which
    ``grade`` uses for its reasons too. ``quiet_kernel`` sends the kernel's own stderr (its start-up
    warnings) to /dev/null. ``kill_at_end`` ends the kernel with SIGKILL to its process group once
    the last cell ran, instead of a shutdown request and the wait for it to exit (its atexit
    handlers do not run: not for a chapter that starts Ray, whose ``ray.shutdown`` is one). The
    cells the notebook's record says the grade does not need, and no cell that runs needs, are
    not run (``deps.plan``), as in ``grade``.
    """
    ensure_venv_on_path()
    tests = _test_cells(nb)
    run = TestRun(Path(path) if path else Path(cwd) / "notebook", [], 0.0)
    if not tests:
        return run
    t0 = time.monotonic()
    failed_replies = {}
    plan = deps.plan(nb)
    whole = {i: nb.cells[i].source for i in plan.trimmed}
    for i, source in plan.trimmed.items():
        nb.cells[i].source = source
    try:
        for start in (1, 2):
            client = _client(nb, cwd, timeout, failed_replies, kill_at_end)
            try:
                _execute_all(client, nb, failed_replies, run, quiet_kernel, plan.skip)
                break
            except RuntimeError as exc:  # jupyter_client's, before any cell was sent
                if start == 2 or not str(exc).startswith(KERNEL_START_FAILURES):
                    raise
                run.kernel_restarts_at_start += 1  # nothing of the notebook ran: start another
    finally:
        for i, source in whole.items():
            nb.cells[i].source = source
    run.skipped, run.trimmed = len(plan.skip), len(plan.trimmed)
    run.seconds = time.monotonic() - t0
    run.unimplemented = any(is_solution_cell(c) for c in nb.cells
                            if "NotImplementedError" in str(c.get("outputs")))
    for i, name, pts, hidden in tests:
        code = [ln for ln in nb.cells[i].source.splitlines()
                if ln.strip() and not ln.strip().startswith("#")]
        ran = not (hidden and not code)
        run.results.append(TestResult(i, name, pts, hidden, ran,
                                      _cell_failure(nb.cells[i]) if ran else None))
    return run


def validate(notebook, timeout=30, log=print):
    """Run a notebook top to bottom and report each test; return (passed, total)."""
    run = run_tests(notebook, timeout=timeout)
    if not run.results:
        log(f"{run.path.name}: no test cells found")
        return 0, 0
    log(f"Validating {run.path.name} (per-cell timeout {cell_timeout(run.path, timeout)}s)")
    passed = points = max_points = counted = 0
    for r in run.results:
        if not r.ran:
            log(f"  ----  {r.name}  ({r.points:g} pt): hidden tests, run only when the lab is graded")
            continue
        counted += 1
        max_points += r.points
        label = f"{r.name}{' [hidden]' if r.hidden else ''}"
        if r.passed:
            passed += 1
            points += r.points
            log(f"  PASS  {label}  ({r.points:g} pt)")
        else:
            log(f"  FAIL  {label}  ({r.points:g} pt): {r.failure}")
    log(f"{passed}/{counted} tests passed, {points:g}/{max_points:g} points "
        f"({run.seconds:.1f}s)")
    if run.unimplemented:
        log("hint: a solution cell still raises NotImplementedError - replace it with your code")
    if run.restarted:
        log(f"note: cell(s) {', '.join(map(str, run.restarted))} blocked the event loop or killed the "
            "kernel; it was restarted and the cells before them re-run")
    if run.dead:
        log(f"note: {run.dead}; later cells were not run")
    if run.infrastructure:
        log(f"note: {run.infrastructure}. The tests after it could not run, so their failures say "
            "nothing about your code: run the notebook again when the machine is less busy")
    return passed, counted

"""Unit tests of ``lab_snippets.labs.student`` (``validate``, ``run_tests``, ``run_notebook``) with the
kernel faked: which cells count as tests and which are hidden, that an emptied hidden-tests cell (the
student version) is reported as not run and earns nothing, that a failure recorded only in the
kernel's reply still fails the cell, the client set up as the grader's (same output wait), recovery
from a dead kernel, and what ``validate`` prints.

No kernel starts (``tests/test_labs.py`` runs real ones). ``python -m lab_snippets.bench.mutation
labs/student.py`` runs this file (with ``tests/test_labs_units.py``) against each mutant of the module.
Equivalent, so left alive: ``_test_cells``' ``cell.cell_type == "code"`` made ``<=`` (nbformat's
other cell types, "markdown" and "raw", both sort after "code").
"""

from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path

import nbformat
import pytest
from nbclient.exceptions import DeadKernelError
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from lab_snippets.labs import student
from lab_snippets.labs.common import BEGIN_HIDDEN, END_HIDDEN
from lab_snippets.labs.spec import Options


def _graded(source, grade_id=None, points=1, tags=(), **meta):
    cell = new_code_cell(source)
    named = {"grade_id": grade_id} if grade_id else {}
    cell.metadata["nbgrader"] = {"grade": True, "points": points, **named, **meta}
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def _lab():
    """A chapter's shape: a solution, a visible test, hidden tests (kept and emptied), markdown."""
    md = new_markdown_cell("# Exercise")
    md.metadata["nbgrader"] = {"grade": True, "points": 5}  # a graded markdown cell is not a test
    solution = new_code_cell("def add(a, b):\n    raise NotImplementedError")
    solution.metadata["tags"] = ["solution"]
    tagged = new_code_cell("assert add(1, 2) == 3")
    tagged.metadata["tags"] = ["tests", "points-2"]
    return new_notebook(cells=[
        md, solution,
        _graded("assert add(1, 1) == 2", "visible", points=3),
        _graded("assert add(2, 2) == 4", "hidden_tagged", tags=["hidden-tests"]),
        _graded(f"{BEGIN_HIDDEN}\nassert add(0, 0) == 0\n{END_HIDDEN}", "hidden_marked", points=2),
        _graded("# hidden tests are run when the lab is graded\n\n", "hidden_emptied", tags=["hidden-tests"]),
        tagged])


def test_test_cells_are_the_graded_or_tagged_code_cells_and_hidden_ones_are_marked():
    assert student._test_cells(_lab()) == [
        (2, "visible", 3.0, False), (3, "hidden_tagged", 1.0, True), (4, "hidden_marked", 2.0, True),
        (5, "hidden_emptied", 1.0, True), (6, "test cell 6", 2.0, False)]


def test_a_test_passes_only_when_it_ran_and_did_not_fail():
    assert [(r.passed, r.score) for r in (
        student.TestResult(0, "t", 2.0, hidden=False, ran=True, failure=None),
        student.TestResult(0, "t", 2.0, hidden=False, ran=True, failure="AssertionError: no"),
        student.TestResult(0, "t", 2.0, hidden=True, ran=False, failure=None))] == [
        (True, 2.0), (False, 0.0), (False, 0.0)], "an emptied hidden-tests cell earns nothing"


def test_a_runs_score_counts_only_the_tests_that_ran():
    results = [student.TestResult(0, "a", 2.0, False, True, None),
               student.TestResult(1, "b", 3.0, False, True, "boom"),
               student.TestResult(2, "c", 4.0, True, False, None)]
    run = student.TestRun(Path("lab.ipynb"), results, 1.5)
    assert (run.score, run.max_score) == (2.0, 5.0)
    assert (run.unimplemented, run.restarted, run.dead) == (False, [], None)
    assert student.TestRun(Path("x"), [], 0.0).restarted is not run.restarted


def test_the_client_runs_like_the_graders_and_records_failed_replies(tmp_path):
    failed = {}
    client = student._client(_lab(), tmp_path, 7, failed)
    assert isinstance(client, student.RecoveringMixin)
    assert client.iopub_timeout == Options().iopub_timeout, "validate waits for a cell's output as grade does"
    assert (client.timeout, client.kernel_name, client.allow_errors, client.interrupt_on_timeout,
            client.raise_on_iopub_timeout) == (7, "python3", True, True, False)
    assert client.resources == {"metadata": {"path": str(tmp_path)}}
    assert client.error_on_timeout == {"ename": "CellTimeoutError", "evalue": "cell ran longer than 7s",
                                       "traceback": ["cell ran longer than 7s"]}
    client.on_cell_executed(cell=None, cell_index=3, execute_reply={"content": {"status": "ok"}})
    client.on_cell_executed(cell=None, cell_index=4, execute_reply={
        "content": {"status": "error", "ename": "ValueError", "evalue": "bad"}})
    assert failed == {4: "ValueError: bad"}
    assert client.shutdown_kernel == "graceful", "validate lets the kernel exit by itself"
    killing = student._client(_lab(), tmp_path, 7, failed, kill_at_end=True)
    assert killing.shutdown_kernel == "immediate", "kill_at_end: the corpus kills a graded kernel"


class FakeClient:
    """What ``_execute_all`` needs of a client; ``script``: what each cell index does."""

    def __init__(self, failed, script, stuck=(), restart_error=None):
        self.failed, self.script, self.stuck, self.restart_error = failed, script, stuck, restart_error
        self.executed, self.replayed, self.kernel = [], [], None

    @contextlib.contextmanager
    def setup_kernel(self, **kw):
        self.kernel = kw
        yield

    def execute_cell(self, cell, index):
        self.executed.append(index)
        what = self.script.get(index)
        if what in ("reply-error", "output-error"):
            self.failed[index] = "ValueError: bad"
        if what == "output-error":
            cell.outputs.append(new_output("error", ename="ValueError", evalue="bad", traceback=[]))
        if what == "die":
            raise DeadKernelError("exit code 9")

    def after_cell(self, cell, index):
        return index in self.stuck

    def restart_and_replay(self, index):
        if self.restart_error:
            raise self.restart_error
        self.replayed.append(index)


def _cells(*kinds):
    return new_notebook(cells=[new_markdown_cell("text") if k == "md" else new_code_cell("pass")
                               for k in kinds])


@pytest.mark.parametrize("quiet", [False, True])
def test_every_code_cell_runs_and_a_failure_only_the_reply_shows_fails_the_cell(quiet):
    nb, failed = _cells("md", "code", "code", "md", "code"), {2: "stale from an earlier run"}
    client = FakeClient(failed, {1: "reply-error", 2: "output-error"}, stuck={4})
    run = student.TestRun(Path("x"), [], 0.0)
    student._execute_all(client, nb, failed, run, quiet_kernel=quiet)
    assert client.kernel == ({"stderr": subprocess.DEVNULL} if quiet else {})
    assert client.executed == [1, 2, 4], "markdown cells are not run"
    assert [(o.ename, o.evalue) for o in nb.cells[1].outputs] == [("ValueError", "bad")], \
        "an error only the execute reply reported becomes the cell's error output"
    assert [(o.ename, o.evalue) for o in nb.cells[2].outputs] == [("ValueError", "bad")], "not twice"
    assert nb.cells[4].outputs == [] and run.restarted == [4] and run.dead is None


def test_a_dead_kernel_is_restarted_or_else_every_later_cell_says_why():
    nb, failed = _cells("code", "code", "md", "code"), {}
    client = FakeClient(failed, {0: "die"})
    run = student.TestRun(Path("x"), [], 0.0)
    student._execute_all(client, nb, failed, run)
    assert (client.executed, client.replayed, run.restarted, run.dead) == ([0, 1, 3], [0], [0], None)
    assert [(o.ename, o.evalue) for o in nb.cells[0].outputs] == [
        ("KernelDied", "the kernel died in this cell (exit code 9)")]
    nb, failed = _cells("code", "code", "md", "code"), {}
    client = FakeClient(failed, {0: "die"}, restart_error=RuntimeError("no kernel"))
    run = student.TestRun(Path("x"), [], 0.0)
    student._execute_all(client, nb, failed, run)
    assert client.executed == [0] and run.restarted == []
    assert run.dead == "the kernel died while running cell 0 (no kernel)"
    assert [[(o.ename, o.evalue) for o in nb.cells[i].outputs] for i in (1, 3)] == [
        [("KernelDied", run.dead)]] * 2 and nb.cells[2].get("outputs") is None


def test_run_notebook_reports_each_test_and_an_emptied_hidden_cell_as_not_run(monkeypatch, tmp_path):
    nb = _lab()
    ticks = iter([100.0, 102.5])
    monkeypatch.setattr(student.time, "monotonic", lambda: next(ticks))
    monkeypatch.setattr(student, "_client",
                        lambda nb, cwd, timeout, failed, kill: ("client", cwd, timeout, kill))

    def execute_all(client, nb, failed, run, quiet_kernel, skip):
        assert client == ("client", tmp_path, 9, False) and quiet_kernel
        assert skip == frozenset(), "a notebook with no record of what grading may skip runs whole"
        nb.cells[1].outputs = [new_output("error", ename="NotImplementedError", evalue="", traceback=[])]
        nb.cells[2].outputs = [new_output("error", ename="AssertionError", evalue="add(1, 1) was 3",
                                          traceback=["assert add(1, 1) == 2"])]

    monkeypatch.setattr(student, "_execute_all", execute_all)
    run = student.run_notebook(nb, tmp_path, timeout=9, quiet_kernel=True, path=tmp_path / "lab.ipynb")
    assert (run.path, run.seconds, run.unimplemented) == (tmp_path / "lab.ipynb", 2.5, True)
    assert [(r.index, r.name, r.points, r.hidden, r.ran, r.failure) for r in run.results] == [
        (2, "visible", 3.0, False, True, "add(1, 1) was 3"), (3, "hidden_tagged", 1.0, True, True, None),
        (4, "hidden_marked", 2.0, True, True, None), (5, "hidden_emptied", 1.0, True, False, None),
        (6, "test cell 6", 2.0, False, True, None)]
    assert (run.score, run.max_score) == (5.0, 8.0), "the emptied hidden cell counts neither way"


@pytest.mark.parametrize("words", ["Kernel died before replying to kernel_info",
                                   "Kernel didn't respond in 60 seconds"])
def test_a_kernel_that_never_becomes_ready_is_started_once_more_and_only_once(monkeypatch, tmp_path,
                                                                             words):
    # Nothing of the notebook ran when jupyter_client says the kernel died before its first reply
    # or never answered it in time (jupyter_client's own words, as 3.11's pin raises them): one
    # more kernel is started; a second such failure, or any other error, goes up as it is.
    # Counterfactuals: no second start (the corpus reports an infrastructure failure as a
    # verdict); a retry on any RuntimeError (a notebook's own error would run it twice).
    monkeypatch.setattr(student, "_client", lambda *a: "client")
    starts = []

    def fails(times, message):
        def execute_all(client, nb, failed, run, quiet_kernel, skip):
            starts.append(client)
            if len(starts) <= times:
                raise RuntimeError(message)
        return execute_all

    monkeypatch.setattr(student, "_execute_all", fails(1, words))
    run = student.run_notebook(_lab(), tmp_path)
    assert (len(starts), run.kernel_restarts_at_start) == (2, 1)
    starts.clear()
    monkeypatch.setattr(student, "_execute_all", fails(2, words))
    with pytest.raises(RuntimeError, match=words[:12]):
        student.run_notebook(_lab(), tmp_path)
    assert len(starts) == 2, "at most one more kernel"
    starts.clear()
    monkeypatch.setattr(student, "_execute_all", fails(1, f"a cell said: {words}"))
    with pytest.raises(RuntimeError, match="a cell said"):
        student.run_notebook(_lab(), tmp_path)
    assert len(starts) == 1, "another RuntimeError is not a kernel that failed to start"


def test_the_start_failures_are_jupyter_clients_own_words():
    # if jupyter_client rewords them, the retry above would silently stop matching
    import inspect

    from jupyter_client.client import KernelClient
    source = inspect.getsource(KernelClient._async_wait_for_ready)
    assert all(w in source for w in student.KERNEL_START_FAILURES), student.KERNEL_START_FAILURES


def test_a_notebook_without_tests_runs_no_kernel(monkeypatch, tmp_path):
    monkeypatch.setattr(student, "_execute_all", lambda *a, **k: pytest.fail("a kernel was started"))
    run = student.run_notebook(_cells("md", "code"), tmp_path)
    assert (run.path, run.results, run.seconds, run.unimplemented) == (tmp_path / "notebook", [], 0.0, False)


def test_run_tests_gives_a_chapter_the_course_kernel_and_keeps_a_notebooks_own(monkeypatch, tmp_path):
    seen = []
    monkeypatch.setattr(student, "kernelspec", lambda: {"name": "python3", "display_name": "Course"})
    monkeypatch.setattr(student, "run_notebook", lambda nb, cwd, timeout, path: seen.append(
        (nb.metadata.get("kernelspec"), cwd, timeout, path)) or "run")
    chapter = tmp_path / "06_x.py"
    chapter.write_text("# %%\nx = 1\n")
    lab = tmp_path / "06_x.ipynb"
    nb = _cells("code")
    nb.metadata["kernelspec"] = {"name": "custom", "display_name": "Mine"}
    nbformat.write(nb, lab)
    assert student.run_tests(chapter, timeout=4) == student.run_tests(lab) == "run"
    assert seen == [({"name": "python3", "display_name": "Course"}, tmp_path, 4, chapter),
                    ({"name": "custom", "display_name": "Mine"}, tmp_path, 30, lab)]


def test_validate_prints_each_test_and_what_happened_to_the_kernel(monkeypatch):
    results = [student.TestResult(2, "visible", 1.0, False, True, None),
               student.TestResult(3, "speed", 2.0, False, True, "too slow: 3.1 s"),
               student.TestResult(4, "hidden_kept", 1.5, True, True, None),
               student.TestResult(5, "hidden_emptied", 1.0, True, False, None)]
    run = student.TestRun(Path("/x/06_lab.ipynb"), results, 4.31, unimplemented=True, restarted=[3, 5],
                          dead="the kernel died while running cell 5 (gone)")
    monkeypatch.setattr(student, "run_tests", lambda notebook, timeout: run)
    lines = []
    assert student.validate("06_lab.ipynb", timeout=12, log=lines.append) == (2, 3)
    assert lines == [
        "Validating 06_lab.ipynb (per-cell timeout 12s)",
        "  PASS  visible  (1 pt)",
        "  FAIL  speed  (2 pt): too slow: 3.1 s",
        "  PASS  hidden_kept [hidden]  (1.5 pt)",
        "  ----  hidden_emptied  (1 pt): hidden tests, run only when the lab is graded",
        "2/3 tests passed, 2.5/4.5 points (4.3s)",
        "hint: a solution cell still raises NotImplementedError - replace it with your code",
        "note: cell(s) 3, 5 blocked the event loop or killed the kernel; it was restarted and the cells "
        "before them re-run",
        "note: the kernel died while running cell 5 (gone); later cells were not run"]
    empty = student.TestRun(Path("/x/e.ipynb"), [], 0)
    monkeypatch.setattr(student, "run_tests", lambda notebook, timeout: empty)
    lines.clear()
    assert student.validate("e.ipynb", log=lines.append) == (0, 0)
    assert lines == ["e.ipynb: no test cells found"]


class RayDownClient(FakeClient):
    """A client whose cell ``down`` raises raylab's RayStartError."""

    def __init__(self, failed, down):
        super().__init__(failed, {})
        self.down = down

    def execute_cell(self, cell, index):
        super().execute_cell(cell, index)
        if index == self.down:
            cell.outputs.append(new_output("error", ename="RayStartError", evalue="2 attempts failed",
                                           traceback=[]))


def test_ray_not_starting_before_the_submission_is_an_infrastructure_failure():
    nb, failed = _cells("code", "code", "code"), {}
    nb.cells[2].metadata["tags"] = ["solution"]
    run = student.TestRun(Path("x"), [], 0.0)
    student._execute_all(RayDownClient(failed, down=0), nb, failed, run)
    assert run.infrastructure == "Ray did not start (2 attempts failed)"
    run = student.TestRun(Path("x"), [], 0.0)  # the same error after the solution cell ran: its own
    nb, failed = _cells("code", "code", "code"), {}
    nb.cells[1].metadata["nbgrader"] = {"solution": True}
    student._execute_all(RayDownClient(failed, down=2), nb, failed, run)
    assert run.infrastructure is None, "an error after the submission ran is not the course's"


def test_validate_says_ray_did_not_start_and_that_the_failures_are_not_the_students(monkeypatch):
    run = student.TestRun(Path("lab.ipynb"), [student.TestResult(1, "t", 1.0, False, True,
                                                                 "NameError: name 'cluster' is not defined")],
                          1.0, infrastructure="Ray did not start (2 attempts failed)")
    monkeypatch.setattr(student, "run_tests", lambda notebook, timeout=30: run)
    lines = []
    student.validate("lab.ipynb", log=lines.append)
    assert any(line.startswith("note: Ray did not start (2 attempts failed).") and "nothing about your code"
               in line for line in lines), lines

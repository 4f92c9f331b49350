"""Unit tests of ``labs.worker``, the trusted process that autogrades one submission.

No kernel starts and nothing is sandboxed here: the worker's own decisions are tested over a fake
kernel (``Kernel`` stands in for ``run_quiet``, which runs the hidden guard cells; nbgrader's
``Execute.preprocess_cell``, which runs a notebook cell, is replaced where a test runs one). What
runs for real: the result records, nbgrader's scoring of a cell's outputs, nbclient's output
handling, the kernel manager's command line and nbgrader's configuration.
"""

from __future__ import annotations

import asyncio
import json
import os
import runpy
import sys
import warnings
from dataclasses import replace

import pytest
from nbclient.exceptions import DeadKernelError
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from lab_snippets.labs import guard, worker
from lab_snippets.labs.spec import (
    CellRecord,
    CellTimeout,
    Died,
    Final,
    GradeSpec,
    Infrastructure,
    Restart,
    SandboxSpec,
    parse_record,
)

NONCE = "ab" * 16
TAMPERED = "guard cell was tampered with (no valid guard report)"


def _spec(tmp_path, **over):
    fields = dict(course=str(tmp_path / "course"), course_id="c", assignment="01", student="s",
                  notebook="01", timeout=3, iopub_timeout=2, result=str(tmp_path / "result.jsonl"),
                  nonce=NONCE, sandbox_spec=str(tmp_path / "spec.json"),
                  sandbox=SandboxSpec(box=str(tmp_path / "box"), uid=None),
                  solution_names=("add_async",))
    return GradeSpec(**{**fields, **over})


def _records(ex):
    path = ex.spec.result
    return [parse_record(line) for line in open(path).read().splitlines()] if os.path.exists(path) else []


def _report(restored=(), nonce=NONCE):
    return [new_output("stream", name="stdout", text=f"LAB-GUARD {nonce} {json.dumps(list(restored))}\n")]


def _test_cell(gid="t1", points=1, source="assert True"):
    return new_code_cell(source, metadata={"nbgrader": {"grade": True, "grade_id": gid, "points": points,
                                                        "solution": False}})


def _solution_cell(source="async def add_async(a, b):\n    return a + b", gid="s1"):
    return new_code_cell(source, metadata={"nbgrader": {"solution": True, "grade": False, "grade_id": gid}})


def _error(ename="AssertionError", evalue="the property broke"):
    return new_output("error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


class Kernel:
    """Stands in for ``run_quiet``: answers the guard's hidden cells as the test tells it."""

    def __init__(self, checks=(), install=()):
        self.checks = list(checks)    # per guard check: its outputs, or an exception to raise
        self.install = list(install)  # outputs of the guard's installation
        self.sources = []

    def __call__(self, source, index, timeout=None):
        self.sources.append(source)
        cell = new_code_cell(source)
        if source.endswith("[1]()"):
            out = self.checks.pop(0) if self.checks else []
            if isinstance(out, BaseException):
                raise out
            cell.outputs = list(out)
        elif "[0](" not in source:
            cell.outputs = list(self.install)
        return cell

    def ran(self, kind):
        return [s for s in self.sources if kind in s]


@pytest.fixture
def ex(tmp_path):
    ex = worker.SandboxExecute()
    ex.spec = _spec(tmp_path)
    ex.report = worker.Report(ex.spec.result)
    ex.nb = new_notebook(cells=[new_code_cell("x = 1")])
    ex.run_quiet = Kernel()
    return ex


# --------------------------------------------------------------------------- the result file


def test_the_report_appends_one_json_line_per_record(tmp_path):
    path = str(tmp_path / "result.jsonl")
    worker.Report(path).emit(CellRecord("t1", 1.0, 1.0))
    worker.Report(path).emit(Final({"t1": [1.0, 1.0]}))  # another Report, the same file: appended
    assert [parse_record(line) for line in open(path).read().splitlines()] == [
        CellRecord("t1", 1.0, 1.0), Final({"t1": [1.0, 1.0]})]
    assert open(path).read().endswith("}\n"), "each record ends its line: a cut-off line is the last"


# --------------------------------------------------------------------------- the kernel manager


@pytest.fixture
def km(tmp_path, monkeypatch):
    monkeypatch.setattr(worker.SandboxKernelManager, "spec", _spec(tmp_path, sandbox=SandboxSpec(
        box=str(tmp_path / "box"), uid=1_900_007, gid=1_900_008)), raising=False)
    return worker.SandboxKernelManager()


def test_the_kernel_talks_over_unix_sockets_in_its_own_box(km, tmp_path):
    assert km.transport == "ipc", "no TCP port on localhost that any local process could reach"
    assert km.ip == str(tmp_path / "box" / "k")
    assert km.connection_file == str(tmp_path / "box" / "connection.json")


@pytest.mark.parametrize(("kernel", "runs"), [
    (["/opt/other/bin/python3.11", "-m", "ipykernel_launcher", "-f", "c.json"], sys.executable),
    (["python", "-m", "ipykernel_launcher", "-f", "c.json"], sys.executable),
    (["/opt/julia/bin/julia", "-i", "c.json"], "/opt/julia/bin/julia"),
])
def test_the_kernel_starts_through_the_sandbox_launcher_with_the_graders_python(km, monkeypatch,
                                                                                kernel, runs):
    monkeypatch.setattr(worker.AsyncKernelManager, "format_kernel_cmd", lambda self, extra=None: list(kernel))
    cmd = km.format_kernel_cmd()
    launcher = [sys.executable, "-m", "lab_snippets.labs.sandbox", "kernel", km.spec.sandbox_spec, "--"]
    assert cmd[:6] == launcher
    assert cmd[6:] == [runs, *kernel[1:]], "a Python kernel runs on the grader's interpreter, others as given"


def test_an_empty_kernel_command_is_passed_on_as_it_is(km, monkeypatch):
    monkeypatch.setattr(worker.AsyncKernelManager, "format_kernel_cmd", lambda self, extra=None: [])
    assert km.format_kernel_cmd()[-1] == "--"


@pytest.mark.parametrize("uid", [1_900_007, None])
def test_a_kernel_with_its_own_uid_is_given_its_connection_file(km, monkeypatch, uid):
    owned, launched = [], []
    km.spec = replace(km.spec, sandbox=replace(km.spec.sandbox, uid=uid, gid=uid and 1_900_008))

    async def launch(self, kernel_cmd, **kw):
        launched.append(kernel_cmd)
        return "kernel"

    monkeypatch.setattr(worker.os, "chown", lambda *a: owned.append(a))
    monkeypatch.setattr(worker.AsyncKernelManager, "_async_launch_kernel", launch)
    assert asyncio.run(km._async_launch_kernel(["k"])) == "kernel" and launched == [["k"]]
    assert owned == ([(km.connection_file, uid, 1_900_008)] if uid else []), \
        "the sandboxed uid must be able to read its connection file (and only then is it chowned)"


# --------------------------------------------------------------------------- the guard


def test_the_guards_hidden_slot_is_private_and_random():
    assert worker.SandboxExecute.slot.startswith("_lab_") and len(worker.SandboxExecute.slot) == 17
    assert worker.SandboxExecute.slot.isidentifier()


def test_a_report_with_the_nonce_says_what_the_guard_restored(ex):
    ex.run_quiet = Kernel(checks=[[new_output("stream", name="stdout", text="hello\n"), *_report(["m.f"])]])
    ex._untrusted_ran = True
    assert ex._guard_check(0) == (["m.f"], None)
    assert ex.run_quiet.sources == [f"{ex.slot}[1]()"]
    assert ex._untrusted_ran is False, "the check put the snapshots back"


@pytest.mark.parametrize("outputs", [
    _report(nonce="cd" * 16),                                   # a report the submission forged
    [*_report(), _error("NameError", "x")],                     # the check cell raised
    [new_output("stream", name="stdout", text=f"GUARD {NONCE} []\n")],
    [new_output("stream", name="stdout", text=f"LAB-GUARD {NONCE}\n")],
    [new_output("stream", name="stderr", text="")],
    [],
], ids=["wrong-nonce", "error", "wrong-tag", "no-list", "silent", "nothing"])
def test_no_valid_report_is_tampering_after_one_retry(ex, outputs):
    ex.run_quiet = Kernel(checks=[outputs, outputs])
    ex._untrusted_ran = True
    assert ex._guard_check(0) == (None, TAMPERED)
    assert len(ex.run_quiet.ran("[1]()")) == 2, "a report lost on a loaded machine gets a second try"
    assert ex._untrusted_ran is True


def test_a_report_lost_once_is_found_on_the_retry(ex):
    ex.run_quiet = Kernel(checks=[[], _report()])
    assert ex._guard_check(0) == ([], None)


def test_a_guard_check_that_cannot_run_is_a_problem_and_a_dead_kernel_is_passed_on(ex):
    ex.run_quiet = Kernel(checks=[TimeoutError("slow")])
    assert ex._guard_check(0) == (None, "guard did not run (TimeoutError)")
    ex.run_quiet = Kernel(checks=[DeadKernelError("gone")])
    with pytest.raises(DeadKernelError):
        ex._guard_check(0)


def test_the_guard_is_installed_with_the_nonce_and_slot_and_an_error_stops_grading(ex):
    ex._untrusted_ran = True
    ex._install_guard(0)
    assert ex.run_quiet.sources == [guard.injection(NONCE, ex.slot)]
    assert ex._untrusted_ran is False
    ex.run_quiet = Kernel(install=[_error("SyntaxError", "x")])
    with pytest.raises(RuntimeError, match="could not install the grading guard"):
        ex._install_guard(0)


def test_trusted_cells_are_recorded_and_trusted_module_changes_only_before_a_submission_cell(ex):
    """The guard keeps what a trusted cell binds (not the reference solution's names, which the
    submission rebinds), and takes its module changes as trusted only if no submission cell ran
    since the snapshots last held (``clean``)."""
    ex.nb = new_notebook(cells=[new_code_cell("x = 1\ndef helper(): pass"), _solution_cell(),
                                new_code_cell("print('no binding')"), new_code_cell("import ray"),
                                new_code_cell("add_async = None")])
    slot = ex.slot
    ex.after_replay(0)
    assert ex.run_quiet.sources == [f"{slot}[0](['x', 'helper'], True)"]
    ex.after_replay(2)
    assert ex.run_quiet.sources[-1] == f"{slot}[0]([], True)", "clean: its module changes are trusted"
    ex.after_replay(1)
    assert ex._untrusted_ran is True and len(ex.run_quiet.sources) == 2, "a submission cell is not recorded"
    ex.after_replay(2)
    ex.after_replay(4)
    assert len(ex.run_quiet.sources) == 2, "nothing to record after a submission cell: no names, not clean"
    ex.after_replay(3)
    assert ex.run_quiet.sources[-1] == f"{slot}[0](['ray'], False)"


# --------------------------------------------------------------------------- the output cap


def _msg(msg_type, content):
    return {"msg_type": msg_type, "header": {"msg_type": msg_type}, "parent_header": {"msg_id": "m"},
            "metadata": {}, "content": content}


def test_output_beyond_the_cap_is_cut_once_and_an_error_still_gets_through(tmp_path, ex):
    ex.spec = _spec(tmp_path, max_output_chars=100)
    ex.reset_execution_trackers()
    ex.clear_before_next_output = False  # as nbclient sets it when it starts a cell
    outs = []
    line = _msg("stream", {"name": "stdout", "text": "x" * 40})  # 60 characters of JSON
    ex.output(outs, line, None, 0)
    assert [o.text for o in outs] == ["x" * 40]
    assert ex.output(outs, line, None, 0) is None, "past the cap: dropped"
    assert ex.output(outs, line, None, 0) is None
    assert [o.text for o in outs] == ["x" * 40, "\n[output truncated after 100 chars]\n"], "one marker"
    ex.output(outs, _msg("error", {"ename": "AssertionError", "evalue": "v", "traceback": []}), None, 0)
    assert outs[-1].output_type == "error", "the failure stays visible past the cap"
    assert len(outs) == 3


def test_each_cell_gets_a_fresh_output_budget(ex):
    ex._chars, ex._capped, ex._guard_installed = 10**9, True, True
    ex.preprocess_cell(new_markdown_cell("text"), {}, 0)
    assert (ex._chars, ex._capped) == (0, False)


# --------------------------------------------------------------------------- one cell


@pytest.fixture
def runs(monkeypatch):
    """nbgrader's Execute.preprocess_cell replaced: each cell gets the outputs in ``runs.outputs``."""
    class Runs:
        outputs: dict = {}
        ran: list = []

    def preprocess_cell(self, cell, resources, index):
        Runs.ran.append(index)
        out = Runs.outputs.get(index, [])
        if isinstance(out, BaseException):
            raise out
        cell.outputs = list(out)
        return cell, resources

    Runs.outputs, Runs.ran = {}, []
    monkeypatch.setattr(worker.Execute, "preprocess_cell", preprocess_cell)
    return Runs


TIMEOUT = new_output("error", ename="CellTimeoutError", evalue="Cell execution timed out", traceback=[])


def test_a_graded_cell_is_recorded_with_nbgraders_score_and_the_reason(ex, runs):
    ex._guard_installed = True
    ex.run_quiet = Kernel(checks=[_report()] * 5)
    ex.kernel_alive = lambda index: True  # the timed-out test leaves a kernel that answers
    runs.outputs = {0: [], 1: [_error(evalue="results out of order")], 2: [TIMEOUT],
                    3: [new_output("execute_result", data={"text/plain": "0.5"}, execution_count=1)]}
    ex.nb = new_notebook(cells=[*(_test_cell(f"t{i}", points=2) for i in range(4)), new_code_cell("y = 2")])
    for i, cell in enumerate(ex.nb.cells):  # the last is not graded: no record
        ex.preprocess_cell(cell, {}, i)
    assert _records(ex) == [
        CellRecord("t0", 2.0, 2.0),
        CellRecord("t1", 0.0, 2.0, reason="results out of order"),
        CellRecord("t2", 0.0, 2.0, timed_out=True, reason="CellTimeoutError: Cell execution timed out"),
        CellRecord("t3", 0.5, 2.0, reason="partial credit")]


def test_a_graded_solution_cell_nbgrader_cannot_score_is_recorded_as_zero(ex, runs):
    ex._guard_installed = True
    ex.run_quiet = Kernel(checks=[_report()])
    cell = _test_cell("t1")
    cell.metadata.nbgrader["solution"] = True  # nbgrader's score: None (a manually graded answer)
    ex.preprocess_cell(cell, {}, 0)
    assert _records(ex) == [CellRecord("t1", 0.0, 1.0)]


def test_the_guard_is_installed_once_and_checked_before_every_test(ex, runs):
    ex.run_quiet = Kernel(checks=[_report(["m.f"]), _report()])
    ex.nb = new_notebook(cells=[new_code_cell("x = 1"), _test_cell("t1"), _test_cell("t2")])
    for i, cell in enumerate(ex.nb.cells):
        ex.preprocess_cell(cell, {}, i)
    assert len(ex.run_quiet.ran("LAB-GUARD")) == 1
    assert ex.run_quiet.sources[0] == guard.injection(NONCE, ex.slot)
    assert len(ex.run_quiet.ran("[1]()")) == 2 and runs.ran == [0, 1, 2]
    assert [r.restored for r in _records(ex)] == [("m.f",), ()]


def test_a_test_is_not_run_when_the_guard_reports_a_problem(ex, runs):
    ex._guard_installed = True
    ex.run_quiet = Kernel(checks=[_report(nonce="forged"), _report(nonce="forged")])
    ex.kernel_alive = lambda index: True
    cell = _test_cell("t1")
    cell.outputs = [new_output("stream", name="stdout", text="stale")]
    ex.preprocess_cell(cell, {}, 3)
    assert runs.ran == [], "the test must not run over state the guard could not vouch for"
    [out] = cell.outputs
    assert (out.ename, out.evalue) == ("LabGuardError", TAMPERED + "; test not run")
    assert _records(ex) == [CellRecord("t1", 0.0, 1.0, guard_problem=TAMPERED,
                                       reason=f"LabGuardError: {TAMPERED}; test not run")]


def test_a_guard_problem_on_a_dead_kernel_restarts_it_and_checks_again(ex):
    ex.run_quiet = Kernel(checks=[TimeoutError(), _report(["m.f"])])
    restarts = []
    ex.kernel_alive = lambda index: False
    ex.restart_and_replay = lambda index, after_start: restarts.append((index, after_start))
    cell = _test_cell("t1")
    assert ex._guard_before_test(cell, 3, "t1") == (["m.f"], None)
    assert restarts == [(3, ex._install_guard)], "the new kernel gets the guard before the replay"
    assert _records(ex) == [Restart("t1")]
    assert cell.outputs == []


def test_the_guard_problem_returns_no_restored_names(ex):
    ex.run_quiet = Kernel(checks=[[], []])
    ex.kernel_alive = lambda index: True
    assert ex._guard_before_test(_test_cell(), 0, "t1") == ([], TAMPERED)


@pytest.mark.parametrize(("gid", "where"), [(None, "cell 3"), ("c3", "c3")])
def test_an_ungraded_cell_that_times_out_is_recorded_by_its_id_or_its_index(ex, runs, gid, where):
    ex._guard_installed = True
    ex.kernel_alive = lambda index: True
    runs.outputs = {3: [TIMEOUT]}
    cell = new_code_cell("while True: pass", metadata={"nbgrader": {"grade_id": gid}} if gid else {})
    ex.preprocess_cell(cell, {}, 3)
    assert _records(ex) == [CellTimeout(where)]


def test_a_graded_cell_that_times_out_is_not_also_a_cell_timeout(ex, runs):
    ex._guard_installed = True
    ex.run_quiet = Kernel(checks=[_report()])
    ex.kernel_alive = lambda index: True
    runs.outputs = {0: [TIMEOUT]}
    ex.preprocess_cell(_test_cell("t1"), {}, 0)
    assert [type(r) for r in _records(ex)] == [CellRecord]


def test_a_restart_after_a_stuck_cell_is_recorded_and_the_stuck_cell_not_trusted(ex, runs):
    ex._guard_installed = True
    ex.nb = new_notebook(cells=[new_code_cell("helper = 1")])
    starts = []
    ex.after_cell = lambda cell, index, after_start: starts.append(after_start) or True
    ex.preprocess_cell(ex.nb.cells[0], {}, 0)
    assert _records(ex) == [Restart("cell 0")] and starts == [ex._install_guard]
    assert ex.run_quiet.ran("[0](") == [], "a cell the restart cut short is not recorded as trusted"


def test_a_completed_trusted_cell_is_recorded_by_the_guard(ex, runs):
    ex._guard_installed = True
    ex.nb = new_notebook(cells=[new_code_cell("helper = 1")])
    ex.preprocess_cell(ex.nb.cells[0], {}, 0)
    assert ex.run_quiet.ran("[0](") == [f"{ex.slot}[0](['helper'], True)"]


def test_a_submission_cell_is_untrusted_before_it_runs_even_if_it_times_out(ex, runs):
    ex._guard_installed = True
    ex.kernel_alive = lambda index: True
    runs.outputs = {0: [TIMEOUT]}
    ex.nb = new_notebook(cells=[_solution_cell()])
    ex.preprocess_cell(ex.nb.cells[0], {}, 0)
    assert ex._untrusted_ran is True


class _Provisioner:
    def __init__(self, code):
        self.code = code
        self.process = self

    def poll(self):
        if isinstance(self.code, Exception):
            raise self.code
        return self.code


@pytest.mark.parametrize(("provisioner", "code"), [(_Provisioner(-9), "-9"), (None, "None"),
                                                   (_Provisioner(OSError()), "None")])
def test_a_kernel_death_is_named_with_its_exit_code_and_the_rest_graded(ex, runs, provisioner, code):
    ex._guard_installed = True
    ex.km = type("KM", (), {"provisioner": provisioner})()
    restarts = []
    ex.restart_and_replay = lambda index, after_start: restarts.append((index, after_start))
    runs.outputs = {2: DeadKernelError("died")}
    cell = _solution_cell(gid="s2")
    ex.preprocess_cell(cell, {}, 2)
    what = f"kernel died in cell s2 (exit code {code})"
    assert _records(ex) == [Died("s2", what)] and restarts == [(2, ex._install_guard)]
    assert (cell.outputs[-1].ename, cell.outputs[-1].evalue) == ("KernelDied", what)
    assert ex.kernel_dead is None


def test_a_kernel_death_without_recovery_fails_every_later_test(ex, runs):
    ex._guard_installed = True
    ex.km = type("KM", (), {"provisioner": None})()

    def restart(index, after_start):
        raise DeadKernelError("kernel stuck again after 3 restarts")

    ex.restart_and_replay = restart
    runs.outputs = {0: DeadKernelError("died")}
    ex.preprocess_cell(new_code_cell("x = 1"), {}, 0)
    dead = ("kernel died in cell 0 (exit code None); "
            "no recovery (DeadKernelError: kernel stuck again after 3 restarts)")
    assert ex.kernel_dead == dead
    later = _test_cell("t1")
    ex.preprocess_cell(new_markdown_cell("text"), {}, 1)
    ex.preprocess_cell(later, {}, 2)
    assert runs.ran == [0], "nothing runs on a kernel that could not be recovered"
    assert _records(ex) == [CellRecord("t1", 0.0, 1.0, reason=f"KernelDied: not run: {dead}",
                                       kernel_dead=dead)]


def test_a_kernel_death_in_a_markdown_position_adds_no_error_output(ex):
    ex.km = type("KM", (), {"provisioner": None})()
    ex.restart_and_replay = lambda index, after_start: None
    cell = new_markdown_cell("text")
    ex._kernel_died(cell, 0, None)
    assert "outputs" not in cell
    assert _records(ex) == [Died("cell 0", "kernel died in cell 0 (exit code None)")]


# --------------------------------------------------------------------------- nbgrader's run


def test_nbgrader_runs_the_submission_through_the_sandboxed_kernel_with_the_specs_limits(tmp_path):
    spec = _spec(tmp_path, timeout=7, iopub_timeout=3)
    c = worker.nbgrader_config(spec)
    assert c.Execute.kernel_manager_class is worker.SandboxKernelManager, "the kernel starts sandboxed"
    assert c.Autograde.autograde_preprocessors[0] is worker.SandboxExecute
    assert (c.Execute.timeout, c.Execute.iopub_timeout) == (7, 3)
    assert c.Execute.shutdown_kernel == "immediate", "a graded sandbox is killed, not waited for"
    assert c.Execute.interrupt_on_timeout is True and c.Execute.raise_on_iopub_timeout is False
    assert c.Execute.startup_timeout == 60, "a sandboxed kernel gets a minute to start"
    assert c.Execute.extra_arguments == ["--HistoryManager.hist_file=:memory:"], "no history file in the box"
    assert c.CourseDirectory.root == spec.course
    assert c.CourseDirectory.db_url == "sqlite:///" + os.path.join(spec.course, "gradebook.db")
    assert (c.CourseDirectory.course_id, c.CourseDirectory.assignment_id, c.CourseDirectory.student_id) == (
        "c", "01", "s")


def test_autograde_reports_nbgraders_final_scores(tmp_path, monkeypatch):
    """nbgrader's converter and gradebook are fakes: what autograde hands them and reports."""
    import nbgrader.api
    import nbgrader.converters
    import nbgrader.coursedir

    spec = _spec(tmp_path)
    spec.write(spec.sandbox_spec)
    started = []

    class Autograde:
        def __init__(self, coursedir, config):
            self.config = config

        def start(self):
            started.append((self.force, self.create_student, SandboxExecute_spec()))

    def SandboxExecute_spec():  # noqa: N802 - what the preprocessor sees when nbgrader runs it
        return worker.SandboxExecute.spec, worker.SandboxKernelManager.spec, worker.SandboxExecute.report.path

    class Grade:
        def __init__(self, name, auto_score, max_score):
            self.name, self.auto_score, self.max_score = name, auto_score, max_score

    class Gradebook:
        def __init__(self, url, course_id):
            assert (url, course_id) == ("sqlite:///" + os.path.join(spec.course, "gradebook.db"), "c")

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def find_submission_notebook(self, notebook, assignment, student):
            assert (notebook, assignment, student) == ("01", "01", "s")
            return type("Sub", (), {"grades": [Grade("t1", 1.0, 1.0), Grade("t2", None, 2.0)]})

    monkeypatch.setattr(nbgrader.converters, "Autograde", Autograde)
    monkeypatch.setattr(nbgrader.api, "Gradebook", Gradebook)
    monkeypatch.setattr(nbgrader.coursedir, "CourseDirectory", lambda config: type("CD", (), {
        "db_url": config.CourseDirectory.db_url}))
    monkeypatch.setattr(worker.logging, "basicConfig", lambda **kw: None)
    for cls, attr in ((worker.SandboxExecute, "spec"), (worker.SandboxExecute, "report"),
                      (worker.SandboxKernelManager, "spec")):
        monkeypatch.setattr(cls, attr, None, raising=False)
    monkeypatch.setenv("PATH", "/usr/bin")
    worker.autograde(spec.sandbox_spec)
    assert started == [(True, True, (spec, spec, spec.result))]
    assert _records(type("E", (), {"spec": spec})) == [Final({"t1": [1.0, 1.0], "t2": [0.0, 2.0]})], \
        "a cell nbgrader left unscored counts 0"
    assert os.environ["PATH"] == os.path.dirname(sys.executable) + os.pathsep + "/usr/bin", \
        "nbgrader's alembic is found in the grader's venv first"


# --------------------------------------------------------------------------- the command


@pytest.mark.parametrize("argv", [[], ["a.json", "b.json"]])
def test_the_worker_takes_exactly_one_spec(argv):
    with pytest.raises(SystemExit, match="usage: python -m lab_snippets.labs.worker SPEC.json"):
        worker.main(argv)


def test_the_worker_grades_the_spec_it_is_given(monkeypatch):
    graded = []
    monkeypatch.setattr(worker, "autograde", graded.append)
    worker.main(["spec.json"])
    assert graded == ["spec.json"]


@pytest.mark.parametrize("run_name", ["__main__", "lab_snippets.labs.worker"])
def test_only_the_worker_program_skips_rfc3987_syntax(monkeypatch, run_name):
    """Run as a program it blocks ``rfc3987_syntax`` (jsonschema's slow, unused import) and runs
    ``main``; imported, it leaves the importing process's modules alone."""
    missing = object()
    saved = sys.modules.pop("rfc3987_syntax", missing)
    monkeypatch.setattr(sys, "argv", ["worker"])  # no spec: main stops at once with its usage
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # "found in sys.modules": it is, on purpose
            if run_name == "__main__":
                with pytest.raises(SystemExit, match="usage"):
                    runpy.run_module("lab_snippets.labs.worker", run_name=run_name)
            else:
                runpy.run_module("lab_snippets.labs.worker", run_name=run_name)
        blocked = sys.modules.get("rfc3987_syntax", missing)
    finally:
        sys.modules.pop("rfc3987_syntax", None)
        if saved is not missing:
            sys.modules["rfc3987_syntax"] = saved
    assert (blocked is None) == (run_name == "__main__"), blocked


# --------------------------------------------------------------------------- Ray did not start

RAY_DOWN = new_output("error", ename="RayStartError", evalue="Ray did not start in 2 attempts: ...",
                      traceback=[])


def test_a_course_cell_whose_ray_did_not_start_is_recorded_before_any_submission_ran(ex, runs):
    ex._guard_installed = True
    ex.kernel_alive = lambda index: True
    ex.nb = new_notebook(cells=[new_code_cell("cluster = raylab.start()"), new_code_cell("x = 1")])
    runs.outputs = {0: [RAY_DOWN]}
    ex.preprocess_cell(ex.nb.cells[0], {}, 0)
    ex.preprocess_cell(ex.nb.cells[1], {}, 1)  # a later course cell that also fails is not a second
    what = "Ray did not start (Ray did not start in 2 attempts: ...)"
    assert _records(ex) == [Infrastructure("cell 0", what)]


def test_the_start_cell_running_out_of_time_is_ray_not_starting(ex, runs):
    ex._guard_installed = True
    ex.kernel_alive = lambda index: True
    ex.nb = new_notebook(cells=[new_code_cell("import ray\ncluster = raylab.start(num_cpus=2)")])
    runs.outputs = {0: [TIMEOUT]}
    ex.preprocess_cell(ex.nb.cells[0], {}, 0)
    assert [type(r) for r in _records(ex)] == [CellTimeout, Infrastructure]
    assert "the cell that starts it ran out of time" in _records(ex)[1].what


def test_after_a_submission_cell_ran_a_look_alike_error_is_the_submissions_own(ex, runs):
    """A submission cannot escape its grade by raising an error named RayStartError itself."""
    ex._guard_installed = True
    ex.kernel_alive = lambda index: True
    ex.nb = new_notebook(cells=[_solution_cell(), new_code_cell("demo(add_async)")])
    runs.outputs = {0: [RAY_DOWN], 1: [RAY_DOWN]}
    ex.preprocess_cell(ex.nb.cells[0], {}, 0)
    ex.preprocess_cell(ex.nb.cells[1], {}, 1)
    assert not any(isinstance(r, Infrastructure) for r in _records(ex)), _records(ex)


def test_the_plan_skips_what_releases_record_says_and_trims_the_setup_only_while_it_runs(ex, runs,
                                                                                       monkeypatch):
    from lab_snippets.labs import deps

    def cell(source, gid, **flags):
        return new_code_cell(source, metadata={"nbgrader": {"grade_id": gid, **flags}})

    nb = new_notebook(cells=[cell("import asyncio\nimport math\n", "code_00", locked=True),
                             cell("print(math.pi)\n", "code_01", locked=True),
                             cell("async def f():\n    await asyncio.sleep(0)\n", "f", solution=True),
                             _test_cell(source="await f()\n")])
    ex.spec = replace(ex.spec, plan=json.dumps(deps.recorded(_recorded(nb))))
    seen = {}

    def preprocess(self, nb, resources=None, km=None):
        self.nb, seen["sources"] = nb, [c.source for c in nb.cells]
        for i, c in enumerate(nb.cells):
            self.preprocess_cell(c, resources or {}, i)
        return nb, resources

    monkeypatch.setattr(worker.Execute, "preprocess", preprocess)
    ex._guard_installed = True
    ex.run_quiet.checks = [_report()]
    ex.preprocess(nb, {})
    assert seen["sources"][0] == "import asyncio\n", "the set-up ran cut to what the solution reads"
    assert nb.cells[0].source == "import asyncio\nimport math\n", "the graded notebook keeps its own source"
    assert runs.ran == [0, 2, 3], "the experiment (cell 1) is not run"


def _recorded(nb):
    from lab_snippets.labs import deps
    deps.record(nb)
    return nb

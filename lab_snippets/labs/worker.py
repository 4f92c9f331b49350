"""Trusted per-submission grading worker: ``python -m lab_snippets.labs.worker SPEC.json``.

Started by ``lab_snippets.labs.grader`` (never by students), as the grading user, in the
submission's private work folder. It runs nbgrader's ``Autograde`` converter on a throwaway
course folder that holds this one submission. The kernel it starts is wrapped by the sandbox
launcher (``lab_snippets.labs.sandbox``), so student code never runs in this process. After
every graded cell it appends one JSON line to ``spec.result``; the grader reads those lines
even if it had to kill this worker.
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    # jsonschema imports rfc3987_syntax (~1 s of grammar building) only for the "iri" format,
    # which notebooks never use; skipping it halves the worker's start-up time.
    sys.modules.setdefault("rfc3987_syntax", None)

import json
import logging
import os
import secrets

from jupyter_client.manager import AsyncKernelManager
from nbclient.exceptions import DeadKernelError
from nbformat.v4 import new_output
from nbgrader import utils
from nbgrader.preprocessors import Execute

from lab_snippets.labs import deps, guard
from lab_snippets.labs.common import failure_message, infrastructure_failure
from lab_snippets.labs.markers import defined_names
from lab_snippets.labs.recovery import RecoveringMixin
from lab_snippets.labs.spec import (
    CellRecord,
    CellTimeout,
    Died,
    Final,
    GradeSpec,
    Infrastructure,
    Record,
    Restart,
    record_line,
)


class Report:
    """The worker's side of the result file (JSON lines, appended, read by the grader)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def emit(self, record: Record) -> None:
        with open(self.path, "a") as fh:
            fh.write(record_line(record) + "\n")


class SandboxKernelManager(AsyncKernelManager):
    """Starts the kernel through the sandbox launcher, over unix sockets in the kernel's folder."""

    spec: GradeSpec  # set by ``autograde`` before nbgrader creates managers

    def __init__(self, **kw):
        super().__init__(**kw)
        box = self.spec.sandbox.box
        self.transport = "ipc"
        self.ip = os.path.join(box, "k")
        self.connection_file = os.path.join(box, "connection.json")

    def format_kernel_cmd(self, extra_arguments=None):
        cmd = super().format_kernel_cmd(extra_arguments)
        if cmd and os.path.basename(cmd[0]).startswith("python"):
            cmd[0] = sys.executable
        return [sys.executable, "-m", "lab_snippets.labs.sandbox", "kernel",
                self.spec.sandbox_spec, "--", *cmd]

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        uid = self.spec.sandbox.uid
        if uid is not None:  # the kernel must be able to read its connection file
            os.chown(self.connection_file, uid, self.spec.sandbox.gid)
        return await super()._async_launch_kernel(kernel_cmd, **kw)


def new_slot() -> str:
    """A fresh random name for the guard's slot in the kernel (one per worker process)."""
    return "_lab_" + secrets.token_hex(6)


class SandboxExecute(RecoveringMixin, Execute):
    """nbgrader's Execute, plus: the guard, an output cap, stuck/dead kernel recovery."""

    spec: GradeSpec  # set by ``autograde``
    report: Report
    slot = new_slot()
    kernel_dead = None
    _chars = 0
    _capped = False
    _guard_installed = False
    _untrusted_ran = False  # a submission cell ran since the guard's snapshots last held
    _submission_started = False  # a submission cell has run (or begun to) in this notebook
    infrastructure = None  # what failed in a course cell before that (common.infrastructure_failure)
    plan = deps.Plan()  # code cells not run or run trimmed: what the grade does not need

    def preprocess(self, nb, resources=None, km=None):
        """Plan which cells run (``deps.plan`` with release's record, on the notebook as nbgrader
        restored it: locked cells and hidden tests from the instructor version), then run them;
        a trimmed cell keeps its own source in the graded notebook."""
        self.plan = deps.plan(nb, json.loads(self.spec.plan or "{}"))
        whole = {i: nb.cells[i].source for i in self.plan.trimmed}
        for i, source in self.plan.trimmed.items():
            nb.cells[i].source = source
        try:
            return super().preprocess(nb, resources, km)
        finally:
            for i, source in whole.items():
                nb.cells[i].source = source

    # ----- the guard

    def _run_hidden(self, source, index):
        cell = self.run_quiet(source, index)
        text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        errs = [o for o in cell.outputs if o.output_type == "error"]
        return text, errs

    def _guard_check(self, index):
        """(what the guard restored, None) or (None, why there is no valid report)."""
        for _attempt in range(2):  # retry once: a report can be lost on a loaded machine
            try:
                text, errs = self._run_hidden(f"{self.slot}[1]()", index)
            except DeadKernelError:
                raise
            except Exception as exc:  # timeout etc.
                return None, f"guard did not run ({type(exc).__name__})"
            for line in text.splitlines():
                parts = line.split(" ", 2)
                if len(parts) == 3 and parts[0] == "LAB-GUARD" and parts[1] == self.spec.nonce \
                        and not errs:
                    self._untrusted_ran = False  # the check put the snapshots back
                    return json.loads(parts[2]), None
        return None, "guard cell was tampered with (no valid guard report)"

    def _install_guard(self, index):
        cell = self.run_quiet(guard.injection(self.spec.nonce, self.slot), index)
        if any(o.output_type == "error" for o in cell.outputs):
            raise RuntimeError("could not install the grading guard")
        self._untrusted_ran = False

    def after_replay(self, index):
        cell = self.nb.cells[index]
        if utils.is_solution(cell):
            self._untrusted_ran = True
            return
        # a trusted cell: remember what it defined; with no submission cell since the snapshots
        # held, what it changed in the watched modules is trusted too (guard.Guard.record)
        names = [n for n in defined_names(cell.source) if n not in self.spec.solution_names]
        if names or not self._untrusted_ran:
            self._run_hidden(f"{self.slot}[0]({names!r}, {not self._untrusted_ran!r})", index)

    # ----- output cap

    def output(self, outs, msg, display_id, cell_index):
        content = msg.get("content", {})
        size = len(json.dumps(content)) if msg.get("msg_type") != "status" else 0
        self._chars += size
        cap = self.spec.max_output_chars
        if self._chars > cap:
            if not self._capped:
                self._capped = True
                outs.append(new_output("stream", name="stdout",
                                       text=f"\n[output truncated after {cap} chars]\n"))
            if msg.get("msg_type") != "error":
                return None
        return super().output(outs, msg, display_id, cell_index)

    # ----- one cell

    @staticmethod
    def _fail(cell, ename, evalue):
        cell.outputs.append(new_output("error", ename=ename, evalue=evalue,
                                       traceback=[f"{ename}: {evalue}"]))

    def _guard_before_test(self, cell, index, gid):
        """Run the guard before a test; return (restored, problem). A problem: the test is not run."""
        restored, problem = self._guard_check(index)
        if problem and not self.kernel_alive(index):
            self.restart_and_replay(index, self._install_guard)
            self.report.emit(Restart(gid))
            restored, problem = self._guard_check(index)
        if problem:
            cell.outputs = []
            self._fail(cell, "LabGuardError", problem + "; test not run")
        return restored or [], problem

    def _run_code(self, cell, resources, index, gid, grade):
        cell, resources = super().preprocess_cell(cell, resources, index)
        where = gid or f"cell {index}"
        if not grade and self.timed_out(cell):
            self.report.emit(CellTimeout(where))
        if not self._submission_started and self.infrastructure is None:
            self.infrastructure = infrastructure_failure(cell)
            if self.infrastructure:
                self.report.emit(Infrastructure(where, self.infrastructure))
        if self.after_cell(cell, index, self._install_guard):
            self.report.emit(Restart(where))
        elif not self.timed_out(cell):
            self.after_replay(index)
        return cell, resources

    def _kernel_died(self, cell, index, gid):
        code = None
        try:
            code = self.km.provisioner.process.poll() if self.km.provisioner else None
        except Exception:
            pass
        what = f"kernel died in cell {gid or index} (exit code {code})"
        if cell.cell_type == "code":
            self._fail(cell, "KernelDied", what)
        try:  # start a fresh kernel, replay the completed cells, grade the rest
            self.restart_and_replay(index, self._install_guard)
            self.report.emit(Died(gid or f"cell {index}", what))
        except Exception as exc:
            self.kernel_dead = f"{what}; no recovery ({type(exc).__name__}: {exc})"

    def preprocess_cell(self, cell, resources, index):
        self._chars, self._capped = 0, False
        grade = utils.is_grade(cell) and cell.cell_type == "code"
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        restored, problem = [], None
        if cell.cell_type == "code" and index in self.plan.skip:
            cell.outputs = []
            return cell, resources
        if self.kernel_dead:
            if cell.cell_type == "code":
                cell.outputs = []
                self._fail(cell, "KernelDied", f"not run: {self.kernel_dead}")
            self._emit(cell, gid, grade, restored, problem)
            return cell, resources
        try:
            if not self._guard_installed:
                self._guard_installed = True
                self._install_guard(index)
            if grade:
                restored, problem = self._guard_before_test(cell, index, gid)
                if problem:
                    self._emit(cell, gid, grade, restored, problem)
                    return cell, resources
            if cell.cell_type == "code":
                if utils.is_solution(cell):  # before it runs: a cell that times out counts too
                    self._untrusted_ran = self._submission_started = True
                cell, resources = self._run_code(cell, resources, index, gid, grade)
        except DeadKernelError:
            self._kernel_died(cell, index, gid)
        self._emit(cell, gid, grade, restored, problem)
        return cell, resources

    def _emit(self, cell, gid, grade, restored, problem):
        if not grade:
            return
        score, max_score = utils.determine_grade(cell)
        err = next((o for o in cell.outputs if o.output_type == "error"), None)
        timed_out = bool(err and err.get("ename") == "CellTimeoutError")
        reason = failure_message(cell.outputs) or ""
        if not reason and score is not None and score < max_score:
            reason = "partial credit"
        self.report.emit(CellRecord(grade_id=gid, score=score or 0.0, max_score=max_score,
                                    timed_out=timed_out, restored=tuple(restored),
                                    guard_problem=problem, reason=reason,
                                    kernel_dead=self.kernel_dead))


def nbgrader_config(spec: GradeSpec):
    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from nbgrader.preprocessors import (
        AssignLatePenalties,
        CheckCellMetadata,
        IgnorePattern,
        LimitOutput,
        SaveAutoGrades,
    )
    from traitlets.config import Config
    c = Config()
    c.CourseDirectory.root = spec.course
    c.CourseDirectory.course_id = spec.course_id
    c.CourseDirectory.db_url = "sqlite:///" + os.path.join(spec.course, "gradebook.db")
    c.CourseDirectory.assignment_id = spec.assignment
    c.CourseDirectory.student_id = spec.student
    c.Autograde.autograde_preprocessors = [
        SandboxExecute, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades,
        AssignLatePenalties, CheckCellMetadata]
    c.Execute.timeout = int(spec.timeout)
    c.Execute.raise_on_iopub_timeout = False
    c.Execute.interrupt_on_timeout = True
    c.Execute.iopub_timeout = int(spec.iopub_timeout)
    c.Execute.startup_timeout = 60
    # Once the last cell ran, nothing the kernel does counts: kill the sandbox (SIGKILL to the
    # launcher's process group, bwrap; its PID namespace takes every process of the submission
    # with it) instead of a shutdown request and the wait for the kernel to exit by itself.
    c.Execute.shutdown_kernel = "immediate"
    c.Execute.kernel_manager_class = SandboxKernelManager
    c.Execute.extra_arguments = ["--HistoryManager.hist_file=:memory:"]
    return c


def autograde(spec_path: str) -> None:
    spec = GradeSpec.read(spec_path)
    bindir = os.path.dirname(sys.executable)  # nbgrader shells out to alembic
    os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
    from nbgrader.api import Gradebook
    from nbgrader.converters import Autograde
    from nbgrader.coursedir import CourseDirectory
    logging.basicConfig(level=logging.INFO, format="%(asctime)s [%(levelname)s] %(message)s")
    SandboxKernelManager.spec = SandboxExecute.spec = spec
    SandboxExecute.report = Report(spec.result)
    c = nbgrader_config(spec)
    coursedir = CourseDirectory(config=c)
    app = Autograde(coursedir=coursedir, config=c)
    app.force = True
    app.create_student = True
    app.start()
    scores: dict[str, list[float]] = {}
    with Gradebook(coursedir.db_url, spec.course_id) as gb:
        sub = gb.find_submission_notebook(spec.notebook, spec.assignment, spec.student)
        for g in sub.grades:
            scores[g.name] = [g.auto_score or 0.0, g.max_score]
    Report(spec.result).emit(Final(scores))


def main(argv=None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) != 1:
        raise SystemExit("usage: python -m lab_snippets.labs.worker SPEC.json")
    autograde(argv[0])


if __name__ == "__main__":
    main()

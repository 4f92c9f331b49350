"""Unit tests of ``labs.grader``'s trusted orchestration, without a sandbox or a kernel.

What runs for real: the gradebook (nbgrader's, in a temporary course), the enumeration of the
submissions folder, the throwaway course, the worker process's wall-clock limit (over a stand-in
process), the CSV and the table. What is faked: the worker's grading (``_run_worker`` writes the
result records a worker would) and the sandbox's detection, which starts bubblewrap.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from lab_snippets.labs import grader, sandbox
from lab_snippets.labs.common import COURSE_ID, REPO, LabError
from lab_snippets.labs.grader import Options, Row
from lab_snippets.labs.spec import CellRecord, Final, GradeSpec, record_line

A, B = "01_demo", "02_next"
CELLS = {A: {"t1": 1.0, "t2": 2.0}, B: {"t1": 1.0}}
OPTS = Options(timeout=7, iopub_timeout=3, max_procs=99)
VALID = json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


@pytest.fixture(scope="module")
def master(tmp_path_factory):
    """A released course: the gradebook with two assignments, and their instructor notebooks."""
    import nbgrader.api
    from nbgrader.api import Gradebook

    course = tmp_path_factory.mktemp("master")
    with pytest.MonkeyPatch.context() as mp:
        # a new gradebook asks nbgrader's alembic (a command, seconds to start) for the version to
        # stamp it with; nothing here migrates it, so any stamp will do
        mp.setattr(nbgrader.api, "get_alembic_version", lambda: "unit-test")
        with Gradebook("sqlite:///" + str(course / "gradebook.db"), COURSE_ID) as gb:
            for a, cells in CELLS.items():
                gb.add_assignment(a)
                gb.add_notebook(a, a)
                for gid, points in cells.items():
                    gb.add_grade_cell(gid, a, a, max_score=points, cell_type="code")
    for a in CELLS:
        (course / "source" / a).mkdir(parents=True)
        nb = new_notebook(cells=[
            new_code_cell("import asyncio\nx = 1"),
            new_code_cell("async def add_async(a, b):\n    return a + b\nhelper2 = add_async",
                          metadata={"nbgrader": {"solution": True, "grade": False, "grade_id": "s1"}}),
            new_code_cell("assert True", metadata={"nbgrader": {"grade": True, "grade_id": "t1",
                                                                "points": 1, "solution": False}})])
        nbformat.write(nb, course / "source" / a / f"{a}.ipynb")
    return course


@pytest.fixture
def course(master, tmp_path):
    return Path(shutil.copytree(master, tmp_path / "course"))


def _scores(course, student, assignment):
    from nbgrader.api import Gradebook

    with Gradebook("sqlite:///" + str(course / "gradebook.db"), COURSE_ID) as gb:
        return {gid: (gb.find_grade(gid, assignment, assignment, student).auto_score,
                      gb.find_grade(gid, assignment, assignment, student).needs_manual_grade)
                for gid in CELLS[assignment]}


# --------------------------------------------------------------------------- the gradebook


def test_the_assignments_are_read_from_the_released_gradebook(course, tmp_path):
    assert grader._assignments(course) == {A: (A, CELLS[A]), B: (B, CELLS[B])}
    with pytest.raises(LabError, match="gradebook.db not found: run `python -m lab_snippets.labs release`"):
        grader._assignments(tmp_path / "nothing")


def test_each_backup_of_the_gradebook_is_a_private_copy_under_a_new_name(course, monkeypatch):
    calls = []

    def strftime(fmt):
        calls.append(fmt)
        assert len(calls) < 50, "the backup keeps looking for a free name"
        return fmt.replace("%Y%m%d-%H%M%S", "20261201-120000")

    monkeypatch.setattr(grader, "time", SimpleNamespace(strftime=strftime))
    made = [grader._backup_gradebook(course) for _ in range(3)]  # all three within one second
    assert [p.name for p in made] == ["gradebook-20261201-120000.db", "gradebook-20261201-120000-1.db",
                                      "gradebook-20261201-120000-2.db"], "no backup overwrites another"
    assert all(p.parent == course / "backups" for p in made)
    assert {stat.S_IMODE(p.stat().st_mode) for p in made} == {0o600}, "grades are readable by the owner only"
    for p in made:
        with sqlite3.connect(p) as db:
            assert sorted(db.execute("SELECT name FROM assignment")) == [(A,), (B,)]


def test_the_gradebook_gets_each_gradable_rows_scores_and_zero_for_the_rest(course):
    rows = [Row("alice", A, cells={"t1": 1.0, "t2": 0.5}), Row("bob", A, status="invalid"),
            Row("bob", "-", status="invalid"), Row("carol", "99_unknown", status="invalid")]
    grader._write_gradebook(course, rows, grader._assignments(course))
    assert _scores(course, "alice", A) == {"t1": (1.0, False), "t2": (0.5, False)}
    assert _scores(course, "bob", A) == {"t1": (0.0, False), "t2": (0.0, False)}, \
        "a submission that could not be graded scores nothing, not full marks"
    with sqlite3.connect(course / "gradebook.db") as db:
        assert sorted(db.execute("SELECT id FROM student")) == [("alice",), ("bob",)]


# --------------------------------------------------------------------------- the submissions


def _tree(root, layout):
    """``layout``: path -> text, bytes, ``dir``, or ``("link", target)``."""
    for rel, what in layout.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if what == "dir":
            path.mkdir(exist_ok=True)
        elif isinstance(what, tuple):
            path.symlink_to(what[1])
        elif isinstance(what, bytes):
            path.write_bytes(what)
        else:
            path.write_text(what)
    return root


def test_every_student_folder_gets_a_row_and_only_a_regular_notebook_is_gradable(tmp_path, monkeypatch):
    monkeypatch.setattr(grader, "MAX_SUBMISSION_BYTES", 1000)
    secret = tmp_path / "instructor.ipynb"
    secret.write_text(VALID)
    subs = _tree(tmp_path / "subs", {
        "alice/01_demo/01_demo.ipynb": VALID,
        "alice/02_next/wrong_name.ipynb": VALID,
        "alice/99_x": "dir",
        "bob/01_demo": "dir",
        "bob/02_next": "a file",
        "carol/01_demo/01_demo.ipynb": "{ not json",
        "carol/02_next/02_next.ipynb": VALID,
        "dave/01_demo/01_demo.ipynb": ("link", str(secret)),
        "dave/02_next/02_next.ipynb": "dir",
        "empty": "dir",
        "erin/01_demo/01_demo.ipynb": ("link", str(tmp_path / "gone.ipynb")),
        "erin/02_next/02_next.ipynb": json.dumps({"cells": [], "nbformat": 3}),
        "frank/01_demo/01_demo.ipynb": b'{"cells": ["\xff"]}',
        "frank/02_next/02_next.ipynb": "[]",
        "gina/01_demo/01_demo.ipynb": VALID + " " * 1000,
        "gina/02_next": ("link", str(tmp_path / "subs" / "carol" / "02_next")),
        "linked": ("link", str(tmp_path / "subs" / "alice")),
        "stray.txt": "not a folder",
    })
    rows = grader._enumerate(subs, {a: (a, c) for a, c in CELLS.items()})
    got = [(r.student, r.assignment, r.status, r.reason[:60], r.max_score, r.path) for r in rows]
    assert got == [
        ("alice", A, "ok", "", 3.0, subs / "alice" / A / f"{A}.ipynb"),
        ("alice", B, "invalid", "missing notebook 02_next.ipynb (found: wrong_name.ipynb)", 1.0, None),
        ("alice", "99_x", "invalid", "unknown assignment '99_x' (known: 01_demo, 02_next)", 0.0, None),
        ("bob", A, "invalid", "missing notebook 01_demo.ipynb (folder empty)", 3.0, None),
        ("bob", B, "invalid", "02_next is not a folder", 1.0, None),
        ("carol", A, "invalid", "malformed notebook 01_demo.ipynb: Expecting property name en", 3.0, None),
        ("carol", B, "ok", "", 1.0, subs / "carol" / B / f"{B}.ipynb"),
        ("dave", A, "invalid", "01_demo.ipynb is not a regular file", 3.0, None),
        ("dave", B, "invalid", "02_next.ipynb is not a regular file", 1.0, None),
        ("empty", "-", "invalid", "empty student folder", 0.0, None),
        ("erin", A, "invalid", "01_demo.ipynb is not a regular file", 3.0, None),
        ("erin", B, "invalid", "malformed notebook 02_next.ipynb: not an nbformat 4 notebook", 1.0, None),
        ("frank", A, "invalid", "malformed notebook 01_demo.ipynb: 'utf-8' codec can't decode", 3.0, None),
        ("frank", B, "invalid", "malformed notebook 02_next.ipynb: not an nbformat 4 notebook", 1.0, None),
        ("gina", A, "invalid", "01_demo.ipynb is larger than 20 MB", 3.0, None),
        ("gina", B, "invalid", "02_next is not a folder", 1.0, None),
        ("linked", "-", "invalid", "stray entry 'linked' (expected a student folder)", 0.0, None),
        ("stray.txt", "-", "invalid", "stray entry 'stray.txt' (expected a student folder)", 0.0, None),
    ]


@pytest.mark.parametrize(("limit", "status"), [(len(VALID), "ok"), (len(VALID) - 1, "invalid")])
def test_a_notebook_of_exactly_the_size_limit_is_graded(tmp_path, monkeypatch, limit, status):
    monkeypatch.setattr(grader, "MAX_SUBMISSION_BYTES", limit)
    subs = _tree(tmp_path / "subs", {"alice/01_demo/01_demo.ipynb": VALID})
    [row] = grader._enumerate(subs, {A: (A, CELLS[A])})
    assert row.status == status, row.reason


def test_no_known_assignment_is_said_so(tmp_path):
    subs = _tree(tmp_path / "subs", {"alice/01_demo": "dir"})
    [row] = grader._enumerate(subs, {})
    assert row.reason == "unknown assignment '01_demo' (known: none)"


def test_a_notebook_nested_too_deep_to_parse_is_malformed_and_the_rest_still_graded(tmp_path):
    """``[[[[...`` makes ``json.loads`` raise RecursionError, which is no ValueError: it used to
    escape ``_enumerate`` and stop the whole batch before any submission was graded."""
    subs = _tree(tmp_path / "subs", {"alice/01_demo/01_demo.ipynb": "[" * 100_000,
                                     "bob/01_demo/01_demo.ipynb": VALID})
    alice, bob = grader._enumerate(subs, {A: (A, CELLS[A])})
    assert (alice.status, alice.path) == ("invalid", None)
    # the reason carries the parser's own words: "maximum recursion depth exceeded" up to 3.13,
    # "Stack overflow (used 8152 kB) while decoding a JSON array ..." on 3.14.8
    assert alice.reason.startswith("malformed notebook 01_demo.ipynb: ")
    assert len(alice.reason) <= len("malformed notebook 01_demo.ipynb: ") + 120
    assert bob.path is not None


def test_the_reference_solutions_names_are_those_its_solution_cells_bind(course):
    assert grader._solution_names(course, A, A) == ("add_async", "helper2")


def test_the_plan_the_worker_gets_is_releases_record_in_the_instructor_version(course):
    import nbformat

    from lab_snippets.labs import deps
    path = course / "source" / A / f"{A}.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.metadata[deps.META_KEY] = {"skippable": {"code_09": "d1"}, "trimmed": {}}
    nbformat.write(nb, path)
    assert json.loads(grader._plan(course, A, A)) == {"skippable": {"code_09": "d1"}, "trimmed": {}}


def test_the_throwaway_course_holds_the_submission_the_instructor_version_and_gradebook(course, tmp_path):
    submitted = tmp_path / "alice.ipynb"
    submitted.write_text(VALID)
    work = tmp_path / "work"
    work.mkdir()
    made = grader._throwaway_course(Row("alice", A, path=submitted), course, A, work)
    assert made == work / "course"
    source = Path("source") / A / f"{A}.ipynb"
    assert (made / source).read_bytes() == (course / source).read_bytes()
    assert (made / "submitted" / "alice" / A / f"{A}.ipynb").read_text() == VALID
    assert sorted(p.relative_to(made).as_posix() for p in made.rglob("*") if p.is_file()) == [
        "gradebook.db", f"source/{A}/{A}.ipynb", f"submitted/alice/{A}/{A}.ipynb"], "this submission only"
    assert grader._assignments(made) == grader._assignments(course)


# --------------------------------------------------------------------------- the worker process

CHILD = """
import pathlib, subprocess, sys, time
work = pathlib.Path.cwd()
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
(work / "grandchild.pid").write_text(str(grandchild.pid))
print("worker started", flush=True)
time.sleep(float(sys.argv[1]))
(work / "finished").write_text("the limit did not stop me")
grandchild.kill()
"""


@pytest.fixture
def worker_run(monkeypatch, tmp_path):
    """``_run_worker`` with the worker's command line swapped for ``CHILD`` (the rest as it is)."""
    real, started = subprocess.Popen, []

    def popen(cmd, **kw):
        started.append((cmd, kw))
        return real([sys.executable, "-c", CHILD, str(started_for.sleep)], **kw)

    started_for = SimpleNamespace(sleep=0.0)
    monkeypatch.setattr(grader.subprocess, "Popen", popen)
    work = tmp_path / "work"
    work.mkdir()

    def run(sleep, limit):
        started_for.sleep = sleep
        return grader._run_worker(work / "spec.json", work, Options(submission_timeout=limit))

    return SimpleNamespace(run=run, started=started, work=work)


def _gone(pid):
    import psutil

    try:
        proc = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return True
    gone, _ = psutil.wait_procs([proc], timeout=10)
    return bool(gone) or proc.status() == psutil.STATUS_ZOMBIE


def test_a_worker_that_finishes_is_not_killed_and_its_output_is_logged(worker_run):
    assert worker_run.run(sleep=0, limit=60) is False
    [(cmd, kw)] = worker_run.started
    assert cmd == [sys.executable, "-m", "lab_snippets.labs.worker", str(worker_run.work / "spec.json")]
    assert kw["cwd"] == str(worker_run.work) and kw["start_new_session"] is True
    assert kw["stdin"] == subprocess.DEVNULL and kw["stderr"] == subprocess.STDOUT
    assert kw["env"]["PYTHONPATH"] == str(REPO) and kw["env"]["PYTHONDONTWRITEBYTECODE"] == "1"
    assert (worker_run.work / "worker.log").read_text() == "worker started\n"
    assert (worker_run.work / "finished").exists()


def test_a_worker_past_the_wall_clock_limit_is_killed_with_everything_it_started(worker_run):
    """The stand-in would write ``finished`` after 20 s; the limit is 3 s (time enough, on a loaded
    machine, for it to start its grandchild first)."""
    assert worker_run.run(sleep=20, limit=3) is True
    assert not (worker_run.work / "finished").exists(), "the worker ran on past its limit"
    assert _gone(int((worker_run.work / "grandchild.pid").read_text())), \
        "a process the worker started outlived the grading"


# --------------------------------------------------------------------------- one submission


@pytest.fixture
def one(course, tmp_path, monkeypatch):
    """``_grade_one`` over a fake worker, which checks what it is handed and writes its records."""
    monkeypatch.delenv("LABS_KEEP_TMP", raising=False)
    submitted = tmp_path / "alice.ipynb"
    submitted.write_text(VALID)
    seen = SimpleNamespace(specs=[], modes=[], killed=[], fail=None, leftovers=0, chown=[])

    def run_worker(spec_path, work, opts, zygote=None):
        spec = GradeSpec.read(spec_path)
        seen.specs.append((spec, spec_path, work))
        box = Path(spec.sandbox.box)
        seen.modes.append({p: stat.S_IMODE(p.stat().st_mode) for p in (work.parent, work, box)})
        if seen.fail:
            raise seen.fail
        Path(spec.result).write_text("".join(record_line(r) + "\n" for r in [
            CellRecord("t1", 1.0, 1.0), CellRecord("t2", 0.0, 2.0, reason="out of order"),
            Final({"t1": [1.0, 1.0], "t2": [0.0, 2.0]})]))
        graded = Path(spec.course) / "autograded" / spec.student / spec.assignment / f"{spec.notebook}.ipynb"
        graded.parent.mkdir(parents=True)
        graded.write_text("graded " + spec.nonce)
        return False

    monkeypatch.setattr(grader, "_run_worker", run_worker)
    monkeypatch.setattr(sandbox, "alloc_uid", lambda: 1_900_042)
    monkeypatch.setattr(sandbox, "kill_uid", lambda uid: seen.killed.append(uid) or seen.leftovers)
    monkeypatch.setattr(grader.os, "chown", lambda *a: seen.chown.append(a))

    def grade(root=False, opts=OPTS):
        row = Row("alice", A, max_score=3.0, path=submitted)
        return grader._grade_one(row, course, grader._assignments(course),
                                 sandbox.Isolation(root=root, description="test"), ["/srv/hidden"], opts)

    seen.grade = grade
    return seen


def test_a_submission_is_graded_from_the_workers_records_in_a_private_folder(one, course):
    row = one.grade()
    assert (row.status, row.score, row.cells) == ("ok", 1.0, {"t1": 1.0, "t2": 0.0}), row.reason
    assert row.reason == "1/2 tests passed; failed t2: out of order"
    [(spec, spec_path, work)] = one.specs
    assert (spec.course, spec.result, spec.sandbox_spec) == (
        str(work / "course"), str(work / "result.jsonl"), str(spec_path))
    assert spec_path == work / "spec.json"
    assert (spec.course_id, spec.assignment, spec.student, spec.notebook) == (COURSE_ID, A, "alice", A)
    assert (spec.timeout, spec.iopub_timeout, spec.sandbox.limits.processes) == (7, 3, 99)
    assert spec.solution_names == ("add_async", "helper2")
    assert spec.sandbox.box == str(work.parent / "box") and spec.sandbox.uid is None
    assert spec.sandbox.hide == (str(Path("/srv/hidden").resolve()),)
    assert len(spec.nonce) == 32 and int(spec.nonce, 16) >= 0
    [modes] = one.modes
    assert modes == {work.parent: 0o711, work: 0o700, Path(spec.sandbox.box): 0o700}, \
        "the work folder and the kernel's box are private; their parent can only be passed through"
    assert not work.parent.exists(), "the throwaway folders are removed"
    graded = course / "autograded" / "alice" / A / f"{A}.ipynb"
    assert graded.read_text() == "graded " + spec.nonce, "the graded notebook is kept in the course"
    assert one.killed == [] and one.chown == []


def test_each_grading_gets_its_own_nonce(one):
    one.grade()
    one.grade()
    assert one.specs[0][0].nonce != one.specs[1][0].nonce


def test_as_root_each_submission_gets_its_own_uid_and_leftover_processes_are_reported(one):
    one.leftovers = 2
    row = one.grade(root=True)
    [(spec, _, work)] = one.specs
    assert (spec.sandbox.uid, spec.sandbox.gid) == (1_900_042, 1_900_042)
    assert one.chown == [(work.parent / "box", 1_900_042, 1_900_042)], "the kernel's uid owns its box"
    assert one.killed == [1_900_042]
    assert row.reason.endswith("; 2 processes survived cleanup"), row.reason


def test_a_grader_error_is_the_rows_error_and_the_uids_processes_are_killed(one):
    one.fail = RuntimeError("boom")
    row = one.grade(root=True)
    assert (row.status, row.reason) == ("error", "grader error: RuntimeError: boom")
    assert one.killed == [1_900_042]
    assert not one.specs[0][2].parent.exists()


# --------------------------------------------------------------------------- the whole run


def test_grade_writes_the_csv_the_gradebook_and_the_table(course, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", os.environ.get("PATH", ""))
    subs = _tree(tmp_path / "subs", {"alice/01_demo/01_demo.ipynb": VALID, "bob/01_demo": "dir",
                                     "stray.txt": "x"})
    graded = []

    def grade_one(row, course_dir, assignments, isolation, hide, opts, zygote=None):
        graded.append((row.student, course_dir, isolation.description, list(hide), opts))
        row.cells, row.score, row.reason = {"t1": 1.0, "t2": 0.5}, 1.5, "1/2 tests passed"
        return row

    monkeypatch.setattr(sandbox, "detect_isolation",
                        lambda hide, opts: sandbox.Isolation(root=False, description="bwrap (test)"))
    monkeypatch.setattr(grader, "_grade_one", grade_one)
    out, lines = tmp_path / "out" / "grades.csv", []
    rows = grader.grade(subs, out, course, Options(jobs=2), hide=["/srv/extra"], log=lines.append)
    assert [(r.student, r.status) for r in rows] == [("alice", "ok"), ("bob", "invalid"),
                                                     ("stray.txt", "invalid")]
    assert graded == [("alice", course.resolve(), "bwrap (test)",
                       [REPO, course.resolve(), subs.resolve(), Path("/srv/extra")], Options(jobs=2))], \
        "the sandbox hides the repository, the course and every submission"
    with open(out, newline="") as fh:
        assert list(csv.reader(fh)) == [
            ["student", "assignment", "score", "max_score", "status", "reason"],
            ["alice", A, "1.5", "3", "ok", "1/2 tests passed"],
            ["bob", A, "0", "3", "invalid", "missing notebook 01_demo.ipynb (folder empty)"],
            ["stray.txt", "-", "0", "0", "invalid", "stray entry 'stray.txt' (expected a student folder)"]]
    assert _scores(course, "alice", A) == {"t1": (1.0, False), "t2": (0.5, False)}
    assert lines[0] == "isolation: bwrap (test)"
    assert lines[1].startswith(f"gradebook backed up to {course.resolve() / 'backups'}/gradebook-")
    assert lines[2] == ("grading 1 submission(s) (0 already in the journal, 2 not gradable), 2 at a "
                        "time, cell timeout 30s, submission limit 300s")
    assert lines[3].startswith("progress: 1/1 graded, 0 not ok, slowest alice/01_demo ")
    assert lines[4].startswith("student") and len(lines) == 9
    assert lines[-1].startswith("3 row(s) in ") and lines[-1].endswith(f"s -> {out}")
    assert float(lines[-1].split(" in ")[1].split("s -> ")[0]) >= 0


def test_grade_refuses_a_submissions_path_that_is_not_a_folder(course, tmp_path):
    (tmp_path / "subs.zip").write_text("x")
    with pytest.raises(LabError, match="subs.zip is not a folder"):
        grader.grade(tmp_path / "subs.zip", tmp_path / "g.csv", course, log=lambda s: None)


# --------------------------------------------------------------------------- the table


def _table(rows):
    lines = []
    grader._print_table(rows, lines.append)
    return lines


def test_the_table_lines_up_under_its_header_and_cuts_long_reasons():
    rows = [Row("s1", A, score=1.5, max_score=3.0, reason="short", seconds=2.25),
            Row("s2", "-", status="invalid", reason="r" * 100),
            Row("s3", "-", status="invalid", reason="r" * 101)]
    header, *lines = _table(rows)
    assert header.split() == ["student", "assignment", "score", "status", "time", "reason"]
    for word, cell in [("assignment", A), ("status", "ok"), ("reason", "short")]:
        assert header.index(word) == lines[0].index(cell), f"{word} is not above its column"
    assert header.index("score") + len("score") == lines[0].index("1.5/3") + len("1.5/3"), "right-aligned"
    assert header.index("assignment") == len("student") + 2, "the student column is at least 7 wide"
    assert header.index("score") == header.index("assignment") + 10 + 2 + 9 - len("score"), \
        "the assignment column is at least 10 wide"
    assert lines[0].endswith("  2.2s  short") or lines[0].endswith("  2.3s  short")
    assert lines[1].endswith("  0.0s  " + "r" * 100), "a row never graded took no time; 100 characters fit"
    assert lines[2].endswith("  " + "r" * 97 + "..."), "a longer reason is cut to 100 characters"


def test_a_long_name_widens_its_column():
    header, line = _table([Row("a-very-long-student-name", "a-long-assignment-name")])
    width = len("a-very-long-student-name")
    assert header.index("assignment") == line.index("a-long-assignment-name") == width + 2
    assert header.index("status") == line.index("ok")


def test_a_new_row_is_an_ungraded_ok_row_that_took_no_time():
    row = Row("s", "a")
    assert (row.score, row.max_score, row.status, row.reason, row.seconds, row.path, row.cells) == (
        0.0, 0.0, "ok", "", 0.0, None, {})


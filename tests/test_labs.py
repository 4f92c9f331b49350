"""Graded labs: marker expansion, release, validate, and safe grading of hostile submissions.

One batch grades honest and hostile submissions side by side (module-scoped fixture), and
each test checks one row.  Small timeouts keep it fast: per cell 3 s, per submission 60 s.
"""

from __future__ import annotations

import copy
import csv
import json
import os
import sqlite3
import tempfile
from pathlib import Path

import nbformat
import psutil
import pytest

from lab_snippets import labs
from lab_snippets.book.chapters import missing_package

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "labs" / "90_fixture_lab.py"
ASSIGNMENT = FIXTURE.stem
MAX = 5.0  # 1 + 1 (exercise 1) + 2 + 1 (exercise 2)
SANDBOX_UIDS = range(1_900_000, 2_000_000)
# The batch (26 submissions, several of which hit their timeouts on purpose) is graded in the
# first test's setup; on a loaded 2-core machine that alone has taken over 5 minutes.
pytestmark = pytest.mark.timeout(1200)


def _sandbox_problem():
    """Why no submission can be graded here (None: the bubblewrap sandbox works)."""
    try:
        labs.detect_isolation([REPO], labs.Options())
    except labs.LabError as exc:
        return str(exc)
    return None


SANDBOX_PROBLEM = _sandbox_problem()
# Hostile submissions run only sandboxed: where the sandbox cannot be built, every test that
# grades is skipped (``grade`` itself refuses to run then), never run without it.
needs_sandbox = pytest.mark.skipif(SANDBOX_PROBLEM is not None,
                                   reason=f"no grading sandbox here: {SANDBOX_PROBLEM}")


def _sandbox_processes(grade_tmp):
    """Processes of this run's submissions still alive: the worker's, bwrap's and the kernel's
    command lines name their throwaway folder under ``grade_tmp`` (other grading runs on the
    machine use other folders)."""
    left = []
    for p in psutil.process_iter(["cmdline", "status"]):
        try:
            if p.info["status"] != psutil.STATUS_ZOMBIE and any(
                    str(grade_tmp) in a for a in p.info["cmdline"] or []):
                left.append(p.pid)
        except psutil.Error:
            pass
    return left


@pytest.fixture(scope="module")
def grade_tmp(tmp_path_factory):
    """The folder ``grade`` makes its throwaway folders in (``tempfile.tempdir``) for this module."""
    folder = tmp_path_factory.mktemp("grade_tmp")
    os.chmod(folder, 0o711)
    mp = pytest.MonkeyPatch()
    mp.setattr(tempfile, "tempdir", str(folder))
    yield folder
    mp.undo()

EX1_OK = "async def add_async(a, b):\n    await asyncio.sleep(0)\n    return a + b\n"
EX2_OK = ("async def gather_squares(xs):\n"
          "    return list(await asyncio.gather(*(asyncio.sleep(0, x * x) for x in xs)))\n")


def _ex1(body, prelude=""):
    """Exercise-1 solution cell whose function body is ``body`` (indented for you)."""
    inner = "\n".join("    " + ln for ln in body.strip("\n").splitlines())
    return f"{prelude}async def add_async(a, b):\n{inner}\n"


# kind -> (exercise-1 cell, expected score, expected status or None for "don't care")
HOSTILE = {
    "hang_event": (  # top-level await that never finishes: that cell times out
        "await asyncio.Event().wait()\n" + EX1_OK, 3.0, "timeout"),
    "sleep_forever": (_ex1("import time\ntime.sleep(1e9)"), 3.0, "timeout"),
    "busy_loop": (_ex1("while True:\n    pass"), 3.0, "timeout"),
    "os_exit": (_ex1("import os\nos._exit(0)"), 3.0, "crashed"),
    "print_flood": (_ex1("while True:\n    print('x' * 1000)"), 3.0, "timeout"),
    "memory_blowup": (_ex1("hog = []\nwhile True:\n    hog.append(bytearray(50_000_000))"),
                      3.0, None),
    "fork_bomb": ("""
import os, time
children = []
try:
    for _ in range(5000):  # bounded: RLIMIT_NPROC stops it long before this
        pid = os.fork()
        if pid == 0:
            time.sleep(600)
            os._exit(0)
        children.append(pid)
except OSError as exc:
    print("fork refused after", len(children), exc)
""" + EX1_OK, MAX, "ok"),
    "sys_exit": ("import sys\nsys.exit(0)\n" + EX1_OK, 3.0, "ok"),
    "keyboard_interrupt": ("raise KeyboardInterrupt\n" + EX1_OK, 3.0, "ok"),
    "ignore_sigint_spin": (  # can't be interrupted: the kernel is restarted, the rest graded
        "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass\n"
        + EX1_OK, 3.0, "timeout"),
    "patch_wait_for": ("""
import asyncio
async def _fake_wait_for(aw, timeout=None):
    f = aw.cr_frame.f_locals
    aw.close()
    return f["a"] + f["b"]
asyncio.wait_for = _fake_wait_for
async def add_async(a, b):
    raise NotImplementedError()
""", 3.0, "tampered"),
    "patch_helper": ("check = lambda *args, **kwargs: None\n"
                     "async def add_async(a, b):\n    return None\n", 3.0, "tampered"),
    "patch_helper_in_loop": ("for check in [lambda *args, **kwargs: None]:\n    pass\n"
                             "async def add_async(a, b):\n    return None\n", 3.0, "tampered"),
    "patch_ipython": ("get_ipython().input_transformers_cleanup.append("
                      "lambda lines: ['pass\\n'])\n"
                      "async def add_async(a, b):\n    return None\n", 0.0, "tampered"),
    "custom_exc": ("get_ipython().set_custom_exc((BaseException,), lambda *a, **k: None)\n"
                   "async def add_async(a, b):\n    raise NotImplementedError()\n",
                   3.0, "tampered"),
}


def _files_cell(paths_json, grade_tmp):
    return f"""
import json, os, shutil, glob
report = []
for p in json.loads({paths_json!r}) + glob.glob({str(grade_tmp)!r} + '/labs-grade-*/work/*'):
    for action in ("rmtree", "remove", "overwrite"):
        try:
            if action == "rmtree":
                shutil.rmtree(p)
            elif action == "remove":
                os.remove(p)
            else:
                with open(p, "w") as fh:
                    fh.write("pwned")
            report.append(("DONE", action, p))
        except Exception as exc:
            report.append((type(exc).__name__, action, p))
print(report)
""" + EX1_OK


def _read_cell(paths_json, grade_tmp):
    return f"""
import json, glob
LEAKED = False
MARKS = ["SECRET-" + "HIDDEN-MARKER", "add_async(40" + ", 2)"]  # (not in this cell's text)
for p in json.loads({paths_json!r}) + glob.glob({str(grade_tmp)!r} + '/labs-grade-*/work/course/source/*/*'):
    try:
        with open(p, "rb") as fh:
            data = fh.read().decode("utf-8", "replace")
        LEAKED = LEAKED or any(m in data for m in MARKS)
    except Exception:
        pass
LEAKED = LEAKED or any(m in str(x) for x in [*In, *Out.values()] for m in MARKS)

async def add_async(a, b):  # only "correct" if the hidden tests could be read
    if not LEAKED:
        raise NotImplementedError("hidden tests were not readable")
    return a + b
"""


def _submission(released, ex1=None, ex2=None):
    nb = copy.deepcopy(released)
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid == "add_async" and ex1 is not None:
            cell.source = ex1
        elif gid == "gather_squares" and ex2 is not None:
            cell.source = ex2
    return nb


def _write(subs, student, nb, name=None, assignment=ASSIGNMENT):
    d = subs / student / assignment
    d.mkdir(parents=True, exist_ok=True)
    path = d / (name or f"{ASSIGNMENT}.ipynb")
    if isinstance(nb, str):
        path.write_text(nb)
    else:
        nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course_dir = tmp_path_factory.mktemp("course")
    released = labs.release([str(FIXTURE)], course_dir=course_dir, log=lambda *a: None)
    return course_dir, released[0]


@pytest.fixture(scope="module")
def batch(course, grade_tmp, tmp_path_factory):
    """Grade honest, blank, hostile and malformed submissions in one run (sandboxed, or skipped)."""
    if SANDBOX_PROBLEM is not None:
        pytest.skip(f"hostile submissions run only in the sandbox: {SANDBOX_PROBLEM}")
    course_dir, released_path = course
    released = nbformat.read(released_path, as_version=4)
    subs = tmp_path_factory.mktemp("submitted")
    canary = tmp_path_factory.mktemp("canary") / "canary.txt"
    canary.write_text("intact")
    _write(subs, "honest1", _submission(released, EX1_OK, EX2_OK))
    _write(subs, "honest2", _submission(released, EX1_OK, EX2_OK))
    _write(subs, "reference", nbformat.read(course_dir / "source" / ASSIGNMENT /
                                            f"{ASSIGNMENT}.ipynb", as_version=4))
    _write(subs, "blank", released)
    for kind, (ex1, _, _) in HOSTILE.items():
        _write(subs, kind, _submission(released, ex1, EX2_OK))
    honest_files = [str(subs / "honest1" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"),
                    str(subs / "honest1")]
    targets = json.dumps([str(course_dir / "gradebook.db"), str(course_dir / "source"),
                          str(course_dir), *honest_files, str(canary), str(FIXTURE)])
    _write(subs, "delete_files", _submission(released, _files_cell(targets, grade_tmp), EX2_OK))
    secrets_ = json.dumps([str(course_dir / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"),
                           str(course_dir / "gradebook.db"), str(FIXTURE), *honest_files])
    _write(subs, "read_hidden", _submission(released, _read_cell(secrets_, grade_tmp), EX2_OK))
    # unrunnable submissions
    _write(subs, "malformed", "{ this is not json")
    (subs / "missing" / ASSIGNMENT).mkdir(parents=True)
    _write(subs, "wrong_name", _submission(released, EX1_OK, EX2_OK), name="my_lab.ipynb")
    _write(subs, "unknown_assignment", released, assignment="99_nope")
    out = tmp_path_factory.mktemp("out") / "grades.csv"
    lines = []
    # the wall-clock limit is far above what a submission needs even on a loaded machine: every hostile
    # submission must be stopped by the per-cell timeout or the guard, never by this limit (asserted below)
    opts = labs.Options(timeout=3, submission_timeout=600, jobs=3, memory_mb=1024,
                        max_procs=64, iopub_timeout=2)
    rows = labs.grade(subs, out=out, course_dir=course_dir, options=opts, log=lines.append)
    with open(out) as fh:
        csv_rows = {r["student"]: r for r in csv.DictReader(fh)}
    return {"rows": {r.student: r for r in rows}, "csv": csv_rows, "log": "\n".join(lines),
            "course_dir": course_dir, "canary": canary, "subs": subs, "grade_tmp": grade_tmp}


# ---------------------------------------------------------------------------------------
# markers and release
# ---------------------------------------------------------------------------------------

def test_markers_expand_to_valid_nbgrader_metadata():
    from nbgrader.nbgraderformat import MetadataValidator
    nb = labs.mark_notebook(labs.read_notebook(FIXTURE), FIXTURE.name)
    MetadataValidator().validate_nb(nb)
    meta = {c.metadata["nbgrader"]["grade_id"]: c.metadata["nbgrader"] for c in nb.cells}
    for m in meta.values():
        assert m["schema_version"] == 3
        assert {"grade", "solution", "locked", "grade_id"} <= set(m)
    assert meta["add_async"]["solution"] and not meta["add_async"]["grade"]
    assert meta["add_async_tests"]["grade"] and meta["add_async_tests"]["points"] == 1.0
    assert meta["gather_squares_tests"]["points"] == 2.0  # from the points-2 tag
    assert meta["gather_squares_hidden_tests"]["grade"]
    locked = [m for m in meta.values() if m["locked"]]
    assert len(locked) == 5  # three markdown cells and the two helper cells
    assert sum(m["points"] for m in meta.values() if m["grade"]) == MAX


def test_markers_missing_end_marker_is_an_error():
    nb = labs.read_notebook(FIXTURE)
    sol = next(c for c in nb.cells if "solution" in c.metadata.get("tags", []))
    sol.source = sol.source.replace("### END SOLUTION", "")
    with pytest.raises(labs.LabError, match="END SOLUTION"):
        labs.mark_notebook(nb, "broken")


def test_student_version_has_no_solutions_no_hidden_tests_no_sources(course):
    course_dir, released = course
    files = sorted(p.name for p in (course_dir / "release" / ASSIGNMENT).rglob("*"))
    assert files == [f"{ASSIGNMENT}.ipynb"]  # no .py copied next to it
    assert not list((course_dir / "release").rglob("*.py"))
    text = released.read_text()
    for secret in ("BEGIN SOLUTION", "BEGIN HIDDEN", "SECRET-HIDDEN-MARKER", "add_async(40, 2)",
                   "return a + b", "asyncio.gather(*(square", "range(50)"):
        assert secret not in text
    nb = nbformat.read(released, as_version=4)
    for cell in nb.cells:
        m = cell.metadata["nbgrader"]
        if m["solution"]:
            assert "raise NotImplementedError()" in cell.source
            assert cell.metadata.get("editable", True)
        else:
            assert cell.metadata["editable"] is False  # markdown, helpers, tests: read-only
        assert not cell.get("outputs")
    assert "def add_async(a, b):" in text  # the signature and docstring stay


def test_validate_student_version_fails_and_reference_passes(course, capsys):
    course_dir, released = course
    passed, total = labs.validate(released, timeout=10)
    assert (passed, total) == (0, 3)  # exercise 1's hidden cell is empty for students
    out = capsys.readouterr().out
    assert "FAIL  add_async_tests" in out and "NotImplementedError" in out
    assert "add_async_hidden_tests  (1 pt): hidden tests, run only when" in out
    assert "0/3 tests passed" in out
    passed, total = labs.validate(FIXTURE, timeout=10)
    assert passed == total == 4
    assert labs.main(["validate", str(released), "--timeout", "10"]) == 1


def test_no_bubblewrap_fails_loudly_with_the_fix(monkeypatch, tmp_path):
    from lab_snippets.labs import sandbox
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    with pytest.raises(labs.LabError, match="apt-get install bubblewrap"):
        labs.detect_isolation([], labs.Options())
    with pytest.raises(labs.LabError, match="bubblewrap"):  # grade refuses: never unsandboxed
        labs.grade(tmp_path, out=tmp_path / "g.csv", course_dir=tmp_path, log=lambda *a: None)


def test_broken_sandbox_fails_loudly_with_the_fix(monkeypatch):
    """A bwrap that is installed but cannot build the sandbox: the probe's error and the fix are
    shown. bwrap's presence is stubbed too, so this runs where none is installed (the forky root
    of .ci/forky-root, before it included bubblewrap: there the missing-bwrap error came first)."""
    from lab_snippets.labs import sandbox
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: "/usr/bin/bwrap")
    monkeypatch.setattr(sandbox, "probe", lambda spec, hide: {"ok": False, "error": "bwrap: No permissions"})
    with pytest.raises(labs.LabError, match="bwrap: No permissions.*Fix: "):
        labs.detect_isolation([], labs.Options())


@needs_sandbox
def test_student_kernel_cannot_import_the_grader_or_see_the_repository(tmp_path):
    """The probe runs in the sandbox exactly as a kernel does; it imports the notebook modules."""
    from lab_snippets.labs import sandbox
    box = tmp_path / "box"
    box.mkdir()
    uid = sandbox.alloc_uid() if sandbox.privileged() else None
    if uid is not None:
        os.chmod(tmp_path, 0o711)
        os.chown(box, uid, uid)
    spec = sandbox.sandbox_spec(box, uid, labs.Options(), [REPO])
    info = sandbox.probe(spec, [REPO, tmp_path])
    assert info["ok"], info
    assert info["importable"] == [], "a student kernel could import course tooling"
    assert info["missing"] == []  # ... and can import what the chapters import
    assert info["visible"] == []  # the repository (chapters, hidden tests) is not there
    assert info["nproc"] == labs.Options().max_procs
    # the counterfactual: the same probe sees the repository when it is bound in
    exposed = sandbox.SandboxSpec(**{**spec.__dict__, "read_only": (*spec.read_only, str(REPO))})
    assert sandbox.probe(exposed, [REPO])["visible"] == [str(REPO)]


# ---------------------------------------------------------------------------------------
# grading: honest vs hostile, one batch
# ---------------------------------------------------------------------------------------

def test_reference_full_marks_and_blank_zero(batch):
    rows = batch["rows"]
    assert rows["reference"].score == MAX and rows["reference"].status == "ok"
    assert rows["blank"].score == 0 and rows["blank"].max_score == MAX


@needs_sandbox
def test_honest_submissions_keep_full_marks(batch):
    for student in ("honest1", "honest2"):
        row = batch["rows"][student]
        assert (row.score, row.status) == (MAX, "ok"), row.reason


@needs_sandbox
@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_submission_scores_what_it_should(batch, kind):
    _, expected, status = HOSTILE[kind]
    row = batch["rows"][kind]
    assert row.score == expected, f"{kind}: {row.score} ({row.status}: {row.reason})"
    if status is not None:
        assert row.status == status, row.reason
    assert "wall-clock limit" not in (row.reason or ""), f"{kind}: stopped only by the wall-clock limit"


@needs_sandbox
def test_hostile_reasons_are_explained(batch):
    rows = batch["rows"]
    assert "per-cell timeout" in rows["sleep_forever"].reason
    assert "kernel died" in rows["os_exit"].reason
    assert "restarted" in rows["ignore_sigint_spin"].reason
    assert "restarted" in rows["busy_loop"].reason
    assert "asyncio.wait_for" in rows["patch_wait_for"].reason
    assert "check" in rows["patch_helper"].reason
    assert "check" in rows["patch_helper_in_loop"].reason  # rebound by a for loop, restored all the same
    assert "guard" in rows["patch_ipython"].reason


@needs_sandbox
def test_wall_clock_limit_kills_the_submission(course, grade_tmp, tmp_path):
    course_dir, released_path = course
    released = nbformat.read(released_path, as_version=4)
    subs = tmp_path / "subs"
    _write(subs, "stalls", _submission(released, HOSTILE["hang_event"][0], EX2_OK))
    opts = labs.Options(timeout=60, submission_timeout=10, jobs=1)
    [row] = labs.grade(subs, out=tmp_path / "g.csv", course_dir=course_dir, options=opts,
                       log=lambda *a: None)
    assert (row.score, row.status) == (0, "timeout"), row.reason
    assert "wall-clock limit (10s) hit; killed" in row.reason
    assert row.seconds < 30
    assert _sandbox_processes(grade_tmp) == []


@needs_sandbox
def test_file_attacks_change_nothing(batch):
    rows = batch["rows"]
    assert rows["delete_files"].score == MAX  # its own code is fine; the attacks all failed
    assert batch["canary"].read_text() == "intact"
    assert FIXTURE.exists() and "SECRET-HIDDEN-MARKER" in FIXTURE.read_text()
    honest = batch["subs"] / "honest1" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nbformat.validate(nbformat.read(honest, as_version=4))
    # the gradebook survived and holds the honest scores, written from the trusted side
    db = batch["course_dir"] / "gradebook.db"
    with sqlite3.connect(db) as con:
        assert con.execute("select count(*) from assignment").fetchone()[0] == 1
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{db}", labs.COURSE_ID) as gb:
        for student in ("honest1", "honest2", "delete_files"):
            assert gb.find_submission(ASSIGNMENT, student).score == MAX
        assert gb.find_submission(ASSIGNMENT, "os_exit").score == 3
    assert list((batch["course_dir"] / "backups").glob("gradebook-*.db"))


@needs_sandbox
def test_hidden_tests_not_readable_before_they_run(batch):
    row = batch["rows"]["read_hidden"]
    assert row.score == 3.0, row.reason  # exercise 1 only passes if the secrets leaked
    assert "hidden tests were not readable" in row.reason


@needs_sandbox
def test_no_sandbox_process_survives(batch):
    assert _sandbox_processes(batch["grade_tmp"]) == []


def test_unrunnable_submissions_are_reported(batch):
    csv_rows = batch["csv"]
    expect = {"malformed": "malformed notebook", "missing": "missing notebook",
              "wrong_name": "found: my_lab.ipynb", "unknown_assignment": "unknown assignment"}
    for student, text in expect.items():
        r = csv_rows[student]
        assert r["status"] == "invalid" and text in r["reason"], r
        assert float(r["score"]) == 0


def test_every_submission_has_a_csv_row_and_summary(batch):
    expected = {"honest1", "honest2", "reference", "blank", "delete_files", "read_hidden",
                "malformed", "missing", "wrong_name", "unknown_assignment", *HOSTILE}
    assert set(batch["csv"]) == expected
    for r in batch["csv"].values():
        assert set(r) == {"student", "assignment", "score", "max_score", "status", "reason"}
    log = batch["log"]
    assert "isolation:" in log and "gradebook backed up to" in log
    assert "student" in log and "honest1" in log


# ---------------------------------------------------------------------------------------
# every real chapter, released and graded in the sandbox: the reference earns full marks
# ---------------------------------------------------------------------------------------
# Only ``grade`` runs a chapter in the sandbox (its limits, its whitelisted modules, no network),
# so only here can a chapter that passes under nbval fail its students' grading. That a student
# version fails is checked without a sandbox by tests/test_corpus.py (each chapter's stub, cleared
# by nbgrader's ClearSolutions as ``release`` clears it, must score zero): not graded again here.

CHAPTERS = labs.chapters_with_solutions()


@pytest.fixture(scope="module")
def chapters_released(tmp_path_factory):
    course_dir = tmp_path_factory.mktemp("chapters")
    if CHAPTERS:
        labs.release([str(c) for c in CHAPTERS], course_dir=course_dir, log=lambda *a: None)
    return course_dir


@pytest.fixture(scope="module")
def chapters_graded(chapters_released, tmp_path_factory):
    if SANDBOX_PROBLEM is not None:
        pytest.skip(f"grading runs only in the sandbox: {SANDBOX_PROBLEM}")
    course_dir = chapters_released
    subs = tmp_path_factory.mktemp("chapter_subs")
    for ch in CHAPTERS:
        d = subs / "reference" / ch.stem
        d.mkdir(parents=True)
        source = course_dir / "source" / ch.stem / f"{ch.stem}.ipynb"
        (d / f"{ch.stem}.ipynb").write_bytes(source.read_bytes())
    if not CHAPTERS:
        return {}
    opts = labs.Options(timeout=60, submission_timeout=300)
    rows = labs.grade(subs, out=course_dir / "grades.csv", course_dir=course_dir, options=opts,
                      log=lambda *a: None)
    return {(r.student, r.assignment): r for r in rows}


@pytest.mark.timeout(1800)
# a chapter whose package is missing here (Ray on 3.15) skips, saying why
@pytest.mark.parametrize("chapter", [
    pytest.param(c, marks=pytest.mark.skipif(missing_package(c) is not None, reason=missing_package(c) or ""))
    for c in CHAPTERS], ids=[c.stem for c in CHAPTERS])
def test_chapter_reference_earns_full_marks_in_the_sandbox(chapters_graded, chapter):
    ref = chapters_graded[("reference", chapter.stem)]
    assert ref.max_score > 0
    assert ref.score == ref.max_score, f"reference: {ref.status}: {ref.reason}"


def test_every_chapter_student_version_is_checked_to_fail(chapters_released):
    """The released student versions hold no solution, and each chapter's stub is graded (to
    zero) by tests/test_corpus.py, which is why the student versions are not graded here."""
    from lab_snippets.labs import corpus

    stubs = {chapter for kind, chapter, _ in corpus.jobs_for() if kind == "stub"}
    missing = sorted(c.stem for c in CHAPTERS if c.stem[:2] not in stubs)
    assert not missing, f"no corpus stub checks these chapters' student versions: {missing}"
    for ch in CHAPTERS:
        released = (chapters_released / "release" / ch.stem / f"{ch.stem}.ipynb").read_text()
        assert "BEGIN SOLUTION" not in released and "BEGIN HIDDEN TESTS" not in released, \
            f"{ch.stem}: the student version still holds a solution or a hidden test"

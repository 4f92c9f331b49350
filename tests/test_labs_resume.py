"""Killing ``labs grade`` halfway and running it again (issue 40), with real processes: the same
CSV and gradebook as one uninterrupted run, on the thread pool and on Ray.

Each path grades four submissions of the fixture lab (``tests/fixtures/labs/90_fixture_lab.py``:
the reference, the blank student version, one wrong in exercise 1 and one wrong in exercise 2, so
the rows differ), one at a time, as ``python -m lab_snippets.labs grade`` subprocesses: once to
its end; once in a process group of its own, killed with SIGKILL (the whole group) as soon as the
journal holds a finished row and a sandbox of the next submission is running; then once more, to
its end. The Ray path passes ``--ray auto`` (``RAY_ADDRESS`` says which cluster: a local one of a
single 1-CPU node that passed the sandbox probe). Every run gets a fresh copy of the released
course and a private ``TMPDIR``.

Compared: the CSV byte for byte (it holds no timestamp or duration); every row of nbgrader's
tables in ``gradebook.db`` but the random ids (``_gradebook``); the journal (the rows kept at the
kill stay, the rerun grades only the rest, each key once); after the kill and after the rerun,
no process of the killed group, none of the driver's descendants (bwrap included) and no
process naming the private ``TMPDIR`` alive, and nothing left in that ``TMPDIR``. A Ctrl-C
(SIGINT to the group) on the thread pool ends the run after the submission it was grading.

Figures (2 cores shared, load 1-5): pool test 69 s (uninterrupted run 29-32 s, kill after
9-11 s with 1 of 4 rows kept, rerun 22-24 s); Ray test 211 s with the cluster's start
(uninterrupted 64 s, kill after 29 s with 1 row kept, rerun 45 s); Ctrl-C test 20 s.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import psutil
import pytest

from lab_snippets import labs
from lab_snippets.labs import journal, raygrade
from lab_snippets.labs.common import REPO
from tests.test_labs import (
    ASSIGNMENT,
    EX1_OK,
    EX2_OK,
    FIXTURE,
    SANDBOX_PROBLEM,
    _submission,
    _write,
)

# The thread-pool tests wait on states (a row journaled, a sandbox running), not on times, so they
# run in the parallel phase; the Ray test starts a cluster and needs the cores to itself (serial).
pytestmark = [pytest.mark.timeout(1800)]

EX1_WRONG = "async def add_async(a, b):\n    await asyncio.sleep(0)\n    return a - b\n"
EX2_WRONG = ("async def gather_squares(xs):\n"
             "    return list(await asyncio.gather(*(asyncio.sleep(0, x * x) for x in xs)))[::-1]\n")
# what each submission earns (of 5): the rows differ, so equal CSVs are not equal by accident
SCORES = {"blank": "0", "reference": "5", "wrong_ex1": "3", "wrong_ex2": "2"}
GRADE_ARGS = ["--jobs", "1", "--timeout", "30", "--submission-timeout", "240", "--memory-mb", "1024"]
WAIT = 600  # s: the longest any one wait below may take (a loaded 2-core machine)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The released fixture lab and the four submissions."""
    if SANDBOX_PROBLEM is not None:
        pytest.skip(f"grading runs only in the sandbox: {SANDBOX_PROBLEM}")
    root = tmp_path_factory.mktemp("resume")
    course = root / "course"
    [released] = labs.release([str(FIXTURE)], course_dir=course, log=lambda *a: None)
    released = nbformat.read(released, as_version=4)
    subs = root / "subs"
    _write(subs, "blank", released)
    _write(subs, "reference", nbformat.read(course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb",
                                            as_version=4))
    _write(subs, "wrong_ex1", _submission(released, EX1_WRONG, EX2_OK))
    _write(subs, "wrong_ex2", _submission(released, EX1_OK, EX2_WRONG))
    return {"root": root, "course": course, "subs": subs}


@pytest.fixture
def short_tmp():
    """A private folder for the graders' ``TMPDIR``s, short and under /tmp: a kernel's sockets sit
    two or three folders below a ``TMPDIR``, and under pytest's numbered folders (with xdist's
    ``popen-gwN``) their paths reach Linux's limit (``raygrade.SOCKET_PATH_MAX``; ``labs grade``
    refuses such a ``TMPDIR`` with the fix)."""
    path = Path(tempfile.mkdtemp(prefix="lr-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _tmpdir(path: Path) -> Path:
    path.mkdir()
    os.chmod(path, 0o711)  # grading as root: a submission's own uid traverses to its box
    return path


# A test command run as a background job of a script (``bash .ci/test &``: bash without job
# control) starts with SIGINT ignored, every child inherits that, and a Python started with SIGINT
# ignored never raises KeyboardInterrupt: the Ctrl-C test then graded all four (session 7's
# rehearsal). A terminal's Ctrl-C reaches a foreground process whose SIGINT is at its default, so
# each grader is started that way: SIGINT set back to the default, then the grader exec'd.
AS_FROM_A_TERMINAL = [sys.executable, "-c", "import os, signal, sys; "
                      "signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"]


class Run:
    """One ``labs grade`` subprocess on a fresh copy of the course, in its own process group."""

    def __init__(self, world, name: str, args: list[str], env: dict[str, str],
                 tmp: list[Path]) -> None:
        self.dir = world["root"] / name
        self.course = Path(shutil.copytree(world["course"], self.dir / "course"))
        self.out, self.tmp = self.dir / "grades.csv", tmp  # the driver's TMPDIR, the nodes'
        self.argv = [*AS_FROM_A_TERMINAL, sys.executable, "-m", "lab_snippets.labs", "grade",
                     str(world["subs"]),
                     "--out", str(self.out), "--course-dir", str(self.course), *GRADE_ARGS, *args]
        self.env = dict(os.environ, **env, TMPDIR=str(tmp[0]))
        self.seen: dict[psutil.Process, str] = {}  # every descendant of a driver: its name
        self.pgid: int | None = None

    def start(self, log: str) -> subprocess.Popen:
        with open(self.dir / log, "wb") as fh:
            return subprocess.Popen(self.argv, cwd=REPO, stdout=fh, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, env=self.env, process_group=0)

    def to_the_end(self, log: str) -> str:
        proc = self.start(log)
        try:
            proc.wait(timeout=WAIT)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)
        text = (self.dir / log).read_text()
        assert proc.returncode == 0, f"labs grade exited with {proc.returncode}:\n{text[-3000:]}"
        return text

    def journal(self) -> list[dict]:
        path = self.course / journal.JOURNAL_NAME
        return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []

    def kill_halfway(self) -> int:
        """Start, wait for a finished row and a running sandbox, SIGKILL the group; return the
        rows the journal kept."""
        proc = self.start("killed.log")
        self.pgid = proc.pid
        deadline = time.monotonic() + WAIT
        try:
            while not (self.journal() and any(p.info["name"] == "bwrap" for p in _naming(self.tmp))):
                assert proc.poll() is None, \
                    f"the run ended before it was killed:\n{(self.dir / 'killed.log').read_text()[-3000:]}"
                assert time.monotonic() < deadline, f"no finished row and running sandbox in {WAIT} s"
                self._note_descendants(proc.pid)
                time.sleep(0.1)
            self._note_descendants(proc.pid)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        return len(self.journal())

    def _note_descendants(self, pid: int) -> None:
        try:
            for p in psutil.Process(pid).children(recursive=True):
                self.seen.setdefault(p, _name(p))
        except psutil.Error:
            pass

    def left_behind(self, pgid: int | None = None) -> dict[str, object]:
        """What is still there after the bounded wait for cleanup (empty: nothing)."""
        deadline, left = time.monotonic() + 60, {}
        while True:
            left = {}
            if pgid is not None and _group_alive(pgid):
                left["process group"] = pgid
            alive = [f"{p.pid} {name}" for p, name in self.seen.items() if _running(p)]
            if alive:
                left["descendants of the killed driver"] = alive
            naming = [f"{p.pid} {p.info['name']}" for p in _naming(self.tmp)]
            if naming:
                left["processes naming a private TMPDIR"] = naming
            entries = sorted(str(x) for t in self.tmp for x in t.iterdir())
            if entries:
                left["entries in a private TMPDIR"] = entries
            if not left or time.monotonic() > deadline:
                return left
            time.sleep(0.5)


def _running(p: psutil.Process) -> bool:
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _name(p: psutil.Process) -> str:
    try:
        return p.name()
    except psutil.Error:
        return "?"


def _naming(folders: list[Path]) -> list[psutil.Process]:
    """Live processes whose command line names one of ``folders`` (a worker's spec, bwrap's
    binds)."""
    out = []
    for p in psutil.process_iter(["cmdline", "name"]):
        try:
            if any(str(f) in a for a in p.info["cmdline"] or [] for f in folders) and _running(p):
                out.append(p)
        except psutil.Error:
            pass
    return out


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def _gradebook(course: Path) -> dict[str, list[tuple]]:
    """Every row of the gradebook's tables, foreign keys replaced by names. Left out, by nature
    different between two runs: the ``id`` columns of assignment, notebook, cells, submissions,
    grades and comments (nbgrader's random uuids). ``row counts`` covers every table."""
    db = sqlite3.connect(f"file:{course / 'gradebook.db'}?mode=ro", uri=True)
    try:
        q = {
            "row counts": "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
            "student": "SELECT id, first_name, last_name, email, lms_user_id FROM student",
            "submitted_assignment":
                "SELECT s.student_id, a.name, s.timestamp, s.extension FROM submitted_assignment s "
                "JOIN assignment a ON s.assignment_id = a.id",
            "submitted_notebook":
                "SELECT s.student_id, a.name, n.name, sn.flagged, sn.late_submission_penalty "
                "FROM submitted_notebook sn JOIN submitted_assignment s ON sn.assignment_id = s.id "
                "JOIN assignment a ON s.assignment_id = a.id JOIN notebook n ON sn.notebook_id = n.id",
        }
        per_cell = ("FROM {t} g JOIN submitted_notebook sn ON g.notebook_id = sn.id "
                    "JOIN submitted_assignment s ON sn.assignment_id = s.id "
                    "JOIN assignment a ON s.assignment_id = a.id "
                    "JOIN notebook n ON sn.notebook_id = n.id JOIN base_cell c ON g.cell_id = c.id")
        q["grade"] = ("SELECT s.student_id, a.name, n.name, c.name, g.auto_score, g.manual_score, "
                      "g.extra_credit, g.needs_manual_grade " + per_cell.format(t="grade"))
        q["comment"] = ("SELECT s.student_id, a.name, n.name, c.name, g.auto_comment, "
                        "g.manual_comment " + per_cell.format(t="comment"))
        out = {k: sorted(db.execute(v).fetchall(), key=repr) for k, v in q.items()}
        out["row counts"] = [(t, db.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0])
                             for (t,) in out["row counts"]]
        return out
    finally:
        db.close()


def _kill_and_resume(world, name: str, args: list[str], env: dict[str, str], tmp: Path,
                     nodes_tmp: list[Path]) -> tuple[Run, dict[str, float]]:
    """The uninterrupted run, the killed run and its rerun, compared; the killed run and its
    figures (seconds, rows kept)."""
    t0 = time.monotonic()
    whole = Run(world, f"{name}-whole", args, env, [_tmpdir(tmp / "whole"), *nodes_tmp])
    whole_log = whole.to_the_end("whole.log")
    t_whole = time.monotonic() - t0
    left = whole.left_behind()
    assert not left, f"the uninterrupted run left behind: {left}"
    csv_text = whole.out.read_text()
    scores = {line.split(",")[0]: line.split(",")[2] for line in csv_text.splitlines()[1:]}
    assert scores == SCORES, (f"the uninterrupted run graded {scores}, not {SCORES}; its CSV (status, "
                              f"reason):\n{csv_text[:3000]}\nits log:\n{whole_log[-3000:]}")

    killed = Run(world, f"{name}-killed", args, env, [_tmpdir(tmp / "killed"), *nodes_tmp])
    t1 = time.monotonic()
    kept = killed.kill_halfway()
    t_kill = time.monotonic() - t1
    before = killed.journal()
    assert 1 <= kept < len(SCORES), f"{kept} rows journaled when the group was killed"
    assert not killed.out.exists(), "the CSV is written only at the end: none after the kill"
    left = killed.left_behind(pgid=killed.pgid)
    assert not left, f"the killed run left behind: {left}"
    t2 = time.monotonic()
    log = killed.to_the_end("rerun.log")
    t_rerun = time.monotonic() - t2
    assert f"grading {len(SCORES) - kept} submission(s) ({kept} already in the journal" in log
    after = killed.journal()
    assert after[:kept] == before, "the rows journaled before the kill stay as they were"
    keys = [tuple(e["key"]) for e in after]
    assert len(keys) == len(set(keys)) == len(SCORES), \
        f"the rerun journaled {len(after) - kept} rows for {len(SCORES) - kept} missing ones"
    assert killed.out.read_text() == csv_text, "the CSV differs from the uninterrupted run's"
    assert _gradebook(killed.course) == _gradebook(whole.course), \
        "the gradebook differs from the uninterrupted run's"
    left = killed.left_behind()
    assert not left, f"the rerun left behind: {left}"
    figures = {"whole s": t_whole, "until killed s": t_kill, "rerun s": t_rerun, "kept": kept}
    print(f"{name}: " + ", ".join(f"{k} {v:.1f}" for k, v in figures.items()))
    return killed, figures


def test_the_thread_pool_killed_halfway_and_rerun_ends_as_one_uninterrupted_run(world, short_tmp):
    """Counterfactuals: a journal written only at the end (the rerun grades all four), a worker
    that outlives its killed driver (its sandbox and throwaway folder stay)."""
    killed, _ = _kill_and_resume(world, "pool", [], {}, short_tmp, [])
    assert "bwrap" in killed.seen.values(), \
        "the killed driver had a sandbox running (else the check of its descendants is empty)"


def test_a_grader_started_with_sigint_ignored_still_stops_on_ctrl_c():
    """Counterfactual: the grader started without ``AS_FROM_A_TERMINAL`` from a parent that ignores
    SIGINT (as a background job does) keeps ignoring it: this prints False."""
    probe = "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
    run = subprocess.run([*AS_FROM_A_TERMINAL, sys.executable, "-c", probe], capture_output=True,
                         text=True, timeout=60,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert run.stdout.strip() == "True", f"a Ctrl-C would not stop this grader: {run.stderr}"


def test_ctrl_c_stops_the_thread_pool_after_the_running_submission(world, short_tmp):
    """Ctrl-C (SIGINT to the group, as a terminal sends it) once a row is journaled: the grader
    ends without starting the queued submissions, keeps its rows and leaves nothing behind.
    Counterfactual: ``with ThreadPoolExecutor``, whose exit waits for every queued submission
    (measured before the fix: all four graded after the Ctrl-C, only the first journaled)."""
    run = Run(world, "ctrl-c", [], {}, [_tmpdir(short_tmp / "ctrl-c")])
    proc = run.start("ctrl-c.log")
    deadline = time.monotonic() + WAIT
    try:
        while not run.journal():
            assert proc.poll() is None and time.monotonic() < deadline, "no row journaled"
            time.sleep(0.1)
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=WAIT)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    graded = sorted(p.name for p in (run.course / "autograded").iterdir())
    assert len(graded) <= 2 < len(SCORES), \
        f"after the Ctrl-C the grader went on to grade {graded} (jobs 1: one running at most)"
    assert len(run.journal()) >= 1 and not run.out.exists()
    left = run.left_behind(pgid=proc.pid)
    assert not left, f"the interrupted run left behind: {left}"


@pytest.fixture(scope="module")
def cluster(world, tmp_path_factory):
    """A local Ray of one node with one CPU that passed the sandbox probe, whose processes have
    a private ``TMPDIR`` (where a grading task makes its folder)."""
    pytest.importorskip("ray", reason="the --ray path needs ray installed (requirements.txt)")
    resources = raygrade.node_resources(1)
    assert resources.get(raygrade.RESOURCE) == 1, "this node passed the probe (world did)"
    # short, under /tmp: a task's kernel sockets sit three folders below it, and under pytest's
    # numbered folders their paths passed Linux's 108 bytes (raygrade.SOCKET_PATH_MAX)
    tmp = Path(tempfile.mkdtemp(prefix="lr-", dir="/tmp"))
    os.chmod(tmp, 0o711)  # grading as root: a submission's own uid traverses to its box
    stack = contextlib.ExitStack()
    stack.callback(shutil.rmtree, tmp, ignore_errors=True)
    with pytest.MonkeyPatch.context() as mp:  # Ray's processes keep the value they start with
        mp.setenv("TMPDIR", str(tmp))
        lc = stack.enter_context(raygrade.local_cluster(head_cpus=1, head_resources=resources))
    with stack:
        yield lc, tmp


@pytest.mark.serial
def test_ray_auto_killed_halfway_and_rerun_ends_as_one_uninterrupted_run(world, cluster, short_tmp):
    """Counterfactuals: rows journaled in submission order or only at the end (the rerun grades
    all four), a task that outlives its killed driver (its sandbox and folder stay)."""
    lc, nodes_tmp = cluster
    _kill_and_resume(world, "ray", ["--ray", "auto"], {"RAY_ADDRESS": lc.address}, short_tmp,
                     [nodes_tmp])

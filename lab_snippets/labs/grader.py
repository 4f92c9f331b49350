"""``grade``: autograde every submission in a sandbox, write the CSV and the gradebook.

The trusted orchestration: one worker process per submission (``lab_snippets.labs.worker``),
each with a throwaway course folder; the submission's kernel runs in the bubblewrap sandbox
(``lab_snippets.labs.sandbox``). On this machine each worker is forked from the run's zygote
(``lab_snippets.labs.zygote``, which imported nbgrader once); on Ray, and when the zygote fails,
it is a fresh process. The worker runs in a session of its own (so that a wall-clock kill takes
its whole group), out of reach of a kill of the grader's group: ``sandbox.reaped`` ends its
sandbox and removes its folder when the grader dies first (a forked worker dies with its
zygote). See ``book/instructors.md`` for the safety model.
"""

from __future__ import annotations

import concurrent.futures
import csv
import dataclasses
import json
import os
import secrets
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lab_snippets.book.chapters import missing_package, runs_alone
from lab_snippets.labs import deps, journal, sandbox
from lab_snippets.labs import zygote as zygote_
from lab_snippets.labs.common import (
    COURSE_ID,
    DEFAULT_COURSE_DIR,
    MAX_SUBMISSION_BYTES,
    REPO,
    LabError,
    cell_timeout,
    ensure_venv_on_path,
)
from lab_snippets.labs.markers import defined_names, read_notebook
from lab_snippets.labs.scoring import score
from lab_snippets.labs.spec import GradeSpec, Options

__all__ = ["Options", "Row", "grade"]

# Seconds between two looks for the worker's descendants (the kernel's bwrap, started in a session
# of its own) while it runs: what ``sandbox.kill_tree`` kills besides the worker's own group. A
# look reads every /proc/*/stat (2.2 ms of CPU with 123 processes), taken from the grading beside
# it; a bwrap missed by a look dies with its parent anyway (``--die-with-parent``, PID namespace).
SCAN_EVERY = 0.5
# Grading on this machine forks each worker from one zygote per run (``labs.zygote``): its imports
# once per run, not once per submission. False: a fresh worker process per submission (the bench
# measures both).
USE_ZYGOTE = True

# {assignment: (notebook name, {grade_id: max_score})}
Assignments = dict[str, tuple[str, dict[str, float]]]


@dataclass
class Row:
    """One line of the grades CSV: a student's assignment, as graded (or why it could not be)."""

    student: str
    assignment: str
    score: float = 0.0
    max_score: float = 0.0
    status: str = "ok"
    reason: str = ""
    seconds: float = 0.0
    path: Path | None = None  # the notebook to grade; None: not gradable (see status, reason)
    cells: dict[str, float] = field(default_factory=dict)  # grade_id -> score


def _assignments(course_dir: Path) -> Assignments:
    """{assignment: (notebook name, {grade_id: max_score})} from the master gradebook."""
    from nbgrader.api import Gradebook
    db = Path(course_dir) / "gradebook.db"
    if not db.exists():
        raise LabError(f"{db} not found: run `python -m lab_snippets.labs release` first")
    out: Assignments = {}
    with Gradebook("sqlite:///" + str(db), COURSE_ID) as gb:
        for a in gb.assignments:
            for n in a.notebooks:
                out[a.name] = (n.name, {g.name: g.max_score for g in n.grade_cells})
    return out


def _backup_gradebook(course_dir: Path) -> Path:
    db = Path(course_dir) / "gradebook.db"
    backups = Path(course_dir) / "backups"
    backups.mkdir(exist_ok=True)
    dest = backups / time.strftime("gradebook-%Y%m%d-%H%M%S.db")
    k = 1
    while dest.exists():
        dest = backups / time.strftime(f"gradebook-%Y%m%d-%H%M%S-{k}.db")
        k += 1
    src, dst = sqlite3.connect(db), sqlite3.connect(dest)
    with dst:
        src.backup(dst)
    src.close()
    dst.close()
    os.chmod(dest, 0o600)
    return dest


def _enumerate(submissions_dir: Path, assignments: Assignments) -> list[Row]:
    """One Row per <student>/<assignment>, including everything that cannot be graded."""
    rows = []
    root = Path(submissions_dir)
    for sdir in sorted(root.iterdir()):
        student = sdir.name
        if sdir.is_symlink() or not sdir.is_dir():
            rows.append(Row(student, "-", status="invalid",
                            reason=f"stray entry {sdir.name!r} (expected a student folder)"))
            continue
        entries = sorted(sdir.iterdir())
        if not entries:
            rows.append(Row(student, "-", status="invalid", reason="empty student folder"))
        for adir in entries:
            a = adir.name
            if a not in assignments:
                rows.append(Row(student, a, status="invalid",
                                reason=f"unknown assignment {a!r} (known: "
                                       f"{', '.join(sorted(assignments)) or 'none'})"))
                continue
            nbname, cells = assignments[a]
            row = Row(student, a, max_score=sum(cells.values()))
            rows.append(row)
            if adir.is_symlink() or not adir.is_dir():
                row.status, row.reason = "invalid", f"{a} is not a folder"
                continue
            want = adir / f"{nbname}.ipynb"
            others = sorted(p.name for p in adir.iterdir())
            if not want.exists() and not want.is_symlink():
                row.status = "invalid"
                row.reason = (f"missing notebook {want.name}"
                              + (f" (found: {', '.join(others)})" if others else " (folder empty)"))
                continue
            if want.is_symlink() or not want.is_file():
                row.status, row.reason = "invalid", f"{want.name} is not a regular file"
                continue
            if want.stat().st_size > MAX_SUBMISSION_BYTES:
                row.status, row.reason = "invalid", f"{want.name} is larger than 20 MB"
                continue
            try:
                data = json.loads(want.read_bytes())
                if not isinstance(data, dict) or not isinstance(data.get("cells"), list) \
                        or data.get("nbformat") != 4:
                    raise ValueError("not an nbformat 4 notebook")
            except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # "[[[[..." is too deep
                row.status = "invalid"
                row.reason = f"malformed notebook {want.name}: {str(exc)[:120]}"
                continue
            row.path = want
    return rows


def _source(course_dir: Path, assignment: str, nbname: str):
    """The instructor version of an assignment (never the submission)."""
    return read_notebook(Path(course_dir) / "source" / assignment / f"{nbname}.ipynb")


def _solution_names(course_dir: Path, assignment: str, nbname: str, nb=None) -> tuple[str, ...]:
    """Top-level names the reference solution cells bind (students may rebind them)."""
    nb = nb or _source(course_dir, assignment, nbname)
    return tuple(sorted({n for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")
                         for n in defined_names(c.source)}))


def _plan(course_dir: Path, assignment: str, nbname: str, nb=None) -> str:
    """Release's record of the cells grading need not run (``labs.deps``), as JSON, from the
    instructor version: never from the submission."""
    return json.dumps(deps.recorded(nb or _source(course_dir, assignment, nbname)))


def _throwaway_course(row: Row, course_dir: Path, nbname: str, work: Path) -> Path:
    """A course folder holding just this submission, the instructor version and a gradebook copy."""
    course = work / "course"
    (course / "source" / row.assignment).mkdir(parents=True)
    shutil.copy2(Path(course_dir) / "source" / row.assignment / f"{nbname}.ipynb",
                 course / "source" / row.assignment)
    sub = course / "submitted" / row.student / row.assignment
    sub.mkdir(parents=True)
    assert row.path is not None, "only a gradable row gets a course"
    shutil.copyfile(row.path, sub / f"{nbname}.ipynb")
    src, dst = sqlite3.connect(Path(course_dir) / "gradebook.db"), \
        sqlite3.connect(course / "gradebook.db")
    with dst:
        src.backup(dst)
    src.close()
    dst.close()
    return course


def _worker_env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(REPO), PYTHONDONTWRITEBYTECODE="1")


def _start_worker(spec_path: Path, work: Path, log, zygote: zygote_.Zygote | None):
    """The worker: a child forked by the run's zygote (a ``psutil.Process``), else a fresh
    process (a ``Popen``); None when the forked child has ended already."""
    import psutil
    pid = zygote.fork(spec_path, work) if zygote is not None else None
    if pid is None:
        return subprocess.Popen([sys.executable, "-m", "lab_snippets.labs.worker", str(spec_path)],
                                cwd=str(work), stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=_worker_env(), start_new_session=True)
    try:
        return psutil.Process(pid)
    except psutil.NoSuchProcess:
        return None


def _ended(proc, timeout: float | None) -> bool:
    """Whether the worker ended within ``timeout`` (a Popen, or a psutil.Process of the zygote's
    child, which the zygote's kernel reaps)."""
    import psutil
    try:
        proc.wait(timeout=timeout)
    except (subprocess.TimeoutExpired, psutil.TimeoutExpired):
        return False
    except psutil.NoSuchProcess:
        pass
    return True


def _run_worker(spec_path: Path, work: Path, opts: Options,
                zygote: zygote_.Zygote | None = None) -> bool:
    """Run the worker to its end or to the wall-clock limit; kill its whole tree. Return killed."""
    import psutil
    proc, descendants, killed = None, [], False
    with open(work / "worker.log", "wb") as log:
        try:
            proc = _start_worker(spec_path, work, log, zygote)
            deadline = time.monotonic() + opts.submission_timeout
            next_scan = 0.0
            while proc is not None:
                now = time.monotonic()
                if now >= next_scan:  # a scan reads every /proc/*/stat: not ten times a second
                    next_scan = now + SCAN_EVERY
                    try:
                        descendants = list({*descendants,
                                            *psutil.Process(proc.pid).children(recursive=True)})
                    except psutil.Error:
                        pass
                if now > deadline:
                    killed = True
                    break
                if _ended(proc, 0.1):  # returns as soon as the worker ends
                    break
        finally:
            if proc is not None:
                sandbox.kill_tree(proc, descendants)  # bwrap's death ends its PID namespace
                _ended(proc, 30 if isinstance(proc, psutil.Process) else None)
    return killed


def _grade_one(row: Row, course_dir: Path, assignments: Assignments, isolation: sandbox.Isolation,
               hide: Sequence[Path], opts: Options, zygote: zygote_.Zygote | None = None) -> Row:
    t0 = time.monotonic()
    nbname, cells = assignments[row.assignment]
    missing = missing_package(Path(f"{nbname}.py"))
    if missing:  # not gradable on this interpreter: say why, grade nothing
        row.status, row.reason = "skipped", missing
        return row
    tmp = Path(tempfile.mkdtemp(prefix="labs-grade-"))
    with sandbox.reaped(tmp):  # the grader killed meanwhile: its worker and folder go too
        uid = sandbox.alloc_uid() if isolation.root else None
        try:
            os.chmod(tmp, 0o711)
            work, box = tmp / "work", tmp / "box"
            work.mkdir(mode=0o700)
            box.mkdir(mode=0o700)
            if uid is not None:
                os.chown(box, uid, uid)
            course = _throwaway_course(row, course_dir, nbname, work)
            spec_path, result = work / "spec.json", work / "result.jsonl"
            ray = runs_alone(Path(f"{nbname}.py"))
            # a chapter that starts a local Ray: its cells get nbval's budget, as in the corpus
            opts = dataclasses.replace(opts, timeout=cell_timeout(nbname, opts.timeout))
            source = _source(course_dir, row.assignment, nbname)
            GradeSpec(course=str(course), course_id=COURSE_ID, assignment=row.assignment,
                      student=row.student, notebook=nbname, timeout=opts.timeout,
                      iopub_timeout=opts.iopub_timeout, result=str(result),
                      nonce=secrets.token_hex(16), sandbox_spec=str(spec_path),
                      sandbox=sandbox.sandbox_spec(box, uid, opts, hide, ray=ray),
                      solution_names=_solution_names(course_dir, row.assignment, nbname, source),
                      plan="" if opts.run_all else _plan(course_dir, row.assignment, nbname, source),
                      ).write(spec_path)
            killed = _run_worker(spec_path, work, opts, zygote)
            leftovers = sandbox.kill_uid(uid) if uid is not None else 0
            score(row, cells, result, killed, work, opts)
            if leftovers:
                row.reason += f"; {leftovers} processes survived cleanup"
            graded = course / "autograded" / row.student / row.assignment / f"{nbname}.ipynb"
            if graded.exists():
                dest = Path(course_dir) / "autograded" / row.student / row.assignment
                dest.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(graded, dest / graded.name)
        except Exception as exc:  # never let one submission stop the batch
            row.status, row.reason = "error", f"grader error: {type(exc).__name__}: {exc}"
            if uid is not None:
                sandbox.kill_uid(uid)
        finally:
            if not os.environ.get("LABS_KEEP_TMP"):  # debugging aid: keep the throwaway dirs
                shutil.rmtree(tmp, ignore_errors=True)
            row.seconds = time.monotonic() - t0
    return row


def _write_gradebook(course_dir: Path, rows: list[Row], assignments: Assignments) -> None:
    import warnings

    from nbgrader.api import Gradebook
    from sqlalchemy.exc import SAWarning
    db_url = "sqlite:///" + str(Path(course_dir) / "gradebook.db")
    with Gradebook(db_url, COURSE_ID) as gb, warnings.catch_warnings():
        # nbgrader's update_or_create_submission trips a harmless SQLAlchemy autoflush warning
        warnings.simplefilter("ignore", SAWarning)
        for row in rows:
            if row.assignment not in assignments or row.status == "skipped":
                continue  # a skipped row was not graded: no zero goes into the gradebook
            nbname, cells = assignments[row.assignment]
            gb.update_or_create_student(row.student)
            gb.update_or_create_submission(row.assignment, row.student)
            for gid in cells:
                g = gb.find_grade(gid, nbname, row.assignment, row.student)
                g.auto_score = float(row.cells.get(gid, 0.0))
                g.needs_manual_grade = False
            gb.db.commit()


def grade(submissions_dir: str | os.PathLike[str], out: str | os.PathLike[str] = "grades.csv",
          course_dir: str | os.PathLike[str] = DEFAULT_COURSE_DIR, options: Options | None = None,
          hide: Iterable[str | os.PathLike[str]] = (), log: Callable[[str], object] = print,
          ray: str | None = None, resume: bool = True) -> list[Row]:
    """Autograde every submission under ``submissions_dir``; write CSV; return the rows.

    ``ray``: a Ray cluster's address (or ``"auto"``) to grade on, one task per submission
    (``labs.raygrade``); else ``options.jobs`` at a time on this machine. ``resume``: take the
    rows the journal already holds (``labs.journal``) and grade only the rest."""
    ensure_venv_on_path()
    opts = options or Options()
    course_dir = Path(course_dir).resolve()
    submissions_dir = Path(submissions_dir).resolve()
    if not submissions_dir.is_dir():
        raise LabError(f"{submissions_dir} is not a folder")
    assignments = _assignments(course_dir)
    hide_paths = [REPO, course_dir, submissions_dir, *map(Path, hide)]
    if ray is None:
        isolation = sandbox.detect_isolation(hide_paths, opts)  # raises LabError: never unsandboxed
        log(f"isolation: {isolation.description}")
    backup = _backup_gradebook(course_dir)
    log(f"gradebook backed up to {backup}")
    rows = _enumerate(submissions_dir, assignments)
    todo = [r for r in rows if r.path is not None]
    book = journal.Journal(course_dir / journal.JOURNAL_NAME, fresh=not resume)
    keys = _journal_keys(todo, course_dir, assignments, opts)
    pending = [r for r in todo if not _restore(r, book.get(keys[id(r)]))]
    where = f"on the Ray cluster at {ray}" if ray else f"{opts.jobs} at a time"
    log(f"grading {len(pending)} submission(s) ({len(todo) - len(pending)} already in the "
        f"journal, {len(rows) - len(todo)} not gradable), {where}, cell timeout {opts.timeout}s, "
        f"submission limit {opts.submission_timeout}s")
    t0 = time.monotonic()

    def finished(row: Row, slots: int, node: str = "") -> None:  # the driver, completion order
        book.record(keys[id(row)], dict(journal.row_fields(row), **({"node": node} if node else {})))
        if progress[0] is None:
            progress[0] = journal.Progress(len(todo), len(todo) - len(pending), slots, log)
        progress[0].update(f"{row.student}/{row.assignment}", row.status, row.seconds)

    progress: list[journal.Progress | None] = [None]
    try:
        if ray:
            from lab_snippets.labs import raygrade
            raygrade.grade_on_cluster(ray, pending, course_dir, assignments, opts, finished, log,
                                      _grade_one)
        elif pending:
            _grade_here(pending, course_dir, assignments, isolation, hide_paths, opts, finished, log)
    finally:
        if progress[0] is not None:
            progress[0].close()
    _write_gradebook(course_dir, rows, assignments)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["student", "assignment", "score", "max_score", "status", "reason"])
        for r in rows:
            w.writerow([r.student, r.assignment, f"{r.score:g}", f"{r.max_score:g}", r.status,
                        r.reason])
    _print_table(rows, log)
    log(f"{len(rows)} row(s) in {time.monotonic() - t0:.1f}s -> {out}")
    return rows


def _grade_here(pending: list[Row], course_dir: Path, assignments: Assignments,
                isolation: sandbox.Isolation, hide_paths: list[Path], opts: Options,
                finished: Callable[[Row, int], None], log: Callable[[str], object]) -> None:
    """``opts.jobs`` at a time on this machine, each forked by the run's zygote."""
    zygote, pool = None, concurrent.futures.ThreadPoolExecutor(max_workers=opts.jobs)
    try:
        if USE_ZYGOTE:
            try:
                zygote = zygote_.Zygote(_worker_env(), cwd=REPO)
            except OSError as exc:  # then a fresh worker each, as before
                log(f"note: no zygote ({exc}): a fresh worker process per submission")
        futures = [pool.submit(_grade_one, r, course_dir, assignments, isolation, hide_paths, opts,
                               zygote=zygote) for r in pending]
        for f in concurrent.futures.as_completed(futures):
            finished(f.result(), opts.jobs)
    finally:  # Ctrl-C: the queued submissions never start, the running ones end
        pool.shutdown(wait=True, cancel_futures=True)
        if zygote is not None:  # after the pool: no child of it is running
            zygote.close()
            if zygote.problem:
                log(f"note: the zygote forked {zygote.forked} worker(s), then failed "
                    f"({zygote.problem}); the others were started afresh")


def _journal_keys(todo: list[Row], course_dir: Path, assignments: Assignments,
                  opts: Options) -> dict[int, journal.Key]:
    """Each gradable row's journal key (by the row's id)."""
    versions = {a: journal.grading_version(
        (course_dir / "source" / a / f"{nbname}.ipynb").read_bytes(), opts)
        for a, (nbname, _) in assignments.items() if any(r.assignment == a for r in todo)}
    return {id(r): (r.student, r.assignment, journal.file_digest(r.path), versions[r.assignment])
            for r in todo if r.path is not None}


def _restore(row: Row, entry: dict | None) -> bool:
    """Fill ``row`` from its journal entry; False when there is none."""
    if entry is None:
        return False
    for name in ("score", "max_score", "status", "reason", "seconds", "cells"):
        setattr(row, name, entry[name])
    return True


def _print_table(rows: list[Row], log: Callable[[str], object]) -> None:
    ws = max([7] + [len(r.student) for r in rows])
    wa = max([10] + [len(r.assignment) for r in rows])
    log(f"{'student':<{ws}}  {'assignment':<{wa}}  {'score':>9}  {'status':<8}  {'time':>6}  "
        "reason")
    for r in rows:
        score = f"{r.score:g}/{r.max_score:g}"
        reason = r.reason if len(r.reason) <= 100 else r.reason[:97] + "..."
        log(f"{r.student:<{ws}}  {r.assignment:<{wa}}  {score:>9}  {r.status:<8}  "
            f"{r.seconds:5.1f}s  {reason}")



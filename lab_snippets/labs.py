"""Graded labs on nbgrader: release student versions, let students validate, grade safely.

    python -m lab_snippets.labs release [CHAPTERS...] [--course-dir DIR]
    python -m lab_snippets.labs validate NOTEBOOK [--timeout S]
    python -m lab_snippets.labs grade SUBMISSIONS_DIR --out grades.csv [--course-dir DIR]

Chapters mark exercises with light cell tags (``solution``, ``tests``, ``hidden-tests``,
``points-N``) and ``### BEGIN SOLUTION`` / ``### BEGIN HIDDEN TESTS`` regions.  ``release``
expands the tags into nbgrader's schema-v3 cell metadata (through nbgrader's own metadata
upgrader and validator) and runs nbgrader's ``generate_assignment``.  ``grade`` treats every
submission as hostile: see ``book/instructors.md`` for the safety model.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import csv
import json
import os
import re
import secrets
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS_DIR = REPO / "notebooks"
DEFAULT_COURSE_DIR = REPO / "build" / "labs"
COURSE_ID = "slime-labs"
SOLUTION_TAG, TESTS_TAG, HIDDEN_TAG = "solution", "tests", "hidden-tests"
BEGIN_SOLUTION, END_SOLUTION = "### BEGIN SOLUTION", "### END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
IGNORE = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "*.py", "*.py[co]",
          "*.bak", ".~*"]
MAX_SUBMISSION_BYTES = 20 * 1024 * 1024


def _ensure_venv_on_path():
    """nbgrader shells out to ``alembic``; make the venv's bin dir findable.

    Also skip jsonschema's optional ``rfc3987_syntax`` import (≈1 s of CPU, only used for
    the "iri" string format, which notebooks never use).
    """
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)
    bindir = str(Path(sys.executable).parent)
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")


class LabError(Exception):
    """A problem with a chapter's markers or the course directory (shown to the user)."""


# --------------------------------------------------------------------------------------
# Reading chapters and expanding the markers
# --------------------------------------------------------------------------------------

def read_notebook(path):
    """Read a ``.py`` (jupytext percent) or ``.ipynb`` notebook."""
    import nbformat
    path = Path(path)
    if path.suffix == ".py":
        import jupytext
        return jupytext.read(path, fmt="py:percent")
    return nbformat.read(path, as_version=4)


def _tags(cell):
    return set(cell.get("metadata", {}).get("tags", []))


def has_solution(path):
    try:
        return any(SOLUTION_TAG in _tags(c) for c in read_notebook(path).cells)
    except Exception:
        return False


def chapters_with_solutions(notebooks_dir=NOTEBOOKS_DIR):
    return [p for p in sorted(Path(notebooks_dir).glob("*.py")) if has_solution(p)]


def _points(tags):
    for tag in tags:
        m = re.fullmatch(r"points-(\d+(?:\.\d+)?)", tag)
        if m:
            return float(m.group(1))
    return 1.0


def _first_def(source):
    try:
        for node in ast.parse(source).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                return node.name
    except SyntaxError:
        pass
    return None


def _region(source, begin, end):
    """Lines strictly inside begin/end markers (all regions of a cell)."""
    lines, inside = [], False
    for line in source.splitlines():
        s = line.strip()
        if s == begin:
            inside = True
        elif s == end:
            inside = False
        elif inside:
            lines.append(line)
    return lines


def _check_markers(cell, begin, end, where):
    src = cell.source
    n_begin = sum(1 for ln in src.splitlines() if ln.strip() == begin)
    n_end = sum(1 for ln in src.splitlines() if ln.strip() == end)
    if n_begin == 0 or n_begin != n_end:
        raise LabError(f"{where}: needs matching '{begin}' / '{end}' lines "
                       f"(found {n_begin} / {n_end})")


def mark_notebook(nb, name="notebook"):
    """Expand the light tags into nbgrader metadata, in place; return the notebook.

    The role of each cell (solution / graded test / read-only) is given to nbgrader as its
    minimal flags; nbgrader's own ``MetadataValidatorV3.upgrade_cell_metadata`` fills in
    the full schema-v3 record and ``validate_cell`` / ``validate_nb`` check it.
    """
    from nbgrader.nbgraderformat import MetadataValidator

    validator = MetadataValidator()
    used, last_solution, n_solutions = set(), None, 0

    def unique(gid):
        gid = re.sub(r"[^A-Za-z0-9_\-]", "_", gid)
        out, k = gid, 2
        while out in used:
            out, k = f"{gid}_{k}", k + 1
        used.add(out)
        return out

    for i, cell in enumerate(nb.cells):
        tags = _tags(cell)
        where = f"{name} cell {i}"
        cell.metadata.pop("nbgrader", None)
        if SOLUTION_TAG in tags:
            if cell.cell_type != "code":
                raise LabError(f"{where}: a 'solution' cell must be a code cell")
            _check_markers(cell, BEGIN_SOLUTION, END_SOLUTION, where)
            n_solutions += 1
            last_solution = _first_def(cell.source) or f"exercise_{n_solutions}"
            flags = {"solution": True, "grade_id": unique(last_solution)}
        elif TESTS_TAG in tags:
            if cell.cell_type != "code":
                raise LabError(f"{where}: a 'tests' cell must be a code cell")
            base = last_solution or "exercise"
            if HIDDEN_TAG in tags:
                _check_markers(cell, BEGIN_HIDDEN, END_HIDDEN, where)
                gid = unique(f"{base}_hidden_tests")
            else:
                gid = unique(f"{base}_tests")
            flags = {"grade": True, "points": _points(tags), "grade_id": gid}
        elif HIDDEN_TAG in tags:
            raise LabError(f"{where}: 'hidden-tests' cells must also be tagged 'tests'")
        else:
            flags = {"locked": True, "grade_id": unique(f"{cell.cell_type}_{i:02d}")}
        cell.metadata["nbgrader"] = flags
        validator.upgrade_cell_metadata(cell)
        validator.validate_cell(cell)
    if n_solutions == 0:
        raise LabError(f"{name}: no cell tagged 'solution'")
    validator.validate_nb(nb)
    return nb


def _kernelspec():
    from jupyter_client.kernelspec import KernelSpecManager
    spec = KernelSpecManager().get_kernel_spec("python3")
    return {"name": "python3", "display_name": spec.display_name, "language": spec.language}


def build_source(chapter, course_dir):
    """Write ``source/<stem>/<stem>.ipynb`` (instructor version with nbgrader metadata)."""
    import nbformat
    chapter = Path(chapter)
    stem = chapter.stem
    nb = read_notebook(chapter)
    nb.metadata.pop("jupytext", None)
    nb.metadata["kernelspec"] = _kernelspec()
    mark_notebook(nb, chapter.name)
    out = Path(course_dir) / "source" / stem / f"{stem}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out)
    return out


def nbgrader_config(course_dir, timeout=30):
    from traitlets.config import Config
    c = Config()
    c.CourseDirectory.root = str(course_dir)
    c.CourseDirectory.course_id = COURSE_ID
    c.CourseDirectory.ignore = list(IGNORE)
    c.CourseDirectory.db_url = "sqlite:///" + str(Path(course_dir) / "gradebook.db")
    c.GenerateAssignment.create_assignment = True
    c.Execute.timeout = timeout
    c.Execute.raise_on_iopub_timeout = False
    return c


CONFIG_TEMPLATE = '''\
# Generated by `python -m lab_snippets.labs release`; regenerated on every release.
# Lets instructors use the nbgrader CLI / formgrader on this course directory directly.
# Grade untrusted submissions with `python -m lab_snippets.labs grade`, not `nbgrader
# autograde`: plain nbgrader runs student code with your privileges.
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = {course_id!r}
c.CourseDirectory.ignore = {ignore!r}
c.Execute.timeout = 30
c.Execute.raise_on_iopub_timeout = False
# Feedback (`nbgrader generate_feedback`): a failing hidden test shows its message (the property
# that broke and the idea to revisit), never its code or a traceback quoting it.
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "lab_snippets.feedback.HideTestCode",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]
'''


def _secret_lines(nb):
    """Solution and hidden-test lines that must not appear in a student version."""
    secret, public = set(), set()
    for cell in nb.cells:
        src = cell.source
        if SOLUTION_TAG in _tags(cell):
            secret.update(_region(src, BEGIN_SOLUTION, END_SOLUTION))
        if HIDDEN_TAG in _tags(cell):
            secret.update(_region(src, BEGIN_HIDDEN, END_HIDDEN))
        hidden = set(_region(src, BEGIN_SOLUTION, END_SOLUTION)) | set(
            _region(src, BEGIN_HIDDEN, END_HIDDEN))
        public.update(ln for ln in src.splitlines() if ln not in hidden)
    return {ln.strip() for ln in secret if ln.strip() and ln not in public
            and ln.strip() not in {s.strip() for s in public} and not ln.strip().startswith("#")}


def check_release(chapter, release_dir):
    """Raise LabError if a released assignment leaks solutions, hidden tests or sources."""
    release_dir = Path(release_dir)
    files = [p for p in release_dir.rglob("*") if p.is_file()]
    stray = [p.name for p in files if p.suffix != ".ipynb"]
    if stray:
        raise LabError(f"release {release_dir} contains non-notebook files: {stray}")
    secret = _secret_lines(read_notebook(chapter))
    for p in files:
        text = "\n".join(c.source for c in read_notebook(p).cells)
        for marker in (BEGIN_SOLUTION, BEGIN_HIDDEN, END_SOLUTION, END_HIDDEN):
            if marker in text:
                raise LabError(f"{p}: still contains {marker!r}")
        lines = {ln.strip() for ln in text.splitlines()}
        leaked = sorted(secret & lines)
        if leaked:
            raise LabError(f"{p}: leaks solution/hidden-test lines: {leaked[:3]}")


def _resolve_chapter(arg, notebooks_dir=NOTEBOOKS_DIR):
    p = Path(arg)
    if p.suffix == ".py" and p.exists():
        return p.resolve()
    cand = Path(notebooks_dir) / (p.stem + ".py")
    if cand.exists():
        return cand.resolve()
    raise LabError(f"no chapter {arg!r} (looked for {p} and {cand})")


def release(chapters=None, course_dir=DEFAULT_COURSE_DIR, notebooks_dir=NOTEBOOKS_DIR,
            log=print):
    """Build the nbgrader course dir and the student versions; return released paths."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    _ensure_venv_on_path()
    course_dir = Path(course_dir).resolve()
    if chapters:
        paths = [_resolve_chapter(c, notebooks_dir) for c in chapters]
    else:
        paths = chapters_with_solutions(notebooks_dir)
        if not paths:
            log(f"no chapters with a 'solution' cell in {notebooks_dir}; nothing to release")
            return []
    course_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(course_dir, 0o700)  # sources and gradebook: instructor only
    (course_dir / "nbgrader_config.py").write_text(
        CONFIG_TEMPLATE.format(course_id=COURSE_ID, ignore=IGNORE))
    config = nbgrader_config(course_dir)
    api = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)
    released = []
    for chapter in paths:
        stem = chapter.stem
        src = build_source(chapter, course_dir)
        t0 = time.monotonic()
        result = api.generate_assignment(stem, force=True)
        if not result.get("success"):
            raise LabError(f"nbgrader generate_assignment {stem} failed:\n"
                           f"{result.get('error') or result.get('log')}")
        rel_dir = course_dir / "release" / stem
        check_release(chapter, rel_dir)
        out = rel_dir / f"{stem}.ipynb"
        released.append(out)
        log(f"released {stem}: {out}  (source {src.relative_to(course_dir)}, "
            f"{time.monotonic() - t0:.1f}s)")
    return released


# --------------------------------------------------------------------------------------
# validate: what a student runs
# --------------------------------------------------------------------------------------

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
    from lab_snippets._grade_worker import failure_message
    return failure_message(cell.get("outputs", []))


@dataclass
class TestResult:
    """The verdict on one graded test cell of an executed notebook."""
    index: int
    name: str
    points: float
    hidden: bool
    failure: str | None  # the message a student sees; None when the test passed
    run: bool = True     # False for a hidden-test cell whose hidden part was removed

    @property
    def passed(self):
        return self.run and self.failure is None

    @property
    def score(self):
        return self.points if self.passed else 0.0


@dataclass
class LabRun:
    """An executed notebook and the verdict on each of its test cells."""
    nb: object
    tests: list
    restarted: list
    dead: str | None
    seconds: float
    unimplemented: bool

    @property
    def score(self):
        return sum(t.score for t in self.tests if t.run)

    @property
    def max_score(self):
        return sum(t.points for t in self.tests if t.run)


def run_tests(nb, cwd, timeout=30, quiet_kernel=False):
    """Execute ``nb`` top to bottom in a fresh kernel (working folder ``cwd``) and judge its tests.

    The one code path that runs tests outside the sandbox: ``validate`` reports it to a student,
    and ``lab_snippets.corpus`` grades the wrong-solution corpus with it.  A test cell passes
    when it raised nothing and wrote nothing to stderr, which is how nbgrader's
    ``determine_grade`` scores a graded code cell in ``grade``; a failure is described by
    ``_grade_worker.failure_message``, the function ``grade`` uses for its reasons too.
    """
    _ensure_venv_on_path()
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError
    from nbformat.v4 import new_output

    from lab_snippets._grade_worker import RecoveringMixin

    class Client(RecoveringMixin, NotebookClient):
        pass

    failed_replies = {}

    def on_executed(cell, cell_index, execute_reply):
        content = execute_reply.get("content", {})
        if content.get("status") == "error":
            failed_replies[cell_index] = f"{content.get('ename')}: {content.get('evalue', '')}"

    client = Client(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                    raise_on_iopub_timeout=False, interrupt_on_timeout=True, iopub_timeout=4,
                    resources={"metadata": {"path": str(cwd)}},
                    on_cell_executed=on_executed,
                    error_on_timeout={"ename": "CellTimeoutError",
                                      "evalue": f"cell ran longer than {timeout}s",
                                      "traceback": [f"cell ran longer than {timeout}s"]})
    t0 = time.monotonic()
    dead = None
    restarted = []
    # quiet_kernel: the kernel's own stderr (ipykernel's start-up warnings) goes to /dev/null
    launch = {"stderr": subprocess.DEVNULL} if quiet_kernel else {}
    with client.setup_kernel(**launch):
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            if dead:
                cell.outputs = [new_output("error", ename="KernelDied", evalue=dead,
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
                if client.after_cell(cell, i):
                    restarted.append(i)
            except DeadKernelError as exc:
                cell.outputs.append(new_output("error", ename="KernelDied",
                                               evalue=f"the kernel died in this cell ({exc})",
                                               traceback=[]))
                try:
                    client.restart_and_replay(i)
                    restarted.append(i)
                except Exception as exc2:
                    dead = f"the kernel died while running cell {i} ({exc2})"
    unimplemented = any(SOLUTION_TAG in _tags(c) or c.metadata.get("nbgrader", {}).get("solution")
                        for c in nb.cells if "NotImplementedError" in str(c.get("outputs")))
    results = []
    for i, name, pts, hidden in _test_cells(nb):
        code = [ln for ln in nb.cells[i].source.splitlines()
                if ln.strip() and not ln.strip().startswith("#")]
        if hidden and not code:
            results.append(TestResult(i, name, pts, hidden, None, run=False))
            continue
        results.append(TestResult(i, name, pts, hidden, _cell_failure(nb.cells[i])))
    return LabRun(nb, results, restarted, dead, time.monotonic() - t0, unimplemented)


def validate(notebook, timeout=30, log=print):
    """Run a notebook top to bottom and report each visible test; return (passed, total)."""
    path = Path(notebook).resolve()
    nb = read_notebook(path)
    if path.suffix == ".py":
        nb.metadata["kernelspec"] = _kernelspec()
    if not _test_cells(nb):
        log(f"{path.name}: no test cells found")
        return 0, 0
    run = run_tests(nb, path.parent, timeout=timeout)
    passed = points = max_points = 0
    log(f"Validating {path.name} (per-cell timeout {timeout}s)")
    counted = 0
    for t in run.tests:
        if not t.run:
            log(f"  ----  {t.name}  ({t.points:g} pt): hidden tests, run only when the lab is graded")
            continue
        counted += 1
        max_points += t.points
        label = f"{t.name}{' [hidden]' if t.hidden else ''}"
        if t.passed:
            passed += 1
            points += t.points
            log(f"  PASS  {label}  ({t.points:g} pt)")
        else:
            log(f"  FAIL  {label}  ({t.points:g} pt): {t.failure}")
    log(f"{passed}/{counted} tests passed, {points:g}/{max_points:g} points "
        f"({run.seconds:.1f}s)")
    if run.unimplemented:
        log("hint: a solution cell still raises NotImplementedError - replace it with your code")
    if run.restarted:
        log(f"note: cell(s) {', '.join(map(str, run.restarted))} blocked the event loop or killed the "
            "kernel; it was restarted and the cells before them re-run")
    if run.dead:
        log(f"note: {run.dead}; later cells were not run")
    return passed, counted


# --------------------------------------------------------------------------------------
# grade: trusted orchestration
# --------------------------------------------------------------------------------------

@dataclass
class Row:
    student: str
    assignment: str
    score: float = 0.0
    max_score: float = 0.0
    status: str = "ok"
    reason: str = ""
    seconds: float = 0.0
    path: Path | None = None
    cells: dict = field(default_factory=dict)


@dataclass
class Isolation:
    root: bool
    mounts: bool
    description: str


def _assignments(course_dir):
    """{assignment: (notebook name, {grade_id: max_score})} from the master gradebook."""
    from nbgrader.api import Gradebook
    db = Path(course_dir) / "gradebook.db"
    if not db.exists():
        raise LabError(f"{db} not found: run `python -m lab_snippets.labs release` first")
    out = {}
    with Gradebook("sqlite:///" + str(db), COURSE_ID) as gb:
        for a in gb.assignments:
            for n in a.notebooks:
                out[a.name] = (n.name, {g.name: g.max_score for g in n.grade_cells})
    return out


def _backup_gradebook(course_dir):
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


_uid_lock = threading.Lock()
_uid_next = [1_900_000 + (os.getpid() * 211) % 50_000]


def _alloc_uid():
    import psutil
    with _uid_lock:
        while True:
            uid = _uid_next[0]
            _uid_next[0] += 1
            busy = False
            for p in psutil.process_iter(["uids"]):
                try:
                    if p.info["uids"] and p.info["uids"].real == uid:
                        busy = True
                        break
                except Exception:
                    pass
            if not busy:
                return uid


def _kill_uid(uid):
    """Kill every process of a per-submission uid (fork bombs included)."""
    import psutil
    for _ in range(50):
        pid = os.fork()
        if pid == 0:  # child: become the uid and kill(-1): every process of that uid
            try:
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        left = [p for p in psutil.process_iter(["uids"])
                if p.info["uids"] and p.info["uids"].real == uid]
        if not left:
            return 0
        time.sleep(0.05)
    return len(left)


def _kill_tree(proc, descendants):
    for p in [proc, *descendants]:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            p.kill()
        except Exception:
            pass


def _sandbox_spec(box, uid, isolation, hide, opts):
    spec = {"box": str(box), "uid": uid, "gid": uid,
            "rlimits": {"cpu": int(opts.submission_timeout) + 5,
                        "as": int(opts.memory_mb) * 1024 * 1024,
                        "fsize": 64 * 1024 * 1024, "nofile": 256, "core": 0,
                        "nproc": opts.max_procs if isolation.root else None}}
    if isolation.mounts:
        spec.update(mounts=True, no_network=True,
                    hide=sorted(([str(p), "0755"] for p in hide), key=lambda x: len(x[0]))
                    + [["/root", "0755"], ["/tmp", "1777"], ["/var/tmp", "1777"],
                       ["/dev/shm", "1777"]],
                    expose=[[os.path.realpath(sys.base_prefix), True],
                            [os.path.realpath(sys.prefix), True],
                            # the chapters' helper package (library code, no tests in it)
                            [str(REPO / "lab_snippets"), True], [str(box), False]])
    return spec


def detect_isolation(hide, opts):
    """Find out (by trying) which isolation layers this machine allows."""
    if os.geteuid() != 0:
        return Isolation(False, False,
                         f"NOT ISOLATED BY USER: running as uid {os.geteuid()} (not root), so "
                         "submissions run as the grader's own user. In force: separate process "
                         "group, per-cell and per-submission time limits, rlimits (CPU, address "
                         "space, file size, open files). Hidden tests and files readable by "
                         "your user are NOT protected from submissions; grade as root.")
    tmp = Path(tempfile.mkdtemp(prefix="labs-probe-"))
    try:
        os.chmod(tmp, 0o711)
        uid = _alloc_uid()
        box = tmp / "box"
        box.mkdir(mode=0o700)
        os.chown(box, uid, uid)
        for mounts in (True, False):
            iso = Isolation(True, mounts, "")
            spec_path = tmp / "probe.json"
            spec_path.write_text(json.dumps(_sandbox_spec(box, uid, iso, hide, opts)))
            r = subprocess.run([sys.executable, "-m", "lab_snippets._grade_worker", "probe",
                                str(spec_path)], capture_output=True, text=True, cwd=REPO,
                               timeout=60)
            try:
                info = json.loads(r.stdout.strip().splitlines()[-1])
            except Exception:
                info = {"ok": False, "error": r.stderr[-300:]}
            if info.get("ok") and (not mounts or info.get("hidden_empty")):
                iso.description = ("per-submission unprivileged uid (no passwd entry, no "
                                   "groups) + " + "; ".join(info["applied"][1:]))
                if not mounts:
                    iso.description += ("; mount namespaces unavailable, so files "
                                        "readable by everyone (e.g. notebooks/*.py) are "
                                        "readable by submissions")
                return iso
        raise LabError("cannot build a sandbox on this machine: " + info.get("error", "?"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _enumerate(submissions_dir, assignments):
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
            except (ValueError, UnicodeDecodeError) as exc:
                row.status = "invalid"
                row.reason = f"malformed notebook {want.name}: {str(exc)[:120]}"
                continue
            row.path = want
    return rows


def _solution_names(course_dir, assignment, nbname):
    """Top-level names the reference solution cells bind (students may rebind them)."""
    from lab_snippets._grade_worker import defined_names
    nb = read_notebook(Path(course_dir) / "source" / assignment / f"{nbname}.ipynb")
    return sorted({n for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")
                   for n in defined_names(c.source)})


def _grade_one(row, course_dir, assignments, isolation, hide, opts):
    t0 = time.monotonic()
    nbname, cells = assignments[row.assignment]
    tmp = Path(tempfile.mkdtemp(prefix="labs-grade-"))
    uid = _alloc_uid() if isolation.root else None
    proc, descendants, killed = None, [], False
    try:
        os.chmod(tmp, 0o711)
        work, box = tmp / "work", tmp / "box"
        work.mkdir(mode=0o700)
        box.mkdir(mode=0o700)
        if uid is not None:
            os.chown(box, uid, uid)
        course = work / "course"
        (course / "source" / row.assignment).mkdir(parents=True)
        shutil.copy2(Path(course_dir) / "source" / row.assignment / f"{nbname}.ipynb",
                     course / "source" / row.assignment)
        sub = course / "submitted" / row.student / row.assignment
        sub.mkdir(parents=True)
        shutil.copyfile(row.path, sub / f"{nbname}.ipynb")
        src, dst = sqlite3.connect(Path(course_dir) / "gradebook.db"), \
            sqlite3.connect(course / "gradebook.db")
        with dst:
            src.backup(dst)
        src.close()
        dst.close()
        sandbox = work / "sandbox.json"
        sandbox.write_text(json.dumps(_sandbox_spec(box, uid, isolation, hide, opts)))
        result = work / "result.jsonl"
        spec = {"course": str(course), "course_id": COURSE_ID, "assignment": row.assignment,
                "student": row.student, "notebook": nbname, "timeout": opts.timeout,
                "iopub_timeout": opts.iopub_timeout, "result": str(result),
                "nonce": secrets.token_hex(16), "box": str(box), "uid": uid,
                "solution_names": _solution_names(course_dir, row.assignment, nbname),
                "gid": uid, "sandbox_spec": str(sandbox)}
        spec_path = work / "spec.json"
        spec_path.write_text(json.dumps(spec))
        log = open(work / "worker.log", "wb")
        env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONDONTWRITEBYTECODE="1")
        proc = subprocess.Popen([sys.executable, "-m", "lab_snippets._grade_worker",
                                 "autograde", str(spec_path)], cwd=str(work), stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                start_new_session=True)
        deadline = time.monotonic() + opts.submission_timeout
        import psutil
        while proc.poll() is None:
            try:
                descendants = list({*descendants,
                                    *psutil.Process(proc.pid).children(recursive=True)})
            except psutil.Error:
                pass
            if time.monotonic() > deadline:
                killed = True
                break
            time.sleep(0.1)
        _kill_tree(proc, descendants)
        proc.wait()
        log.close()
        leftovers = _kill_uid(uid) if uid is not None else 0
        _score(row, cells, result, killed, work, opts)
        if leftovers:
            row.reason += f"; {leftovers} processes survived cleanup"
        graded = course / "autograded" / row.student / row.assignment / f"{nbname}.ipynb"
        if graded.exists():
            dest = Path(course_dir) / "autograded" / row.student / row.assignment
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(graded, dest / graded.name)
    except Exception as exc:  # never let one submission stop the batch
        row.status, row.reason = "error", f"grader error: {type(exc).__name__}: {exc}"
        if proc is not None:
            _kill_tree(proc, descendants)
        if uid is not None:
            _kill_uid(uid)
    finally:
        if not os.environ.get("LABS_KEEP_TMP"):  # debugging aid: keep the throwaway dirs
            shutil.rmtree(tmp, ignore_errors=True)
        row.seconds = time.monotonic() - t0
    return row


def _score(row, cells, result, killed, work, opts):
    records = []
    if result.exists():
        for line in result.read_text().splitlines():
            try:
                records.append(json.loads(line))
            except ValueError:
                pass
    final = next((r for r in records if r.get("kind") == "final"), None)
    seen = {r["grade_id"]: r for r in records if r.get("kind") == "cell"}
    scores = {}
    for gid in cells:
        if final and gid in final["scores"]:
            scores[gid] = float(final["scores"][gid][0])
        elif gid in seen:
            scores[gid] = float(seen[gid]["score"])
        else:
            scores[gid] = 0.0
    row.cells = scores
    row.score = sum(scores.values())
    passed = sum(1 for gid in cells if scores[gid] >= cells[gid] > 0)
    notes = [f"{passed}/{len(cells)} tests passed"]
    timed = [r["cell"] for r in records if r.get("kind") == "cell_timeout"]
    timed += [g for g, r in seen.items() if r.get("timed_out")]
    restored = sorted({x for r in seen.values() for x in r.get("restored") or []})
    guard = sorted({r["guard_problem"] for r in seen.values() if r.get("guard_problem")})
    dead = next((r["kernel_dead"] for r in seen.values() if r.get("kernel_dead")), None)
    restarts = [r["cell"] for r in records if r.get("kind") == "restart"]
    died = [r["what"] for r in records if r.get("kind") == "died"]
    failed = [f"{g}: {seen[g]['reason']}" for g in cells
              if g in seen and scores[g] < cells[g] and seen[g].get("reason")
              and not seen[g].get("timed_out")]
    status = "ok"
    if failed:
        notes.append("failed " + "; ".join(failed[:3]))
    if restored or guard:
        status = "tampered"
        if restored:
            notes.append("tampering undone before tests: " + ", ".join(restored[:6]))
        notes.extend(guard)
    if died:
        status = "crashed"
        notes.append("; ".join(died) + "; restarted, earlier cells replayed, rest graded")
    if dead:
        status = "crashed"
        notes.append(dead)
    if timed:
        status = "timeout"
        notes.append(f"per-cell timeout ({opts.timeout}s) in: {', '.join(timed)}")
    if restarts:
        notes.append(f"kernel stuck after a timeout, restarted and earlier cells replayed "
                     f"({len(restarts)}x)")
    if killed:
        status = "timeout"
        missing = [g for g in cells if g not in seen]
        notes.append(f"submission wall-clock limit ({opts.submission_timeout}s) hit; killed"
                     + (f"; not run: {', '.join(missing)}" if missing else ""))
    elif final is None and not seen:
        status = "error"
        tail = ""
        logf = work / "worker.log"
        if logf.exists():
            lines = [ln for ln in logf.read_text(errors="replace").splitlines()
                     if "ERROR" in ln or "Error" in ln]
            tail = lines[-1][:200] if lines else ""
        notes.append("nbgrader could not grade the notebook" + (f": {tail}" if tail else ""))
    row.status = status
    row.reason = "; ".join(notes)


def _write_gradebook(course_dir, rows, assignments):
    import warnings

    from nbgrader.api import Gradebook
    from sqlalchemy.exc import SAWarning
    db_url = "sqlite:///" + str(Path(course_dir) / "gradebook.db")
    with Gradebook(db_url, COURSE_ID) as gb, warnings.catch_warnings():
        # nbgrader's update_or_create_submission trips a harmless SQLAlchemy autoflush warning
        warnings.simplefilter("ignore", SAWarning)
        for row in rows:
            if row.assignment not in assignments:
                continue
            nbname, cells = assignments[row.assignment]
            gb.update_or_create_student(row.student)
            gb.update_or_create_submission(row.assignment, row.student)
            for gid in cells:
                g = gb.find_grade(gid, nbname, row.assignment, row.student)
                g.auto_score = float(row.cells.get(gid, 0.0))
                g.needs_manual_grade = False
            gb.db.commit()


class Options:
    def __init__(self, timeout=30, submission_timeout=300, jobs=None, memory_mb=2048,
                 max_procs=128, iopub_timeout=4):
        self.timeout = timeout
        self.submission_timeout = submission_timeout
        self.jobs = jobs or max(1, min(4, os.cpu_count() or 1))
        self.memory_mb = memory_mb
        self.max_procs = max_procs
        self.iopub_timeout = iopub_timeout


def grade(submissions_dir, out="grades.csv", course_dir=DEFAULT_COURSE_DIR, options=None,
          hide=(), log=print):
    """Autograde every submission under ``submissions_dir``; write CSV; return the rows."""
    _ensure_venv_on_path()
    opts = options or Options()
    course_dir = Path(course_dir).resolve()
    submissions_dir = Path(submissions_dir).resolve()
    if not submissions_dir.is_dir():
        raise LabError(f"{submissions_dir} is not a folder")
    assignments = _assignments(course_dir)
    hide_paths = [REPO, course_dir, submissions_dir, *map(Path, hide)]
    isolation = detect_isolation(hide_paths, opts)
    log(f"isolation: {isolation.description}")
    backup = _backup_gradebook(course_dir)
    log(f"gradebook backed up to {backup}")
    rows = _enumerate(submissions_dir, assignments)
    todo = [r for r in rows if r.path is not None]
    log(f"grading {len(todo)} submission(s) ({len(rows) - len(todo)} not gradable), "
        f"{opts.jobs} at a time, cell timeout {opts.timeout}s, "
        f"submission limit {opts.submission_timeout}s")
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        list(pool.map(lambda r: _grade_one(r, course_dir, assignments, isolation,
                                           hide_paths, opts), todo))
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


def _print_table(rows, log):
    ws = max([7] + [len(r.student) for r in rows])
    wa = max([10] + [len(r.assignment) for r in rows])
    log(f"{'student':<{ws}}  {'assignment':<{wa}}  {'score':>9}  {'status':<8}  {'time':>6}  "
        "reason")
    for r in rows:
        score = f"{r.score:g}/{r.max_score:g}"
        reason = r.reason if len(r.reason) <= 100 else r.reason[:97] + "..."
        log(f"{r.student:<{ws}}  {r.assignment:<{wa}}  {score:>9}  {r.status:<8}  "
            f"{r.seconds:5.1f}s  {reason}")


# --------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------

def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m lab_snippets.labs", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("release", help="build the nbgrader course and the student versions")
    r.add_argument("chapters", nargs="*", help="chapter .py files or stems (default: all "
                   "notebooks/*.py with a solution cell)")
    r.add_argument("--course-dir", default=str(DEFAULT_COURSE_DIR))
    v = sub.add_parser("validate", help="run a notebook and check it against its tests")
    v.add_argument("notebook")
    v.add_argument("--timeout", type=int, default=30, help="per-cell timeout in seconds")
    g = sub.add_parser("grade", help="autograde SUBMISSIONS_DIR/<student>/<assignment>/")
    g.add_argument("submissions_dir")
    g.add_argument("--out", default="grades.csv")
    g.add_argument("--course-dir", default=str(DEFAULT_COURSE_DIR))
    g.add_argument("--timeout", type=int, default=30, help="per-cell timeout (s), default 30")
    g.add_argument("--submission-timeout", type=int, default=300,
                   help="hard wall-clock limit per submission (s), default 300")
    g.add_argument("--jobs", type=int, default=None, help="submissions graded in parallel")
    g.add_argument("--memory-mb", type=int, default=2048, help="address-space limit per kernel")
    g.add_argument("--hide", action="append", default=[],
                   help="extra path to hide from submissions (repeatable)")
    args = p.parse_args(argv)
    try:
        if args.cmd == "release":
            release(args.chapters or None, course_dir=args.course_dir)
        elif args.cmd == "validate":
            passed, total = validate(args.notebook, timeout=args.timeout)
            return 0 if total and passed == total else 1  # exit code for students / CI
        else:
            opts = Options(timeout=args.timeout, submission_timeout=args.submission_timeout,
                           jobs=args.jobs, memory_mb=args.memory_mb)
            grade(args.submissions_dir, out=args.out, course_dir=args.course_dir,
                  options=opts, hide=args.hide)
    except LabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

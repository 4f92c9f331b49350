"""Names every part of the labs tooling shares: paths, the course id, the cell tags, the error type."""

from __future__ import annotations

import ast
import os
import sys
import threading
from pathlib import Path

from lab_snippets import REPO_ROOT as REPO

NOTEBOOKS_DIR = REPO / "notebooks"
DEFAULT_COURSE_DIR = REPO / "build" / "labs"
COURSE_ID = "slime-labs"
SOLUTION_TAG, TESTS_TAG, HIDDEN_TAG = "solution", "tests", "hidden-tests"
BEGIN_SOLUTION, END_SOLUTION = "### BEGIN SOLUTION", "### END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
IGNORE = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "*.py", "*.py[co]",
          "*.bak", ".~*"]
MAX_SUBMISSION_BYTES = 20 * 1024 * 1024
# Seconds per cell for a chapter that starts a local Ray (``book.chapters.runs_alone``), in the
# grader and the corpus as under nbval (pyproject.toml): ``raylab.START_BUDGET`` fits inside it.
RAY_CELL_TIMEOUT = 60


def cell_timeout(chapter: str | os.PathLike[str], timeout: int) -> int:
    """The per-cell timeout for ``chapter`` (its number, or a notebook's name or path, ``.py`` or
    ``.ipynb``): ``timeout``, or at least ``RAY_CELL_TIMEOUT`` for a chapter that starts a local Ray."""
    from lab_snippets.book.chapters import runs_alone

    if not (isinstance(chapter, str) and chapter.isdigit()):
        chapter = Path(Path(chapter).stem + ".py")
    return max(timeout, RAY_CELL_TIMEOUT) if runs_alone(chapter) else timeout


def ensure_venv_on_path():
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




def kernelspec():
    from jupyter_client.kernelspec import KernelSpecManager
    spec = KernelSpecManager().get_kernel_spec("python3")
    return {"name": "python3", "display_name": spec.display_name, "language": spec.language}




FAILURE_CHARS = 600


def is_solution_cell(cell) -> bool:
    """A cell the student writes: tagged ``solution`` or marked so in nbgrader's metadata."""
    tags = cell.get("metadata", {}).get("tags", [])
    return SOLUTION_TAG in tags or bool(cell.get("metadata", {}).get("nbgrader", {}).get("solution"))


def infrastructure_failure(cell) -> str | None:
    """Why a course cell failed for a reason no submission causes, or None.

    One such reason is known: Ray did not start (the cell raised ``raylab.RayStartError``, or the
    cell that calls ``raylab.start`` ran out of time). The tests after it then fail for want of
    the cluster (a ``NameError`` after a timeout), which says nothing about the submission. The
    callers ask only of a course cell that ran before any submission cell did, so a submission
    cannot raise a look-alike error to escape its grade.
    """
    for o in cell.get("outputs", []):
        if o.get("output_type") != "error":
            continue
        ename, evalue = o.get("ename"), " ".join(str(o.get("evalue") or "").split())
        if ename == "RayStartError":
            text = f"Ray did not start ({evalue})"
        elif ename == "CellTimeoutError" and "raylab.start(" in cell.get("source", ""):
            text = f"Ray did not start: the cell that starts it ran out of time ({evalue})"
        else:
            continue
        return text if len(text) <= FAILURE_CHARS else text[:FAILURE_CHARS - 3] + "..."
    return None


def failure_message(outputs):
    """What a student is told about a failed test cell, or None if it passed; never the test's code.

    ``validate`` (through ``run_tests``) and ``grade`` (the reason of each row) both call it. The
    hidden tests carry their teaching in the assertion message (the property that failed and the
    idea to revisit), so an ``AssertionError`` is shown as its message alone; any other error as
    ``Name: message``. The traceback, which quotes the test's source lines, is never shown.
    """
    for o in outputs:  # an error says more than stderr written before it
        if o.get("output_type") == "error":
            ename, evalue = o.get("ename") or "Error", str(o.get("evalue") or "").strip()
            if ename == "AssertionError":
                text = evalue or "a check failed (the test gave no message)"
            else:
                text = f"{ename}: {evalue}" if evalue else ename
            return text if len(text) <= FAILURE_CHARS else text[:FAILURE_CHARS - 3] + "..."
    for o in outputs:
        if o.get("output_type") == "stream" and o.get("name") == "stderr":
            return ("wrote to stderr (nbgrader scores that as a failure): "
                    + str(o.get("text", "")).strip()[:120])
    return None


# CPython 3.11.7 failed ``ast.parse`` run by two threads at once ("SystemError: AST constructor
# recursion depth mismatch", seen grading the corpus with two threads, in ``labs.deps`` and then in
# ``markers.defined_names``): every parse of the grading code takes this lock (re-entrant, so an
# analysis holding it may parse again).
AST_LOCK = threading.RLock()


def parse_python(source: str) -> ast.Module:
    """``ast.parse``, one thread at a time (``AST_LOCK``)."""
    with AST_LOCK:
        return ast.parse(source)

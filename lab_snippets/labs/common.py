"""Names every part of the labs tooling shares: paths, the course id, the cell tags, the error type."""

from __future__ import annotations

import os
import sys
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

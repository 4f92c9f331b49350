"""The grading journal and the progress line: what makes a long ``grade`` resumable and visible.

The journal (``grading-journal.jsonl`` in the course folder) holds one JSON line per finished
row, appended and flushed to disk as each result arrives, in completion order. A row is keyed by
(student, assignment, sha256 of the submission's bytes, the grading version): the version is a
digest of the grading code (``lab_snippets/labs/*.py``), the notebook modules a kernel imports,
the assignment's instructor notebook and the options that change a grade. A rerun after a crash
(a laptop lid, an OOM, SIGKILL) takes every row whose key it finds and grades only the rest; a
resubmitted notebook, a changed test or a changed timeout has another key and is graded again.
A line cut off by the crash is ignored. The driver (``grade``) is the journal's only writer.

A row that says nothing about the submission (status ``error``: the grader itself failed, the
course's cells could not run, or the cluster lost it) is not journaled: a rerun grades it again.

``Progress`` reports done/total, the failures so far, the slowest submission and an ETA from the
rows' measured seconds: a ``tqdm`` bar on a terminal, plain lines otherwise.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from lab_snippets import PACKAGE_DIR
from lab_snippets.labs.spec import Options

JOURNAL_NAME = "grading-journal.jsonl"
LABS_DIR = PACKAGE_DIR / "labs"
# The options that change a grade (``jobs`` only changes how many run at once).
GRADE_OPTIONS = tuple(f.name for f in fields(Options) if f.name != "jobs")

Key = tuple[str, str, str, str]  # (student, assignment, sha256 of the submission, grading version)


def file_digest(path: str | os.PathLike[str]) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def grading_version(instructor_notebook: bytes, opts: Options) -> str:
    """What a grade depends on besides the submission: code, notebook modules, tests, options."""
    from lab_snippets.labs.sandbox import notebook_package_files

    h = hashlib.sha256()
    files = sorted(LABS_DIR.glob("*.py")) + sorted(Path(host) for host, _ in notebook_package_files())
    for path in files:
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    h.update(instructor_notebook + b"\0")
    h.update(json.dumps({k: getattr(opts, k) for k in GRADE_OPTIONS}, sort_keys=True).encode())
    return h.hexdigest()[:20]


def gradebook_grades(course_dir: str | os.PathLike[str]) -> list[tuple]:
    """Every grade in a course's gradebook: (student, assignment, grade id, auto score, manual?),
    sorted; two runs that end with the same list left the same grades."""
    from nbgrader.api import Gradebook

    from lab_snippets.labs.common import COURSE_ID

    out = []
    with Gradebook("sqlite:///" + str(Path(course_dir) / "gradebook.db"), COURSE_ID) as gb:
        for a in gb.assignments:
            for sub in a.submissions:
                out += [(sub.student.id, a.name, g.name, g.auto_score, g.needs_manual_grade)
                        for nb in sub.notebooks for g in nb.grades]
    return sorted(out)


def says_nothing(status: str) -> bool:
    """Whether a row is not a grade of the submission: an ``error`` (the grader, the course's
    own cells or the cluster failed; the instructor page says to grade it again)."""
    return status == "error"


class Journal:
    """Finished rows by key; ``record`` appends one line and fsyncs it before returning."""

    def __init__(self, path: str | os.PathLike[str], fresh: bool = False) -> None:
        self.path = Path(path)
        self.rows: dict[Key, dict[str, Any]] = {}
        self._lock = threading.Lock()
        if fresh:
            self.path.unlink(missing_ok=True)
        elif self.path.exists():
            for line in self.path.read_text(errors="replace").splitlines():
                try:
                    entry = json.loads(line)
                    self.rows[tuple(entry["key"])] = entry["row"]  # type: ignore[index]
                except (ValueError, KeyError, TypeError):
                    continue  # the last line, cut off by a crash

    def get(self, key: Key) -> dict[str, Any] | None:
        return self.rows.get(key)

    def record(self, key: Key, row: dict[str, Any]) -> bool:
        """Journal ``row`` (a dict of the row's fields) unless it says nothing; return whether."""
        if says_nothing(row.get("status", "")):
            return False
        line = json.dumps({"key": list(key), "row": row}, sort_keys=True) + "\n"
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                os.write(fd, line.encode())
                os.fsync(fd)
            finally:
                os.close(fd)
            self.rows[key] = row
        return True


def row_fields(row: Any) -> dict[str, Any]:
    """A row's fields as plain data (no path): what the journal and a Ray task carry."""
    out = asdict(row)
    out.pop("path", None)
    return out


class Progress:
    """done/total, failures, the slowest submission and an ETA, while ``grade`` runs."""

    def __init__(self, total: int, done: int = 0, slots: int = 1,
                 log: Callable[[str], object] = print, stream: Any = None,
                 every: float = 10.0) -> None:
        self.total, self.done, self.resumed, self.slots = total, done, done, max(1, slots)
        self.failures, self.seconds = 0, []  # type: ignore[var-annotated]
        self.slowest: tuple[float, str] = (0.0, "")
        self.log, self.every, self._last = log, every, 0.0
        self.started = time.monotonic()
        stream = sys.stderr if stream is None and log is print else stream
        self.bar = None
        if stream is not None and getattr(stream, "isatty", lambda: False)():
            from tqdm import tqdm
            self.bar = tqdm(total=total, initial=done, file=stream, unit="sub", dynamic_ncols=True)

    def eta(self) -> float | None:
        """Seconds left: the rows still to grade times their mean measured seconds, per slot."""
        if not self.seconds:
            return None
        left = self.total - self.done
        return left * (sum(self.seconds) / len(self.seconds)) / self.slots

    def line(self) -> str:
        eta = self.eta()
        parts = [f"{self.done}/{self.total} graded", f"{self.failures} not ok"]
        if self.slowest[1]:
            parts.append(f"slowest {self.slowest[1]} {self.slowest[0]:.1f}s")
        parts.append("ETA " + ("?" if eta is None else _duration(eta)))
        return ", ".join(parts)

    def update(self, name: str, status: str, seconds: float) -> None:
        self.done += 1
        self.failures += status != "ok"
        self.seconds.append(seconds)
        if seconds >= self.slowest[0]:
            self.slowest = (seconds, name)
        if self.bar is not None:
            self.bar.set_postfix_str(self.line().split(", ", 1)[1], refresh=False)
            self.bar.update(1)
        elif self.done == self.total or time.monotonic() - self._last >= self.every:
            self._last = time.monotonic()
            self.log(f"progress: {self.line()}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f}s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"

"""The structures that cross between the grader, its per-submission worker and the sandbox.

``Options``: how the grader grades (one set of defaults; the command line takes its defaults from
here). ``GradeSpec``: what the grader hands to its worker (and the worker to the sandbox); the
grader writes it as JSON into the submission's private work folder (``spec.json``), the worker
and the sandbox launcher read it back. The result records (``CellRecord`` and the others): what
the worker appends to the result file, one JSON line each, and the grader reads back. Both sides
import these dataclasses, so a field added on one side is known on the other, and a typo fails
at load time.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar


def default_jobs() -> int:
    """Submissions graded at a time unless told: the cores, at most 4."""
    return max(1, min(4, os.cpu_count() or 1))


@dataclass(frozen=True)
class Options:
    """How ``grade`` grades. The defaults here are the only ones (``cli`` reads them)."""

    timeout: int = 30              # per-cell timeout (s)
    submission_timeout: int = 300  # hard wall-clock limit per submission (s)
    jobs: int = field(default_factory=default_jobs)  # submissions graded in parallel
    memory_mb: int = 2048          # address-space limit per kernel
    max_procs: int = 128           # processes per submission inside the sandbox
    iopub_timeout: int = 4         # s to wait for a cell's last output
    run_all: bool = False          # run every cell, the experiments too (labs.deps: not needed)

    def __post_init__(self) -> None:
        if not self.jobs:  # None or 0 from a caller: the default
            object.__setattr__(self, "jobs", default_jobs())


@dataclass(frozen=True)
class Limits:
    """Resource limits applied inside the sandbox before the kernel starts (``None``: not set)."""

    cpu: int | None = None       # seconds of CPU time (RLIMIT_CPU; the hard limit is 5 s more)
    address_space: int | None = None  # bytes (RLIMIT_AS)
    file_size: int | None = None  # bytes (RLIMIT_FSIZE)
    processes: int | None = None  # RLIMIT_NPROC, counted per user inside the sandbox
    open_files: int | None = None  # RLIMIT_NOFILE
    core: int | None = 0          # RLIMIT_CORE: no core dumps


@dataclass(frozen=True)
class SandboxSpec:
    """How to start one submission's kernel inside bubblewrap."""

    box: str                         # the kernel's own writable folder (bound at the same path)
    uid: int | None = None           # per-submission uid (root grading only; None: grader's uid)
    gid: int | None = None
    limits: Limits = field(default_factory=Limits)
    read_only: tuple[str, ...] = ()  # host folders bound read-only at the same path
    package_files: tuple[tuple[str, str], ...] = ()  # (host file, path under the package root)
    package_root: str = "/lab"       # put on PYTHONPATH inside the sandbox
    hide: tuple[str, ...] = ()       # paths covered with an empty tmpfs if a bind exposes them


@dataclass(frozen=True)
class GradeSpec:
    """Everything the trusted worker needs to autograde one submission."""

    course: str            # throwaway course folder holding this one submission
    course_id: str
    assignment: str
    student: str
    notebook: str          # notebook name without .ipynb
    timeout: int           # per-cell timeout (s)
    iopub_timeout: int
    result: str            # JSON-lines file the grader reads back, even after killing the worker
    nonce: str             # proves a guard report came from the guard
    sandbox_spec: str      # path of this file: the kernel launcher reads ``sandbox`` from it
    sandbox: SandboxSpec
    solution_names: tuple[str, ...] = ()  # names the reference solution binds (students may rebind)
    plan: str = ""  # JSON: release's record of the cells grading need not run (labs.deps.recorded)
    max_output_chars: int = 200_000

    def dumps(self) -> str:
        return json.dumps(asdict(self), indent=1)

    def write(self, path: str | Path) -> None:
        Path(path).write_text(self.dumps())

    @classmethod
    def loads(cls, text: str) -> GradeSpec:
        raw = json.loads(text)
        _no_unknown(cls, raw)
        box = raw.pop("sandbox")
        _no_unknown(SandboxSpec, box)
        limits = box.pop("limits")
        _no_unknown(Limits, limits)
        sandbox = SandboxSpec(
            **{k: v for k, v in box.items() if k not in {"read_only", "package_files", "hide"}},
            limits=Limits(**limits),
            read_only=tuple(box.get("read_only", ())),
            package_files=tuple(tuple(p) for p in box.get("package_files", ())),
            hide=tuple(box.get("hide", ())))
        raw["solution_names"] = tuple(raw.get("solution_names", ()))
        return cls(**raw, sandbox=sandbox)

    @classmethod
    def read(cls, path: str | Path) -> GradeSpec:
        return cls.loads(Path(path).read_text())


# --------------------------------------------------------------------------- result records
# One JSON line each in the result file, ``kind`` first, then the fields in the order below.


@dataclass(frozen=True)
class CellRecord:
    """One graded cell, as nbgrader scored it, and what the guard and the kernel did around it."""

    KIND: ClassVar[str] = "cell"
    grade_id: str | None
    score: float
    max_score: float
    timed_out: bool = False
    restored: tuple[str, ...] = ()      # what the guard had to undo before the test
    guard_problem: str | None = None    # why there was no valid guard report (the test not run)
    reason: str = ""
    kernel_dead: str | None = None      # a kernel death with no recovery


@dataclass(frozen=True)
class CellTimeout:
    """An ungraded cell that hit the per-cell timeout."""

    KIND: ClassVar[str] = "cell_timeout"
    cell: str


@dataclass(frozen=True)
class Restart:
    """A stuck kernel restarted (earlier cells replayed)."""

    KIND: ClassVar[str] = "restart"
    cell: str | None


@dataclass(frozen=True)
class Died:
    """A kernel death survived by a restart."""

    KIND: ClassVar[str] = "died"
    cell: str
    what: str


@dataclass(frozen=True)
class Infrastructure:
    """A course cell failed, before any submission cell ran, for a reason no submission causes
    (``common.infrastructure_failure``: Ray did not start); the grades after it mean nothing."""

    KIND: ClassVar[str] = "infrastructure"
    cell: str
    what: str


@dataclass(frozen=True)
class Final:
    """nbgrader's scores once the worker finished: grade_id -> [score, max_score]."""

    KIND: ClassVar[str] = "final"
    scores: dict[str, list[float]]


Record = CellRecord | CellTimeout | Restart | Died | Infrastructure | Final
RECORD_KINDS: dict[str, type[Record]] = {
    c.KIND: c for c in (CellRecord, CellTimeout, Restart, Died, Infrastructure, Final)
}


def record_line(record: Record) -> str:
    """The record as its JSON line (without the newline)."""
    return json.dumps({"kind": record.KIND, **asdict(record)})


def parse_record(line: str) -> Record | None:
    """The record of one line; None for a line that is not JSON (the last one, cut off when the
    grader killed the worker) or of an unknown kind. A known kind with wrong fields raises
    ``ValueError``: the worker and the grader disagree, which must not pass quietly."""
    try:
        raw: Any = json.loads(line)
    except ValueError:
        return None
    if not isinstance(raw, dict) or raw.get("kind") not in RECORD_KINDS:
        return None
    cls = RECORD_KINDS[raw.pop("kind")]
    _no_unknown(cls, raw)
    if cls is CellRecord:
        raw["restored"] = tuple(raw.get("restored") or ())
    try:
        return cls(**raw)
    except TypeError as exc:
        raise ValueError(f"{cls.__name__}: {exc}") from None


def _no_unknown(cls: type, raw: dict) -> None:
    unknown = set(raw) - {f.name for f in fields(cls)}
    if unknown:
        raise ValueError(f"{cls.__name__}: unknown field(s) {sorted(unknown)}")

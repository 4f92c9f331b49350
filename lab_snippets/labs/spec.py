"""The one structure the grader hands to its per-submission worker (and the worker to the sandbox).

Both sides import these dataclasses; the grader writes them as JSON into the submission's
private work folder (``spec.json``), the worker and the sandbox launcher read them back. A
field added on one side is therefore known on the other, and a typo fails at load time.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path


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


def _no_unknown(cls: type, raw: dict) -> None:
    unknown = set(raw) - {f.name for f in fields(cls)}
    if unknown:
        raise ValueError(f"{cls.__name__}: unknown field(s) {sorted(unknown)}")

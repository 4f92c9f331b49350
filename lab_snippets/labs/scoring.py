"""Turning a worker's result file into a row's score, status and reason.

The worker appends JSON lines (the records of ``spec``: ``cell`` per graded cell,
``cell_timeout``, ``restart``, ``died``, ``infrastructure``, and ``final`` with nbgrader's
scores); the grader may have killed it half-way, so every line is optional. A row gets exactly
one status: the first row of ``STATUS_PRECEDENCE`` whose condition holds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from lab_snippets.labs.spec import (
    CellRecord,
    CellTimeout,
    Died,
    Final,
    Infrastructure,
    Options,
    Record,
    Restart,
    parse_record,
)


class ScoredRow(Protocol):
    """What ``score`` fills in (``grader.Row`` is one; no import, so no circle with ``grader``)."""

    cells: dict[str, float]
    score: float
    status: str
    reason: str


@dataclass
class Findings:
    """What the result file (and the grader) say about one submission."""

    killed: bool = False                  # the grader hit the wall-clock limit
    final: Final | None = None            # nbgrader's scores, when the worker finished
    cells: dict[str | None, CellRecord] = field(default_factory=dict)  # grade_id -> last record
    timed: list[str | None] = field(default_factory=list)  # cells that hit the per-cell timeout
    restored: list[str] = field(default_factory=list)  # what the guard had to undo
    guard: list[str] = field(default_factory=list)  # guard problems (no valid report)
    died: list[str] = field(default_factory=list)   # kernel deaths survived by a restart
    dead: str | None = None               # a kernel death with no recovery
    restarts: list[str | None] = field(default_factory=list)  # stuck kernels restarted
    infrastructure: list[str] = field(default_factory=list)  # course cells that failed (Ray)

    @property
    def nothing_graded(self) -> bool:
        return self.final is None and not self.cells


# Highest precedence first: a submission that was killed is a timeout even if it also tampered;
# one whose course cells failed before it ran (Ray did not start) is a grading error, to grade again.
STATUS_PRECEDENCE: tuple[tuple[str, Callable[[Findings], bool]], ...] = (
    ("error", lambda f: bool(f.infrastructure)),           # the course's own cells failed first
    ("timeout", lambda f: f.killed),                      # the whole submission ran out of time
    ("error", lambda f: f.nothing_graded),                 # nbgrader graded nothing at all
    ("timeout", lambda f: bool(f.timed)),                  # a cell ran out of time
    ("crashed", lambda f: bool(f.died or f.dead)),         # the kernel died
    ("tampered", lambda f: bool(f.restored or f.guard)),   # the guard had to undo something
    ("ok", lambda f: True),
)


def status_of(findings: Findings) -> str:
    return next(status for status, holds in STATUS_PRECEDENCE if holds(findings))


def read_records(result: Path) -> list[Record]:
    if not result.exists():
        return []
    return [r for r in map(parse_record, result.read_text().splitlines()) if r is not None]


def read_findings(result: Path, killed: bool) -> Findings:
    records = read_records(result)
    cells = {r.grade_id: r for r in records if isinstance(r, CellRecord)}
    return Findings(
        killed=killed,
        final=next((r for r in records if isinstance(r, Final)), None),
        cells=cells,
        timed=[r.cell for r in records if isinstance(r, CellTimeout)]
        + [g for g, r in cells.items() if r.timed_out],
        restored=sorted({x for r in cells.values() for x in r.restored}),
        guard=sorted({r.guard_problem for r in cells.values() if r.guard_problem}),
        died=[r.what for r in records if isinstance(r, Died)],
        dead=next((r.kernel_dead for r in cells.values() if r.kernel_dead), None),
        restarts=[r.cell for r in records if isinstance(r, Restart)],
        infrastructure=[f"{r.what} (in {r.cell})" for r in records if isinstance(r, Infrastructure)],
    )


def cell_scores(f: Findings, cells: dict[str, float]) -> dict[str, float]:
    scores = {}
    for gid in cells:
        if f.final and gid in f.final.scores:
            scores[gid] = float(f.final.scores[gid][0])
        elif gid in f.cells:
            scores[gid] = float(f.cells[gid].score)
        else:
            scores[gid] = 0.0
    return scores


def notes_for(f: Findings, cells: dict[str, float], scores: dict[str, float], opts: Options,
              work: Path) -> list[str]:
    """The reason column: what passed, what failed, and every event that explains the status."""
    passed = sum(1 for gid in cells if scores[gid] >= cells[gid] > 0)
    notes = [f"{what}: not the submission's fault, its tests could not run fairly; grade it again"
             for what in f.infrastructure]
    notes.append(f"{passed}/{len(cells)} tests passed")
    failed = [f"{g}: {f.cells[g].reason}" for g in cells
              if g in f.cells and scores[g] < cells[g] and f.cells[g].reason
              and not f.cells[g].timed_out]
    if failed:
        notes.append("failed " + "; ".join(failed[:3]))
    if f.restored:
        notes.append("tampering undone before tests: " + ", ".join(f.restored[:6]))
    notes.extend(f.guard)
    if f.died:
        notes.append("; ".join(f.died) + "; restarted, earlier cells replayed, rest graded")
    if f.dead:
        notes.append(f.dead)
    if f.timed:
        notes.append(f"per-cell timeout ({opts.timeout}s) in: {', '.join(map(str, f.timed))}")
    if f.restarts:
        notes.append(f"kernel stuck after a timeout, restarted and earlier cells replayed "
                     f"({len(f.restarts)}x)")
    if f.killed:
        missing = [g for g in cells if g not in f.cells]
        notes.append(f"submission wall-clock limit ({opts.submission_timeout}s) hit; killed"
                     + (f"; not run: {', '.join(missing)}" if missing else ""))
    elif f.nothing_graded:
        notes.append("nbgrader could not grade the notebook" + _log_tail(work / "worker.log"))
    return notes


def _log_tail(logf: Path) -> str:
    if not logf.exists():
        return ""
    lines = [ln for ln in logf.read_text(errors="replace").splitlines()
             if "ERROR" in ln or "Error" in ln]
    return f": {lines[-1][:200]}" if lines else ""


def score(row: ScoredRow, cells: dict[str, float], result: Path, killed: bool, work: Path,
          opts: Options) -> None:
    """Fill ``row`` (score, cells, status, reason) from the worker's result file."""
    f = read_findings(result, killed)
    row.cells = cell_scores(f, cells)
    row.score = sum(row.cells.values())
    row.status = status_of(f)
    row.reason = "; ".join(notes_for(f, cells, row.cells, opts, work))

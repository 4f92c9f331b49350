"""Claim cells and their counterfactuals: every claim a chapter asserts must be able to fail.

A chapter's *claim cell* is a code cell tagged ``claim`` whose first line is
``# claim: <slug>``. Its asserts carry one of the chapter's claims. ``tests/mutations.toml``
registers, for each claim, at least one *counterfactual*: a small named change to the
mechanism under study (drop the semaphore, ``time.sleep`` for ``await asyncio.sleep``, ...)
given as a ``find`` text that occurs exactly once in the chapter's ``.py`` and its
``replace``ment. Under the mutation, the claim cell must be the first cell that fails, and
it must fail with ``AssertionError`` (``tests/test_claims.py`` runs every mutation).

    python -m lab_snippets.testing.claims render            # write book/reference/claims.md
    python -m lab_snippets.testing.claims check             # exit 1 when the page or the table is out of step
    python -m lab_snippets.testing.claims run 06            # chapter 06's mutations: killed or survived
    python -m lab_snippets.testing.claims run 06 --name "drop the semaphore"

Tooling, not notebook-facing. Self-contained: it needs jupytext, nbclient and psutil, and the
chapter table (``lab_snippets.chapters``) only to find notebooks and titles.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
import time
import tomllib
import uuid
from dataclasses import dataclass
from pathlib import Path

from lab_snippets.book import chapters

MUTATIONS = chapters.ROOT / "tests" / "mutations.toml"
PAGE = chapters.ROOT / "book" / "reference" / "claims.md"
CLAIM_TAG = "claim"
CLAIM_LINE = re.compile(r"^#\s*claim:\s*([a-z0-9][a-z0-9-]*)\s*$")
SKIP_TAGS = {"skip-execution", "nbval-skip"}
MARKER_ENV = "LAB_CLAIMS_RUN_ID"
# per-cell bound of a counterfactual run of a chapter that starts a local Ray (chapters.runs_alone)
RAY_MUTATION_CELL_TIMEOUT = 240


class ClaimError(Exception):
    """A malformed claim cell or mutation entry (shown to the maintainer)."""


@dataclass(frozen=True)
class Mutation:
    chapter: str  # "06"
    claim: str
    name: str
    find: str
    replace: str
    # How many idle cores the counterfactual needs to show itself (two processes running at the
    # same instant need two); 0 when it does not depend on the machine's load.
    needs_idle_cores: int = 0

    @property
    def id(self) -> str:
        slug = re.sub(r"[^a-z0-9]+", "-", self.name.lower()).strip("-")
        return f"{self.chapter}-{self.claim}-{slug}"


@dataclass(frozen=True)
class ClaimCell:
    index: int  # index among all cells of the notebook
    slug: str


@dataclass
class RunResult:
    """What happened when a notebook ran up to (and including) a stop cell."""

    failed_index: int | None  # first cell that failed, or None
    ename: str = ""
    evalue: str = ""
    cells_run: int = 0
    seconds: float = 0.0


# --------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------

def chapter_path(number: str) -> Path:
    return chapters.BY_NUMBER[number].path


def read_text_notebook(text: str):
    import jupytext
    return jupytext.reads(text, fmt="py:percent")


def _tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def claim_cells(nb) -> list[ClaimCell]:
    """The claim cells of a notebook, in order. Raises ClaimError on a malformed one."""
    found: list[ClaimCell] = []
    for i, cell in enumerate(nb.cells):
        tagged = CLAIM_TAG in _tags(cell)
        first = cell.source.lstrip("\n").split("\n", 1)[0] if cell.source else ""
        m = CLAIM_LINE.match(first.strip())
        if cell.cell_type != "code":
            if tagged:
                raise ClaimError(f"cell {i}: only code cells can be claim cells")
            continue
        if tagged and not m:
            raise ClaimError(f"cell {i} is tagged '{CLAIM_TAG}' but its first line is not "
                             f"'# claim: <slug>' (got {first!r})")
        if m and not tagged:
            raise ClaimError(f"cell {i} starts with '# claim: {m.group(1)}' but is not tagged "
                             f"'{CLAIM_TAG}' (# %% tags=[\"{CLAIM_TAG}\"])")
        if tagged:
            if any(c.slug == m.group(1) for c in found):
                raise ClaimError(f"claim slug {m.group(1)!r} is used twice")
            found.append(ClaimCell(i, m.group(1)))
    return found


def chapter_claims(number: str) -> list[ClaimCell]:
    import jupytext
    return claim_cells(jupytext.read(chapter_path(number), fmt="py:percent"))


def load_mutations(path: Path = MUTATIONS) -> list[Mutation]:
    if not Path(path).exists():
        return []
    data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    out = []
    for n, entry in enumerate(data.get("mutation", [])):
        missing = {"chapter", "claim", "name", "find", "replace"} - set(entry)
        extra = set(entry) - {"chapter", "claim", "name", "find", "replace", "needs_idle_cores"}
        if missing or extra:
            raise ClaimError(f"mutation #{n}: missing keys {sorted(missing)}, unknown keys {sorted(extra)}")
        out.append(Mutation(str(entry["chapter"]).zfill(2), entry["claim"], entry["name"],
                            entry["find"], entry["replace"], int(entry.get("needs_idle_cores", 0))))
    ids = [m.id for m in out]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise ClaimError(f"mutation names repeated for the same claim: {dupes}")
    return out


def apply(text: str, mutation: Mutation) -> str:
    """The chapter's text with the mutation applied; ``find`` must occur exactly once."""
    count = text.count(mutation.find)
    if count != 1:
        raise ClaimError(f"{mutation.id}: 'find' must occur exactly once in chapter {mutation.chapter}, "
                         f"found {count} times: {mutation.find!r}")
    if mutation.find == mutation.replace:
        raise ClaimError(f"{mutation.id}: 'replace' is the same as 'find'")
    return text.replace(mutation.find, mutation.replace)


# --------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------

def _kill_marked(marker: str) -> None:
    """Kill any process still carrying our run marker in its environment (children of the kernel)."""
    import psutil
    me = os.getpid()
    for proc in psutil.process_iter(["pid"]):
        if proc.pid == me:
            continue
        try:
            if proc.environ().get(MARKER_ENV) == marker:
                proc.kill()
        except (psutil.Error, OSError):
            pass


def run_notebook(nb, cwd: Path, stop_after: int | None = None, timeout: float = 60,
                 startup_timeout: float = 120) -> RunResult:
    """Execute code cells in order (in a fresh kernel started in ``cwd``) until one fails.

    Stops after the cell at ``stop_after`` (an index among all cells) when given. Cells
    tagged ``raises-exception`` may raise, as under nbval; cells tagged ``skip-execution`` or
    ``nbval-skip`` are skipped. The kernel gets its own temporary directory (``TMPDIR``) and a
    marker in its environment; afterwards the kernel is shut down, any process still carrying
    the marker is killed and the directory removed. Every cell is bounded by ``timeout``.
    """
    sys.modules.setdefault("rfc3987_syntax", None)  # jsonschema's slow optional import (unused)
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    # short enough that a local Ray's session folder goes inside it (lab_snippets.raylab), and so is
    # removed with it when a run stops at its claim, before the chapter's last cell stops Ray
    tmpdir = tempfile.mkdtemp(prefix="cl-")
    marker = uuid.uuid4().hex
    env = dict(os.environ, TMPDIR=tmpdir, MPLBACKEND="module://matplotlib_inline.backend_inline",
               **{MARKER_ENV: marker})
    env.pop("LAB_AUDIT_ID", None)
    from lab_snippets.testing.ipckernel import ipc_kernel_manager

    # unix sockets, not TCP ports: a port jupyter_client picked can be taken by another process before
    # the kernel binds it (seen in a clean CI run: "Address already in use", "Kernel died")
    client = NotebookClient(nb, timeout=timeout, startup_timeout=startup_timeout, kernel_name="python3",
                            allow_errors=False, interrupt_on_timeout=False,
                            kernel_manager_class=ipc_kernel_manager(),
                            resources={"metadata": {"path": str(cwd)}})
    result = RunResult(None)
    t0 = time.monotonic()
    try:
        with client.setup_kernel(env=env):
            for i, cell in enumerate(nb.cells):
                if stop_after is not None and i > stop_after:
                    break
                if cell.cell_type != "code" or SKIP_TAGS & set(_tags(cell)):
                    continue
                try:
                    client.execute_cell(cell, i)
                except CellExecutionError as exc:
                    result.failed_index, result.ename, result.evalue = i, exc.ename, str(exc.evalue)
                except CellTimeoutError as exc:
                    result.failed_index, result.ename, result.evalue = i, "CellTimeoutError", str(exc)[:300]
                except DeadKernelError as exc:
                    result.failed_index, result.ename, result.evalue = i, "DeadKernelError", str(exc)[:300]
                result.cells_run += 1
                if result.failed_index is not None:
                    break
    finally:
        _kill_marked(marker)
        shutil.rmtree(tmpdir, ignore_errors=True)
        result.seconds = time.monotonic() - t0
    return result


@dataclass
class Verdict:
    mutation: Mutation
    killed: bool
    why: str
    run: RunResult


def run_mutation(mutation: Mutation, timeout: float = 60) -> Verdict:
    """Apply a mutation to a copy of its chapter, run the copy up to the claim cell, judge it."""
    path = chapter_path(mutation.chapter)
    nb = read_text_notebook(apply(path.read_text(encoding="utf-8"), mutation))
    cells = {c.slug: c for c in claim_cells(nb)}
    if mutation.claim not in cells:
        raise ClaimError(f"{mutation.id}: chapter {mutation.chapter} has no claim {mutation.claim!r} "
                         f"after the mutation (claims: {sorted(cells)})")
    target = cells[mutation.claim].index
    if chapters.runs_alone(path):
        # a Ray chapter's cell bounds its own waits (up to 60 + 120 s in chapter 29): the runner's
        # bound must be longer, so that a slow start fails with the cell's message, not a timeout
        timeout = max(timeout, RAY_MUTATION_CELL_TIMEOUT)
    run = run_notebook(nb, cwd=path.parent, stop_after=target, timeout=timeout)
    by_index = {c.index: c.slug for c in cells.values()}
    if run.failed_index is None:
        return Verdict(mutation, False, f"survived: claim {mutation.claim!r} (cell {target}) still passes",
                       run)
    where = (f"claim {by_index[run.failed_index]!r}" if run.failed_index in by_index
             else "a cell that is not a claim")
    if run.failed_index != target:
        return Verdict(mutation, False, f"the first failing cell is {run.failed_index} ({where}), not the "
                       f"targeted claim cell {target}: {run.ename}: {run.evalue[:300]}", run)
    if run.ename != "AssertionError":
        return Verdict(mutation, False, f"the claim cell failed with {run.ename}, not AssertionError: "
                       f"{run.evalue[:300]}", run)
    return Verdict(mutation, True, f"killed: {run.ename}: {run.evalue[:200]}", run)


# --------------------------------------------------------------------------------------
# The book page
# --------------------------------------------------------------------------------------

def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(mutations: list[Mutation] | None = None) -> str:
    mutations = load_mutations() if mutations is None else mutations
    lines = [
        "<!-- Generated by `python -m lab_snippets.testing.claims render`; do not edit by hand. -->",
        "",
        "(reference-claims)=",
        "# Claims and their counterfactuals",
        "",
        "Every chapter proves its points with `assert`s. A cell whose asserts carry one of the",
        "chapter's claims is a *claim cell* (tagged `claim`, first line `# claim: <slug>`). For each",
        "claim the course registers at least one *counterfactual*: a small change that removes the",
        "mechanism the claim is about (drop the semaphore, block the loop with `time.sleep`, forget to",
        "await the cancelled tasks). The test suite (`tests/test_claims.py`) applies each one to a copy",
        "of the chapter, runs it, and fails unless the targeted claim cell is the first cell to fail",
        "and fails with `AssertionError`: the counterfactual *kills* the claim. A claim that no change",
        "to the mechanism could fail would prove nothing. The mutations live in `tests/mutations.toml`;",
        "regenerate this page with `python -m lab_snippets.testing.claims render`.",
        "",
        "## Per chapter",
        "",
        "| chapter | claim cells | counterfactuals | claims with a counterfactual |",
        "|---|---|---|---|",
    ]
    by_chapter: dict[str, list[Mutation]] = {}
    for m in mutations:
        by_chapter.setdefault(m.chapter, []).append(m)
    details = []
    for chapter in chapters.existing():
        number = chapter.path.name[:2]
        try:
            claims = chapter_claims(number)
        except ClaimError as exc:
            claims = []
            details += [f"- chapter {number}: claim cells malformed: {_md(str(exc))}"]
        muts = by_chapter.get(number, [])
        link = f"{number} · {_md(chapter.title)}"
        covered = sum(any(m.claim == c.slug for m in muts) for c in claims)
        lines.append(f"| {link} | {len(claims)} | {len(muts)} | {covered} of {len(claims)} |")
        if claims:
            details += ["", f"### Chapter {number}", "",
                        "| claim | counterfactual (what it changes) |", "|---|---|"]
            for claim in claims:
                names = [m.name for m in muts if m.claim == claim.slug]
                shown = "; ".join(_md(n) for n in names) if names else "**none registered**"
                details.append(f"| `{claim.slug}` | {shown} |")
    lines += ["", "## The claims", *details, ""]
    return "\n".join(lines)


def check() -> list[str]:
    problems = []
    if not PAGE.exists() or PAGE.read_text(encoding="utf-8") != render():
        problems.append(f"{PAGE.relative_to(chapters.ROOT)} is out of step: "
                        "run `python -m lab_snippets.testing.claims render`")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab_snippets.testing.claims",
                                     description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("render", help="write book/reference/claims.md")
    sub.add_parser("check", help="exit 1 when book/reference/claims.md is out of step")
    run = sub.add_parser("run", help="run a chapter's mutations and print kill or survive")
    run.add_argument("chapter", help="chapter number, e.g. 06")
    run.add_argument("--name", help="only the mutation with this name")
    run.add_argument("--timeout", type=float, default=60, help="per-cell timeout (s)")
    args = parser.parse_args(argv)
    if args.command == "render":
        PAGE.write_text(render(), encoding="utf-8")
        print(f"wrote {PAGE.relative_to(chapters.ROOT)}")
        return 0
    if args.command == "check":
        problems = check()
        for p in problems:
            print(p)
        return 1 if problems else 0
    number = args.chapter.zfill(2)
    claims = chapter_claims(number)
    muts = [m for m in load_mutations() if m.chapter == number and (args.name is None or m.name == args.name)]
    print(f"chapter {number}: {len(claims)} claim cells: {', '.join(c.slug for c in claims)}")
    bad = 0
    for claim in claims:
        if not any(m.claim == claim.slug for m in load_mutations() if m.chapter == number):
            print(f"  claim {claim.slug!r} has no registered mutation")
            bad += 1
    for m in muts:
        verdict = run_mutation(m, timeout=args.timeout)
        bad += not verdict.killed
        print(f"  [{'KILLED' if verdict.killed else 'FAILED'}] {m.claim} / {m.name} "
              f"({verdict.run.seconds:.1f} s, {verdict.run.cells_run} cells): {verdict.why}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())


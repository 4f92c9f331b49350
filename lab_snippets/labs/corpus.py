"""The wrong-solution corpus: plausible wrong answers to each exercise, graded like a submission.

    python -m lab_snippets.labs.corpus run [--chapter NN ...] [--json OUT] [--jobs N]
    python -m lab_snippets.labs.corpus record RUN.json|DIR [...]        # merge into the verdicts file
    python -m lab_snippets.labs.corpus table [--check]                   # the instructor page's table

An entry is ``tests/corpus/<NN>/<mistake_slug>.py``: two header comment lines, then the whole
replacement source of the chapter's ``solution`` cell, as a learner would write it::

    # mistake: cancels the sibling tasks on failure but never awaits them
    # violates: left running after the failure
    <the whole wrong solution cell>

A third header line ``# solution-cell: N`` picks the N-th solution cell (0-based; default 0).
A correct-but-different answer has ``# correct: <how it differs>`` in place of the two lines,
and must earn full marks. Other header lines are kept as notes and not graded: ``# from:``
(who wrote it), ``# breaks:`` and ``# how:`` (what goes wrong, and the scenario that shows it).

``run`` grades, for each chapter, the reference (the notebook as it is), the student stub (the
solution regions replaced the way nbgrader's release does) and every entry, each in a fresh
kernel through ``labs.student.run_notebook``, the code path ``validate`` uses; the verdict on each test
cell is judged by the same rule and described by the same message function as in ``grade``.
Verdicts:

- reference: ``full`` when every test passes;
- stub: ``zero`` when it scores 0;
- entry: ``rejected`` when it scores below full marks **and** the message of a failing test
  contains the entry's ``violates:`` phrase (or one of its phrases, ``A || B``, for a mistake whose
  first failing scenario may break either of two properties); ``unexplained`` when it fails without;
  ``accepted`` when it earns full marks (a wrong answer graded right: the tests must change);
- correct: ``full`` when every test passes, like the reference.

Each recorded verdict carries the **digest** of what produced it (``grading_digest``): the code
cells grading the chapter runs (its solution and tests and the set-up cells they need, as
``labs.deps`` plans them) and, for an entry, the entry's source. A
verdict whose digest is not the current one was made by other tests and counts as not recorded
(``?`` on the instructor page) until the corpus is run again on that Python. The digest does not
cover the shared modules the hidden tests call (``lab_snippets/scenarios*.py``, ``grading.py``):
an edit there that changes what they draw or check needs a run on every Python.

The corpus is instructor material: ``labs release`` never reads ``tests/``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import copy
import functools
import hashlib
import json
import os
import platform
import re
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from lab_snippets import REPO_ROOT as REPO
from lab_snippets.labs import support
from lab_snippets.labs.common import cell_timeout
from lab_snippets.scenarios import SEED_VARIABLE

CORPUS_DIR = REPO / "tests" / "corpus"
NOTEBOOKS_DIR = REPO / "notebooks"
VERDICTS_JSON = REPO / "book" / "reference" / "corpus_verdicts.json"
INSTRUCTORS_PAGE = REPO / "book" / "instructors.md"
# 3.11-3.13 from pyenv (`nox -s corpus`); 3.14 from the forky root (`nox -s corpus-forky-3.14`).
# 3.15 is not recorded: Ray has no wheel for it, so chapters 28-29 get no verdict there ("no Ray").
PYTHONS = ("3.11", "3.12", "3.13", "3.14")
BEGIN_TABLE = "<!-- BEGIN GENERATED: corpus table (python -m lab_snippets.labs.corpus table) -->"
END_TABLE = "<!-- END GENERATED: corpus table -->"
HEADER = re.compile(r"#\s*(mistake|violates|solution-cell|correct|from|breaks|how)\s*:\s*(.*\S)\s*$")
MIN_ENTRIES = 4
GOOD = {"reference": "full", "stub": "zero", "entry": "rejected", "correct": "full"}


class CorpusError(Exception):
    """A malformed corpus entry (shown to the user)."""


@dataclass
class Entry:
    chapter: str          # "06"
    slug: str             # file stem, named after the mistake
    path: Path
    mistake: str
    violates: str
    source: str           # the whole replacement solution cell
    solution_cell: int = 0
    correct: str = ""     # a correct-but-different answer: how it differs (then no mistake)
    origin: str = ""      # the ``from:`` line: who wrote it

    @property
    def kind(self):
        return "correct" if self.correct else "entry"

    @property
    def key(self):
        return f"{self.chapter}/{self.slug}"


def parse_entry(path):
    path = Path(path)
    lines = path.read_text().splitlines()
    meta, body_start = {}, 0
    for i, line in enumerate(lines):
        m = HEADER.match(line)
        if not m:
            body_start = i
            break
        meta[m.group(1)] = m.group(2)
    else:
        body_start = len(lines)
    where = f"{path.relative_to(REPO) if path.is_relative_to(REPO) else path}"
    for key in () if meta.get("correct") else ("mistake", "violates"):
        if not meta.get(key):
            raise CorpusError(f"{where}: needs a '# {key}: ...' header line")
    source = "\n".join(lines[body_start:]).strip("\n") + "\n"
    if not source.strip():
        raise CorpusError(f"{where}: no solution source after the header")
    if "raise NotImplementedError" in source:
        raise CorpusError(f"{where}: a corpus entry is a plausible wrong answer, not a stub")
    if meta.get("correct") and (meta.get("mistake") or meta.get("violates")):
        raise CorpusError(f"{where}: a correct answer has no mistake and violates nothing")
    return Entry(chapter=path.parent.name, slug=path.stem, path=path, mistake=meta.get("mistake", ""),
                 violates=meta.get("violates", ""), source=source,
                 solution_cell=int(meta.get("solution-cell", 0)), correct=meta.get("correct", ""),
                 origin=meta.get("from", ""))


def load_entries(corpus_dir=CORPUS_DIR, chapters=None):
    corpus_dir = Path(corpus_dir)
    if not corpus_dir.is_dir():
        return []
    out = []
    for path in sorted(corpus_dir.glob("[0-9][0-9]/*.py")):
        if chapters and path.parent.name not in chapters:
            continue
        out.append(parse_entry(path))
    return out


def corpus_chapters(corpus_dir=CORPUS_DIR):
    return sorted(p.name for p in Path(corpus_dir).glob("[0-9][0-9]") if p.is_dir())


def chapter_path(chapter, notebooks_dir=NOTEBOOKS_DIR):
    found = sorted(Path(notebooks_dir).glob(f"{chapter}_*.py"))
    if len(found) != 1:
        raise CorpusError(f"chapter {chapter}: expected one notebooks/{chapter}_*.py, found {found}")
    return found[0]


@functools.lru_cache(maxsize=64)
def _graded_cells(text, name):
    """The code cells of a chapter's grading plan, as graded (``labs.deps``)."""
    import jupytext

    from lab_snippets.labs import deps
    from lab_snippets.labs.markers import mark_notebook
    nb = mark_notebook(jupytext.reads(text, fmt="py:percent"), name)
    deps.record(nb)
    plan = deps.plan(nb)
    return tuple(plan.trimmed.get(i, src) for i, src in enumerate(deps.code_sources(nb))
                 if src is not None and i not in plan.skip)


def chapter_digest_of(text, name="chapter.py"):
    """The digest of what grading a chapter runs, from its ``py:percent`` text: the code cells of
    its grading plan (``labs.deps``: solutions, tests and the set-up cells they need, trimmed as
    graded), so prose, comments and experiments the grade skips keep the recorded verdicts, and
    any change to what a grade runs does not. (Where an interpreter's analysis plans more cells,
    its digest differs and its verdicts show as not current: ``?``, never a false "recorded".)
    What else grading runs, the course's modules and the pins, is ``support_digest_of``."""
    code = "\0".join(_code_lines(src) for src in _graded_cells(text, name))
    return hashlib.sha256(code.encode()).hexdigest()[:16]


def support_digest_of(chapter):
    """The digest of the course modules and pins that grading ``chapter`` runs (``labs.support``):
    with the grading digest, it decides whether the test command may keep a recorded verdict."""
    path = chapter_path(chapter)
    return support.support_digest(_graded_cells(path.read_text(), path.name))


_GRADER_MARKER = re.compile(r"#+\s*(BEGIN|END)\s+(SOLUTION|HIDDEN TESTS)")


def _code_lines(source):
    """A cell's lines as they run: without blank lines, trailing spaces and whole-line comments
    (a reworded comment keeps the verdicts), but with nbgrader's markers, which move what is graded."""
    keep = [ln.rstrip() for ln in source.splitlines() if ln.strip()]
    return "\n".join(ln for ln in keep
                     if not ln.lstrip().startswith("#") or _GRADER_MARKER.match(ln.lstrip()))


def digest_for(chapter_digest, entry_source=None):
    """A submission's digest: its chapter's, and for an entry the entry's source too."""
    if entry_source is None:
        return chapter_digest
    return hashlib.sha256(f"{chapter_digest}\0{entry_source}".encode()).hexdigest()[:16]


def grading_digest(chapter, entry=None):
    path = chapter_path(chapter)
    return digest_for(chapter_digest_of(path.read_text(), path.name), entry.source if entry else None)


def current_digests(corpus_dir=CORPUS_DIR):
    """{key: digest} for every reference, stub and entry of the corpus as the tree is now."""
    out = {}
    for ch in corpus_chapters(corpus_dir):
        path = chapter_path(ch)
        cd = chapter_digest_of(path.read_text(), path.name)
        out[f"{ch}/reference"] = out[f"{ch}/stub"] = cd
        for e in load_entries(corpus_dir, [ch]):
            out[e.key] = digest_for(cd, e.source)
    return out


# --------------------------------------------------------------------------------------
# Building the three kinds of submission
# --------------------------------------------------------------------------------------

def _solution_cells(nb):
    from lab_snippets.labs.common import SOLUTION_TAG
    from lab_snippets.labs.markers import _tags
    return [c for c in nb.cells if SOLUTION_TAG in _tags(c)]


def reference_notebook(chapter):
    """The chapter as it is, with the metadata ``release`` gives it (test names, and the record of
    the cells grading may skip, ``labs.deps``)."""
    from lab_snippets.labs import deps
    from lab_snippets.labs.common import kernelspec
    from lab_snippets.labs.markers import mark_notebook, read_notebook
    path = chapter_path(chapter)
    nb = mark_notebook(read_notebook(path), path.name)
    deps.record(nb)
    nb.metadata["kernelspec"] = kernelspec()
    return nb


def stub_notebook(chapter):
    """The reference with every solution region cleared by nbgrader's own ``ClearSolutions``
    (what ``labs release`` hands out), hidden tests kept (``grade`` runs them)."""
    from nbgrader.preprocessors import ClearSolutions

    nb = reference_notebook(chapter)
    cleared, _ = ClearSolutions(enforce_metadata=True).preprocess(
        copy.deepcopy(nb), {"language": "python"})
    for mine, theirs in zip(nb.cells, cleared.cells, strict=True):
        if theirs.metadata.get("nbgrader", {}).get("solution"):
            mine.source = theirs.source
    return nb


def entry_notebook(entry):
    nb = reference_notebook(entry.chapter)
    cells = _solution_cells(nb)
    if not 0 <= entry.solution_cell < len(cells):
        raise CorpusError(f"{entry.key}: solution-cell {entry.solution_cell} but the chapter has "
                          f"{len(cells)} solution cell(s)")
    cells[entry.solution_cell].source = entry.source.rstrip("\n")
    return nb


def write_submissions(chapter, folder, copies=1):
    """The chapter's corpus as a submissions folder for ``labs grade``: one student per reference,
    stub and entry (``<slug>``, or ``<slug>-<k>`` for ``copies`` > 1), each with the notebook."""
    import nbformat
    stem = chapter_path(chapter).stem
    kinds = [("reference", reference_notebook(chapter)), ("stub", stub_notebook(chapter))]
    kinds += [(e.slug, entry_notebook(e)) for e in load_entries(chapters=[chapter])]
    written = []
    for k in range(copies):
        for name, nb in kinds:
            student = name if copies == 1 else f"{name}-{k}"
            d = Path(folder) / student / stem
            d.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, d / f"{stem}.ipynb")
            written.append(student)
    return written


# --------------------------------------------------------------------------------------
# Grading
# --------------------------------------------------------------------------------------

@dataclass
class Verdict:
    key: str              # "06/reference", "06/stub", "06/<slug>"
    kind: str             # reference | stub | entry (a wrong answer) | correct
    verdict: str          # full / zero / rejected, or what went wrong
    score: float
    max_score: float
    seconds: float
    violates: str = ""
    failures: list = field(default_factory=list)  # [(test name, message)]
    digest: str = ""      # grading_digest of what was graded
    support: str = ""     # support_digest_of its chapter when it was graded

    @property
    def ok(self):
        return self.verdict == GOOD[self.kind]


def _normal(text):
    return " ".join(text.split()).lower()


def judge(kind, run, violates=""):
    failures = [(t.name, t.failure) for t in run.results if t.ran and not t.passed]
    if run.infrastructure:  # no verdict about the submission: its tests could not run fairly
        return "no Ray", [("(course cell)", run.infrastructure), *failures]
    if kind in ("reference", "correct"):
        verdict = "full" if run.score == run.max_score and run.max_score > 0 else "not full"
    elif kind == "stub":
        verdict = "zero" if run.score == 0 else "not zero"
    elif run.score >= run.max_score:
        verdict = "accepted"
    elif any(_normal(phrase) in _normal(msg or "") for _, msg in failures
             for phrase in violates.split("||") if phrase.strip()):
        verdict = "rejected"
    else:
        verdict = "unexplained"
    return verdict, failures


def grade_one(kind, chapter, entry=None, timeout=30):
    """Grade one submission of ``chapter`` (reference, stub, or a corpus entry, wrong or correct);
    return a Verdict."""
    timeout = cell_timeout(chapter, timeout)  # a Ray chapter: nbval's cell budget (pyproject.toml)
    digest = grading_digest(chapter, entry)  # read before grading: what is graded is what is named
    support_digest = support_digest_of(chapter)
    if kind == "reference":
        nb, key, violates = reference_notebook(chapter), f"{chapter}/reference", ""
    elif kind == "stub":
        nb, key, violates = stub_notebook(chapter), f"{chapter}/stub", ""
    else:
        nb, key, violates = entry_notebook(entry), entry.key, entry.violates
    verdict = grade_notebook(kind, key, nb, violates, timeout)
    verdict.digest, verdict.support = digest, support_digest
    return verdict


def grade_notebook(kind, key, nb, violates="", timeout=30):
    """Grade a notebook in memory (a chapter with one solution cell replaced) in a fresh kernel,
    the way ``grade_one`` does; ``labs.mutants`` grades each mutant through here."""
    from lab_snippets.book.chapters import runs_alone
    from lab_snippets.labs.student import run_notebook
    # once graded, the kernel is killed rather than asked to stop (~0.6 s a submission), except in
    # a chapter that starts Ray, whose processes leave through ray.shutdown at the kernel's exit
    run = run_notebook(nb, NOTEBOOKS_DIR, timeout=timeout, quiet_kernel=True,
                       kill_at_end=not runs_alone(key.split("/")[0]))
    verdict, failures = judge(kind, run, violates)
    return Verdict(key, kind, verdict, run.score, run.max_score, round(run.seconds, 2), violates,
                   failures)


def jobs_for(chapters=None, corpus_dir=CORPUS_DIR):
    """(kind, chapter, entry) for every reference, stub and entry of the chosen chapters."""
    chapters = chapters or corpus_chapters(corpus_dir)
    entries = load_entries(corpus_dir, chapters)
    out = []
    for ch in chapters:
        out.append(("reference", ch, None))
        out.append(("stub", ch, None))
        out.extend((e.kind, ch, e) for e in entries if e.chapter == ch)
    return out


def run(chapters=None, jobs=2, timeout=30, log=print):
    # nbgrader's package imports itself in a circle: two pool threads importing it first at once
    # stop with importlib's _DeadlockError (seen on 3.14.8 with --jobs 2), so import it here
    import nbgrader.preprocessors  # noqa: F401

    todo = jobs_for(chapters)
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        verdicts = list(pool.map(lambda j: grade_one(j[0], j[1], j[2], timeout), todo))
    elapsed = time.monotonic() - t0
    print_table(verdicts, log)
    bad = [v for v in verdicts if not v.ok]
    log(f"{len(verdicts)} submissions, {len(bad)} with the wrong verdict, {elapsed:.1f}s "
        f"(Python {platform.python_version()}, {jobs} at a time)")
    return verdicts, elapsed


def print_table(verdicts, log=print):
    log(f"{'submission':<52} {'verdict':<12} {'score':>7}  {'time':>6}  failing test: message")
    for v in verdicts:
        mark = " " if v.ok else "!"
        first = f"{v.failures[0][0]}: {v.failures[0][1]}" if v.failures else ""
        first = first if len(first) <= 120 else first[:117] + "..."
        log(f"{mark}{v.key:<51} {v.verdict:<12} {v.score:g}/{v.max_score:g}".ljust(74)
            + f"  {v.seconds:5.1f}s  {first}")


def run_record(verdicts, elapsed):
    record = {"python": platform.python_version(), "seconds": round(elapsed, 1),
              "verdicts": {v.key: asdict(v) for v in verdicts}}
    if os.environ.get(SEED_VARIABLE):
        record["seed"] = int(os.environ[SEED_VARIABLE])
    return record


# --------------------------------------------------------------------------------------
# The committed verdicts and the instructor page's table
# --------------------------------------------------------------------------------------

#: Set to a folder, ``tests/test_corpus.py`` writes each verdict it checks there as a run record of
#: one submission (the test command's corpus run, on whatever Python runs it, becomes recordable).
RECORD_DIR_VARIABLE = "COURSE_CORPUS_RECORD_DIR"
#: Set to 1, ``tests/test_corpus.py`` grades every submission again; otherwise a submission whose
#: committed verdict on this Python is good and was made by the tests as they are now (``kept_verdict``:
#: same digest of chapter, entry, course modules and pins) is skipped, saying so.
FULL_VARIABLE = "COURSE_CORPUS_FULL"


def write_one(verdict, folder):
    """Write one verdict as a run record ``<folder>/<NN>-<slug>.json`` (``record`` reads the folder)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (verdict.key.replace("/", "-") + ".json")
    path.write_text(json.dumps(run_record([verdict], verdict.seconds), indent=1) + "\n")
    return path


def read_runs(paths):
    """Run records from files, and from every ``*.json`` in a folder given instead of a file."""
    files = []
    for p in map(Path, paths):
        if p.is_dir():
            files += sorted(p.glob("*.json"))
        elif p.is_file():
            files.append(p)
        else:
            raise CorpusError(f"{p}: no such run file or folder")
    if not files:
        raise CorpusError(f"no run records in {', '.join(map(str, paths))}")
    return [json.loads(f.read_text()) for f in files]


def merge(records, path=VERDICTS_JSON):
    """Merge run records (one Python each) into the committed verdicts file; keep only
    what was judged (key, kind, verdict, score) so the file changes only when a verdict does."""
    path = Path(path)
    data = json.loads(path.read_text()) if path.exists() else {"pythons": {}}
    for rec in records:
        if rec.get("seed") is not None:
            raise CorpusError(f"a seed sweep's run (seed {rec['seed']}) graded other scenarios than the "
                              "hidden tests draw: compare it with a recorded run, do not record it")
        ver = ".".join(rec["python"].split(".")[:2])
        slot = data["pythons"].setdefault(ver, {})
        for key, v in rec["verdicts"].items():
            if not v.get("digest"):
                raise CorpusError(f"{key}: this run's verdicts carry no digest of what they graded "
                                  "(a run from before digests): run the corpus again")
            slot[key] = {"kind": v["kind"], "verdict": v["verdict"], "score": v["score"],
                         "max_score": v["max_score"], "digest": v["digest"]}
            if v.get("support"):
                slot[key]["support"] = v["support"]
        data["pythons"][ver] = dict(sorted(slot.items()))
    data["pythons"] = dict(sorted(data["pythons"].items()))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return data


def table_markdown(data, corpus_dir=CORPUS_DIR):
    """Per chapter: wrong solutions and correct answers in the corpus, and on each Python how many
    wrong ones the tests reject, how many correct ones earn full marks, whether the reference earns
    full marks and the stub zero.  A count whose verdict is missing from the verdicts file (entry
    added, corpus not re-run) or was made by other tests (its digest is not the current one)
    shows as ``?``."""
    entries = load_entries(corpus_dir)
    digests = current_digests(corpus_dir)
    pythons = PYTHONS
    head = "| Chapter | Wrong solutions | Correct answers | " + " | ".join(
        f"Rejected on {p} | Correct at full on {p} | Reference / stub on {p}" for p in pythons) + " |"
    rule = "|---|---:|---:|" + "---:|---:|:---:|" * len(pythons)
    rows = [head, rule]
    for ch in corpus_chapters(corpus_dir):
        mine = [e for e in entries if e.chapter == ch and not e.correct]
        right = [e for e in entries if e.chapter == ch and e.correct]
        cells = [ch, str(len(mine)), str(len(right))]
        for p in pythons:
            got = current(data.get("pythons", {}).get(p, {}), digests)
            for group, good in ((mine, "rejected"), (right, "full")):
                seen = [got.get(e.key) for e in group]
                if any(s is None for s in seen):
                    cells.append("?")
                else:
                    cells.append(f"{sum(s['verdict'] == good for s in seen)}/{len(group)}")
            ref, stub = got.get(f"{ch}/reference"), got.get(f"{ch}/stub")
            cells.append(("full" if ref and ref["verdict"] == "full" else "?" if not ref else "NOT FULL")
                         + " / "
                         + ("0" if stub and stub["verdict"] == "zero" else "?" if not stub else "NOT 0"))
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


def kept_verdict(kind, chapter, entry=None, path=VERDICTS_JSON):
    """The committed verdict of this submission on the running Python if it is the good one for
    its kind and was made by the tests as they are now: the same grading digest and the same
    support digest (a verdict recorded without one is graded again); else None (grade it)."""
    path = Path(path)
    if not path.is_file():
        return None
    ver = ".".join(platform.python_version().split(".")[:2])
    key = entry.key if entry else f"{chapter}/{kind}"
    got = json.loads(path.read_text()).get("pythons", {}).get(ver, {}).get(key)
    if (not got or got.get("verdict") != GOOD[kind] or got.get("digest") != grading_digest(chapter, entry)
            or got.get("support") != support_digest_of(chapter)):
        return None
    return got


def current(recorded, digests):
    """The recorded verdicts of one Python that were made by the tests as they are now."""
    return {k: v for k, v in recorded.items() if v.get("digest") and v["digest"] == digests.get(k)}


def render_page(page_text, table):
    if BEGIN_TABLE not in page_text or END_TABLE not in page_text:
        raise CorpusError(f"{INSTRUCTORS_PAGE.name}: missing the generated-table markers")
    before, rest = page_text.split(BEGIN_TABLE, 1)
    _, after = rest.split(END_TABLE, 1)
    return f"{before}{BEGIN_TABLE}\n\n{table}\n{END_TABLE}{after}"


def write_table(page=INSTRUCTORS_PAGE, verdicts=VERDICTS_JSON, check=False):
    data = json.loads(Path(verdicts).read_text()) if Path(verdicts).exists() else {"pythons": {}}
    text = Path(page).read_text()
    new = render_page(text, table_markdown(data))
    if check:
        return new == text
    if new != text:
        Path(page).write_text(new)
    return True


# --------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------

def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m lab_snippets.labs.corpus", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="grade the reference, the stub and every wrong solution")
    r.add_argument("--chapter", action="append", default=[], help="NN (repeatable; default all)")
    r.add_argument("--json", help="write this run's verdicts to this file")
    r.add_argument("--jobs", type=int, default=2, help="kernels at a time (default 2)")
    r.add_argument("--timeout", type=int, default=30, help="per-cell timeout (s)")
    r.add_argument("--seed", type=int, help="a seed sweep: the generated scenarios drawn from this seed "
                   "(a wrong answer accepted here but rejected in the recorded run is a weak spot)")
    m = sub.add_parser("record", help="merge run JSON files into " + str(VERDICTS_JSON.relative_to(REPO)))
    m.add_argument("runs", nargs="+", help="run files (--json), or folders of one-verdict records "
                   f"(the test command writes them when {RECORD_DIR_VARIABLE} is set)")
    t = sub.add_parser("table", help="regenerate the table on the instructor page")
    t.add_argument("--check", action="store_true", help="only check it is up to date")
    args = p.parse_args(argv)
    try:
        if args.cmd == "run":
            chapters = [c.zfill(2) for c in args.chapter] or None
            if args.seed is not None:  # the kernels inherit it (lab_snippets.scenarios.differential)
                os.environ[SEED_VARIABLE] = str(args.seed)
            verdicts, elapsed = run(chapters, jobs=args.jobs, timeout=args.timeout)
            if args.json:
                Path(args.json).parent.mkdir(parents=True, exist_ok=True)
                Path(args.json).write_text(json.dumps(run_record(verdicts, elapsed), indent=1) + "\n")
            return 0 if all(v.ok for v in verdicts) else 1
        if args.cmd == "record":
            merge(read_runs(args.runs))
            write_table()
            return 0
        ok = write_table(check=args.check)
        if not ok:
            print(f"{INSTRUCTORS_PAGE.relative_to(REPO)} is out of step: run "
                  "`python -m lab_snippets.labs.corpus table`", file=sys.stderr)
        return 0 if ok else 1
    except CorpusError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

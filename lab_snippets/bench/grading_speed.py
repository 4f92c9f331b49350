"""Grading one submission before and after ``labs.deps`` (the experiments not run), side by side.

    python -m lab_snippets.bench.grading_speed [--chapter NN ...] [-k 4] [--path grade|corpus|both]

For each chapter the same submissions (the reference, the student stub and the first corpus
entries, ``-k`` in all) are graded twice each way, interleaved ABBA: running every cell (as
before: ``Options.run_all`` and a fresh worker process per submission for ``grade``, no release
record for the corpus's ``grade_notebook``) and running only what the grade needs (``grade``:
workers forked by the run's zygote, ``labs.zygote``). ``grade`` grades the ``k`` submissions in
one run, one at a time (as at a deadline; each in the sandbox with a fresh kernel), four runs in
the order before, after, after, before; a submission's time is its row's seconds.
``--before-zygote`` gives the before side the zygote too, so that only ``run_all`` differs.
``corpus`` is the code path of ``validate`` and of the corpus verdicts in CI, ABBA per
submission. Every grading of a submission must give the same score to every test cell
(``grade``) or the same verdict and score (``corpus``); the report gives the median seconds per
submission of each side and their ratio (target: at most 1/3).
"""

from __future__ import annotations

import argparse
import copy
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

TARGET = 1 / 3


@dataclass
class Pair:
    """One submission graded both ways."""

    key: str
    before: float = 0.0          # seconds, every cell run
    after: float = 0.0           # seconds, only what the grade needs
    same: bool = True            # the same grade both ways
    detail: list[str] = field(default_factory=list)


def _submissions(chapter: str, course_dir: Path, k: int) -> list[tuple[str, object]]:
    """(key, notebook) of the reference, the stub and the first corpus entries, as students hand in."""
    import nbformat

    from lab_snippets.labs import corpus

    stem = corpus.chapter_path(chapter).stem
    source = nbformat.read(course_dir / "source" / stem / f"{stem}.ipynb", as_version=4)
    out = [(f"{chapter}/reference", source),
           (f"{chapter}/stub",
            nbformat.read(course_dir / "release" / stem / f"{stem}.ipynb", as_version=4))]
    for entry in corpus.load_entries(chapters=[chapter])[:max(0, k - 2)]:
        nb = copy.deepcopy(source)
        cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")]
        cells[entry.solution_cell].source = entry.source.rstrip("\n")
        out.append((entry.key, nb))
    return out[:k]


def _grade_run(subs: list[tuple[str, object]], stem: str, course_dir: Path, work: Path,
               run_all: bool, zygote: bool) -> tuple[float, dict[str, tuple[float, object]]]:
    """One ``grade`` run over every submission (one student each, one at a time, as at a
    deadline: a run's zygote serves them all); (wall seconds, {key: (row seconds, grade)})."""
    import nbformat

    from lab_snippets import labs
    from lab_snippets.labs import grader

    sub = work / "s"
    shutil.rmtree(sub, ignore_errors=True)
    students = {f"s{i:03d}": key for i, (key, _) in enumerate(subs)}
    for i, (_, nb) in enumerate(subs):
        student = f"s{i:03d}"
        (sub / student / stem).mkdir(parents=True)
        nbformat.write(nb, sub / student / stem / f"{stem}.ipynb")
    saved, grader.USE_ZYGOTE = grader.USE_ZYGOTE, zygote
    t0 = time.monotonic()
    try:  # resume=False: a journal hit would hand back an earlier run's row and seconds
        rows = labs.grade(sub, out=work / "g.csv", course_dir=course_dir,
                          options=labs.Options(jobs=1, run_all=run_all), log=lambda *a: None,
                          resume=False)
    finally:
        grader.USE_ZYGOTE = saved
    wall = time.monotonic() - t0
    return wall, {students[r.student]: (r.seconds, (r.status, sorted(r.cells.items())))
                  for r in rows}


def _corpus_once(chapter: str, key: str, run_all: bool):
    from lab_snippets.labs import corpus, deps

    kind = key.split("/")[1] if key.endswith(("/reference", "/stub")) else "entry"
    entry = next((e for e in corpus.load_entries(chapters=[chapter]) if e.key == key), None)
    if kind == "reference":
        nb = corpus.reference_notebook(chapter)
    elif kind == "stub":
        nb = corpus.stub_notebook(chapter)
    else:
        nb = corpus.entry_notebook(entry)
    if run_all:
        nb.metadata.pop(deps.META_KEY, None)
    from lab_snippets.labs.common import cell_timeout
    t0 = time.monotonic()
    v = corpus.grade_notebook(kind, key, nb, entry.violates if entry else "",
                              cell_timeout(chapter, 30))
    return time.monotonic() - t0, (v.verdict, v.score)


SIDES = {"before": True, "after": False}  # side: run_all


def _measure_grade(ch: str, course: Path, tmp: Path, k: int, before_zygote: bool, log) -> list[Pair]:
    """ABBA over whole ``grade`` runs of the chapter's ``k`` submissions."""
    from lab_snippets.labs import corpus

    stem = corpus.chapter_path(ch).stem
    subs = _submissions(ch, course, k)
    pairs = {key: Pair(key) for key, _ in subs}
    seen: dict[str, dict[str, list]] = {key: {"before": [], "after": []} for key in pairs}
    for side in ("before", "after", "after", "before"):
        wall, got = _grade_run(subs, stem, course, tmp, SIDES[side],
                               before_zygote if side == "before" else True)
        log(f"  grade  {ch} {side:<6} run: {len(got)} submissions in {wall:.1f}s "
            f"({wall / max(1, len(got)):.1f}s each)")
        for key, (secs, grade) in got.items():
            setattr(pairs[key], side, getattr(pairs[key], side) + secs / 2)
            seen[key][side].append(grade)
    for key, pair in pairs.items():
        grades = seen[key]["before"] + seen[key]["after"]
        pair.same = len(grades) == 4 and len({repr(g) for g in grades}) == 1
        pair.detail = [f"{s}: {g}" for s, gs in seen[key].items() for g in gs]
    return list(pairs.values())


def measure(chapters: list[str], k: int, path: str, log=print,
            before_zygote: bool = False) -> dict[str, list[Pair]]:
    """{path: pairs} for ``grade`` and/or ``corpus``: ``grade`` ABBA over whole runs (before,
    after, after, before), ``corpus`` ABBA per submission. ``before_zygote``: the before side's
    ``grade`` forks its workers from a zygote too (else a fresh worker each, as before)."""
    from lab_snippets import labs
    from lab_snippets.labs import corpus

    tmp = Path(tempfile.mkdtemp(prefix="grading-speed-"))
    out: dict[str, list[Pair]] = {"grade": [], "corpus": []}
    try:
        for ch in chapters:
            course = tmp / f"course-{ch}"
            labs.release([str(corpus.chapter_path(ch))], course_dir=course, log=lambda *a: None)
            if path in ("grade", "both"):
                out["grade"] += _log_pairs("grade", _measure_grade(ch, course, tmp, k,
                                                                   before_zygote, log), log)
            if path not in ("corpus", "both"):
                continue
            for key, _ in _submissions(ch, course, k):
                pair = Pair(key)
                seen = {}
                for run_all in (True, False, False, True):
                    secs, grade = _corpus_once(ch, key, run_all)
                    side = "before" if run_all else "after"
                    setattr(pair, side, getattr(pair, side) + secs / 2)
                    seen.setdefault(side, []).append(grade)
                pair.same = len({repr(g) for g in seen["before"] + seen["after"]}) == 1
                pair.detail = [f"{s}: {g}" for s, gs in seen.items() for g in gs]
                out["corpus"] += _log_pairs("corpus", [pair], log)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _log_pairs(which: str, pairs: list[Pair], log) -> list[Pair]:
    for pair in pairs:
        log(f"  {which:<6} {pair.key:<52} before {pair.before:5.1f}s  after {pair.after:5.1f}s"
            f"  {'same grade' if pair.same else 'DIFFERENT: ' + '; '.join(pair.detail)}")
    return pairs


def summary(pairs: list[Pair]) -> dict:
    before = statistics.median(p.before for p in pairs)
    after = statistics.median(p.after for p in pairs)
    ratio = after / before if before else float("inf")
    return {"n": len(pairs), "before": before, "after": after, "ratio": ratio,
            "ok": ratio <= TARGET, "same": all(p.same for p in pairs)}


def format_summary(name: str, s: dict) -> str:
    return (f"{name}: {s['n']} submissions, median per submission {s['before']:.1f}s before, "
            f"{s['after']:.1f}s after, ratio {s['ratio']:.2f} "
            f"({'OK' if s['ok'] else 'OVER'}, target <= {TARGET:.2f}); "
            f"grades {'all the same' if s['same'] else 'DIFFER'}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--chapter", action="append", default=[], help="NN (repeatable; default 06)")
    p.add_argument("-k", type=int, default=4, help="submissions per chapter (default 4)")
    p.add_argument("--path", choices=("grade", "corpus", "both"), default="both")
    p.add_argument("--before-zygote", action="store_true",
                   help="the before side forks its workers from a zygote too (only run_all differs)")
    args = p.parse_args(argv)
    results = measure(args.chapter or ["06"], args.k, args.path, before_zygote=args.before_zygote)
    ok = True
    for name, pairs in results.items():
        if pairs:
            s = summary(pairs)
            print(format_summary(name, s))
            ok = ok and s["same"]
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

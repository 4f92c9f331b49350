"""Grading one submission before and after ``labs.deps`` (the experiments not run), side by side.

    python -m lab_snippets.bench.grading_speed [--chapter NN ...] [-k 4] [--path grade|corpus|both]

For each chapter the same submissions (the reference, the student stub and the first corpus
entries, ``-k`` in all) are graded twice each, interleaved ABBA: once running every cell (as
before: ``Options.run_all`` for ``grade``, no release record for the corpus's ``grade_notebook``)
and once running only what the grade needs. ``grade`` grades each submission alone (one worker,
the sandbox, a fresh kernel); ``corpus`` is the code path of ``validate`` and of the corpus
verdicts in CI. The two gradings of a submission must give the same score to every test cell
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


def _grade_once(nb, stem: str, course_dir: Path, work: Path, run_all: bool):
    import nbformat

    from lab_snippets import labs

    sub = work / "s"
    shutil.rmtree(sub, ignore_errors=True)
    (sub / "student" / stem).mkdir(parents=True)
    nbformat.write(nb, sub / "student" / stem / f"{stem}.ipynb")
    [row] = labs.grade(sub, out=work / "g.csv", course_dir=course_dir,
                       options=labs.Options(jobs=1, run_all=run_all), log=lambda *a: None)
    return row.seconds, (row.status, dict(row.cells))


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


def measure(chapters: list[str], k: int, path: str, log=print) -> dict[str, list[Pair]]:
    """{path: pairs} for ``grade`` and/or ``corpus``, each submission ABBA (before, after, after, before)."""
    from lab_snippets import labs
    from lab_snippets.labs import corpus

    tmp = Path(tempfile.mkdtemp(prefix="grading-speed-"))
    out: dict[str, list[Pair]] = {"grade": [], "corpus": []}
    try:
        for ch in chapters:
            course = tmp / f"course-{ch}"
            labs.release([str(corpus.chapter_path(ch))], course_dir=course, log=lambda *a: None)
            stem = corpus.chapter_path(ch).stem
            for key, nb in _submissions(ch, course, k):
                for which in (("grade",) if path == "grade" else ("corpus",) if path == "corpus"
                              else ("grade", "corpus")):
                    pair = Pair(key)
                    seen = {}
                    for run_all in (True, False, False, True):
                        if which == "grade":
                            secs, grade = _grade_once(nb, stem, course, tmp, run_all)
                        else:
                            secs, grade = _corpus_once(ch, key, run_all)
                        side = "before" if run_all else "after"
                        setattr(pair, side, getattr(pair, side) + secs / 2)
                        seen.setdefault(side, []).append(grade)
                    pair.same = len({repr(g) for g in seen["before"] + seen["after"]}) == 1
                    pair.detail = [f"{s}: {g}" for s, gs in seen.items() for g in gs]
                    out[which].append(pair)
                    log(f"  {which:<6} {key:<52} before {pair.before:5.1f}s  after {pair.after:5.1f}s"
                        f"  {'same grade' if pair.same else 'DIFFERENT: ' + '; '.join(pair.detail)}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


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
    args = p.parse_args(argv)
    results = measure(args.chapter or ["06"], args.k, args.path)
    ok = True
    for name, pairs in results.items():
        if pairs:
            s = summary(pairs)
            print(format_summary(name, s))
            ok = ok and s["same"]
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

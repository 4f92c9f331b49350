"""Mutation score of every exercise's tests: mutants of each reference solution, graded like a
submission (issue 28, item 4).

    python -m lab_snippets.labs.mutants list [--chapter NN ...]          # the mutants, not graded
    python -m lab_snippets.labs.mutants show NN/cC/OPERATOR/K            # one mutant's diff
    python -m lab_snippets.labs.mutants try NN/cC/OPERATOR/K ...         # grade these, record nothing
    python -m lab_snippets.labs.mutants run [--chapter NN ...] [--operator OP ...] [--timeout S]
    python -m lab_snippets.labs.mutants table [--check]                  # the instructor page's table

``lab_snippets.labs.mutops`` makes the mutants: each changes one site of a chapter's reference
solution (only code inside its ``### BEGIN SOLUTION`` regions) in a way aimed at what the
exercises teach (an ``await``, a ``finally``, a ``cancel()``, a timeout, a kill, a bound, a
cleanup, a ``join``, a blocking sleep, a lock, a shield, a re-raise, a task run alone, a call
moved onto the loop). A mutant is named ``NN/c<cell>/<operator>/<k>``: the k-th site of that
operator in the chapter's c-th solution cell.

``run`` first grades the chapter's reference, then every mutant, one kernel at a time, through
``corpus.grade_notebook``: the notebook with that solution cell replaced, graded exactly as a
corpus entry is (a fresh kernel through ``labs.student.run_notebook``, the runner ``validate``
uses; a test cell is judged as ``grade`` judges it). A mutant is **killed** when it scores below
full marks, **survived** when it earns them. Two kinds are set aside, never silently:

- **duplicate**: its program is the same as an earlier mutant's (say ``drop-finally`` and
  ``cleanup-into-try`` on a ``try`` with no ``except``): graded once, under the first name;
- **equivalent**: listed in ``tests/equivalent_mutants.toml`` with the site it changes and a
  one-line reason why no test can tell it from the reference (not graded; a mutant listed after
  it was graded counts as equivalent in the table without a new run). A listed name whose site no longer
  matches the solution is an error (``table --check`` and ``tests/test_mutants.py`` fail), so the
  list is reviewed again whenever a solution changes.

The score of an exercise is killed / (killed + survived): the share of behaviour-changing
mutants its tests reject; the goal is at least 90 %. ``run`` records each chapter in
``book/reference/mutant_scores.json`` as soon as it is graded (Python version, seconds per
mutant, each mutant's verdict and the first failing test) and regenerates the table on the
instructor page. A run on a Python in ``ALSO`` (3.14, the newest release that runs every
chapter, issue 36) is recorded beside the main record, under ``also/<X.Y>``, and shown in its
own column; a run on any other Python replaces the main record. It is a maintainer command,
not part of CI: CI checks only that the recorded mutants are still the ones the solutions give
and that the page is in step.
"""

from __future__ import annotations

import argparse
import difflib
import json
import platform
import sys
import time
import tomllib
from pathlib import Path

from lab_snippets import REPO_ROOT as REPO
from lab_snippets.labs import corpus, mutops

SCORES_JSON = REPO / "book" / "reference" / "mutant_scores.json"
EQUIVALENT_TOML = REPO / "tests" / "equivalent_mutants.toml"
BEGIN_TABLE = "<!-- BEGIN GENERATED: mutant scores (python -m lab_snippets.labs.mutants table) -->"
END_TABLE = "<!-- END GENERATED: mutant scores -->"
GOAL = 0.9
# Pythons whose scores are kept beside the main record (``chapters``, on 3.11), each in its own column
ALSO = ("3.14",)


def _minor(version: str) -> str:
    return ".".join(version.split(".")[:2])

def _graded_chapters() -> tuple[str, ...]:
    """The chapters in the course's table (each has one graded exercise)."""
    from lab_snippets.book.chapters import existing
    return tuple(c.number for c in existing())


CHAPTERS = _graded_chapters()


class MutantError(Exception):
    """A stale equivalent-mutant entry or an unknown mutant name (shown to the user)."""


def chapter_mutants(chapter, operators=None):
    """{name: Mutant} for every mutant of the chapter's solution cells, in a stable order."""
    nb = corpus.reference_notebook(chapter)
    out = {}
    for c, cell in enumerate(corpus._solution_cells(nb)):
        for m in mutops.mutants(cell.source, operators):
            out[f"{chapter}/c{c}/{m.name}"] = (c, m)
    return out


def load_equivalent(path=EQUIVALENT_TOML):
    """{mutant name: {"site": ..., "reason": ...}} from the reviewed list."""
    path = Path(path)
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text())
    for name, entry in data.items():
        if not entry.get("site") or not entry.get("reason"):
            raise MutantError(f"{path.name}: [{name!r}] needs a site and a one-line reason")
    return data


def stale_equivalents(equivalent, chapters=CHAPTERS):
    """Listed names that no longer name a mutant whose site is the listed one."""
    stale, by_chapter = [], {}
    for name, entry in equivalent.items():
        ch = name.split("/", 1)[0]
        if ch not in chapters:
            continue
        if ch not in by_chapter:
            by_chapter[ch] = chapter_mutants(ch)
        got = by_chapter[ch].get(name)
        if got is None or got[1].site != entry["site"]:
            stale.append(name)
    return stale


def classify(mutants, equivalent):
    """{name: None (to grade) | "duplicate of X" | "equivalent: reason"} in mutant order."""
    seen, out = {}, {}
    for name, (c, m) in mutants.items():
        key = (c, m.source)
        if key in seen:
            out[name] = f"duplicate of {seen[key]}"
        elif name in equivalent and equivalent[name]["site"] == m.site:
            out[name] = f"equivalent: {equivalent[name]['reason']}"
            seen[key] = name
        else:
            out[name] = None
            seen[key] = name
    return out


def mutant_notebook(chapter, cell, source):
    nb = corpus.reference_notebook(chapter)
    corpus._solution_cells(nb)[cell].source = source.rstrip("\n")
    return nb


def _first_failure(v):
    if not v.failures:
        return ""
    name, msg = v.failures[0]
    text = f"{name}: {msg}"
    return text if len(text) <= 160 else text[:157] + "..."


def grade_chapter(chapter, operators=None, timeout=30, equivalent=None, log=print):
    """Grade the reference and every mutant of one chapter; return its record."""
    equivalent = load_equivalent() if equivalent is None else equivalent
    t0 = time.monotonic()
    ref = corpus.grade_one("reference", chapter, timeout=timeout)
    log(f"{chapter}/reference: {ref.verdict} {ref.score:g}/{ref.max_score:g} ({ref.seconds:.1f}s)")
    record = {"reference": ref.verdict, "mutants": {}}
    if ref.verdict != "full":
        record["seconds"] = round(time.monotonic() - t0, 1)
        return record
    mutants = chapter_mutants(chapter, operators)
    graded = 0
    for name, why in classify(mutants, equivalent).items():
        c, m = mutants[name]
        row = {"operator": m.operator, "line": m.line, "site": m.site}
        if why is None:
            v = corpus.grade_notebook("mutant", name, mutant_notebook(chapter, c, m.source),
                                      timeout=timeout)
            graded += 1
            row.update(verdict="survived" if v.verdict == "accepted" else "killed",
                       killed_by=_first_failure(v), seconds=v.seconds)
        else:
            row.update(verdict=why.split(":")[0].split(" ")[0], note=why)
        record["mutants"][name.split("/", 1)[1]] = row
        log(f"  {name:<36} {row['verdict']:<10} {row.get('seconds', 0):5.1f}s  "
            f"{row.get('killed_by') or row.get('note') or m.site}")
    record["seconds"] = round(time.monotonic() - t0, 1)
    record["graded"] = graded
    return record


def merge(chapter, record, path=SCORES_JSON):
    path = Path(path)
    data = json.loads(path.read_text()) if path.exists() else {"chapters": {}}
    record["python"] = platform.python_version()
    minor = _minor(record["python"])
    if minor in ALSO:
        slot = data.setdefault("also", {}).setdefault(minor, {})
        slot[chapter] = record
        data["also"][minor] = dict(sorted(slot.items()))
    else:
        data["chapters"][chapter] = record
        data["chapters"] = dict(sorted(data["chapters"].items()))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return data


def verdict(chapter, name, row, equivalent):
    """A recorded row's verdict under today's equivalent list: a mutant listed (same site) since
    it was graded counts as equivalent, without grading it again (a listed mutant that was
    killed was killed by something other than its change, such as a timing test under load)."""
    listed = equivalent.get(f"{chapter}/{name}")
    if row["verdict"] in ("survived", "killed") and listed and listed["site"] == row["site"]:
        return "equivalent"
    return row["verdict"]


def counts(chapter, record, equivalent=None):
    equivalent = load_equivalent() if equivalent is None else equivalent
    rows = [verdict(chapter, n, r, equivalent) for n, r in record.get("mutants", {}).items()]
    tally = {k: rows.count(k) for k in ("killed", "survived", "equivalent", "duplicate")}
    tally["total"] = len(rows)
    return tally


def run(chapters=None, operators=None, timeout=30, log=print, path=SCORES_JSON):
    equivalent = load_equivalent()
    stale = stale_equivalents(equivalent, chapters or CHAPTERS)
    if stale:
        raise MutantError(f"{EQUIVALENT_TOML.name}: entries whose site changed: {', '.join(stale)}")
    t0, graded = time.monotonic(), 0
    for ch in chapters or CHAPTERS:
        record = grade_chapter(ch, operators, timeout, equivalent, log)
        merge(ch, record, path)
        graded += record.get("graded", 0)
        c = counts(ch, record, equivalent)
        log(f"{ch}: {c['killed']}/{c['killed'] + c['survived']} killed "
            f"({c['equivalent']} equivalent, {c['duplicate']} duplicate), {record['seconds']:.0f}s")
        write_table(scores=path)
    elapsed = time.monotonic() - t0
    log(f"{graded} mutants graded in {elapsed:.0f}s ({elapsed / max(graded, 1):.1f}s per mutant, "
        f"Python {platform.python_version()})")


# --------------------------------------------------------------------------------------
# The instructor page's table
# --------------------------------------------------------------------------------------

def _score(ch, record, equivalent):
    """(killed, behaviour-changing, score text with ✗ below the goal, surviving names)."""
    c = counts(ch, record, equivalent)
    changing = c["killed"] + c["survived"]
    score = f"{100 * c['killed'] / changing:.0f} %" if changing else "–"
    flag = "" if not changing or c["killed"] >= GOAL * changing else " ✗"
    survivors = [k.split("/", 1)[1] for k, r in record["mutants"].items()
                 if verdict(ch, k, r, equivalent) == "survived"]
    return c, changing, score + flag, survivors


def table_markdown(data, equivalent=None):
    """Per chapter: mutants made, set aside, behaviour-changing, killed, score, surviving operators;
    then, for each Python in ``ALSO``, killed / behaviour-changing there (``?`` when not run)."""
    equivalent = load_equivalent() if equivalent is None else equivalent
    rows = ["| Chapter | Mutants | Equivalent | Duplicate | Behaviour-changing | Killed | Score "
            "| Surviving |" + "".join(f" Killed on {p} |" for p in ALSO),
            "|---|---:|---:|---:|---:|---:|---:|---|" + "---:|" * len(ALSO)]
    for ch in CHAPTERS:
        record = data.get("chapters", {}).get(ch)
        if record is None:
            rows.append(f"| {ch} | ? | ? | ? | ? | ? | ? |  |" + " ? |" * len(ALSO))
            continue
        c, changing, score, survivors = _score(ch, record, equivalent)
        row = (f"| {ch} | {c['total']} | {c['equivalent']} | {c['duplicate']} | {changing} | "
               f"{c['killed']} | {score} | {', '.join(f'`{s}`' for s in survivors)} |")
        for p in ALSO:
            other = data.get("also", {}).get(p, {}).get(ch)
            if other is None or other.get("reference") != "full":
                row += " ? |" if other is None else " reference not full ✗ |"
                continue
            c2, changing2, score2, surv2 = _score(ch, other, equivalent)
            row += f" {c2['killed']}/{changing2} ({score2})" + "".join(
                f" `{s}`" for s in surv2 if s not in survivors) + " |"
        rows.append(row)
    return "\n".join(rows) + "\n"


def render_page(page_text, table):
    if BEGIN_TABLE not in page_text or END_TABLE not in page_text:
        raise MutantError(f"{corpus.INSTRUCTORS_PAGE.name}: missing the mutant-table markers")
    before, rest = page_text.split(BEGIN_TABLE, 1)
    _, after = rest.split(END_TABLE, 1)
    return f"{before}{BEGIN_TABLE}\n\n{table}\n{END_TABLE}{after}"


def write_table(page=corpus.INSTRUCTORS_PAGE, scores=SCORES_JSON, check=False):
    data = json.loads(Path(scores).read_text()) if Path(scores).exists() else {"chapters": {}}
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

def _show(name):
    ch = name.split("/", 1)[0]
    mutants = chapter_mutants(ch)
    if name not in mutants:
        raise MutantError(f"no mutant {name!r}; `list --chapter {ch}` names them")
    c, m = mutants[name]
    original = corpus._solution_cells(corpus.reference_notebook(ch))[c].source
    import ast
    before = ast.unparse(ast.parse(original)).splitlines()
    return "\n".join(difflib.unified_diff(before, m.source.splitlines(), "reference", name,
                                          lineterm=""))


def try_mutants(names, timeout=30, log=print):
    """Grade the named mutants (after a test change, say) and print each verdict; record nothing."""
    verdicts = {}
    for name in names:
        ch = name.split("/", 1)[0]
        found = chapter_mutants(ch)
        if name not in found:
            raise MutantError(f"no mutant {name!r}; `list --chapter {ch}` names them")
        c, m = found[name]
        v = corpus.grade_notebook("mutant", name, mutant_notebook(ch, c, m.source), timeout=timeout)
        verdicts[name] = "survived" if v.verdict == "accepted" else "killed"
        log(f"{name:<36} {verdicts[name]:<10} {v.seconds:5.1f}s  {_first_failure(v) or m.site}")
    return verdicts


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m lab_snippets.labs.mutants", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    ls = sub.add_parser("list", help="the mutants of each chapter (not graded)")
    r = sub.add_parser("run", help="grade every mutant; record the scores; regenerate the table")
    for q in (ls, r):
        q.add_argument("--chapter", action="append", default=[], help="NN (repeatable; default all)")
        q.add_argument("--operator", action="append", default=[], choices=list(mutops.OPERATORS))
    r.add_argument("--timeout", type=int, default=30, help="per-cell timeout (s)")
    s = sub.add_parser("show", help="the diff of one mutant against the reference")
    s.add_argument("name")
    tr = sub.add_parser("try", help="grade the named mutants and print the verdicts (records nothing)")
    tr.add_argument("names", nargs="+")
    tr.add_argument("--timeout", type=int, default=30, help="per-cell timeout (s)")
    t = sub.add_parser("table", help="regenerate the table on the instructor page")
    t.add_argument("--check", action="store_true", help="only check it is up to date")
    args = p.parse_args(argv)
    try:
        if args.cmd in ("list", "run"):
            chapters = [c.zfill(2) for c in args.chapter] or None
            operators = args.operator or None
            if args.cmd == "run":
                run(chapters, operators, args.timeout)
                return 0
            equivalent = load_equivalent()
            for ch in chapters or CHAPTERS:
                mutants = chapter_mutants(ch, operators)
                for name, why in classify(mutants, equivalent).items():
                    m = mutants[name][1]
                    print(f"{name:<36} line {m.line:<3} {m.site}" + (f"  [{why}]" if why else ""))
            return 0
        if args.cmd == "try":
            verdicts = try_mutants(args.names, args.timeout)
            return 0 if all(v == "killed" for v in verdicts.values()) else 1
        if args.cmd == "show":
            print(_show(args.name))
            return 0
        ok = write_table(check=args.check)
        stale = stale_equivalents(load_equivalent())
        if stale:
            print(f"{EQUIVALENT_TOML.name}: entries whose site changed: {', '.join(stale)}",
                  file=sys.stderr)
        if not ok:
            print(f"{corpus.INSTRUCTORS_PAGE.relative_to(REPO)} is out of step: run "
                  "`python -m lab_snippets.labs.mutants table`", file=sys.stderr)
        return 0 if ok and not stale else 1
    except MutantError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

"""Fast unit tests of ``lab_snippets.labs.corpus``: the entries' headers, the verdict rules, the
run's bookkeeping, the committed verdicts file and the instructor page's table, and the command
line (grading itself is replaced: no kernel; tests/test_corpus.py runs the real corpus).

Every corpus here is made in ``tmp_path``: ``bench.mutation`` copies ``tests/`` without the corpus.
"""

from __future__ import annotations

import concurrent.futures
import json
import platform
import re
import time
import types
from pathlib import Path

import pytest

from lab_snippets.labs import corpus
from lab_snippets.labs.common import RAY_CELL_TIMEOUT, cell_timeout
from lab_snippets.labs.corpus import CorpusError, Entry, Verdict
from lab_snippets.labs.student import TestResult, TestRun

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "labs" / "90_fixture_lab.py"


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


ENTRY = ("# mistake: never awaits the sleep\n# violates:  yields to the loop \n\n\n"
         "def add(a, b):\n    return a + b\n\n\n")


# --- entries -------------------------------------------------------------------------------------

def test_an_entry_is_its_headers_and_the_whole_solution_cell_after_them(tmp_path):
    e = corpus.parse_entry(write(tmp_path / "06" / "no_sleep.py", ENTRY))
    assert (e.chapter, e.slug, e.key) == ("06", "no_sleep", "06/no_sleep")
    assert (e.mistake, e.violates, e.solution_cell) == ("never awaits the sleep", "yields to the loop", 0)
    assert e.source == "def add(a, b):\n    return a + b\n"


def test_an_entry_can_pick_another_solution_cell(tmp_path):
    path = write(tmp_path / "07" / "x.py", "#mistake:m\n#  violates : v\n# solution-cell: 2\nx = 1")
    e = corpus.parse_entry(path)
    assert (e.mistake, e.violates, e.solution_cell, e.source) == ("m", "v", 2, "x = 1\n")


@pytest.mark.parametrize(("text", "message"), [
    ("# violates: v\nx = 1\n", "needs a '# mistake: ...' header line"),
    ("# mistake: m\nx = 1\n", "needs a '# violates: ...' header line"),
    ("# mistake: m\n# violates:\nx = 1\n", "needs a '# violates: ...' header line"),
    ("# mistake: m\n# violates: v\n", "no solution source after the header"),
    ("# mistake: m\n# violates: v\n\n   \n", "no solution source after the header"),
    ("# mistake: m\n# violates: v\ndef f():\n    raise NotImplementedError\n",
     "a corpus entry is a plausible wrong answer, not a stub"),
])
def test_a_malformed_entry_is_a_named_error(tmp_path, text, message):
    path = write(tmp_path / "06" / "bad.py", text)
    with pytest.raises(CorpusError, match=re.escape(f"{path}: {message}")):
        corpus.parse_entry(path)


def test_an_entry_in_the_repository_is_named_by_its_path_from_the_top(tmp_path, monkeypatch):
    monkeypatch.setattr(corpus, "REPO", tmp_path)
    path = write(tmp_path / "tests" / "corpus" / "06" / "bad.py", "# violates: v\nx = 1\n")
    with pytest.raises(CorpusError, match="^tests/corpus/06/bad.py: needs a '# mistake"):
        corpus.parse_entry(path)


def make_corpus(root):
    write(root / "06" / "b_second.py", "# mistake: b\n# violates: vb\nb = 1\n")
    write(root / "06" / "a_first.py", "# mistake: a\n# violates: va\na = 1\n")
    write(root / "07" / "c.py", "# mistake: c\n# violates: vc\nc = 1\n")
    write(root / "07" / "notes.txt", "not an entry")
    write(root / "extra" / "d.py", "# mistake: d\n# violates: vd\nd = 1\n")
    (root / "09").mkdir()
    return root


def test_entries_and_chapters_are_read_in_order_and_filtered(tmp_path):
    root = make_corpus(tmp_path / "corpus")
    assert [e.key for e in corpus.load_entries(root)] == ["06/a_first", "06/b_second", "07/c"]
    assert [e.key for e in corpus.load_entries(root, ["07"])] == ["07/c"]
    assert corpus.corpus_chapters(root) == ["06", "07", "09"]
    assert corpus.load_entries(tmp_path / "none") == []


def test_a_chapter_is_its_one_notebook(tmp_path):
    nb = write(tmp_path / "06_semaphore.py", "")
    assert corpus.chapter_path("06", tmp_path) == nb
    with pytest.raises(CorpusError, match="chapter 07: expected one notebooks/07_"):
        corpus.chapter_path("07", tmp_path)
    write(tmp_path / "06_other.py", "")
    with pytest.raises(CorpusError, match="found"):
        corpus.chapter_path("06", tmp_path)


# --- the three kinds of submission ---------------------------------------------------------------

@pytest.fixture
def fixture_chapter(monkeypatch):
    """``reference_notebook`` reads the fixture lab (two solution cells) for any chapter."""
    from lab_snippets.labs.markers import mark_notebook, read_notebook

    monkeypatch.setattr(corpus, "reference_notebook",
                        lambda chapter: mark_notebook(read_notebook(FIXTURE), FIXTURE.name))


def solutions(nb):
    return [c.source for c in corpus._solution_cells(nb)]


def test_an_entry_replaces_the_solution_cell_it_names(fixture_chapter):
    ref = solutions(corpus.reference_notebook("90"))
    for k in (0, 1):
        e = Entry("90", "x", Path("x.py"), "m", "v", "def wrong():\n    pass\n\n", solution_cell=k)
        got = solutions(corpus.entry_notebook(e))
        assert got[k] == "def wrong():\n    pass" and got[1 - k] == ref[1 - k]


@pytest.mark.parametrize("k", [-1, 2])
def test_an_entry_naming_a_missing_solution_cell_is_an_error(fixture_chapter, k):
    e = Entry("90", "x", Path("x.py"), "m", "v", "pass\n", solution_cell=k)
    with pytest.raises(CorpusError, match=f"90/x: solution-cell {k} but the chapter has 2 solution"):
        corpus.entry_notebook(e)


def test_the_stub_clears_every_solution_and_keeps_everything_else(fixture_chapter):
    ref, stub = corpus.reference_notebook("90"), corpus.stub_notebook("90")
    assert len(stub.cells) == len(ref.cells)
    for r, s in zip(ref.cells, stub.cells, strict=True):
        if "solution" in r.metadata.get("tags", []):
            assert "raise NotImplementedError" in s.source and "return a + b" not in s.source
            assert s.source.splitlines()[0] == r.source.splitlines()[0], "the signature stays"
        else:
            assert s.source == r.source, "tests, hidden tests and helpers are the reference's"


# --- verdicts ------------------------------------------------------------------------------------

def result(name, points, failure=None, ran=True):
    return TestResult(0, name, points, False, ran, failure)


def run_of(*results, seconds=1.234):
    return TestRun(Path("x.ipynb"), list(results), seconds)


FULL = run_of(result("t1", 1), result("t2", 2))
PARTIAL = run_of(result("t1", 1), result("t2", 2, "AssertionError:  The Lock   was HELD across the await"))
ZERO = run_of(result("t1", 1, "NotImplementedError"), result("t2", 2, "NotImplementedError"),
              result("t3", 1, ran=False))


def test_the_reference_must_earn_full_marks_of_something():
    assert corpus.judge("reference", FULL) == ("full", [])
    assert corpus.judge("reference", PARTIAL)[0] == "not full"
    assert corpus.judge("reference", run_of())[0] == "not full", "no test ran: nothing was checked"


def test_the_stub_must_score_zero():
    verdict, failures = corpus.judge("stub", ZERO)
    assert verdict == "zero"
    assert failures == [("t1", "NotImplementedError"), ("t2", "NotImplementedError")], "t3 did not run"
    assert corpus.judge("stub", PARTIAL)[0] == "not zero"


def test_an_entry_is_rejected_only_by_a_message_naming_what_it_violates():
    assert corpus.judge("entry", PARTIAL, "the lock was held") == (
        "rejected", [("t2", "AssertionError:  The Lock   was HELD across the await")])
    assert corpus.judge("entry", PARTIAL, "the queue was joined")[0] == "unexplained"
    assert corpus.judge("entry", FULL, "anything")[0] == "accepted"
    assert corpus.judge("entry", run_of(result("t", 1, "")), "x")[0] == "unexplained"


def test_a_mistake_may_name_two_properties_its_first_failing_scenario_can_break():
    assert corpus.judge("entry", PARTIAL, "the queue was joined || lock was held")[0] == "rejected"
    assert corpus.judge("entry", PARTIAL, "the queue was joined || the event was set")[0] == "unexplained"
    assert corpus.judge("entry", PARTIAL, "the queue was joined ||")[0] == "unexplained", "no empty phrase"


def test_a_verdict_is_ok_when_it_is_its_kinds_good_one():
    def v(kind, verdict):
        # as read back from a run's JSON: equal strings, not the same objects as the code's
        return Verdict(f"06/{kind}", *json.loads(json.dumps([kind, verdict])), 1, 1, 0.1)

    assert [v("reference", "full").ok, v("stub", "zero").ok, v("entry", "rejected").ok] == [True] * 3
    assert not any(v(k, x).ok for k, x in [("reference", "not full"), ("stub", "not zero"),
                                            ("entry", "accepted"), ("entry", "unexplained")])


def test_grading_a_notebook_judges_its_run(monkeypatch):
    from lab_snippets.labs import student

    seen = {}

    def fake_run(nb, cwd, timeout, quiet_kernel, kill_at_end):
        seen.update(nb=nb, cwd=cwd, timeout=timeout, quiet=quiet_kernel, kill=kill_at_end)
        return PARTIAL

    monkeypatch.setattr(student, "run_notebook", fake_run)
    corpus.grade_notebook("entry", "28/x", "NB", "the lock was held", timeout=7)
    assert seen["kill"] is False, "a Ray chapter's kernel exits by itself (ray.shutdown at exit)"
    v = corpus.grade_notebook("entry", "06/x", "NB", "the lock was held", timeout=7)
    assert seen == {"nb": "NB", "cwd": corpus.NOTEBOOKS_DIR, "timeout": 7, "quiet": True,
                    "kill": True}, "a chapter without Ray: the kernel is killed once graded"
    assert (v.key, v.kind, v.verdict, v.score, v.max_score, v.seconds, v.violates) == (
        "06/x", "entry", "rejected", 1.0, 3.0, 1.23, "the lock was held")
    assert v.failures == [("t2", "AssertionError:  The Lock   was HELD across the await")]


@pytest.fixture
def graded(monkeypatch):
    from lab_snippets.book import chapters

    calls = []
    monkeypatch.setattr(chapters, "runs_alone", lambda ch: ch == "29")
    monkeypatch.setattr(corpus, "reference_notebook", lambda ch: f"ref {ch}")
    monkeypatch.setattr(corpus, "stub_notebook", lambda ch: f"stub {ch}")
    monkeypatch.setattr(corpus, "entry_notebook", lambda e: f"entry {e.key}")
    monkeypatch.setattr(corpus, "grade_notebook", lambda *a: calls.append(a) or types.SimpleNamespace(v="V"))
    return calls


def test_each_kind_is_graded_as_its_own_notebook(graded):
    e = Entry("06", "slug", Path("s.py"), "m", "the violation", "x = 1\n")
    got = corpus.grade_one("reference", "06")
    assert got.v == "V" and got.digest == corpus.grading_digest("06"), "the verdict names what it graded"
    corpus.grade_one("stub", "06", timeout=5)
    corpus.grade_one("entry", "06", e, timeout=9)
    assert graded == [("reference", "06/reference", "ref 06", "", 30), ("stub", "06/stub", "stub 06", "", 5),
                      ("entry", "06/slug", "entry 06/slug", "the violation", 9)]


def test_a_ray_chapter_gets_at_least_nbvals_cell_budget(graded):
    corpus.grade_one("reference", "29", timeout=5)
    corpus.grade_one("stub", "29", timeout=500)
    corpus.grade_one("stub", "28", timeout=5)
    assert [c[-1] for c in graded] == [RAY_CELL_TIMEOUT, 500, 5]
    assert RAY_CELL_TIMEOUT == 60, "nbval's cell timeout for the Ray chapters (pyproject.toml)"


def test_the_grader_and_validate_give_a_ray_chapter_the_same_cell_budget():
    for name in ("28_ray_futures_actors.ipynb", "/x/29_ray_placement_lifecycle.py", "28"):
        assert cell_timeout(name, 30) == RAY_CELL_TIMEOUT and cell_timeout(name, 90) == 90, name
    for name in ("06_semaphore.ipynb", "06", "notes.ipynb"):
        assert cell_timeout(name, 30) == 30, name


# --- a run ---------------------------------------------------------------------------------------

def test_a_run_grades_each_chapters_reference_stub_and_entries(tmp_path):
    root = make_corpus(tmp_path / "corpus")
    jobs = [(kind, ch, e.key if e else None) for kind, ch, e in corpus.jobs_for(None, root)]
    assert jobs == [("reference", "06", None), ("stub", "06", None), ("entry", "06", "06/a_first"),
                    ("entry", "06", "06/b_second"), ("reference", "07", None), ("stub", "07", None),
                    ("entry", "07", "07/c"), ("reference", "09", None), ("stub", "09", None)]
    assert [j[:2] for j in corpus.jobs_for(["07"], root)] == [("reference", "07"), ("stub", "07"),
                                                               ("entry", "07")]


def verdict(key, kind="entry", verdict="rejected", failures=(), score=1.0):
    return Verdict(key, kind, verdict, score, 3.0, 0.5, "v", list(failures))


@pytest.fixture
def pool_sizes(monkeypatch):
    sizes = []
    real = concurrent.futures.ThreadPoolExecutor

    def recording(max_workers):
        sizes.append(max_workers)
        return real(max_workers=max_workers)

    monkeypatch.setattr(concurrent.futures, "ThreadPoolExecutor", recording)
    return sizes


def test_a_run_reports_the_wrong_verdicts_and_its_time(monkeypatch, pool_sizes):
    todo = [("reference", "06", None), ("stub", "06", None), ("entry", "06", "e")]
    monkeypatch.setattr(corpus, "jobs_for", lambda chapters: todo if chapters == ["06"] else [])
    results = {"reference": verdict("06/reference", "reference", "full"),
               "stub": verdict("06/stub", "stub", "not zero"), "entry": verdict("06/e", "entry", "accepted")}
    seen = []
    monkeypatch.setattr(corpus, "grade_one",
                        lambda kind, ch, e, timeout: seen.append((kind, ch, e, timeout)) or results[kind])
    lines = []
    t0 = time.monotonic()
    verdicts, elapsed = corpus.run(["06"], jobs=3, timeout=11, log=lines.append)
    took = time.monotonic() - t0
    assert verdicts == [results["reference"], results["stub"], results["entry"]]
    assert 0 <= elapsed <= took and pool_sizes == [3]
    assert sorted(seen, key=str) == sorted([(*job, 11) for job in todo], key=str)
    assert lines[-1].startswith("3 submissions, 2 with the wrong verdict, ")
    assert lines[-1].endswith(f"(Python {platform.python_version()}, 3 at a time)")
    assert len(lines) == 1 + 3 + 1, "the table's head, a row each, the summary"


def test_a_run_takes_at_least_one_kernel_at_a_time_and_two_by_default(monkeypatch, pool_sizes):
    import inspect

    monkeypatch.setattr(corpus, "jobs_for", lambda chapters: [])
    corpus.run(jobs=0, log=lambda *a: None)
    corpus.run(jobs=1, log=lambda *a: None)
    corpus.run(log=lambda *a: None)
    assert pool_sizes == [1, 1, 2]
    assert inspect.signature(corpus.run).parameters["jobs"].default == 2, "as the command line's --jobs"


def test_the_per_cell_timeout_has_one_default(monkeypatch):
    import inspect

    defaults = {f.__name__: inspect.signature(f).parameters["timeout"].default
                for f in (corpus.run, corpus.grade_one, corpus.grade_notebook)}
    seen = {}
    monkeypatch.setattr(corpus, "run", lambda chapters, jobs, timeout: seen.update(t=timeout) or ([], 0))
    corpus.main(["run"])
    assert defaults == dict.fromkeys(defaults, seen["t"]), "the command line's, run's and grading's"


def test_the_table_marks_a_wrong_verdict_and_cuts_a_long_message():
    lines = []
    long = "x" * 200
    corpus.print_table([verdict("06/a", failures=[("t2", "the lock was held")]),
                        verdict("06/b", verdict="accepted", score=3.0),
                        verdict("06/c", failures=[("t9", long)])], lines.append)
    head, a, b, c = lines
    assert head.startswith("submission ") and head.endswith("failing test: message")
    assert a.startswith(" 06/a ") and a.endswith("  t2: the lock was held") and "1/3" in a
    assert b.startswith("!06/b ") and "accepted" in b and b.endswith("0.5s  ")
    shown = c.split("0.5s  ", 1)[1]
    assert shown == ("t9: " + long)[:117] + "..." and len(shown) == 120
    exact = []
    corpus.print_table([verdict("06/d", failures=[("t", "y" * 117)])], exact.append)
    assert exact[1].endswith("t: " + "y" * 117), "120 characters fit whole"


def test_a_run_record_keeps_every_verdict_under_its_key():
    rec = corpus.run_record([verdict("06/a"), verdict("06/b", verdict="accepted")], 12.345)
    assert rec["python"] == platform.python_version() and rec["seconds"] == 12.3
    assert rec["verdicts"]["06/b"]["verdict"] == "accepted" and sorted(rec["verdicts"]) == ["06/a", "06/b"]
    assert json.loads(json.dumps(rec)) == rec


# --- the committed verdicts and the instructor page ----------------------------------------------

def record(python, **verdicts):
    return {"python": python, "seconds": 1.0,
            "verdicts": {k.replace("__", "/"): {"kind": kind, "verdict": v, "score": 1.0, "max_score": 2.0,
                                                "seconds": 0.1, "failures": [["t", "m"]], "violates": "x",
                                                "digest": "d-" + k}
                         for k, (kind, v) in verdicts.items()}}


COMMITTED = """\
{
 "pythons": {
  "3.11": {
   "06/a": {
    "digest": "d-06__a",
    "kind": "entry",
    "max_score": 2.0,
    "score": 1.0,
    "verdict": "rejected"
   }
  }
 }
}
"""


def test_merging_keeps_what_was_judged_per_minor_version(tmp_path):
    path = tmp_path / "book" / "verdicts.json"
    data = corpus.merge([record("3.11.9", **{"06__b": ("entry", "rejected"), "06__a": ("entry", "rejected")}),
                         record("3.12.1", **{"06__reference": ("reference", "full")})], path)
    assert list(data["pythons"]) == ["3.11", "3.12"] and list(data["pythons"]["3.11"]) == ["06/a", "06/b"]
    assert data["pythons"]["3.11"]["06/a"] == {"kind": "entry", "verdict": "rejected", "score": 1.0,
                                               "max_score": 2.0, "digest": "d-06__a"}
    assert json.loads(path.read_text()) == data
    again = corpus.merge([record("3.11.4", **{"06__a": ("entry", "accepted")})], path)
    assert again["pythons"]["3.11"]["06/a"]["verdict"] == "accepted", "a new run of a version replaces"
    assert again["pythons"]["3.11"]["06/b"]["verdict"] == "rejected" and "3.12" in again["pythons"]


def test_recording_the_same_verdicts_again_changes_no_byte_of_the_file(tmp_path):
    path = write(tmp_path / "verdicts.json", COMMITTED)
    corpus.merge([record("3.11.2", **{"06__a": ("entry", "rejected")})], path)
    assert path.read_text() == COMMITTED


def page_corpus(tmp_path):
    root = tmp_path / "corpus"
    for ch, n in (("06", 2), ("07", 1)):
        for k in range(n):
            write(root / ch / f"e{k}.py", f"# mistake: m\n# violates: v\nx = {k}\n")
    write(root / "06" / "c0.py", "# correct: another way\nx = 9\n")
    return root


def cells(row):
    return [c.strip() for c in row.strip().strip("|").split("|")]


def test_the_table_counts_rejections_and_checks_reference_and_stub_per_python(tmp_path):
    ok = {"06/e0": {"verdict": "rejected"}, "06/e1": {"verdict": "accepted"}, "06/c0": {"verdict": "full"},
          "06/reference": {"verdict": "full"}, "06/stub": {"verdict": "zero"},
          "07/e0": {"verdict": "rejected"},
          "07/reference": {"verdict": "not full"}, "07/stub": {"verdict": "not zero"}}
    root = page_corpus(tmp_path)
    digests = corpus.current_digests(root)
    for key, v in ok.items():
        v["digest"] = digests[key]
    data = {"pythons": {"3.11": ok, "3.12": {"06/e0": {"verdict": "rejected", "digest": digests["06/e0"]}}}}
    head, rule, r06, r07 = corpus.table_markdown(data, root).splitlines()
    assert cells(head) == ["Chapter", "Wrong solutions", "Correct answers"] + [
        x for p in corpus.PYTHONS
        for x in (f"Rejected on {p}", f"Correct at full on {p}", f"Reference / stub on {p}")]
    assert len(cells(rule)) == len(cells(head)) and set(rule) <= set("|-:")
    assert cells(rule) == ["---", "---:", "---:"] + ["---:", "---:", ":---:"] * len(corpus.PYTHONS), (
        "counts right-aligned, marks centred")
    unknown = (len(corpus.PYTHONS) - 1)  # 3.12 knows one entry only: "?"
    assert cells(r06) == ["06", "2", "1", "1/2", "1/1", "full / 0", *["?", "?", "? / ?"] * unknown]
    assert cells(r07) == ["07", "1", "0", "1/1", "0/0", "NOT FULL / NOT 0", *["?", "0/0", "? / ?"] * unknown]
    assert corpus.table_markdown({}, page_corpus(tmp_path)).endswith(" |\n")


PAGE = "# Instructors\n\nbefore\n{begin}\nold table\n{end}\nafter\n"


def test_the_page_gets_the_table_between_its_markers_and_nothing_else_changes():
    page = PAGE.format(begin=corpus.BEGIN_TABLE, end=corpus.END_TABLE)
    new = corpus.render_page(page, "| t |\n")
    assert new == f"# Instructors\n\nbefore\n{corpus.BEGIN_TABLE}\n\n| t |\n\n{corpus.END_TABLE}\nafter\n"
    assert corpus.render_page(new, "| t |\n") == new
    quoted = new + f"\nThe table sits between `{corpus.BEGIN_TABLE}` and `{corpus.END_TABLE}`.\n"
    assert corpus.render_page(quoted, "| u |\n") == quoted.replace("| t |", "| u |"), "markers quoted later"
    for broken in (PAGE.format(begin="", end=corpus.END_TABLE),
                   PAGE.format(begin=corpus.BEGIN_TABLE, end="")):
        with pytest.raises(CorpusError, match="missing the generated-table markers"):
            corpus.render_page(broken, "| t |\n")


@pytest.mark.parametrize("old", ["aaa old", "zzz old"])
def test_the_table_command_rewrites_a_stale_page_and_check_only_reports(tmp_path, monkeypatch, old):
    monkeypatch.setattr(corpus, "table_markdown", lambda data: f"| {sorted(data['pythons'])} |\n")
    page = write(tmp_path / "instructors.md", PAGE.format(begin=corpus.BEGIN_TABLE, end=corpus.END_TABLE)
                 .replace("old table", old))
    verdicts = write(tmp_path / "v.json", json.dumps({"pythons": {"3.12": {}}}))
    stale = page.read_text()
    assert corpus.write_table(page, verdicts, check=True) is False and page.read_text() == stale
    assert corpus.write_table(page, verdicts) is True
    assert "| ['3.12'] |" in page.read_text() and old not in page.read_text()
    assert corpus.write_table(page, verdicts, check=True) is True
    assert corpus.write_table(page, tmp_path / "none.json") is True and "| [] |" in page.read_text()


# --- the command line ----------------------------------------------------------------------------

def test_the_run_command_pads_chapters_and_writes_the_record(tmp_path, monkeypatch):
    seen = {}

    def fake_run(chapters, jobs, timeout):
        seen.update(chapters=chapters, jobs=jobs, timeout=timeout)
        return [verdict("06/a")], 2.0

    monkeypatch.setattr(corpus, "run", fake_run)
    out = tmp_path / "runs" / "chapter 6" / "r.json"  # folders that do not exist yet
    assert corpus.main(["run", "--chapter", "6", "--chapter", "12", "--json", str(out)]) == 0
    assert seen == {"chapters": ["06", "12"], "jobs": 2, "timeout": 30}
    assert json.loads(out.read_text())["verdicts"]["06/a"]["verdict"] == "rejected"
    assert out.read_text().endswith("}\n")
    assert corpus.main(["run", "--json", str(out)]) == 0, "into a folder that exists"
    corpus.main(["run", "--jobs", "1", "--timeout", "9"])
    assert seen == {"chapters": None, "jobs": 1, "timeout": 9}
    monkeypatch.setattr(corpus, "run", lambda *a, **k: ([verdict("06/a"), verdict("06/b", verdict="x")], 1.0))
    assert corpus.main(["run"]) == 1, "a wrong verdict fails the command"


def test_the_record_command_merges_then_redraws_the_table(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(corpus, "merge", lambda records: calls.append(("merge", records)))
    monkeypatch.setattr(corpus, "write_table", lambda **kw: calls.append(("table", kw)) or True)
    runs = [write(tmp_path / f"{p}.json", json.dumps(record(p))) for p in ("3.11.1", "3.12.1")]
    assert corpus.main(["record", *map(str, runs)]) == 0
    assert calls == [("merge", [record("3.11.1"), record("3.12.1")]), ("table", {})]


def test_the_table_command_exits_1_with_the_fix_when_the_page_is_stale(monkeypatch, capsys):
    answers = {False: True, True: False}  # check=True: stale
    monkeypatch.setattr(corpus, "write_table", lambda check: answers[check])
    assert corpus.main(["table"]) == 0
    assert corpus.main(["table", "--check"]) == 1
    assert "is out of step: run `python -m lab_snippets.labs.corpus table`" in capsys.readouterr().err


def test_a_corpus_error_is_printed_and_exits_2(monkeypatch, capsys):
    def broken(check):
        raise CorpusError("instructors.md: missing the generated-table markers")

    monkeypatch.setattr(corpus, "write_table", broken)
    assert corpus.main(["table"]) == 2
    assert capsys.readouterr().err == "error: instructors.md: missing the generated-table markers\n"


def test_a_seed_sweeps_run_is_never_recorded(tmp_path):
    # `corpus run --seed N` grades other scenarios than the hidden tests draw: its verdicts compare
    # with a recorded run, they never become one. Counterfactual: merge ignores the run's seed.
    from lab_snippets.labs import corpus

    path = tmp_path / "verdicts.json"
    with pytest.raises(corpus.CorpusError, match="seed sweep"):
        corpus.merge([{"python": "3.11.7", "seed": 1, "verdicts": {}}], path=path)
    assert not path.exists(), "nothing written"


def test_a_verdict_made_by_other_tests_counts_as_not_recorded(tmp_path):
    # A recorded verdict names the digest of what graded it; once the chapter's code or the entry
    # changes, the page shows "?" until the corpus runs again. Counterfactual: the table reads every
    # recorded verdict, whatever its digest (the row would say 1/2, 0/1, full / 0).
    root = page_corpus(tmp_path)
    digests = corpus.current_digests(root)
    got = {k: {"verdict": "rejected" if k.endswith(("e0", "e1")) else "full" if "c0" in k or "reference" in k
               else "zero", "digest": d} for k, d in digests.items()}
    got["06/e1"]["digest"] = "another"    # graded by older tests
    del got["06/reference"]["digest"]     # recorded before digests
    row = corpus.table_markdown({"pythons": {"3.11": got}}, root).splitlines()[2]
    assert cells(row)[:6] == ["06", "2", "1", "?", "1/1", "? / 0"]


def test_a_run_without_digests_is_refused_and_nothing_is_written(tmp_path):
    # Counterfactual: merge stores a verdict without the digest of what graded it.
    path = tmp_path / "verdicts.json"
    rec = record("3.11.7", **{"06__a": ("entry", "rejected")})
    del rec["verdicts"]["06/a"]["digest"]
    with pytest.raises(corpus.CorpusError, match="no digest"):
        corpus.merge([rec], path=path)
    assert not path.exists()


def test_the_digest_follows_the_code_not_the_prose_or_comments():
    base = ('# %% [markdown]\n# Prose.\n\n# %%\nx = 1  # set\n# a comment\n\n'
            '# %% tags=["solution"]\ndef f():\n    ### BEGIN SOLUTION\n    y = 2\n    ### END SOLUTION\n\n'
            '# %% tags=["tests"]\nassert f() is None and x == 1\n')
    d = corpus.chapter_digest_of(base)
    assert corpus.chapter_digest_of(base.replace("Prose.", "Other prose.")) == d, "prose is not graded"
    assert corpus.chapter_digest_of(base.replace("# a comment", "# reworded")) == d, "a comment line"
    assert corpus.chapter_digest_of(base.replace("x = 1", "x = 3")) != d, "code the tests need is graded"
    moved = base.replace("    y = 2\n    ### END SOLUTION", "    ### END SOLUTION\n    y = 2")
    assert corpus.chapter_digest_of(moved) != d, "markers move what is graded"
    assert corpus.digest_for(d, "a = 1\n") != corpus.digest_for(d, "a = 2\n") != d, "the entry's source"


def test_the_test_commands_verdicts_are_recorded_from_a_folder(tmp_path, monkeypatch):
    # tests/test_corpus.py writes one record per verdict when COURSE_CORPUS_RECORD_DIR is set;
    # `record DIR` reads them all. Counterfactual: record takes files only (a folder is an error).
    folder = tmp_path / "runs"
    paths = [corpus.write_one(verdict(k), folder) for k in ("06/a", "07/b")]
    assert [p.name for p in paths] == ["06-a.json", "07-b.json"]
    got = corpus.read_runs([folder])
    assert [sorted(r["verdicts"]) for r in got] == [["06/a"], ["07/b"]]
    with pytest.raises(corpus.CorpusError, match="no run records"):
        corpus.read_runs([tmp_path / "empty"] if (tmp_path / "empty").mkdir() is None else [])
    with pytest.raises(corpus.CorpusError, match="no such run file"):
        corpus.read_runs([tmp_path / "missing.json"])


def test_the_digest_skips_the_experiments_the_grade_does_not_run():
    # Only what grading runs is digested (labs.deps's plan): an edit to an experiment the plan skips
    # (a figure, a claim) keeps the verdicts; an edit to the solution does not. Counterfactual: the
    # digest of every code cell (the figure edit would turn every recorded verdict into "?").
    from lab_snippets.labs import deps
    from lab_snippets.labs.markers import mark_notebook, read_notebook

    path = corpus.chapter_path("01")
    text = path.read_text()
    nb = mark_notebook(read_notebook(path), path.name)
    deps.record(nb)
    skipped = sorted(deps.plan(nb).skip)
    assert skipped, "chapter 01's grade skips some experiment"
    cell = nb.cells[skipped[-1]].source
    assert text.count(cell) == 1
    base = corpus.chapter_digest_of(text, path.name)
    assert corpus.chapter_digest_of(text.replace(cell, cell + "\nprint('edited')"), path.name) == base
    # the reference's first line, whatever it is (a fixed line broke when 1.1 gained its twist)
    solution = re.search(r"\n( *)### BEGIN SOLUTION\n(.*)\n", text)
    assert solution, "chapter 01 has a solution region"
    indent, first = solution.group(1), solution.group(2)
    edited = text.replace(first, f"{first}\n{indent}pass", 1)
    assert corpus.chapter_digest_of(edited, path.name) != base

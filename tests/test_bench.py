"""The pure parts of the flake hunt and the timing report: JUnit parsing, schedule, tally, formatting."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from lab_snippets.bench import flake_hunt as fh
from lab_snippets.bench import timing

JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest"
 errors="1" failures="1" skipped="1" tests="9" time="20.0">
<testcase classname="notebooks.01_async_def" name="leak audit (start)" time="1.5" />
<testcase classname="notebooks.01_async_def" name="Cell 0" time="0.5" />
<testcase classname="notebooks.01_async_def" name="leak audit (finish)" time="0.25" />
<testcase classname="notebooks.06_semaphore" name="Cell 0" time="1.0" />
<testcase classname="notebooks.06_semaphore" name="Cell 3" time="2.0"><failure message="#x1B[91mfailed">
Notebook cell execution failed
Cell 3: Cell execution caused an exception
Input:
assert ratio &gt; 1.5
Traceback:
AssertionError: ratio 1.2 too small
</failure></testcase>
<testcase classname="notebooks.06_semaphore" name="Cell 4" time="0.1">
 <skipped message="nbval-skip" /></testcase>
<testcase classname="" name="notebooks/12_processes.py" time="0.0"><error message="collection failure">
SyntaxError: invalid syntax</error></testcase>
<testcase classname="tests.test_audit" name="test_thread_leak" time="3.0" />
<testcase classname="tests.test_audit" name="test_other" time="0.1">
 <failure message="x">boom</failure></testcase>
</testsuite></testsuites>"""


def test_notebook_of_cells_collection_errors_and_other_tests():
    assert fh.notebook_of("notebooks.01_async_def", "Cell 3") == "01_async_def"
    assert fh.notebook_of("", "notebooks/12_processes.py") == "12_processes"
    assert fh.notebook_of("notebooks.12_processes.py", "") == "12_processes"
    assert fh.notebook_of("tests.test_audit", "test_thread_leak") is None
    assert fh.notebook_of("notebooks_extra.x", "Cell 1") is None


def test_parse_junit_groups_cells_by_notebook(tmp_path):
    path = tmp_path / "r.xml"
    path.write_text(JUNIT)
    for source in (path, JUNIT):
        res = fh.parse_junit(source)
        assert sorted(res) == ["01_async_def", "06_semaphore", "12_processes"]
        a, s, p = res["01_async_def"], res["06_semaphore"], res["12_processes"]
        assert (a.cells, a.passed, a.seconds) == (3, True, pytest.approx(2.25))
        assert (s.cells, s.skipped, s.passed, s.seconds) == (3, 1, False, pytest.approx(3.1))
        assert s.failed == [("Cell 3", "failure: AssertionError: ratio 1.2 too small")]
        assert not p.passed and p.failed[0][1].startswith("error: SyntaxError")


def test_first_line_strips_ansi_and_prefers_the_exception():
    assert fh._first_line("\x1b[91mNotebook cell failed\x1b[0m\nTimeoutError: cell") == "TimeoutError: cell"
    assert fh._first_line("\x1b[91mplain message\x1b[0m") == "plain message"
    assert fh._first_line("") == ""
    junit_escaped = "#x1B[91mNotebook cell execution failed#x1B[0m\n#x1B[31mNameError#x1B[39m: name 'x'"
    assert fh._first_line(junit_escaped) == "NameError: name 'x'"
    assert fh._first_line("lab_snippets.audit.LeakError: left") == "lab_snippets.audit.LeakError: left"


def test_a_notebook_without_cells_did_not_pass():
    assert not fh.NotebookRun("x").passed


@pytest.mark.parametrize(("runs", "hog", "want"), [
    (10, 3, [2, 6, 9]), (10, 0, []), (3, 5, [1, 2, 3]), (10, 10, list(range(1, 11))), (1, 1, [1]),
])
def test_hog_schedule_spreads_the_hog_runs(runs, hog, want):
    flags = fh.hog_schedule(runs, hog)
    assert len(flags) == runs
    assert [i + 1 for i, f in enumerate(flags) if f] == want


def _run(**per_nb: bool) -> dict[str, fh.NotebookRun]:
    out = {}
    for nb, ok in per_nb.items():
        out[nb] = fh.NotebookRun(nb, cells=2, failed=[] if ok else [("Cell 1", "failure: AssertionError")])
    return out


def test_tally_counts_quiet_and_hog_runs_and_late_notebooks():
    results = [(False, _run(a=True, b=True)), (True, _run(a=True, b=False)),
               (False, _run(a=True, b=True, c=True)), (True, _run(a=False, b=True, c=True))]
    counts = fh.tally(results)
    assert list(counts) == ["a", "b", "c"]
    a, b, c = counts["a"], counts["b"], counts["c"]
    assert (a.runs, a.passed, a.hog_runs, a.hog_passed) == (4, 3, 2, 1)
    assert (b.runs, b.passed, b.hog_runs, b.hog_passed) == (4, 3, 2, 1)
    assert (c.runs, c.passed, c.hog_runs, c.hog_passed) == (2, 2, 1, 1)
    assert a.failures == [(4, "Cell 1", "failure: AssertionError")]
    assert b.failures == [(2, "Cell 1", "failure: AssertionError")]


def test_format_report_marks_flaky_notebooks_and_lists_failures():
    flags = [False, True, False, True]
    results = [(h, _run(a=True, b=i != 1)) for i, h in enumerate(flags)]
    text = fh.format_report(fh.tally(results), flags, [20.0, 41.0, 19.5, 44.0])
    lines = text.splitlines()
    assert lines[0] == "4 runs (2 under the CPU hog: runs 2, 4)"
    assert "20s, 41s*, 20s, 44s*" in lines[1]
    row_a = next(ln for ln in lines if ln.startswith("a "))
    row_b = next(ln for ln in lines if ln.startswith("b "))
    assert row_a.split() == ["a", "4/4", "2/2", "2/2"]
    assert row_b.split()[:4] == ["b", "3/4", "2/2", "1/2"] and "FLAKY" in row_b
    assert "  run 2* b Cell 1: failure: AssertionError" in lines
    assert all(len(ln) <= 110 for ln in lines)


def test_cpu_hog_starts_one_process_per_cpu_and_always_stops_them():
    with pytest.raises(RuntimeError), fh.CpuHog(n=2, max_seconds=30) as hog:
        procs = list(hog.procs)
        assert len(procs) == 2 and all(p.poll() is None for p in procs)
        raise RuntimeError("the block fails: the hog must still stop")
    assert all(p.poll() is not None for p in procs)
    assert not any(psutil.pid_exists(p.pid) and psutil.Process(p.pid).status() != psutil.STATUS_ZOMBIE
                   for p in procs)


def test_hog_process_stops_itself_at_its_deadline():
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", fh._HOG_CODE, "0.3"])
    try:
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert time.monotonic() - start < 20


def test_timing_medians_and_samples():
    reports = [{"a": fh.NotebookRun("a", cells=1, seconds=s)} for s in (3.0, 1.0, 2.0)]
    reports[1]["b"] = fh.NotebookRun("b", cells=1, seconds=7.0)
    samples = timing.per_notebook_samples(reports)
    assert samples == {"a": [3.0, 1.0, 2.0], "b": [7.0]}
    assert timing.medians(samples) == {"a": 2.0, "b": 7.0}
    assert timing.medians({"a": [], "b": [1.0, 2.0]}) == {"b": 1.5}


def test_timing_report_compares_every_figure_with_its_budget():
    text = timing.format_timing({"01_a": 2.0, "02_b": 6.5}, {"01_a": 3, "02_b": 3},
                                suite=[30.0, 70.0, 65.0], clean=[80.0, 85.0, 100.0], cached=[],
                                build_ok=[True, False])
    lines = text.splitlines()
    assert next(ln for ln in lines if ln.startswith("01_a")).split() == ["01_a", "2.00", "3", "ok"]
    assert next(ln for ln in lines if ln.startswith("02_b")).split()[-1] == "OVER"
    assert any(ln.startswith("sum of notebooks") and "8.50" in ln for ln in lines)
    suite = next(ln for ln in lines if ln.startswith("nbval suite"))
    assert "median 65.0 s of 3" in suite and "OVER BUDGET (60 s)" in suite
    assert "median 85.0 s of 3" in text and "OK (budget 90 s)" in text
    assert "book build, cached, nothing changed: not measured" in lines
    assert "1 of 2 builds exited non-zero" in text


def test_timing_copy_leaves_out_build_products_and_git(tmp_path, monkeypatch):
    src = tmp_path / "src"
    for rel in ("notebooks/01_a.py", "_build/html/x.html", ".git/HEAD", ".venv/bin/python",
                "lab_snippets/__pycache__/x.pyc", "book/intro.md", ".ci/build", "build/x",
                "notebooks/01_a.ipynb"):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text("x")
    monkeypatch.setattr(fh, "ROOT", src)
    dest = timing.copy_tree(tmp_path / "copy")
    files = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file())
    assert files == [".ci/build", "book/intro.md", "notebooks/01_a.py"]
    assert Path(src / "_build/html/x.html").exists()


def _spans(path: Path) -> list[tuple[str, float]]:
    lines = path.read_text().splitlines() if path.exists() else []
    return [(kind, float(sec)) for kind, sec in (ln.split() for ln in lines if ln.count(" ") == 1)]


def test_bursty_neighbour_alternates_seeded_spans_and_is_stopped_and_reaped(tmp_path):
    with fh.BurstyNeighbour(n=2, max_seconds=60, seed=7, trace_dir=tmp_path) as nb:
        procs = list(nb.procs)
        assert len(procs) == 2 and all(p.poll() is None for p in procs)
        # wait (bounded) until each process has started at least three spans
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and min(
                len(_spans(tmp_path / f"neighbour-{i}.txt")) for i in range(2)) < 3:
            time.sleep(0.1)
        assert all(p.poll() is None for p in procs), "a neighbour process stopped by itself"
    for i, p in enumerate(procs):
        assert p.returncode is not None, "the neighbour was left running"
        with pytest.raises(psutil.NoSuchProcess):  # reaped: not even a zombie is left
            psutil.Process(p.pid).status()
        spans = _spans(tmp_path / f"neighbour-{i}.txt")
        assert len(spans) >= 3
        kinds = [k for k, _ in spans]
        assert all(a != b for a, b in zip(kinds, kinds[1:], strict=False)), f"not alternating: {kinds}"
        assert set(kinds) == {"busy", "idle"}
        assert all(0.05 <= sec <= 0.4 for _, sec in spans), spans
    # seeded: each process draws from its own generator, the same on every start
    import random
    for i in range(2):
        rng = random.Random(7 * 1000 + i)
        first_busy = rng.random() < 0.5
        want = [round(rng.uniform(0.05, 0.4), 3) for _ in range(3)]
        got = _spans(tmp_path / f"neighbour-{i}.txt")[:3]
        assert [sec for _, sec in got] == want
        assert got[0][0] == ("busy" if first_busy else "idle")


def test_bursty_neighbour_burns_cpu_only_in_its_busy_spans(tmp_path):
    """A busy span uses the CPU, an idle span does not: over a few spans the process's CPU time is
    well below its wall time (a constant hog would be near 1) and above zero."""
    with fh.BurstyNeighbour(n=1, max_seconds=60, seed=3, low=0.2, high=0.2, trace_dir=tmp_path) as nb:
        proc = psutil.Process(nb.procs[0].pid)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(_spans(tmp_path / "neighbour-0.txt")) < 2:
            time.sleep(0.05)
        t0, c0 = time.monotonic(), sum(proc.cpu_times()[:2])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(_spans(tmp_path / "neighbour-0.txt")) < 8:
            time.sleep(0.05)
        wall, cpu = time.monotonic() - t0, sum(proc.cpu_times()[:2]) - c0
    assert len(_spans(tmp_path / "neighbour-0.txt")) >= 8
    assert 0 < cpu < 0.8 * wall, f"cpu {cpu:.2f} s in {wall:.2f} s"


def test_bursty_neighbour_rejects_empty_ranges_and_neighbour_picks_the_kind():
    with pytest.raises(ValueError):
        fh.BurstyNeighbour(n=1, low=0.4, high=0.1)
    assert type(fh.neighbour("hog", 1, 10)) is fh.CpuHog
    assert isinstance(fh.neighbour("bursty", 1, 10, seed=4), fh.BurstyNeighbour)
    with pytest.raises(ValueError):
        fh.neighbour("constant", 1, 10)


def test_build_failures_name_the_chapter_and_the_assert():
    log = ("pre-executed 19 chapters 2 at a time in 50.0 s (0 already cached, 2 failed)\n\n"
           "12_processes.py failed:\nCellExecutionError: ...\n"
           "\x1b[31mAssertionError\x1b[39m: threads 0.42 s\n\n"
           "18_process_lifecycle.py failed:\nTraceback\nAssertionError: order\n\n"
           "the book was not built: 2 chapter(s) failed (12_processes.py, 18_process_lifecycle.py)\n")
    assert fh.build_failures(log) == [("12_processes", "AssertionError: threads 0.42 s"),
                                      ("18_process_lifecycle", "AssertionError: order")]
    text = fh.format_builds([{"build": 1, "exit": 1, "wall": 80.0, "log": "b.log",
                              "failed": fh.build_failures(log)},
                             {"build": 2, "exit": 0, "wall": 70.0, "log": "c.log", "failed": []}],
                            "the bursty neighbour")
    assert text.splitlines()[0] == \
        "clean book builds under the bursty neighbour: 1/2 passed (80s FAILED, 70s)"
    assert "  build 1 12_processes: AssertionError: threads 0.42 s" in text


def test_one_chapter_comparison_takes_the_best_of_each_side():
    from lab_snippets.bench import one_chapter

    res = one_chapter.compare([9.0, 6.0, 7.5], [5.0, 4.0, 4.5])
    assert (res["best_command"], res["best_own"], res["ratio"], res["ok"]) == (6.0, 4.0, 1.5, True)
    assert not one_chapter.compare([6.1], [4.0])["ok"]
    text = one_chapter.format_comparison("06_semaphore.py", res)
    assert "ratio 1.50 (OK, target <= 1.5)" in text


def test_one_file_runs_without_workers(tmp_path):
    from lab_snippets.testing import nbplugin

    one = tmp_path / "06_x.py"
    one.write_text("")
    assert nbplugin.names_one_file([str(one)])
    assert nbplugin.names_one_file([f"{one}::Cell 1", str(one)])
    assert not nbplugin.names_one_file([str(one), str(tmp_path / "07_y.py")])
    assert not nbplugin.names_one_file([str(tmp_path)]), "a folder is the suite: keep the workers"


def test_one_chapter_named_runs_whatever_its_marks():
    """The README's one-chapter command on a Ray chapter (marked ``serial``, which ``addopts``
    deselects for the suite) collects and selects its cells; a ``-m`` typed by hand still applies."""
    import subprocess
    import sys

    from lab_snippets import REPO_ROOT
    from lab_snippets.testing import nbplugin

    assert nbplugin.marks_given(["-m", "serial"]) and nbplugin.marks_given(["-mserial"])
    assert not nbplugin.marks_given(["--nbval-lax", "--maxfail=1", "notebooks/28_x.py"])

    def collected(*extra):
        out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "--nbval-lax",
                              *extra, "notebooks/28_ray_futures_actors.py"], cwd=REPO_ROOT,
                             capture_output=True, text=True, timeout=120)
        return out.returncode, out.stdout
    rc, out = collected()
    assert rc == 0 and "::Cell 1\n" in out and "deselected" not in out, out[-800:]
    rc, out = collected("-m", "not serial")
    assert rc == 5 and "deselected" in out, out[-800:]


def test_compare_report_gives_the_ratio_of_the_best_builds():
    text = timing.format_compare([100.0, 90.0], [70.0, 60.0], [3.0, 2.5], [True] * 6, True)
    assert "parallel / serial = 0.67  (OK, target <= 0.75)" in text
    assert "cached rebuild: best 2.5 s" in text and "pages: the same in both builds" in text
    over = timing.format_compare([80.0], [70.0], [], [True, False], False)
    assert "(OVER, target <= 0.75)" in over and "DIFFER" in over and "1 of 2 builds" in over
    assert "fingerprint removed" not in over
    both = timing.format_compare([80.0], [50.0], [0.4], [True] * 3, True, [12.5, 11.0])
    assert "fingerprint removed (Sphinx checks every page of both editions): best 11.0 s" in both
    assert "OVER BUDGET (10 s)" in both, "the unfingerprinted rebuild is held to the same budget"


def test_ray_grade_summary_takes_the_best_of_each_path_and_the_overhead_per_slot():
    from lab_snippets.bench import ray_grade

    rounds = [{"path": "pool", "wall": 100.0, "n": 10, "t": 18.0, "csv": "x"},
              {"path": "ray", "wall": 110.0, "n": 10, "t": 19.0, "csv": "x"},
              {"path": "ray", "wall": 104.0, "n": 10, "t": 19.0, "csv": "x"},
              {"path": "pool", "wall": 120.0, "n": 10, "t": 20.0, "csv": "x"}]
    s = ray_grade.summary(rounds, slots=2)
    assert s["pool"]["best_wall"] == 100.0 and s["ray"]["best_wall"] == 104.0
    assert s["pool"]["per_minute"] == pytest.approx(6.0) and s["pool"]["t"] == pytest.approx(19.0)
    assert s["overhead_per_submission"] == pytest.approx(0.8), "(104 - 100) s x 2 slots / 10"
    assert s["same_csv"]
    assert ray_grade.class_hours(20.0, 0.8, 16) == pytest.approx(8700 * 20.8 / 16 / 3600)
    lines = ray_grade.report(s)
    assert lines[2] == "Ray overhead per submission: +0.8s (same CSV on every round: True)"
    assert lines[-1].startswith("class of 8700 at t = 19.0s on 10 x 16 slots: 0.3 h")


def test_ray_start_keeps_the_fatal_line_of_a_failed_start_and_removes_its_logs(tmp_path):
    from lab_snippets.bench import ray_start

    logs = tmp_path / "lab-ray-logs-x" / "logs"
    logs.mkdir(parents=True)
    (logs / "raylet.out").write_text("[2026-12-01 16:17:12,128 I 967 967] (raylet) main.cc:283: fine\n"
                                     "[2026-12-01 16:17:27,473 C 967 967] (raylet) node_manager.cc:3576: "
                                     "Check failed: Timed out waiting for file metrics_agent_port\n")
    cause = ray_start._fatal_line_and_remove(f"Ray did not start. Ray's logs are kept in {logs} (raylet.out)")
    assert cause.startswith("raylet.out: ") and "node_manager.cc:3576" in cause, cause
    assert not logs.parent.exists(), "the kept logs of a failed start must be removed once read"
    assert ray_start._fatal_line_and_remove("logs are kept nowhere: Ray wrote no logs") == ""


def test_every_mutation_scope_has_tests_that_exist():
    from lab_snippets import REPO_ROOT
    from lab_snippets.bench import mutation

    scopes = mutation.scopes()
    assert "asyncio_tools.py" in scopes and "labs/spec.py" in scopes and "sites.py" not in scopes
    for module in scopes:
        for test in mutation.tests_for(module):
            assert (REPO_ROOT / test).is_file(), f"{module}: its mutation tests {test} do not exist"
    cfg = mutation.config("labs/spec.py", 30)
    assert 'module-path = "lab_snippets/labs/spec.py"' in cfg and "tests/test_labs_units.py" in cfg


def test_a_mutation_sample_is_seeded_and_keeps_at_least_one(tmp_path):
    import sqlite3
    import uuid

    from lab_snippets.bench import mutation

    def session(name: str, n: int):
        """A session as cosmic-ray's init writes it: a random job id per mutant (uuid4)."""
        path = tmp_path / f"{name}.sqlite"
        jobs = [(uuid.uuid4().hex, f"core/Op{i % 7}", i // 7) for i in range(n)]
        with sqlite3.connect(path) as db:
            db.execute("CREATE TABLE work_items (job_id TEXT)")
            db.execute("CREATE TABLE mutation_specs (job_id TEXT, operator_name TEXT, occurrence INTEGER)")
            db.executemany("INSERT INTO work_items VALUES (?)", [(job,) for job, _, _ in jobs])
            db.executemany("INSERT INTO mutation_specs VALUES (?, ?, ?)", jobs)
        return path

    def kept(path):
        with sqlite3.connect(path) as db:
            jobs = {j for (j,) in db.execute("SELECT job_id FROM work_items")}
            assert jobs == {j for (j,) in db.execute("SELECT job_id FROM mutation_specs")}, \
                "a sampled-out mutant must leave both tables"
            return set(db.execute("SELECT operator_name, occurrence FROM mutation_specs"))

    first, again, other = session("a", 200), session("b", 200), session("c", 200)
    for path in (first, again):
        path.rename(tmp_path / "same.sqlite")
        mutation.sample(tmp_path / "same.sqlite", 0.1, seed=7)
        (tmp_path / "same.sqlite").rename(path)
    mutation.sample(other, 0.1, seed=8)
    assert len(kept(first)) == 20, "a tenth of 200 mutants is 20"
    assert kept(first) == kept(again), \
        "the same seed and scope must draw the same mutants, whatever job ids init gave them"
    assert kept(first) != kept(other), "another seed must draw other mutants"
    tiny = session("tiny", 3)
    mutation.sample(tiny, 0.01, seed=0)
    assert len(kept(tiny)) == 1, "a scope is never sampled down to nothing"


def test_mutants_in_lazy_annotations_are_told_apart():
    from lab_snippets.bench import mutation

    lazy = ("from __future__ import annotations\n"
            "def f(x: int | None = None) -> str | None:\n"
            "    y: list[int] | None = [x | 1]\n"
            "    return y\n")
    spans = mutation.annotation_spans(lazy)

    def inside(line, col, end):
        return any(a <= (line, col) and (line, end) <= b for a, b in spans)

    assert inside(2, 9, 19), "the argument's annotation `int | None`"
    assert inside(2, 31, 41), "the return annotation `str | None`"
    assert inside(3, 7, 23), "a variable's annotation"
    assert not inside(3, 27, 32), "`x | 1` is code, not an annotation: a mutant there changes behaviour"
    assert mutation.annotation_spans(lazy.split("\n", 1)[1]) == [], \
        "without the __future__ import annotations are evaluated: no mutant there is set aside"


def test_ci_speed_compares_the_tests_both_commits_ran(tmp_path):
    import json

    from lab_snippets.bench import ci_speed

    def record(name, commit, wall, cases):
        d = tmp_path / name
        d.mkdir()
        (d / "run.json").write_text(json.dumps({
            "commit": commit, "wall_s": wall, "exit": 0, "load": {"min": 0.1, "max": 1.5, "mean": 1.0},
            "phases": [{"summary": "3 passed", "seconds": wall - 10}]}))
        body = "".join(f'<testcase classname="{c}" name="{n}" time="{t}"/>' for c, n, t in cases)
        (d / "phase1.xml").write_text(f"<testsuites><testsuite>{body}</testsuite></testsuites>")
        return d / "run.json"

    before = record("b", "a" * 40, 100.0, [("t.a", "x", 10), ("t.a", "y", 20), ("t.old", "z", 5)])
    after = record("c", "b" * 40, 90.0, [("t.a", "x", 8), ("t.a", "y", 12), ("t.new", "w", 40)])
    table = ci_speed.compare(before, after)
    assert "| phase 1, the 2 tests both ran | 30 s | 20 s |" in table, table
    assert "| phase 1, tests only this one ran | 1 tests, 5 s | 1 tests, 40 s |" in table, table
    assert "| wall time | 100 s | 90 s |" in table, table
    line = "====== 2120 passed, 1 skipped in 1136.12s (0:18:56) ======="
    match = ci_speed.SUMMARY.match(line)
    assert match and match.group(1) == "2120 passed, 1 skipped" and match.group(2) == "1136.12", line


def test_ci_speed_fixed_runs_the_same_work_through_both_commits_abba_and_removes_its_worktrees():
    from lab_snippets.bench import ci_speed
    from lab_snippets.sites.gitcmd import run_git

    seen = []

    def work(tree, lab):
        seen.append((tree.name, (tree / "lab_snippets" / "bench" / "ci_speed.py").exists(), lab.exists()))
        return {"validate": 1.0 if tree.name == "before" else 2.0, "nbval": 3.0}

    times = ci_speed.fixed("HEAD", "HEAD", rounds=3, work=work)
    assert [s[0] for s in seen] == ["before", "after", "after", "before", "before", "after"], (
        "the sides must alternate ABBA so that both see the same load")
    assert all(tree_ok and lab_ok for _, tree_ok, lab_ok in seen), "each side runs in a checkout with the lab"
    assert times["before"] == {"validate": [1.0] * 3, "nbval": [3.0] * 3}
    assert times["after"]["validate"] == [2.0] * 3
    listed = run_git(["worktree", "list"], repo=ci_speed.REPO_ROOT).stdout.decode()
    assert "ci-speed-fixed-" not in listed, f"a worktree was left behind:\n{listed}"
    table = ci_speed.fixed_table(times)
    assert "| validate | 1.00 s (1.00 s) | 2.00 s (2.00 s) |" in table and "3 rounds each" in table


def test_ci_speed_probe_lab_has_one_solution_and_one_graded_test(tmp_path):
    from lab_snippets.bench import ci_speed
    from lab_snippets.labs import student
    from lab_snippets.labs.common import is_solution_cell
    from lab_snippets.labs.markers import read_notebook

    nb = read_notebook(ci_speed.write_probe_lab(tmp_path / "probe.ipynb"))
    assert [name for _, name, _, _ in student._test_cells(nb)] == ["add_test"]
    assert sum(map(is_solution_cell, nb.cells)) == 1


def test_grading_speed_compares_medians_and_flags_a_grade_that_differs():
    from lab_snippets.bench import grading_speed as gs

    pairs = [gs.Pair("06/reference", 12.0, 3.0), gs.Pair("06/stub", 9.0, 3.5), gs.Pair("06/x", 15.0, 6.0)]
    s = gs.summary(pairs)
    assert (s["before"], s["after"], s["ok"], s["same"]) == (12.0, 3.5, True, True)
    assert "ratio 0.29 (OK, target <= 0.33); grades all the same" in gs.format_summary("corpus", s)
    pairs[1] = gs.Pair("06/stub", 9.0, 8.0, same=False)
    s = gs.summary(pairs)
    assert not s["same"] and not s["ok"], "6.0 / 12.0 is over a third, and one grade differs"
    assert "(OVER, target <= 0.33); grades DIFFER" in gs.format_summary("grade", s)


def test_zh_figures_times_the_chinese_drawing_of_a_chapter_from_one_run(tmp_path):
    """A notebook that draws one figure: the hook's extra time is counted once, inside the run's.
    Counterfactual: a timer that never wraps the hook counts 0 figures."""
    from lab_snippets.bench import zh_figures

    nb = tmp_path / "99_fig.py"
    nb.write_text("# %%\nfrom lab_snippets.timeline import figure_style\nfigure_style()\n"
                  "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.set_title('a title')\n")
    row = zh_figures.measure(nb, timeout=240)
    assert row["figures"] == 1, row
    assert 0 < row["zh"] < row["run"], row


def test_ci_speed_run_builds_first_and_keeps_the_neighbour_for_both_commands(tmp_path, monkeypatch):
    """Counterfactuals: ``--build`` not running ``.ci/build`` before ``.ci/test``, its warnings not
    counted, or the neighbour started after the build or stopped before the test."""
    import json
    import subprocess
    import types

    from lab_snippets.bench import ci_speed, flake_hunt

    events: list[str] = []

    class Neighbour:
        def __enter__(self):
            events.append("neighbour on")
            return self

        def __exit__(self, *exc):
            events.append("neighbour off")

    def fake_git(args, repo=None, timeout=None):
        if args[0] == "clone":
            (tmp_path / "out" / "clone").mkdir(parents=True)
        return types.SimpleNamespace(returncode=0, stdout=b"c" * 40 + b"\n", stderr=b"")

    def fake_run(cmd, cwd=None, env=None, stdout=None, stderr=None, timeout=None):
        events.append(" ".join(cmd[:2]))
        stdout.write("[IPKernelApp] WARNING | x\n" if cmd[1] == ".ci/build" else
                     "===== 3 passed in 12.5s =====\n")
        return types.SimpleNamespace(returncode=0)

    monkeypatch.setattr(ci_speed, "run_git", fake_git)
    monkeypatch.setattr(subprocess, "run", fake_run)
    monkeypatch.setattr(flake_hunt, "neighbour", lambda kind, n, max_seconds, seed=0: Neighbour())
    record = ci_speed.run("HEAD", tmp_path / "out", build=True, neighbour="bursty")
    assert events == ["neighbour on", "bash .ci/build", "bash .ci/test", "neighbour off"], events
    assert record["build"]["ipkernelapp_warnings"] == 1 and record["neighbour"] == "bursty"
    assert record["phases"] == [{"summary": "3 passed", "seconds": 12.5}]
    assert json.loads((tmp_path / "out" / "run.json").read_text())["build"]["exit"] == 0

"""Unit tests of the grader's parts, without grading anything: the guard, the spec, the
status table, the sandbox's first stage (``kernel_init``). No student code runs here."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from lab_snippets.labs import guard, kernel_init, scoring, spec
from lab_snippets.labs.grader import Options, Row
from lab_snippets.labs.spec import GradeSpec, Limits, SandboxSpec

# ---------------------------------------------------------------------------------------
# the guard, in a real IPython shell
# ---------------------------------------------------------------------------------------


def test_guard_injection_installs_and_leaves_only_its_slot(shell):
    before = set(shell.user_ns)
    result = shell.run_cell(guard.injection("n0nce", "_lab_slot1"), store_history=False)
    assert result.success, result.error_in_exec
    assert set(shell.user_ns) - before == {"_lab_slot1"}  # no helper name left behind
    record, check = shell.user_ns["_lab_slot1"]
    assert callable(record) and callable(check)


def test_guard_reports_nothing_when_nothing_changed(shell, capsys):
    g = guard.install(shell, "n0nce", "_lab_slot2")
    assert g.restore() == []
    g.check()
    assert capsys.readouterr().out.strip() == "LAB-GUARD n0nce []"


def test_guard_restores_patched_module_helper_hooks_and_handlers(shell, capsys):
    original_wait_for = asyncio.wait_for
    shell.user_ns["check_answer"] = lambda: "instructor"
    helper = shell.user_ns["check_answer"]
    g = guard.install(shell, "n0nce", "_lab_slot3")
    g.record(["check_answer"])
    try:
        asyncio.wait_for = lambda *a, **k: None                        # patch the library
        shell.user_ns["check_answer"] = lambda: None                    # redefine a test helper
        shell.input_transformers_cleanup.append(lambda lines: ["pass\n"])  # hook IPython
        shell.set_custom_exc((BaseException,), lambda *a, **k: None)   # swallow errors
        restored = g.restore()
    finally:
        asyncio.wait_for = original_wait_for
    assert {"asyncio.wait_for", "check_answer", "shell.input_transformers_cleanup",
            "shell.set_custom_exc"} <= set(restored)
    assert shell.user_ns["check_answer"] is helper
    assert shell.custom_exceptions == ()
    assert g.restore() == []  # everything is back: a second check finds nothing
    g.check()
    assert capsys.readouterr().out.strip() == "LAB-GUARD n0nce []"


def test_guard_takes_a_trusted_loop_rebinding_as_trusted_and_a_submissions_as_tampering(shell):
    """Chapter 24's teaching cells bind ``runner`` by assignment, then rebind it in a ``for``
    loop: the loop's last value is the trusted one. A solution cell rebinding it is tampering."""
    from lab_snippets.labs.markers import defined_names

    g = guard.install(shell, "n0nce", "_lab_slot5")

    def trusted(source):
        assert shell.run_cell(source, store_history=False).success
        g.record(defined_names(source))

    trusted("def on_loop(t):\n    return 'loop'\ndef in_pool(t):\n    return 'pool'\nrunner = on_loop\n")
    trusted("for label, runner in (('loop', on_loop), ('pool', in_pool)):\n    pass\n")
    assert shell.run_cell("def score_all(texts):\n    return texts\n", store_history=False).success
    assert g.restore() == []  # a clean submission: nothing to undo
    assert shell.user_ns["runner"] is shell.user_ns["in_pool"]
    assert shell.run_cell("for runner in [lambda t: 'faked']:\n    pass\n", store_history=False).success
    assert g.restore() == ["runner"]  # a submission that rebinds it in a loop is caught
    assert shell.user_ns["runner"] is shell.user_ns["in_pool"]
    # chapter 14: a helper rebound to data by a trusted loop (def start, then for lane, start, ...)
    trusted("def start(task):\n    return task\n")
    trusted("for lane, start in (('a', 0.5), ('b', 0.75)):\n    pass\n")
    assert g.restore() == []
    assert shell.run_cell("start = lambda task: 'faked'\n", store_history=False).success
    assert g.restore() == ["start"] and shell.user_ns["start"] == 0.75


def test_defined_names_finds_every_binding_of_the_cell_scope():
    from lab_snippets.labs.markers import defined_names

    source = """
import os
x = 1
for label, runner in ((1, 2),):
    pass
with open("f") as fh:
    pass
try:
    import tomllib
except ImportError as exc:
    import tomli as tomllib
if (n := 3):
    def helper(a):
        local = a
[q for q in range(3)]
class Box:
    attr = 1
"""
    assert defined_names(source) == ["os", "x", "label", "runner", "fh", "tomllib", "exc", "n", "helper",
                                     "Box"]
    assert defined_names("def broken(:\n") == []


def test_guard_uses_only_the_standard_library():
    """It runs in the student's kernel, where no grader code is importable."""
    import ast
    tree = ast.parse(Path(guard.__file__).read_text(encoding="utf-8"))
    modules = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    modules |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert modules <= {"__future__", "json", "sys", "types"}


# ---------------------------------------------------------------------------------------
# the spec both sides import
# ---------------------------------------------------------------------------------------


def _spec(**over):
    sandbox = SandboxSpec(box="/tmp/x/box", uid=1_900_001, gid=1_900_001,
                          limits=Limits(cpu=10, address_space=1 << 30, processes=64),
                          read_only=("/opt/py",),
                          package_files=(("/a/timeline.py", "lab_snippets/timeline.py"),),
                          hide=("/srv/course",))
    fields = dict(course="/tmp/x/work/course", course_id="c", assignment="a", student="s",
                  notebook="a", timeout=3, iopub_timeout=2, result="/tmp/x/work/result.jsonl",
                  nonce="ab" * 16, sandbox_spec="/tmp/x/work/spec.json", sandbox=sandbox,
                  solution_names=("add_async",))
    return GradeSpec(**{**fields, **over})


def test_spec_round_trips_through_json(tmp_path):
    spec = _spec()
    spec.write(tmp_path / "spec.json")
    assert GradeSpec.read(tmp_path / "spec.json") == spec


def test_spec_rejects_an_unknown_field():
    raw = json.loads(_spec().dumps())
    raw["sandbox"]["uid_typo"] = 1
    with pytest.raises(ValueError, match="uid_typo"):
        GradeSpec.loads(json.dumps(raw))


# ---------------------------------------------------------------------------------------
# statuses: one test per row of the precedence table
# ---------------------------------------------------------------------------------------

CELLS = {"t1": 1.0, "t2": 2.0}


def _cell(gid, score, **kw):
    return {"kind": "cell", "grade_id": gid, "score": score, "max_score": CELLS[gid],
            "timed_out": False, "restored": [], "guard_problem": None, "reason": "",
            "kernel_dead": None, **kw}


FINAL = {"kind": "final", "scores": {"t1": [1.0, 1.0], "t2": [2.0, 2.0]}}
# status -> (records, killed, a phrase of the reason)
CASES = {
    "ok": ([_cell("t1", 1.0), _cell("t2", 2.0), FINAL], False, "2/2 tests passed"),
    "tampered": ([_cell("t1", 1.0, restored=["asyncio.wait_for"]), _cell("t2", 2.0), FINAL], False,
                 "tampering undone before tests: asyncio.wait_for"),
    "crashed": ([{"kind": "died", "cell": "c3", "what": "kernel died in cell c3 (exit code 0)"},
                 _cell("t1", 0.0), _cell("t2", 2.0, restored=["x"])], False, "kernel died in cell c3"),
    "timeout": ([{"kind": "cell_timeout", "cell": "c2"}, _cell("t1", 1.0),
                 {"kind": "died", "cell": "c3", "what": "kernel died"}], False,
                "per-cell timeout (3s) in: c2"),
    "timeout-killed": ([_cell("t1", 1.0, restored=["x"])], True,
                       "wall-clock limit (60s) hit; killed; not run: t2"),
    "error": ([], False, "nbgrader could not grade the notebook"),
    # the course's own start failed before the submission ran: that, not the kill, is the news
    "error-ray": ([{"kind": "infrastructure", "cell": "cell 1", "what": "Ray did not start (x)"},
                   _cell("t1", 0.0)], True, "Ray did not start (x) (in cell 1): not the submission's"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_status_precedence(tmp_path, case):
    records, killed, phrase = CASES[case]
    result = tmp_path / "result.jsonl"
    result.write_text("".join(json.dumps(r) + "\n" for r in records))
    row = Row("s", "a", max_score=3.0)
    scoring.score(row, CELLS, result, killed, tmp_path, Options(timeout=3, submission_timeout=60))
    assert row.status == case.split("-")[0], row.reason
    assert phrase in row.reason


def test_precedence_table_lists_every_status_once_and_ends_with_ok():
    statuses = [s for s, _ in scoring.STATUS_PRECEDENCE]
    assert statuses[-1] == "ok" and scoring.STATUS_PRECEDENCE[-1][1](scoring.Findings())
    assert set(statuses) == {"timeout", "error", "crashed", "tampered", "ok"}


def test_scores_prefer_nbgrader_final_then_cell_records(tmp_path):
    result = tmp_path / "result.jsonl"
    result.write_text(json.dumps(_cell("t1", 1.0)) + "\n" + json.dumps(_cell("t2", 2.0)) + "\n"
                      + json.dumps({"kind": "final", "scores": {"t2": [0.0, 2.0]}}) + "\n")
    row = Row("s", "a")
    scoring.score(row, CELLS, result, False, tmp_path, Options())
    assert row.cells == {"t1": 1.0, "t2": 0.0} and row.score == 1.0


def test_result_records_write_the_json_lines_the_grader_has_always_read():
    """The typed records keep the result file's format: each line is the dict the worker wrote."""
    records = [spec.CellRecord("t1", 1.0, 1.0), spec.CellRecord("t2", 0.0, 2.0, restored=("x",), reason="r"),
               spec.CellTimeout("c2"), spec.Restart("t1"), spec.Died("c3", "kernel died"),
               spec.Final(FINAL["scores"])]
    lines = [spec.record_line(r) for r in records]
    assert [json.loads(line) for line in lines] == [
        _cell("t1", 1.0), _cell("t2", 0.0, restored=["x"], reason="r"),
        {"kind": "cell_timeout", "cell": "c2"}, {"kind": "restart", "cell": "t1"},
        {"kind": "died", "cell": "c3", "what": "kernel died"}, FINAL]
    assert list(json.loads(lines[0])) == list(_cell("t1", 1.0)), "the keys keep their order"
    assert [spec.parse_record(line) for line in lines] == records


def test_a_cut_off_or_unknown_line_is_skipped_and_a_wrong_record_fails_loudly():
    assert spec.parse_record('{"kind": "cell", "grade_id": "t1", "sco') is None, "the line the kill cut off"
    assert spec.parse_record('{"kind": "news"}') is None
    with pytest.raises(ValueError, match="CellRecord"):
        spec.parse_record('{"kind": "cell", "grade_id": "t1"}')
    with pytest.raises(ValueError, match="typo"):
        spec.parse_record('{"kind": "died", "cell": "c3", "what": "x", "typo": 1}')


def test_grader_options_have_one_set_of_defaults(monkeypatch):
    from lab_snippets.labs import cli

    opts = Options()
    assert (opts.timeout, opts.submission_timeout, opts.memory_mb, opts.max_procs, opts.iopub_timeout) == (
        30, 300, 2048, 128, 4)
    assert Options(jobs=None).jobs == Options().jobs == spec.default_jobs() >= 1
    given = {}
    monkeypatch.setattr(cli, "grade", lambda *a, options, **k: given.update(options=options))
    assert cli.main(["grade", "subs"]) == 0
    assert given["options"] == Options(), "the command line's defaults are Options' own"


def test_has_solution_names_a_notebook_it_cannot_read(tmp_path):
    from lab_snippets.labs.common import LabError
    from lab_snippets.labs.markers import has_solution

    plain = tmp_path / "01_plain.ipynb"
    plain.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    assert has_solution(plain) is False
    broken = tmp_path / "02_broken.ipynb"
    broken.write_text("{ not json")
    with pytest.raises(LabError, match="02_broken.ipynb"):
        has_solution(broken)


# ---------------------------------------------------------------------------------------
# kernel_init: the sandbox's first stage (run here without a sandbox: it only sets limits)
# ---------------------------------------------------------------------------------------

LIMITS_PROBE = ("import resource; print(resource.getrlimit(resource.RLIMIT_NOFILE)[0], "
                "resource.getrlimit(resource.RLIMIT_CORE)[0])")


def _init(config, *cmd):
    return subprocess.run([sys.executable, kernel_init.__file__, json.dumps(config), "--", *cmd],
                          capture_output=True, text=True, timeout=60)


def test_kernel_init_applies_limits_then_execs_the_kernel():
    run = _init({"limits": {"open_files": 64, "core": 0}}, sys.executable, "-c", LIMITS_PROBE)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["64", "0"]


def test_kernel_init_fails_closed():
    """A limit it cannot apply: no kernel starts (counterfactual to the test above)."""
    run = _init({"limits": {"open_files": 1 << 40}}, sys.executable, "-c", "print('kernel ran')")
    assert run.returncode == 97 and "refusing to start" in run.stderr
    assert "kernel ran" not in run.stdout


@pytest.mark.parametrize("cls", [spec.Options, spec.Limits, spec.SandboxSpec, spec.GradeSpec,
                                 *spec.RECORD_KINDS.values()], ids=lambda c: c.__name__)
def test_the_spec_and_the_result_records_are_frozen(cls):
    """What the grader hands the sandbox, and what the worker reports, cannot be changed on the way."""
    import dataclasses

    assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen, \
        f"{cls.__name__} must be a frozen dataclass (its fields are set once, where it is made)"


@pytest.mark.parametrize(("cores", "jobs"), [(8, 4), (4, 4), (3, 3), (1, 1), (0, 1), (None, 1)])
def test_submissions_graded_at_a_time_are_the_cores_at_most_four(monkeypatch, cores, jobs):
    monkeypatch.setattr(spec.os, "cpu_count", lambda: cores)
    assert spec.default_jobs() == jobs, f"{cores} cores: {spec.default_jobs()} jobs, not {jobs}"


def test_a_record_with_only_its_required_fields_parses_with_the_defaults():
    """Fields left out take their defaults: only a field the record does not have is refused."""
    record = spec.parse_record(json.dumps({"kind": "cell", "grade_id": "t1", "score": 1.0, "max_score": 2.0}))
    assert record == spec.CellRecord("t1", 1.0, 2.0), record


def test_the_sandbox_allows_no_core_dumps_unless_told():
    assert spec.Limits().core == 0, "a crashing submission must not write a core dump by default"


def test_guard_trusts_a_module_change_only_when_no_submission_cell_ran_before_it(shell):
    """``import ray`` in a trusted cell replaces ``inspect.isgenerator`` (Cython's patch): the
    worker records that cell with ``clean=True`` and the guard keeps the new value. The same change
    after a submission cell (``clean=False``) is still undone and reported."""
    import inspect

    original = inspect.isgenerator
    g = guard.install(shell, "n0nce", "_lab_slot6")
    try:
        patched = lambda obj: original(obj)  # noqa: E731 - what a trusted import puts there
        inspect.isgenerator = patched
        g.record([], clean=True)
        assert g.restore() == [] and inspect.isgenerator is patched
        inspect.isgenerator = lambda obj: True  # a submission's patch, recorded as not clean
        g.record([], clean=False)
        assert g.restore() == ["inspect.isgenerator"] and inspect.isgenerator is patched
    finally:
        inspect.isgenerator = original


def test_a_ray_chapters_sandbox_raises_only_threads_and_file_size(tmp_path):
    """Measured under the sandbox's own bwrap line: a local Ray holds about 200 threads (counted
    by RLIMIT_NPROC) and the raylet ftruncates its object store file (capped by RLIMIT_FSIZE)."""
    from lab_snippets import raylab
    from lab_snippets.book.chapters import runs_alone
    from lab_snippets.labs import sandbox

    plain = sandbox.sandbox_spec(tmp_path, None, Options()).limits
    ray = sandbox.sandbox_spec(tmp_path, None, Options(), ray=True).limits
    assert (plain.processes, plain.file_size, plain.address_space) == (128, 64 << 20, 2048 << 20)
    assert (ray.processes, ray.file_size) == (512, 256 << 20)
    assert (ray.address_space, ray.open_files, ray.cpu) == (plain.address_space, plain.open_files,
                                                            plain.cpu)
    # the store raylab asks for is above Ray's minimum and fits under the file limit
    assert 75 << 20 <= raylab.OBJECT_STORE_BYTES < ray.file_size
    # the grader asks by the notebook's name: the Ray chapters and no other
    assert runs_alone(Path("28_ray_futures_actors.py")) and not runs_alone(Path("06_semaphore.py"))


def test_the_grading_code_parses_python_one_thread_at_a_time():
    # CPython 3.11.7's ast.parse fails when two threads run it at once (corpus run --jobs 2):
    # markers.defined_names waits for the lock another parse holds. Counterfactual: a bare ast.parse.
    import threading

    from lab_snippets.labs import common, markers

    got = []
    with common.AST_LOCK:
        t = threading.Thread(target=lambda: got.append(markers.defined_names("x = 1\n")))
        t.start()
        t.join(0.2)
        assert t.is_alive() and not got, "parsed while another thread held AST_LOCK"
    t.join(10)
    assert got == [["x"]] and not t.is_alive()

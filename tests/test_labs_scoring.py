"""Unit tests of ``labs.scoring``: a worker's result file turned into a row's score and reason.

The statuses (one test per row of the precedence table) are in ``tests/test_labs_units.py``; here
the reason column a student and an instructor read, and the score arithmetic.
"""

from __future__ import annotations

import json

from lab_snippets.labs import scoring
from lab_snippets.labs.grader import Row
from lab_snippets.labs.spec import (
    CellRecord,
    CellTimeout,
    Died,
    Final,
    Infrastructure,
    Options,
    Restart,
    record_line,
)

CELLS = {"t1": 1.0, "t2": 2.0, "t3": 1.0, "t4": 1.0, "t5": 1.0}
OPTS = Options(timeout=3, submission_timeout=60)


def _score(tmp_path, records, killed=False, cells=CELLS, opts=OPTS):
    result = tmp_path / "result.jsonl"
    result.write_text("".join(record_line(r) + "\n" for r in records))
    row = Row("s", "a", max_score=sum(cells.values()))
    scoring.score(row, cells, result, killed, tmp_path, opts)
    return row


def test_the_reason_names_the_first_three_failed_tests_with_their_messages(tmp_path):
    records = [CellRecord("t1", 0.0, 1.0, reason="the deadline was not kept"),
               CellRecord("t2", 2.0, 2.0),
               CellRecord("t3", 0.0, 1.0, reason="ValueError: bad"),
               CellRecord("t4", 0.0, 1.0, reason="results out of order"),
               CellRecord("t5", 0.0, 1.0, reason="a fourth failure")]
    row = _score(tmp_path, records)
    assert row.status == "ok" and row.score == 2.0
    assert row.reason.startswith("1/5 tests passed; failed t1: the deadline was not kept; "
                                 "t3: ValueError: bad; t4: results out of order"), row.reason
    assert "t2:" not in row.reason, "a test that passed is not listed as failed"
    assert "a fourth failure" not in row.reason, "at most three failures are named"


def test_a_passed_test_with_a_message_and_a_timed_out_one_are_not_called_failed(tmp_path):
    records = [CellRecord("t1", 1.0, 1.0, reason="wrote to stderr"),  # full marks after all
               CellRecord("t2", 0.0, 2.0, timed_out=True, reason="CellTimeoutError: 3 s")]
    row = _score(tmp_path, records, cells={"t1": 1.0, "t2": 2.0})
    assert "failed" not in row.reason, row.reason
    assert row.status == "timeout" and "per-cell timeout (3s) in: t2" in row.reason


def test_a_partly_passed_test_counts_its_points_but_not_as_passed(tmp_path):
    row = _score(tmp_path, [CellRecord("t1", 1.0, 1.0), CellRecord("t2", 1.5, 2.0, reason="partial credit"),
                            Final({"t1": [1.0, 1.0], "t2": [1.5, 2.0]})], cells={"t1": 1.0, "t2": 2.0})
    assert row.score == 2.5 and row.cells == {"t1": 1.0, "t2": 1.5}
    assert row.reason.startswith("1/2 tests passed; failed t2: partial credit"), row.reason


def test_a_test_worth_no_points_is_never_counted_as_passed(tmp_path):
    row = _score(tmp_path, [CellRecord("t1", 0.0, 0.0), CellRecord("t2", 2.0, 2.0)],
                 cells={"t1": 0.0, "t2": 2.0})
    assert row.reason.startswith("1/2 tests passed"), row.reason


def test_each_event_that_explains_the_status_is_in_the_reason(tmp_path):
    restored = tuple(f"m.f{i}" for i in range(8))
    records = [CellRecord("t1", 0.0, 1.0, restored=restored, guard_problem="guard cell was tampered with"),
               Died("c3", "kernel died in cell c3 (exit code -9)"), Restart("t1"), Restart("t2"),
               CellTimeout("cell 4")]
    row = _score(tmp_path, records, cells={"t1": 1.0, "t2": 2.0})
    assert "tampering undone before tests: m.f0, m.f1, m.f2, m.f3, m.f4, m.f5;" in row.reason, \
        "at most six undone names"
    assert "m.f6" not in row.reason
    assert "; guard cell was tampered with;" in row.reason
    assert ("kernel died in cell c3 (exit code -9); restarted, earlier cells replayed, rest graded"
            in row.reason)
    assert "per-cell timeout (3s) in: cell 4" in row.reason
    assert "kernel stuck after a timeout, restarted and earlier cells replayed (2x)" in row.reason


def test_a_kernel_death_without_recovery_is_named(tmp_path):
    dead = "kernel died in cell t1 (exit code 1); no recovery (DeadKernelError: stuck)"
    row = _score(tmp_path, [CellRecord("t1", 0.0, 1.0, kernel_dead=dead)], cells={"t1": 1.0})
    assert row.status == "crashed" and row.reason.endswith(dead)


def test_a_killed_submission_names_only_the_tests_that_did_not_run(tmp_path):
    everything = [CellRecord("t1", 1.0, 1.0), CellRecord("t2", 0.0, 2.0)]
    row = _score(tmp_path, everything, killed=True, cells={"t1": 1.0, "t2": 2.0})
    assert row.reason.endswith("submission wall-clock limit (60s) hit; killed"), row.reason
    row = _score(tmp_path, everything[:1], killed=True, cells={"t1": 1.0, "t2": 2.0})
    assert row.reason.endswith("killed; not run: t2"), row.reason
    assert row.score == 1.0, "what ran before the kill keeps its points"


def test_nothing_graded_quotes_the_last_error_line_of_the_workers_log(tmp_path):
    (tmp_path / "worker.log").write_text("[INFO] start\n[ERROR] first\nTraceback\nKeyError: "
                                         + "x" * 300 + "\n[INFO] end\n")
    row = _score(tmp_path, [], cells={"t1": 1.0})
    assert row.status == "error" and row.score == 0.0
    assert row.reason == "0/1 tests passed; nbgrader could not grade the notebook: KeyError: " + "x" * 190
    (tmp_path / "worker.log").write_text("[INFO] nothing wrong said\n")
    assert _score(tmp_path, [], cells={"t1": 1.0}).reason.endswith("could not grade the notebook")
    (tmp_path / "worker.log").unlink()
    assert _score(tmp_path, [], cells={"t1": 1.0}).reason.endswith("could not grade the notebook")


def test_no_result_file_is_nothing_graded(tmp_path):
    row = Row("s", "a")
    scoring.score(row, {"t1": 1.0}, tmp_path / "absent.jsonl", False, tmp_path, Options())
    assert (row.status, row.score, row.cells) == ("error", 0.0, {"t1": 0.0})


def test_the_last_record_of_a_cell_counts_and_a_cut_off_line_is_skipped(tmp_path):
    result = tmp_path / "result.jsonl"
    result.write_text(record_line(CellRecord("t1", 0.0, 1.0, reason="first try")) + "\n"
                      + record_line(CellRecord("t1", 1.0, 1.0)) + "\n"
                      + json.dumps({"kind": "cell", "grade_id": "t2"})[:20])  # the kill cut it off
    findings = scoring.read_findings(result, killed=True)
    assert list(findings.cells) == ["t1"] and findings.cells["t1"].score == 1.0
    assert scoring.cell_scores(findings, {"t1": 1.0, "t2": 2.0}) == {"t1": 1.0, "t2": 0.0}


def test_ray_not_starting_is_a_grading_error_named_first_not_a_wrong_answer(tmp_path):
    records = [Infrastructure("cell 2", "Ray did not start (2 attempts failed)"),
               CellTimeout("cell 2"),
               CellRecord("t1", 0.0, 1.0, reason="NameError: name 'cluster' is not defined")]
    row = _score(tmp_path, records, cells={"t1": 1.0})
    assert row.status == "error", "a submission whose tests could not run is graded again, not scored"
    assert row.reason.startswith("Ray did not start (2 attempts failed) (in cell 2): not the "
                                 "submission's fault"), row.reason

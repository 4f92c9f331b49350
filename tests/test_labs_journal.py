"""The grading journal and the progress line (``labs.journal``), and ``grade`` resuming from it
on the thread-pool path; no sandbox, no kernel (the grading of one submission is faked, as in
tests/test_labs_grader.py). The Ray path's crash and rerun is tests/test_labs_ray.py's."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import shutil
import time

import pytest

from lab_snippets.labs import grader, journal, sandbox
from lab_snippets.labs.spec import Options
from tests.test_labs_grader import VALID, A, B, _tree, master  # noqa: F401 (fixture)

KEY = ("alice", A, "ab" * 32, "v1")
ROW = {"score": 1.0, "max_score": 3.0, "status": "ok", "reason": "1/2 tests passed",
       "seconds": 2.5, "cells": {"t1": 1.0, "t2": 0.0}, "student": "alice", "assignment": A}


def test_a_recorded_row_is_read_back_by_its_key_and_a_torn_last_line_is_ignored(tmp_path):
    path = tmp_path / journal.JOURNAL_NAME
    book = journal.Journal(path)
    assert book.record(KEY, ROW)
    with open(path, "a") as fh:
        fh.write('{"key": ["bob", "01_demo", "cd')  # the crash cut this line off
    again = journal.Journal(path)
    assert again.get(KEY) == ROW, "a row journaled before the crash is not graded again"
    assert again.get(("alice", A, "cd" * 32, "v1")) is None, "another submission is another key"
    assert again.get(("alice", A, "ab" * 32, "v2")) is None, "another grading version: graded again"
    assert journal.Journal(path, fresh=True).get(KEY) is None and not path.exists()


@pytest.mark.parametrize("reason", ["grader error: OSError: disk full",
                                    "not graded: the Ray task failed: NodeDiedError",
                                    "nbgrader could not grade the notebook",
                                    "Ray did not start (x): not the submission's fault, its tests "
                                    "could not run fairly; grade it again; 0/2 tests passed"])
def test_a_row_that_says_nothing_about_the_submission_is_not_journaled(tmp_path, reason):
    book = journal.Journal(tmp_path / "j.jsonl")
    assert not book.record(KEY, dict(ROW, status="error", reason=reason))
    assert journal.Journal(tmp_path / "j.jsonl").get(KEY) is None, "a rerun must grade it again"
    assert book.record(KEY, dict(ROW, status="timeout", reason="per-cell timeout (30s) in: t1"))


def test_the_grading_version_follows_the_tests_and_the_options_that_change_a_grade():
    v = journal.grading_version(b"tests", Options(jobs=2))
    assert journal.grading_version(b"tests", Options(jobs=4)) == v, "jobs changes no grade"
    assert journal.grading_version(b"other tests", Options(jobs=2)) != v
    assert journal.grading_version(b"tests", Options(jobs=2, timeout=31)) != v


def test_progress_says_done_total_failures_the_slowest_and_an_eta_per_slot():
    lines = []
    p = journal.Progress(total=10, done=2, slots=2, log=lines.append, every=0)
    p.update("alice/01", "ok", 4.0)
    p.update("bob/01", "timeout", 6.0)
    p.update("carol/01", "ok", 5.0)
    assert lines[-1] == "progress: 5/10 graded, 1 not ok, slowest bob/01 6.0s, ETA 12s", \
        "5 left x 5 s mean / 2 slots = 12.5 s"
    assert p.eta() == pytest.approx(12.5)


def test_progress_on_a_terminal_is_a_bar_and_off_it_plain_lines():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty, lines = Tty(), []
    p = journal.Progress(total=4, done=1, slots=1, log=lines.append, stream=tty)
    p.update("alice/01", "ok", 3.0)
    p.close()
    assert "2/4" in tty.getvalue() and "slowest alice/01" in tty.getvalue() and not lines
    plain = journal.Progress(total=4, log=lines.append, stream=io.StringIO())
    plain.update("alice/01", "ok", 3.0)
    assert lines == ["progress: 1/4 graded, 0 not ok, slowest alice/01 3.0s, ETA 9s"]


# --------------------------------------------------------------------------- grade, resumed


class Crash(BaseException):
    """The driver dying after some results (what SIGKILL does, without a subprocess)."""


@pytest.fixture
def fake(monkeypatch):
    """``grade`` with a fake ``_grade_one`` whose calls are counted; every submission scores
    by its student's name."""
    calls = []

    def grade_one(row, course_dir, assignments, isolation, hide, opts, zygote=None):
        calls.append(row.student)
        k = len(row.student)
        row.cells = {gid: float(k % 2) for gid in assignments[row.assignment][1]}
        row.score, row.reason, row.seconds = sum(row.cells.values()), f"{k} letters", 0.01
        return row

    monkeypatch.setattr(sandbox, "detect_isolation",
                        lambda hide, opts: sandbox.Isolation(root=False, description="test"))
    monkeypatch.setattr(grader, "_grade_one", grade_one)
    return calls


def _course(master, tmp_path, name):  # noqa: F811
    return shutil.copytree(master, tmp_path / name)


def _subs(tmp_path):
    names = ["alice", "bob", "carol", "dave", "erin", "frank"]
    return _tree(tmp_path / "subs", {f"{n}/{a}/{a}.ipynb": VALID for n in names for a in (A, B)})


def test_grade_killed_after_k_results_and_rerun_grades_only_the_rest_and_ends_the_same(
        master, tmp_path, fake, monkeypatch):  # noqa: F811
    subs = _subs(tmp_path)
    whole = _course(master, tmp_path, "whole")
    grader.grade(subs, tmp_path / "whole.csv", whole, Options(jobs=2), log=lambda s: None)
    assert len(fake) == 12
    fake.clear()
    crashed = _course(master, tmp_path, "crashed")
    real_update = journal.Progress.update

    def update(self, *args):
        real_update(self, *args)
        if self.done == 5:
            raise Crash()

    monkeypatch.setattr(journal.Progress, "update", update)
    with pytest.raises(Crash):
        grader.grade(subs, tmp_path / "crashed.csv", crashed, Options(jobs=2), log=lambda s: None)
    monkeypatch.setattr(journal.Progress, "update", real_update)
    lines = (crashed / journal.JOURNAL_NAME).read_text().splitlines()
    assert len(lines) == 5, "each row is journaled as it arrives, before the crash"
    fake.clear()
    log = []
    grader.grade(subs, tmp_path / "crashed.csv", crashed, Options(jobs=2), log=log.append)
    assert len(fake) == 7, f"the rerun graded {len(fake)}, not only the 7 missing"
    assert any("(5 already in the journal" in line for line in log)
    assert (tmp_path / "crashed.csv").read_text() == (tmp_path / "whole.csv").read_text()
    assert journal.gradebook_grades(crashed) == journal.gradebook_grades(whole)
    assert len(journal.gradebook_grades(whole)) == 18
    keys = [tuple(json.loads(x)["key"]) for x in (crashed / journal.JOURNAL_NAME).read_text().splitlines()]
    assert len(keys) == len(set(keys)) == 12, "no row journaled twice"


def test_a_changed_submission_is_graded_again_and_fresh_grades_everything(
        master, tmp_path, fake):  # noqa: F811
    subs = _subs(tmp_path)
    course = _course(master, tmp_path, "c")
    grader.grade(subs, tmp_path / "g.csv", course, Options(jobs=2), log=lambda s: None)
    fake.clear()
    (subs / "bob" / A / f"{A}.ipynb").write_text(VALID + "\n")
    grader.grade(subs, tmp_path / "g.csv", course, Options(jobs=2), log=lambda s: None)
    assert fake == ["bob"], "only the resubmitted notebook is graded again"
    fake.clear()
    grader.grade(subs, tmp_path / "g.csv", course, Options(jobs=2), log=lambda s: None, resume=False)
    assert len(fake) == 12


def test_rows_are_journaled_in_completion_order_not_submission_order(master, tmp_path, monkeypatch):  # noqa: F811
    """alice's grading ends only once bob's row is in the journal: written in submission order
    (``pool.map``), bob's row would wait for alice's, and alice would give up."""
    subs = _tree(tmp_path / "subs", {f"{n}/{A}/{A}.ipynb": VALID for n in ("alice", "bob")})
    course = _course(master, tmp_path, "c")
    path = course / journal.JOURNAL_NAME

    def grade_one(row, course_dir, assignments, isolation, hide, opts, zygote=None):
        deadline = time.monotonic() + 30
        while row.student == "alice" and not (path.exists() and "bob" in path.read_text()):
            assert time.monotonic() < deadline, "bob's row was not journaled before alice's ended"
            time.sleep(0.05)
        row.cells = {"t1": 1.0, "t2": 0.0}
        return row

    monkeypatch.setattr(sandbox, "detect_isolation",
                        lambda hide, opts: sandbox.Isolation(root=False, description="test"))
    monkeypatch.setattr(grader, "_grade_one", grade_one)
    grader.grade(subs, tmp_path / "g.csv", course, Options(jobs=2), log=lambda s: None)
    order = [json.loads(x)["key"][0] for x in path.read_text().splitlines()]
    assert order == ["bob", "alice"], "bob finished first, so a crash then must keep bob's row"
    with open(tmp_path / "g.csv") as fh:
        assert [r["student"] for r in csv.DictReader(fh)] == ["alice", "bob"], \
            "the CSV stays in the submissions' order"


def test_row_fields_carry_everything_but_the_path():
    row = grader.Row("alice", A, 1.0, 3.0, path=None, cells={"t1": 1.0})
    assert journal.row_fields(row) == {f.name: getattr(row, f.name)
                                       for f in dataclasses.fields(row) if f.name != "path"}

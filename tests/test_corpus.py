"""The wrong-solution corpus (tests/corpus/NN/*.py), graded through the labs' own test runner.

One test per submission: each chapter's reference must earn full marks, its student stub 0,
and every wrong solution less than full marks with its ``violates:`` phrase in a failing test's
message.  Plus: entries are well formed, every chapter with a corpus has enough of them, the
corpus never reaches a student release, and the instructor page's table is in step with the
corpus directory and the committed verdicts.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from lab_snippets import labs
from lab_snippets.book import chapters
from lab_snippets.labs import corpus

JOBS = corpus.jobs_for()


def _id(job):
    kind, chapter, entry = job
    return entry.key if entry else f"{chapter}/{kind}"


# A Ray chapter's submissions each start a local Ray: they run in the serial phase, as its nbval run
# does (chapters.runs_alone), with no second worker beside them.
@pytest.mark.timeout(600)
@pytest.mark.parametrize("job", [pytest.param(j, id=_id(j), marks=[pytest.mark.serial]
                                              if chapters.runs_alone(j[1]) else [])
                                 for j in JOBS])
def test_corpus_verdict(job):
    kind, chapter, entry = job
    if os.environ.get(corpus.FULL_VARIABLE) != "1":
        kept = corpus.kept_verdict(kind, chapter, entry)
        if kept is not None:
            pytest.skip(f"{kept['verdict']} on this Python, recorded by these tests, digest {kept['digest']} "
                        f"({corpus.FULL_VARIABLE}=1 grades it again)")
    v = corpus.grade_one(kind, chapter, entry)
    if os.environ.get(corpus.RECORD_DIR_VARIABLE):  # the run is recordable (`corpus record DIR`)
        corpus.write_one(v, os.environ[corpus.RECORD_DIR_VARIABLE])
    detail = "\n".join(f"  {name}: {msg}" for name, msg in v.failures) or "  (no test failed)"
    assert v.verdict != "no Ray", f"not graded, an infrastructure failure:\n{detail}"
    if kind == "reference":
        assert v.verdict == "full", f"reference scores {v.score:g}/{v.max_score:g}:\n{detail}"
    elif kind == "correct":
        assert v.verdict == "full", (
            f"a correct answer ({entry.correct}) scores {v.score:g}/{v.max_score:g}:\n{detail}")
    elif kind == "stub":
        assert v.verdict == "zero", f"student stub scores {v.score:g}/{v.max_score:g}"
    else:
        assert v.verdict != "accepted", (
            f"wrong solution earns full marks ({entry.mistake}): the hidden tests cannot see it")
        assert v.verdict == "rejected", (
            f"rejected, but no failing test's message says {entry.violates!r}:\n{detail}")


def test_entries_are_well_formed_and_enough():
    entries = corpus.load_entries()
    assert entries, "the corpus is empty"
    for ch in corpus.corpus_chapters():
        mine = [e for e in entries if e.chapter == ch and not e.correct]
        assert len(mine) >= corpus.MIN_ENTRIES, f"chapter {ch}: {len(mine)} wrong solutions"
        corpus.chapter_path(ch)  # the chapter exists
        assert len({e.violates for e in mine}) >= 2, f"chapter {ch}: every entry breaks the same property"


def test_parse_rejects_a_stub_and_a_missing_header(tmp_path):
    d = tmp_path / "06"
    d.mkdir()
    (d / "stub.py").write_text("# mistake: x\n# violates: y\ndef f():\n    raise NotImplementedError()\n")
    (d / "nohead.py").write_text("# mistake: x\ndef f():\n    return 1\n")
    with pytest.raises(corpus.CorpusError, match="not a stub"):
        corpus.parse_entry(d / "stub.py")
    with pytest.raises(corpus.CorpusError, match="violates"):
        corpus.parse_entry(d / "nohead.py")
    (d / "ok.py").write_text("# mistake: m\n# violates: v\n# solution-cell: 1\ndef f():\n    return 1\n")
    e = corpus.parse_entry(d / "ok.py")
    assert (e.key, e.solution_cell, e.source) == ("06/ok", 1, "def f():\n    return 1\n")
    (d / "right.py").write_text("# correct: another primitive\n# from: a red team\ndef f():\n    return 2\n")
    e = corpus.parse_entry(d / "right.py")
    assert (e.kind, e.correct, e.origin, e.violates, e.source) == (
        "correct", "another primitive", "a red team", "", "def f():\n    return 2\n")
    (d / "both.py").write_text("# correct: x\n# mistake: y\n# violates: z\ndef f():\n    return 3\n")
    with pytest.raises(corpus.CorpusError, match="correct answer"):
        corpus.parse_entry(d / "both.py")


def test_judge_needs_the_phrase():
    run = labs.TestRun(Path("x.py"), [labs.TestResult(0, "t", 1.0, True, True, "2 calls were still running"),
                                      labs.TestResult(1, "v", 1.0, False, True, None)], 0.0)
    assert corpus.judge("entry", run, "still   RUNNING")[0] == "rejected"
    assert corpus.judge("entry", run, "permit")[0] == "unexplained"
    run.results[0].failure = None
    assert corpus.judge("entry", run, "still running")[0] == "accepted"
    assert corpus.judge("reference", run)[0] == "full"
    assert corpus.judge("correct", run)[0] == "full"
    run.results[1].failure = "a property broken"
    assert corpus.judge("correct", run)[0] == "not full"
    run.results[1].failure = None
    run.infrastructure = "Ray did not start (2 attempts failed)"
    for kind in ("reference", "stub", "entry"):
        verdict, failures = corpus.judge(kind, run, "still running")
        assert verdict == "no Ray" and failures[0] == ("(course cell)", run.infrastructure), kind


def test_corpus_never_reaches_a_student_release(tmp_path):
    chapter = corpus.corpus_chapters()[0]
    labs.release([str(corpus.chapter_path(chapter))], course_dir=tmp_path / "course", log=lambda *a: None)
    files = [p for p in (tmp_path / "course").rglob("*") if p.is_file()]
    assert not [p for p in files if "corpus" in p.parts], "corpus files in the course folder"
    released = [p for p in files if "release" in p.relative_to(tmp_path).parts]
    assert released and all(p.suffix == ".ipynb" for p in released), released
    for p in released:
        text = p.read_text()
        assert "# mistake:" not in text and "# violates:" not in text, f"a corpus entry leaked into {p}"


def test_instructor_table_in_step_with_corpus_and_verdicts():
    data = json.loads(corpus.VERDICTS_JSON.read_text())
    keys = {e.key for e in corpus.load_entries()}
    for ch in corpus.corpus_chapters():
        keys |= {f"{ch}/reference", f"{ch}/stub"}
    # A verdict not recorded yet (an entry added, `nox -s corpus` not re-run) shows as "?" on the
    # page, never as a pass; every entry is still graded on the default Python by the tests below.
    for py, got in data["pythons"].items():
        stale = sorted(set(got) - keys)
        assert not stale, f"Python {py}: verdicts for entries that no longer exist: {stale[:5]}"
    # The page is generated on the default Python (PYTHONS[0]): a digest covers the cells of the
    # grading plan, and the analysis that plans them reads cells with this interpreter's symtable
    # (3.14 and later read a top-level await another way), so another Python may plan more cells
    # and see other verdicts as current. Elsewhere the check above (no stale keys) still runs.
    if ".".join(map(str, sys.version_info[:2])) != corpus.PYTHONS[0]:
        pytest.skip(f"the corpus table is generated on Python {corpus.PYTHONS[0]}")
    assert corpus.write_table(check=True), (
        "book/instructors.md's corpus table is out of step: run `python -m lab_snippets.labs.corpus table`")


def test_recorded_verdicts_are_right_and_agree_across_pythons():
    data = json.loads(corpus.VERDICTS_JSON.read_text())
    assert set(data["pythons"]) == set(corpus.PYTHONS), f"verdicts recorded for {sorted(data['pythons'])}"
    wrong = [(py, key, v["verdict"]) for py, got in data["pythons"].items() for key, v in got.items()
             if v["verdict"] != corpus.GOOD[v["kind"]]]
    assert not wrong, f"wrong verdicts recorded: {wrong[:5]}"
    first, *rest = data["pythons"].values()
    for other in rest:
        both = set(first) & set(other)
        assert {k: other[k]["verdict"] for k in both} == {k: first[k]["verdict"] for k in both}


def test_failure_message_is_the_assertion_not_the_code():
    from lab_snippets.labs.common import failure_message
    tb = ["\x1b[31mAssertionError\x1b[39m Traceback", "----> 3 assert not _still_running, (...)"]
    outs = [{"output_type": "stream", "name": "stderr", "text": "Task was destroyed but it is pending!"},
            {"output_type": "error", "ename": "AssertionError",
             "evalue": "2 calls were still running after the failure (chapter 05)", "traceback": tb}]
    assert failure_message(outs) == "2 calls were still running after the failure (chapter 05)"
    assert failure_message([{"output_type": "error", "ename": "TimeoutError", "evalue": "",
                             "traceback": tb}]) == "TimeoutError"
    assert failure_message(outs[:1]).startswith("wrote to stderr")
    assert failure_message([{"output_type": "stream", "name": "stdout", "text": "ok"}]) is None


def test_feedback_hides_hidden_test_code_and_tracebacks():
    import nbformat

    from lab_snippets.labs.feedback import HideTestCode
    cell = nbformat.v4.new_code_cell(
        "print('visible part')\n### BEGIN HIDDEN TESTS\n"
        "assert not _secret_check(), 'the property (chapter 05)'\n"
        "### END HIDDEN TESTS\n")
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "x_hidden_tests"}
    cell.outputs = [nbformat.v4.new_output("error", ename="AssertionError",
                                           evalue="the property (chapter 05)",
                                           traceback=["----> 3 assert not _secret_check(), ..."])]
    nb = nbformat.v4.new_notebook(cells=[cell])
    out, _ = HideTestCode()(nb, {})  # as an exporter calls it (only when enabled)
    text = nbformat.writes(out)
    assert "_secret_check" not in text and "BEGIN HIDDEN" not in text
    assert "print('visible part')" in out.cells[0].source
    assert out.cells[0].outputs[0].traceback == ["Test failed: the property (chapter 05)"]


def test_release_config_wires_the_feedback_filter():
    assert "lab_snippets.labs.feedback.HideTestCode" in labs.CONFIG_TEMPLATE

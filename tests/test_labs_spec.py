"""Unit tests of ``labs.spec`` beyond the round trips in ``tests/test_labs_units.py``: what the
grader, its worker and the sandbox launcher accept from each other, and what they refuse."""

from __future__ import annotations

import json

import pytest

from lab_snippets.labs import spec
from lab_snippets.labs.spec import GradeSpec, Limits, Options, SandboxSpec


def _raw(**sandbox):
    box = {"box": "/tmp/b", "limits": {"cpu": 5}, **sandbox}
    return {"course": "/c", "course_id": "c", "assignment": "a", "student": "s", "notebook": "n",
            "timeout": 3, "iopub_timeout": 2, "result": "/r", "nonce": "00", "sandbox_spec": "/s",
            "sandbox": box}


def test_a_spec_without_the_optional_fields_takes_their_defaults():
    got = GradeSpec.loads(json.dumps(_raw()))
    assert got.sandbox == SandboxSpec(box="/tmp/b", limits=Limits(cpu=5))
    assert (got.solution_names, got.max_output_chars) == ((), 200_000)
    assert got.sandbox.limits.core == 0 and got.sandbox.package_root == "/lab"


def test_json_lists_come_back_as_the_tuples_the_frozen_spec_holds():
    raw = _raw(read_only=["/opt/py"], package_files=[["/a/t.py", "lab_snippets/t.py"]], hide=["/srv"])
    raw["solution_names"] = ["f", "g"]
    got = GradeSpec.loads(json.dumps(raw))
    assert got.sandbox.read_only == ("/opt/py",) and got.sandbox.hide == ("/srv",)
    assert got.sandbox.package_files == (("/a/t.py", "lab_snippets/t.py"),)
    assert got.solution_names == ("f", "g")
    hash(got)  # every part is hashable: nothing in it can be changed on the way


@pytest.mark.parametrize("where", ["top", "limits"])
def test_an_unknown_field_anywhere_in_the_spec_is_refused(where):
    raw = _raw()
    (raw if where == "top" else raw["sandbox"]["limits"])["typo"] = 1
    with pytest.raises(ValueError, match="typo"):
        GradeSpec.loads(json.dumps(raw))


@pytest.mark.parametrize("jobs", [None, 0])
def test_no_jobs_given_means_the_default(jobs, monkeypatch):
    monkeypatch.setattr(spec.os, "cpu_count", lambda: 2)
    assert Options(jobs=jobs).jobs == 2
    assert Options(jobs=7).jobs == 7, "a count the caller gives is kept, above 4 too"


@pytest.mark.parametrize("line", ["[1, 2]", '"cell"', "null", "{}", '{"kind": null}', ""])
def test_a_line_that_is_not_a_record_is_skipped(line):
    assert spec.parse_record(line) is None


def test_a_cell_records_restored_names_become_a_tuple_also_from_null():
    base = {"kind": "cell", "grade_id": "t1", "score": 1.0, "max_score": 1.0}
    assert spec.parse_record(json.dumps({**base, "restored": ["a", "b"]})).restored == ("a", "b")
    assert spec.parse_record(json.dumps({**base, "restored": None})).restored == ()


def test_every_record_kind_is_known_by_its_own_name():
    assert spec.RECORD_KINDS == {"cell": spec.CellRecord, "cell_timeout": spec.CellTimeout,
                                 "restart": spec.Restart, "died": spec.Died, "final": spec.Final,
                                 "infrastructure": spec.Infrastructure}
    assert json.loads(spec.record_line(spec.Restart(None))) == {"kind": "restart", "cell": None}

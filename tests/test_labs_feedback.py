"""Fast unit tests of ``lab_snippets.labs.feedback``: the student's feedback keeps which hidden test
failed and its message, never the hidden code or a traceback quoting it (no nbgrader run, no kernel)."""

from __future__ import annotations

import json

import nbformat

from lab_snippets.labs.common import BEGIN_HIDDEN, END_HIDDEN
from lab_snippets.labs.feedback import PLACEHOLDER, HideTestCode, strip_hidden

HIDDEN_CELL = f"""\
assert visible_check()
    {BEGIN_HIDDEN}
    assert secret_one()
    assert secret_two()
    {END_HIDDEN}
print("after the hidden part")
{BEGIN_HIDDEN}
zzz_secret_three()
{END_HIDDEN}"""


def test_strip_hidden_replaces_each_region_by_one_indented_placeholder():
    assert strip_hidden(HIDDEN_CELL).splitlines() == [
        "assert visible_check()",
        "    " + PLACEHOLDER,
        'print("after the hidden part")',
        PLACEHOLDER,
    ]


def test_strip_hidden_leaves_a_cell_without_markers_alone():
    source = "x = 1\n  y = 2\nassert x < y"
    assert strip_hidden(source) == source


def cell(source, outputs, cell_type="code", **nbgrader):
    raw = {"cell_type": cell_type, "metadata": {"nbgrader": nbgrader} if nbgrader else {},
           "source": source}
    if cell_type == "code":
        raw.update(execution_count=1, outputs=outputs)
    # through JSON, as a graded notebook is read: its strings are not the literals in the code
    return nbformat.from_dict(json.loads(json.dumps(raw)))


def run(c):
    out, resources = HideTestCode().preprocess_cell(c, {"x": 1}, 0)
    assert resources == {"x": 1}
    return out


TRACEBACK = ["Traceback", "----> 3 assert secret_one()", "AssertionError: the queue was never joined"]


def test_a_failed_hidden_test_shows_its_message_and_not_its_code_or_traceback():
    c = run(cell(HIDDEN_CELL, [
        {"output_type": "stream", "name": "stdout", "text": "debug print of secret_one\n"},
        {"output_type": "error", "ename": "AssertionError", "evalue": "the queue was never joined",
         "traceback": TRACEBACK},
    ], grade=True, grade_id="t_hidden_tests", points=1))
    assert "secret" not in c.source and PLACEHOLDER in c.source
    assert [o["output_type"] for o in c.outputs] == ["error"], "stdout of the hidden part is dropped"
    assert c.outputs[0]["traceback"] == ["Test failed: the queue was never joined"]
    assert c.outputs[0]["ename"] == "AssertionError"


def test_stderr_of_a_hidden_test_is_kept_as_the_evidence_of_its_score():
    c = run(cell(HIDDEN_CELL, [
        {"output_type": "stream", "name": "stderr", "text": "Task was destroyed but it is pending!\n"},
        {"output_type": "stream", "name": "stdout", "text": "secret_two says hi\n"},
    ]))
    assert [(o["output_type"], o["name"]) for o in c.outputs] == [("stream", "stderr")]
    assert "pending" in c.outputs[0]["text"]


def test_a_passing_hidden_test_shows_no_output_and_no_code():
    c = run(cell(HIDDEN_CELL, []))
    assert c.outputs == [] and "secret" not in c.source


def test_visible_tests_and_other_cells_are_left_as_they_are():
    visible = cell("assert visible_check()", [
        {"output_type": "error", "ename": "AssertionError", "evalue": "m", "traceback": TRACEBACK}],
        grade=True, grade_id="t_tests", points=1)
    before = json.loads(json.dumps(visible))
    assert run(visible) == before
    prose = cell(f"The instructor writes `{BEGIN_HIDDEN}` ... `{END_HIDDEN}` around hidden tests.", [],
                 cell_type="markdown")
    before = json.loads(json.dumps(prose))
    assert run(prose) == before, "a markdown cell naming the markers is prose, not a test"


def test_the_preprocessor_is_on_by_default():
    assert HideTestCode().enabled is True

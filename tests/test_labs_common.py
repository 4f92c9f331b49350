"""Fast unit tests of ``lab_snippets.labs.common``: what a student is told about a failed test cell,
and the venv's bin dir on PATH (no kernel, no sandbox; ``bench.mutation`` runs them per mutant).

Outputs are built with ``json.loads``, as they arrive from a notebook file, so that a string
compared by identity instead of by value is caught (literals in code are interned, JSON's are not).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from lab_snippets.labs import common
from lab_snippets.labs.common import FAILURE_CHARS, failure_message


def outputs(*items):
    return json.loads(json.dumps(list(items)))


def error(ename, evalue, traceback=("line 1 of the test: assert secret_check()",)):
    return {"output_type": "error", "ename": ename, "evalue": evalue, "traceback": list(traceback)}


def test_a_passing_cell_has_no_message():
    assert failure_message([]) is None
    assert failure_message(outputs({"output_type": "stream", "name": "stdout", "text": "ok\n"})) is None


def test_an_assertion_is_shown_as_its_message_alone_and_never_its_traceback():
    got = failure_message(outputs(error("AssertionError", "  the lock is held across the await  ")))
    assert got == "the lock is held across the await"
    assert "secret_check" not in got


def test_an_assertion_without_a_message_says_so():
    none = "a check failed (the test gave no message)"
    assert failure_message(outputs(error("AssertionError", ""))) == none
    assert failure_message(outputs({"output_type": "error", "ename": "AssertionError"})) == none


def test_another_error_is_shown_as_name_and_message():
    got = failure_message(outputs(error("TimeoutError", "no reply in 2 s")))
    assert got == "TimeoutError: no reply in 2 s"
    assert failure_message(outputs(error("KeyboardInterrupt", ""))) == "KeyboardInterrupt"
    assert failure_message(outputs({"output_type": "error", "evalue": "boom"})) == "Error: boom"


def test_an_error_says_more_than_stderr_written_before_it():
    got = failure_message(outputs({"output_type": "stream", "name": "stderr", "text": "warning\n"},
                                  error("ValueError", "bad value")))
    assert got == "ValueError: bad value"


def test_stderr_alone_is_a_failure_named_as_such():
    got = failure_message(outputs({"output_type": "stream", "name": "stdout", "text": "fine\n"},
                                  {"output_type": "stream", "name": "stderr", "text": "  Traceback: x\n"}))
    assert got == "wrote to stderr (nbgrader scores that as a failure): Traceback: x"
    long = failure_message(outputs({"output_type": "stream", "name": "stderr", "text": "e" * 500}))
    assert long == "wrote to stderr (nbgrader scores that as a failure): " + "e" * 120


def test_a_long_message_is_cut_to_the_limit_with_an_ellipsis():
    whole = "x" * FAILURE_CHARS
    assert failure_message(outputs(error("AssertionError", whole))) == whole
    longer = "".join(chr(ord("a") + i % 26) for i in range(FAILURE_CHARS + 50))
    got = failure_message(outputs(error("AssertionError", longer)))
    assert len(got) == FAILURE_CHARS and got.endswith("...")
    assert got[:-3] == longer[:FAILURE_CHARS - 3]
    named = failure_message(outputs(error("RuntimeError", longer)))
    assert len(named) == FAILURE_CHARS and named.startswith("RuntimeError: abc") and named.endswith("...")


def test_the_venvs_bin_dir_is_put_first_on_path_once(monkeypatch):
    bindir = str(Path(sys.executable).parent)
    monkeypatch.setenv("PATH", os.pathsep.join(["/nowhere/bin", "/usr/bin"]))
    common.ensure_venv_on_path()
    assert os.environ["PATH"].split(os.pathsep) == [bindir, "/nowhere/bin", "/usr/bin"]
    common.ensure_venv_on_path()
    assert os.environ["PATH"].split(os.pathsep) == [bindir, "/nowhere/bin", "/usr/bin"], "added twice"
    monkeypatch.setenv("PATH", os.pathsep.join(["/usr/bin", bindir]))
    common.ensure_venv_on_path()
    assert os.environ["PATH"] == os.pathsep.join(["/usr/bin", bindir]), "already there: left as it was"


def test_an_empty_path_gets_the_venv_only(monkeypatch):
    monkeypatch.delenv("PATH", raising=False)
    common.ensure_venv_on_path()
    assert os.environ["PATH"].split(os.pathsep)[0] == str(Path(sys.executable).parent)

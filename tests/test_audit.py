"""The leak audit catches each kind of leak in a planted notebook, and passes a clean one.

The planted notebooks live in a temporary folder (never in the book) and are run by the
same pytest plugin that runs the chapters.
"""

import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest

from lab_snippets.testing import audit

PLANTED = {
    "clean": """
        import threading, asyncio
        t = threading.Thread(target=lambda: None)
        t.start(); t.join(5)
        task = asyncio.create_task(asyncio.sleep(0))
        await asyncio.wait_for(task, 2)
        # kernel-owned things started lazily are not the notebook's leaks
        import subprocess, sys
        from IPython.display import display
        subprocess.run([sys.executable, "-c", "print('from a child')"], timeout=30)
        display({"application/x-large": "y" * 200_000}, raw=True)
    """,
    "thread": """
        import threading
        stop = threading.Event()
        threading.Thread(target=stop.wait, args=(30,), name="forgotten-worker", daemon=True).start()
    """,
    "process": """
        import subprocess, sys
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    """,
    "grandchild": """
        import subprocess, sys
        code = ("import subprocess, sys; "
                "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])")
        subprocess.run([sys.executable, "-c", code], timeout=10)
    """,
    "zombie": """
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "pass"])
        time.sleep(1.0)
    """,
    "task": """
        import asyncio
        forgotten = asyncio.create_task(asyncio.sleep(30), name="forgotten-task")
    """,
    "socket": """
        import socket
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen()
    """,
    "fd": """
        import os
        read_end, write_end = os.pipe()
    """,
    "tempfile": """
        import tempfile
        handle, name = tempfile.mkstemp(suffix=".leak")
        import os
        os.close(handle)
    """,
}
EXPECTED = {
    "thread": "thread 'forgotten-worker'",
    "process": "process",
    "grandchild": "process",
    "zombie": "zombie",
    "task": "asyncio task 'forgotten-task'",
    "socket": "socket fd",
    "fd": "pipe:",
    "tempfile": ".leak",
}


@pytest.fixture(scope="module")
def audit_report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("planted") / "notebooks"
    folder.mkdir()
    for i, (kind, body) in enumerate(PLANTED.items()):
        source = "# %%\n" + textwrap.dedent(body).strip() + "\n"
        (folder / f"9{i}_leak_{kind}.py").write_text(source, encoding="utf-8")
    report = folder.parent / "report.xml"
    cmd = [sys.executable, "-m", "pytest", "-p", "lab_snippets.testing.nbplugin", "--nbval-lax",
           "--nbval-current-env",
           "--nbval-cell-timeout=120", "--nbval-kernel-startup-timeout=120",
           "-p", "no:cacheprovider", "-o", "addopts=", "--rootdir", str(folder.parent), "-q",
           f"--junitxml={report}", str(folder)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=240, cwd=folder.parent)
    cases = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        key = (case.get("classname").split(".")[-1], case.get("name"))
        failure = case.find("failure")
        broken = case.find("error") if case.find("error") is not None else case.find("skipped")
        if broken is not None:  # the planted notebook could not run at all: say so, never read it as "clean"
            cases[key] = f"NOT RUN ({broken.tag}): {broken.get('message')} {broken.text or ''}"
        else:
            cases[key] = failure.text if failure is not None else None
    return run, cases


def finish_result(cases, kind):
    matches = [v for (cls, name), v in cases.items()
               if f"leak_{kind}" in cls and name == "leak audit (finish)"]
    assert len(matches) == 1, f"the audit cell did not run for the {kind} notebook: {sorted(cases)}"
    return matches[0]


def test_clean_notebook_passes_the_audit(audit_report):
    _, cases = audit_report
    assert finish_result(cases, "clean") is None
    assert not [v for v in cases.values() if v and v.startswith("NOT RUN")], "every planted notebook must run"


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_each_kind_of_leak_is_caught_and_named(audit_report, kind):
    run, cases = audit_report
    failure = finish_result(cases, kind)
    assert failure is not None, f"the {kind} leak was not caught"
    assert not failure.startswith("NOT RUN"), f"the planted {kind} notebook did not run: {failure}"
    assert "left these behind" in failure
    assert EXPECTED[kind] in failure, failure
    assert run.returncode == 1


def test_grandchild_reparented_away_is_still_found(audit_report):
    _, cases = audit_report
    failure = finish_result(cases, "grandchild")
    assert "running" in failure and "time.sleep(30)" in failure


def test_finish_without_start_is_an_error(monkeypatch):
    monkeypatch.setattr(audit, "_baseline", None)
    with pytest.raises(RuntimeError, match="without audit.start"):
        audit.finish()


def test_in_process_audit_sees_a_thread_and_forgives_it_once_joined():
    import threading

    before = audit.snapshot()
    release = threading.Event()
    worker = threading.Thread(target=release.wait, args=(10,), name="probe")
    worker.start()
    try:
        assert any("probe" in line for line in audit.leaks(before))
    finally:
        release.set()
        worker.join(5)
    assert not any("probe" in line for line in audit.leaks(before))


def test_only_the_descriptors_raylab_recorded_are_excused(monkeypatch):
    from lab_snippets import raylab

    before = audit.snapshot()
    kept_r, kept_w = os.pipe()
    other_r, other_w = os.pipe()
    try:
        monkeypatch.setattr(raylab, "NATIVE_FDS", {kept_r: os.readlink(f"/proc/self/fd/{kept_r}")})
        found = audit.leaks(before)
        assert not any(f"descriptor {kept_r} " in line for line in found), "recorded by raylab.stop: excused"
        assert any(f"descriptor {kept_w} " in line for line in found), "the pipe's other end was not recorded"
        assert any(f"descriptor {other_r} " in line for line in found), "a descriptor raylab never saw"
    finally:
        for fd in (kept_r, kept_w, other_r, other_w):
            os.close(fd)

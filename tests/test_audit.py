"""The leak audit catches each kind of leak in a planted notebook, and passes a clean one.

The planted notebooks live in a temporary folder (never in the book) and are run by the
same pytest plugin that runs the chapters.
"""

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
        # a thread that printed: ipykernel gave it an event pipe (an eventfd) that its IOPub
        # thread closes up to 10 s after the thread ended (counterfactual: the audit no longer
        # closes ended threads' pipes itself, and this notebook fails with an eventfd)
        printer = threading.Thread(target=print, args=("from a thread",))
        printer.start(); printer.join(5)
    """,
    "thread": """
        import threading
        stop = threading.Event()
        def work():
            print("working")  # ipykernel gives the thread an event pipe: the kernel's, not a leak
            stop.wait(30)
        threading.Thread(target=work, name="forgotten-worker", daemon=True).start()
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
    "eventfd": """
        import os
        wakeup = os.eventfd(0)  # the notebook's own eventfd is still a leak
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
    "eventfd": "anon_inode:[eventfd]",
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


def test_a_live_threads_kernel_event_pipe_is_not_named_as_a_descriptor(audit_report):
    # the forgotten worker printed: the thread is the leak; its event pipe (an eventfd the kernel
    # owns) is not counted again (counterfactual: the audit no longer passes over live pipes)
    _, cases = audit_report
    failure = finish_result(cases, "thread")
    assert "forgotten-worker" in failure and "eventfd" not in failure, failure


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


def test_only_the_descriptors_raylab_noted_are_excused(monkeypatch):
    """Ray's one exception: what ``raylab.stop`` noted (still on the same target) is excused; another
    descriptor opened beside it, or one whose number now points elsewhere, is still a leak."""
    import os

    from lab_snippets import raylab

    before = audit.snapshot()
    kept_r, kept_w = os.pipe()  # stands for an event descriptor Ray's core keeps
    other_r, other_w = os.pipe()
    try:
        monkeypatch.setattr(raylab, "_KEPT", {kept_r: os.readlink(f"/proc/self/fd/{kept_r}"),
                                              other_w: "anon_inode:[eventfd]"})
        found = "\n".join(audit.leaks(before))
        assert f"descriptor {kept_r} " not in found, "a descriptor raylab noted must be excused"
        assert f"descriptor {kept_w} " in found, "a descriptor raylab did not note is still a leak"
        assert f"descriptor {other_w} " in found, "a noted number that now points elsewhere is a leak"
    finally:
        for fd in (kept_r, kept_w, other_r, other_w):
            os.close(fd)


def test_a_ray_session_folder_left_behind_is_a_leak(tmp_path, monkeypatch):
    """Only the folders raylab made in this process count: another notebook's Ray beside this one
    (two chapters at once) has folders of its own that are none of this audit's business."""
    from lab_snippets import raylab

    ours, theirs = tmp_path / "lab-ray-ours1234", tmp_path / "lab-ray-theirs12"
    monkeypatch.setattr(raylab, "_MADE", [])
    before = audit.snapshot()
    ours.mkdir()
    theirs.mkdir()
    raylab._MADE.append(str(ours))
    found = audit.leaks(before)
    assert f"Ray session folder left behind: {ours}" in found, found
    assert not any("theirs" in line for line in found), "another process's Ray folder is not ours"
    ours.rmdir()
    assert not any("Ray session" in line for line in audit.leaks(before)), "a removed folder is no leak"

"""``raygrade.sweep_orphans``: the folders of grading tasks whose worker died before its own
cleanup (a node removed while the task was starting) are removed, with what still runs in them;
the folders of live workers, of other hosts and of other programs are not touched."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import psutil

from lab_snippets.labs import raygrade


def _dead_owner_prefix() -> str:
    """The folder prefix a worker that has exited would have used."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        prefix = raygrade._owner_prefix(child.pid)
    finally:
        child.kill()
        child.wait(timeout=30)
    return prefix


def test_a_dead_workers_folder_and_its_processes_go_and_nothing_else(tmp_path):
    """Counterfactuals: a sweep that judges every folder (the live one goes), one that removes the
    folder but leaves its process (the sleeper survives), one that ignores the host (the other
    host's folder goes)."""
    orphan = tmp_path / (_dead_owner_prefix() + "abc_123")
    live = tmp_path / (raygrade._owner_prefix() + "def456")
    other_host = tmp_path / f"{raygrade.FOLDER_PREFIX}elsewhere-{os.getpid()}-1-ghi789"
    unnamed = tmp_path / f"{raygrade.FOLDER_PREFIX}jkl012"
    for f in (orphan, live, other_host, unnamed):
        f.mkdir()
        (f / "spec.json").write_text("{}")
    sleeper = subprocess.Popen([sys.executable, "-c", "import time, sys; time.sleep(60)",
                                str(orphan / "spec.json")])
    try:
        removed = raygrade.sweep_orphans(str(tmp_path))
        assert removed == [orphan.name], removed
        assert not orphan.exists(), "the dead worker's folder is still there"
        assert sleeper.wait(timeout=10) is not None, "a process in the dead worker's folder still runs"
        assert all(f.exists() for f in (live, other_host, unnamed)), \
            "a folder of a live worker, another host or no named worker was removed"
    finally:
        if sleeper.poll() is None:
            sleeper.kill()
        sleeper.wait(timeout=30)


def test_a_reused_pid_is_not_its_old_worker():
    """Counterfactual: an owner judged by pid alone (a new process with the old pid keeps the dead
    worker's folder forever)."""
    me = psutil.Process()
    b36 = raygrade._base36
    name = f"{raygrade.FOLDER_PREFIX}{raygrade._host_tag()}-{b36(me.pid)}-" \
           f"{b36(int(me.create_time() * 100) - 1)}-xyz"
    assert not raygrade._owner_alive(name)
    assert raygrade._owner_alive(raygrade._owner_prefix() + "xyz")
    assert raygrade._owner_alive(name.replace(f"-{b36(me.pid)}-", "-not_a_pid-", 1))
    assert raygrade._owner_alive(name.replace(f"-{b36(me.pid)}-", "-zzzzzz-", 1)), \
        "a number no pid can be is not a dead worker's"
    assert [int(b36(n), 36) for n in (0, 35, 36, 4194304, 179658294210)] == \
        [0, 35, 36, 4194304, 179658294210]


# A kernel's sockets are unix socket files in its sandbox's folder, and Linux holds a socket's path
# in 108 bytes. In a Ray task that folder is nested twice under the node's temp dir; named with the
# host's full name, a cloud host (40 characters) under /tmp already passed the limit, and under the
# test's temp folders every row failed with zmq's "File name too long" (CI of 18f5987b: 113 bytes).

def test_the_socket_limit_is_the_kernels(tmp_path):
    """``socket_room`` against a real bind: a temp dir with no room to spare takes the longest
    kernel socket path, one character longer does not. Counterfactuals: a ``SOCKET_PATH_MAX`` or a
    ``KERNEL_SOCKET_TAIL`` one off."""
    import socket as socket_

    base = str(tmp_path)
    for extra, fits in ((0, True), (1, False)):
        tmp = base + "/" + "d" * (raygrade.socket_room(base) - 1 + extra)  # room: 0, then -1
        assert raygrade.socket_room(tmp) == -extra
        box = Path(tmp, "labs-grade-XXXXXXXX", "box")
        box.mkdir(parents=True)
        path = str(box / "k-99")
        assert len(tmp) + raygrade.KERNEL_SOCKET_TAIL == len(path)
        sock = socket_.socket(socket_.AF_UNIX)
        try:
            sock.bind(path)
            bound = True
        except OSError:
            bound = False
        finally:
            sock.close()
        assert bound == fits, f"a {len(path)}-byte socket path bound: {bound}"
        os.unlink(path) if bound else None


def test_the_kernel_socket_tail_is_what_the_grader_makes():
    """The tail ``socket_room`` counts is the grader's folder, the sandbox's box and the kernel
    manager's socket name. Counterfactual: a grader whose folder or socket name grows."""
    import inspect

    from lab_snippets.labs import grader, worker

    assert 'mkdtemp(prefix="labs-grade-")' in inspect.getsource(grader._grade_one)
    assert 'tmp / "box"' in inspect.getsource(grader._grade_one)
    assert 'os.path.join(box, "k")' in inspect.getsource(worker.SandboxKernelManager)
    assert raygrade.KERNEL_SOCKET_TAIL == len("/labs-grade-") + 8 + len("/box/k-") + 2


def test_a_task_folder_does_not_grow_with_the_host_name(monkeypatch):
    """Counterfactual: the host's name in the folder's name (63 characters here)."""
    short = raygrade._owner_prefix()
    monkeypatch.setattr(raygrade.socket, "gethostname", lambda: "h" * 63)
    long_host = raygrade._owner_prefix()
    assert len(long_host) == len(short) <= 40, (short, long_host)
    assert raygrade._owner_alive(long_host + "abc") and not raygrade.sweep_orphans("/nonexistent")


def test_a_temp_dir_too_long_is_refused_with_the_fix(monkeypatch):
    """A node whose temp dir leaves no room advertises nothing and names the fix; the pool's
    check counts no task folder. Counterfactuals: ``node_resources`` that skips the check (the
    node takes tasks that all fail), a message without TMPDIR."""
    short = tempfile.mkdtemp(prefix="r", dir="/tmp")  # pytest's own temp dirs are too long here
    try:
        long_tmp = Path(short, "d" * raygrade.socket_room(short, task_folder=True))
        long_tmp.mkdir()
        monkeypatch.setattr(raygrade.tempfile, "tempdir", str(long_tmp))
        assert raygrade.socket_room(task_folder=True) == -1
        _refused()
    finally:
        shutil.rmtree(short)


def _refused():
    from lab_snippets.labs.common import LabError

    assert raygrade.node_resources(1) == {}
    try:
        raygrade.node_resources(1, strict=True)
    except LabError as exc:
        assert "TMPDIR" in str(exc) and "ray start" in str(exc), exc
    else:
        raise AssertionError("a node whose kernels could not open their sockets passed")
    raygrade.check_temp_dir()  # the pool's kernels, without a task folder, still fit

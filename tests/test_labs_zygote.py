"""Unit tests of ``labs.zygote``: a real zygote (its imports take about a second), no kernel.

A child is held still by a spec path that is a FIFO: the worker's first act, reading its spec,
blocks until the test writes it. Meanwhile the test looks at the child as the grader would have
started a fresh worker: a session of its own, the work folder as its current folder, stdin from
/dev/null, stdout and stderr into ``worker.log``, SIGINT and SIGCHLD at their defaults, no pipe
to the zygote. Then: what the child writes reaches ``worker.log``; closing the zygote ends a
child still running (it dies with its zygote); a zygote that cannot start makes ``fork`` answer
None, and the grader starts a fresh worker then.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from lab_snippets.labs import grader, zygote
from lab_snippets.labs.common import REPO
from lab_snippets.labs.spec import Options


def _env():
    return dict(os.environ, PYTHONPATH=str(REPO), PYTHONDONTWRITEBYTECODE="1")


@pytest.fixture
def zyg():
    z = zygote.Zygote(_env(), cwd=REPO)
    try:
        yield z
    finally:
        z.close()


def _held(tmp_path, name="w"):
    """A work folder whose spec is a FIFO (the child blocks reading it) and an empty worker.log."""
    work = tmp_path / name
    work.mkdir()
    os.mkfifo(work / "spec.json")
    (work / "worker.log").write_bytes(b"")
    return work


def _signal_masks(pid: int) -> dict[str, int]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    fields = dict(line.split(":\t", 1) for line in lines if ":\t" in line)
    return {k: int(fields[k], 16) for k in ("SigIgn", "SigCgt", "SigBlk")}


def _wait_gone(pid: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while psutil.pid_exists(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not psutil.pid_exists(pid)


def test_a_forked_worker_is_set_up_as_a_fresh_one_and_its_output_goes_to_its_log(zyg, tmp_path):
    work = _held(tmp_path)
    pid = zyg.fork(work / "spec.json", work)
    assert pid is not None, zyg.problem
    child = psutil.Process(pid)
    assert child.ppid() == zyg.proc.pid, "the zygote's child"
    deadline = time.monotonic() + 30
    while os.getsid(pid) != pid:  # setsid is among the child's first acts
        assert time.monotonic() < deadline, "the child never got a session of its own"
        time.sleep(0.05)
    assert os.getpgid(pid) == pid, "its own process group: a kill of it takes nobody else"
    deadline = time.monotonic() + 30
    while child.cwd() != str(work):
        assert time.monotonic() < deadline, "the child never moved to its work folder"
        time.sleep(0.05)
    fds = {int(fd): os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
    assert fds[0] == os.devnull
    assert fds[1] == fds[2] == str(work / "worker.log")
    assert not any(t.startswith("pipe:") for t in fds.values()), f"a pipe kept: {fds}"
    masks = _signal_masks(pid)
    for sig in (signal.SIGINT, signal.SIGCHLD):
        assert not masks["SigIgn"] & (1 << (sig - 1)), f"{sig.name} still ignored in the child"
    (work / "spec.json").write_text("not a spec")  # unblocks the read: the worker fails loudly
    assert _wait_gone(pid), "the child did not end"
    log = (work / "worker.log").read_text()
    assert "Traceback" in log and "JSONDecodeError" in log, log


def test_a_running_child_dies_with_its_zygote(tmp_path):
    z = zygote.Zygote(_env(), cwd=REPO)
    try:
        work = _held(tmp_path)
        pid = z.fork(work / "spec.json", work)
        assert pid is not None, z.problem
        time.sleep(0.5)
        assert psutil.pid_exists(pid)
    finally:
        z.close()
    assert z.proc.returncode is not None, "the zygote ended at end of file"
    assert _wait_gone(pid), "a worker outlived its zygote"


def test_the_zygote_ignores_ctrl_c_and_forks_one_child_per_request(zyg, tmp_path):
    first = _held(tmp_path, "a")
    a = zyg.fork(first / "spec.json", first)
    assert a is not None, zyg.problem
    os.kill(zyg.proc.pid, signal.SIGINT)
    second = _held(tmp_path, "b")
    b = zyg.fork(second / "spec.json", second)
    assert b is not None and b != a, zyg.problem
    assert zyg.forked == 2
    for work, pid in ((first, a), (second, b)):
        (work / "spec.json").write_text("{}")
        assert _wait_gone(pid)


def test_a_zygote_that_cannot_start_answers_none_and_the_grader_starts_a_fresh_worker(
        tmp_path, monkeypatch):
    with monkeypatch.context() as m:  # a zygote that ends before it answers
        m.setattr(zygote.sys, "executable", "/bin/false")
        broken = zygote.Zygote(_env(), cwd=tmp_path)
    try:
        work = tmp_path / "w"
        work.mkdir()
        assert broken.fork(work / "spec.json", work) is None
        assert "zygote ended" in broken.problem
        started = []
        real = subprocess.Popen

        def popen(cmd, **kw):
            started.append(cmd)
            return real([sys.executable, "-c", "pass"], **kw)

        monkeypatch.setattr(grader.subprocess, "Popen", popen)
        assert grader._run_worker(work / "spec.json", work, Options(submission_timeout=60),
                                  broken) is False
        assert started == [[sys.executable, "-m", "lab_snippets.labs.worker",
                            str(work / "spec.json")]]
    finally:
        broken.close()


def test_a_forked_worker_past_the_wall_clock_limit_is_killed(zyg, tmp_path):
    work = _held(tmp_path)
    t0 = time.monotonic()
    assert grader._run_worker(work / "spec.json", work, Options(submission_timeout=2), zyg) is True
    assert time.monotonic() - t0 < 30
    assert zyg.forked == 1
    assert psutil.Process(zyg.proc.pid).children() == [], "the killed worker is gone"


def test_nothing_of_a_zygote_is_left_after_close(tmp_path):
    z = zygote.Zygote(_env(), cwd=REPO)
    pid = z.proc.pid
    z.close()
    z.close()  # twice: harmless
    assert _wait_gone(pid), "the zygote outlived close()"
    assert z.fork(tmp_path / "spec.json", tmp_path) is None, "a closed zygote forks nothing"

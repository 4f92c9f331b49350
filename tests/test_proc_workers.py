"""Tests for lab_snippets.proc_workers: the pool workers and the child commands."""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import queue
import signal
import subprocess
import sys
import time

import psutil
import pytest

from lab_snippets import proc_workers
from lab_snippets.proc_workers import (
    append_and_return,
    burn,
    consume_until_stop,
    count_primes,
    exit_on_signal,
    ignore_sigterm,
    messages,
    note_sigterm,
    overlap_seconds,
    pid_and_span,
    read_line,
    square,
    stop_resource_tracker,
)

WORKERS = [sys.executable, "-m", "lab_snippets.proc_workers"]
SPAWN = multiprocessing.get_context("spawn")


def start(*args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([*WORKERS, *args], stdout=subprocess.PIPE, **kwargs)


def finish(proc: subprocess.Popen, timeout: float = 5) -> str:
    try:
        out, _ = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=5)
    return out.decode()


def test_burn_reports_its_running_intervals():
    before = time.monotonic()
    report = burn(50, chunk_size=500)
    after = time.monotonic()
    assert report["pid"] == os.getpid()
    assert report["start"] <= report["intervals"][0][0] <= report["intervals"][-1][1] == report["end"]
    assert all(a <= b for a, b in report["intervals"])
    assert 0 < report["cpu"] <= after - before, "the CPU time of this call, not of the thread's life"


def test_burn_checksum_is_bounded_and_depends_on_the_work():
    sums = [burn(1, chunk_size=n)["checksum"] for n in (10, 100, 1000)]
    assert all(isinstance(c, int) and 0 <= c < 1_000_003 for c in sums), sums
    assert len(set(sums)) == 3, sums


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity on this platform")
def test_burn_pins_the_calling_process_to_one_cpu():
    saved = os.sched_getaffinity(0)
    cpu = max(saved)
    try:
        burn(1, cpu=cpu, chunk_size=10)
        assert os.sched_getaffinity(0) == {cpu}
    finally:
        os.sched_setaffinity(0, saved)


def test_overlap_seconds_counts_only_shared_time():
    assert overlap_seconds([(0, 2)], [(1, 3)]) == pytest.approx(1)
    assert overlap_seconds([(0, 1), (2, 3)], [(0.5, 2.5)]) == pytest.approx(1)
    assert overlap_seconds([(0, 1)], [(1, 2)]) == 0
    assert overlap_seconds([], [(0, 1)]) == 0
    assert overlap_seconds([(0, 1)], [(2, 3)]) == 0, "disjoint intervals share nothing"
    many_a = [(2 * k, 2 * k + 1) for k in range(300)]  # a burn report on a loaded machine: many runs
    many_b = [(2 * k + 0.5, 2 * k + 1.5) for k in range(300)]
    assert overlap_seconds(many_a, many_b) == pytest.approx(150)


def test_small_workers():
    assert count_primes(0, 30) == 10
    assert count_primes(10, 20) == 4
    items = [1]
    assert append_and_return(items, 2) is items and items == [1, 2]
    assert square(7) == 49 and square(-3) == 9
    pid, begin, end = pid_and_span(0.01)
    assert pid == os.getpid() and end > begin


def test_consume_until_stop_sends_done_last():
    tasks: queue.Queue = queue.Queue()
    results: queue.Queue = queue.Queue()
    for item in (1, 2, 3, None):
        tasks.put(item)
    consume_until_stop(tasks, results, linger=0)
    got = [results.get(timeout=1) for _ in range(4)]
    assert got == [(1, 1), (2, 4), (3, 9), "done"]


def test_consume_until_stop_does_not_hang_without_a_stop_message():
    with pytest.raises(queue.Empty):
        consume_until_stop(queue.Queue(), queue.Queue(), get_timeout=0.05)


def test_ignore_sigterm_needs_kill():
    ready = SPAWN.Event()
    proc = SPAWN.Process(target=ignore_sigterm, args=(ready, 5))
    proc.start()
    try:
        assert ready.wait(timeout=10)
        proc.terminate()
        proc.join(timeout=0.3)
        assert proc.is_alive(), "SIGTERM is ignored"
        proc.kill()
        proc.join(timeout=5)
        assert proc.exitcode == -signal.SIGKILL
    finally:
        if proc.is_alive():
            proc.kill()
            proc.join(timeout=5)


def test_note_sigterm_reports_and_keeps_running():
    report, workers_end = SPAWN.Pipe()
    proc = SPAWN.Process(target=note_sigterm, args=(workers_end, 0.4))
    proc.start()
    try:
        assert messages(report, timeout=10) == ["ready"]
        proc.terminate()
        proc.join(timeout=5)
        assert proc.exitcode == 0
        assert messages(report, timeout=1) == ["got SIGTERM", "lived to the end"]
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(timeout=5)
        report.close()
        workers_end.close()


def test_exit_on_signal_uses_the_shell_convention():
    ready, workers_end = SPAWN.Pipe()
    proc = SPAWN.Process(target=exit_on_signal, args=(workers_end, 5))
    proc.start()
    try:
        assert messages(ready, timeout=10) == ["ready"]
        os.kill(proc.pid, signal.SIGINT)
        proc.join(timeout=5)
        assert proc.exitcode == 128 + signal.SIGINT
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(timeout=5)
        ready.close()
        workers_end.close()


def test_messages_stops_at_end_of_file():
    mine, theirs = SPAWN.Pipe()
    theirs.send(1)
    theirs.send(2)
    theirs.close()
    assert messages(mine, timeout=1) == [1, 2]
    mine.close()


def test_stop_resource_tracker_stops_a_running_tracker_once():
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()
    pid = resource_tracker._resource_tracker._pid
    assert pid is not None and psutil.pid_exists(pid)
    assert stop_resource_tracker() is True
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert stop_resource_tracker() is False, "nothing left to stop"


def test_write_all_writes_exactly_count_bytes():
    for count in (0, 1, 4096, 4097, 9000):
        read_end, write_end = os.pipe()
        try:
            proc_workers._write_all(write_end, count, b"x")
            os.close(write_end)
            data = b""
            while chunk := os.read(read_end, 65536):
                data += chunk
            assert data == b"x" * count, f"{count} bytes asked, {len(data)} written"
        finally:
            os.close(read_end)
            try:
                os.close(write_end)
            except OSError:
                pass


def test_lifetimes_are_capped():
    assert proc_workers._bounded(1e9) == proc_workers.MAX_LIFETIME
    assert proc_workers._bounded(-1) == 0


def test_read_line_times_out_and_reads_lines():
    proc = start("sleep", "0.3")
    try:
        assert read_line(proc.stdout, timeout=5).startswith("ready ")
        with pytest.raises(TimeoutError):
            read_line(proc.stdout, timeout=0.05)
        assert read_line(proc.stdout, timeout=5) == ""  # end of file when the child exits
    finally:
        finish(proc)


def test_exit_command():
    done = subprocess.run([*WORKERS, "exit", "3"], capture_output=True, timeout=10)
    assert done.returncode == 3


def test_report_signals_exits_with_128_plus_signal():
    proc = start("report-signals", "5")
    assert read_line(proc.stdout, timeout=5).startswith("ready ")
    proc.send_signal(signal.SIGINT)
    out = finish(proc)
    assert out.startswith("got SIGINT") and proc.returncode == 128 + signal.SIGINT


def test_wrap_forwards_sigterm_to_its_child():
    proc = start("wrap", "--forward", "5", "--", *WORKERS, "report-signals", "5")
    wrapper_pid, child_pid = map(int, read_line(proc.stdout, timeout=5).split()[1:3])
    assert read_line(proc.stdout, timeout=5).startswith("ready ")  # the child's own line
    proc.send_signal(signal.SIGTERM)
    out = finish(proc)
    lines = [line.split()[0:2] for line in out.splitlines()]
    assert lines == [["wrapper", "forwards"], ["got", "SIGTERM"], ["wrapper", "saw"]]
    assert proc.returncode == 128 + signal.SIGTERM
    assert wrapper_pid == proc.pid and not psutil.pid_exists(child_pid)


def test_wrap_reports_a_child_killed_by_a_signal_as_128_plus_the_signal():
    proc = start("wrap", "5", "--", *WORKERS, "sleep", "5")
    _, child_pid = map(int, read_line(proc.stdout, timeout=5).split()[1:3])
    assert read_line(proc.stdout, timeout=5).startswith("ready ")  # the child's own line
    os.kill(child_pid, signal.SIGKILL)
    out = finish(proc)
    assert out.split()[:5] == ["wrapper", "saw", "child", "exit", str(-signal.SIGKILL)]
    assert proc.returncode == 128 + signal.SIGKILL


def test_spawn_children_kills_a_child_that_outlives_the_deadline():
    proc = start("spawn-children", "1", "0.2")
    child = None
    try:
        child = int(read_line(proc.stdout, timeout=5).split()[2])
        os.kill(child, signal.SIGSTOP)  # a stopped child cannot end its own sleep
        assert proc.wait(timeout=10) == 0, "the leader waits its deadline (+1 s), then kills the child"
        assert not psutil.pid_exists(child) or psutil.Process(child).status() == psutil.STATUS_ZOMBIE
    finally:
        if child is not None:  # a leader that failed to kill it leaves it stopped: kill it here
            try:
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                pass
        finish(proc)


def test_spawn_children_waits_for_its_children():
    proc = start("spawn-children", "2", "0.2")
    pids = [int(p) for p in read_line(proc.stdout, timeout=5).split()[1:]]
    assert pids[0] == proc.pid and len(pids) == 3
    pids = pids[1:]
    finish(proc)
    assert proc.returncode == 0
    assert not any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in pids)


def test_spawn_children_writes_a_pid_file_and_children_may_ignore_sigterm(tmp_path):
    pid_file = tmp_path / "pids"
    proc = start(
        "spawn-children", "1", "3", "--ignore-sigterm", "--pid-file", str(pid_file), start_new_session=True
    )
    try:
        deadline = time.monotonic() + 10
        while not (pid_file.exists() and pid_file.read_text().endswith("\n")) and time.monotonic() < deadline:
            time.sleep(0.01)
        _, parent, child = pid_file.read_text().split()
        assert int(parent) == proc.pid
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=5)
        assert psutil.Process(int(child)).status() != psutil.STATUS_ZOMBIE, "the child ignored SIGTERM"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        finish(proc)


def test_hold_flock_holds_until_killed(tmp_path):
    path = tmp_path / "gpu0.lock"
    proc = start("hold-flock", str(path), "5")
    try:
        assert read_line(proc.stdout, timeout=5).startswith("ready ")
        with open(path, "a+") as mine:
            with pytest.raises(BlockingIOError):
                fcntl.flock(mine, fcntl.LOCK_EX | fcntl.LOCK_NB)
            proc.kill()
            proc.wait(timeout=5)
            fcntl.flock(mine, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        finish(proc)


def test_every_command_ends_by_itself():
    begin = time.monotonic()
    proc = start("sleep", "0.1")
    finish(proc, timeout=10)
    assert proc.returncode == 0 and time.monotonic() - begin < 10


def test_chatter_writes_both_pipes_stderr_first_and_exits_with_its_code():
    done = subprocess.run([*WORKERS, "chatter", "5000", "70000", "--exit", "4"], capture_output=True,
                          timeout=10)
    assert done.returncode == 4
    assert done.stdout == b"o" * 5000 and done.stderr == b"e" * 70000


def test_chatter_blocks_on_a_full_stderr_pipe_that_nobody_reads():
    proc = subprocess.Popen([*WORKERS, "chatter", "10", "1000000"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        with pytest.raises(TimeoutError):
            read_line(proc.stdout, timeout=0.5)  # nothing on stdout while stderr is full
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.communicate(timeout=5)


SIGNAL_WAKEUP_PROBE = """
import signal, sys, threading, time, os
from lab_snippets.proc_workers import _SignalWakeup
seen = []
signal.signal(signal.SIGUSR1, lambda signum, frame: seen.append(time.monotonic()))
with _SignalWakeup() as wakeup:
    signal.raise_signal(signal.SIGUSR1)        # arrives before the wait starts
    start = time.monotonic(); wakeup.wait(5); before = time.monotonic() - start
with _SignalWakeup() as wakeup:
    threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGUSR1)).start()  # arrives during it
    start = time.monotonic(); wakeup.wait(5); during = time.monotonic() - start
print(len(seen), round(before, 3), round(during, 3))
"""


def test_signal_wakeup_ends_the_wait_for_a_signal_before_or_during_it():
    done = subprocess.run([sys.executable, "-c", SIGNAL_WAKEUP_PROBE], capture_output=True, text=True,
                          timeout=20)
    assert done.returncode == 0, done.stderr
    count, before, during = done.stdout.split()
    assert count == "2"
    assert float(before) < 2.5, "a signal that came before the wait still ends it (time.sleep would not)"
    assert float(during) < 2.5, "a signal during the wait ends it"


def test_spawn_children_leader_exits_while_its_children_hold_stderr(tmp_path):
    pid_file = tmp_path / "pids"
    proc = subprocess.Popen([*WORKERS, "spawn-children", "1", "3", "--leader-exits", "--pid-file",
                             str(pid_file)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        assert proc.wait(timeout=10) == 0, "the leader exits by itself"
        child = int(pid_file.read_text().split()[2])
        assert psutil.Process(child).status() != psutil.STATUS_ZOMBIE, "its child still runs"
        os.set_blocking(proc.stderr.fileno(), False)
        assert proc.stderr.read() is None, "the child still holds the stderr pipe (no end of file)"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.stderr.close()

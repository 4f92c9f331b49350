"""Tests for lab_snippets.cpu_work: the scoring stand-in, the counting executor, the SIGALRM timeout."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from lab_snippets.cpu_work import (
    CountingExecutor,
    alarm_timeout,
    payload_size,
    score,
    score_with_alarm,
    timed_score,
)


def test_score_is_deterministic_and_reports_the_pid():
    assert score("abc") == score("abc")
    assert score("abc")[0] != score("abd")[0]
    assert score("abc")[1] == os.getpid()
    assert payload_size(bytes(10)) == 10


def test_timed_score_times_the_work_where_it_runs():
    short, long = timed_score("a" * 10), timed_score("a" * 2_000)
    assert 0 < short < long, "the time grows with the work"


def test_counting_executor_counts_calls_in_flight():
    release = threading.Event()
    with ThreadPoolExecutor(2) as inner:
        pool = CountingExecutor(inner)
        futures = [pool.submit(release.wait, 5) for _ in range(2)]
        assert pool.now == 2 and pool.peak == 2 and pool.submitted == 2
        release.set()
        assert all(f.result(timeout=5) for f in futures)
        pool.submit(len, "x").result(timeout=5)
    assert pool.now == 0 and pool.peak == 2 and pool.submitted == 3


def test_alarm_timeout_refuses_outside_the_main_thread():
    outcome = []
    thread = threading.Thread(target=lambda: outcome.append(score_with_alarm(0.05, work_seconds=0.1)))
    thread.start()
    thread.join(timeout=5)
    assert outcome == ["refused ValueError: signal only works in main thread of the main interpreter"]


def test_alarm_timeout_fires_in_the_main_thread():
    with pytest.raises(TimeoutError):
        with alarm_timeout(0.05):
            while True:
                score("x" * 100, rounds=1)


@pytest.mark.parametrize(("flags", "prefix"), [([], "timed-out"), (["--in-thread"], "refused ValueError")])
def test_alarm_timeout_command(flags, prefix):
    run = subprocess.run([sys.executable, "-m", "lab_snippets.cpu_work", "alarm-timeout", "0.05", *flags],
                         capture_output=True, timeout=20)
    assert run.returncode == 0 and run.stdout.decode().startswith(prefix)

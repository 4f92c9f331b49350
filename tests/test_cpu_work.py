"""Tests for lab_snippets.cpu_work: the scoring stand-in, the counting executor, the SIGALRM timeout."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
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


def test_score_is_a_bounded_checksum_that_tells_texts_apart():
    # chapter 24 checks the order of results by their checksums: distinct texts must not collide,
    # and the work per character stays the same size (an int below the modulus)
    checksums = [score(f"sample {i}")[0] for i in range(300)]
    assert all(isinstance(c, int) and 0 <= c < 1_000_000_007 for c in checksums)
    assert len(set(checksums)) == 300


def test_timed_score_times_the_work_where_it_runs():
    short, long = timed_score("a" * 10), timed_score("a" * 2_000)
    assert 0 < short < long, "the time grows with the work"
    before = time.perf_counter()
    inside = timed_score("a" * 500)
    assert 0 < inside <= time.perf_counter() - before, "a duration, within the call that measured it"


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


def test_work_that_ends_in_time_finishes_under_the_alarm():
    assert score_with_alarm(2.0, work_seconds=0.0).startswith("finished "), "no work: no alarm"


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

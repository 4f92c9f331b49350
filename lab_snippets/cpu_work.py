"""CPU-bound work for an async service, and the tools to see where it ran (chapter 24).

    from lab_snippets.cpu_work import score, CountingExecutor

    checksum, pid = score("some response text")      # pure Python, cost grows with len(text)
    pool = CountingExecutor(ProcessPoolExecutor(2))   # counts how many calls are in flight
    await loop.run_in_executor(pool, score, text)
    assert pool.peak == 2

`score` stands for rule-based reward scoring or tokenizing: pure-Python work whose cost grows
with the length of its input. It returns the pid of the process that ran it, so a test can
tell whether the work left the event loop's process. `payload_size` is a trivial function for
measuring what sending a large argument to a process pool costs by itself.

`alarm_timeout(seconds)` is a SIGALRM-based timeout, the pattern some scoring code uses: it
works only in the main thread, because `signal.signal` refuses to install a handler anywhere
else. Child command (``python -m lab_snippets.cpu_work alarm-timeout SECONDS [--in-thread]``):
runs CPU work that would take a long time under that timeout, in the main thread or in a
worker thread, and prints ``timed-out <elapsed>`` or ``refused <exception type>: <message>``.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from concurrent.futures import Executor, Future
from contextlib import contextmanager

__all__ = ["CountingExecutor", "alarm_timeout", "payload_size", "score", "timed_score"]


def score(text: str, rounds: int = 20) -> tuple[int, int]:
    """Pure-Python work proportional to ``len(text) * rounds``; returns (checksum, pid)."""
    acc = 7
    for _ in range(rounds):
        for ch in text:
            acc = (acc * 131 + ord(ch)) % 1_000_000_007
    return acc, os.getpid()


def timed_score(text: str) -> float:
    """``score(text)`` where it runs (a pool's worker): the seconds the work itself took there.

    A pool call's round trip minus this is what the trip cost (pickling, the pipe, waking the
    worker and the caller), measured apart from the work, which a busy machine may slow."""
    start = time.perf_counter()
    score(text)
    return time.perf_counter() - start


def payload_size(payload: bytes) -> int:
    """Nearly no work: what a process-pool call costs beyond the work is sending its arguments."""
    return len(payload)


class CountingExecutor(Executor):
    """Wraps an executor and counts the calls in flight (submitted, not yet finished)."""

    def __init__(self, inner: Executor) -> None:
        self.inner = inner
        self._lock = threading.Lock()
        self.now = 0
        self.peak = 0
        self.submitted = 0

    def submit(self, fn, /, *args, **kwargs) -> Future:
        with self._lock:
            self.now += 1
            self.submitted += 1
            self.peak = max(self.peak, self.now)
        future = self.inner.submit(fn, *args, **kwargs)
        future.add_done_callback(self._finished)
        return future

    def _finished(self, _future: Future) -> None:
        with self._lock:
            self.now -= 1

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self.inner.shutdown(wait=wait, cancel_futures=cancel_futures)


@contextmanager
def alarm_timeout(seconds: float):
    """Raise TimeoutError in the main thread if the block runs longer than ``seconds`` (SIGALRM)."""

    def on_alarm(signum, frame):
        raise TimeoutError(f"took longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)  # ValueError outside the main thread
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def score_with_alarm(seconds: float, work_seconds: float = 3.0) -> str:
    """CPU work that would take ``work_seconds``, under ``alarm_timeout(seconds)``; returns what happened."""
    start = time.monotonic()
    try:
        with alarm_timeout(seconds):
            while time.monotonic() - start < work_seconds:
                score("x" * 200, rounds=1)
    except TimeoutError:
        return f"timed-out {time.monotonic() - start:.3f}"
    except ValueError as exc:
        return f"refused ValueError: {exc}"
    return f"finished {time.monotonic() - start:.3f}"


def _cmd_alarm_timeout(args) -> int:
    if args.in_thread:
        outcome: list[str] = []
        worker = threading.Thread(target=lambda: outcome.append(score_with_alarm(args.seconds)),
                                  name="scorer")
        worker.start()
        worker.join(timeout=5)
        print(outcome[0] if outcome else "no outcome", flush=True)
    else:
        print(score_with_alarm(args.seconds), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab_snippets.cpu_work")
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("alarm-timeout")
    p.add_argument("seconds", type=float)
    p.add_argument("--in-thread", action="store_true")
    args = parser.parse_args(argv)
    return _cmd_alarm_timeout(args)


if __name__ == "__main__":
    sys.exit(main())

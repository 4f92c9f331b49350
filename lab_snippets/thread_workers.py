"""Thread helpers for the thread chapters (09, 11, 13, 16, 17), and a child script for chapter 09.

    from lab_snippets.thread_workers import join_all, parse_daemon_exit

    still_alive = join_all(threads, timeout=2)     # one budget for all the joins
    assert not still_alive

The child script shows what happens to threads when the interpreter exits::

    python -m lab_snippets.thread_workers daemon-exit --joined-steps 6 --daemon-steps 40 --step 0.05

Its main thread starts two worker threads and returns at once: a normal ("joined") thread
and a daemon thread, each doing a number of short steps and recording them. At exit the
interpreter waits for the normal thread, then runs the ``atexit`` handlers, then stops the
daemon thread wherever it is: its remaining steps and its ``finally`` block never run.
An ``atexit`` handler prints one line ``RESULT {json}`` with every recorded event
(times are ``time.monotonic()`` readings, comparable with the parent's on Linux);
``parse_daemon_exit`` reads it back. A ``finally`` block that does run prints a
``CLEANUP <thread>`` line, so the parent can see which cleanups happened after the
``RESULT`` line was written.
"""

from __future__ import annotations

import argparse
import atexit
import json
import sys
import threading
import time
from collections.abc import Iterable, Sequence

__all__ = ["join_all", "parse_daemon_exit", "daemon_exit", "main"]

RESULT_PREFIX = "RESULT "
CLEANUP_PREFIX = "CLEANUP "


def join_all(threads: Iterable[threading.Thread], timeout: float) -> list[threading.Thread]:
    """Join every thread within one shared time budget; return those still alive.

    ``thread.join(timeout)`` only bounds the wait: a thread that is still running
    afterwards is returned here so the caller can assert on it (or ask it to stop).
    """
    deadline = time.monotonic() + timeout
    threads = list(threads)
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return [t for t in threads if t.is_alive()]


def parse_daemon_exit(stdout: str) -> dict:
    """Read the child's output: the ``RESULT`` record plus the list of cleanups that ran."""
    result = None
    cleanups: list[str] = []
    for line in stdout.splitlines():
        if line.startswith(RESULT_PREFIX):
            result = json.loads(line[len(RESULT_PREFIX) :])
        elif line.startswith(CLEANUP_PREFIX):
            cleanups.append(line[len(CLEANUP_PREFIX) :].strip())
    if result is None:
        raise ValueError(f"no {RESULT_PREFIX.strip()} line in the child's output:\n{stdout}")
    result["cleanups_printed"] = cleanups
    return result


def daemon_exit(joined_steps: int, daemon_steps: int, step: float) -> None:
    """Start a joined and a daemon worker, then return: what the child's interpreter exit does."""
    events: list[dict] = []
    events_lock = threading.Lock()
    steps_done = {"joined": 0, "daemon": 0}

    def record(thread: str, event: str) -> None:
        with events_lock:
            events.append({"thread": thread, "event": event, "at": time.monotonic()})

    def work(name: str, steps: int) -> None:
        record(name, "start")
        try:
            for _ in range(steps):
                time.sleep(step)
                steps_done[name] += 1
            record(name, "finished all steps")
        finally:
            record(name, "cleanup")
            print(f"{CLEANUP_PREFIX}{name}", flush=True)

    def report() -> None:
        record("main", "atexit handler")
        with events_lock:
            payload = {
                "events": list(events),
                "steps_done": dict(steps_done),
                "steps_planned": {"joined": joined_steps, "daemon": daemon_steps},
                "daemon_alive_at_exit": daemon.is_alive(),
                "joined_alive_at_exit": joined.is_alive(),
            }
        print(RESULT_PREFIX + json.dumps(payload), flush=True)

    atexit.register(report)
    joined = threading.Thread(target=work, args=("joined", joined_steps), name="joined")
    daemon = threading.Thread(target=work, args=("daemon", daemon_steps), name="daemon", daemon=True)
    joined.start()
    daemon.start()
    record("main", "main returns")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab_snippets.thread_workers", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("daemon-exit", help="a daemon thread vanishes at exit; a normal one finishes")
    demo.add_argument("--joined-steps", type=int, default=6)
    demo.add_argument("--daemon-steps", type=int, default=40)
    demo.add_argument("--step", type=float, default=0.05)
    args = parser.parse_args(argv)
    if args.daemon_steps * args.step <= args.joined_steps * args.step + 0.5:
        parser.error("the daemon's work must last well beyond the joined thread's (by 0.5 s or more)")
    daemon_exit(args.joined_steps, args.daemon_steps, args.step)
    return 0


if __name__ == "__main__":
    sys.exit(main())

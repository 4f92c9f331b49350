"""See where a stuck program is waiting: every task's await chain and every thread's stack (chapter 23).

    from lab_snippets.hangs import await_chain, format_all_stacks

    for frame in await_chain(task):          # outermost coroutine first
        print(frame.where)                   # "fetch_with_retry (example.py:12)"
    print(format_all_stacks(loop))           # every thread, then every task of `loop`

`Task.get_stack()` shows only the frame of the task's own coroutine. When that coroutine is
suspended inside `await other_coroutine()`, the line that is really waiting is further in:
`await_chain` follows each coroutine's ``cr_await`` (what it is awaiting right now) down to
the innermost coroutine and names the future it waits on.

`format_all_stacks` reads ``sys._current_frames()`` (a snapshot of every thread's current
frame) and, when given a loop, the tasks of that loop. It only reads: it is meant to be called
from a watchdog thread while the loop or another thread is stuck.

Child command (run as ``python -m lab_snippets.hangs frozen ...``):

- ``frozen SECONDS [--register] [--later DELAY]``: two threads (the main thread and one
  more) deadlock on two locks, and stay so until the process's stdin reaches end of file or
  SECONDS (at most 5) have passed; then a watcher thread prints ``gave-up`` and ends the process
  with exit status 0. With ``--register``, ``faulthandler.register(SIGUSR1)`` dumps every
  thread's stack to stderr when the process gets SIGUSR1; with ``--later``,
  ``faulthandler.dump_traceback_later(DELAY)``, armed once both threads are blocked, dumps them
  once DELAY seconds later, from faulthandler's own watchdog thread. Prints ``ready <pid>`` once
  both threads are blocked on their second lock.
"""

from __future__ import annotations

import argparse
import asyncio
import faulthandler
import os
import select
import signal
import sys
import threading
import time
import traceback
from dataclasses import dataclass

__all__ = ["ChainLink", "await_chain", "describe_tasks", "describe_threads", "format_all_stacks"]


@dataclass(frozen=True)
class ChainLink:
    """One suspended coroutine in a task's await chain, or the future at its end."""

    name: str
    filename: str | None = None
    lineno: int | None = None

    @property
    def where(self) -> str:
        if self.filename is None:
            return self.name
        return f"{self.name} ({os.path.basename(self.filename)}:{self.lineno})"


def _awaiting(obj):
    """What a coroutine, generator or async generator is suspended on, or None."""
    for attribute in ("cr_await", "ag_await", "gi_yieldfrom"):
        if hasattr(obj, attribute):
            return getattr(obj, attribute)
    return None


def await_chain(task: asyncio.Task, limit: int = 50) -> list[ChainLink]:
    """The task's suspended coroutines, outermost first, ending with the future it waits on."""
    links: list[ChainLink] = []
    current = task.get_coro()
    while current is not None and len(links) < limit:
        frame = next((getattr(current, a) for a in ("cr_frame", "ag_frame", "gi_frame")
                      if getattr(current, a, None) is not None), None)
        if frame is not None:
            links.append(ChainLink(frame.f_code.co_qualname, frame.f_code.co_filename, frame.f_lineno))
            current = _awaiting(current)
        elif any(hasattr(current, a) for a in ("cr_frame", "ag_frame", "gi_frame")):
            break  # a coroutine that has finished: nothing is waiting
        else:
            # A Future (or the iterator its __await__ returns, in the C implementation) ends the chain.
            links.append(ChainLink("<a future>"))
            break
    return links


def describe_tasks(loop: asyncio.AbstractEventLoop | None = None) -> str:
    """Every unfinished task of ``loop`` (default: the running loop) with its await chain."""
    lines = []
    for task in sorted(asyncio.all_tasks(loop), key=lambda t: t.get_name()):
        lines.append(f"Task {task.get_name()!r}:")
        lines += [f"    {link.where}" for link in await_chain(task)]
    return "\n".join(lines)


def describe_threads(skip_current: bool = False) -> str:
    """Every thread's name and current stack (innermost call last), from ``sys._current_frames()``."""
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    me = threading.get_ident()
    lines = []
    for ident, frame in sys._current_frames().items():
        if skip_current and ident == me:
            continue
        lines.append(f"Thread {names.get(ident, ident)!r}:")
        lines += [f"    {entry.name} ({os.path.basename(entry.filename)}:{entry.lineno})"
                  for entry in traceback.extract_stack(frame)]
    return "\n".join(lines)


def format_all_stacks(loop: asyncio.AbstractEventLoop | None = None) -> str:
    """A report of every thread's stack and, when ``loop`` is given, every task of that loop."""
    report = describe_threads()
    if loop is not None:
        report += "\n" + describe_tasks(loop)
    return report


# -- the frozen child ------------------------------------------------------------------------


def _say(text: str) -> None:
    os.write(1, (text + "\n").encode())


def _meet(both_hold: threading.Barrier) -> None:
    try:
        both_hold.wait(timeout=5)
    except threading.BrokenBarrierError:
        pass  # the other thread never came: carry on, the process still ends in time


# Each deadlocked thread blocks in one C call (`Lock.acquire()` with no timeout) and never runs
# Python code again: the process ends with `os._exit` from the watcher. faulthandler reads the
# other threads' frames without the GIL, so a thread that pushes or pops a frame during the dump
# can make it read freed memory (CPython issue gh-116008, a SIGSEGV on 3.11). Threads that woke
# every 50 ms to check a flag crashed 4 of 300 children here under load.

def take_a_then_b(a: threading.Lock, b: threading.Lock, both_hold: threading.Barrier,
                  parked: list[str]) -> None:
    with a:
        _meet(both_hold)
        parked.append("take_a_then_b")  # a C call: no frame is pushed
        b.acquire()  # never returns: b is held by the other thread until the process ends


def take_b_then_a(a: threading.Lock, b: threading.Lock, both_hold: threading.Barrier,
                  parked: list[str]) -> None:
    with b:
        _meet(both_hold)
        parked.append("take_b_then_a")
        a.acquire()


def _all_parked(threads: list[threading.Thread], parked: list[str]) -> bool:
    """Both threads said so and are back in their own function: only `acquire` is left to call."""
    frames = sys._current_frames()
    tops = [frames.get(t.ident) for t in threads]
    return len(parked) == len(threads) and all(
        top is not None and top.f_code.co_name in parked for top in tops)


def _watch(threads: list[threading.Thread], parked: list[str], deadline: float,
           later: float | None) -> None:
    while not _all_parked(threads, parked) and time.monotonic() < deadline:
        time.sleep(0.005)
    if time.monotonic() < deadline:
        if later is not None:
            # Armed only once both threads are parked, so the dump cannot come before the
            # deadlock exists, however slowly a loaded machine starts the threads.
            faulthandler.dump_traceback_later(later, repeat=False)
        _say(f"ready {os.getpid()}")
        # Wait in one C call at a time (select) until end of file on stdin or the deadline.
        while (remaining := deadline - time.monotonic()) > 0:
            if select.select([0], [], [], remaining)[0] and not os.read(0, 1024):
                break
    _say("gave-up")
    os._exit(0)  # the deadlocked threads never return; nothing else is left to do


def _cmd_frozen(args) -> int:
    deadline = time.monotonic() + min(args.seconds, 5.0)  # the longest it may stay frozen
    if args.register:
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    a, b = threading.Lock(), threading.Lock()
    both_hold, parked = threading.Barrier(2), []
    other = threading.Thread(target=take_a_then_b, args=(a, b, both_hold, parked), name="worker",
                             daemon=True)
    watcher = threading.Thread(target=_watch, name="watcher", daemon=True,
                               args=([threading.main_thread(), other], parked, deadline, args.later))
    other.start()
    watcher.start()
    take_b_then_a(a, b, both_hold, parked)  # the main thread is the other half of the deadlock
    return 1  # not reached


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab_snippets.hangs")
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("frozen")
    p.add_argument("seconds", type=float)
    p.add_argument("--register", action="store_true")
    p.add_argument("--later", type=float, default=None)
    args = parser.parse_args(argv)
    return _cmd_frozen(args)


if __name__ == "__main__":
    sys.exit(main())

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

- ``frozen SECONDS [--register] [--later DELAY]``: two threads deadlock on two locks, and stay
  so until the process's stdin reaches end of file or SECONDS (at most 5) have passed; then
  both give up and the process exits 0. With ``--register``,
  ``faulthandler.register(SIGUSR1)`` dumps every thread's stack to stderr when the process gets
  SIGUSR1; with ``--later``, ``faulthandler.dump_traceback_later(DELAY)``, armed once both threads hold their first
  lock, dumps them once DELAY seconds later, from faulthandler's own watchdog thread. Prints ``ready <pid>`` once both
  threads hold their first lock, and ``gave-up`` at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import faulthandler
import os
import signal
import sys
import threading
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


def _wait_for(lock: threading.Lock, released: threading.Event) -> None:
    """Wait for `lock` in short acquires until it is ours or `released` is set (then give up)."""
    while not lock.acquire(timeout=0.05):
        if released.is_set():
            return
    lock.release()


def take_a_then_b(a: threading.Lock, b: threading.Lock, both_hold: threading.Barrier,
                  released: threading.Event) -> None:
    with a:
        _meet(both_hold)
        _wait_for(b, released)


def take_b_then_a(a: threading.Lock, b: threading.Lock, both_hold: threading.Barrier,
                  released: threading.Event, later: float | None = None) -> None:
    with b:
        _meet(both_hold)
        if later is not None:
            # Armed only once both threads hold their first lock, so the dump cannot come
            # before the deadlock exists, however slowly a loaded machine starts the threads.
            faulthandler.dump_traceback_later(later, repeat=False)
        _say(f"ready {os.getpid()}")
        _wait_for(a, released)


def _release_on_stdin_eof(released: threading.Event) -> None:
    while os.read(0, 1024):
        pass
    released.set()


def _cmd_frozen(args) -> int:
    if args.register:
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    released = threading.Event()
    threading.Timer(min(args.seconds, 5.0), released.set).start()  # the longest it may stay frozen
    threading.Thread(target=_release_on_stdin_eof, args=(released,), daemon=True).start()
    a, b = threading.Lock(), threading.Lock()
    both_hold = threading.Barrier(2)
    other = threading.Thread(target=take_a_then_b, args=(a, b, both_hold, released), name="worker")
    other.start()
    take_b_then_a(a, b, both_hold, released, args.later)
    other.join(timeout=6)
    _say("gave-up")
    os._exit(0)  # the Timer may still be waiting; nothing else is left to do


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

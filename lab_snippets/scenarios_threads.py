"""Differential grading on real threads and processes (issue 37): what chapters 13, 14, 18 and 19 share.

``lab_snippets.scenarios`` explains the pattern (contract, reference, scenario, observe, compare)
and runs it on virtual time. Where the chapter's point is real time (a loop in another thread, a
child process and its signals) the scenario runs for real, and a bound is compared with the
reference measured beside it, never with a constant. The pieces here:

- ``Beside``: an ``observe`` for ``scenarios.differential`` that runs the student's function and
  the reference **at the same time**, in two threads, and hands back the reference's observation
  when ``differential`` asks for it next: both see the same load, and a scenario costs its length
  once, not twice.
- ``at_once``: several callers at once, each in a thread of its own, joined with a bound;
  ``timed``: one call's outcome ("returned", "raised X") and its seconds; ``timed_wakeups``: the
  same, and how often the caller's thread was woken while it waited (a poll wakes once a round).
- ``StandIn``: a stand-in process with drawn behaviour (honours SIGTERM, ignores it, or cleans up
  for a while and exits with its own code; children in its group; output written before it
  works; a result line at the end). It is a small shell script (``StandIn.argv``; a
  ``multiprocessing`` child runs it with ``os.execv``), and writes what happened to it to a log
  file (``read_log``): "child <pid>", "leader <pid> <where its stdout goes>", "ready <pid>", "work
  <pid>" (the ``sleep`` it waits on), "got SIGTERM", "cleaned up", "lived to the end".
- ``state(pid)``: "running", "zombie" (exited, not reaped) or "gone".

Every wait is bounded, and a stand-in never lives longer than ``MAX_LIFE`` seconds.
"""

from __future__ import annotations

import dataclasses
import math
import os
import shlex
import sys
import threading
import time
import typing
from collections.abc import Callable

__all__ = ["MAX_LIFE", "Beside", "StandIn", "at_once", "kill_all", "per_item", "pids_in_log", "read_log",
           "state", "still_running", "timed", "timed_wakeups", "wait_for_line"]

#: No stand-in process lives longer than this, whatever it is told (seconds).
MAX_LIFE = 6.0


# --------------------------------------------------------------------------------------
# Calls, side by side and at once
# --------------------------------------------------------------------------------------

def timed(fn: Callable, *args: object, **kwargs: object) -> dict:
    """Call ``fn``: ``kind`` ("returned" or "raised <type>"), ``value``, ``seconds``."""
    started = time.monotonic()
    try:
        seen = {"kind": "returned", "value": fn(*args, **kwargs)}
    except BaseException as exc:  # noqa: BLE001 - what came out is the observation
        seen = {"kind": f"raised {type(exc).__name__}", "value": None}
    return {**seen, "seconds": time.monotonic() - started}


def timed_wakeups(fn: Callable, *args: object, blocked: float = 0.001, **kwargs: object) -> dict:
    """``timed``, and how the calling thread waited inside ``fn``: ``wakeups``, the C calls in which
    it blocked for ``blocked`` seconds or more (a lock's acquire, a sleep, a select: each ends in a
    wakeup), and ``calls``, the function calls it made (Python and C, from its profile events). A
    wait woken by what it waits for blocks once; a poll wakes once a round, and a spin makes calls
    without end. ``message``: the ``str`` of what it raised (its args survive a copy of it)."""
    counts, entered = {"wakeups": 0, "calls": 0}, []
    clock = time.perf_counter

    def profile(frame: object, event: str, arg: object) -> None:
        if event == "c_call":
            counts["calls"] += 1
            entered.append(clock())
        elif event in ("c_return", "c_exception"):
            if entered and clock() - entered.pop() >= blocked:
                counts["wakeups"] += 1
        elif event == "call":
            counts["calls"] += 1

    message = None

    def call() -> object:
        nonlocal message
        sys.setprofile(profile)  # this thread only
        try:
            return fn(*args, **kwargs)
        except BaseException as exc:
            message = str(exc)
            raise
        finally:
            sys.setprofile(None)

    return {**timed(call), **counts, "message": message}


def at_once(calls: list[Callable[[], typing.Any]], timeout: float) -> list:
    """Run every call at the same time, each in a thread of its own; their results in order. A
    call that raises gives ``{"kind": "raised <type>"}``; one still running after ``timeout``
    seconds gives ``{"kind": "still running after <timeout> s"}`` (its thread is left, daemon)."""
    results: list = [{"kind": f"still running after {timeout:g} s"}] * len(calls)
    go = threading.Barrier(len(calls)) if calls else None

    def run(k: int, call: Callable) -> None:
        try:
            go.wait(timeout=5)
        except threading.BrokenBarrierError:
            pass
        try:
            results[k] = call()
        except BaseException as exc:  # noqa: BLE001 - what came out is the observation
            results[k] = {"kind": f"raised {type(exc).__name__}"}

    threads = [threading.Thread(target=run, args=(k, c), daemon=True, name=f"caller-{k}")
               for k, c in enumerate(calls)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    return list(results)


class Beside:
    """An ``observe`` for ``scenarios.differential``: called with the student's function, it runs
    ``observe(student, s)`` and ``observe(reference, s)`` at the same time (two threads) and
    returns the student's; called next with the reference on the same scenario, it returns the
    reference's observation from that run. ``timeout`` bounds the pair."""

    def __init__(self, observe: Callable[[Callable, typing.Any], typing.Any], reference: Callable,
                 timeout: float = 15.0) -> None:
        self.observe, self.reference, self.timeout = observe, reference, timeout
        self._kept: tuple | None = None

    def __call__(self, fn: Callable, scenario: typing.Any) -> typing.Any:
        kept, self._kept = self._kept, None
        if fn is self.reference and kept is not None and kept[0] is scenario:
            return kept[1]
        mine, theirs = at_once([lambda: self.observe(fn, scenario),
                                lambda: self.observe(self.reference, scenario)], self.timeout)
        self._kept = (scenario, theirs)
        return mine


# --------------------------------------------------------------------------------------
# Processes
# --------------------------------------------------------------------------------------

def state(pid: int) -> str:
    """"running", "zombie" (exited, not yet reaped by its parent) or "gone"."""
    import psutil

    try:
        return "zombie" if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE else "running"
    except psutil.NoSuchProcess:
        return "gone"


@dataclasses.dataclass(frozen=True)
class StandIn:
    """A stand-in process, a small shell script (it starts in a millisecond, so a signal never
    finds it half set up). ``on_term``: "honour" (SIGTERM ends it), "ignore" (its children
    ignore it too: an ignored signal stays ignored across fork and exec), or "cleanup" (it
    notes SIGTERM, cleans up for ``cleanup`` seconds, then exits with ``code``). Otherwise it
    works ``seconds`` (``None``: until stopped, at most ``MAX_LIFE``), then exits with ``code``.
    ``children``: that many ``sleep`` children in its process group, living as long as it would
    (its ``sleep``s never hold its stdout: a reader sees the end when the script ends); with
    ``deaf_children`` they ignore SIGTERM whatever the leader does (they outlive a leader that
    honours it).
    It writes ``says`` and its pid to stdout first (the course's harness says "started <pid>"),
    then ``chatter`` bytes (lines of "o"), and ``result`` as its last line when it ends by itself."""

    on_term: str = "honour"
    seconds: float | None = None
    code: int = 0
    cleanup: float = 0.0
    children: int = 0
    deaf_children: bool = False
    chatter: int = 0
    says: str = ""
    result: str = ""
    tick: float = 0.0

    def _pause(self, seconds: float, var: str) -> str:
        """Shell that waits ``seconds``: one ``sleep`` in the background (a trap runs at once), or,
        with ``tick``, short foreground ones, so that no child outlives the script by more than a
        tick holding what it inherited (a ``multiprocessing`` child's sentinel pipe)."""
        if not self.tick:
            return f'sleep {seconds:g} >/dev/null & echo work $! >> "$log"; wait $!'
        return f"{var}=0; while [ ${var} -lt {math.ceil(seconds / self.tick)} ]; do sleep {self.tick:g}; " \
               f"{var}=$(({var}+1)); done"

    def describe(self) -> str:
        life = ("runs until stopped" if self.seconds is None
                else f"exits with {self.code} after {self.seconds:g} s")
        term = {"honour": "SIGTERM ends it", "ignore": "it ignores SIGTERM",
                "cleanup": f"on SIGTERM it cleans up for {self.cleanup:g} s, then exits with {self.code}",
                }[self.on_term]
        kids = ""
        if self.children:
            kids = f"; it starts {self.children} child(ren)" + (
                " that ignore SIGTERM too" if self.on_term == "ignore"
                else " that ignore SIGTERM" if self.deaf_children else "")
        extra = kids + (f"; it writes {self.chatter} bytes to stdout first" if self.chatter else "") + (
            f"; it prints {self.result!r} at the end" if self.result else "")
        return f"a process that {life}; {term}{extra}"

    def script(self, log: str) -> str:
        """The shell script (``sh -c``) of this stand-in, logging to the file ``log``."""
        life = f"{MAX_LIFE if self.seconds is None else min(self.seconds, MAX_LIFE):g}"
        # stderr discarded: a shell reports a child killed by a signal ("Terminated"), and a grader
        # scores any output on the notebook's stderr as a failure
        lines = ["exec 2>/dev/null", f"log={shlex.quote(log)}"]
        if self.on_term == "ignore":
            lines.append("trap '' TERM")
        elif self.on_term == "cleanup":
            lines.append(f"trap 'echo got SIGTERM >> \"$log\"; {self._pause(self.cleanup, 'j')}; "
                         f"echo cleaned up >> \"$log\"; exit {self.code}' TERM")
        child = f"(trap '' TERM; exec sleep {life})" if self.deaf_children else f"sleep {life}"
        lines += [f'{child} >/dev/null & echo child $! >> "$log"'] * self.children
        lines.append('echo leader $$ $(readlink /proc/$$/fd/1) >> "$log"')
        if self.says:
            lines.append(f"printf '%s %s\\n' {shlex.quote(self.says)} $$")
        if self.chatter:
            lines.append(f"yes o | head -c {self.chatter}")
        if self.tick:
            lines += ['echo ready $$ >> "$log"', self._pause(float(life), "i")]
        else:
            lines += [f'sleep {life} >/dev/null & echo work $! >> "$log"', 'echo ready $$ >> "$log"',
                      "wait $!"]
        lines.append('echo lived to the end >> "$log"')
        if self.result:
            lines.append(f"printf '%s\\n' {shlex.quote(self.result)}")
        lines.append(f"exit {self.code}")
        return "\n".join(lines)

    def argv(self, log: str) -> list[str]:
        """The command that runs this stand-in, logging to the file ``log``."""
        return ["/bin/sh", "-c", self.script(log)]


def read_log(path: str) -> list[str]:
    """The lines a stand-in wrote to its log (none if it never started)."""
    try:
        with open(path) as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


def pids_in_log(lines: list[str]) -> list[int]:
    """The stand-in's own pid, its children's and its ``sleep``s' (its process group), from its log."""
    return [int(line.split()[1]) for line in lines if line.split()[:1] in (["leader"], ["child"], ["work"])]


def wait_for_line(path: str, prefix: str, timeout: float) -> bool:
    """Wait (at most ``timeout`` s) until the log at ``path`` has a line starting with ``prefix``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(line.startswith(prefix) for line in read_log(path)):
            return True
        time.sleep(0.002)
    return False




def still_running(pids: list[int], within: float) -> list[int]:
    """The processes of ``pids`` still running (not exited) after waiting at most ``within`` s
    for them to end (a signal is delivered asynchronously)."""
    deadline = time.monotonic() + within
    while True:
        left = [pid for pid in pids if state(pid) == "running"]
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.005)


def kill_all(pids: list[int]) -> None:
    """SIGKILL every process of ``pids`` that is still running (what a wrong answer left)."""
    for pid in still_running(pids, 0):
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    still_running(pids, 2.0)


def per_item(compare_one: Callable[[dict, dict, typing.Any], str | None],
             items: Callable[[typing.Any], tuple], label: str, what: str) -> Callable:
    """A ``compare`` for observations made one per caller (job, process): ``compare_one(me, it,
    item)`` on each ``items(scenario)`` in turn; the first problem, naming the ``label`` and its
    number when there are several. An observation that is not a list (the scenario could not be
    run to its end) fails the student's side, and skips the comparison on the reference's."""
    def compare(mine: typing.Any, ref: typing.Any, scenario: typing.Any) -> str | None:
        if not isinstance(ref, list):  # the reference could not run the scenario here: nothing to compare
            return None
        if not isinstance(mine, list):
            return (f"{what}: the scenario could not be run to its end ({mine.get('kind')}): a call that "
                    "blocks or stops what the callers share")
        parts = items(scenario)
        for k, (me, it, item) in enumerate(zip(mine, ref, parts, strict=True)):
            problem = compare_one(me, it, item)
            if problem:
                return f"{label} {k}: {problem}" if len(parts) > 1 else problem
        return None
    return compare

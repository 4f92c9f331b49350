"""Property checks that the exercises' hidden tests compose (issue 28).

A hidden test grades a property on every path, not one example: it runs the student's call
under a heartbeat, on a job that raises, with the caller cancelled midway, against a budget,
and then checks that nothing the call started is still running. The pieces here do one thing
each, and every check raises ``AssertionError`` with a message that names the broken property
first (the phrase a corpus entry's ``violates:`` line matches), then what was measured, then
the caller's hint (the idea and the chapter to revisit)::

    from lab_snippets import grading

    seen = await grading.observe(run_batch(jobs), timeout=3, heartbeat=0.005)
    grading.check_finished(seen, "run_batch", within=3)
    grading.check_loop_free(seen, 0.05, "run_batch", hint="await the sleep (chapter 02)")
    grading.check_within(seen, budget=1.0, what="run_batch")

    with grading.Leftovers() as left:
        seen = await grading.cancel_midway(lambda: run_batch(jobs), after=0.1, timeout=2)
    grading.check_cancelled(seen, "run_batch")
    await left.check("run_batch was cancelled", hint="await what you cancel (chapter 05)")

Paths: ``observe`` (the happy path, or a job made to fail with ``failing_job``; ``call`` for
a plain function; ``count_wakeups=True`` counts how often the call was woken), ``cancel_midway``
(the caller gives up), ``stop_thread`` (a thread asked to stop), ``StalledPeer`` (a peer that
stops reading), ``busy_loop`` (a loop that other work keeps busy). Checks on an ``Outcome``:
``check_finished``, ``check_loop_free``, ``check_within``, ``check_returns_early``,
``check_raises``, ``check_cancelled``, ``check_not_polling``, ``check_stops_promptly``. Nothing
left behind: ``Leftovers`` (tasks, threads, child processes), ``group_members`` /
``check_group_gone`` (a process group), ``StalledPeer.check_hung_up`` (a connection).
Adversarial children (commands of ``lab_snippets.proc_workers``): ``ignores_sigterm``,
``floods``, ``spawns_children``, ``leaves_child_on_pipes``, with ``read_pids`` /
``wait_for_pids`` for their pid files.

A bound on time is measured beside the call, never a constant (issue 38): a ``ReferenceWait``
(``lab_snippets.measure``) started just before the call is a plain wait of the budget, and the
call must end before it wakes (``check_within(seen, budget=ref.seconds, slack=0, ...)``); a loop's
longest gap is compared with a duration of the same run. ``testing.timing_bounds`` finds the rest.

Everything here is bounded: every wait has a timeout, and ``Leftovers.check`` kills (or
cancels) what it reports, so one wrong answer does not spill into the next test.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
import socket
import sys
import threading
import time
import typing
from collections.abc import Awaitable, Callable

import psutil

from lab_snippets.loopwatch import LoopWatch
from lab_snippets.measure import ReferenceWait, reference_threads

__all__ = [
    "JobFailed", "Leftovers", "Outcome", "ReferenceWait", "StalledPeer", "WORKER", "busy_loop", "call",
    "cancel_midway", "check_cancelled", "check_finished", "check_group_gone", "check_loop_free",
    "check_not_polling", "check_raises", "check_returns_early", "check_stops_promptly",
    "check_within", "failing_job", "floods", "group_members", "ignores_sigterm",
    "leaves_child_on_pipes", "observe", "read_pids", "running", "spawns_children", "stop_thread",
    "wait_for_pids",
]

#: The command prefix of the course's child programs (``python -m lab_snippets.proc_workers``).
WORKER = [sys.executable, "-m", "lab_snippets.proc_workers"]


def _tail(hint: str) -> str:
    return f": {hint}" if hint else ""


# --------------------------------------------------------------------------------------
# Running a call on one path, and what came of it
# --------------------------------------------------------------------------------------

@dataclasses.dataclass
class Outcome:
    """What one call did: its value or exception, how long it took, the loop's longest gap."""

    finished: bool = False               # ended (by a value, an exception or a cancellation) in time
    value: typing.Any = None
    error: BaseException | None = None   # the exception it raised (not a cancellation)
    cancelled: bool = False              # it ended cancelled
    seconds: float = 0.0                 # from the start to its end (or to the timeout)
    max_gap: float | None = None         # longest heartbeat gap while it ran (None: no heartbeat)
    wakeups: int | None = None           # times the call was woken (None: not counted)
    # the call's task, kept as its caller would keep it (what its frames hold stays alive)
    task: asyncio.Task | None = dataclasses.field(default=None, repr=False)


async def _settle(task: asyncio.Task, started: float, timeout: float, seen: Outcome) -> Outcome:
    seen.task = task
    done, _ = await asyncio.wait([task], timeout=max(0.0, timeout - (time.monotonic() - started)))
    seen.seconds = time.monotonic() - started
    if not done:  # hung, or swallowed a cancellation: give up on it, boundedly
        task.cancel()
        await asyncio.wait([task], timeout=1.0)
        return seen
    seen.finished = True
    if task.cancelled():
        seen.cancelled = True
    elif task.exception() is not None:
        seen.error = task.exception()
    else:
        seen.value = task.result()
    return seen


class _Counting:
    """Drives an awaitable inside the task that awaits it, counting how often it is resumed
    (each resumption is the task woken by what the awaitable waited on)."""

    def __init__(self, awaitable: Awaitable, seen: Outcome) -> None:
        self._inner, self._seen = awaitable.__await__(), seen
        seen.wakeups = 0

    def __await__(self):
        value, error = None, None
        while True:
            try:
                waited = self._inner.send(value) if error is None else self._inner.throw(error)
            except StopIteration as stop:
                return stop.value
            value, error = None, None
            try:
                value = yield waited
            except BaseException as exc:  # noqa: BLE001 - handed on to the awaitable
                error = exc
            self._seen.wakeups += 1


async def _await(awaitable: Awaitable) -> typing.Any:
    return await awaitable


async def observe(awaitable: Awaitable, timeout: float, heartbeat: float | None = None,
                  count_wakeups: bool = False) -> Outcome:
    """Await ``awaitable`` in a task, at most ``timeout`` seconds; with ``heartbeat`` (seconds),
    a heartbeat runs meanwhile and ``max_gap`` is the longest stretch the loop did not answer;
    with ``count_wakeups``, ``wakeups`` is how many times the call was woken (a poll wakes
    itself every interval; a wait on the event itself is woken when it happens)."""
    seen = Outcome()
    started = time.monotonic()
    if count_wakeups:
        awaitable = _await(_Counting(awaitable, seen))
    task = asyncio.ensure_future(awaitable)
    if heartbeat is None:
        return await _settle(task, started, timeout, seen)
    async with LoopWatch(interval=heartbeat) as watch:
        await _settle(task, started, timeout, seen)
    seen.max_gap = watch.max_gap
    return seen


async def cancel_midway(start: Callable[[], Awaitable], after: float | asyncio.Event,
                        timeout: float = 2.0) -> Outcome:
    """Start ``start()`` in a task, cancel it ``after`` seconds (or once the event is set), and
    wait at most ``timeout`` seconds for it to end. ``cancelled`` says whether it let the
    cancellation through; ``seconds`` counts from the cancel."""
    task = asyncio.ensure_future(start())
    if isinstance(after, asyncio.Event):
        waiter = asyncio.ensure_future(after.wait())
        await asyncio.wait([waiter, task], timeout=5.0, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        await asyncio.wait([waiter], timeout=1.0)
    else:
        await asyncio.wait([task], timeout=after)
    seen = Outcome()
    if task.done():  # ended before we could cancel it: report what it did
        return await _settle(task, time.monotonic(), timeout, seen)
    task.cancel()
    return await _settle(task, time.monotonic(), timeout, seen)


def stop_thread(thread: threading.Thread, stop: threading.Event, timeout: float) -> Outcome:
    """Set ``stop`` and join ``thread`` at most ``timeout`` seconds: ``finished`` says whether it
    ended, ``seconds`` how long after the event was set (the stop latency; ``timeout`` if it
    did not end)."""
    seen = Outcome()
    started = time.monotonic()
    stop.set()
    thread.join(timeout=timeout)
    seen.finished = not thread.is_alive()
    seen.seconds = time.monotonic() - started if seen.finished else timeout
    return seen


def call(fn: Callable, *args: object, **kwargs: object) -> Outcome:
    """Call a plain function and time it: an ``Outcome`` with its value or exception (for the
    checks below; a call that hangs hangs here, so give ``fn`` bounded arguments)."""
    seen = Outcome()
    started = time.monotonic()
    try:
        seen.value = fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the exception is the outcome
        # without its traceback: the call's frames, and what they hold (a pool and its pipes), go
        seen.error = exc.with_traceback(None)
    seen.seconds = time.monotonic() - started
    seen.finished = True
    return seen


class JobFailed(Exception):
    """The exception ``failing_job`` raises: no student code raises it by accident."""


def failing_job(after: float = 0.0, message: str = "this job fails on purpose") -> Callable[..., Awaitable]:
    """An async job (any arguments) that sleeps ``after`` seconds, then raises ``JobFailed``."""
    async def job(*_args: object, **_kwargs: object) -> None:
        await asyncio.sleep(after)
        raise JobFailed(message)
    return job


# --------------------------------------------------------------------------------------
# Checks on an Outcome
# --------------------------------------------------------------------------------------

def check_finished(seen: Outcome, what: str, within: float, hint: str = "") -> None:
    assert seen.finished, f"{what} did not return within {within:g} s{_tail(hint)}"


def check_loop_free(seen: Outcome, limit: float, what: str, hint: str = "") -> None:
    """The loop answered at least every ``limit`` seconds while the call ran."""
    if seen.max_gap is None:
        raise ValueError("observe(..., heartbeat=...) measures the loop; this Outcome has no heartbeat")
    assert seen.max_gap <= limit, (
        f"{what} blocked the event loop for {seen.max_gap * 1000:.0f} ms at a stretch (the longest gap "
        f"between heartbeats; at most {limit * 1000:.0f} ms expected){_tail(hint)}")


def check_within(seen: Outcome, budget: float, what: str, slack: float = 0.5, hint: str = "") -> None:
    """The call ended no later than its ``budget`` (plus ``slack`` seconds of scheduling)."""
    assert seen.finished and seen.seconds <= budget + slack, (
        f"{what} overran its budget: {seen.seconds:.2f} s for a budget of {budget:g} s"
        f"{'' if seen.finished else ' (and had still not returned)'}{_tail(hint)}")


def check_returns_early(seen: Outcome, work: float, budget: float, what: str, hint: str = "",
                        by: float | None = None) -> None:
    """The work took ``work`` seconds under a ``budget``: the call must end nearer the first,
    before ``by`` (a ``ReferenceWait`` of the half-way point, started beside the call, read
    after it) or, without ``by``, before the half-way point itself."""
    if not budget > work:
        raise ValueError("the budget must be longer than the work for this check to mean anything")
    halfway = work + (budget - work) / 2 if by is None else by
    assert seen.finished and seen.seconds < halfway, (
        f"{what} did not return when the work was done: {seen.seconds:.2f} s for work of {work:g} s "
        f"under a budget of {budget:g} s (it waited out its budget){_tail(hint)}")


def check_raises(seen: Outcome, error: type[BaseException] | tuple, what: str, hint: str = "") -> None:
    """The call ended by raising ``error`` (not by returning, hanging, or another exception)."""
    names = " or ".join(e.__name__ for e in (error if isinstance(error, tuple) else (error,)))
    if not seen.finished:
        got = "it had not returned in time"
    elif seen.cancelled:
        got = "it ended cancelled"
    elif seen.error is None:
        got = f"it returned {seen.value!r}"[:200]
    elif isinstance(seen.error, error):
        return
    else:
        got = f"it raised {type(seen.error).__name__}: {seen.error}"
    raise AssertionError(f"{what} must raise {names}; {got}{_tail(hint)}")


def check_not_polling(seen: Outcome, limit: int, what: str, hint: str = "") -> None:
    """The call was woken at most ``limit`` times (``observe(..., count_wakeups=True)``)."""
    if seen.wakeups is None:
        raise ValueError("observe(..., count_wakeups=True) counts the wakeups; this Outcome has none")
    assert seen.wakeups <= limit, (
        f"{what} polled: it was woken {seen.wakeups} times in {seen.seconds:.2f} s while it waited "
        f"(at most {limit} expected from a wait that only the awaited event ends){_tail(hint)}")


def check_stops_promptly(seen: Outcome, limit: float, what: str, hint: str = "") -> None:
    """Asked to stop (``stop_thread``), it ended within ``limit`` seconds."""
    if not seen.finished:
        got = f"still running {seen.seconds:.1f} s after stop was set"
    elif seen.seconds > limit:
        got = f"it ended {seen.seconds:.2f} s after stop was set"
    else:
        return
    raise AssertionError(f"{what} was slow to stop: {got} (at most {limit:g} s expected, whatever "
                         f"the interval){_tail(hint)}")


def check_cancelled(seen: Outcome, what: str, hint: str = "") -> None:
    """A cancelled call ends promptly, cancelled: it neither swallows nor outlasts the cancellation."""
    if not seen.finished:
        got = "it was still running after the cancel"
    elif not seen.cancelled:
        got = (f"it raised {type(seen.error).__name__}" if seen.error is not None
               else f"it returned {seen.value!r}"[:200])
    else:
        return
    raise AssertionError(f"{what} did not let the cancellation through: {got}{_tail(hint)}")


# --------------------------------------------------------------------------------------
# Nothing left behind
# --------------------------------------------------------------------------------------

def running(pid: int) -> bool:
    """True while ``pid`` exists and has not exited (a zombie does not count)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _children() -> dict[int, psutil.Process]:
    try:
        return {c.pid: c for c in psutil.Process().children(recursive=True)}
    except psutil.NoSuchProcess:
        return {}


class Leftovers:
    """What a call started and left running: asyncio tasks, threads and child processes.

    ``with Leftovers() as left:`` notes what runs on entry (tasks only when a loop is running);
    ``await left.check(path)`` (or ``left.check_now(path)`` outside a loop) waits up to ``grace``
    seconds for anything new to end, then fails naming it, after cancelling or killing it.
    A process started inside the block and orphaned (re-parented away from us) is found only
    if its pid is passed to ``watch``."""

    def __init__(self, grace: float = 1.0, threads: bool = True) -> None:
        self.grace = grace
        self.threads = threads
        self._tasks: set = set()
        self._threads: set = set()
        self._pids: set = set()
        self._watched: set = set()

    def __enter__(self) -> Leftovers:
        try:
            self._tasks = set(asyncio.all_tasks())
        except RuntimeError:  # no running loop
            self._tasks = set()
        self._threads = set(threading.enumerate())
        self._pids = set(_children())
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def watch(self, pids) -> None:
        """Also account for these processes (say, a pid file's), wherever they were re-parented."""
        self._watched |= {int(p) for p in pids}

    def _new(self) -> tuple[list, list, list]:
        try:
            me = asyncio.current_task()
            tasks = [t for t in asyncio.all_tasks() - self._tasks if t is not me and not t.done()]
        except RuntimeError:
            tasks = []
        threads = ([t for t in threading.enumerate()
                    if t not in self._threads and t not in reference_threads() and t.is_alive()]
                   if self.threads else [])
        pids = (set(_children()) - self._pids) | self._watched
        return tasks, threads, sorted(p for p in pids if running(p))

    @staticmethod
    def _describe(tasks, threads, pids) -> str:
        parts = []
        if tasks:
            parts.append(f"{len(tasks)} task(s) ({', '.join(t.get_name() for t in tasks[:3])})")
        if threads:
            parts.append(f"{len(threads)} thread(s) ({', '.join(t.name for t in threads[:3])})")
        if pids:
            parts.append(f"{len(pids)} process(es) (pid {', '.join(map(str, pids[:3]))})")
        return ", ".join(parts)

    async def check(self, path: str, hint: str = "") -> None:
        deadline = time.monotonic() + self.grace
        while any(self._new()) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        tasks, threads, pids = self._new()
        if not (tasks or threads or pids):
            return
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=1.0)
        _kill_all(pids)
        raise AssertionError(
            f"left running after {path}: {self._describe(tasks, threads, pids)}{_tail(hint)}")

    def check_now(self, path: str, hint: str = "") -> None:
        """``check`` for code without a running loop (threads and processes only)."""
        deadline = time.monotonic() + self.grace
        while any(self._new()) and time.monotonic() < deadline:
            time.sleep(0.01)
        tasks, threads, pids = self._new()
        if threads or pids:
            _kill_all(pids)
            raise AssertionError(
                f"left running after {path}: {self._describe([], threads, pids)}{_tail(hint)}")


def _kill_all(pids) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    deadline = time.monotonic() + 2.0
    while any(running(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.01)


def group_members(pgid: int) -> list[int]:
    """The live processes of process group ``pgid`` (zombies excluded)."""
    members = []
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) == pgid and running(proc.pid):
                members.append(proc.pid)
        except (ProcessLookupError, PermissionError, psutil.Error):
            continue
    return sorted(members)


async def check_group_gone(pgid: int, path: str, timeout: float = 1.0, hint: str = "") -> None:
    """Every member of process group ``pgid`` has ended within ``timeout`` (the rest is killed)."""
    deadline = time.monotonic() + timeout
    while group_members(pgid) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    left = group_members(pgid)
    if left:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        raise AssertionError(f"{len(left)} member(s) of the process group still running after {path} "
                             f"(pid {', '.join(map(str, left[:3]))}){_tail(hint)}")


# --------------------------------------------------------------------------------------
# A peer that stops reading, and a loop kept busy
# --------------------------------------------------------------------------------------

class StalledPeer:
    """A TCP peer on 127.0.0.1 that accepts connections and reads nothing for ``pause`` seconds
    (so a client that writes more than the socket buffers hold waits in ``drain()``), then
    reads and throws away everything until the client hangs up. ``async with`` it; use
    ``host``/``port``; ``await peer.check_hung_up(path)`` checks that every connection it
    accepted was closed by the client.
    Keep the client's ``Outcome`` while checking: it holds the task (as a caller holding its
    task would), so a writer the client dropped is not closed for it by ``StreamWriter.__del__``."""

    def __init__(self, pause: float = 0.5) -> None:
        self.pause = pause
        self.host, self.port = "127.0.0.1", 0
        self.accepted = self.hung_up = 0
        self._server: asyncio.Server | None = None
        self._writers: list = []
        self._handlers: set = set()

    async def __aenter__(self) -> StalledPeer:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # inherited: little fits
        sock.bind((self.host, 0))
        self._server = await asyncio.start_server(self._handle, sock=sock)
        self.port = sock.getsockname()[1]
        return self

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        self._writers.append(writer)
        self._handlers.add(asyncio.current_task())
        try:
            await asyncio.sleep(self.pause)
            while await reader.read(1 << 20):
                pass
            self.hung_up += 1
        except (ConnectionError, OSError):
            self.hung_up += 1  # a reset is a hang-up too
        except asyncio.CancelledError:
            pass  # closed by __aexit__ (not re-raised: 3.11's start_server would log it)
        finally:
            self._handlers.discard(asyncio.current_task())

    async def check_hung_up(self, path: str, timeout: float = 2.0, hint: str = "") -> None:
        """Within ``timeout`` seconds, every accepted connection has seen the client hang up."""
        deadline = time.monotonic() + timeout
        while self.hung_up < self.accepted and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        if self.hung_up < self.accepted:
            raise AssertionError(
                f"a connection was left open after {path}: {self.accepted - self.hung_up} of "
                f"{self.accepted} never closed by the client (the peer read everything, then waited "
                f"{timeout:g} s for the end of the stream){_tail(hint)}")

    async def __aexit__(self, *exc: object) -> None:
        for writer in self._writers:
            writer.transport.abort()
        handlers = list(self._handlers)
        for task in handlers:
            task.cancel()
        if handlers:
            await asyncio.wait(handlers, timeout=1.0)
        if self._server is not None:
            self._server.close()
            await asyncio.wait([asyncio.ensure_future(self._server.wait_closed())], timeout=1.0)


@contextlib.asynccontextmanager
async def busy_loop(block: float = 0.005):
    """While the block runs, a task holds the loop ``block`` seconds at each of its turns, as
    other work on a busy service does: each loop pass then takes at least that long, so a
    stream is read at most one chunk per ``block`` (a fast writer outpaces it)."""
    async def hog() -> None:
        while True:
            time.sleep(block)
            await asyncio.sleep(0)

    task = asyncio.ensure_future(hog())
    try:
        yield
    finally:
        task.cancel()
        await asyncio.wait([task], timeout=1.0)


# --------------------------------------------------------------------------------------
# Adversarial children (argv lists for the child commands of lab_snippets.proc_workers)
# --------------------------------------------------------------------------------------

def ignores_sigterm(seconds: float) -> list[str]:
    """A child that ignores SIGTERM (only SIGKILL ends it early)."""
    return [*WORKER, "sleep", str(seconds), "--ignore-sigterm"]


def floods(out_bytes: int, err_bytes: int, exit_code: int = 0, pipe_size: int | None = None) -> list[str]:
    """A child that writes ``err_bytes`` to stderr, then ``out_bytes`` to stdout (far more than a
    pipe holds: a parent that reads one pipe to its end first deadlocks). ``pipe_size``: it
    first grows its pipes to that many bytes (Linux), so a parent that stops reading leaves
    that much unread (more than asyncio buffers before it pauses reading)."""
    return [*WORKER, "chatter", str(out_bytes), str(err_bytes), "--exit", str(exit_code),
            *(["--pipe-size", str(pipe_size)] if pipe_size else [])]


def spawns_children(count: int, seconds: float, pid_file: str, ignore_sigterm: bool = False) -> list[str]:
    """A leader that starts ``count`` children, writes ``ready <leader> <children>`` to
    ``pid_file`` and waits for them (``ignore_sigterm``: the children ignore SIGTERM)."""
    return [*WORKER, "spawn-children", str(count), str(seconds), "--pid-file", pid_file,
            *(["--ignore-sigterm"] if ignore_sigterm else [])]


def leaves_child_on_pipes(seconds: float, pid_file: str) -> list[str]:
    """A leader that starts a child and exits at once: the child lives ``seconds`` more and
    holds the leader's stderr, so a reader of that pipe sees no end of file."""
    return [*WORKER, "spawn-children", "1", str(seconds), "--leader-exits", "--pid-file", pid_file]


def read_pids(pid_file: str) -> list[int]:
    """The pids of a ``ready <leader> <children>`` file (empty while it is missing or partial)."""
    try:
        with open(pid_file) as f:
            text = f.read()
    except FileNotFoundError:
        return []
    if not text.endswith("\n"):
        return []
    try:
        return [int(p) for p in text.split()[1:]]
    except ValueError:
        return []


async def wait_for_pids(pid_file: str, count: int, timeout: float = 5.0) -> list[int]:
    """Poll (without blocking the loop) until ``pid_file`` lists ``count`` pids; return them."""
    deadline = time.monotonic() + timeout
    while len(read_pids(pid_file)) < count and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    return read_pids(pid_file)

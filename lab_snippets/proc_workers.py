"""Workers for other processes: functions a pool or `Process` can import, and child commands.

Processes started with ``spawn`` or ``forkserver`` find their target by module and name, so
a function defined in a notebook cell cannot be one. Chapters 12, 18 and 19 use these::

    from lab_snippets.proc_workers import burn, count_primes

    with multiprocessing.get_context("spawn").Pool(2) as pool:
        reports = pool.map(burn, [400, 400])

and run the child commands as separate programs::

    [sys.executable, "-m", "lab_snippets.proc_workers", "hold-flock", path, "3"]

Commands (each prints ``ready ...`` once it is set up, then waits):

- ``sleep SECONDS [--ignore-sigterm]``: sleep, then exit 0;
- ``exit CODE``: exit at once with status CODE;
- ``report-signals SECONDS``: print ``got SIGTERM`` (or SIGINT) when signalled and exit
  with 128 + the signal number; exit 0 after SECONDS;
- ``wrap [--forward] SECONDS -- COMMAND...``: run COMMAND as a child; with ``--forward``
  pass SIGTERM and SIGINT on to it and exit with its code;
- ``spawn-children COUNT SECONDS [--ignore-sigterm] [--leader-exits] [--pid-file PATH]``: start
  COUNT ``sleep`` children, print (or write to PATH) ``ready <own pid> <child pids>``, wait;
  with ``--leader-exits`` exit at once instead, leaving the children running and holding its
  stderr (their stdout is ``/dev/null``);
- ``hold-flock PATH SECONDS``: take an exclusive ``flock`` on PATH and hold it;
- ``chatter OUT_BYTES ERR_BYTES [--exit CODE] [--linger SECONDS] [--pipe-size BYTES]``: write
  ERR_BYTES bytes to stderr, then OUT_BYTES bytes to stdout, stay SECONDS, exit CODE (prints
  no ready line: everything it writes is the payload); with ``--pipe-size`` it first grows
  its output pipes to BYTES (Linux ``F_SETPIPE_SZ``).

Nothing here can outlive a failed run for long: every wait in a worker or command is
bounded, and no command lives longer than ``MAX_LIFETIME`` seconds whatever it is told.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import select
import signal
import subprocess
import sys
import threading
import time

#: No worker or command runs longer than this many seconds, even if asked to.
MAX_LIFETIME = 8.0
#: Two progress samples closer than this (seconds) count as one stretch of running.
RUN_GAP = 0.001


def _bounded(seconds: float) -> float:
    return max(0.0, min(float(seconds), MAX_LIFETIME))


class _SignalWakeup:
    """Wait for a handled signal without missing one that lands just before the wait starts.

    A handler set with `signal.signal` runs in the main thread between bytecodes. `time.sleep`
    looks for signals only when its sleep is interrupted, so a signal that arrives after
    Python's last check but before the sleep begins is handled only when the sleep ends (seen
    here: 1 child in 1,500 handled SIGTERM seconds late, 8 at a time on a loaded 2-core
    machine). With ``signal.set_wakeup_fd`` the C-level handler also writes a byte to a pipe,
    and `select` sees that byte whether it came before or during the wait. Enter before the
    handlers are installed (main thread only).
    """

    def __enter__(self) -> _SignalWakeup:
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.write_fd, False)
        self.previous = signal.set_wakeup_fd(self.write_fd, warn_on_full_buffer=False)
        return self

    def wait(self, seconds: float) -> None:
        """Return after ``seconds`` (bounded), or as soon as a handled signal has arrived."""
        select.select([self.read_fd], [], [], _bounded(seconds))
        # Woken by the byte: the Python-level handler runs at the next bytecode, right here.

    def __exit__(self, *exc) -> None:
        signal.set_wakeup_fd(self.previous)
        os.close(self.read_fd)
        os.close(self.write_fd)


# -- functions for pools and Process targets -------------------------------------------------


def burn(chunks: int, cpu: int | None = None, chunk_size: int = 2000, gap: float = RUN_GAP) -> dict:
    """CPU-bound pure-Python work, reporting when it actually ran.

    With ``cpu`` set, the calling process is first pinned to that one CPU (Linux), so that
    two workers are sure to be on different CPUs and only the load decides when each runs.

    Does ``chunks`` rounds of arithmetic and reads `time.monotonic()` after each. Samples
    closer than ``gap`` seconds are merged into one running interval; a longer gap means
    the code was not running (another thread held the GIL, or the OS ran something else).
    Returns the pid, the thread id, the checksum, the CPU time of this thread, the first and
    last reading, and the running intervals (raw `time.monotonic()` values).
    """
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    started = time.monotonic()
    cpu_before = time.thread_time()
    intervals: list[tuple[float, float]] = []
    run_start = last = started
    acc = 1
    for _ in range(chunks):
        for i in range(chunk_size):
            acc = (acc * 31 + i) % 1_000_003
        now = time.monotonic()
        if now - last > gap:
            intervals.append((run_start, last))
            run_start = now
        last = now
    intervals.append((run_start, last))
    return {
        "pid": os.getpid(),
        "thread": threading.get_ident(),
        "checksum": acc,
        "cpu": time.thread_time() - cpu_before,
        "start": started,
        "end": last,
        "intervals": intervals,
    }


def overlap_seconds(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> float:
    """Total time during which an interval of ``a`` and an interval of ``b`` were both open."""
    total = 0.0
    i = j = 0
    a, b = sorted(a), sorted(b)
    while i < len(a) and j < len(b):
        lo = max(a[i][0], b[j][0])
        hi = min(a[i][1], b[j][1])
        if hi > lo:
            total += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def count_primes(lo: int, hi: int) -> int:
    """How many primes p satisfy lo <= p < hi (trial division: slow on purpose)."""
    count = 0
    for n in range(max(lo, 2), hi):
        d = 2
        while d * d <= n:
            if n % d == 0:
                break
            d += 1
        else:
            count += 1
    return count


def square(x: int) -> int:
    return x * x


def append_and_return(items: list, value) -> list:
    """Append ``value`` to ``items`` and return the list as this worker sees it."""
    items.append(value)
    return items


def pid_and_span(seconds: float) -> tuple[int, float, float]:
    """Sleep ``seconds`` (bounded); return this pid and the `time.monotonic()` start and end."""
    start = time.monotonic()
    time.sleep(_bounded(seconds))
    return os.getpid(), start, time.monotonic()


def pid_after(seconds: float) -> int:
    """Sleep (bounded), then return this process's pid: used to see which worker ran a task."""
    time.sleep(_bounded(seconds))
    return os.getpid()


def consume_until_stop(tasks, results, linger: float = 0.0,
                       get_timeout: float = 3.0) -> None:
    """Square numbers from ``tasks`` until ``None`` arrives; then report ``"done"``, linger, exit.

    Every result goes to ``results`` as ``(x, x * x)``; the last message is ``"done"``.
    The process keeps running for ``linger`` seconds after saying it is done (the work a
    real worker does after its last message: flushing, closing, freeing). A missing stop
    message ends the loop after ``get_timeout`` seconds instead of hanging.
    """
    while True:
        item = tasks.get(timeout=get_timeout)
        if item is None:
            break
        results.put((item, item * item))
    results.put("done")
    time.sleep(_bounded(linger))


def _announce(ready, message: str = "ready") -> None:
    """Tell the parent something: ``ready`` is a `multiprocessing` Event or a Pipe connection."""
    if hasattr(ready, "send"):
        ready.send(message)
    else:
        ready.set()


def ignore_sigterm(ready, seconds: float = 3.0) -> None:
    """Ignore SIGTERM, announce readiness on ``ready``, sleep ``seconds`` (bounded), exit 0.

    ``ready`` is a `multiprocessing` Event (it is set) or a Pipe connection ("ready" is sent).
    """
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _announce(ready)
    time.sleep(_bounded(seconds))


def note_sigterm(report, seconds: float = 3.0) -> None:
    """A worker slow to honour a stop request: it notes SIGTERM and keeps running.

    Sends on the Pipe connection ``report``: "ready" once its handler is installed,
    "got SIGTERM" for each SIGTERM, and "lived to the end" if nobody stopped it before
    ``seconds`` (bounded) ran out; then exits 0.
    """
    signal.signal(signal.SIGTERM, lambda signum, frame: report.send("got SIGTERM"))
    report.send("ready")
    deadline = time.monotonic() + _bounded(seconds)
    while time.monotonic() < deadline:
        time.sleep(0.01)
    report.send("lived to the end")


def exit_on_signal(ready, seconds: float = 3.0) -> None:
    """Exit with status 128 + signal number on SIGINT or SIGTERM; exit 0 after ``seconds``."""

    def leave(signum, _frame):
        sys.exit(128 + signum)

    with _SignalWakeup() as wakeup:
        signal.signal(signal.SIGINT, leave)
        signal.signal(signal.SIGTERM, leave)
        _announce(ready)
        wakeup.wait(seconds)


def send_stderr_to(path: str) -> None:
    """Pool initializer: append this worker's stderr (tracebacks included) to the file ``path``."""
    log = open(path, "a", buffering=1)  # noqa: SIM115 - it must stay open for the worker's life
    os.dup2(log.fileno(), 2)
    sys.stderr = log


def exit_with(code: int) -> None:
    """End the process with exit status ``code``."""
    sys.exit(code)


def fail_with(message: str) -> None:
    """End the process with an uncaught exception (exit status 1)."""
    raise RuntimeError(message)


# -- the parent's side ------------------------------------------------------------------------


def messages(conn, timeout: float = 0.0) -> list:
    """Every message waiting on the Pipe connection ``conn`` (the first may take ``timeout``).

    Stops at end of file (the other end closed, e.g. the child died) without raising.
    """
    got = []
    wait = timeout
    while conn.poll(wait):
        try:
            got.append(conn.recv())
        except EOFError:
            break
        wait = 0.0
    return got


def stop_resource_tracker() -> bool:
    """Stop multiprocessing's resource tracker of this process, if it runs; True if it did.

    ``spawn`` and ``forkserver`` start the tracker on first use and leave it running for the
    rest of the parent's life. A notebook that must end with no child process stops it: first
    a garbage collection, so that pools and queues no longer in use release their semaphores
    (the tracker would otherwise "clean up" semaphores that are merely not yet collected),
    then the standard library's own (private) stop function, which also reaps the tracker.
    """
    import gc
    from multiprocessing import resource_tracker

    tracker = resource_tracker._resource_tracker
    if getattr(tracker, "_pid", None) is None:
        return False
    gc.collect()
    tracker._stop()
    return True


def read_line(stream, timeout: float) -> str:
    """Read one line from a child's stdout pipe, waiting at most ``timeout`` seconds.

    Reads the raw file descriptor a byte at a time, so it never leaves data in a Python
    buffer. Returns "" at end of file; raises TimeoutError when no full line comes in time.
    """
    fd = stream.fileno()
    deadline = time.monotonic() + timeout
    data = bytearray()
    while not data.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"no complete line within {timeout} s (got {bytes(data)!r})")
        readable, _, _ = select.select([fd], [], [], remaining)
        if readable:
            byte = os.read(fd, 1)
            if not byte:
                break
            data += byte
    return data.decode()


# -- child commands --------------------------------------------------------------------------


def _say(text: str) -> None:
    os.write(1, (text + "\n").encode())  # unbuffered, and safe inside a signal handler


def _cmd_sleep(args) -> int:
    if args.ignore_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _say(f"ready {os.getpid()} {time.monotonic():.6f}")
    time.sleep(_bounded(args.seconds))
    return 0


def _cmd_exit(args) -> int:
    _say(f"ready {os.getpid()} {time.monotonic():.6f}")
    return args.code


def _cmd_report_signals(args) -> int:
    def report(signum, _frame):
        _say(f"got {signal.Signals(signum).name} {os.getpid()} {time.monotonic():.6f}")
        os._exit(128 + signum)

    with _SignalWakeup() as wakeup:
        signal.signal(signal.SIGTERM, report)
        signal.signal(signal.SIGINT, report)
        _say(f"ready {os.getpid()} {time.monotonic():.6f}")
        wakeup.wait(args.seconds)
    return 0


def _cmd_wrap(args) -> int:
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    child = subprocess.Popen(command)

    def forward(signum, _frame):
        _say(f"wrapper forwards {signal.Signals(signum).name} to {child.pid} {time.monotonic():.6f}")
        if child.poll() is None:
            child.send_signal(signum)

    if args.forward:
        signal.signal(signal.SIGTERM, forward)
        signal.signal(signal.SIGINT, forward)
    _say(f"ready {os.getpid()} {child.pid}")
    try:
        code = child.wait(timeout=_bounded(args.seconds))
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait(timeout=MAX_LIFETIME)
        return 124
    _say(f"wrapper saw child exit {code} {time.monotonic():.6f}")
    return 128 - code if code < 0 else code


def _cmd_spawn_children(args) -> int:
    seconds = _bounded(args.seconds)
    sleep = [sys.executable, "-m", "lab_snippets.proc_workers", "sleep", str(seconds)]
    if args.ignore_sigterm:
        sleep.append("--ignore-sigterm")
        # An ignored signal stays ignored across exec: the children ignore SIGTERM from birth.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    children = [subprocess.Popen(sleep, stdout=subprocess.DEVNULL) for _ in range(args.count)]
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    line = f"ready {os.getpid()} " + " ".join(str(c.pid) for c in children)
    if args.pid_file:
        with open(args.pid_file, "w") as pid_file:
            pid_file.write(line + "\n")
    else:
        _say(line)
    if args.leader_exits:
        return 0
    deadline = time.monotonic() + seconds
    for child in children:
        try:
            child.wait(timeout=max(0.0, deadline - time.monotonic()) + 1.0)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait(timeout=MAX_LIFETIME)
    return 0


def _cmd_hold_flock(args) -> int:
    with open(args.path, "a+") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        _say(f"ready {os.getpid()} {time.monotonic():.6f}")
        time.sleep(_bounded(args.seconds))
    return 0


def _write_all(fd: int, count: int, fill: bytes) -> None:
    chunk = fill * 4096
    while count > 0:
        count -= os.write(fd, chunk[: min(count, len(chunk))])


def _cmd_chatter(args) -> int:
    signal.alarm(int(MAX_LIFETIME) + 1)  # a write blocked on a pipe nobody reads ends too
    if args.pipe_size and hasattr(fcntl, "F_SETPIPE_SZ"):
        for fd in (1, 2):
            try:
                fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, args.pipe_size)
            except OSError:  # not a pipe, or more than the system allows
                pass
    _write_all(2, args.err_bytes, b"e")
    _write_all(1, args.out_bytes, b"o")
    time.sleep(_bounded(args.linger))
    return args.exit


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab_snippets.proc_workers")
    commands = parser.add_subparsers(dest="command_name", required=True)
    p = commands.add_parser("sleep")
    p.add_argument("seconds", type=float)
    p.add_argument("--ignore-sigterm", action="store_true")
    p.set_defaults(run=_cmd_sleep)
    p = commands.add_parser("exit")
    p.add_argument("code", type=int)
    p.set_defaults(run=_cmd_exit)
    p = commands.add_parser("report-signals")
    p.add_argument("seconds", type=float)
    p.set_defaults(run=_cmd_report_signals)
    p = commands.add_parser("wrap")
    p.add_argument("--forward", action="store_true")
    p.add_argument("seconds", type=float)
    p.add_argument("command", nargs=argparse.REMAINDER)
    p.set_defaults(run=_cmd_wrap)
    p = commands.add_parser("spawn-children")
    p.add_argument("count", type=int)
    p.add_argument("seconds", type=float)
    p.add_argument("--ignore-sigterm", action="store_true", help="the children ignore SIGTERM")
    p.add_argument("--leader-exits", action="store_true", help="exit once the children run")
    p.add_argument("--pid-file", help="write the ready line (own pid, then the children's) here")
    p.set_defaults(run=_cmd_spawn_children)
    p = commands.add_parser("hold-flock")
    p.add_argument("path")
    p.add_argument("seconds", type=float)
    p.set_defaults(run=_cmd_hold_flock)
    p = commands.add_parser("chatter")
    p.add_argument("out_bytes", type=int)
    p.add_argument("err_bytes", type=int)
    p.add_argument("--exit", type=int, default=0)
    p.add_argument("--linger", type=float, default=0.0)
    p.add_argument("--pipe-size", type=int, default=0)
    p.set_defaults(run=_cmd_chatter)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())

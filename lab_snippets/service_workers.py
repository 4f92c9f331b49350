"""Small asyncio services run as child processes, to be stopped with real signals (chapter 22).

A service takes jobs from an intake queue, runs each as a task, and prints one line per
event with a ``time.monotonic()`` reading (the same clock in every process on Linux)::

    start 0 12.345678        job 0 started
    done 0 12.445678         job 0 finished
    cancelled 1 12.467890    job 1 was cancelled and its cleanup (a short await) is over
    returned 143 12.470000   the service's main coroutine returned 143

Jobs are given as ``ARRIVAL:DURATION,...`` (seconds after the service is ready), or
``ARRIVAL:DURATION:CLEANUP`` for a job whose cleanup, once cancelled, takes CLEANUP seconds
(``CLEANUP`` otherwise). Commands:

- ``serve JOBS --on-sigterm default|cancel``: start every job as it arrives and wait for all
  of them. With ``default`` SIGTERM keeps its default action (the process dies at once);
  with ``cancel`` a handler installed by ``loop.add_signal_handler`` cancels the main task,
  which cancels every job and exits with 128 + SIGTERM. With ``--sigint default`` (the
  default) SIGINT keeps Python's own handler, so ``asyncio.run`` treats it as Ctrl-C; with
  ``--sigint own`` the service installs a handler of its own that raises
  ``KeyboardInterrupt`` (what Python 3.10's ``asyncio.run`` met), so ``asyncio.run``'s Ctrl-C
  handling stays off. A ``KeyboardInterrupt`` leaving ``asyncio.run`` prints where it was
  raised: ``interrupt-from-asyncio.run`` (``Runner.run``, after the main task ended cancelled),
  ``interrupt-from-runner-handler`` (a second Ctrl-C) or ``interrupt-from-signal-handler``.
- ``run-service SOURCE JOBS --budget B``: run the ``run_service(intake, handle, budget)``
  coroutine function defined in the file SOURCE (the exercise's solution cell) and exit with
  the code it returns. If SIGTERM's handler is not back to the default action when it
  returns, it prints ``sigterm-handler-left``; if a task it started (other than a job's ``handle``)
  has not finished when it returns, it prints ``tasks-left``.
- ``atexit-stop --thread daemon|non-daemon [--no-hook]``: start a worker thread that loops
  until told to stop, register an ``atexit`` hook that tells it to stop and joins it (unless
  ``--no-hook``), and return from the main code at once.

Every command prints ``ready <pid> <time>`` once it is set up. Nothing outlives a failed run
for long: a watchdog thread ends the process with status 99 after ``MAX_LIFETIME`` seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import os
import signal
import sys
import threading
import time

#: No command runs longer than this many seconds, whatever it is told.
MAX_LIFETIME = 6.0
#: How long a cancelled job's cleanup takes (an await, as releasing a slot would).
CLEANUP = 0.02


def say(text: str) -> None:
    """Print one line with a timestamp, unbuffered (safe from any thread)."""
    os.write(1, f"{text} {time.monotonic():.6f}\n".encode())


def parse_jobs(text: str) -> list[tuple[float, ...]]:
    """``"0:0.1,0.02:2:1"`` -> ``[(0.0, 0.1), (0.02, 2.0, 1.0)]`` (arrival, duration[, cleanup])."""
    jobs = []
    for item in filter(None, text.split(",")):
        fields = item.split(":")
        if len(fields) not in (2, 3):
            raise ValueError(f"a job is ARRIVAL:DURATION[:CLEANUP], not {item!r}")
        jobs.append(tuple(float(f) for f in fields))
    return jobs


#: Where a KeyboardInterrupt that left ``asyncio.run`` was raised, by the innermost frame of its traceback.
_ORIGIN_BY_FRAME = {("runners", "run"): "interrupt-from-asyncio.run",
                    ("runners", "_on_sigint"): "interrupt-from-runner-handler"}
FROM_SIGNAL_HANDLER = "interrupt-from-signal-handler"
INTERRUPT_EVENTS = {*_ORIGIN_BY_FRAME.values(), FROM_SIGNAL_HANDLER}


def parse_events(output: str) -> list[tuple[str, int | None, float]]:
    """The child's lines as ``(event, number or None, time)``; other lines are skipped."""
    events = []
    for line in output.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] in {"start", "done", "cancelled", "returned", "ready"}:
            events.append((parts[0], int(parts[1]), float(parts[2])))
        elif len(parts) == 2 and parts[0] in {"main-returned", "hook-ran", "worker-stopped", "worker-gave-up",
                                              "main-cancelled", "sigterm-handler-left", "tasks-left",
                                              *INTERRUPT_EVENTS}:
            events.append((parts[0], None, float(parts[1])))
    return events


def _start_watchdog(lifetime: float = MAX_LIFETIME) -> None:
    def guard() -> None:
        time.sleep(lifetime)
        os.write(2, b"service_workers: lifetime exceeded, exiting\n")
        os._exit(99)

    threading.Thread(target=guard, name="lifetime-guard", daemon=True).start()


async def handle(job: tuple[int, float] | tuple[int, float, float]) -> None:
    """One job: print start, sleep its duration, print done; when cancelled, clean up, then print."""
    number, duration, *cleanup = job
    say(f"start {number}")
    try:
        await asyncio.sleep(duration)
    except asyncio.CancelledError:
        await asyncio.sleep(cleanup[0] if cleanup else CLEANUP)
        say(f"cancelled {number}")
        raise
    say(f"done {number}")


async def feed(intake: asyncio.Queue, jobs: list[tuple[float, ...]], t0: float) -> None:
    """Put each job on the intake at its arrival time (seconds after ``t0``)."""
    for number, (arrival, *rest) in enumerate(jobs):
        await asyncio.sleep(max(0.0, t0 + arrival - time.monotonic()))
        intake.put_nowait((number, *rest))


async def _serve(jobs: list[tuple[float, float]], on_sigterm: str) -> int:
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    stopped_by_sigterm = []

    def cancel_main() -> None:
        stopped_by_sigterm.append(True)
        main.cancel()

    if on_sigterm == "cancel":
        loop.add_signal_handler(signal.SIGTERM, cancel_main)
    intake: asyncio.Queue = asyncio.Queue()
    say(f"ready {os.getpid()}")
    feeder = asyncio.create_task(feed(intake, jobs, time.monotonic()))
    running: list[asyncio.Task] = []
    try:
        for _ in jobs:
            running.append(asyncio.create_task(handle(await intake.get())))
        await asyncio.gather(*running)
        return 0
    except asyncio.CancelledError:
        feeder.cancel()
        for task in running:
            task.cancel()
        await asyncio.wait([feeder, *running], timeout=2)
        say("main-cancelled")
        if stopped_by_sigterm:
            return 128 + signal.SIGTERM
        raise  # Ctrl-C: let asyncio.run turn it into KeyboardInterrupt


def interrupt_origin(exc: BaseException) -> str:
    """``interrupt-from-...``: which code raised ``exc``, read off the innermost frame of its traceback."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return FROM_SIGNAL_HANDLER
    code = tb.tb_frame.f_code
    folder, file = os.path.split(code.co_filename)
    if os.path.basename(folder) != "asyncio":
        return FROM_SIGNAL_HANDLER
    return _ORIGIN_BY_FRAME.get((os.path.splitext(file)[0], code.co_name), FROM_SIGNAL_HANDLER)


def _raise_keyboard_interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def _cmd_serve(args) -> int:
    # A child inherits "ignore SIGINT" from a parent that ignores it; give it Python's usual handler,
    # which is what asyncio.run looks for before it installs its own Ctrl-C handling. A handler of the
    # service's own (``--sigint own``) raises KeyboardInterrupt too, but asyncio.run then leaves SIGINT alone.
    own = args.sigint == "own"
    signal.signal(signal.SIGINT, _raise_keyboard_interrupt if own else signal.default_int_handler)
    try:
        code = asyncio.run(_serve(parse_jobs(args.jobs), args.on_sigterm))
    except KeyboardInterrupt as exc:
        say(interrupt_origin(exc))
        raise
    say(f"returned {code}")
    return code


def _cmd_run_service(args) -> int:
    with open(args.source, encoding="utf-8") as source_file:
        source = source_file.read()
    namespace: dict = {"__name__": "solution", "asyncio": asyncio, "signal": signal, "os": os, "sys": sys,
                       "time": time}
    exec(compile(source, args.source, "exec"), namespace)  # the learner's own cell, in its own process
    run_service = namespace["run_service"]
    jobs = parse_jobs(args.jobs)

    async def main() -> int:
        intake: asyncio.Queue = asyncio.Queue()
        say(f"ready {os.getpid()}")
        feeder = asyncio.create_task(feed(intake, jobs, time.monotonic()))
        try:
            code = await run_service(intake, handle, args.budget)
        finally:
            feeder.cancel()
        say(f"returned {code}")  # before asyncio.run cancels and finishes whatever is left
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:  # asyncio's loop.close() would remove it
            say("sigterm-handler-left")
        left = [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and t is not feeder
                and not t.done() and getattr(t.get_coro(), "__qualname__", "") != "handle"]
        if left:  # a job's own task may legitimately outlive a bounded stop; any other may not
            say("tasks-left")
        return code

    return asyncio.run(main())


def _cmd_atexit_stop(args) -> int:
    stop = threading.Event()

    def worker() -> None:
        # Loops until told to stop, as a service's background worker does; gives up after
        # `give_up` seconds so that a run where nobody tells it cannot hang for long.
        if stop.wait(timeout=args.give_up):
            say("worker-stopped")
        else:
            say("worker-gave-up")

    thread = threading.Thread(target=worker, name="background-worker", daemon=args.thread == "daemon")

    def stop_worker() -> None:
        say("hook-ran")
        stop.set()
        thread.join(timeout=2)

    if not args.no_hook:
        atexit.register(stop_worker)
    thread.start()
    say(f"ready {os.getpid()}")
    say("main-returned")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab_snippets.service_workers")
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("serve")
    p.add_argument("jobs")
    p.add_argument("--on-sigterm", choices=["default", "cancel"], default="default")
    p.add_argument("--sigint", choices=["default", "own"], default="default")
    p = commands.add_parser("run-service")
    p.add_argument("source")
    p.add_argument("jobs")
    p.add_argument("--budget", type=float, required=True)
    p = commands.add_parser("atexit-stop")
    p.add_argument("--thread", choices=["daemon", "non-daemon"], required=True)
    p.add_argument("--no-hook", action="store_true")
    p.add_argument("--give-up", type=float, default=1.0)
    for sub in commands.choices.values():
        sub.add_argument("--lifetime", type=float, default=MAX_LIFETIME, help="exit with 99 after this long")
    args = parser.parse_args(argv)
    _start_watchdog(min(args.lifetime, MAX_LIFETIME))
    handler = {"serve": _cmd_serve, "run-service": _cmd_run_service, "atexit-stop": _cmd_atexit_stop}
    return handler[args.command](args)


if __name__ == "__main__":
    sys.exit(main())

"""Tests for lab_snippets.service_workers: the services chapter 22 stops with real signals."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import pytest

from lab_snippets.proc_workers import read_line
from lab_snippets.service_workers import parse_events, parse_jobs

SERVICE = [sys.executable, "-m", "lab_snippets.service_workers"]


def names(events):
    return [f"{k} {n}" if n is not None else k for k, n, _ in events if k != "ready"]


def stop(args, sig, started):
    child = subprocess.Popen(SERVICE + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        seen = [read_line(child.stdout, timeout=10) for _ in range(started + 1)]
        child.send_signal(sig)
        rest = child.communicate(timeout=10)[0].decode()
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate(timeout=5)
    return child.returncode, parse_events("".join(seen) + rest)


def test_parse_jobs_and_events():
    assert parse_jobs("0:0.1,0.02:2") == [(0.0, 0.1), (0.02, 2.0)]
    assert parse_jobs("0:0.1:1.5") == [(0.0, 0.1, 1.5)]
    assert parse_jobs("") == []
    with pytest.raises(ValueError, match="ARRIVAL:DURATION"):
        parse_jobs("0:1:2:3")
    events = parse_events("ready 12 1.5\nstart 0 1.6\nnoise\nmain-returned 1.7\nreturned 0 1.8\n")
    assert events == [("ready", 12, 1.5), ("start", 0, 1.6), ("main-returned", None, 1.7),
                      ("returned", 0, 1.8)]
    # other lines are skipped: two words that name no event, a line cut short, a traceback's words
    assert parse_events("noise 1.5\nstart 0\ndone\nTraceback (most\nKeyboardInterrupt\n") == []


def test_serve_default_dies_by_sigterm_without_cleanup():
    code, events = stop(["serve", "0:3,0:3"], signal.SIGTERM, started=2)
    assert code == -signal.SIGTERM
    assert names(events) == ["start 0", "start 1"]


def test_serve_cancel_cleans_up_and_exits_143():
    code, events = stop(["serve", "0:3,0:3", "--on-sigterm", "cancel"], signal.SIGTERM, started=2)
    assert code == 143
    assert sorted(names(events)[2:4]) == ["cancelled 0", "cancelled 1"]
    assert names(events)[4:] == ["main-cancelled", "returned 143"]


def test_serve_sigint_cancels_main_then_keyboard_interrupt():
    code, events = stop(["serve", "0:3"], signal.SIGINT, started=1)
    assert code == -signal.SIGINT
    assert names(events)[1:] == ["cancelled 0", "main-cancelled", "interrupt-from-asyncio.run"]


def test_serve_own_sigint_handler_raises_the_interrupt_itself():
    code, events = stop(["serve", "0:3", "--sigint", "own"], signal.SIGINT, started=1)
    assert code == -signal.SIGINT
    assert names(events)[-1] == "interrupt-from-signal-handler", (
        "with a SIGINT handler of the service's own, asyncio.run installs none: the handler raised it")


def test_interrupt_origin_reads_the_innermost_frame():
    from lab_snippets.service_workers import interrupt_origin

    def raiser():
        raise KeyboardInterrupt

    try:
        raiser()
    except KeyboardInterrupt as exc:
        assert interrupt_origin(exc) == "interrupt-from-signal-handler"
    assert interrupt_origin(KeyboardInterrupt()) == "interrupt-from-signal-handler"


def test_serve_finishes_on_its_own():
    run = subprocess.run(SERVICE + ["serve", "0:0.01,0.01:0.02"], capture_output=True, timeout=10)
    assert run.returncode == 0
    assert names(parse_events(run.stdout.decode()))[-1] == "returned 0"


@pytest.mark.parametrize(("flags", "order"), [
    (["--thread", "daemon"], ["main-returned", "hook-ran", "worker-stopped"]),
    (["--thread", "non-daemon", "--give-up", "0.2"], ["main-returned", "worker-gave-up", "hook-ran"]),
    (["--thread", "daemon", "--no-hook"], ["main-returned"]),
])
def test_atexit_stop_orders(flags, order):
    run = subprocess.run(SERVICE + ["atexit-stop", *flags], capture_output=True, timeout=10)
    assert run.returncode == 0
    assert names(parse_events(run.stdout.decode())) == order


def test_run_service_runs_a_solution_file(tmp_path):
    source = tmp_path / "solution.py"
    source.write_text(textwrap.dedent("""
        async def run_service(intake, handle, budget):
            loop = asyncio.get_running_loop()
            stop = asyncio.Event()
            loop.add_signal_handler(signal.SIGTERM, stop.set)
            job = await intake.get()
            task = asyncio.create_task(handle(job))
            await stop.wait()
            task.cancel()
            await asyncio.wait([task], timeout=1)
            return 7
    """))
    code, events = stop(["run-service", str(source), "0:3", "--budget", "0.1"], signal.SIGTERM, started=1)
    assert code == 7
    # the solution never removed its handler: the service says so after the return
    assert names(events) == ["start 0", "cancelled 0", "returned 7", "sigterm-handler-left"]


def test_run_service_is_silent_about_a_removed_handler_and_gives_a_job_its_cleanup(tmp_path):
    source = tmp_path / "solution.py"
    source.write_text(textwrap.dedent("""
        async def run_service(intake, handle, budget):
            loop = asyncio.get_running_loop()
            stop = asyncio.Event()
            loop.add_signal_handler(signal.SIGTERM, stop.set)
            try:
                task = asyncio.create_task(handle(await intake.get()))
                await stop.wait()
                task.cancel()
                await asyncio.wait([task], timeout=2)
                return 7
            finally:
                loop.remove_signal_handler(signal.SIGTERM)
    """))
    code, events = stop(["run-service", str(source), "0:3:0.4", "--budget", "0.1"], signal.SIGTERM, started=1)
    assert code == 7
    assert names(events) == ["start 0", "cancelled 0", "returned 7"]
    start, cancelled = events[1][2], events[2][2]
    assert cancelled - start >= 0.4, "the job's cleanup takes the 0.4 s its spec gives it"


def test_lifetime_guard_ends_a_hung_service(tmp_path, monkeypatch):
    source = tmp_path / "solution.py"
    source.write_text("async def run_service(intake, handle, budget):\n    await asyncio.sleep(60)\n")
    start = time.monotonic()
    run = subprocess.run(SERVICE + ["run-service", str(source), "", "--budget", "0.1", "--lifetime", "0.5"],
                         capture_output=True, timeout=10)
    assert run.returncode == 99
    assert time.monotonic() - start < 5


def test_run_service_reports_a_task_it_left_unfinished(tmp_path):
    source = tmp_path / "solution.py"
    body = """
        async def run_service(intake, handle, budget):
            loop = asyncio.get_running_loop()
            stop = asyncio.Event()
            loop.add_signal_handler(signal.SIGTERM, stop.set)
            task = asyncio.create_task(handle(await intake.get()))
            await stop.wait()
            task.cancel()
            await asyncio.wait([task], timeout=1)
            next_job = asyncio.create_task(intake.get())
            await asyncio.sleep(0)
            next_job.cancel()
            {wait}
            loop.remove_signal_handler(signal.SIGTERM)
            return 0
    """
    outcomes = {}
    for label, wait in (("waited", "await asyncio.wait([next_job], timeout=1)"), ("not waited", "pass")):
        source.write_text(textwrap.dedent(body.format(wait=wait)))
        code, events = stop(["run-service", str(source), "0:3", "--budget", "0.1"], signal.SIGTERM,
                            started=1)
        outcomes[label] = names(events)
    assert outcomes["waited"] == ["start 0", "cancelled 0", "returned 0"], outcomes
    # the cancelled intake.get() task had not finished when run_service returned: the service says so
    assert outcomes["not waited"] == ["start 0", "cancelled 0", "returned 0", "tasks-left"], outcomes

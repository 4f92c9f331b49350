"""Tests for lab_snippets.hangs: await chains, stack reports and the frozen child."""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import FrozenInstanceError

import pytest

from lab_snippets.hangs import ChainLink, await_chain, describe_tasks, describe_threads, format_all_stacks
from lab_snippets.proc_workers import read_line

HANGS = [sys.executable, "-m", "lab_snippets.hangs"]


async def innermost(event: asyncio.Event) -> None:
    await event.wait()


async def middle(event: asyncio.Event) -> None:
    await innermost(event)


def test_await_chain_follows_cr_await_to_the_future():
    async def main():
        event = asyncio.Event()
        task = asyncio.create_task(middle(event), name="probe")
        await asyncio.sleep(0)
        chain = [link.name for link in await_chain(task)]
        report = describe_tasks()
        event.set()
        await task
        return chain, report, await_chain(task)

    chain, report, after = asyncio.run(main())
    assert chain == ["middle", "innermost", "Event.wait", "<a future>"]
    assert "Task 'probe':" in report and "innermost (test_hangs.py:" in report
    assert after == [], "a finished task has no chain"


def test_a_chain_link_is_a_value():
    link = ChainLink("fetch", "/x/example.py", 12)
    assert link.where == "fetch (example.py:12)" and ChainLink("<a future>").where == "<a future>"
    assert {link, ChainLink("fetch", "/x/example.py", 12)} == {link}, "equal links hash alike"
    with pytest.raises(FrozenInstanceError):
        link.lineno = 13


def test_describe_threads_shows_a_blocked_thread():
    release = threading.Event()

    def parked_in_a_known_function():
        release.wait(timeout=5)

    thread = threading.Thread(target=parked_in_a_known_function, name="parked")
    thread.start()
    try:
        time.sleep(0.05)
        report = describe_threads()
        assert "Thread 'parked':" in report and "parked_in_a_known_function" in report
        assert "test_describe_threads_shows_a_blocked_thread" not in describe_threads(skip_current=True)
        assert format_all_stacks().startswith("Thread ")
    finally:
        release.set()
        thread.join(timeout=5)


def test_frozen_child_dumps_on_sigusr1_and_ends_on_stdin_eof():
    child = subprocess.Popen(HANGS + ["frozen", "5", "--register"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert read_line(child.stdout, timeout=10).startswith("ready")
        child.send_signal(signal.SIGUSR1)
        first = read_line(child.stderr, timeout=5)
        assert first.startswith(("Thread", "Current thread"))
        # Read the whole dump before closing stdin: the exit that follows EOF would cut off
        # a dump still being written from another thread.
        dump = first
        while not ("take_a_then_b" in dump and "take_b_then_a" in dump):
            line = read_line(child.stderr, timeout=5)
            assert line, f"the child's stderr ended inside the dump: {dump!r}"
            dump += line
        assert child.poll() is None
        out, err = child.communicate(timeout=10)  # closes stdin: the child gives up
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate(timeout=5)
    assert child.returncode == 0 and out.decode().strip() == "gave-up"


def test_frozen_child_gives_up_by_itself():
    start = time.monotonic()
    child = subprocess.Popen(HANGS + ["frozen", "1.5", "--later", "0.1"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert child.wait(timeout=10) == 0, "ended by its own time limit, stdin still open"
        assert time.monotonic() - start < 8
    finally:
        if child.poll() is None:
            child.kill()
        err = child.communicate(timeout=5)[1]
    assert err.decode().startswith("Timeout (0:00:00.100000)!")


def test_frozen_child_survives_many_dumps():
    """The deadlocked threads run no Python code once `ready` is out, so a dump cannot race them.

    With threads that woke every 50 ms to poll a flag, dumps of all threads killed the child
    with SIGSEGV (faulthandler reads their frames without the GIL).
    """
    child = subprocess.Popen(HANGS + ["frozen", "5", "--register"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert read_line(child.stdout, timeout=10).startswith("ready")
        for _ in range(40):
            child.send_signal(signal.SIGUSR1)
            time.sleep(0.01)
        assert child.poll() is None, f"a dump killed the child (status {child.returncode})"
        out, err = child.communicate(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate(timeout=5)
    assert child.returncode == 0 and out.decode().strip() == "gave-up", child.returncode
    text = err.decode()
    text = text[:text.rfind("\n") + 1]  # the exit after EOF may cut the last dump mid-line
    blocks = [b for b in re.split(r"^(?:Current thread|Thread) 0x", text, flags=re.M)
              if "take_a_then_b" in b or "take_b_then_a" in b]
    tops = {b.splitlines()[1].rsplit(" in ", 1)[-1] for b in blocks}
    assert len(blocks) >= 2, "signals sent while one is pending merge, but at least one dump came"
    assert tops == {"take_a_then_b", "take_b_then_a"}, \
        f"every dump finds both threads parked in their own function, not in {tops}"

"""Tests for lab_snippets.grading: each check passes a right implementation and catches a wrong
one, with a message that names the property."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import re
import signal
import struct
import subprocess
import termios
import threading
import time

import pytest

from lab_snippets import grading


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 20))


# -- the loop stays free -------------------------------------------------------------------

async def _sleeps_async():
    await asyncio.sleep(0.15)
    return "done"


async def _sleeps_blocking():  # the wrong one: holds the loop
    time.sleep(0.15)
    return "done"


def test_check_loop_free_passes_awaiting_and_catches_a_blocking_sleep():
    good = run(grading.observe(_sleeps_async(), timeout=2, heartbeat=0.005))
    assert good.finished and good.value == "done"
    grading.check_loop_free(good, 0.1, "the call")
    bad = run(grading.observe(_sleeps_blocking(), timeout=2, heartbeat=0.005))
    assert bad.max_gap >= 0.14
    with pytest.raises(AssertionError, match=r"the call blocked the event loop for \d+ ms at a stretch \(the "
                       r"longest gap between heartbeats; at most 100 ms expected\): await asyncio.sleep"):
        grading.check_loop_free(bad, 0.1, "the call", hint="await asyncio.sleep")


def test_check_loop_free_needs_a_heartbeat():
    seen = run(grading.observe(_sleeps_async(), timeout=2))
    with pytest.raises(ValueError, match="heartbeat"):
        grading.check_loop_free(seen, 0.1, "x")


# -- bounds --------------------------------------------------------------------------------

async def _wait_for_work(work, budget):
    await asyncio.wait_for(work, budget)


async def _sleep_whole_budget(work, budget):  # the wrong one: sleeps its budget, then looks
    await asyncio.sleep(budget)
    await work


def test_check_returns_early_catches_a_wait_that_sleeps_its_budget():
    good = run(grading.observe(_wait_for_work(asyncio.sleep(0.05), 0.6), timeout=3))
    grading.check_returns_early(good, work=0.05, budget=0.6, what="wait")
    grading.check_within(good, budget=0.6, what="wait")
    bad = run(grading.observe(_sleep_whole_budget(asyncio.sleep(0.05), 0.6), timeout=3))
    with pytest.raises(AssertionError, match="wait did not return when the work was done"):
        grading.check_returns_early(bad, work=0.05, budget=0.6, what="wait")
    with pytest.raises(ValueError):
        grading.check_returns_early(bad, work=1, budget=1, what="wait")


def test_check_returns_early_by_a_reference_measured_beside_the_call():
    halfway = grading.ReferenceWait(0.3)  # 0.1 s of work under a budget of 0.5 s
    early = run(grading.observe(_wait_for_work(asyncio.sleep(0.1), 0.5), timeout=3))
    grading.check_returns_early(early, work=0.1, budget=0.5, by=halfway.seconds, what="wait")
    halfway = grading.ReferenceWait(0.3)
    late = run(grading.observe(_sleep_whole_budget(asyncio.sleep(0.1), 0.5), timeout=3))
    with pytest.raises(AssertionError, match="wait did not return when the work was done"):
        grading.check_returns_early(late, work=0.1, budget=0.5, by=halfway.seconds, what="wait")


def test_leftovers_does_not_count_a_reference_wait():
    with grading.Leftovers(grace=0.1) as left:
        ref = grading.ReferenceWait(5.0)
    try:
        left.check_now("a call measured against a reference")
    finally:
        assert ref.seconds < 5.0


def test_check_returns_early_draws_its_line_halfway_between_the_work_and_the_budget():
    # work 0.1 s under a budget of 1 s: a call that ends before 0.55 s returned when the work was done
    early = grading.Outcome(finished=True, seconds=0.5)
    grading.check_returns_early(early, work=0.1, budget=1.0, what="wait")
    for late in (grading.Outcome(finished=True, seconds=0.6), grading.Outcome(finished=False, seconds=0.2)):
        with pytest.raises(AssertionError, match=r"wait did not return when the work was done: 0\.\d0 s for "
                           r"work of 0.1 s under a budget of 1 s \(it waited out its budget\)"):
            grading.check_returns_early(late, work=0.1, budget=1.0, what="wait")
    with pytest.raises(ValueError, match="the budget must be longer than the work"):
        grading.check_returns_early(early, work=1.0, budget=0.5, what="wait")


async def _per_item_timeouts(items, total):  # the wrong one: each item gets the whole budget
    for item in items:
        await asyncio.wait_for(asyncio.sleep(item), total)


async def _one_deadline(items, total):
    async with asyncio.timeout(total):
        for item in items:
            await asyncio.sleep(item)


def test_check_within_catches_per_item_timeouts_that_add_up_past_the_budget():
    good = run(grading.observe(_one_deadline([0.2, 0.2, 0.2], 0.3), timeout=3))
    grading.check_raises(good, TimeoutError, "the batch")
    grading.check_within(good, budget=0.3, what="the batch", slack=0.15)
    bad = run(grading.observe(_per_item_timeouts([0.2, 0.2, 0.2], 0.3), timeout=3))
    with pytest.raises(AssertionError, match="the batch overran its budget: 0.6"):
        grading.check_within(bad, budget=0.3, what="the batch", slack=0.15)


def test_check_finished_and_check_within_report_a_hung_call():
    hung = run(grading.observe(asyncio.sleep(5), timeout=0.1))
    assert not hung.finished and 0.1 <= hung.seconds < 2
    with pytest.raises(AssertionError, match="did not return within 0.1 s"):
        grading.check_finished(hung, "the call", within=0.1)
    with pytest.raises(AssertionError, match="had still not returned"):
        grading.check_within(hung, budget=0.1, what="the call")


# -- every path: a job that raises, a cancelled caller ---------------------------------------

async def _gather_and_cancel_siblings(jobs):
    tasks = [asyncio.ensure_future(j()) for j in jobs]
    try:
        return await asyncio.gather(*tasks)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.wait(tasks, timeout=1)


async def _gather_plain(jobs):  # the wrong one: a failing job leaves its siblings running
    return await asyncio.gather(*(j() for j in jobs))


def test_failing_job_and_leftovers_catch_siblings_left_running():
    async def main(runner):
        with grading.Leftovers() as left:
            seen = await grading.observe(runner([grading.failing_job(0.01), lambda: asyncio.sleep(3)]),
                                         timeout=2)
        grading.check_raises(seen, grading.JobFailed, "the batch")
        await left.check("a job failed")

    run(main(_gather_and_cancel_siblings))
    with pytest.raises(AssertionError, match=r"left running after a job failed: 1 task\(s\)"):
        run(main(_gather_plain))


def test_check_raises_names_what_happened_instead():
    async def returns():
        return 42

    seen = run(grading.observe(returns(), timeout=1))
    with pytest.raises(AssertionError, match="must raise TimeoutError; it returned 42"):
        grading.check_raises(seen, TimeoutError, "the call")
    seen = run(grading.observe(grading.failing_job()(), timeout=1))
    with pytest.raises(AssertionError, match="must raise TimeoutError; it raised JobFailed"):
        grading.check_raises(seen, TimeoutError, "the call")


async def _cleans_up_then_reraises():
    try:
        await asyncio.sleep(5)
    finally:
        await asyncio.sleep(0.01)


async def _swallows_cancellation():  # the wrong one
    try:
        await asyncio.sleep(5)
    except asyncio.CancelledError:
        return "swallowed"


def test_cancel_midway_and_check_cancelled_catch_a_swallowed_cancellation():
    good = run(grading.cancel_midway(_cleans_up_then_reraises, after=0.05))
    grading.check_cancelled(good, "the call")
    bad = run(grading.cancel_midway(_swallows_cancellation, after=0.05))
    with pytest.raises(AssertionError, match="did not let the cancellation through: it returned 'swallowed'"):
        grading.check_cancelled(bad, "the call")


def test_cancel_midway_waits_for_an_event():
    async def main():
        started = asyncio.Event()

        async def job():
            started.set()
            await asyncio.sleep(5)

        return await grading.cancel_midway(job, after=started)

    seen = run(main())
    assert seen.finished and seen.cancelled and seen.seconds < 1


# -- nothing left behind: threads and processes --------------------------------------------

def test_leftovers_waits_its_grace_for_what_is_still_ending():
    # a cleanup that ends a moment after the call returned is not a leftover
    async def main():
        with grading.Leftovers(grace=2.0) as left:
            task = asyncio.ensure_future(asyncio.sleep(0.2))
        await left.check("the call returned")
        assert task.done()

    run(main())
    with grading.Leftovers(grace=2.0) as left:
        thread = threading.Thread(target=time.sleep, args=(0.2,), name="ending-worker")
        thread.start()
    left.check_now("the call returned")
    assert not thread.is_alive()


def test_leftovers_counts_all_it_found_and_names_the_first_three_of_each_kind():
    stop = threading.Event()

    async def main():
        with grading.Leftovers(grace=0.1) as left:
            tasks = [asyncio.create_task(asyncio.sleep(5), name=f"job-{i}") for i in range(4)]
            threads = [threading.Thread(target=stop.wait, args=(5,), name=f"worker-{i}") for i in range(4)]
            for t in threads:
                t.start()
            procs = [subprocess.Popen(["sleep", "5"]) for _ in range(4)]
        try:
            with pytest.raises(AssertionError) as info:
                await left.check("the batch")
        finally:
            stop.set()
            for t in threads:
                t.join(2)
            for p in procs:
                p.kill()
                p.wait(5)
        assert all(t.done() for t in tasks), "the check cancels the tasks it reports"
        return str(info.value), sorted(p.pid for p in procs)

    message, pids = run(main())
    assert re.search(r"4 task\(s\) \(job-\d, job-\d, job-\d\), "
                     r"4 thread\(s\) \(worker-0, worker-1, worker-2\), "
                     rf"4 process\(es\) \(pid {pids[0]}, {pids[1]}, {pids[2]}\)$", message), message


def test_leftovers_catches_a_thread_that_outlives_the_call():
    stop = threading.Event()
    with grading.Leftovers(grace=0.1) as left:
        t = threading.Thread(target=stop.wait, args=(0.05,), name="joined-worker")
        t.start()
        t.join(2)
    left.check_now("a success")
    with grading.Leftovers(grace=0.1) as left:  # the wrong one: never joined, still running
        t = threading.Thread(target=stop.wait, args=(5,), name="stray-worker")
        t.start()
    try:
        with pytest.raises(AssertionError,
                           match=r"left running after a success: 1 thread\(s\) \(stray-worker\)"):
            left.check_now("a success")
    finally:
        stop.set()
        t.join(2)


def test_leftovers_kills_and_reports_a_child_process_left_running():
    with grading.Leftovers(grace=0.2) as left:
        good = subprocess.Popen(grading.WORKER + ["sleep", "0.05"], stdout=subprocess.DEVNULL)
        good.wait(5)
    left.check_now("the call returned")
    with grading.Leftovers(grace=0.2) as left:  # the wrong one: never waited for or killed
        bad = subprocess.Popen(grading.WORKER + ["sleep", "5"], stdout=subprocess.DEVNULL)
    with pytest.raises(AssertionError,
                       match=rf"left running after the timeout: 1 process\(es\) \(pid {bad.pid}\)"):
        left.check_now("the timeout")
    assert bad.wait(5) == -signal.SIGKILL, "the check kills what it reports"


def _kill_group(proc):
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(5)


def _kill_leader(proc):  # the wrong one: the children keep running
    proc.kill()
    proc.wait(5)


@pytest.mark.parametrize("kill, survivors", [(_kill_group, 0), (_kill_leader, 2)])
def test_check_group_gone_catches_a_kill_that_spares_the_children(tmp_path, kill, survivors):
    pid_file = str(tmp_path / "pids")
    proc = subprocess.Popen(grading.spawns_children(2, 5, pid_file), stdout=subprocess.DEVNULL,
                            start_new_session=True)

    async def main():
        pids = await grading.wait_for_pids(pid_file, 3)
        assert pids[0] == proc.pid and len(pids) == 3
        assert grading.group_members(proc.pid) == sorted(pids)
        kill(proc)
        await grading.check_group_gone(proc.pid, "the timeout", timeout=0.5)

    if survivors:
        with pytest.raises(AssertionError,
                           match=f"{survivors} member\\(s\\) of the process group still running"):
            run(main())
        time.sleep(0.1)
        assert grading.group_members(proc.pid) == [], "the check kills what it reports"
    else:
        run(main())


def test_group_members_skips_a_process_gone_or_not_ours_to_inspect(monkeypatch):
    # between listing the processes and asking each its group, one may exit (ProcessLookupError), and a
    # security module may refuse to tell (PermissionError): neither is a member, neither ends the check
    proc = subprocess.Popen(["sleep", "5"], start_new_session=True)
    real, refused = os.getpgid, []

    def getpgid(pid):
        if pid not in (proc.pid, os.getpid()) and len(refused) < 2:
            refused.append(pid)
            raise (ProcessLookupError, PermissionError)[len(refused) - 1](pid)
        return real(pid)

    monkeypatch.setattr(grading.os, "getpgid", getpgid)
    try:
        assert grading.group_members(proc.pid) == [proc.pid] and len(refused) == 2
    finally:
        proc.kill()
        proc.wait(5)


def test_check_group_gone_names_a_group_it_may_not_kill(monkeypatch):
    # a member we may not signal (EPERM) still fails the check with the property's message
    proc = subprocess.Popen(["sleep", "5"], start_new_session=True)

    def refuse(pgid, sig):
        raise PermissionError(pgid)

    monkeypatch.setattr(grading.os, "killpg", refuse)
    try:
        with pytest.raises(AssertionError, match=r"1 member\(s\) of the process group still running after x"):
            run(grading.check_group_gone(proc.pid, "x", timeout=0.1))
    finally:
        proc.kill()
        proc.wait(5)


def test_check_group_gone_waits_its_timeout_for_a_group_that_is_ending():
    proc = subprocess.Popen(["sh", "-c", "sleep 0.3 & sleep 0.3; wait"], start_new_session=True)
    try:
        run(grading.check_group_gone(proc.pid, "the timeout", timeout=5))  # ends by itself in 0.3 s
    finally:
        proc.kill()
        proc.wait(5)


def _write_later(path, text, after):
    async def write():
        await asyncio.sleep(after)
        with open(path, "w") as f:
            f.write(text)
    return asyncio.ensure_future(write())


def test_wait_for_pids_waits_up_to_its_timeout_and_no_longer(tmp_path):
    pid_file = str(tmp_path / "pids")

    async def written_later():
        writer = _write_later(pid_file, "ready 12 13 14\n", after=0.2)
        pids = await grading.wait_for_pids(pid_file, 3, timeout=0.9)
        await writer
        return pids

    assert run(written_later()) == [12, 13, 14], "a file written inside the timeout must be read"
    assert run(asyncio.wait_for(grading.wait_for_pids(pid_file, 2, timeout=30), 3)) == [12, 13, 14], (
        "a file that lists more pids than asked for is enough")
    started = time.monotonic()
    assert run(asyncio.wait_for(grading.wait_for_pids(str(tmp_path / "never"), 1, timeout=0.3), 5)) == []
    assert time.monotonic() - started >= 0.3, "a missing file must be waited for until the timeout"


# -- adversarial children ----------------------------------------------------------------

def test_adversarial_children_do_what_they_say(tmp_path):
    done = subprocess.run(grading.floods(100_000, 300_000, exit_code=3), capture_output=True, timeout=10)
    assert (done.returncode, len(done.stdout), len(done.stderr)) == (3, 100_000, 300_000)

    stubborn = subprocess.Popen(grading.ignores_sigterm(5), stdout=subprocess.PIPE)
    try:
        assert stubborn.stdout.readline().startswith(b"ready")
        stubborn.terminate()
        with pytest.raises(subprocess.TimeoutExpired):
            stubborn.wait(0.3)
    finally:
        stubborn.kill()
        stubborn.wait(5)

    pid_file = str(tmp_path / "pids")
    leader = subprocess.Popen(grading.leaves_child_on_pipes(5, pid_file), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, start_new_session=True)
    try:
        assert leader.wait(10) == 0
        child = grading.read_pids(pid_file)[1]
        assert grading.running(child) and grading.group_members(leader.pid) == [child]
    finally:
        os.killpg(leader.pid, signal.SIGKILL)
        leader.stderr.close()


def test_spawned_children_end_on_sigterm_unless_told_to_ignore_it(tmp_path):
    async def main(ignore):
        pid_file = str(tmp_path / f"pids-{ignore}")
        argv = grading.spawns_children(1, 5, pid_file, **({"ignore_sigterm": True} if ignore else {}))
        leader = subprocess.Popen(argv, stdout=subprocess.DEVNULL, start_new_session=True)
        try:
            child = (await grading.wait_for_pids(pid_file, 2))[1]
            os.killpg(leader.pid, signal.SIGTERM)
            assert leader.wait(5) == -signal.SIGTERM
            await asyncio.sleep(0.3)
            return grading.running(child)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(leader.pid, signal.SIGKILL)

    assert not run(main(ignore=False)), "by default the children end on SIGTERM"
    assert run(main(ignore=True)), "ignore_sigterm=True: a child must outlive SIGTERM"


def test_read_pids_ignores_a_partial_file(tmp_path):
    path = tmp_path / "pids"
    assert grading.read_pids(str(path)) == []
    path.write_text("ready 12 13")
    assert grading.read_pids(str(path)) == []
    path.write_text("ready 12 13\n")
    assert grading.read_pids(str(path)) == [12, 13]


def test_call_times_a_plain_function_and_catches_a_sleep_that_outlasts_the_work():
    done = threading.Event()
    threading.Timer(0.05, done.set).start()
    good = grading.call(done.wait, 1.0)  # returns when the work is done
    assert good.value is True
    grading.check_returns_early(good, work=0.05, budget=1.0, what="the wait")
    bad = grading.call(lambda: (time.sleep(1.0), done.is_set())[1])  # the wrong one: sleeps the budget
    with pytest.raises(AssertionError, match="the wait did not return when the work was done"):
        grading.check_returns_early(bad, work=0.05, budget=1.0, what="the wait")
    failed = grading.call(int, "x")
    assert isinstance(failed.error, ValueError) and failed.finished


# -- waiting without polling ---------------------------------------------------------------

async def _waits_on_the_event(event):
    await asyncio.wait_for(event.wait(), 2)
    return "seen"


async def _polls_the_flag(event):  # the wrong one: wakes itself every 20 ms to look
    while not event.is_set():
        await asyncio.sleep(0.02)
    return "seen"


async def _set_later(event, after):
    await asyncio.sleep(after)
    event.set()


async def _counted(waiter):
    event = asyncio.Event()
    setter = asyncio.ensure_future(_set_later(event, 0.4))
    seen = await grading.observe(waiter(event), timeout=3, count_wakeups=True)
    await setter
    return seen


def test_check_not_polling_passes_a_wait_on_the_event_and_catches_a_poll():
    good = run(_counted(_waits_on_the_event))
    assert good.finished and good.value == "seen" and good.wakeups <= 3
    grading.check_not_polling(good, 5, "the wait")
    bad = run(_counted(_polls_the_flag))
    assert bad.value == "seen" and bad.wakeups >= 10
    with pytest.raises(AssertionError, match=r"the wait polled: it was woken \d+ times in 0\.\d\d s"):
        grading.check_not_polling(bad, 5, "the wait", hint="await the event")
    with pytest.raises(ValueError, match="count_wakeups"):
        grading.check_not_polling(run(grading.observe(_sleeps_async(), timeout=2)), 5, "x")


def test_counting_wakeups_keeps_errors_and_cancellations():
    failed = run(grading.observe(grading.failing_job(0.01)(), timeout=2, count_wakeups=True))
    assert isinstance(failed.error, grading.JobFailed) and failed.wakeups == 1

    log = []

    async def records_its_cancellation():
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            log.append("cancelled")
            raise

    seen = run(grading.observe(records_its_cancellation(), timeout=0.1, count_wakeups=True))
    assert not seen.finished and log == ["cancelled"]  # the timeout's cancel went through the count


# -- a thread asked to stop ----------------------------------------------------------------

def _thread(body, stop, interval):
    thread = threading.Thread(target=body, args=(stop, interval), daemon=True)
    thread.start()
    time.sleep(0.02)
    return thread


def _waits_on_stop(stop, interval):
    while not stop.wait(interval):
        pass


def _sleeps_in_halves(stop, interval):  # the wrong one: looks at stop every half interval
    while not stop.is_set():
        time.sleep(interval / 2)


def test_check_stops_promptly_passes_a_wait_on_the_event_and_catches_half_interval_naps():
    stop = threading.Event()
    good = grading.stop_thread(_thread(_waits_on_stop, stop, 3.0), stop, timeout=2)
    grading.check_stops_promptly(good, 0.3, "the thread")
    stop = threading.Event()
    bad = grading.stop_thread(_thread(_sleeps_in_halves, stop, 1.0), stop, timeout=2)
    assert bad.finished and 0.3 < bad.seconds < 0.6
    with pytest.raises(AssertionError, match=r"the thread was slow to stop: it ended 0\.\d\d s after stop"):
        grading.check_stops_promptly(bad, 0.3, "the thread")
    stop = threading.Event()
    thread = _thread(_sleeps_in_halves, stop, 2.4)
    hung = grading.stop_thread(thread, stop, timeout=0.5)
    with pytest.raises(AssertionError, match="slow to stop: still running 0.5 s after stop was set"):
        grading.check_stops_promptly(hung, 0.3, "the thread")
    thread.join(timeout=2)


# -- a peer that stops reading -------------------------------------------------------------

async def _writes_inside_finally(host, port, data):
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(data)
        await writer.drain()
    finally:
        writer.close()
        await writer.wait_closed()


async def _drains_outside_finally(host, port, data):  # the wrong one: a cancelled drain leaks
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(data)
    await writer.drain()
    try:
        await reader.read()
    finally:
        writer.close()
        await writer.wait_closed()


def test_leaving_a_stalled_peer_ends_a_connection_still_in_its_pause():
    async def main():
        with grading.Leftovers(grace=0.2, threads=False) as left:
            async with grading.StalledPeer(pause=5) as peer:
                _, writer = await asyncio.open_connection(peer.host, peer.port)
                while peer.accepted < 1:
                    await asyncio.sleep(0.01)
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()
        await left.check("the peer was left", hint="StalledPeer.__aexit__ must cancel its handlers")

    run(main())


def test_check_hung_up_waits_without_hogging_the_loop():
    # the check runs in the student's kernel: it looks every 10 ms, not in a loop that never sleeps
    async def main():
        async with grading.StalledPeer(pause=0) as peer:
            _, writer = await asyncio.open_connection(peer.host, peer.port)
            while peer.accepted < 1:
                await asyncio.sleep(0.01)
            seen = await grading.observe(peer.check_hung_up("x", timeout=0.3), timeout=5, count_wakeups=True)
            writer.close()
        return seen

    seen = run(main())
    assert isinstance(seen.error, AssertionError), "the client never hung up"
    assert seen.wakeups <= 60, f"woken {seen.wakeups} times in 0.3 s: the check spins"


@pytest.mark.parametrize("client, leaks", [(_writes_inside_finally, False), (_drains_outside_finally, True)])
def test_stalled_peer_catches_a_connection_left_open_by_a_cancelled_drain(client, leaks):
    async def scenario():
        async with grading.StalledPeer(pause=0.4) as peer:
            seen = await grading.cancel_midway(lambda: client(peer.host, peer.port, b"x" * (8 << 20)),
                                               after=0.2)
            grading.check_cancelled(seen, "the client")
            assert peer.accepted == 1
            await peer.check_hung_up("the client was cancelled", timeout=1.0)

    if leaks:
        with pytest.raises(AssertionError, match="a connection was left open after the client was cancelled: "
                           "1 of 1 never closed by the client"):
            run(scenario())
    else:
        run(scenario())


# -- a child that keeps writing, read by a busy loop ---------------------------------------

async def _kill_and_communicate(proc):
    proc.kill()
    await asyncio.wait_for(proc.communicate(), 2)


async def _kill_and_wait(proc):  # the wrong one: the pipe is never read to its end
    proc.kill()
    await asyncio.wait_for(proc.wait(), 1)


async def _pipe_holds(stream, count):
    """Wait until the pipe behind ``stream`` holds at least ``count`` unread bytes."""
    fd = stream._transport.get_extra_info("pipe").fileno()
    while struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0] < count:
        await asyncio.sleep(0.01)


@pytest.mark.parametrize("reap, hangs", [(_kill_and_communicate, False), (_kill_and_wait, True)])
def test_a_flooding_child_on_a_busy_loop_catches_a_reap_that_does_not_read(reap, hangs):
    async def scenario():
        proc = await asyncio.create_subprocess_exec(
            *grading.floods(10**9, 0, pipe_size=1 << 20), stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL)
        try:
            async with grading.busy_loop(0.005):
                # the child must be flooding before the reap: on a loaded machine its start alone can
                # outlast a fixed wait, and a child killed before it filled the pipe leaves nothing unread
                await asyncio.wait_for(proc.stdout.readexactly(1 << 20), 20)
                await asyncio.wait_for(_pipe_holds(proc.stdout, 256 << 10), 20)
                seen = await grading.observe(reap(proc), timeout=3)
                drained = proc.stdout.at_eof()
        finally:
            if proc.returncode is None:
                proc.kill()
            await asyncio.wait_for(proc.communicate(), 3)
        return seen, drained

    seen, drained = run(scenario())
    if hangs:
        # a wait() that does not read: it hangs where wait() also waits for the pipes (3.11.7, 3.12.1,
        # 3.13.0); from CPython gh-119710 (3.13.15, 3.14.8) it returns at the exit, output unread
        assert isinstance(seen.error, TimeoutError) or (seen.finished and not drained), (seen, drained)
    else:
        assert seen.finished and seen.error is None and drained, (seen, drained)

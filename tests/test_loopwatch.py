import asyncio
import os
import threading
import time

import pytest

from lab_snippets.loopwatch import LoopWatch, borrowed_default_executor, slow_callback_log
from lab_snippets.timeline import Timeline


async def _bounded(coro):
    async with asyncio.timeout(10):
        return await coro


def run(coro):
    return asyncio.run(_bounded(coro))


def test_free_loop_keeps_beating_and_a_frozen_loop_has_one_gap_covering_the_freeze():
    async def main():
        async with LoopWatch(interval=0.005) as free:
            await asyncio.sleep(0.1)
        async with LoopWatch(interval=0.005) as frozen:
            await asyncio.sleep(0.02)
            froze_at = time.monotonic()
            time.sleep(0.2)  # holds the loop
            thawed_at = time.monotonic()
            await asyncio.sleep(0.02)
        return free, frozen, froze_at, thawed_at

    free, frozen, froze_at, thawed_at = run(main())
    assert len(free.beats) >= 5
    assert not [b for b in frozen.beats if froze_at < b < thawed_at]
    covering = [(a, b) for a, b in frozen.stalls(0.1) if a <= froze_at and b >= thawed_at]
    assert len(covering) == 1
    start, end = covering[0]
    assert frozen.max_gap >= end - start
    assert end - start in frozen.gaps_over(0.1)
    assert frozen.frozen_time(0.1) >= end - start


def test_freeze_right_before_exit_is_measured():
    async def main():
        async with LoopWatch(interval=0.005) as watch:
            time.sleep(0.15)
        return watch

    watch = run(main())
    assert watch.max_gap >= 0.15


def test_nothing_left_running_after_exit_even_on_error():
    async def main():
        watch = LoopWatch(interval=0.005)
        with pytest.raises(ZeroDivisionError):
            async with watch:
                await asyncio.sleep(0.01)
                raise ZeroDivisionError
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        return watch, others

    watch, others = run(main())
    assert not watch.running
    assert others == []


def test_cancellation_of_the_block_propagates():
    async def watched():
        async with LoopWatch(interval=0.005):
            await asyncio.sleep(10)

    async def main():
        task = asyncio.create_task(watched())
        await asyncio.sleep(0.03)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, timeout=2)
        return [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]

    assert run(main()) == []


def test_cannot_enter_twice_and_interval_must_be_positive():
    with pytest.raises(ValueError):
        LoopWatch(interval=0)

    async def main():
        watch = LoopWatch()
        async with watch:
            with pytest.raises(RuntimeError):
                await watch.__aenter__()

    run(main())


def test_gaps_and_timeline_lane_from_fixed_beats():
    watch = LoopWatch(interval=0.01)
    watch.beats = [0.0, 0.01, 0.02, 0.32, 0.33]
    assert watch.gaps == pytest.approx([0.01, 0.01, 0.30, 0.01])
    assert watch.stalls(0.05) == [(0.02, 0.32)]
    tl = Timeline(clock=lambda: 0.0)
    watch.add_to(tl, label="loop")
    states = [(s.state, round(s.start, 2), round(s.end, 2)) for s in tl.spans_of("loop")]
    assert states == [("running", 0.0, 0.02), ("blocked", 0.02, 0.32), ("running", 0.32, 0.33)]
    assert watch.summary(0.05) == "5 beats every 10 ms, max gap 300 ms, 1 gap(s) over 50 ms"
    assert LoopWatch().max_gap == 0.0


def test_slow_callback_log_collects_the_debug_warning_and_restores_the_loop():
    def hold_loop():
        time.sleep(0.12)

    async def blocker():
        hold_loop()

    async def main():
        loop = asyncio.get_running_loop()
        before = (loop.get_debug(), loop.slow_callback_duration)
        with slow_callback_log(0.05) as messages:
            await asyncio.wait_for(asyncio.create_task(blocker()), timeout=2)
        after = (loop.get_debug(), loop.slow_callback_duration)
        return before, after, messages

    before, after, messages = run(main())
    assert before == after
    assert any("blocker" in m and "took" in m for m in messages), messages


def test_borrowed_default_executor_runs_to_thread_and_leaves_no_thread():
    def where() -> str:
        return threading.current_thread().name

    async def main():
        loop = asyncio.get_running_loop()
        before = getattr(loop, "_default_executor", None)
        threads_before = set(threading.enumerate())
        with borrowed_default_executor(max_workers=2, thread_name_prefix="lent") as pool:
            names = await asyncio.gather(*(asyncio.to_thread(where) for _ in range(4)))
            size = pool._max_workers
        after = getattr(loop, "_default_executor", None)
        new_threads = [t for t in threading.enumerate() if t not in threads_before and t.is_alive()]
        with borrowed_default_executor() as default_sized:
            default_size = default_sized._max_workers
        return names, size, before, after, new_threads, default_size

    names, size, before, after, new_threads, default_size = run(main())
    assert all(n.startswith("lent") for n in names)
    assert size == 2
    assert before is after is None
    assert new_threads == []
    assert default_size == min(32, (os.cpu_count() or 1) + 4)

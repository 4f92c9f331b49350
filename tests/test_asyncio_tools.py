import asyncio
import threading

import pytest

from lab_snippets.asyncio_tools import InFlight, ideal_batch_time


def test_in_flight_counts_now_peak_and_entered():
    inside = InFlight()
    with inside:
        with inside:
            assert (inside.now, inside.peak) == (2, 2)
        assert inside.now == 1
    with inside:
        pass
    assert (inside.now, inside.peak, inside.entered) == (0, 2, 3)
    assert "peak=2" in repr(inside)


def test_in_flight_leaves_on_exception():
    inside = InFlight()
    with pytest.raises(ValueError):
        with inside:
            raise ValueError("boom")
    assert (inside.now, inside.peak, inside.entered) == (0, 1, 1)


def test_in_flight_peak_under_a_semaphore():
    async def run() -> InFlight:
        inside = InFlight()
        limit = asyncio.Semaphore(3)

        async def job() -> None:
            async with limit:
                with inside:
                    await asyncio.sleep(0.005)

        await asyncio.wait_for(asyncio.gather(*(job() for _ in range(10))), timeout=5)
        return inside

    inside = asyncio.run(run())
    assert (inside.now, inside.peak, inside.entered) == (0, 3, 10)


def test_in_flight_is_thread_safe():
    inside = InFlight()

    def hammer() -> None:
        for _ in range(2000):
            with inside:
                pass

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
        assert not t.is_alive()
    assert (inside.now, inside.entered) == (0, 8000)
    assert 1 <= inside.peak <= 4


@pytest.mark.parametrize(
    ("n_jobs", "limit", "duration", "expected"),
    [(12, 1, 0.1, 1.2), (12, 5, 0.1, 0.3), (12, 12, 0.1, 0.1), (12, 20, 0.1, 0.1), (0, 3, 0.1, 0.0)],
)
def test_ideal_batch_time(n_jobs, limit, duration, expected):
    assert ideal_batch_time(n_jobs, limit, duration) == pytest.approx(expected)


def test_ideal_batch_time_rejects_nonsense():
    with pytest.raises(ValueError):
        ideal_batch_time(3, 0, 0.1)


def test_cancel_new_tasks_cancels_only_what_came_after():
    import asyncio

    from lab_snippets.asyncio_tools import cancel_new_tasks

    async def main():
        old = asyncio.create_task(asyncio.sleep(10))
        before = asyncio.all_tasks()
        new = [asyncio.create_task(asyncio.sleep(10)) for _ in range(3)]
        cancelled = await cancel_new_tasks(before, timeout=2)
        assert set(cancelled) == set(new) and all(t.cancelled() for t in new)
        assert not old.done()
        old.cancel()
        await asyncio.gather(old, return_exceptions=True)

    asyncio.run(main())


def test_cancel_and_wait_reports_a_task_that_refuses_to_stop():
    import asyncio

    from lab_snippets.asyncio_tools import cancel_and_wait

    async def stubborn(release):
        while True:
            try:
                await release.wait()
                return
            except asyncio.CancelledError:
                continue  # swallows every cancellation: the bug being detected

    async def main():
        release = asyncio.Event()
        polite = asyncio.create_task(asyncio.sleep(10))
        bad = asyncio.create_task(stubborn(release))
        await asyncio.sleep(0)
        stuck = await cancel_and_wait([polite, bad], timeout=0.1)
        assert stuck == [bad] and polite.cancelled()
        release.set()
        await asyncio.wait_for(bad, 2)

    asyncio.run(main())

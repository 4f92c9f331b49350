"""Small instruments for asyncio experiments: count work in flight, and the ideal batch time.

    from lab_snippets.asyncio_tools import InFlight

    inside = InFlight()
    async with limit:
        with inside:              # counts this piece of work while the block runs
            await fetch(url)
    assert inside.peak <= 3       # never more than 3 at once
    assert inside.entered == 12   # every piece of work went through

`InFlight` is a plain (not async) context manager, so it adds no suspension point of its
own: entering and leaving it cannot let another task run in between. It is also safe to
use from several threads.
"""

from __future__ import annotations

import math
import threading


class InFlight:
    """How many pieces of work are inside a section now, the most there ever were, and how many entered."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.now = 0
        self.peak = 0
        self.entered = 0

    def __enter__(self) -> InFlight:
        with self._lock:
            self.now += 1
            self.entered += 1
            self.peak = max(self.peak, self.now)
        return self

    def __exit__(self, *exc_info: object) -> None:
        with self._lock:
            self.now -= 1

    def __repr__(self) -> str:
        return f"InFlight(now={self.now}, peak={self.peak}, entered={self.entered})"


def ideal_batch_time(n_jobs: int, limit: int, duration: float) -> float:
    """Shortest time for `n_jobs` equal jobs of `duration` seconds with at most `limit` at once."""
    if n_jobs < 0 or limit < 1 or duration < 0:
        raise ValueError("need n_jobs >= 0, limit >= 1 and duration >= 0")
    return math.ceil(n_jobs / limit) * duration


async def cancel_and_wait(tasks, timeout: float = 2.0) -> list:
    """Cancel ``tasks`` and wait at most ``timeout`` seconds for them to end.

    Returns the tasks that are still not done after the wait (an empty list when all ended):
    a task that swallows its cancellation shows up there instead of hanging the caller.
    """
    import asyncio

    tasks = [t for t in tasks if not t.done()]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=timeout)
    return [t for t in tasks if not t.done()]


async def cancel_new_tasks(before: set, timeout: float = 2.0) -> list:
    """Cancel every task created since ``before = asyncio.all_tasks()`` (except the caller) and wait.

    Tests of a student's solution call it in ``finally``, so that a wrong answer that forgets
    its tasks still leaves nothing running. Waits at most ``timeout`` seconds for them to end;
    returns the tasks it cancelled.
    """
    import asyncio

    me = asyncio.current_task()
    leftovers = [t for t in asyncio.all_tasks() - before if t is not me and not t.done()]
    await cancel_and_wait(leftovers, timeout)
    return leftovers

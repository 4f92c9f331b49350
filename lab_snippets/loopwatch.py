"""Watch an asyncio event loop's heartbeat, to see when something froze it.

A heartbeat is a small task that sleeps a short interval, wakes up and writes down the
time, again and again. While the loop is free, the gaps between wake-ups stay close to
the interval. When some code holds the loop (a `time.sleep`, a long computation, a
blocking library call inside a coroutine), the heartbeat cannot wake up, and the gap
that covers the freeze is as long as the freeze itself.

    from lab_snippets.loopwatch import LoopWatch

    async with LoopWatch(interval=0.005) as watch:
        await some_work()
    print(watch.max_gap, watch.stalls(0.05))

`LoopWatch` starts its heartbeat task on entry and, on exit, waits for one more
wake-up (so a freeze right before the exit is measured too), then cancels the task and
awaits it: nothing is left running.

`slow_callback_log` turns on asyncio's debug mode on the running loop for a block and
collects the "Executing ... took N seconds" warnings it logs for slow callbacks.

`borrowed_default_executor` lends the running loop a fresh default thread pool for a block
(what `asyncio.to_thread` and `run_in_executor(None, ...)` use) and shuts it down after,
so the pool's worker threads do not outlive the experiment.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from types import TracebackType

from lab_snippets.timeline import Timeline

__all__ = ["LoopWatch", "borrowed_default_executor", "slow_callback_log"]


class LoopWatch:
    """A heartbeat task on the running loop; use it as ``async with LoopWatch() as watch:``.

    Attributes after (or during) the block:

    - ``beats``: raw ``time.monotonic()`` readings, the first taken on entry, then one per wake-up;
    - ``gaps``: the time between consecutive beats;
    - ``max_gap``: the longest gap (0.0 before two beats exist).
    """

    def __init__(self, interval: float = 0.005, exit_timeout: float = 2.0, clock=time.monotonic) -> None:
        if interval <= 0:
            raise ValueError("interval must be positive")
        self.interval = interval
        self.exit_timeout = exit_timeout
        self._clock = clock
        self.beats: list[float] = []
        self._task: asyncio.Task | None = None
        self._beat_seen: asyncio.Event | None = None

    # -- the heartbeat -------------------------------------------------------------
    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            self.beats.append(self._clock())
            assert self._beat_seen is not None
            self._beat_seen.set()

    async def __aenter__(self) -> LoopWatch:
        if self._task is not None:
            raise RuntimeError("this LoopWatch is already running")
        self.beats = [self._clock()]
        self._beat_seen = asyncio.Event()
        self._task = asyncio.create_task(self._heartbeat(), name="loopwatch heartbeat")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        task, self._task = self._task, None
        assert task is not None and self._beat_seen is not None
        try:
            if exc_type is None and not task.done():
                # One more wake-up closes the gap that covers a freeze just before the exit.
                self._beat_seen.clear()
                await asyncio.wait_for(self._beat_seen.wait(), timeout=self.exit_timeout)
        finally:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                # Our own cancellation of the heartbeat; but if the block itself is being
                # cancelled, let that propagate.
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    # -- what it saw ---------------------------------------------------------------
    @property
    def gaps(self) -> list[float]:
        beats = self.beats
        return [b - a for a, b in zip(beats, beats[1:], strict=False)]

    @property
    def max_gap(self) -> float:
        return max(self.gaps, default=0.0)

    def stalls(self, threshold: float) -> list[tuple[float, float]]:
        """Every gap longer than ``threshold`` as a (start, end) pair of ``time.monotonic()`` readings."""
        beats = self.beats
        return [(a, b) for a, b in zip(beats, beats[1:], strict=False) if b - a > threshold]

    def gaps_over(self, threshold: float) -> list[float]:
        """The lengths of the gaps longer than ``threshold``."""
        return [b - a for a, b in self.stalls(threshold)]

    def frozen_time(self, threshold: float) -> float:
        """Total length of the gaps longer than ``threshold``."""
        return sum(self.gaps_over(threshold))

    def add_to(self, timeline: Timeline, label: str = "event loop", threshold: float | None = None) -> None:
        """Draw the watch on a timeline lane: "running" while the loop answered, "blocked" during stalls.

        ``threshold`` defaults to five heartbeat intervals.
        """
        if len(self.beats) < 2:
            return
        limit = 5 * self.interval if threshold is None else threshold
        responsive_from = self.beats[0]
        for start, end in self.stalls(limit):
            if start > responsive_from:
                timeline.add(label, responsive_from, start, state="running")
            timeline.add(label, start, end, state="blocked")
            responsive_from = end
        if self.beats[-1] > responsive_from:
            timeline.add(label, responsive_from, self.beats[-1], state="running")

    def summary(self, threshold: float) -> str:
        """One line: beats, max gap, and how many gaps exceeded ``threshold``."""
        over = self.gaps_over(threshold)
        return (
            f"{len(self.beats)} beats every {self.interval * 1000:.0f} ms, "
            f"max gap {self.max_gap * 1000:.0f} ms, "
            f"{len(over)} gap(s) over {threshold * 1000:.0f} ms"
        )


class _ListHandler(logging.Handler):
    def __init__(self, sink: list[str]) -> None:
        super().__init__(level=logging.WARNING)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        self.sink.append(record.getMessage())


@contextmanager
def slow_callback_log(threshold: float = 0.05) -> Iterator[list[str]]:
    """Turn on asyncio debug mode on the running loop for the block; collect slow-callback warnings.

    Yields a list that fills with the messages asyncio logs ("Executing <Task ...> took
    0.150 seconds") for every callback or task step that held the loop longer than
    ``threshold``. Debug mode, the threshold and the logger are restored afterwards.
    """
    loop = asyncio.get_running_loop()
    messages: list[str] = []
    logger = logging.getLogger("asyncio")
    handler = _ListHandler(messages)
    saved = (loop.get_debug(), loop.slow_callback_duration, logger.propagate, logger.level)
    logger.addHandler(handler)
    logger.propagate = False  # keep the warnings out of the notebook's stderr; they are in `messages`
    if logger.level == logging.NOTSET or logger.level > logging.WARNING:
        logger.setLevel(logging.WARNING)
    loop.set_debug(True)
    loop.slow_callback_duration = threshold
    try:
        yield messages
    finally:
        loop.set_debug(saved[0])
        loop.slow_callback_duration = saved[1]
        logger.removeHandler(handler)
        logger.propagate = saved[2]
        logger.setLevel(saved[3])


@contextmanager
def borrowed_default_executor(
    max_workers: int | None = None, thread_name_prefix: str = "borrowed-default"
) -> Iterator[ThreadPoolExecutor]:
    """Give the running loop a fresh default thread pool for the block; shut it down afterwards.

    ``max_workers=None`` keeps ``ThreadPoolExecutor``'s own default size,
    ``min(32, (os.process_cpu_count() or 1) + 4)`` on Python 3.13+ (``os.cpu_count()`` on 3.11
    and 3.12), the size of the pool ``asyncio.to_thread`` normally uses.
    On exit the loop gets back the default pool it had before (or none), and the borrowed
    pool is shut down, joining its worker threads: make sure the work you gave it has
    finished, or the exit waits for it.
    """
    loop = asyncio.get_running_loop()
    # The loop has no public getter for its default executor; without one, restore a lazy pool.
    had_attribute = hasattr(loop, "_default_executor")
    previous = getattr(loop, "_default_executor", None)
    pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix=thread_name_prefix)
    loop.set_default_executor(pool)
    try:
        yield pool
    finally:
        if previous is not None:
            loop.set_default_executor(previous)
        elif had_attribute:
            loop._default_executor = None  # back to "created on first use", as before the block
        else:
            loop.set_default_executor(ThreadPoolExecutor())
        pool.shutdown(wait=True, cancel_futures=True)

"""Compare variants fairly on a busy machine: interleaved runs, best of k, and a check of the CPU we got.

A neighbour that uses the CPU in bursts can slow one measurement and not the next. Two
variants timed one after the other can then swap places. The cure is to measure them close
together and interleaved (A B, B A, A B, ...) and to keep the best (smallest) time of each:
a burst can only make a run slower, so the best of k runs is the one a burst missed.

    from lab_snippets.measure import interleaved, ainterleaved, cpu_share, usable_cpus

    cmp = interleaved({"one thread": run_alone, "four threads": run_threaded}, k=3)
    print(cmp.summary())
    assert cmp.ratio("four threads", "one thread") >= 0.8     # best times compared

    cmp = await ainterleaved({"sequential": seq, "gather": together}, k=3)

Each variant is called with no arguments; its time is measured by ``timer``
(``time.perf_counter`` by default: wall-clock; pass ``time.process_time`` to count the CPU
time of the whole process, or ``time.thread_time`` for the calling thread). A variant may
instead return a number, and with ``use_result=True`` that number is its measurement (a
count, a ratio, a time it measured itself), and the best is the smallest.

Where a machine cannot show an effect at all (one usable core; a neighbour taking most of
the CPU), say so from a measurement: ``usable_cpus()`` counts the CPUs this process may run
on, ``cpu_share()`` spins for a moment and returns the share of a core it actually got.

A bound on how long one call may take is a measurement too: ``ReferenceWait(budget)``, started
just before the call, is a plain wait of the budget in a thread of its own; the call honoured
the budget if it ended before that wait woke (``seen <= ref.seconds``), and a busy machine
wakes both late.
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

__all__ = ["Comparison", "ReferenceWait", "ainterleaved", "cpu_share", "interleaved", "reference_threads",
           "usable_cpus"]


@dataclass
class Comparison:
    """Measurements of several variants, taken interleaved; ``samples[name]`` in the order taken."""

    samples: dict[str, list[float]] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)  # the names in the order the runs happened

    def best(self, name: str) -> float:
        """The smallest measurement of a variant (the run a burst of load missed)."""
        return min(self.samples[name])

    def ratio(self, name: str, baseline: str) -> float:
        """best(name) / best(baseline)."""
        base = self.best(baseline)
        if base <= 0:
            raise ZeroDivisionError(f"the best measurement of {baseline!r} is {base}")
        return self.best(name) / base

    def fastest(self) -> str:
        """The variant with the smallest best measurement."""
        return min(self.samples, key=self.best)

    def spread(self, name: str) -> float:
        """max / min of a variant's measurements: near 1 on a quiet machine, large under bursts."""
        values = self.samples[name]
        return max(values) / min(values) if min(values) > 0 else float("inf")

    def summary(self, unit: str = "s") -> str:
        """One line per variant: best and all measurements."""
        width = max(len(n) for n in self.samples)
        lines = []
        for name, values in self.samples.items():
            shown = ", ".join(f"{v:.3f}" for v in values)
            lines.append(f"{name:<{width}}  best {self.best(name):.3f} {unit}  (runs: {shown})")
        return "\n".join(lines)


def _rounds(names: list[str], k: int) -> list[list[str]]:
    """k rounds; each round runs every variant once, the starting variant rotating (A B, B A, ...)."""
    if k < 1:
        raise ValueError("k must be at least 1")
    if not names:
        raise ValueError("give at least one variant")
    n = len(names)
    return [[names[(r + i) % n] for i in range(n)] for r in range(k)]


def interleaved(variants: Mapping[str, Callable[[], object]], k: int = 3,
                timer: Callable[[], float] = time.perf_counter, use_result: bool = False) -> Comparison:
    """Run every variant k times, interleaved, and return their measurements."""
    names = list(variants)
    cmp = Comparison({name: [] for name in names})
    for round_ in _rounds(names, k):
        for name in round_:
            start = timer()
            result = variants[name]()
            elapsed = timer() - start
            cmp.samples[name].append(float(result) if use_result else elapsed)  # type: ignore[arg-type]
            cmp.order.append(name)
    return cmp


async def ainterleaved(variants: Mapping[str, Callable[[], Awaitable[object]]], k: int = 3,
                       timer: Callable[[], float] = time.perf_counter,
                       use_result: bool = False) -> Comparison:
    """``interleaved`` for coroutine functions: each variant is awaited in turn, k times, interleaved."""
    names = list(variants)
    cmp = Comparison({name: [] for name in names})
    for round_ in _rounds(names, k):
        for name in round_:
            start = timer()
            result = await variants[name]()
            elapsed = timer() - start
            cmp.samples[name].append(float(result) if use_result else elapsed)  # type: ignore[arg-type]
            cmp.order.append(name)
    return cmp


def usable_cpus() -> int:
    """How many CPUs this process may run on.

    The affinity mask where the platform has one (Linux: ``os.sched_getaffinity``), else
    ``os.process_cpu_count()`` (Python 3.13+), else ``os.cpu_count()``; at least 1.
    """
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    count = getattr(os, "process_cpu_count", os.cpu_count)()
    return max(1, count or 1)


def cpu_share(duration: float = 0.05, clock: Callable[[], float] = time.perf_counter,
              cpu_clock: Callable[[], float] = time.thread_time) -> float:
    """Spin for ``duration`` seconds of wall-clock time; return the share of one core this thread got.

    About 1.0 on an idle core; about 0.5 when a neighbour shares the same core evenly; low
    when the machine is overloaded. Use it to say "this machine cannot show the effect now"
    instead of failing a claim for the neighbour's sake.
    """
    if duration <= 0:
        raise ValueError("duration must be positive")
    wall0, cpu0 = clock(), cpu_clock()
    while clock() - wall0 < duration:
        pass
    wall, cpu = clock() - wall0, cpu_clock() - cpu0
    return min(1.0, cpu / wall) if wall > 0 else 1.0


_REFERENCE_THREADS: weakref.WeakSet = weakref.WeakSet()


def reference_threads() -> set[threading.Thread]:
    """The threads of the ``ReferenceWait``s still running (no experiment's own: a leak check skips them)."""
    return set(_REFERENCE_THREADS)


class ReferenceWait:
    """A plain wait of ``seconds``, started on creation in a thread of its own, beside the call
    it is a reference for: a call that honours a budget of ``seconds`` ends by the time this
    wait wakes, and a busy machine wakes both late. Create it just before the call, then read
    ``seconds`` once the call has ended: how long the wait took if it has woken, else how long
    it has waited so far (reading it then stops the wait: the call ended first). Either way
    ``seen.seconds <= ref.seconds`` says the call ended before the reference woke, provided the
    call's time counts from a moment after ``ref.started`` (create the reference first); a time
    counted from an earlier moment compares as instants, with ``ref.started + ref.seconds``."""

    def __init__(self, seconds: float) -> None:
        self.planned = float(seconds)
        self._stop = threading.Event()
        self._woke_at: float | None = None
        self._read: float | None = None
        self.started = time.monotonic()
        self._thread = threading.Thread(target=self._wait, name="grading-reference-wait", daemon=True)
        _REFERENCE_THREADS.add(self._thread)
        self._thread.start()

    def _wait(self) -> None:
        if not self._stop.wait(self.planned):
            self._woke_at = time.monotonic()

    @property
    def seconds(self) -> float:
        if self._read is None:
            self._stop.set()
            self._thread.join(timeout=5.0)
            end = self._woke_at if self._woke_at is not None else time.monotonic()
            self._read = end - self.started
        return self._read

    @property
    def woke(self) -> bool:
        """Whether the wait ran its full ``seconds`` before it was read."""
        return self._woke_at is not None

import asyncio
import os
import time

import pytest

from lab_snippets.measure import (
    Comparison,
    ReferenceWait,
    ainterleaved,
    cpu_share,
    interleaved,
    reference_threads,
    usable_cpus,
)


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_interleaved_rotates_the_starting_variant_and_keeps_the_best():
    clock = FakeClock()
    costs = {"a": iter([5.0, 1.0, 3.0]), "b": iter([2.0, 2.0, 9.0])}

    def run(name):
        def go():
            clock.now += next(costs[name])
        return go

    cmp = interleaved({"a": run("a"), "b": run("b")}, k=3, timer=clock)
    assert cmp.order == ["a", "b", "b", "a", "a", "b"]
    assert cmp.samples == {"a": [5.0, 1.0, 3.0], "b": [2.0, 2.0, 9.0]}
    assert cmp.best("a") == 1.0 and cmp.best("b") == 2.0
    assert cmp.ratio("b", "a") == 2.0 and cmp.ratio("a", "b") == 0.5
    assert cmp.fastest() == "a"
    assert cmp.spread("a") == 5.0
    assert "best 1.000" in cmp.summary()


def test_a_burst_in_one_run_does_not_flip_the_comparison():
    # b is really twice as slow as a, but a burst of load hits a's first run.
    clock = FakeClock()
    a_costs, b_costs = iter([10.0, 1.0, 1.0]), iter([2.0, 2.0, 2.0])

    def a():
        clock.now += next(a_costs)

    def b():
        clock.now += next(b_costs)

    cmp = interleaved({"a": a, "b": b}, k=3, timer=clock)
    assert cmp.samples["a"][0] > cmp.samples["b"][0], "taken alone, the first pair is flipped"
    assert cmp.ratio("b", "a") == 2.0


def test_use_result_takes_the_returned_number():
    values = iter([7, 3, 5])
    cmp = interleaved({"count": lambda: next(values)}, k=3, use_result=True)
    assert cmp.samples["count"] == [7.0, 3.0, 5.0] and cmp.best("count") == 3.0


def test_ainterleaved_awaits_each_variant():
    async def main():
        seen = []

        async def a():
            seen.append("a")
            await asyncio.sleep(0)

        async def b():
            seen.append("b")
            await asyncio.sleep(0.02)

        cmp = await ainterleaved({"a": a, "b": b}, k=2)
        return seen, cmp

    seen, cmp = asyncio.run(main())
    assert seen == ["a", "b", "b", "a"]
    assert cmp.fastest() == "a" and cmp.best("b") >= 0.02


def test_bad_arguments():
    with pytest.raises(ValueError):
        interleaved({"a": lambda: None}, k=0)
    with pytest.raises(ValueError):
        interleaved({}, k=1)
    with pytest.raises(ZeroDivisionError):
        Comparison({"a": [1.0], "b": [0.0]}).ratio("a", "b")
    with pytest.raises(ValueError):
        cpu_share(0)


def test_usable_cpus_matches_the_affinity_mask():
    n = usable_cpus()
    assert n >= 1
    if hasattr(os, "sched_getaffinity"):
        assert n == len(os.sched_getaffinity(0))


def test_cpu_share_is_a_share_of_one_core():
    assert 0.0 < cpu_share(0.02) <= 1.0


def test_cpu_share_sees_a_thread_that_got_half_the_time():
    wall, cpu = FakeClock(), FakeClock()

    def tick():
        wall.now += 0.01
        cpu.now += 0.005
        return wall.now

    assert cpu_share(0.05, clock=tick, cpu_clock=cpu) == pytest.approx(0.5, rel=0.1)
    assert 0.06 <= wall.now <= 0.08, "it spins for `duration` of its clock (ticks of 0.01), no more"


def test_the_default_is_best_of_3_for_both():
    async def nothing():
        pass

    assert len(interleaved({"a": lambda: None}).samples["a"]) == 3
    assert len(asyncio.run(ainterleaved({"a": nothing})).samples["a"]) == 3


def test_a_reference_wait_read_before_it_wakes_gives_the_time_so_far_and_stops():
    ref = ReferenceWait(5.0)
    [thread] = [t for t in reference_threads() if t.is_alive()]
    time.sleep(0.02)
    got = ref.seconds
    assert 0.02 <= got < 1.0 and not ref.woke, "read early: the time it has waited so far"
    assert not thread.is_alive(), "reading it stops its thread: nothing is left behind"
    assert ref.seconds == got, "the first reading is kept"


def test_a_reference_wait_that_woke_gives_how_long_its_wait_took():
    ref = ReferenceWait(0.03)
    time.sleep(0.1)
    assert ref.woke and 0.03 <= ref.seconds < 0.1, ref.seconds

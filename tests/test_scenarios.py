"""Unit tests of ``lab_snippets.scenarios``: the virtual-time loop, ``run_virtual`` and the
differential run (a right function passes, a wrong one fails naming the property and the smallest
scenario, the same way every time)."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import time
from pathlib import Path

import pytest
from hypothesis import strategies as st

from lab_snippets import scenarios


def test_virtual_time_jumps_to_the_next_timer_and_reads_exact():
    async def main():
        loop = asyncio.get_running_loop()
        await asyncio.sleep(0.1)
        await asyncio.gather(asyncio.sleep(2), asyncio.sleep(1))
        return loop.time()

    started = time.monotonic()
    run = scenarios.run_virtual(main, limit=10)
    assert run.value == 2.1 and run.at == 2.1, "0.1 s then the longer of 2 s and 1 s: 2.1 s of virtual time"
    assert time.monotonic() - started < 1.0, "an hour of virtual sleeping takes no real time"


def test_timeouts_and_the_limit_follow_virtual_time():
    async def main():
        try:
            async with asyncio.timeout(5):
                await asyncio.sleep(3600)
        except TimeoutError:
            return asyncio.get_running_loop().time()

    assert scenarios.run_virtual(main).value == 5

    async def forever():
        await asyncio.Event().wait()

    hung = scenarios.run_virtual(forever, limit=30)
    assert hung.hung and hung.at == 30 and hung.value is None


def test_errors_cancellation_and_spinning_are_reported_and_nothing_is_left_on_the_loop():
    async def boom():
        await asyncio.sleep(1)
        raise ValueError("x")

    assert isinstance(scenarios.run_virtual(boom).error, ValueError)

    async def cancelled():
        asyncio.current_task().cancel()
        await asyncio.sleep(1)

    assert isinstance(scenarios.run_virtual(cancelled).error, asyncio.CancelledError)

    async def spin():
        while True:
            await asyncio.sleep(0)

    assert scenarios.run_virtual(spin, real_budget=0.2).spinning

    cleaned = []

    async def leaves_a_task():
        async def child():
            try:
                await asyncio.sleep(100)
            finally:
                cleaned.append(True)
        asyncio.create_task(child())
        await asyncio.sleep(0)

    scenarios.run_virtual(leaves_a_task)
    assert cleaned == [True], "run_virtual cancels what the run left and lets it clean up"


@dataclasses.dataclass(frozen=True)
class _Case:
    items: tuple

    def describe(self) -> str:
        return f"items {list(self.items)!r}"


_CASES = st.builds(_Case, st.lists(st.integers(0, 3), max_size=6).map(tuple))


def _observe(fn, case):
    return {"value": fn(list(case.items))}


def _compare(mine, ref, case):
    if mine["value"] != ref["value"]:
        return f"returned {mine['value']!r}, expected {ref['value']!r}"
    return None


def test_a_right_function_passes_and_a_wrong_one_fails_on_the_smallest_scenario():
    scenarios.differential(lambda xs: sorted(xs), sorted, _CASES, _observe, _compare, what="f", examples=30)
    messages = []
    for _ in range(2):
        with pytest.raises(AssertionError) as failed:
            scenarios.differential(lambda xs: sorted(set(xs)), sorted, _CASES, _observe, _compare,
                                   what="f", examples=30, hint="keep duplicates")
        messages.append(str(failed.value))
    assert messages[0] == messages[1], "a fixed seed: the same submission always gets the same message"
    assert messages[0] == ("returned [0], expected [0, 0], in the smallest scenario found: items [0, 0] "
                           "(keep duplicates)"), messages[0]


def test_a_run_that_never_ends_fails_with_the_scenario_it_was_stuck_in():
    def stuck(xs):
        if len(xs) > 1:
            time.sleep(4)
        return xs

    stuck_in = r"did not finish the generated scenarios within 2 s \(stuck in: (items|the first scenario)"
    with pytest.raises(AssertionError, match=stuck_in):
        scenarios.differential(stuck, list, _CASES, _observe, _compare, what="f", examples=30, timeout=2)


def test_a_stand_in_job_can_raise_a_timeout_error_of_its_own_which_no_deadline_raised():
    job = scenarios.Job(0.25, raises=True, error=scenarios.JobTimedOut)
    assert issubclass(scenarios.JobTimedOut, TimeoutError)
    assert job.describe("job 0") == "job 0 raises JobTimedOut (a TimeoutError of its own) after 0.25 s"
    assert scenarios.Job(1.25, raises=True).describe("job 1") == "job 1 raises after 1.25 s", (
        "a job raising JobFailed (the default) reads as before: every chapter's messages stay")

    async def under_a_deadline():
        rec = scenarios.Recorder()
        deadline = asyncio.timeout(5)
        try:
            async with deadline:
                await rec.run(0, job)
        except TimeoutError as exc:
            return type(exc), deadline.expired(), rec.fail_at, rec.fails

    kind, expired, fail_at, fails = scenarios.run_virtual(under_a_deadline).value
    assert kind is scenarios.JobTimedOut and not expired, "the job's own TimeoutError, not the deadline's"
    assert fail_at == 0.25 and fails == [(0.25, 0, "JobTimedOut")]
    assert scenarios.kind_of(scenarios.JobTimedOut("job 0 failed")) == "raised JobTimedOut"


def test_the_reference_comes_from_the_bound_source_when_there_is_one():
    namespace = {"double": lambda x: 0, "K": 2}
    assert scenarios.reference(namespace, "double")(3) == 0
    namespace[scenarios.REFERENCE_SOURCE] = "def double(x):\n    return K * x\n"
    assert scenarios.reference(namespace, "double")(3) == 6, "built in a copy of the notebook's names"
    assert namespace["double"](3) == 0, "the notebook's own names are left alone"


def test_per_caller_names_the_caller_only_when_there_are_several():
    @dataclasses.dataclass
    class Two:
        callers: int

    compare = scenarios.per_caller(lambda me, it, s: None if me == it else f"got {me}")
    assert compare([1, 2], [1, 2], Two(2)) is None
    assert compare([1, 3], [1, 2], Two(2)) == "caller 1 of 2 at once: got 3"
    assert compare([3], [2], Two(1)) == "got 3"
    assert scenarios.callers_phrase(1) == ("one caller", "")
    assert scenarios.callers_phrase(3, 0.5) == ("3 callers at once, each",
                                                ", cancelled by its caller at 0.5 s")


@dataclasses.dataclass(frozen=True)
class _Plan:
    fails_at: float | None  # this caller's job fails then (else it returns after 1 s)

    def describe(self, who: str) -> str:
        what = "returns after 1 s" if self.fails_at is None else f"fails at {self.fails_at:g} s"
        return f"{who}: {what}"


_SHARED: set = set()


def _job(plan: _Plan, shared: bool):
    """One caller's call: its job is a task; when it fails it cancels its task, or (the wrong one,
    ``shared``) every caller's task, found through a module-level set."""
    async def call() -> str:
        task = asyncio.create_task(asyncio.sleep(1))
        _SHARED.add(task)
        try:
            if plan.fails_at is not None:
                await asyncio.sleep(plan.fails_at)
                for t in list(_SHARED) if shared else [task]:
                    t.cancel()
                return "failed"
            await task
            return "returned"
        except asyncio.CancelledError:
            return "cancelled"
        finally:
            _SHARED.discard(task)
    return call()


def _observe_each(shared: bool, callers: scenarios.Callers) -> list:
    async def one_caller(plan: _Plan) -> dict:
        return {"kind": await _job(plan, shared)}
    return scenarios.run_each(one_caller, callers)


def _compare_each(me: dict, it: dict, plan: _Plan) -> str | None:
    assert isinstance(plan, _Plan), "each caller is compared with its own plan"
    return None if me == it else f"ended {me['kind']}, expected {it['kind']}"


def test_callers_with_plans_of_their_own_show_one_callers_failure_reaching_another():
    plans = scenarios.several(st.builds(_Plan, st.sampled_from([None, 0.5])))
    compare = scenarios.per_caller(_compare_each)
    same = scenarios.Callers((_Plan(0.5), _Plan(0.5)))
    assert compare(_observe_each(True, same), _observe_each(False, same), same) is None, (
        "the counterfactual: callers that all run the same plan cannot tell the shared set apart")
    assert _observe_each(False, scenarios.Callers((_Plan(None), _Plan(0.5)))) == [
        {"kind": "returned"}, {"kind": "failed"}], "caller k ran plan k, at once"
    scenarios.differential(False, False, plans, _observe_each, compare, what="calls", examples=20)
    with pytest.raises(AssertionError) as failed:
        scenarios.differential(True, False, plans, _observe_each, compare, what="calls", examples=20)
    assert str(failed.value) == (
        "caller 0 of 2 at once: ended cancelled, expected returned, in the smallest scenario found: "
        "2 callers at once, each with its own stand-ins: [caller 0: returns after 1 s]; "
        "[caller 1: fails at 0.5 s]"), str(failed.value)
    assert scenarios.Callers((_Plan(None),)).describe() == "one caller: returns after 1 s"


def test_what_a_call_started_and_left_running_is_counted_even_with_other_callers_beside_it():
    async def leaves_one():
        asyncio.create_task(asyncio.sleep(100))  # its own task, left running
        await asyncio.sleep(1)

    async def cleans_up():
        task = asyncio.create_task(asyncio.sleep(100))
        await asyncio.sleep(1)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    async def one(fn):
        return await scenarios.call_once(fn, scenarios.Recorder())

    async def main():
        return await asyncio.gather(one(cleans_up), one(leaves_one), one(cleans_up))

    seen = scenarios.run_virtual(main).value
    assert [s["left"] for s in seen] == [0, 1, 0], "each call answers for the tasks it started, only those"


# The scenarios each chapter's hidden tests draw come from Hypothesis's derandomized seed, the
# digest of ``differential``'s inner ``_property`` source text: editing it reshuffles every
# chapter's scenarios, and the corpus verdicts (book/reference/corpus_verdicts.json, on every
# recorded Python) hold for the scenarios drawn today (scenarios.differential's docstring).
PROPERTY_SOURCE_SHA256 = "58dd35925c9f305b262acfbb5eec66af58a7f1dd509f7b25f3c103f22a770c6f"


def test_the_seed_of_every_chapters_scenarios_is_unchanged():
    text = Path(scenarios.__file__).read_text()
    start, end = text.index("    @_settings(examples)\n"), text.index("    for case in explicit:")
    digest = hashlib.sha256(text[start:end].encode()).hexdigest()
    assert digest == PROPERTY_SOURCE_SHA256, (
        "scenarios.differential's _property changed: every chapter now draws other scenarios. Re-run "
        "the corpus on every recorded Python (python -m lab_snippets.labs.corpus run, then record), "
        "fix what it finds, then pin the new hash here")

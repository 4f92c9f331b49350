"""No check compares a measured duration with an absolute constant (issue 38, A01; issue 39, item 2).

The scan (``lab_snippets.testing.timing_bounds``) reads every code cell of the notebooks (claim
cells, checks, visible and hidden tests) and ``lab_snippets/grading.py``. The unit tests below
feed it the very lines the course had before issue 38 (the counterfactuals: each one put back
into its chapter makes ``test_no_check_compares_a_duration_with_a_constant`` fail), and the forms
the rule allows (orders, ratios, bounds measured beside the call, explicit floors).
"""

from __future__ import annotations

import textwrap

import pytest

from lab_snippets.testing import timing_bounds as tb


def test_no_check_compares_a_duration_with_a_constant():
    """Counterfactual: put back chapter 24's ``check_loop_free(_seen, 0.23, ...)`` (the bound that
    scored the reference solution 1/2 on a busy grader), or any line of ``OLD_BOUNDS``."""
    findings = tb.scan()
    assert not findings, (
        "a check compares a measured duration with an absolute constant; compare it with a "
        "measurement taken beside it (a ratio, an order, a ReferenceWait) or, for a timeout that "
        "bounds a hang, say so with '# bound-not-claim: <why>':\n" + "\n".join(map(str, findings)))


def _nb(code: str) -> str:
    """A py:percent notebook of one code cell."""
    return "# %%\n" + textwrap.dedent(code).strip() + "\n"


# The lines the course had before issue 38, each in the context that gives its names their kinds.
OLD_BOUNDS = {
    "03 TaskGroup ends before a planned sleep": """
        plan = {"sample 0": (0.15, False), "sample 1": (0.04, True), "sample 2": (0.1, False)}
        group_ends = max(s.end for s in group_tl.spans)
        shortest_sibling = min(d for d, fails in plan.values() if not fails)
        assert group_ends < 0.95 * shortest_sibling, "the TaskGroup stops the whole group soon"
    """,
    "04 refill under a floor of planned sleeps": """
        DURATIONS = [0.12, 0.03, 0.03, 0.03]
        runs = await ainterleaved({"batched": a, "refill": b}, k=3)
        batched_elapsed, refill_elapsed = runs.best("batched"), runs.best("refill")
        batched_floor = math.ceil(TARGET / sum(map(keep_group, range(IN_FLIGHT)))) * max(DURATIONS)
        assert refill_elapsed < 0.95 * batched_floor
    """,
    "06 best of 3 under a planned round": """
        measured = {limit: runs.best(limit) for limit in limits}
        rounds = {limit: math.ceil(N_JOBS / limit) for limit in limits}
        at_least = {limit: 0.95 * rounds[limit] * DURATION for limit in limits}
        for fewer, more in [(1, 2), (6, 12)]:
            assert measured[more] < at_least[fewer]
    """,
    "24 the loop's heartbeat gap at 230 ms": """
        _seen = await _grading.observe(score_all(_long, pool), timeout=60, heartbeat=0.005)
        _grading.check_loop_free(_seen, 0.23, "score_all")
    """,
    "28 a gap limit in a grading check": """
        seen = await _acquire_held(lock, hold=0.7, poll=0.2)
        grading.check_loop_free(seen, limit=0.15, what="acquire")
    """,
    "13 a budget plus slack": """
        _slow_seen = _grading.call(call_with_deadline, _loop_thread, _coro(), timeout=0.2)
        _grading.check_within(_slow_seen, budget=0.2, slack=0.4, what="call_with_deadline")
    """,
    "29 a budget with the default slack": """
        limit = _grading.ReferenceWait(1.0)
        seen = _grading.call(monitor.stop)
        _grading.check_within(seen, budget=limit.seconds, what="stop()")
    """,
    "17 an elapsed time under a constant": """
        _t0 = time.monotonic()
        _waited = time.monotonic() - _t0
        assert _waited < 1.5, "must raise TimeoutError after timeout"
    """,
    "22 a child's timestamps, differenced": """
        _sent = time.monotonic()
        _returned = [_t for _kind, _, _t in _events if _kind == "returned"]
        assert _returned and _returned[0] - _sent < 1.2
    """,
    "16 a latency under half a planned interval": """
        asked = time.monotonic()
        ended = time.monotonic()
        latencies[name] = ended - asked
        assert latencies[name] < interval / 2
    """,
    "a measurement plus an absolute slack": """
        limit = ReferenceWait(0.2)
        took = time.perf_counter() - t0
        assert took <= limit.seconds + 0.5
    """,
    "a branch that decides whether to assert": """
        wall = time.monotonic() - start
        if wall < 0.2:
            print("too fast to tell")
        else:
            assert share > 0.5
    """,
    "a rate above a constant": """
        elapsed = time.monotonic() - start
        rate = count / elapsed
        assert rate >= 100
    """,
    "a floor pragma on an upper bound": """
        elapsed = time.monotonic() - start
        assert elapsed < 0.5  # floor: a sleep never ends early
    """,
    "a pragma without its reason": """
        elapsed = time.monotonic() - start
        assert elapsed < 0.5  # bound-not-claim:
    """,
}


@pytest.mark.parametrize("name", list(OLD_BOUNDS))
def test_the_scan_finds_an_absolute_bound(name):
    findings = tb.scan_notebook_text(_nb(OLD_BOUNDS[name]), name)
    assert findings, f"the scan missed an absolute bound: {name}"


ALLOWED = {
    "an order of events on one clock": """
        gather_raised = gather_tl.events[0].at
        assert max(s.end for s in group_tl.spans) <= gather_raised
    """,
    "a ratio of best-of-3 times, interleaved": """
        runs = await ainterleaved({"batched": a, "refill": b}, k=3)
        batched_elapsed, refill_elapsed = runs.best("batched"), runs.best("refill")
        assert refill_elapsed < 0.75 * batched_elapsed
    """,
    "a gap against the call's own time": """
        seen = await grading.observe(acquire(lock), timeout=5, heartbeat=0.005)
        grading.check_loop_free(seen, seen.seconds / 5, "acquire")
    """,
    "a bound measured beside the call": """
        limit = _grading.ReferenceWait(0.6)
        seen = _grading.call(f)
        _grading.check_within(seen, budget=limit.seconds, slack=0, what="f")
        halfway = _grading.ReferenceWait(1.0)
        _grading.check_returns_early(seen, work=0.1, budget=2, by=halfway.seconds, what="f")
        assert seen.seconds < limit.seconds
    """,
    "a ratio compared with a constant": """
        overrun = (time.monotonic() - start) / (time.monotonic() - t1)
        assert overrun < 2.5
    """,
    "a sign check": """
        elapsed = time.monotonic() - start
        assert elapsed > 0
    """,
    "a floor, marked": """
        elapsed = time.monotonic() - start
        # floor: a sleep never ends early
        assert elapsed >= 0.95 * 0.3
    """,
    "a timeout that bounds a hang, marked": """
        waited = time.monotonic() - start
        assert waited < 60, "never placed"  # bound-not-claim: bounds a wait that never ends
    """,
    "a while loop that bounds an experiment": """
        deadline = time.monotonic() + 5
        while time.monotonic() - start < 5:
            pass
    """,
    "a count": """
        assert len(beats) >= 3 and checks <= 12
    """,
}


@pytest.mark.parametrize("name", list(ALLOWED))
def test_the_scan_allows_orders_ratios_and_marked_floors(name):
    assert tb.scan_notebook_text(_nb(ALLOWED[name]), name) == []


def test_names_flow_from_cell_to_cell_and_a_later_cell_replaces_them():
    text = ("# %%\nwaited = time.monotonic() - t0\n# %%\nassert waited < 1.0\n"
            "# %%\nwaited = 3\n# %%\nassert waited < 1.0\n")
    assert [f.line for f in tb.scan_notebook_text(text)] == [4]


def test_in_a_module_of_checks_only_the_threshold_checks_may_compare_with_a_parameter():
    module = textwrap.dedent('''
        def check_loop_free(seen, limit, what):
            assert seen.max_gap <= limit
        def check_new(seen, budget):
            assert seen.seconds <= budget
    ''')
    assert [f.text for f in tb.scan_module_text(module)] == ["seen.seconds <= budget"]

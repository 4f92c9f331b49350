import subprocess
import sys
import threading
import time

import pytest

from lab_snippets.agent_sim import (
    HANG_EXIT_CODE,
    ResourceRegistry,
    fake_diff,
    harness_command,
    main,
    parse_result,
)


def fake_clock():
    ticks = iter(range(1000))
    return lambda: float(next(ticks))


# -- the harness child ------------------------------------------------------------------
def test_harness_prints_started_then_a_result_and_exits_with_the_code():
    done = subprocess.run(
        harness_command("t1", work=0.01, exit_code=3), capture_output=True, text=True, timeout=10
    )
    lines = done.stdout.splitlines()
    assert done.returncode == 3
    assert lines[0].startswith("started ")
    assert parse_result(done.stdout) == {"task": "t1", "diff": fake_diff("t1")}


def test_a_hanging_harness_is_bounded_by_its_own_max_life():
    start = time.monotonic()
    done = subprocess.run(
        harness_command("t2", hang=True, max_life=0.3), capture_output=True, text=True, timeout=10
    )
    elapsed = time.monotonic() - start
    assert done.returncode == HANG_EXIT_CODE
    assert parse_result(done.stdout) is None
    assert 0.3 <= elapsed < 5


def test_a_hanging_harness_dies_when_killed():
    proc = subprocess.Popen(harness_command("t3", hang=True, max_life=10), stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().startswith("started ")
        proc.kill()
        assert proc.wait(timeout=5) < 0
    finally:
        proc.kill()
        proc.wait(timeout=5)
        proc.stdout.close()


def test_work_is_capped_by_max_life():
    done = subprocess.run(
        harness_command("t4", work=30, max_life=0.2), capture_output=True, text=True, timeout=10
    )
    assert done.returncode == 0 and parse_result(done.stdout)["task"] == "t4"


def test_the_harness_exits_0_by_default(capsys):
    # in-process: the command line without --exit-code, as the module docstring runs it
    assert main(["harness", "--task", "t5", "--work", "0"]) == 0
    assert parse_result(capsys.readouterr().out) == {"task": "t5", "diff": fake_diff("t5")}


def test_parse_result_ignores_noise_and_bad_json():
    assert parse_result("started 1\n") is None
    assert parse_result("started 1\n{not json\n") is None
    assert parse_result('x\n{"task": "a"}\ntrailing\n') == {"task": "a"}


def test_harness_command_runs_this_interpreter_as_a_module():
    cmd = harness_command("t", hang=True)
    assert cmd[:3] == [sys.executable, "-m", "lab_snippets.agent_sim"] and cmd[-1] == "--hang"


# -- the registry -------------------------------------------------------------------------
def test_registry_records_acquire_release_and_what_is_open():
    reg = ResourceRegistry(clock=fake_clock())
    reg.acquire("sandbox", "a")
    reg.acquire("sandbox", "b")
    reg.acquire("session", "a")
    assert reg.open() == [("sandbox", "a"), ("sandbox", "b"), ("session", "a")]
    assert reg.open("sandbox") == [("sandbox", "a"), ("sandbox", "b")]
    assert reg.release("sandbox", "a") is True
    assert reg.release("sandbox", "a") is False, "release is idempotent"
    assert reg.peak("sandbox") == 2 and reg.peak("nothing") == 0
    assert reg.history("a") == ["acquire sandbox", "acquire session", "release sandbox"]
    assert reg.history("b") == ["acquire sandbox"], "only the events of that name"
    with pytest.raises(AssertionError, match="sandbox 'b'"):
        reg.assert_no_leak()


def test_registry_refuses_a_double_acquire():
    reg = ResourceRegistry()
    reg.acquire("child", "x")
    with pytest.raises(RuntimeError):
        reg.acquire("child", "x")


def test_held_releases_on_exception_and_reports_events():
    seen = []
    reg = ResourceRegistry(on_event=seen.append)
    with pytest.raises(ValueError):
        with reg.held("grader", "t"):
            assert reg.is_open("grader", "t")
            raise ValueError
    assert not reg.is_open("grader", "t")
    reg.assert_no_leak()
    assert [(e.action, e.kind) for e in seen] == [("acquire", "grader"), ("release", "grader")]


def test_counts_over_time_is_step_data_per_kind():
    reg = ResourceRegistry(clock=fake_clock())
    reg.acquire("sandbox", "a")
    reg.acquire("child", "a")
    reg.release("child", "a")
    reg.release("sandbox", "a")
    times, counts = reg.counts_over_time(["sandbox", "child"], t0=0.0)
    assert times == [0.0, 0.0, 1.0, 2.0, 3.0]
    assert counts == {"sandbox": [0, 1, 1, 1, 0], "child": [0, 0, 1, 0, 0]}


def test_registry_is_thread_safe():
    reg = ResourceRegistry()

    def churn(n):
        for i in range(300):
            with reg.held("permit", f"{n}-{i}"):
                pass

    threads = [threading.Thread(target=churn, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
        assert not t.is_alive()
    reg.assert_no_leak()
    assert len(reg.events) == 2400

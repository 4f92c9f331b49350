"""Unit tests of ``lab_snippets.scenarios_threads``: calls side by side and at once, the stand-in
processes (each behaviour does what its description says, and leaves nothing behind) and the
process states a hidden test reads."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from hypothesis import strategies as st

from lab_snippets import scenarios
from lab_snippets import scenarios_threads as sth


def test_timed_names_what_came_out():
    def fails():
        raise KeyError("x")

    assert sth.timed(lambda: 0)["kind"] == "returned" and sth.timed(lambda: 0)["value"] == 0
    assert sth.timed(fails)["kind"] == "raised KeyError", "an exception is the observation, not a crash"
    assert sth.timed(time.sleep, 0.05)["seconds"] >= 0.05


def test_timed_wakeups_tells_a_woken_wait_from_a_poll():
    done = threading.Event()

    def woken():
        return done.wait(timeout=2)

    def polled():
        while not done.is_set():
            time.sleep(0.005)
        return True

    def spun():
        while not done.is_set():
            pass
        return True

    seen = {}
    for fn in (woken, polled, spun):
        done.clear()
        setter = threading.Timer(0.1, done.set)
        setter.start()
        seen[fn.__name__] = sth.timed_wakeups(fn)
        setter.join(timeout=2)
    assert [seen[k]["value"] for k in seen] == [True] * 3, "each call's own result, as timed gives it"
    assert seen["woken"]["wakeups"] <= 2, f"a wait woken by the event blocks once: {seen['woken']}"
    assert seen["polled"]["wakeups"] >= 10, f"a 5 ms poll over 0.1 s is woken 20 times: {seen['polled']}"
    assert seen["spun"]["calls"] > 10 * seen["woken"]["calls"] + 1000, (
        f"a spin makes calls without end: {seen}")
    assert sys.getprofile() is None, "the profile is removed after the call"

    def fails():
        raise TimeoutError("its own")

    assert sth.timed_wakeups(fails)["message"] == "its own", "the message of what it raised"
    assert sth.timed_wakeups(lambda: 0)["message"] is None


def test_at_once_runs_the_calls_together_and_bounds_them():
    inside, most = [0], [0]
    lock = threading.Lock()

    def call():
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.1)
        with lock:
            inside[0] -= 1
        return {"kind": "returned"}

    assert sth.at_once([call] * 3, timeout=5) == [{"kind": "returned"}] * 3
    assert most[0] == 3, "the three calls were in flight at the same time"
    stuck = sth.at_once([lambda: time.sleep(1)], timeout=0.1)
    assert stuck == [{"kind": "still running after 0.1 s"}], "a call that outlasts the bound is named"


def test_beside_runs_both_at_once_and_hands_back_the_reference():
    calls = []

    def observe(fn, scenario):
        calls.append((fn.__name__, time.monotonic()))
        time.sleep(0.1)
        return fn(scenario)

    def student(x):
        return ("student", x)

    def reference(x):
        return ("reference", x)

    beside = sth.Beside(observe, reference)
    scenario = ("s",)
    assert beside(student, scenario) == ("student", ("s",))
    assert beside(reference, scenario) == ("reference", ("s",))
    assert len(calls) == 2, "the reference ran once, beside the student, not again"
    assert abs(calls[0][1] - calls[1][1]) < 0.09, "both ran at the same time"
    assert beside(reference, ("other",)) == ("reference", ("other",)), (
        "a reference asked about another scenario is run, not taken from the last pair")


def _run(spec: sth.StandIn, log: str, **popen) -> subprocess.Popen:
    proc = subprocess.Popen(spec.argv(log), start_new_session=True, **popen)
    assert sth.wait_for_line(log, "ready", timeout=5), sth.read_log(log)
    time.sleep(0.1)  # a just-forked sleep runs the shell's trap until it has exec'd sleep
    return proc


@pytest.mark.parametrize(("on_term", "code", "after_term"), [
    ("honour", 0, -signal.SIGTERM), ("ignore", 0, None), ("cleanup", 3, 3)])
def test_a_stand_in_does_what_it_says_on_sigterm(tmp_path, on_term, code, after_term):
    log = str(tmp_path / "log")
    spec = sth.StandIn(on_term, code=code, cleanup=0.05, children=2)
    proc = _run(spec, log, stdout=subprocess.DEVNULL)
    members = sth.pids_in_log(sth.read_log(log))
    try:
        assert len(members) == 4 and proc.pid in members, "the leader, its two children and its sleep"
        assert all(os.getpgid(pid) == proc.pid for pid in members), "all in the leader's group"
        assert f"leader {proc.pid} /dev/null" in sth.read_log(log), "it says where its stdout goes"
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            got = proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            got = None
        assert got == after_term, f"{spec.describe()}: {got}"
        assert ("got SIGTERM" in sth.read_log(log)) == (on_term == "cleanup")
        left = sth.still_running(members, within=0.5)
        assert (left != []) == (on_term == "ignore"), f"only members that ignore SIGTERM outlive it: {left}"
    finally:
        sth.kill_all(members)
        proc.wait(timeout=5)
    assert sth.still_running(members, within=0) == [], "kill_all leaves nothing running"


@pytest.mark.parametrize("on_term", ["honour", "cleanup"])
def test_deaf_children_outlive_a_leader_that_ends_on_sigterm(tmp_path, on_term):
    log = str(tmp_path / "log")
    spec = sth.StandIn(on_term, code=3, cleanup=0.05, children=2, deaf_children=True)
    assert "ignore SIGTERM" in spec.describe()
    proc = _run(spec, log, stdout=subprocess.DEVNULL)
    members = sth.pids_in_log(sth.read_log(log))
    children = [int(line.split()[1]) for line in sth.read_log(log) if line.startswith("child ")]
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=1) == (-signal.SIGTERM if on_term == "honour" else 3), "the leader ends"
        assert sorted(sth.still_running(members, within=0.3)) == sorted(children), (
            "only the children that ignore SIGTERM outlive the leader")
    finally:
        sth.kill_all(members)
    assert sth.still_running(members, within=0) == []
    assert "exec sleep" not in sth.StandIn(children=1).script(log), "by default the children honour SIGTERM"


def test_a_stand_in_that_ends_writes_its_output_and_exits_with_its_code(tmp_path):
    log = str(tmp_path / "log")
    spec = sth.StandIn(seconds=0.05, code=2, says="started", chatter=100_000, result='{"diff": "x"}')
    out = subprocess.run(spec.argv(log), capture_output=True, timeout=5)
    assert out.returncode == 2
    first, rest = out.stdout.split(b"\n", 1)
    assert first.split()[0] == b"started" and first.split()[1].isdigit(), "says, then its pid"
    assert rest == b"o\n" * 50_000 + b'{"diff": "x"}\n', "the chatter, then the result as the last line"
    assert "lived to the end" in sth.read_log(log)
    assert "exits with 2 after 0.05 s" in spec.describe() and "100000 bytes" in spec.describe()


def test_a_stand_in_with_a_tick_waits_in_the_foreground_and_still_cleans_up(tmp_path):
    log = str(tmp_path / "log")
    proc = _run(sth.StandIn("cleanup", code=3, cleanup=0.1, tick=0.02), log, stdout=subprocess.DEVNULL)
    try:
        assert "&" not in sth.StandIn(tick=0.02).script(log), "no background child holds what it inherited"
        proc.terminate()
        assert proc.wait(timeout=2) == 3, "the trap runs after the current short sleep, then exits with 3"
        assert sth.read_log(log)[-1] == "cleaned up"
    finally:
        proc.kill()
        proc.wait(timeout=5)


def test_a_stand_in_never_outlives_max_life():
    assert f"sleep {sth.MAX_LIFE:g} " in sth.StandIn(seconds=3600).script("/tmp/x"), "seconds are capped"


def test_state_tells_running_zombie_and_gone():
    proc = subprocess.Popen(["sleep", "5"])
    try:
        assert sth.state(proc.pid) == "running"
        proc.kill()
        deadline = time.monotonic() + 5
        while sth.state(proc.pid) != "zombie" and time.monotonic() < deadline:
            time.sleep(0.005)
        assert sth.state(proc.pid) == "zombie", "killed, not yet waited for"
    finally:
        proc.wait(timeout=5)
    assert sth.state(proc.pid) == "gone"


@dataclasses.dataclass(frozen=True)
class _Pause:
    seconds: float

    def describe(self) -> str:
        return f"a pause of {self.seconds:g} s"


def test_differential_beside_fails_a_slow_answer_naming_the_property():
    def reference(s):
        time.sleep(s.seconds)

    def too_slow(s):
        time.sleep(s.seconds + 0.3)

    def observe(fn, s):
        return sth.timed(fn, s)["seconds"]

    def compare(mine, theirs, s):
        return f"returns late: {mine:.2f} s" if mine > theirs + 0.2 else None

    strategy = st.builds(_Pause, st.sampled_from([0.01, 0.02]))
    scenarios.differential(reference, reference, strategy, sth.Beside(observe, reference), compare,
                           what="pause", examples=2)
    with pytest.raises(AssertionError, match=r"^returns late: .* smallest scenario found: a pause of 0.01 s"):
        scenarios.differential(too_slow, reference, strategy, sth.Beside(observe, reference), compare,
                               what="pause", examples=2)


def test_per_item_names_the_item_and_guards_a_run_that_could_not_end():
    def one(me, it, item):
        return f"{item} differs" if me != it else None

    compare = sth.per_item(one, lambda s: s, "caller", "f")
    assert compare([1, 2], [1, 2], ("a", "b")) is None
    assert compare([1, 3], [1, 2], ("a", "b")) == "caller 1: b differs", "the first problem, with its caller"
    assert compare([3], [2], ("a",)) == "a differs", "one caller: no number"
    assert compare({"kind": "raised X"}, [2], ("a",)).startswith("f: the scenario could not be run")
    assert compare([3], {"kind": "raised X"}, ("a",)) is None, "nothing to compare with"

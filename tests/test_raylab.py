"""lab_snippets.raylab: the offline settings, the grammar kept out of Ray's processes, a bounded start
that is tried once more and then names what did not start, bounded get/wait, nothing left behind.

The tests that start Ray are ``serial`` (Ray's start needs the cores; .ci/test runs them apart).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lab_snippets import raylab
from lab_snippets.book.chapters import missing_package

# The tests that drive ray itself (its get/wait/init, monkeypatched) skip where Ray is not
# installed (3.15: no wheel), with the reason the Ray chapters give; the rest run everywhere.
_NO_RAY = missing_package("28")
needs_ray = pytest.mark.skipif(_NO_RAY is not None, reason=_NO_RAY or "")


@pytest.fixture
def temp_dir():
    d = raylab.make_temp_dir()
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_temp_dir_is_short_and_holds_the_private_home_and_the_stub(temp_dir):
    # Ray's socket paths (<temp>/ray/session_<date>_<pid>/sockets/...) must stay under 107 bytes
    assert len(temp_dir) <= 32, f"temp folder too long for Ray's Unix sockets: {temp_dir}"
    with open(os.path.join(temp_dir, "home", "ray_bootstrap_config.yaml")) as f:
        assert f.read().strip() == "{}", "the private HOME needs an empty bootstrap config"
    assert os.path.isfile(os.path.join(temp_dir, "py", "rfc3987_syntax.py")), "the stub is missing"


def test_environment_has_the_offline_settings_and_puts_the_stub_first(temp_dir, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "/somewhere/else")
    env = raylab.ray_environment(temp_dir)
    assert env["RAY_USAGE_STATS_ENABLED"] == "0" and env["RAY_AUTH_MODE"] == "disabled"
    assert env["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] == "0"
    assert env["HOME"] == os.path.join(temp_dir, "home"), "HOME must be the private folder"
    assert env["PYTHONPATH"].split(os.pathsep) == [os.path.join(temp_dir, "py"), "/somewhere/else"], (
        "the stub must come first, and the caller's PYTHONPATH must be kept after it"
    )
    assert "PYTHONPATH" not in raylab.ray_environment(temp_dir, skip_grammar=False), (
        "skip_grammar=False must leave PYTHONPATH alone"
    )


def test_environment_is_put_back_afterwards(monkeypatch):
    monkeypatch.setenv("HOME", "/the/kernels/home")
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    with raylab._environment({"HOME": "/private", "RAY_AUTH_MODE": "disabled"}):
        assert os.environ["HOME"] == "/private"
    assert os.environ["HOME"] == "/the/kernels/home", "the kernel's HOME must come back"
    assert "RAY_AUTH_MODE" not in os.environ, "a variable that was unset must be unset again"


def _imports_grammar(env_extra: dict[str, str]) -> bool:
    code = (
        "import sys, jsonschema; jsonschema.validate('x', {'type': 'string'}); "
        "print('rfc3987_syntax' in sys.modules)"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | env_extra
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=True
    )
    return out.stdout.strip() == "True"


def test_the_stub_keeps_the_grammar_out_of_a_fresh_python_and_records_it(temp_dir):
    stub = os.path.join(temp_dir, "py")
    assert not _imports_grammar({"PYTHONPATH": stub}), (
        "with the stub first on PYTHONPATH, jsonschema must import (and validate) without rfc3987_syntax"
    )
    with open(os.path.join(stub, "skipped.txt")) as f:
        assert len(f.read().splitlines()) == 1, "the stub must note the process that skipped the import"
    # the counterfactual the fix is measured against: no stub, and the grammar is imported
    assert _imports_grammar({}), "this venv no longer imports rfc3987_syntax: the fix has nothing to do"


@needs_ray
def test_get_and_wait_refuse_to_wait_forever():
    with pytest.raises(ValueError, match="timeout"):
        raylab.get([], timeout=None)
    with pytest.raises(ValueError, match="timeout"):
        raylab.wait([], timeout=None)


@needs_ray
def test_get_and_wait_pass_their_deadline_to_ray(monkeypatch):
    import ray

    calls = []
    monkeypatch.setattr(ray, "get", lambda refs, **kw: calls.append(("get", refs, kw)) or "value")
    monkeypatch.setattr(ray, "wait", lambda refs, **kw: calls.append(("wait", refs, kw)) or ([], refs))
    assert raylab.get(["r"], timeout=1.5) == "value"
    assert raylab.wait(("a", "b"), timeout=0) == ([], ["a", "b"]), "timeout=0 is a poll, not an error"
    assert calls == [("get", ["r"], {"timeout": 1.5}), ("wait", ["a", "b"], {"num_returns": 1, "timeout": 0})]
    for bad in (0, -1):
        with pytest.raises(ValueError, match="get needs a positive timeout"):
            raylab.get(["r"], timeout=bad)
    with pytest.raises(ValueError, match="wait needs a timeout"):
        raylab.wait(["a"], timeout=-0.5)
    assert len(calls) == 2, "a refused deadline must not reach Ray"


@needs_ray
def test_start_hands_ray_init_the_private_session_and_puts_the_kernel_back(monkeypatch):
    """What ``start()`` with no arguments gives ``ray.init`` (a stand-in: no Ray starts), and what it
    sets only while ``ray.init`` runs."""
    import ray
    from ray._private import ray_constants

    seen = {}

    def init(**kwargs):
        names = ("HOME", "PYTHONPATH", "RAY_USAGE_STATS_ENABLED")
        seen.update(kwargs, env={k: os.environ.get(k) for k in names})
        seen["cluster_flag"] = ray_constants.ENABLE_RAY_CLUSTER

    monkeypatch.setattr(ray, "init", lambda **kwargs: (init(**kwargs), time.sleep(0.05)))
    monkeypatch.setattr(ray, "shutdown", lambda: time.sleep(0.05))
    monkeypatch.setattr(raylab, "_KEPT", {})
    before = time.perf_counter()
    home = os.environ.get("HOME")
    cluster = raylab.start()
    try:
        assert (seen["num_cpus"], seen["num_gpus"], cluster.num_cpus) == (2, 0, 2), (
            "start() must ask for what local_ray() does: 2 CPUs, no GPU")
        assert seen["_temp_dir"] == cluster.ray_dir, "Ray's session must live in the private folder"
        assert seen["object_store_memory"] == raylab.OBJECT_STORE_BYTES
        assert seen["include_dashboard"] is False and seen["log_to_driver"] is False
        assert seen["env"]["HOME"] == os.path.join(cluster.temp_dir, "home")
        assert seen["env"]["PYTHONPATH"].split(os.pathsep)[0] == cluster.stub_dir
        assert seen["env"]["RAY_USAGE_STATS_ENABLED"] == "0" and seen["cluster_flag"] is False
        assert cluster.attempts == 1 and not cluster.failures
    finally:
        stopping = time.perf_counter()
        raylab.stop(cluster)
    # what the chapters print: the time ray.init and ray.shutdown took, each within what it spanned
    assert 0.05 <= cluster.start_seconds <= stopping - before and 0.05 <= cluster.stop_seconds
    assert cluster.stop_seconds <= time.perf_counter() - stopping
    assert os.environ.get("HOME") == home, "the kernel's HOME must come back after ray.init"
    _no_session_left(cluster)


def test_ray_processes_are_the_children_naming_the_folder_and_their_descendants(temp_dir):
    import psutil

    leader = subprocess.Popen(["sh", "-c", "sleep 30 & wait", temp_dir])  # its $0 names the folder
    other = subprocess.Popen(["sleep", "30"])  # a child of ours that does not
    try:
        deadline = time.monotonic() + 10
        while not psutil.Process(leader.pid).children() and time.monotonic() < deadline:
            time.sleep(0.01)
        grandchild = psutil.Process(leader.pid).children()[0].pid
        assert {p.pid for p in raylab.ray_processes(temp_dir)} == {leader.pid, grandchild}
    finally:
        for proc in (psutil.Process(leader.pid).children(), [leader, other]):
            for child in proc:
                with contextlib.suppress(psutil.Error):
                    child.kill()
        leader.wait(5)
        other.wait(5)
    assert raylab.ray_processes(temp_dir) == [], "a process that has exited is not a Ray process"


def test_removal_makes_one_pass_when_the_folder_goes_at_once(temp_dir, monkeypatch):
    passes = []
    real = raylab.ray_processes
    monkeypatch.setattr(raylab, "ray_processes", lambda d: passes.append(d) or real(d))
    raylab._remove(raylab.Cluster(temp_dir, 1), patience=5)
    assert not os.path.exists(temp_dir) and len(passes) == 1, (
        f"{len(passes)} passes: the removal must stop looking once the folder is gone")


def test_the_manual_check_runs_as_a_module(tmp_path):
    """``python -m lab_snippets.raylab`` starts and stops a local Ray (here a stand-in package named
    ``ray``, first on the path, so no Ray starts)."""
    fake = tmp_path / "ray"
    (fake / "_private").mkdir(parents=True)
    (fake / "__init__.py").write_text("\n".join([
        "def is_initialized():", "    return False",
        "def init(**kwargs):", "    print('init', kwargs['num_cpus'])",
        "def shutdown():", "    print('shutdown')", ""]))
    (fake / "_private" / "__init__.py").write_text("")
    (fake / "_private" / "ray_constants.py").write_text("ENABLE_RAY_CLUSTER = True\n")
    root = os.path.dirname(os.path.dirname(raylab.__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), root]))
    done = subprocess.run([sys.executable, "-m", "lab_snippets.raylab"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120)
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and lines[:1] == ["init 2"] and lines[-1:] == ["shutdown"], done
    assert any(line.startswith("started in ") for line in lines), done


def _no_session_left(cluster: raylab.Cluster) -> None:
    assert not os.path.exists(cluster.temp_dir), f"Ray's folder was left behind: {cluster.temp_dir}"
    assert not raylab.ray_processes(cluster.temp_dir), "a Ray process outlived the session"


@pytest.mark.serial
@needs_ray
def test_a_local_ray_skips_the_grammar_everywhere_and_leaves_nothing():
    import ray

    with raylab.local_ray(num_cpus=2) as cluster:
        assert cluster.attempts >= 1 and cluster.start_seconds > 0
        assert raylab.get(ray.remote(lambda x: x + 1).remote(41), timeout=60) == 42

        @ray.remote
        def slow():
            time.sleep(30)

        ref = slow.remote()
        ready, not_ready = raylab.wait([ref], timeout=0)
        assert (ready, not_ready) == ([], [ref]), "wait(timeout=0) must poll, not wait"
        with pytest.raises(ray.exceptions.GetTimeoutError):
            raylab.get(ref, timeout=0.5)
        ray.cancel(ref, force=True)
        skipped = "\n".join(cluster.skipped())
        node_address = ray.util.get_node_ip_address()
        listening = _listening_addresses(cluster)
    assert node_address == "127.0.0.1", f"the node's address is {node_address}, not loopback"
    assert listening and all(a.startswith(("127.0.0.1:", "::ffff:127.0.0.1:")) for a in listening), (
        f"a Ray process listens beyond loopback: {listening}")
    for role in ("dashboard/agent.py", "runtime_env/agent/main.py", "default_worker.py", "log_monitor.py"):
        assert role in skipped, f"{role} imported the grammar: the stub did not reach it"
    # The driver skips it because lab_snippets is imported first, as in a chapter's kernel; this test
    # process may have imported jsonschema before (the book tests do), so ask a fresh interpreter.
    driver = subprocess.run([sys.executable, "-c", "import lab_snippets, jsonschema, sys; "
                             "print(sys.modules.get('rfc3987_syntax', 0) is None)"],
                            capture_output=True, text=True, timeout=120)
    assert driver.stdout.strip() == "True", (
        f"a driver that imports lab_snippets first imported the grammar: {driver}")
    assert not ray.is_initialized()
    _no_session_left(cluster)


def _listening_addresses(cluster: raylab.Cluster) -> list[str]:
    """The TCP addresses (ip:port) the session's processes and this driver listen on."""
    import psutil

    found = []
    for proc in [*raylab.ray_processes(cluster.temp_dir), psutil.Process()]:
        with contextlib.suppress(psutil.Error):
            found += [f"{c.laddr.ip}:{c.laddr.port}" for c in proc.net_connections("tcp")
                      if c.status == psutil.CONN_LISTEN]
    return found


def _failing_init(monkeypatch, fail_first: int) -> list[int]:
    """ray.init that raises on its first ``fail_first`` calls (then is the real one); returns the calls."""
    import ray

    real, calls = ray.init, []

    def init(**kwargs):
        calls.append(1)
        if len(calls) <= fail_first:
            raise ConnectionError(f"injected start failure {len(calls)}")
        return real(**kwargs)

    monkeypatch.setattr(ray, "init", init)
    return calls


@needs_ray
def test_a_start_that_fails_twice_is_named(monkeypatch):
    calls = _failing_init(monkeypatch, fail_first=5)
    made = []
    monkeypatch.setattr(
        raylab, "make_temp_dir", lambda real=raylab.make_temp_dir: made.append(real()) or made[-1]
    )
    with pytest.raises(raylab.RayStartError) as info:
        raylab.start(num_cpus=1)
    message = str(info.value)
    assert len(calls) == 2, f"a failed start must be tried exactly once more, not {len(calls) - 1} times"
    assert "in 2 attempts" in message and "injected start failure 2" in message, message
    assert "not running then: " in message and "raylet" in message, (
        "the message must name what was not running"
    )
    assert "logs are kept nowhere: Ray wrote no logs" in message, message
    assert made and not any(os.path.exists(d) for d in made), "a failed start left its folder behind"


class _Clock:
    """raylab's clock in a test: time passes only when a stand-in attempt says it took some."""

    def __init__(self):
        self.now = 1000.0

    def monotonic(self):
        return self.now

    perf_counter = monotonic

    def sleep(self, seconds):
        self.now += seconds


def _timed_attempts(monkeypatch, took: list[float | None]) -> list[float | None]:
    """Stand-in attempts (no Ray starts): attempt k takes ``took[k]`` seconds of the fake clock and
    fails, or succeeds where the entry is ``None`` (taking 1 s). Returns the attempts made."""
    clock, made = _Clock(), []

    def once(cluster, kwargs):
        seconds = took[len(made)]
        made.append(seconds)
        clock.now += 1.0 if seconds is None else seconds
        if seconds is not None:
            raise raylab.RayStartError(f"injected: attempt {len(made)} failed")

    monkeypatch.setattr(raylab, "time", clock)
    monkeypatch.setattr(raylab, "_start_once", once)
    return made


@needs_ray
def test_a_failed_start_too_slow_to_repeat_in_the_budget_is_named_at_once(monkeypatch):
    """30 s for a failed attempt leaves 10 s of a 40 s budget: a second attempt would take the
    start cell past its 60 s, so none is made, and the error says why."""
    made = _timed_attempts(monkeypatch, [30.0, None])
    folders = []
    monkeypatch.setattr(raylab, "make_temp_dir",
                        lambda real=raylab.make_temp_dir: folders.append(real()) or folders[-1])
    with pytest.raises(raylab.RayStartError) as info:
        raylab.start(num_cpus=1, budget=40.0)
    message = str(info.value)
    assert made == [30.0], f"an attempt that cannot fit in the budget was made: {made}"
    assert "within its 40 s budget" in message and "10.0 s left" in message, message
    assert "attempt 1 failed after 30.0 s" in message and "injected: attempt 1 failed" in message
    assert "logs are kept" in message, "the error must say where Ray's logs are"
    assert folders and not any(os.path.exists(d) for d in folders), "the failed start left its folder"


@needs_ray
def test_a_failed_start_is_repeated_while_the_budget_has_as_much_time_left(monkeypatch):
    """A 20 s failure leaves exactly 20 s of 40: the second attempt is made (and starts)."""
    made = _timed_attempts(monkeypatch, [20.0, None])
    cluster = raylab.start(num_cpus=1, budget=40.0)
    try:
        assert made == [20.0, None] and cluster.attempts == 2, made
        assert "attempt 1 failed after 20.0 s" in cluster.failures[0], cluster.failures
    finally:
        raylab._remove(cluster)


@needs_ray
def test_without_a_budget_a_slow_failure_is_still_tried_once_more(monkeypatch):
    made = _timed_attempts(monkeypatch, [35.0, 35.0, None])
    with pytest.raises(raylab.RayStartError, match="in 2 attempts"):
        raylab.start(num_cpus=1, budget=None)
    assert made == [35.0, 35.0], "no budget: the attempts allowed are made, and no more"


def test_the_start_budget_fits_in_the_cell_budget_of_nbval_and_the_grader():
    import tomllib

    from lab_snippets.labs.common import RAY_CELL_TIMEOUT

    options = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    nbval = next(int(o.split("=")[1]) for o in options["tool"]["pytest"]["ini_options"]["addopts"]
                 if o.startswith("--nbval-cell-timeout="))
    assert raylab.START_BUDGET + 15 <= min(nbval, RAY_CELL_TIMEOUT), (
        "a start that gives up at its budget must still end inside the cell's time, with room "
        "for the rest of the start cell")


@pytest.mark.serial
@needs_ray
def test_a_failed_start_keeps_rays_logs_and_names_them(monkeypatch):
    import ray

    real = ray.init

    def init_then_fail(**kwargs):  # Ray starts (and writes logs), then the start is declared failed
        real(**kwargs)
        raise TimeoutError("injected: too slow")

    monkeypatch.setattr(ray, "init", init_then_fail)
    with pytest.raises(raylab.RayStartError) as info:
        raylab.start(num_cpus=1, attempts=1)
    message = str(info.value)
    kept = message.split("logs are kept in ", 1)[1].split(" ", 1)[0]
    try:
        assert os.path.isfile(os.path.join(kept, "raylet.out")), (
            f"the raylet's log is not where it says: {message}"
        )
        assert "not running then: none" in message, "every process was up when the start was failed"
    finally:
        shutil.rmtree(os.path.dirname(kept), ignore_errors=True)
    assert not ray.is_initialized(), "a failed start must shut Ray down"


@pytest.mark.serial
@needs_ray
def test_one_failed_start_is_tried_once_more_and_then_runs(monkeypatch):
    import ray

    calls = _failing_init(monkeypatch, fail_first=1)
    cluster = raylab.start(num_cpus=1)
    try:
        assert len(calls) == 2 and cluster.attempts == 2, "the second attempt must be the one that ran"
        assert cluster.failures and "injected start failure 1" in cluster.failures[0]
        assert raylab.get(ray.remote(lambda: "up").remote(), timeout=60) == "up"
    finally:
        raylab.stop(cluster)
    _no_session_left(cluster)


def test_removal_kills_a_stray_that_is_no_longer_our_descendant(temp_dir):
    import psutil

    # like an agent of a raylet that died: re-parented away from us, still writing into the session
    log = os.path.join(temp_dir, "ray", "agent.log")
    os.makedirs(os.path.dirname(log))
    code = f"import time; f = open({log!r}, 'a'); print('up', flush=True); time.sleep(60)"
    pid_file = os.path.join(temp_dir, "pid")
    subprocess.run(
        ["sh", "-c", f"{shlex.quote(sys.executable)} -c {shlex.quote(code)} "
         f"> {shlex.quote(pid_file + '.out')} & echo $! > {shlex.quote(pid_file)}"],
        check=True,
        timeout=30,
    )
    with open(pid_file) as f:
        stray = psutil.Process(int(f.read()))
    deadline = time.monotonic() + 30
    while not os.path.exists(log) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert stray.pid not in {p.pid for p in psutil.Process().children(recursive=True)}, "not a stray"
    try:
        raylab._remove(raylab.Cluster(temp_dir, 1))
        assert not stray.is_running() or stray.status() == psutil.STATUS_ZOMBIE, (
            "the stray outlived its session"
        )
    finally:
        with contextlib.suppress(psutil.Error):
            stray.kill()
    assert not os.path.exists(temp_dir), "the session folder is still there"


def test_only_what_rays_core_keeps_is_noted_after_a_stop(temp_dir, monkeypatch):
    """``stop`` notes the descriptors opened during the session and still open after it, of the
    kinds Ray's core keeps (event descriptors, a socket with nothing on it, a file in the session
    folder); anything else the session left open stays a leak for the audit."""
    import socket

    cluster = raylab.Cluster(temp_dir, 1, fds_before=raylab.open_descriptors())
    event = os.eventfd(0)
    idle = socket.socket()  # neither bound nor connected, like the one Ray's core keeps
    in_session = open(os.path.join(temp_dir, "core-worker.log"), "w")  # noqa: SIM115
    elsewhere_r, elsewhere_w = os.pipe()
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen()
    try:
        kept = raylab._kept_by_core(cluster)
        assert event in kept and idle.fileno() in kept and in_session.fileno() in kept, kept
        assert elsewhere_r not in kept and elsewhere_w not in kept, "a pipe is not Ray's core's"
        assert listening.fileno() not in kept, "a listening socket is never excused"
        monkeypatch.setattr(raylab, "_KEPT", dict(kept))
        os.close(event)
        assert event not in raylab.kept_descriptors(), "a closed descriptor is no longer excused"
    finally:
        for closer in (idle.close, in_session.close, listening.close,
                       lambda: os.close(elsewhere_r), lambda: os.close(elsewhere_w)):
            closer()


@needs_ray
def test_the_driver_is_on_loopback_only_while_ray_init_runs():
    from ray._private import ray_constants

    before = ray_constants.ENABLE_RAY_CLUSTER
    with raylab._driver_on_loopback():
        assert ray_constants.ENABLE_RAY_CLUSTER is False, (
            "while ray.init runs, the driver must pick the loopback address as its node's")
    assert ray_constants.ENABLE_RAY_CLUSTER == before, "the driver's flag must come back"


def test_the_monitors_metrics_port_is_picked_by_the_system(temp_dir):
    assert raylab.ray_environment(temp_dir)["AUTOSCALER_METRIC_PORT"] == "0", (
        "two local Rays at once would both want the monitor's fixed port 44217")


def _gone_within(folder: str, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while os.path.exists(folder) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not os.path.exists(folder)


def test_the_folder_of_a_killed_driver_is_removed_by_its_watcher():
    # what nbval does to a kernel whose cell outlived its budget: SIGKILL, no cleanup runs in it
    code = ("import sys, time\nfrom lab_snippets import raylab\nd = raylab.make_temp_dir()\n"
            "w = raylab.watch(d)\nprint(d, w.pid, flush=True)\ntime.sleep(60)\n")
    driver = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        folder, _ = driver.stdout.readline().split()
        assert os.path.isdir(folder), "the driver made no folder"
        assert _gone_within(folder, 2) is False, "the watcher removed the folder while its driver lived"
    finally:
        driver.kill()
        driver.wait(timeout=10)
        driver.stdout.close()
    assert _gone_within(folder, 15), f"a killed driver's session folder stayed behind: {folder}"


def test_a_release_after_the_removal_ends_the_watcher_at_once(temp_dir):
    watcher = raylab.watch(temp_dir)
    shutil.rmtree(temp_dir)
    t0 = time.monotonic()
    raylab.release(watcher, temp_dir)
    assert watcher.returncode == 0 and time.monotonic() - t0 < 3, "release must end the watcher promptly"


def test_a_release_before_the_removal_leaves_the_watcher_to_remove_it(temp_dir):
    watcher = raylab.watch(temp_dir)
    raylab.release(watcher, temp_dir)  # the folder is still there (a removal that gave up)
    try:
        assert _gone_within(temp_dir, 15), "the watcher did not remove a folder left after release"
    finally:
        watcher.wait(timeout=40)

"""A private, local Ray for one notebook: offline, fast to start, bounded, nothing left behind.

    from lab_snippets.raylab import local_ray, get, wait

    with local_ray(num_cpus=2) as cluster:     # ray.init; cluster.start_seconds says how long it took
        ref = square.remote(3)
        get(ref, timeout=10)                   # ray.get with a deadline, always
    # ray.shutdown() has run and Ray's temporary folder is gone

What the start does, and why:

- The course's four offline settings (``../shared/TOOLCHAIN.md``): ``RAY_USAGE_STATS_ENABLED=0``
  (no usage report), ``RAY_AUTH_MODE=disabled`` (no token written into ``~/.ray``),
  ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` (the node's address is 127.0.0.1, found without a route
  probe towards a public resolver), and ``HOME`` pointing at a private folder holding an empty
  ``ray_bootstrap_config.yaml`` (else the dashboard agent asks a cloud metadata address).
- Ray reads ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER`` once, when ``ray`` is imported
  (``ray._private.ray_constants.ENABLE_RAY_CLUSTER``), and a chapter imports ``ray`` before it
  starts it. Set only for ``ray.init``, the variable reached Ray's own processes but not the
  driver, which then chose the machine's outward address (192.0.2.2 on the course's machine, found
  by the route probe) for the node, and every Ray process listened on all interfaces. So the start
  also sets, for the driver and only while ``ray.init`` runs, the flag the variable would have set:
  the node is 127.0.0.1, and every process listens on loopback only (``ss -ltnp`` shows it).
- ``AUTOSCALER_METRIC_PORT=0``: the monitor's metrics server takes a port the system picks instead
  of the fixed 44217, so two local Rays at once (two chapters side by side) do not collide there;
  every other port Ray opens is picked the same way already.
- jsonschema's optional ``rfc3987_syntax`` import is kept out of every Ray process. Ray imports
  jsonschema, and jsonschema imports ``rfc3987_syntax``, which compiles a grammar at import (about
  0.8 s of CPU when the machine is quiet) for a string format Ray never checks. Every Python
  process Ray starts pays it: the driver, the monitor, the dashboard, the log monitor, the two
  agents and every worker. The raylet starts the agents and workers with its own environment,
  which it took from the driver, so the one lever that reaches all of them without touching the
  installation is that environment: ``PYTHONPATH`` gains a folder (inside the temporary folder)
  whose ``rfc3987_syntax.py`` raises ``ImportError`` at once, which jsonschema already expects
  when the package is not installed. The stub notes each process that skipped the import in
  ``skipped.txt`` beside it (``Cluster.skipped()``), so the fix can be checked, not assumed.
- The variables are set only while ``ray.init`` runs, then the kernel's own values come back; Ray's
  processes keep theirs.
- ``object_store_memory`` is ``OBJECT_STORE_BYTES`` (128 MiB) unless the caller gives one. Left to
  Ray, the store is 30% of the machine's memory (7.1 GB here), one file the raylet sizes with
  ``ftruncate`` and maps into every Ray process, the driver included: under the grading sandbox's
  limits (address space, file size) that start stalled. The chapters put only small objects.
- ``_temp_dir`` is a fresh short folder: Ray never deletes its ``session_*`` folders, and its Unix
  socket paths may not exceed 107 bytes, so a long ``TMPDIR`` is not used. The folder is removed
  after ``ray.shutdown()``.
- A driver that is killed cannot remove its folder, and nbval kills a kernel whose cell outlives
  its budget (60 s) and then ignores the interrupt for 5 s: measured under a bursty neighbour at
  load 19-30, two of five kernels killed in their start cell left their whole session folder
  (Ray's processes died with the kernel). So ``start`` also starts a watcher, a small process in
  a session of its own that reads a pipe from the driver: ``stop`` tells it the folder is gone and
  it exits at once; if the pipe ends without that word (the driver died), it removes the folder,
  again until it stays gone (Ray's processes may still write for a moment), for at most 30 s.
- The start is bounded by Ray's own deadlines, which make ``ray.init`` raise: the driver waits at
  most 30 s for the node to register once it has started Ray's processes (hard-coded in
  ``ray/_private/node.py``: "The current node timed out during startup"), and the raylet waits
  about 15 s for the dashboard agent's port file, then aborts (seen here under load without the
  fix: "Timed out waiting for file .../metrics_agent_port_..." in ``raylet.out``). That second
  deadline is the one a slow agent import misses, which is why the grammar matters more than its
  CPU seconds. A watchdog that kills a slow start from inside the kernel is no bound: the driver's
  GCS client then ends the whole process about 60 s later (measured: exit status 1 after "Failed
  to connect to GCS within 60 seconds"), and in a notebook that process is the kernel.
- A failed start is infrastructure, not a claim, so it may be tried once more, but only inside
  the start's budget (``START_BUDGET``, 40 s): nbval and the grader give each cell of a Ray
  chapter 60 s, and a start that outlives its cell is not reported as a failed start but as a
  cell timeout, after which the kernel is killed (nbval) or replaced with its names lost (the
  grader: every later test then fails with a ``NameError``). Each attempt is bounded only by
  Ray's deadlines above, so the next one is expected to take as long as the one that failed: it
  is made only when that much of the budget is left. Otherwise, and after a second failure,
  ``RayStartError`` says at once what did not start (the processes that were not running, the
  time each attempt took) and where Ray's logs were kept; the grader and the corpus report it as
  "Ray did not start" (``lab_snippets.labs.common.infrastructure_failure``), not as a wrong
  answer. Nothing else is ever retried: ``get`` and ``wait`` raise when their deadline passes.
- After ``ray.shutdown()`` no Ray process, Python thread or listening socket is left, but Ray's
  native core keeps about a dozen descriptors in the driver until the process exits (measured: 7
  event descriptors of its gRPC poller, 1 socket with no connection left on it, and the driver's 3
  log files, deleted with the session folder). ``stop`` records them (``kept_descriptors``): the
  descriptors opened while the session ran and still open after it, of those kinds only; the leak
  audit excuses exactly these, and names them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

OFFLINE_ENV = {
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_AUTH_MODE": "disabled",
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
}
EPHEMERAL_ENV = {"AUTOSCALER_METRIC_PORT": "0"}
STUB_MODULE = "rfc3987_syntax"
STUB_SOURCE = '''"""Stand-in for jsonschema's optional IRI grammar, put first on PYTHONPATH by raylab."""
import os
import sys

with open(os.path.join(os.path.dirname(__file__), "skipped.txt"), "a") as _f:
    _f.write(f"{os.getpid()} {' '.join(sys.argv)[:200]}\\n")
raise ImportError("rfc3987_syntax is skipped in this Ray session (lab_snippets.raylab)")
'''
# The watcher of one session folder (see the module's docstring): waits for the driver's pipe to
# end; "removed" first means the driver removed the folder itself.
WATCHER_SOURCE = """\
import os, shutil, sys, time
folder = os.environ["LAB_RAY_FOLDER"]
if sys.stdin.buffer.read() != b"removed":
    deadline, gone_since = time.monotonic() + 30, None
    while time.monotonic() < deadline:
        if os.path.exists(folder):
            shutil.rmtree(folder, ignore_errors=True)
            gone_since = None
        elif gone_since is None:
            gone_since = time.monotonic()
        elif time.monotonic() - gone_since > 1:
            break
        time.sleep(0.2)
"""
# The processes a started local Ray runs (``include_dashboard=False`` still runs the dashboard in
# minimal mode), each found by a piece of its command line.
EXPECTED = {
    "gcs_server": "gcs_server",
    "raylet": "raylet/raylet",
    "monitor": "monitor.py",
    "dashboard": "dashboard/dashboard.py",
    "log_monitor": "log_monitor.py",
    "dashboard agent": "dashboard/agent.py",
    "runtime-env agent": "runtime_env/agent/main.py",
}
OBJECT_STORE_BYTES = 128 << 20  # Ray's own minimum is 75 MiB
# Seconds a start may take in all, attempts included: nbval's cell budget for a chapter
# (pyproject.toml) and the grader's for a Ray chapter (labs.common.RAY_CELL_TIMEOUT) are 60 s,
# and the start cell needs the rest for its other lines and for a slow first import.
START_BUDGET = 40.0
_LONGEST_BASE = 16  # Ray's socket names under the session folder need the base path this short


class RayStartError(RuntimeError):
    """Ray did not start (within its attempts and its budget): an infrastructure failure, never a
    failed claim."""


@dataclass
class Cluster:
    """What ``local_ray`` started: where it lives and what its start cost."""

    temp_dir: str
    num_cpus: int
    start_seconds: float = 0.0
    attempts: int = 0
    stop_seconds: float = 0.0
    failures: list[str] = field(default_factory=list)
    fds_before: dict[int, str] = field(default_factory=dict)  # the driver's, before ray.init
    watcher: subprocess.Popen | None = None  # removes the folder if this driver dies first

    @property
    def ray_dir(self) -> str:
        return os.path.join(self.temp_dir, "ray")

    @property
    def stub_dir(self) -> str:
        return os.path.join(self.temp_dir, "py")

    def skipped(self) -> list[str]:
        """One line per process that skipped the grammar import: its pid and command line."""
        try:
            with open(os.path.join(self.stub_dir, "skipped.txt")) as f:
                return f.read().splitlines()
        except FileNotFoundError:
            return []


_MADE: list[str] = []  # every session folder this process made (the leak audit asks)


def session_folders() -> list[str]:
    """The session folders ``make_temp_dir`` made in this process that still exist."""
    return [d for d in _MADE if os.path.exists(d)]


def make_temp_dir() -> str:
    """A fresh folder short enough for Ray's Unix sockets, with the private HOME and the stub in it."""
    base = tempfile.gettempdir()
    temp_dir = tempfile.mkdtemp(prefix="lab-ray-", dir=base if len(base) <= _LONGEST_BASE else "/tmp")
    _MADE.append(temp_dir)
    os.mkdir(os.path.join(temp_dir, "home"))
    with open(os.path.join(temp_dir, "home", "ray_bootstrap_config.yaml"), "w") as f:
        f.write("{}\n")
    os.mkdir(os.path.join(temp_dir, "py"))
    with open(os.path.join(temp_dir, "py", STUB_MODULE + ".py"), "w") as f:
        f.write(STUB_SOURCE)
    return temp_dir


def ray_environment(temp_dir: str, skip_grammar: bool = True) -> dict[str, str]:
    """The variables Ray's processes start with: the offline settings and, by default, the stub."""
    env = dict(OFFLINE_ENV, **EPHEMERAL_ENV, HOME=os.path.join(temp_dir, "home"))
    if skip_grammar:
        rest = os.environ.get("PYTHONPATH")
        stub = os.path.join(temp_dir, "py")
        env["PYTHONPATH"] = stub + (os.pathsep + rest if rest else "")
    return env


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def ray_processes(temp_dir: str) -> list:
    """The live processes of the Ray session under ``temp_dir``: this process's children whose
    command line names the folder (gcs_server, raylet, monitor, dashboard, log monitor) and all
    their descendants (the agents and workers, which rename themselves ``ray::...``)."""
    import psutil

    out: dict[int, psutil.Process] = {}
    for child in psutil.Process().children():
        with contextlib.suppress(psutil.Error):
            if temp_dir in " ".join(child.cmdline()):
                for proc in (child, *child.children(recursive=True)):
                    out[proc.pid] = proc
    live = []
    for proc in out.values():
        with contextlib.suppress(psutil.Error):
            if proc.status() != psutil.STATUS_ZOMBIE:
                live.append(proc)
    return live


def _running(temp_dir: str) -> set[str]:
    import psutil

    names = set()
    for proc in ray_processes(temp_dir):
        with contextlib.suppress(psutil.Error):
            line = " ".join(proc.cmdline())
            names |= {name for name, piece in EXPECTED.items() if piece in line}
    return names


def _kill_all(temp_dir: str) -> None:
    import psutil

    for proc in ray_processes(temp_dir):
        with contextlib.suppress(psutil.Error):
            proc.kill()


@contextlib.contextmanager
def _driver_on_loopback() -> Iterator[None]:
    """The driver's copy of ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, read when ``ray`` was imported
    (see the module's docstring): off while ``ray.init`` runs, then as it was."""
    from ray._private import ray_constants

    saved = ray_constants.ENABLE_RAY_CLUSTER
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = saved


def _start_once(cluster: Cluster, init_kwargs: dict) -> None:
    """One ``ray.init``; on failure Ray is shut down and ``RayStartError`` names what was not running."""
    import ray

    try:
        with _driver_on_loopback():
            ray.init(**init_kwargs)
    except Exception as exc:  # noqa: BLE001 - whatever Ray raised, the start failed
        missing = sorted(set(EXPECTED) - _running(cluster.temp_dir)) or ["none"]
        with contextlib.suppress(Exception):
            ray.shutdown()
        raise RayStartError(
            f"{type(exc).__name__}: {str(exc)[:300]} (not running then: {', '.join(missing)})"
        ) from exc


def _keep_logs(cluster: Cluster) -> str:
    """Copy the failed session's logs out of the folder about to be removed; say where."""
    logs = os.path.join(cluster.ray_dir, "session_latest", "logs")
    if not os.path.isdir(logs):
        return "nowhere: Ray wrote no logs (no process of it started)"
    kept = os.path.join(tempfile.mkdtemp(prefix="lab-ray-logs-", dir="/tmp"), "logs")
    shutil.copytree(logs, kept)
    return (
        f"in {kept} (raylet.out, gcs_server.out, dashboard_agent.log, runtime_env_agent.log; "
        "remove the folder when done)"
    )


def start(
    num_cpus: int = 2,
    num_gpus: int = 0,
    attempts: int = 2,
    skip_grammar: bool = True,
    budget: float | None = START_BUDGET,
    **init_kwargs,
) -> Cluster:
    """Start a private local Ray (see the module's docstring); ``stop(cluster)`` undoes it.

    A failed attempt is followed by another only while ``attempts`` allows it and the ``budget``
    (seconds, attempts included; ``None``: no budget) has as much time left as the failed attempt
    took; otherwise ``RayStartError`` is raised at once."""
    import ray

    if ray.is_initialized():
        raise RuntimeError("Ray is already running in this process; stop it first")
    # logging_level: the driver's "Started a local Ray instance" and other INFO lines stay out of
    # the page (a warning still shows)
    kwargs = dict(num_cpus=num_cpus, num_gpus=num_gpus, include_dashboard=False, log_to_driver=False,
                  logging_level=logging.WARNING, object_store_memory=OBJECT_STORE_BYTES)
    kwargs.update(init_kwargs)
    failures: list[str] = []
    began = time.monotonic()
    for attempt in range(1, attempts + 1):
        cluster = Cluster(make_temp_dir(), num_cpus, attempts=attempt, failures=failures,
                          fds_before=open_descriptors())
        cluster.watcher = watch(cluster.temp_dir)
        t0 = time.perf_counter()
        try:
            with _environment(ray_environment(cluster.temp_dir, skip_grammar)):
                _start_once(cluster, dict(kwargs, _temp_dir=cluster.ray_dir))
        except RayStartError as exc:
            took = time.perf_counter() - t0
            failures.append(f"attempt {attempt} failed after {took:.1f} s: {exc}")
            left = None if budget is None else budget - (time.monotonic() - began)
            if attempt == attempts:
                _give_up(cluster, failures, f"Ray did not start in {attempts} attempts", exc)
            if left is not None and left < took:
                _give_up(cluster, failures, f"Ray did not start within its {budget:.0f} s budget, "
                         f"and another attempt would not fit in the {max(left, 0):.1f} s left", exc)
            _remove(cluster)
            continue
        except BaseException:  # an interrupt mid-start: nothing of this session may stay behind
            with contextlib.suppress(Exception):
                ray.shutdown()
            _remove(cluster)
            raise
        cluster.start_seconds = time.perf_counter() - t0
        return cluster
    raise AssertionError("unreachable")


def _give_up(cluster: Cluster, failures: list[str], headline: str, exc: BaseException) -> None:
    logs = _keep_logs(cluster)
    _remove(cluster)
    raise RayStartError(f"{headline}: {'; '.join(failures)}. Ray's logs are kept {logs}") from exc


def _strays(temp_dir: str) -> list:
    """Processes anywhere holding a file under ``temp_dir``: the agents of a raylet that died are
    re-parented away from this process, and go on writing into the session folder for a moment."""
    import psutil

    out = []
    for proc in psutil.process_iter():
        if proc.pid == os.getpid():  # the driver keeps Ray's log files open until it exits
            continue
        with contextlib.suppress(psutil.Error):
            if any(f.path.startswith(temp_dir + os.sep) for f in proc.open_files()):
                out.append(proc)
    return out


def watch(temp_dir: str) -> subprocess.Popen:
    """Start the watcher of ``temp_dir``: it removes the folder if this process dies before
    ``release`` (in a session of its own, so a kill of the driver's process group spares it). The
    folder is in its environment, not its command line, so ``ray_processes`` does not count it."""
    return subprocess.Popen([sys.executable, "-I", "-c", WATCHER_SOURCE], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            env={"LAB_RAY_FOLDER": temp_dir})


def release(watcher: subprocess.Popen, temp_dir: str) -> None:
    """End the watcher: at once when ``temp_dir`` is gone; else it goes on removing it by itself."""
    removed = not os.path.exists(temp_dir)
    with contextlib.suppress(OSError):
        if removed:
            watcher.stdin.write(b"removed")
        watcher.stdin.close()
    if removed:
        try:
            watcher.wait(timeout=5)
        except subprocess.TimeoutExpired:
            watcher.kill()
            watcher.wait()


def _remove(cluster: Cluster, patience: float = 15.0) -> None:
    """Kill what is left of the session (descendants, then strays) and remove its folder for good."""
    import psutil

    deadline = time.monotonic() + patience
    while True:
        procs = ray_processes(cluster.temp_dir) + _strays(cluster.temp_dir)
        for proc in procs:
            with contextlib.suppress(psutil.Error):
                proc.kill()
        psutil.wait_procs(procs, timeout=5)
        shutil.rmtree(cluster.temp_dir, ignore_errors=True)
        time.sleep(0.2)  # a process that was exiting may still create a file; look again
        if not os.path.exists(cluster.temp_dir) or time.monotonic() > deadline:
            break
    if cluster.watcher is not None:
        release(cluster.watcher, cluster.temp_dir)


def stop(cluster: Cluster) -> None:
    """``ray.shutdown()``, then the session's folder is removed and what Ray's core kept is noted."""
    import ray

    t0 = time.perf_counter()
    ray.shutdown()
    cluster.stop_seconds = time.perf_counter() - t0
    _remove(cluster)
    _KEPT.update(_kept_by_core(cluster))


def open_descriptors() -> dict[int, str]:
    """This process's open file descriptors: fd -> target (as ``/proc/self/fd`` names it)."""
    out = {}
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the listing's own descriptor, closed already
            out[int(name)] = os.readlink(f"/proc/self/fd/{name}")
    return out


# The kinds of descriptor Ray's native core keeps in the driver after ray.shutdown(), until exit.
_CORE_KINDS = ("anon_inode:[eventfd]", "anon_inode:[eventpoll]", "anon_inode:[timerfd]")
_KEPT: dict[int, str] = {}


def _kept_by_core(cluster: Cluster) -> dict[int, str]:
    """The descriptors opened while ``cluster`` ran and still open after its shutdown that are of
    the kinds Ray's core keeps: its poller's event descriptors, a socket with no connection left on
    it, and a file inside the session folder (deleted with it)."""
    import psutil

    connected = {c.fd for c in psutil.Process().net_connections("all") if c.fd != -1 and (c.laddr or c.raddr)}
    kept = {}
    for fd, target in open_descriptors().items():
        if cluster.fds_before.get(fd) == target:
            continue
        if (target in _CORE_KINDS or (target.startswith("socket:") and fd not in connected)
                or target.startswith(cluster.temp_dir + os.sep)):
            kept[fd] = target
    return kept


def kept_descriptors() -> dict[int, str]:
    """The descriptors Ray's core kept in this process after every ``stop`` so far, that are still
    open on the same target: the leak audit's one exception (``lab_snippets.testing.audit``)."""
    now = open_descriptors()
    return {fd: target for fd, target in _KEPT.items() if now.get(fd) == target}


@contextlib.contextmanager
def local_ray(num_cpus: int = 2, num_gpus: int = 0, **init_kwargs) -> Iterator[Cluster]:
    """``start`` on entry, ``stop`` on exit, whatever the block raised."""
    cluster = start(num_cpus=num_cpus, num_gpus=num_gpus, **init_kwargs)
    try:
        yield cluster
    finally:
        stop(cluster)


def get(refs, timeout: float):
    """``ray.get`` that always has a deadline: ``GetTimeoutError`` when it passes, never a retry."""
    import ray

    if timeout is None or timeout <= 0:
        raise ValueError("get needs a positive timeout")
    return ray.get(refs, timeout=timeout)


def wait(refs: list, num_returns: int = 1, timeout: float | None = None):
    """``ray.wait`` with a deadline (``timeout=0`` polls): returns (ready, not ready) as Ray does."""
    import ray

    if timeout is None or timeout < 0:
        raise ValueError("wait needs a timeout (0 polls)")
    return ray.wait(list(refs), num_returns=num_returns, timeout=timeout)


if __name__ == "__main__":  # a quick manual check: python -m lab_snippets.raylab
    with local_ray() as c:
        print(f"started in {c.start_seconds:.1f} s; skipped the grammar: {len(c.skipped())} processes")

"""A private, local Ray for one notebook: loopback only, out of the real home, nothing left behind.

    from lab_snippets.raylab import LocalRay

    cluster = LocalRay(num_cpus=2).start()    # about 6-9 s on a busy 2-core machine
    ...                                       # ray.remote, ray.get, await ref, actors
    cluster.stop()                            # ray.shutdown(), then its session directory is removed

What ``start()`` does, and why:

- ``RAY_USAGE_STATS_ENABLED=0``: no usage report is sent.
- ``RAY_AUTH_MODE=disabled``: Ray would otherwise write a token into ``~/.ray``.
- ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``: the node address is found without probing a route to
  a public resolver.
- ``RAY_agent_register_timeout_ms=120000``: the raylet waits up to two minutes, not Ray's
  default, for its dashboard agent to start; on a busy machine the agent can be slow to import.
- ``HOME`` is a private folder holding an empty ``ray_bootstrap_config.yaml`` while Ray starts:
  without that file the dashboard agent asks a cloud metadata address which cloud it is on.
  The kernel's own ``HOME`` is put back as soon as Ray is up (Ray's processes keep the private one).
- ``_temp_dir`` is a fresh temporary folder: Ray never deletes its ``session_*`` folders itself,
  so ``stop()`` removes the whole folder after ``ray.shutdown()``. Ray puts Unix sockets in it,
  whose paths may not exceed 107 bytes, so when ``TMPDIR`` is long (the test run gives each
  notebook its own) the folder is made under ``/tmp`` instead.

After ``ray.shutdown()`` every Ray process is gone, but Ray's native core (gRPC and its event
engine) keeps a few descriptors and native threads in the driver until the driver process
exits. ``stop()`` hands exactly those descriptors to the leak audit as a documented exception
(``lab_snippets.testing.audit.tolerate``, when the audit runs in this process); native threads are not Python threads, so the audit does not
see them anyway. Anything else left behind (a process, a Python thread, a task, another socket)
is still reported.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field

ENV = {
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_AUTH_MODE": "disabled",
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    # The raylet waits this long for its dashboard agent (a Python process) to report its ports; a
    # busy laptop can take longer than Ray's default, and the raylet then aborts the whole start.
    "RAY_agent_register_timeout_ms": "120000",
}


def _fds() -> dict[int, str]:
    out = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            out[int(name)] = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            pass
    return out


@dataclass
class LocalRay:
    """One local Ray cluster for the lifetime of a notebook (or a ``with`` block)."""

    num_cpus: int = 2
    num_gpus: int = 0
    start_seconds: float = 0.0
    stop_seconds: float = 0.0
    temp_dir: str = ""
    _fds_before: dict[int, str] = field(default_factory=dict, repr=False)
    _fds_started: dict[int, str] = field(default_factory=dict, repr=False)

    def start(self) -> LocalRay:
        import ray

        if ray.is_initialized():
            raise RuntimeError("Ray is already running in this process; stop it first")
        base = tempfile.gettempdir()
        self.temp_dir = tempfile.mkdtemp(prefix="lab-ray-", dir=base if len(base) <= 16 else "/tmp")
        home = os.path.join(self.temp_dir, "home")
        os.mkdir(home)
        with open(os.path.join(home, "ray_bootstrap_config.yaml"), "w") as f:
            f.write("{}\n")
        saved = {k: os.environ.get(k) for k in (*ENV, "HOME")}
        os.environ.update(ENV, HOME=home)
        self._fds_before = _fds()
        t0 = time.perf_counter()
        try:
            ray.init(num_cpus=self.num_cpus, num_gpus=self.num_gpus, include_dashboard=False,
                     log_to_driver=False, _node_ip_address="127.0.0.1",
                     _temp_dir=os.path.join(self.temp_dir, "ray"))
            self._fds_started = _fds()
        except BaseException:
            self._cleanup()
            raise
        finally:
            self.start_seconds = time.perf_counter() - t0
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        return self

    def stop(self) -> None:
        import ray

        t0 = time.perf_counter()
        ray.shutdown()
        self.stop_seconds = time.perf_counter() - t0
        self._cleanup()

    def _cleanup(self) -> None:
        # Only what Ray itself opened while starting (new then, and the very same now) is excused,
        # and only to a leak audit running in this process (the test run's; students have none).
        left = {fd: target for fd, target in _fds().items()
                if self._fds_before.get(fd) != target and self._fds_started.get(fd) == target}
        audit = sys.modules.get("lab_snippets.testing.audit")
        if left and audit is not None:
            audit.tolerate(left, "kept by Ray's native core in the driver until the process exits")
        if self.temp_dir:
            shutil.rmtree(self.temp_dir, ignore_errors=True)

    def __enter__(self) -> LocalRay:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

"""A local Ray started by `LocalRay` stays on loopback and out of the real home, and leaves nothing behind."""

import os

import psutil
import pytest

ray = pytest.importorskip("ray")

from lab_snippets.raylab import ENV, LocalRay  # noqa: E402
from lab_snippets.testing import audit  # noqa: E402


@pytest.mark.slow
def test_local_ray_runs_a_task_and_leaves_no_process_dir_or_unexcused_fd():
    home_before = os.environ.get("HOME")
    env_before = {k: os.environ.get(k) for k in ENV}
    before = audit.snapshot()
    children_before = {p.pid for p in psutil.Process().children(recursive=True)}
    try:
        with LocalRay(num_cpus=1) as cluster:
            @ray.remote
            def double(x):
                return 2 * x

            assert ray.get([double.remote(i) for i in range(3)], timeout=60) == [0, 2, 4]
            assert os.environ.get("HOME") == home_before, "the kernel's HOME is restored once Ray is up"
            node_ip = ray.util.get_node_ip_address()
            assert node_ip == "127.0.0.1", node_ip
            assert psutil.Process().children(recursive=True), "Ray's processes run while it is up"
        assert not os.path.exists(cluster.temp_dir), "the session directory is removed"
        left = [p for p in psutil.Process().children(recursive=True) if p.pid not in children_before]
        assert not left, f"Ray processes left after stop(): {left}"
        assert {k: os.environ.get(k) for k in ENV} == env_before
        found = audit.leaks(before)
        assert not found, found
    finally:
        audit._tolerated.clear()

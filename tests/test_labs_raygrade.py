"""``raygrade.sweep_orphans``: the folders of grading tasks whose worker died before its own
cleanup (a node removed while the task was starting) are removed, with what still runs in them;
the folders of live workers, of other hosts and of other programs are not touched."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psutil

from lab_snippets.labs import raygrade


def _dead_owner_prefix() -> str:
    """The folder prefix a worker that has exited would have used."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        prefix = raygrade._owner_prefix(child.pid)
    finally:
        child.kill()
        child.wait(timeout=30)
    return prefix


def test_a_dead_workers_folder_and_its_processes_go_and_nothing_else(tmp_path):
    """Counterfactuals: a sweep that judges every folder (the live one goes), one that removes the
    folder but leaves its process (the sleeper survives), one that ignores the host (the other
    host's folder goes)."""
    orphan = tmp_path / (_dead_owner_prefix() + "abc_123")
    live = tmp_path / (raygrade._owner_prefix() + "def456")
    other_host = tmp_path / f"{raygrade.FOLDER_PREFIX}elsewhere-{os.getpid()}-1-ghi789"
    unnamed = tmp_path / f"{raygrade.FOLDER_PREFIX}jkl012"
    for f in (orphan, live, other_host, unnamed):
        f.mkdir()
        (f / "spec.json").write_text("{}")
    sleeper = subprocess.Popen([sys.executable, "-c", "import time, sys; time.sleep(60)",
                                str(orphan / "spec.json")])
    try:
        removed = raygrade.sweep_orphans(str(tmp_path))
        assert removed == [orphan.name], removed
        assert not orphan.exists(), "the dead worker's folder is still there"
        assert sleeper.wait(timeout=10) is not None, "a process in the dead worker's folder still runs"
        assert all(f.exists() for f in (live, other_host, unnamed)), \
            "a folder of a live worker, another host or no named worker was removed"
    finally:
        if sleeper.poll() is None:
            sleeper.kill()
        sleeper.wait(timeout=30)


def test_a_reused_pid_is_not_its_old_worker():
    """Counterfactual: an owner judged by pid alone (a new process with the old pid keeps the dead
    worker's folder forever)."""
    me = psutil.Process()
    name = f"{raygrade.FOLDER_PREFIX}{raygrade.socket.gethostname()}-{me.pid}-" \
           f"{int(me.create_time() * 100) - 1}-xyz"
    assert not raygrade._owner_alive(name)
    assert raygrade._owner_alive(raygrade._owner_prefix() + "xyz")
    assert raygrade._owner_alive(Path(name).name.replace(str(me.pid), "notapid", 1))


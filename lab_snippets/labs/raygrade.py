"""``grade --ray ADDRESS``: each submission one Ray task, on a node that passed the sandbox probe.

The task boundary is the grading of one submission (``grader._grade_one``, unchanged). Its inputs
travel by value (the submission's bytes, the instructor notebook's, a snapshot of the gradebook,
put once), and so does its result (the row's fields and the autograded notebook's bytes): a task
writes nothing shared, so a retry is safe, and the driver stays the only writer of
``gradebook.db``, the CSV and the journal (``labs.journal``), which it writes as each result
arrives (``ray.wait``, completion order).

Ray isolates nothing: the sandbox is still bubblewrap, on every node. A node takes grading work
only if it advertises ``RESOURCE`` (``lab_bwrap``), which ``node_resources`` gives only after
``sandbox.detect_isolation`` passed on that node (``python -m lab_snippets.labs node-resources``
prints the ``ray start --resources`` value, or fails with the fix); every task requires it. A
Ray chapter also requires ``ALONE`` (one a node, so one Ray chapter a node at a time, as
``book.chapters.runs_alone`` rules the test phases), and asks for two CPUs.

Each task runs in a fresh worker process (``max_calls=1``); a lost worker or node is retried
once (``max_retries=1``), a Python exception never (``retry_exceptions=False``: a student's
error is a grade, and ``_grade_one`` turns every exception into a row). A task grades inside
``sandbox.reaped`` (a process in a session of its own, like ``raylab.watch``, that kills the
grading processes and removes the task's folder if the task's worker dies before it finishes):
a removed node or a killed driver leaves no sandbox behind. The reaper cannot cover the moment
between the folder's creation and its own start (Ray kills a dying worker's children, and the
reaper is one until it forks), so a task's folder is named after its worker (host, pid, start
time, in few characters: ``_owner_prefix``): ``sweep_orphans`` removes the folders whose worker
is gone, and kills what still runs in them. Every task sweeps its machine first, and the driver,
after the last result, runs one sweep on every live node that grades. A node whose temp dir is too
long for a kernel's unix sockets (``SOCKET_PATH_MAX``) advertises nothing, and a task there fails
with the fix (``check_temp_dir``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import re
import shutil
import socket
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lab_snippets.book.chapters import runs_alone
from lab_snippets.labs import journal, sandbox
from lab_snippets.labs.common import REPO, LabError
from lab_snippets.labs.spec import Options

RESOURCE = "lab_bwrap"        # a node whose sandbox probe passed: how many gradings at once
ALONE = "lab_ray_chapter"     # one a node: one Ray chapter a node at a time
# Chapters whose claims need two cores to themselves besides the Ray chapters: chapter 12
# measures two pinned processes running at once.
TWO_CORES = ("12",)
FOLDER_PREFIX = "labs-ray-"   # a grading task's private folder in its node's temp dir
# A submission's kernel talks to its grader over unix sockets in the sandbox's folder:
# TMP/labs-grade-XXXXXXXX/box/k-N (``grader._grade_one``'s folder, ``worker.SandboxKernelManager``;
# N is jupyter_client's first free number from 1, one per channel: 1 to 5, more only while an
# earlier kernel's files remain, counted here as two digits). Linux holds a socket's path in 108
# bytes with its NUL, and a longer one fails every submission with "File name too long" from zmq.
SOCKET_PATH_MAX = 107
PID_MAX = 2 ** 22  # the largest pid Linux gives (kernel.pid_max's ceiling)
KERNEL_SOCKET_TAIL = len("/labs-grade-XXXXXXXX/box/k-99")
STALL_SLACK = 300             # s beyond the submission limit with no result: the cluster is stuck


def socket_room(tmp: str | None = None, task_folder: bool = False) -> int:
    """Bytes to spare in the longest kernel socket path a grading under temp dir ``tmp`` makes
    (``task_folder``: inside a Ray task's folder there); negative: that path is too long."""
    tmp = os.path.abspath(tmp or tempfile.gettempdir())
    folder = len(os.sep + _owner_prefix()) + 8 if task_folder else 0  # mkdtemp adds 8 characters
    return SOCKET_PATH_MAX - (len(tmp) + folder + KERNEL_SOCKET_TAIL)


def check_temp_dir(tmp: str | None = None, task_folder: bool = False) -> None:
    """``LabError`` naming the fix when kernels graded under ``tmp`` could not open their sockets."""
    room = socket_room(tmp, task_folder)
    if room < 0:
        tmp = os.path.abspath(tmp or tempfile.gettempdir())
        raise LabError(f"the temp dir {tmp} ({len(tmp)} characters) is {-room} too long: a "
                       f"grading kernel's unix socket paths under it would pass Linux's "
                       f"{SOCKET_PATH_MAX}-byte limit; set TMPDIR to a shorter folder (e.g. /tmp)"
                       + (" on this node before `ray start`" if task_folder else ""))


def node_resources(cpus: int | None = None, opts: Options | None = None,
                   strict: bool = False) -> dict[str, float]:
    """The custom resources this machine may advertise: ``{}`` unless the sandbox probe passes
    and a task's kernels have room for their sockets in the temp dir (``strict``: the
    ``LabError``, which names the fix, instead of ``{}``)."""
    try:
        check_temp_dir(task_folder=True)
        sandbox.detect_isolation([REPO], opts or Options())
    except LabError:
        if strict:
            raise
        return {}
    return {RESOURCE: float(cpus or os.cpu_count() or 1), ALONE: 1.0}


def cpus_for(nbname: str) -> int:
    """CPUs one grading of ``nbname`` asks for: two for a Ray chapter or a two-core claim."""
    return 2 if runs_alone(Path(f"{nbname}.py")) or nbname[:2] in TWO_CORES else 1


def _gradebook_bytes(course_dir: Path) -> bytes:
    """A consistent snapshot of the master gradebook (sqlite's backup), as bytes."""
    with tempfile.TemporaryDirectory(prefix="labs-gb-") as tmp:
        src, dst = sqlite3.connect(course_dir / "gradebook.db"), sqlite3.connect(Path(tmp) / "g.db")
        with dst:
            src.backup(dst)
        src.close()
        dst.close()
        return (Path(tmp) / "g.db").read_bytes()


def grade_task(payload: dict[str, Any], gradebook: bytes, grade_one: Callable) -> dict[str, Any]:
    """One submission, graded on this node in a private folder by ``grade_one`` (the grader's
    ``_grade_one``, which Ray pickles by reference); returns the result by value."""
    sweep_orphans()
    check_temp_dir(task_folder=True)  # a clear error, not "nbgrader could not grade" on every row
    folder = tempfile.mkdtemp(prefix=_owner_prefix())
    os.chmod(folder, 0o711)  # a per-submission uid (root grading) must traverse to its box
    tempfile.tempdir = folder  # this worker grades one submission (max_calls=1), then exits
    with sandbox.reaped(folder):
        try:
            return _grade_in(folder, payload, gradebook, grade_one)
        finally:
            tempfile.tempdir = None
            shutil.rmtree(folder, ignore_errors=True)


def _host_tag() -> str:
    """This host in six characters (a cloud host name alone can be 40: see ``SOCKET_PATH_MAX``)."""
    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:6]


_BASE36 = re.compile(r"[0-9a-z]{1,13}")


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, d = divmod(n, 36)
        out = digits[d] + out
        if not n:
            return out


def _owner_prefix(pid: int | None = None) -> str:
    """``labs-ray-HOST-PID-START-``: the folder's worker, by host (``_host_tag``), pid and start
    time in hundredths of a second (both base 36; a reused pid has another start time)."""
    import psutil

    proc = psutil.Process(pid)
    return (f"{FOLDER_PREFIX}{_host_tag()}-{_base36(proc.pid)}-"
            f"{_base36(int(proc.create_time() * 100))}-")


def _owner_alive(name: str) -> bool:
    """Whether the worker a folder's name names still runs (a folder of another host, or not named
    after its worker, counts as alive: not this sweep's to judge)."""
    import psutil

    head, pid, start, _ = (name[len(FOLDER_PREFIX):].rsplit("-", 3) + ["", "", ""])[:4]
    if head != _host_tag() or not (_BASE36.fullmatch(pid) and _BASE36.fullmatch(start)):
        return True
    pid_n, start_n = int(pid, 36), int(start, 36)
    if not 0 < pid_n <= PID_MAX:
        return True
    try:
        return int(psutil.Process(pid_n).create_time() * 100) == start_n
    except psutil.Error:
        return False


def sweep_orphans(tmp: str | None = None) -> list[str]:
    """Remove the grading folders in ``tmp`` (the temp dir) whose worker is gone, killing first any
    process whose command line names one; returns the names removed."""
    import psutil

    root = Path(tmp or tempfile.gettempdir())
    orphans = [f for f in root.glob(f"{FOLDER_PREFIX}*") if not _owner_alive(f.name)]
    if not orphans:
        return []
    procs = []
    for p in psutil.process_iter(["cmdline"]):
        with contextlib.suppress(psutil.Error):
            if any(str(f) in a for f in orphans for a in p.info["cmdline"] or []):
                procs.append(p)
    for p in procs:
        with contextlib.suppress(psutil.Error):
            p.kill()
    psutil.wait_procs(procs, timeout=5)
    for f in orphans:
        shutil.rmtree(f, ignore_errors=True)
    return [f.name for f in orphans]


def _sweep_nodes(ray: Any, timeout: float = 30.0) -> None:
    """One ``sweep_orphans`` on every live node that grades (the folders a removed node's task left
    on a machine that still runs a node); a node that does not answer in ``timeout`` is skipped.

    A sweep still running then is left to end by itself (it is bounded: ``wait_procs`` 5 s), never
    cancelled: Ray 2.x's driver aborts when the reply of a task it force-cancelled arrives
    afterwards (``task_manager.cc``: "Tried to complete task that was not pending"), which ended
    ``labs grade --ray`` with exit code 1 after every row was graded (a sweep's worker slow to start
    on a loaded machine, or a node just removed)."""
    from ray.util import scheduling_strategies as strategies

    sweep = ray.remote(num_cpus=0, max_retries=0)(sweep_orphans)
    on_node = strategies.NodeAffinitySchedulingStrategy  # this node only: soft=False below
    refs = [sweep.options(scheduling_strategy=on_node(n["NodeID"], soft=False)).remote()
            for n in _eligible(ray)]
    with contextlib.suppress(Exception):
        ray.wait(refs, num_returns=len(refs), timeout=timeout)


def _grade_in(folder: str, payload: dict[str, Any], gradebook: bytes,
              grade_one: Callable) -> dict[str, Any]:
    """``grade_task``'s work, in its private ``folder``."""
    import ray

    a, nbname = payload["assignment"], payload["notebook"]
    course = Path(folder) / "course"
    (course / "source" / a).mkdir(parents=True)
    (course / "source" / a / f"{nbname}.ipynb").write_bytes(payload["instructor"])
    (course / "gradebook.db").write_bytes(gradebook)
    sub = Path(folder) / "submitted" / payload["student"] / a / f"{nbname}.ipynb"
    sub.parent.mkdir(parents=True)
    sub.write_bytes(payload["submission"])
    opts = Options(**payload["options"])
    row = payload["row"]  # the driver's row, by value (its path is the driver's: replaced)
    row.path = sub
    isolation = sandbox.Isolation(sandbox.privileged(), f"node passed the probe ({RESOURCE})")
    grade_one(row, course, {a: (nbname, payload["cells"])}, isolation,
              [REPO, course, sub.parent.parent.parent], opts)
    graded = course / "autograded" / row.student / a / f"{nbname}.ipynb"
    return {"row": journal.row_fields(row), "node": ray.get_runtime_context().get_node_id(),
            "autograded": graded.read_bytes() if graded.exists() else None,
            "version": journal.grading_version(payload["instructor"], opts)}


@dataclass
class Submission:
    """A pending row with its task's payload and the journal version it must come back with."""

    row: Any
    payload: dict[str, Any]
    version: str
    autograded: Path     # where the driver writes the autograded notebook it gets back
    node: str = ""       # the node that graded it (journaled beside the row)


def _submissions(rows: list, course_dir: Path, assignments: dict, opts: Options) -> list[Submission]:
    out, instructors = [], {}
    for row in rows:
        nbname, cells = assignments[row.assignment]
        if row.assignment not in instructors:
            instructors[row.assignment] = (course_dir / "source" / row.assignment
                                           / f"{nbname}.ipynb").read_bytes()
        inst = instructors[row.assignment]
        payload = {"row": dataclasses.replace(row, path=None), "student": row.student,
                   "assignment": row.assignment, "notebook": nbname,
                   "cells": cells, "submission": row.path.read_bytes(), "instructor": inst,
                   "options": asdict(opts)}
        dest = course_dir / "autograded" / row.student / row.assignment / f"{nbname}.ipynb"
        out.append(Submission(row, payload, journal.grading_version(inst, opts), dest))
    return out


def _eligible(ray: Any) -> list[dict]:
    return [n for n in ray.nodes() if n.get("Alive") and n["Resources"].get(RESOURCE)]


def _answers(address: str, timeout: float = 10.0) -> None:
    """Fail at once, naming the fix, when nothing listens at a cluster's ``host:port``:
    ``ray.init`` retries such an address for minutes (over 200 s measured with Ray 2.60.0)."""
    import socket

    hostport = address.split("://", 1)[-1].rsplit("/", 1)[0]
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        return  # not host:port (Ray decides what it means)
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise LabError(f"--ray {address}: no Ray cluster answers there ({exc}); start one with "
                       f"`ray start --head` on that machine, or check the address") from None


@contextlib.contextmanager
def connected(address: str) -> Iterator[Any]:
    """``ray.init(address)`` for the driver (offline settings; a loopback cluster stays on it),
    shut down on exit unless this process was connected already."""
    import logging

    import ray

    from lab_snippets import raylab

    if ray.is_initialized():
        yield ray
        return
    if address == "auto":  # the cluster Ray's "auto" finds (RAY_ADDRESS first), as an address:
        # ray.init("auto") turns a loopback address into the machine's outward one, where a
        # cluster on loopback does not listen, and retries it without end
        from ray._private import services
        try:
            address = services.get_ray_address_from_environment("auto", None)
        except ConnectionError as exc:
            raise LabError(f"--ray auto: {exc}") from None
    _answers(address)
    loopback = address.startswith(("127.", "localhost"))
    with raylab._environment(dict(raylab.OFFLINE_ENV)), \
            (raylab._driver_on_loopback() if loopback else contextlib.nullcontext()):
        ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


def grade_on_cluster(address: str, rows: list, course_dir: Path, assignments: dict,
                     opts: Options, finished: Callable[[Any, int, str], None],
                     log: Callable[[str], object], grade_one: Callable) -> None:
    """Grade ``rows`` as Ray tasks, each by ``grade_one`` on a node; call ``finished(row, slots,
    node)`` as each result arrives."""
    with connected(address) as ray:
        nodes = _eligible(ray)
        if not nodes:
            raise LabError(f"no node of the Ray cluster at {address} advertises {RESOURCE!r}: no "
                           "node passed the sandbox probe (start each node with `ray start "
                           "--resources \"$(python -m lab_snippets.labs node-resources)\"`)")
        slots = int(sum(min(n["Resources"].get("CPU", 0), n["Resources"][RESOURCE]) for n in nodes))
        biggest = max(int(n["Resources"].get("CPU", 1)) for n in nodes)
        log(f"Ray: {len(nodes)} node(s) passed the sandbox probe, {slots} grading slot(s)")
        if not rows:
            return
        gradebook = ray.put(_gradebook_bytes(course_dir))
        # a fresh worker per submission; a lost worker or node retried once, an exception never
        task = ray.remote(max_calls=1, max_retries=1, retry_exceptions=False)(grade_task)
        refs = {}
        for s in _submissions(rows, course_dir, assignments, opts):
            nbname = s.payload["notebook"]
            resources = {RESOURCE: 1.0, **({ALONE: 1.0} if runs_alone(Path(f"{nbname}.py")) else {})}
            ref = task.options(num_cpus=min(cpus_for(nbname), biggest), memory=opts.memory_mb << 20,
                               resources=resources, name=f"grade {s.row.student}/{s.row.assignment}",
                               ).remote(s.payload, gradebook, grade_one)
            refs[ref] = s
        try:
            _collect(ray, refs, opts, lambda sub: finished(sub.row, slots, sub.node))
        finally:
            _sweep_nodes(ray)


def _collect(ray: Any, refs: dict, opts: Options, finished: Callable[[Any], None]) -> None:
    """Each result as it arrives; cancel what is left if nothing arrives for too long."""
    pending, last = list(refs), time.monotonic()
    try:
        while pending:
            ready, pending = ray.wait(pending, num_returns=1, timeout=5)
            for ref in ready:
                s = refs[ref]
                _apply(s, _result(ray, ref))
                finished(s)
                last = time.monotonic()
            if pending and time.monotonic() - last > opts.submission_timeout + STALL_SLACK:
                for ref in pending:
                    s = refs[ref]
                    s.row.status, s.row.reason = "error", (
                        "not graded: no result from the Ray cluster within "
                        f"{opts.submission_timeout + STALL_SLACK}s (no node could take it?)")
                    finished(s)
                break
    finally:
        for ref in pending:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)


def _result(ray: Any, ref: Any) -> dict[str, Any] | Exception:
    try:
        return ray.get(ref, timeout=60)
    except Exception as exc:  # noqa: BLE001 - a lost node twice, a cancel: the row says which
        return exc


def _apply(s: Submission, out: dict[str, Any] | Exception) -> None:
    """The task's result into the row, and its autograded notebook into the course folder."""
    row = s.row
    if isinstance(out, Exception):
        row.status = "error"
        row.reason = f"not graded: the Ray task failed: {type(out).__name__}: {str(out)[:300]}"
        return
    s.node = out["node"]
    if out["version"] != s.version:
        row.status = "error"
        row.reason = (f"not graded: node {out['node'][:12]} grades with other code or tests "
                      f"(version {out['version']}, driver {s.version}): install the same commit "
                      "on every node")
        return
    for name, value in out["row"].items():
        setattr(row, name, value)
    if out["autograded"] is not None:
        s.autograded.parent.mkdir(parents=True, exist_ok=True)
        s.autograded.write_bytes(out["autograded"])


# --------------------------------------------------------------------------------------
# A local cluster of several nodes on this machine (the tests and the benchmark)
# --------------------------------------------------------------------------------------

@dataclass
class LocalCluster:
    """``ray.cluster_utils.Cluster`` started with raylab's offline settings in a private folder."""

    cluster: Any
    temp_dir: str
    env: dict[str, str]

    @property
    def address(self) -> str:
        return self.cluster.address

    def add_node(self, num_cpus: int = 1, resources: dict[str, float] | None = None) -> Any:
        from lab_snippets import raylab

        with raylab._environment(self.env), raylab._driver_on_loopback():
            return self.cluster.add_node(**_node_args(self.temp_dir, num_cpus, resources))

    def remove_node(self, node: Any) -> None:
        self.cluster.remove_node(node, allow_graceful=False)


def _node_args(temp_dir: str, num_cpus: int, resources: dict[str, float] | None) -> dict:
    from lab_snippets import raylab

    return dict(num_cpus=num_cpus, resources=dict(resources or {}), include_dashboard=False,
                temp_dir=os.path.join(temp_dir, "ray"), dashboard_agent_listen_port=None,
                object_store_memory=raylab.OBJECT_STORE_BYTES)


@contextlib.contextmanager
def local_cluster(head_cpus: int = 0, head_resources: dict[str, float] | None = None
                  ) -> Iterator[LocalCluster]:
    """A head node (``head_cpus``, ``head_resources``) to which ``add_node`` adds workers; on exit
    every process of it is gone and its folder removed (``raylab``'s cleanup)."""
    import ray
    from ray.cluster_utils import Cluster

    from lab_snippets import raylab

    temp_dir = raylab.make_temp_dir()
    watcher = raylab.watch(temp_dir)
    env = dict(raylab.ray_environment(temp_dir), RAY_TMPDIR=temp_dir)
    cluster = None
    try:
        with raylab._environment(env), raylab._driver_on_loopback():
            cluster = Cluster(initialize_head=True,
                              head_node_args=_node_args(temp_dir, head_cpus, head_resources))
        yield LocalCluster(cluster, temp_dir, env)
    finally:
        if ray.is_initialized():
            ray.shutdown()
        if cluster is not None:
            with contextlib.suppress(Exception):
                cluster.shutdown()
        raylab._remove(raylab.Cluster(temp_dir, 0, watcher=watcher))

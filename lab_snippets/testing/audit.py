"""Leak audit: did a notebook leave anything behind?

The test run (see the root ``conftest.py``) runs ``start()`` in a notebook's kernel before
its first cell and ``finish()`` after its last one. ``finish()`` raises ``LeakError``
listing what is left:

- threads that were not there at the start and are still alive;
- child processes, grandchildren included, even those re-parented after their parent
  died (found by the ``LAB_AUDIT_ID`` marker every descendant inherits in its environment);
- asyncio tasks created by the notebook that are not done;
- sockets (listening or connected) and other file descriptors opened and not closed;
- files left in the notebook's own temporary directory.

Two kinds of thing are not counted as leaks, because they belong to the kernel, not to
the notebook, and end when the kernel ends: multiprocessing's resource tracker and
forkserver processes (started on demand by the ``spawn`` and ``forkserver`` start
methods) with the pipe the kernel keeps open to each, and read-only files of installed packages
that a library keeps open as a cache (matplotlib keeps its font files open once it has drawn text).
ipykernel's event pipe of a thread that printed (an eventfd) is the kernel's too: ``finish()`` closes
those of ended threads, as the kernel itself would within 10 s, and passes over the rest
(``_kernel_event_pipes``).

One exception is made for Ray, and only when the chapter started it through ``lab_snippets.raylab``:
after ``ray.shutdown()`` Ray's native core keeps about a dozen descriptors in the driver until the
process exits (its poller's event descriptors, a socket with nothing left on it, its log files in
the removed session folder). ``raylab.stop`` notes exactly those (``raylab.kept_descriptors``);
they are excused, and ``finish()`` says how many. A Ray session folder (``lab-ray-*``) that is
made by this process and still there, or a Ray process, is a leak like any other.

The audit can be used by hand in any kernel too::

    from lab_snippets.testing import audit
    audit.start()
    ...
    audit.finish()
"""

from __future__ import annotations

import asyncio
import os
import sys
import sysconfig
import tempfile
import threading
import time
from dataclasses import dataclass, field

import psutil

MARKER_ENV = "LAB_AUDIT_ID"
_KERNEL_PACKAGES = ("ipykernel", "IPython", "zmq", "tornado", "jupyter_client", "nbclient")
_STDLIB_HELPERS = ("multiprocessing.resource_tracker", "multiprocessing.forkserver")


_INSTALLED = tuple({os.path.realpath(p) + os.sep for p in (sysconfig.get_paths()["purelib"],
                                                          sysconfig.get_paths()["stdlib"], sys.prefix)})


def _ray_kept() -> dict[int, str]:
    """What Ray's core kept in this process after its shutdown (see the module's docstring)."""
    raylab = sys.modules.get("lab_snippets.raylab")
    return raylab.kept_descriptors() if raylab is not None else {}


def _ray_folders() -> set[str]:
    """The session folders ``lab_snippets.raylab`` made in this process that still exist."""
    raylab = sys.modules.get("lab_snippets.raylab")
    return set(raylab.session_folders()) if raylab is not None else set()


def _is_installed_file(target: str) -> bool:
    return (target.startswith(_INSTALLED) and os.path.isfile(target)) or target in _font_files()


def _font_files() -> set[str]:
    """The font files matplotlib's font manager lists, when the notebook imported it: matplotlib
    keeps a font it drew with open for the process's life (its font cache), a system font (the CJK
    font of a figure drawn in Chinese, ``lab_snippets.figlang``) as much as its own."""
    font_manager = sys.modules.get("matplotlib.font_manager")
    if font_manager is None:
        return set()
    return {os.path.realpath(f.fname) for f in font_manager.fontManager.ttflist}


class LeakError(AssertionError):
    """Raised by ``finish()`` when the notebook left something behind."""


@dataclass
class Snapshot:
    threads: set[int] = field(default_factory=set)
    fds: dict[int, str] = field(default_factory=dict)
    sockets: set[int] = field(default_factory=set)
    tasks: set[int] = field(default_factory=set)
    tmp_entries: set[str] = field(default_factory=set)
    tmpdir: str = ""
    ray_folders: set[str] = field(default_factory=set)


def _fds() -> dict[int, str]:
    out = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            out[int(name)] = os.readlink(f"/proc/self/fd/{name}")
        except OSError:  # the fd of the listdir itself, already closed
            pass
    return out


def _socket_fds() -> set[int]:
    return {c.fd for c in psutil.Process().net_connections("all") if c.fd != -1}


def _loop_tasks() -> set[asyncio.Task]:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return set()
    return asyncio.all_tasks(loop)


def _task_is_kernel_owned(task: asyncio.Task) -> bool:
    coro = task.get_coro()
    code = getattr(coro, "cr_code", None) or getattr(coro, "gi_code", None)
    filename = code.co_filename if code is not None else ""
    return any(f"{os.sep}{pkg}{os.sep}" in filename for pkg in _KERNEL_PACKAGES)


def _is_stdlib_helper(proc: psutil.Process) -> bool:
    try:
        cmd = " ".join(proc.cmdline())
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return False
    return any(helper in cmd for helper in _STDLIB_HELPERS)


def _helper_pipes() -> set[str]:
    """Pipe ends held by the tolerated stdlib helper processes (the kernel keeps the other end)."""
    pipes: set[str] = set()
    for proc in psutil.Process().children(recursive=True):
        if not _is_stdlib_helper(proc):
            continue
        try:
            for name in os.listdir(f"/proc/{proc.pid}/fd"):
                target = os.readlink(f"/proc/{proc.pid}/fd/{name}")
                if target.startswith("pipe:"):
                    pipes.add(target)
        except OSError:
            continue
    return pipes


def _descendants() -> list[psutil.Process]:
    me = psutil.Process()
    found = {p.pid: p for p in me.children(recursive=True)}
    marker = os.environ.get(MARKER_ENV)
    if marker:
        for proc in psutil.process_iter(["pid"]):
            if proc.pid == me.pid or proc.pid in found:
                continue
            try:
                if proc.environ().get(MARKER_ENV) == marker:
                    found[proc.pid] = proc
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                continue
    return [p for p in found.values() if not _is_stdlib_helper(p)]


_baseline: Snapshot | None = None


def snapshot() -> Snapshot:
    tmpdir = tempfile.gettempdir()
    try:
        tmp_entries = set(os.listdir(tmpdir))
    except OSError:
        tmp_entries = set()
    return Snapshot(
        threads={t.ident for t in threading.enumerate() if t.ident is not None},
        fds=_fds(),
        sockets=_socket_fds(),
        tasks={id(t) for t in _loop_tasks()},
        tmp_entries=tmp_entries,
        tmpdir=tmpdir,
        ray_folders=_ray_folders(),
    )


def _prewarm_kernel() -> None:
    """Start now what the kernel would otherwise start lazily in the middle of a notebook.

    pyzmq starts a garbage-collector thread (with its own sockets) the first time the kernel
    sends a large message, such as a big figure; ipykernel opens more descriptors the first
    time a child process writes to the kernel's stdout or stderr. Both belong to the kernel
    and live as long as it does, so they are started before the baseline is taken.
    """
    try:
        from zmq.utils.garbage import gc as zmq_gc
    except ImportError:
        return
    zmq_gc.start()
    from IPython.display import display

    # One large message through the kernel (pyzmq sends those zero-copy, and keeps an eventfd for it).
    display({"application/x-lab-audit": "x" * 100_000}, raw=True)
    import subprocess

    subprocess.run(["/bin/sh", "-c", "echo 'leak audit: baseline taken'; echo >&2"], timeout=30, check=False)


def _kernel_event_pipes() -> set[int]:
    """Close the event pipes of ended threads, as ipykernel does every 10 s; return the descriptors
    of the kernel's pipes (those of live threads, and closed ones zmq has not let go of yet).

    ipykernel gives every thread that writes to ``sys.stdout``/``sys.stderr`` its own zmq socket
    (an "event pipe", whose mailbox is an eventfd) to wake the IOPub thread, and its
    ``IOPubThread`` closes the pipes of ended threads only from a task that runs every 10 s. A
    chapter whose worker printed in its last 10 s would otherwise show that eventfd as its own
    leak (seen on 3.11, 3.14 and 3.15 with a two-cell notebook); so would a kernel thread that
    prints for the first time mid-notebook (seen on 3.15: 08, 09, 21 under load). The pipes are
    the kernel's: a live thread that holds one is itself reported if the notebook started it.
    zmq closes a descriptor in its own reaper thread, so ``finish`` keeps polling for ``grace``.
    """
    pub = getattr(sys.stdout, "pub_thread", None)
    pipes, lock = getattr(pub, "_event_pipes", None), getattr(pub, "_event_pipe_gc_lock", None)
    if not isinstance(pipes, dict) or lock is None:  # not an ipykernel OutStream (or it changed)
        return set()
    fds = set()
    with lock:
        _note_pipes(pipes)
        for thread, socket in list(pipes.items()):
            if not thread.is_alive():
                socket.close()
                del pipes[thread]
    # A closed pipe's descriptor lives on until zmq's reaper is done with it: every pipe seen
    # (closed here or, after this saw it, by the kernel's own 10 s collection) stays excused while
    # its descriptor still points where it did.
    now = _fds()
    for fd, target in list(_pipes_seen.items()):
        if now.get(fd) == target:
            fds.add(fd)
        else:
            del _pipes_seen[fd]
    if hasattr(sys.stdout, "flush"):
        # a flush wakes the IOPub thread, whose socket must take the closed pipe's last command
        # before the reaper lets the descriptor go (an idle IOPub thread can hold it for seconds)
        sys.stdout.flush()
    return fds


_pipes_seen: dict[int, str] = {}  # descriptor -> its /proc target when seen


def _note_pipes(pipes: dict) -> None:
    import zmq

    targets = _fds()
    for socket in list(pipes.values()):
        if not socket.closed:
            fd = socket.getsockopt(zmq.FD)  # the mailbox's eventfd
            _pipes_seen[fd] = targets.get(fd, "")


def _watch_kernel_pipe_gc() -> None:
    """Note the pipes the kernel's own 10 s collection is about to close, so that a descriptor it
    closed just before ``finish`` (still waiting for zmq's reaper) is known to be the kernel's."""
    pub = getattr(sys.stdout, "pub_thread", None)
    collect = getattr(pub, "_event_pipe_gc", None)
    if collect is None or getattr(collect, "_lab_audit", False) or not isinstance(
            getattr(pub, "_event_pipes", None), dict):
        return

    async def noted_collect():
        _note_pipes(pub._event_pipes)
        await collect()

    noted_collect._lab_audit = True
    pub._event_pipe_gc = noted_collect


def start() -> Snapshot:
    """Record what exists now; ``finish()`` compares against it."""
    global _baseline
    if "ipykernel" in sys.modules:
        _prewarm_kernel()
        _watch_kernel_pipe_gc()
    _baseline = snapshot()
    return _baseline


def leaks(before: Snapshot) -> list[str]:
    """What exists now that did not exist in ``before`` and should be gone."""
    found: list[str] = []
    for t in threading.enumerate():
        if t.ident not in before.threads and t.is_alive():
            found.append(f"thread {t.name!r} (daemon={t.daemon}) is still alive")
    for proc in _descendants():
        try:
            status = proc.status()
            cmd = " ".join(proc.cmdline())[:120] or proc.name()
        except psutil.ZombieProcess:  # a subclass of NoSuchProcess: test it first
            status, cmd = psutil.STATUS_ZOMBIE, proc.name() if proc.is_running() else "?"
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        kind = "zombie (exited, never reaped)" if status == psutil.STATUS_ZOMBIE else "running"
        found.append(f"process {proc.pid} {kind}: {cmd}")
    current = asyncio.current_task() if _loop_tasks() else None
    for task in _loop_tasks():
        if id(task) in before.tasks or task is current or task.done() or _task_is_kernel_owned(task):
            continue
        found.append(f"asyncio task {task.get_name()!r} is still pending: {task.get_coro()!r}")
    ray_kept = _ray_kept()
    sockets_now = _socket_fds()
    for conn in psutil.Process().net_connections("all"):
        if conn.fd in sockets_now - before.sockets and conn.fd not in ray_kept:
            found.append(
                f"socket fd {conn.fd} {conn.status or ''} {conn.laddr} -> {conn.raddr or '-'}".strip())
    kernel_pipes = _kernel_event_pipes()
    fds_now = _fds()
    helper_pipes = _helper_pipes()
    for fd, target in sorted(fds_now.items()):
        if fd in sockets_now or fd in kernel_pipes or target in helper_pipes or ray_kept.get(fd) == target:
            continue
        if before.fds.get(fd) != target and not _is_installed_file(target):
            found.append(f"file descriptor {fd} -> {target} is still open")
    try:
        tmp_now = set(os.listdir(before.tmpdir))
    except OSError:
        tmp_now = set()
    for entry in sorted(tmp_now - before.tmp_entries):
        found.append(f"temporary file left behind: {os.path.join(before.tmpdir, entry)}")
    reported = {os.path.join(before.tmpdir, e) for e in tmp_now - before.tmp_entries}
    for folder in sorted(_ray_folders() - before.ray_folders - reported):
        found.append(f"Ray session folder left behind: {folder}")
    return found


def finish(grace: float = 2.0, before: Snapshot | None = None) -> None:
    """Raise ``LeakError`` if anything is left; give finishing threads/processes ``grace`` seconds."""
    before = before or _baseline
    if before is None:
        raise RuntimeError("audit.finish() called without audit.start()")
    deadline = time.monotonic() + grace
    while True:
        found = leaks(before)
        if not found or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    if found:
        raise LeakError("the notebook left these behind:\n  - " + "\n  - ".join(found))
    print("leak audit: nothing left behind (threads, processes, tasks, sockets, fds, temp files)")
    kept = _ray_kept()
    if kept:
        print(f"leak audit: excused {len(kept)} descriptors that Ray's native core keeps in this process "
              "until it exits (lab_snippets.raylab.kept_descriptors)")

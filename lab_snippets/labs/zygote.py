"""One worker process per ``grade`` run that imports the grading code once and forks per submission.

A worker (``lab_snippets.labs.worker``) spends about a second of CPU importing nbgrader,
nbconvert, jupyter_client, zmq and sqlalchemy before it grades anything; started fresh for each
submission, that is a third of what grading one submission costs once only the cells a grade
needs run (``labs.deps``). The zygote, ``python -m lab_snippets.labs.zygote``, is started once by
``grade`` (``Zygote``): it imports what a worker imports, then for each submission forks a child
that is exactly the worker the grader would have started (a session of its own, the
submission's work folder as its current folder, its output in ``worker.log``, a fresh guard
slot) and runs ``worker.autograde`` on the submission's spec, then exits.

Nothing about a submission runs in the zygote: it holds no kernel, no gradebook and no
submission's data, and each child grades one submission and exits, so one submission cannot
reach another's worker state. Student code still runs only in the child's sandboxed kernel.

Lifetimes: the zygote reads requests on its stdin and ends at end of file, which the grader's
``close`` (or its death) gives it; each child dies with the zygote (``PR_SET_PDEATHSIG``), so a
killed grader leaves no worker behind (the reaper, ``sandbox.reaped``, removes the folders and
kills the sandboxes, whose ``--die-with-parent`` ends them with their worker anyway). The zygote
ignores SIGINT (a Ctrl-C is the grader's, which lets the running submissions end) and lets the
kernel reap its children (SIGCHLD ignored; a child restores the default at once). The grader
watches a child as it watches a worker it started itself: its pid, its descendants, the
wall-clock limit, ``sandbox.kill_tree``. When the zygote cannot start or answer, ``fork``
returns None and the grader starts a fresh worker process for that submission, as before.

The library mechanism for this is ``multiprocessing``'s forkserver (``set_forkserver_preload``);
it is not used because it is one server per interpreter, shared with any other use of
multiprocessing, lives until the interpreter exits with a resource tracker beside it, and
re-imports the caller's ``__main__`` in every child.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import select
import signal
import subprocess
import sys
import threading
import traceback
from typing import Any, NoReturn

PR_SET_PDEATHSIG = 1
READY_TIMEOUT = 120.0  # s for the zygote's imports (a loaded 2-core machine: about ten times 1 s)
REPLY_TIMEOUT = 30.0   # s for a fork's reply


# --------------------------------------------------------------------------- the zygote's side

def _die_with_parent(parent: int) -> None:
    """SIGKILL this process when its parent (the zygote) ends; end now if it already has."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() != parent:
        os._exit(1)


def _child(spec: str, work: str, parent: int) -> NoReturn:
    """The forked worker: set up as ``grader`` sets up a fresh one, grade, exit."""
    from lab_snippets.labs import worker

    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # jupyter_client waits for its kernel
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.setsid()  # as start_new_session: a kill of its group takes the worker and no one else
        _die_with_parent(parent)
        devnull = os.open(os.devnull, os.O_RDONLY)
        log = os.open(os.path.join(work, "worker.log"), os.O_WRONLY | os.O_APPEND | os.O_CREAT,
                      0o600)
        for fd, target in ((devnull, 0), (log, 1), (log, 2)):  # also closes the zygote's pipes
            os.dup2(fd, target)
        os.close(devnull)
        os.close(log)
        os.chdir(work)
        sys.path[0] = work  # as ``python -m`` run in the work folder
        sys.argv = [worker.__file__, spec]
        worker.SandboxExecute.slot = worker.new_slot()  # each worker its own, as before
        worker.main([spec])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - the traceback goes to worker.log, the exit code says it
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def preload() -> None:
    """Import what a worker imports (``worker``'s module level and ``autograde``'s imports)."""
    sys.modules.setdefault("rfc3987_syntax", None)  # as the worker's __main__ does
    import nbconvert.preprocessors  # noqa: F401
    import nbgrader.api  # noqa: F401
    import nbgrader.converters  # noqa: F401
    import nbgrader.coursedir  # noqa: F401
    import sqlalchemy.orm

    import lab_snippets.labs.worker  # noqa: F401

    sqlalchemy.orm.configure_mappers()  # nbgrader's models, mapped once rather than per child


def serve() -> None:
    """The zygote's loop: a JSON line per request, a JSON line per reply, until end of file."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the children: no zombies
    out = sys.stdout

    def reply(obj: dict[str, Any]) -> None:
        out.write(json.dumps(obj) + "\n")
        out.flush()

    try:
        preload()
    except Exception as exc:  # noqa: BLE001 - the grader falls back to a fresh worker
        reply({"error": f"imports failed: {type(exc).__name__}: {exc}"})
        return
    if threading.active_count() != 1:  # a thread would not survive the fork: refuse
        reply({"error": f"{threading.active_count()} threads after the imports"})
        return
    me = os.getpid()
    reply({"ready": me})
    for line in sys.stdin:
        req = json.loads(line)
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(req["spec"], req["work"], me)
        reply({"pid": pid})


# --------------------------------------------------------------------------- the grader's side

class Zygote:
    """The grader's handle on a zygote; ``fork`` is thread-safe (one request at a time)."""

    def __init__(self, env: dict[str, str], cwd: str | os.PathLike[str]) -> None:
        self.problem = ""  # why forking failed, once it has (the grader says so)
        self.forked = 0
        self._lock = threading.Lock()
        self._ready: bool | None = None
        self.proc = subprocess.Popen([sys.executable, "-m", "lab_snippets.labs.zygote"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, cwd=str(cwd))

    def _read(self, timeout: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else b""
        if not line:
            raise OSError(f"no answer from the zygote within {timeout:.0f} s"
                          if not ready else "the zygote ended")
        return json.loads(line)

    def fork(self, spec: str | os.PathLike[str], work: str | os.PathLike[str]) -> int | None:
        """The pid of a worker forked for ``spec`` in ``work``; None: start a fresh one instead."""
        with self._lock:
            if self._ready is False:
                return None
            try:
                if self._ready is None:
                    first = self._read(READY_TIMEOUT)
                    if "ready" not in first:
                        raise OSError(first.get("error", str(first)))
                    self._ready = True
                assert self.proc.stdin is not None
                self.proc.stdin.write((json.dumps({"spec": str(spec), "work": str(work)})
                                       + "\n").encode())
                self.proc.stdin.flush()
                pid = int(self._read(REPLY_TIMEOUT)["pid"])
            except (OSError, ValueError, KeyError) as exc:
                self._ready, self.problem = False, f"{type(exc).__name__}: {exc}"
                self._stop()
                return None
            self.forked += 1
            return pid

    def _stop(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.stdin.close()  # type: ignore[union-attr]
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        with contextlib.suppress(OSError):
            self.proc.stdout.close()  # type: ignore[union-attr]

    def close(self) -> None:
        """End the zygote (its running children die with it: call once they have ended)."""
        with self._lock:
            self._stop()


if __name__ == "__main__":
    serve()

"""Trusted per-submission grading worker and the sandbox that runs a submission's kernel.

Two entry points, both started by ``lab_snippets.labs`` (never by students):

``python -m lab_snippets._grade_worker autograde SPEC.json``
    Trusted side (runs as the grader's user).  Runs nbgrader's ``Autograde`` converter on a
    throwaway course directory that holds one submission.  The kernel it starts is wrapped
    by the ``kernel`` entry point below, so student code never runs in this process.
    After every graded cell it appends one JSON line to ``SPEC.result`` (a root-only
    file); the parent reads those lines even if it had to kill this worker.

``python -m lab_snippets._grade_worker kernel SPEC.json -- CMD...``
    Sandbox launcher.  Applies resource limits, hides instructor paths with a private
    mount namespace, drops network (the kernel talks over unix sockets), switches to a
    per-submission user id and then ``exec``s the ipykernel command.

``python -m lab_snippets._grade_worker probe SPEC.json``
    Applies the same sandbox and prints what it managed to apply (used to report the
    isolation in force).
"""

from __future__ import annotations

import ast
import ctypes
import ctypes.util
import json
import os
import secrets
import signal
import sys
from pathlib import Path

# --------------------------------------------------------------------------------------
# Sandbox (runs as root until it switches user; must stay dependency-free and fast)
# --------------------------------------------------------------------------------------

CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38


def _libc():
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _check(ret, what):
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(libc, src, target, fstype, flags, data=None):
    _check(libc.mount(src and src.encode(), target.encode(), fstype and fstype.encode(),
                      ctypes.c_ulong(flags), data and data.encode()), f"mount {target}")


def _set_limits(spec, applied):
    import resource
    limits = spec.get("rlimits", {})
    names = {"cpu": resource.RLIMIT_CPU, "as": resource.RLIMIT_AS,
             "fsize": resource.RLIMIT_FSIZE, "nproc": resource.RLIMIT_NPROC,
             "nofile": resource.RLIMIT_NOFILE, "core": resource.RLIMIT_CORE}
    for key, value in limits.items():
        if value is None:
            continue
        hard = value + 5 if key == "cpu" else value
        try:
            resource.setrlimit(names[key], (value, hard))
            applied.append(f"RLIMIT_{key.upper()}={value}")
        except (ValueError, OSError) as exc:
            applied.append(f"RLIMIT_{key.upper()} not set ({exc})")


def _loopback_up():
    """Bring up ``lo`` in a fresh network namespace (chapters may serve on 127.0.0.1)."""
    import fcntl
    import socket
    import struct
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        req = struct.pack("16sh", b"lo", 0)
        flags = struct.unpack("16sh", fcntl.ioctl(sock, siocgifflags, req))[1]
        fcntl.ioctl(sock, siocsifflags, struct.pack("16sh", b"lo", flags | iff_up))


def _private_mounts(spec, applied):
    """Hide instructor paths; re-expose the venv (read-only) and the sandbox dir."""
    libc = _libc()
    flags = CLONE_NEWNS | (CLONE_NEWNET if spec.get("no_network") else 0)
    _check(libc.unshare(flags), "unshare")
    _mount(libc, None, "/", None, MS_REC | MS_PRIVATE)
    expose = [(p, ro) for p, ro in spec.get("expose", []) if os.path.isdir(p)]
    fds = [(os.open(p, os.O_RDONLY | os.O_DIRECTORY), p, ro) for p, ro in expose]
    hidden = []
    for path, mode in spec.get("hide", []):
        if os.path.isdir(path):
            _mount(libc, "tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV,
                   f"size=64m,mode={mode}")
            hidden.append(path)
    for fd, path, ro in fds:
        os.makedirs(path, exist_ok=True)
        _mount(libc, f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        if ro:
            _mount(libc, None, path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID)
        os.close(fd)
    applied.append("mount namespace hiding " + ", ".join(hidden))
    if spec.get("no_network"):
        _loopback_up()
        applied.append("network namespace of its own (only a private loopback; "
                       "kernel talks over unix sockets)")


def enter_sandbox(spec):
    """Apply every isolation layer of ``spec`` to the current process; return what was done.

    Fails closed: if a requested layer cannot be applied, raises.
    """
    applied = []
    try:
        os.setsid()
    except OSError:
        pass  # already a session leader (jupyter_client starts kernels in a new session)
    applied.append("own session / process group")
    if spec.get("mounts"):
        _private_mounts(spec, applied)
    _set_limits(spec, applied)
    libc = _libc()
    uid = spec.get("uid")
    if uid is not None:
        gid = spec["gid"]
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        if os.getuid() != uid or os.geteuid() != uid:
            raise OSError("could not switch user")
        applied.append(f"unprivileged uid/gid {uid}/{gid}, no supplementary groups")
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    applied.append("no_new_privs")
    box = spec["box"]
    os.chdir(box)
    return applied


def kernel_main(spec_path, cmd):
    spec = json.loads(Path(spec_path).read_text())
    box = spec["box"]
    try:
        enter_sandbox(spec)
    except Exception as exc:  # fail closed: no kernel without the sandbox
        with open(os.path.join(box, "kernel.log"), "a") as fh:
            fh.write(f"lab sandbox: refusing to start kernel: {exc}\n")
        sys.stderr.write(f"lab sandbox: refusing to start kernel: {exc}\n")
        os._exit(97)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": box, "TMPDIR": "/tmp",
           "LANG": "C.UTF-8", "IPYTHONDIR": os.path.join(box, ".ipython"),
           "JUPYTER_RUNTIME_DIR": os.path.join(box, ".runtime"),
           "MPLCONFIGDIR": os.path.join(box, ".mpl"), "PYTHONDONTWRITEBYTECODE": "1",
           "NBGRADER_EXECUTION": "autograde"}
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    logfd = os.open(os.path.join(box, "kernel.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND,
                    0o600)
    os.dup2(logfd, 1)
    os.dup2(logfd, 2)
    os.execve(cmd[0], cmd, env)


def probe_main(spec_path):
    spec = json.loads(Path(spec_path).read_text())
    try:
        applied = enter_sandbox(spec)
        exposed = [e for e, _ in spec.get("expose", [])]
        hidden_ok = True
        for p, _ in spec.get("hide", []):
            if not os.path.isdir(p):
                continue
            allowed = {os.path.relpath(e, p).split(os.sep)[0] for e in exposed
                       if e.startswith(p.rstrip("/") + "/")}
            hidden_ok = hidden_ok and set(os.listdir(p)) <= allowed
        print(json.dumps({"ok": True, "applied": applied, "hidden_empty": hidden_ok}))
    except Exception as exc:
        print(json.dumps({"ok": False, "error": str(exc)}))


# --------------------------------------------------------------------------------------
# Guard: trusted code injected into the kernel before student code and before every test
# --------------------------------------------------------------------------------------

GUARD_SETUP = r'''
def __lab_guard_factory(nonce, slot):
    import builtins, sys, types, json
    ip = get_ipython()
    _print, _setattr, _delattr, _isinstance, _list, _vars, _type, _dumps, _callable = (
        print, setattr, delattr, isinstance, list, vars, type, json.dumps, callable)
    code_types = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type,
                  property, classmethod, staticmethod, types.MethodDescriptorType,
                  types.WrapperDescriptorType)
    watch = ("builtins", "asyncio", "time", "threading", "functools", "contextvars",
             "concurrent.futures", "inspect", "traceback", "math", "operator", "json", "sys",
             "IPython.core.interactiveshell", "ipykernel.zmqshell", "ipykernel.ipkernel")
    mod_snap, cls_snap = {}, []
    st = {}

    # swapped by ipykernel itself around each cell: not evidence of tampering
    skip = {"input", "raw_input", "getpass", "excepthook"}

    def code_of(ns):
        return {k: v for k, v in _list(ns.items()) if _isinstance(v, code_types)
                and k not in skip}

    def snap_modules():
        for n, m in _list(sys.modules.items()):
            if m is not None and n not in mod_snap and (
                    n in watch or n.startswith(("asyncio.", "concurrent.futures."))):
                mod_snap[n] = (m, code_of(_vars(m)))

    def snap_hooks():
        st["lists"] = {a: _list(getattr(ip, a)) for a in
                       ("input_transformers_cleanup", "input_transformers_post",
                        "ast_transformers")}
        st["events"] = {k: _list(v) for k, v in ip.events.callbacks.items()}

    snap_modules()
    snap_hooks()
    kernel = getattr(ip, "kernel", None)
    objs = [o for o in (ip, kernel, getattr(kernel, "session", None),
                        getattr(ip, "displayhook", None), getattr(ip, "display_pub", None))
            if o is not None]
    for o in objs:
        for c in _type(o).__mro__:
            if c is not object and c not in [x for x, _ in cls_snap]:
                cls_snap.append((c, code_of(_vars(c))))
    er = sys.modules["IPython.core.interactiveshell"].ExecutionResult
    cls_snap.append((er, code_of(_vars(er))))
    inst_snap = [(o, {k: v for k, v in _vars(o).items() if _callable(v)}) for o in objs]
    # (sys.excepthook and builtins.input are swapped by ipykernel itself around each cell)
    sys_snap = {a: getattr(sys, a) for a in ("stdout", "stderr", "displayhook")}
    trace = (sys.gettrace(), sys.getprofile())
    user = {}

    def record(names):
        # called after each trusted (instructor) cell: remember the helpers it defined
        # (functions, classes, modules; data such as queues may legitimately change)
        for n in names:
            v = ip.user_ns.get(n)
            if _callable(v) or _isinstance(v, types.ModuleType):
                user[n] = v
        snap_modules()
        snap_hooks()

    def check():
        fixed = []
        for a, v in sys_snap.items():
            if getattr(sys, a) is not v:
                _setattr(sys, a, v)
                fixed.append("sys." + a)
        if (sys.gettrace(), sys.getprofile()) != trace:
            sys.settrace(trace[0])
            sys.setprofile(trace[1])
            fixed.append("sys.settrace/setprofile")
        for n, (m, snap) in _list(mod_snap.items()):
            if sys.modules.get(n) is not m:
                sys.modules[n] = m
                fixed.append("sys.modules[" + n + "]")
            d = _vars(m)
            for k, v in snap.items():
                if d.get(k) is not v:
                    _setattr(m, k, v)
                    fixed.append(n + "." + k)
        for c, snap in cls_snap:
            d = _vars(c)
            for k, v in snap.items():
                if d.get(k) is not v:
                    _setattr(c, k, v)
                    fixed.append(c.__name__ + "." + k)
            for k in _list(d):
                if k not in snap and k not in skip and _isinstance(d[k], types.FunctionType):
                    _delattr(c, k)
                    fixed.append(c.__name__ + "." + k + " (added)")
        for o, snap in inst_snap:
            d = _vars(o)
            for k, v in snap.items():
                if d.get(k) is not v:
                    d[k] = v
                    fixed.append(_type(o).__name__ + " instance ." + k)
            for k in _list(d):
                if k not in snap and k not in skip and _callable(d[k]) and _isinstance(
                        getattr(_type(o), k, None), (types.FunctionType, property)):
                    _delattr(o, k)
                    fixed.append(_type(o).__name__ + " instance ." + k)
        for a, v in st["lists"].items():
            if getattr(ip, a) != v:
                getattr(ip, a)[:] = v
                fixed.append("shell." + a)
        if ip.custom_exceptions:
            ip.set_custom_exc((), None)
            fixed.append("shell.set_custom_exc")
        for k in _list(ip.events.callbacks):
            if ip.events.callbacks[k] != st["events"].get(k, []):
                ip.events.callbacks[k] = _list(st["events"].get(k, []))
                fixed.append("shell.events." + k)
        for k, v in user.items():
            if ip.user_ns.get(k, user) is not v:
                ip.user_ns[k] = v
                fixed.append(k)
        for n in ("asyncio", "time"):
            if n in ip.user_ns and n in mod_snap and ip.user_ns[n] is not mod_snap[n][0]:
                ip.user_ns[n] = mod_snap[n][0]
                fixed.append(n)
        _print("LAB-GUARD", nonce, _dumps(sorted(set(fixed))))

    ip.user_ns[slot] = (record, check)

__lab_guard_factory(__NONCE__, __SLOT__)
del __lab_guard_factory
'''


def defined_names(source):
    """Top-level names a (trusted) code cell binds; used to restore helpers before tests."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name != "*":
                    names.append(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        names.append(n.id)
    return names


FAILURE_CHARS = 600


def failure_message(outputs):
    """What a student is told about a failed test cell, or None if it passed; never the test's code.

    ``validate`` (through ``labs.run_tests``) and ``grade`` (the reason of each row) both call it.
    The hidden tests carry their teaching in the assertion message (the property that failed and
    the idea to revisit), so an ``AssertionError`` is shown as its message alone; any other error
    as ``Name: message``.  The traceback, which quotes the test's source lines, is never shown.
    """
    for o in outputs:
        if o.get("output_type") == "error":
            ename, evalue = o.get("ename") or "Error", str(o.get("evalue") or "").strip()
            if ename == "AssertionError":
                text = evalue or "a check failed (the test gave no message)"
            else:
                text = f"{ename}: {evalue}" if evalue else ename
            return text if len(text) <= FAILURE_CHARS else text[:FAILURE_CHARS - 3] + "..."
        if o.get("output_type") == "stream" and o.get("name") == "stderr":
            return ("wrote to stderr (nbgrader scores that as a failure): "
                    + str(o.get("text", "")).strip()[:120])
    return None


# --------------------------------------------------------------------------------------
# Recovering from a kernel that a timed-out cell left stuck
# --------------------------------------------------------------------------------------

class RecoveringMixin:
    """For an nbclient ``NotebookClient``: restart a stuck kernel and replay earlier cells.

    ipykernel turns SIGINT during an async cell into a cancellation scheduled on the event
    loop; a coroutine that blocks the loop (``time.sleep``, ``while True``) never sees it and
    the kernel stays busy forever.  After a timed-out cell we probe the kernel; if it does
    not answer, we restart it and re-run the code cells that had completed, so that the
    remaining parts are still graded.  The timed-out cell itself is not replayed.
    """

    max_restarts = 3
    restarts = 0

    def _init_recovery(self):
        if not hasattr(self, "_completed"):
            self._completed = []

    @staticmethod
    def timed_out(cell):
        return any(o.get("ename") == "CellTimeoutError" for o in cell.get("outputs", []))

    def run_quiet(self, source, index, timeout=None):
        from nbformat.v4 import new_code_cell
        cell = new_code_cell(source)
        saved, saved_iopub, original = self.timeout, self.iopub_timeout, self.nb.cells[index]
        if timeout is not None:
            self.timeout, self.iopub_timeout = timeout, min(1, self.iopub_timeout)
        try:
            self.execute_cell(cell, index, store_history=False)
        finally:
            self.timeout, self.iopub_timeout = saved, saved_iopub
            self.nb.cells[index] = original  # nbclient stores the executed cell at index
        return cell

    def kernel_alive(self, index):
        replies = []
        hook = self.on_cell_executed
        self.on_cell_executed = lambda **kw: replies.append(kw["execute_reply"])
        try:
            self.run_quiet("pass", index, timeout=min(3, self.timeout or 3))
        finally:
            self.on_cell_executed = hook
        return bool(replies) and replies[-1].get("content", {}).get("status") == "ok"

    def restart_and_replay(self, index, after_start=None):
        from jupyter_core.utils import run_sync
        from nbclient.exceptions import DeadKernelError
        self.restarts += 1
        if self.restarts > self.max_restarts:
            raise DeadKernelError(f"kernel stuck again after {self.max_restarts} restarts")
        run_sync(self.km.restart_kernel)(now=True)
        run_sync(self.kc.wait_for_ready)(timeout=self.startup_timeout)
        if after_start:
            after_start(index)
        for j in self._completed:
            replay = self.run_quiet(self.nb.cells[j].source, j)
            if self.timed_out(replay) and not self.kernel_alive(j):
                raise DeadKernelError("kernel hung again while restoring earlier cells")
            self.after_replay(j)

    def after_replay(self, index):
        pass

    def after_cell(self, cell, index, after_start=None):
        """Call after each executed code cell; returns True if the kernel was restarted."""
        self._init_recovery()
        if not self.timed_out(cell):
            self._completed.append(index)
            return False
        if self.kernel_alive(index):
            return False
        self.restart_and_replay(index, after_start)
        return True


# --------------------------------------------------------------------------------------
# Trusted autograde worker
# --------------------------------------------------------------------------------------

def _make_classes(spec):
    from jupyter_client.manager import AsyncKernelManager
    from nbclient.exceptions import DeadKernelError
    from nbformat.v4 import new_output
    from nbgrader import utils
    from nbgrader.preprocessors import Execute

    result_path = spec["result"]
    nonce = spec["nonce"]
    slot = "_lab_" + secrets.token_hex(6)
    max_output = int(spec.get("max_output_chars", 200_000))
    solution_names = set(spec.get("solution_names", []))  # students may rebind these

    def emit(record):
        with open(result_path, "a") as fh:
            fh.write(json.dumps(record) + "\n")

    class SandboxKernelManager(AsyncKernelManager):
        """Starts the kernel through the sandbox launcher, over unix sockets."""

        def __init__(self, **kw):
            super().__init__(**kw)
            box = spec["box"]
            self.transport = "ipc"
            self.ip = os.path.join(box, "k")
            self.connection_file = os.path.join(box, "connection.json")

        def format_kernel_cmd(self, extra_arguments=None):
            cmd = super().format_kernel_cmd(extra_arguments)
            if cmd and os.path.basename(cmd[0]).startswith("python"):
                cmd[0] = sys.executable
            return [sys.executable, "-m", "lab_snippets._grade_worker", "kernel",
                    spec["sandbox_spec"], "--"] + cmd

        async def _async_launch_kernel(self, kernel_cmd, **kw):
            uid = spec.get("uid")
            if uid is not None:  # the kernel must be able to read its connection file
                os.chown(self.connection_file, uid, spec["gid"])
            return await super()._async_launch_kernel(kernel_cmd, **kw)

    class SandboxExecute(RecoveringMixin, Execute):
        """nbgrader's Execute, plus: guard cells, output cap, stuck/dead kernel recovery."""

        kernel_dead = None
        guard_ok = True
        _chars = 0

        def _run_hidden(self, source, index):
            cell = self.run_quiet(source, index)
            text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
            errs = [o for o in cell.outputs if o.output_type == "error"]
            return text, errs

        def _guard_check(self, index):
            restored = []
            for _attempt in range(2):  # retry once: a report can be lost on a loaded machine
                try:
                    text, errs = self._run_hidden(f"{slot}[1]()", index)
                except DeadKernelError:
                    raise
                except Exception as exc:  # timeout etc.
                    return None, f"guard did not run ({type(exc).__name__})"
                for line in text.splitlines():
                    parts = line.split(" ", 2)
                    if len(parts) == 3 and parts[0] == "LAB-GUARD" and parts[1] == nonce \
                            and not errs:
                        return restored + json.loads(parts[2]), None
            return None, "guard cell was tampered with (no valid guard report)"

        def _install_guard(self, index):
            cell = self.run_quiet(GUARD_SETUP.replace("__NONCE__", repr(nonce))
                                  .replace("__SLOT__", repr(slot)), index)
            if any(o.output_type == "error" for o in cell.outputs):
                raise RuntimeError("could not install the grading guard")

        def after_replay(self, index):
            cell = self.nb.cells[index]
            if not utils.is_solution(cell):  # trusted cell: remember what it defined
                names = [n for n in defined_names(cell.source) if n not in solution_names]
                if names:
                    self._run_hidden(f"{slot}[0]({names!r})", index)

        def output(self, outs, msg, display_id, cell_index):
            content = msg.get("content", {})
            size = len(json.dumps(content)) if msg.get("msg_type") != "status" else 0
            self._chars += size
            if self._chars > max_output:
                if not getattr(self, "_capped", False):
                    self._capped = True
                    outs.append(new_output("stream", name="stdout",
                                           text=f"\n[output truncated after {max_output} chars]\n"))
                if msg.get("msg_type") != "error":
                    return None
            return super().output(outs, msg, display_id, cell_index)

        def _fail(self, cell, ename, evalue):
            cell.outputs.append(new_output("error", ename=ename, evalue=evalue,
                                           traceback=[f"{ename}: {evalue}"]))

        def preprocess_cell(self, cell, resources, index):
            self._chars, self._capped = 0, False
            grade = utils.is_grade(cell) and cell.cell_type == "code"
            gid = cell.metadata.get("nbgrader", {}).get("grade_id")
            restored, problem = [], None
            if self.kernel_dead:
                if cell.cell_type == "code":
                    cell.outputs = []
                    self._fail(cell, "KernelDied", f"not run: {self.kernel_dead}")
                self._emit(cell, gid, grade, restored, problem)
                return cell, resources
            try:
                if not getattr(self, "_guard_installed", False):
                    self._guard_installed = True
                    self._install_guard(index)
                if grade:
                    restored, problem = self._guard_check(index)
                    if problem and not self.kernel_alive(index):
                        self.restart_and_replay(index, self._install_guard)
                        emit({"kind": "restart", "cell": gid})
                        restored, problem = self._guard_check(index)
                    if problem:
                        cell.outputs = []
                        self._fail(cell, "LabGuardError", problem + "; test not run")
                        self._emit(cell, gid, grade, restored or [], problem)
                        return cell, resources
                if cell.cell_type == "code":
                    cell, resources = super().preprocess_cell(cell, resources, index)
                    if not grade and self.timed_out(cell):
                        emit({"kind": "cell_timeout", "cell": gid or f"cell {index}"})
                    if self.after_cell(cell, index, self._install_guard):
                        emit({"kind": "restart", "cell": gid or f"cell {index}"})
                    elif not self.timed_out(cell):
                        self.after_replay(index)
            except DeadKernelError:
                code = None
                try:
                    code = self.km.provisioner.process.poll() if self.km.provisioner else None
                except Exception:
                    pass
                what = f"kernel died in cell {gid or index} (exit code {code})"
                if cell.cell_type == "code":
                    self._fail(cell, "KernelDied", what)
                try:  # start a fresh kernel, replay the completed cells, grade the rest
                    self.restart_and_replay(index, self._install_guard)
                    emit({"kind": "died", "cell": gid or f"cell {index}", "what": what})
                except Exception as exc:
                    self.kernel_dead = f"{what}; no recovery ({type(exc).__name__}: {exc})"
            self._emit(cell, gid, grade, restored or [], problem)
            return cell, resources

        def _emit(self, cell, gid, grade, restored, problem):
            if not grade:
                return
            score, max_score = utils.determine_grade(cell)
            err = next((o for o in cell.outputs if o.output_type == "error"), None)
            timed_out = bool(err and err.get("ename") == "CellTimeoutError")
            reason = failure_message(cell.outputs) or ""
            if not reason and score is not None and score < max_score:
                reason = "partial credit"
            emit({"kind": "cell", "grade_id": gid, "score": score or 0.0,
                  "max_score": max_score, "timed_out": timed_out, "restored": restored,
                  "guard_problem": problem, "reason": reason,
                  "kernel_dead": self.kernel_dead})

    return SandboxKernelManager, SandboxExecute


def autograde_main(spec_path):
    spec = json.loads(Path(spec_path).read_text())
    # jsonschema imports rfc3987_syntax (≈1 s of grammar building) only for the "iri"
    # format, which notebooks never use; skipping it halves the worker's start-up time.
    sys.modules.setdefault("rfc3987_syntax", None)
    bindir = os.path.dirname(sys.executable)
    os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
    import logging

    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from nbgrader.api import Gradebook
    from nbgrader.converters import Autograde
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.preprocessors import (
        AssignLatePenalties,
        CheckCellMetadata,
        IgnorePattern,
        LimitOutput,
        SaveAutoGrades,
    )
    from traitlets.config import Config
    logging.basicConfig(level=logging.INFO, format="%(asctime)s [%(levelname)s] %(message)s")
    km_class, execute_class = _make_classes(spec)
    course = spec["course"]
    c = Config()
    c.CourseDirectory.root = course
    c.CourseDirectory.course_id = spec["course_id"]
    c.CourseDirectory.db_url = "sqlite:///" + os.path.join(course, "gradebook.db")
    c.CourseDirectory.assignment_id = spec["assignment"]
    c.CourseDirectory.student_id = spec["student"]
    c.Autograde.autograde_preprocessors = [
        execute_class, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades,
        AssignLatePenalties, CheckCellMetadata]
    c.Execute.timeout = int(spec["timeout"])
    c.Execute.raise_on_iopub_timeout = False
    c.Execute.interrupt_on_timeout = True
    c.Execute.iopub_timeout = int(spec.get("iopub_timeout", 4))
    c.Execute.startup_timeout = 60
    c.Execute.kernel_manager_class = km_class
    c.Execute.extra_arguments = ["--HistoryManager.hist_file=:memory:"]
    coursedir = CourseDirectory(config=c)
    app = Autograde(coursedir=coursedir, config=c)
    app.force = True
    app.create_student = True
    app.start()
    scores = {}
    with Gradebook(coursedir.db_url, spec["course_id"]) as gb:
        sub = gb.find_submission_notebook(spec["notebook"], spec["assignment"], spec["student"])
        for g in sub.grades:
            scores[g.name] = [g.auto_score or 0.0, g.max_score]
    with open(spec["result"], "a") as fh:
        fh.write(json.dumps({"kind": "final", "scores": scores}) + "\n")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    cmd = argv[0]
    if cmd == "kernel":
        sep = argv.index("--")
        kernel_main(argv[1], argv[sep + 1:])
    elif cmd == "probe":
        probe_main(argv[1])
    elif cmd == "autograde":
        autograde_main(argv[1])
    else:
        raise SystemExit(f"unknown command {cmd!r}")


if __name__ == "__main__":
    main()

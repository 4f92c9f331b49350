"""The sandbox every submission's kernel runs in: bubblewrap (``bwrap``), as root or not.

``python -m lab_snippets.labs.sandbox kernel SPEC.json -- KERNEL_CMD...`` is the command the
trusted worker gives jupyter_client for the kernel. It replaces itself with ``bwrap``, which
builds a new root from a whitelist and runs ``kernel_init.py`` inside it:

* only the system folders (``/usr``, ``/etc``; ``/bin``, ``/lib``... as on the host), the
  Python installation and the venv (all read-only), the notebook-facing modules of
  ``lab_snippets`` (read-only, under ``/lab``; never the grader, the tests or the chapters)
  and the kernel's own folder (writable) exist in it; ``/tmp`` and ``/dev/shm`` are empty
  private tmpfs;
* PID, network (a private loopback only), IPC and UTS namespaces of its own; the kernel
  talks to the worker over unix sockets in its folder;
* ``--die-with-parent`` and the PID namespace: killing ``bwrap`` kills every process the
  submission started, forked and detached ones included;
* resource limits and (grading as root) a per-submission uid, set by ``kernel_init.py``.

As an ordinary user bubblewrap needs unprivileged user namespaces; as root it needs none.
``detect_isolation`` tries the sandbox once before grading and raises ``LabError`` with
the fix when it cannot be built: submissions never run unsandboxed.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import lab_snippets
from lab_snippets.labs.common import REPO, LabError
from lab_snippets.labs.spec import GradeSpec, Limits, Options, SandboxSpec

INIT_PATH = "/run/lab-sandbox/kernel_init.py"
KERNEL_INIT = Path(__file__).with_name("kernel_init.py")
PACKAGE_DIR = lab_snippets.PACKAGE_DIR
# Names a student kernel must not be able to import (the probe checks them).
TOOLING = ("lab_snippets.labs", "lab_snippets.testing", "lab_snippets.inventory",
           "lab_snippets.book", "lab_snippets.bench", "lab_snippets.sites.admin")
SYSTEM_DIRS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`; Fedora: "
                "`dnf install bubblewrap`) and grade again")
USERNS_HINT = ("as an ordinary user bubblewrap needs unprivileged user namespaces: enable them "
               "(`sysctl -w kernel.unprivileged_userns_clone=1` on Debian, "
               "`sysctl -w user.max_user_namespaces=15000`, on Ubuntu 24.04 "
               "`sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`), or grade as root")


@dataclass
class Isolation:
    root: bool          # per-submission uid (grading as root)
    description: str


def bwrap_path() -> str:
    path = shutil.which("bwrap")
    if not path:
        raise LabError("cannot build the grading sandbox: bubblewrap (bwrap) is not installed. "
                       f"Fix: {INSTALL_HINT}.")
    return path


def privileged() -> bool:
    return os.geteuid() == 0


def notebook_package_files() -> tuple[tuple[str, str], ...]:
    """(host file, path under the package root) for the package a student kernel may import."""
    out = [(str(PACKAGE_DIR / "__init__.py"), "lab_snippets/__init__.py"),
           (str(PACKAGE_DIR / "sites.toml"), "lab_snippets/sites.toml")]
    for name in lab_snippets.NOTEBOOK_MODULES:
        rel = Path(*name.split("."))
        file = PACKAGE_DIR / rel.with_suffix(".py")
        if not file.exists():
            file = PACKAGE_DIR / rel / "__init__.py"
        out.append((str(file), str(Path("lab_snippets") / file.relative_to(PACKAGE_DIR))))
    return tuple(out)


def python_dirs() -> tuple[str, ...]:
    """The Python installation and the venv, resolved (bound read-only at the same paths)."""
    dirs = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)}
    return tuple(sorted(d for d in dirs if not d.startswith(("/usr/", "/etc/")) and d != "/usr"))


# A chapter that starts a local Ray (``lab_snippets.book.chapters.runs_alone``) needs two limits
# raised, measured under this sandbox's own bwrap command line with one limit relaxed at a time:
# its processes hold about 200 threads at rest (gcs_server 25, raylet 28, each worker about 21, the
# agents, monitor and dashboard 14-26 each), and RLIMIT_NPROC counts threads, so at 128 the raylet
# could not start its threads and the node never registered; and the raylet sizes its object
# store file with ftruncate, which RLIMIT_FSIZE caps, so at 64 MiB it stalled at its first
# "create_and_mmap_buffer". raylab keeps the store at ``raylab.OBJECT_STORE_BYTES`` (128 MiB); the file limit
# leaves room above it. Every other limit (address space, open files, CPU) stays as it is.
RAY_LIMITS = {"processes": 512, "file_size": 256 << 20}


def sandbox_spec(box: Path, uid: int | None, opts: Options,
                 hide: Iterable[str | os.PathLike[str]] = (), ray: bool = False) -> SandboxSpec:
    """The sandbox of one kernel; ``ray``: a chapter that starts a local Ray (``RAY_LIMITS``)."""
    limits = Limits(cpu=int(opts.submission_timeout) + 5, address_space=int(opts.memory_mb) << 20,
                    file_size=64 << 20, processes=int(opts.max_procs), open_files=256, core=0)
    if ray:
        limits = replace(limits, processes=max(limits.processes or 0, RAY_LIMITS["processes"]),
                         file_size=max(limits.file_size or 0, RAY_LIMITS["file_size"]))
    return SandboxSpec(box=str(box), uid=uid, gid=uid, limits=limits, read_only=python_dirs(),
                       package_files=notebook_package_files(),
                       hide=tuple(str(Path(p).resolve()) for p in hide))


def _bound(spec: SandboxSpec) -> list[str]:
    return ["/usr", "/etc", *spec.read_only]


def _parents(spec: SandboxSpec) -> list[str]:
    """Folders above every bind target, outermost first (except those inside /usr and /etc)."""
    targets = [*spec.read_only, *(f"{spec.package_root}/{rel}" for _, rel in spec.package_files),
               INIT_PATH, spec.box]
    out = set()
    for target in targets:
        for parent in Path(target).parents:
            if str(parent) not in {"/", "/tmp"} and not str(parent).startswith(("/usr", "/etc")):
                out.add(str(parent))
    return sorted(out, key=lambda p: (p.count("/"), p))


def bwrap_argv(spec: SandboxSpec, inner: list[str], config: dict) -> list[str]:
    """The whole ``bwrap`` command: a whitelisted root, namespaces, then ``kernel_init.py``."""
    argv = [bwrap_path(), "--die-with-parent", "--unshare-pid", "--unshare-net", "--unshare-ipc",
            "--unshare-uts", "--unshare-cgroup-try"]
    if not privileged():
        argv.append("--unshare-user")
    argv += ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for top in SYSTEM_DIRS:
        if os.path.islink(top):
            argv += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            argv += ["--ro-bind", top, top]
    argv += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/dev/shm",
             "--perms", "1777", "--tmpfs", "/tmp"]
    for folder in _parents(spec):  # bwrap would create these 0700: the dropped uid must traverse
        argv += ["--perms", "0755", "--dir", folder]
    for path in spec.read_only:
        argv += ["--ro-bind", path, path]
    for host, rel in spec.package_files:
        argv += ["--ro-bind", host, f"{spec.package_root}/{rel}"]
    argv += ["--ro-bind", str(KERNEL_INIT), INIT_PATH, "--bind", spec.box, spec.box]
    for path in spec.hide:  # a hidden folder that a read-only bind would expose
        if os.path.isdir(path) and any(path.startswith(b.rstrip("/") + "/") for b in _bound(spec)):
            argv += ["--tmpfs", path]
    config = dict(config, limits=asdict(spec.limits),
                  uid=spec.uid if privileged() else None, gid=spec.gid if privileged() else None)
    return argv + ["--chdir", spec.box, "--", sys.executable, "-I", "-S", INIT_PATH,
                   json.dumps(config), "--", *inner]


def kernel_env(spec: SandboxSpec) -> dict[str, str]:
    box = spec.box
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": box, "TMPDIR": "/tmp",
            "LANG": "C.UTF-8", "IPYTHONDIR": os.path.join(box, ".ipython"),
            "JUPYTER_RUNTIME_DIR": os.path.join(box, ".runtime"),
            "MPLCONFIGDIR": os.path.join(box, ".mpl"), "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONPATH": spec.package_root, "NBGRADER_EXECUTION": "autograde",
            "SLIME_OFFLINE": "1"}


def launch_kernel(spec_path: str, cmd: list[str]) -> None:
    """Entry point given to jupyter_client: become ``bwrap`` running the kernel (never returns)."""
    spec = GradeSpec.read(spec_path).sandbox
    # jupyter_client interrupts a kernel with SIGINT to its whole process group: bwrap must not
    # die of it (that would kill the kernel); kernel_init.py restores the default for the kernel.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    argv = bwrap_argv(spec, cmd, {})
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    log = os.open(os.path.join(spec.box, "kernel.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.execve(argv[0], argv, kernel_env(spec))


# --------------------------------------------------------------------------------------
# Trying the sandbox before grading
# --------------------------------------------------------------------------------------

def probe(spec: SandboxSpec, must_hide, timeout: float = 60) -> dict:
    """Run ``kernel_init.py``'s probe inside the sandbox; return what it saw."""
    inside = [*spec.read_only, spec.box, spec.package_root, INIT_PATH]
    hidden = {}
    for p in map(str, must_hide):
        below = [b for b in inside if b.startswith(p.rstrip("/") + "/")]
        hidden[p] = sorted({os.path.relpath(b, p).split(os.sep)[0] for b in below})
    config = {"probe": {"must_hide": hidden,
                        "must_not_import": list(TOOLING),
                        "must_import": [f"lab_snippets.{m}" for m in lab_snippets.NOTEBOOK_MODULES]}}
    argv = bwrap_argv(spec, [sys.executable, INIT_PATH, json.dumps(config)], {})
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                           env=kernel_env(spec), stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"the sandbox probe did not finish within {timeout:.0f} s"}
    try:
        return json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"ok": False, "error": (r.stderr.strip() or f"bwrap exited with {r.returncode}")[-400:]}


def detect_isolation(hide: Sequence[str | os.PathLike[str]], opts: Options) -> Isolation:
    """Build the sandbox once and check it (hidden paths, importable modules, limits).

    Raises ``LabError`` with the fix when it cannot be built: never grade unsandboxed.
    """
    bwrap_path()
    root = privileged()
    tmp = Path(tempfile.mkdtemp(prefix="labs-probe-"))
    try:
        os.chmod(tmp, 0o711)
        box = tmp / "box"
        box.mkdir(mode=0o700)
        uid = alloc_uid() if root else None
        if uid is not None:
            os.chown(box, uid, uid)
        spec = sandbox_spec(box, uid, opts, hide)
        info = probe(spec, [*hide, REPO, Path.home(), tmp])
        problems = _probe_problems(info, spec)
        if problems:
            fix = "Fix: check that bwrap runs as root." if root else f"Fix: {USERNS_HINT}."
            raise LabError("cannot build the grading sandbox (bubblewrap): " + "; ".join(problems)
                           + ". " + fix)
        who = f"per-submission uid {uid} (no groups)" if root else \
            f"your uid {os.getuid()} mapped into a user namespace"
        return Isolation(root, "bubblewrap sandbox: " + who + "; " + "; ".join([
            "whitelisted read-only root (system, Python, notebook modules of lab_snippets)",
            "own PID/network/IPC namespaces (loopback only)",
            ", ".join(f"RLIMIT_{k.upper()}={v}" for k, v in asdict(spec.limits).items() if v is not None),
            "no_new_privs"]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _probe_problems(info: dict, spec: SandboxSpec) -> list[str]:
    if not info.get("ok"):
        return [str(info.get("error", "?"))]
    problems = []
    if info["visible"]:
        problems.append(f"hidden paths are visible inside: {info['visible']}")
    if info["importable"]:
        problems.append(f"the kernel could import course tooling: {info['importable']}")
    if info["missing"]:
        problems.append(f"notebook modules missing inside: {info['missing']}")
    if spec.limits.processes is not None and info["nproc"] != spec.limits.processes:
        problems.append("the process limit was not applied")
    return problems


# --------------------------------------------------------------------------------------
# Per-submission uids and killing (trusted side)
# --------------------------------------------------------------------------------------

_uid_lock = threading.Lock()
_uid_next = [1_900_000 + (os.getpid() * 211) % 50_000]


def alloc_uid() -> int:
    """A uid no running process uses (root grading: one per submission)."""
    import psutil
    with _uid_lock:
        while True:
            uid = _uid_next[0]
            _uid_next[0] += 1
            if not any(p.info["uids"] and p.info["uids"].real == uid
                       for p in psutil.process_iter(["uids"])):
                return uid


def kill_uid(uid: int) -> int:
    """Kill every process of a per-submission uid; return how many survived."""
    import psutil
    left: list = []
    for _ in range(50):
        pid = os.fork()
        if pid == 0:  # child: become the uid and kill(-1): every process of that uid
            try:
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        left = [p for p in psutil.process_iter(["uids"])
                if p.info["uids"] and p.info["uids"].real == uid]
        if not left:
            return 0
        time.sleep(0.05)
    return len(left)


# The reaper ``reaped`` starts: it waits for "done" on its stdin; if the pipe ends without it (the
# process that started it died), it kills every process whose command line names the folder and
# removes the folder, again until both are gone, for at most 30 s.
REAPER_SOURCE = """\
import os, shutil, sys, time
if os.fork():  # not the worker's child: Ray kills a dying worker's children, and this with them
    os._exit(0)
import psutil
folder = os.environ["LAB_GRADE_FOLDER"]
if sys.stdin.buffer.read() != b"done":
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        procs = []
        for p in psutil.process_iter(["cmdline"]):
            try:
                if p.pid != os.getpid() and any(folder in a for a in p.info["cmdline"] or []):
                    procs.append(p)
            except psutil.Error:
                pass
        for p in procs:
            try:
                p.kill()
            except psutil.Error:
                pass
        psutil.wait_procs(procs, timeout=5)
        shutil.rmtree(folder, ignore_errors=True)
        if not procs and not os.path.exists(folder):
            break
        time.sleep(0.2)
"""


@contextlib.contextmanager
def reaped(folder: str | os.PathLike[str]) -> Iterator[None]:
    """While the body runs, a reaper stands by: a process in a session of its own (a kill of
    this process's group spares it) reading a pipe from this process. If this process dies
    before the body ends (SIGKILL, the OOM killer, a lost Ray worker), the reaper kills every
    process whose command line names ``folder`` (the worker: its spec is there; bwrap: its
    binds are, and its death ends the sandbox's PID namespace) and removes ``folder``."""
    reaper = subprocess.Popen([sys.executable, "-c", REAPER_SOURCE], stdin=subprocess.PIPE,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True,
                              env=dict(os.environ, LAB_GRADE_FOLDER=os.fspath(folder)))
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            reaper.stdin.write(b"done")  # type: ignore[union-attr]
            reaper.stdin.close()  # type: ignore[union-attr]
        reaper.wait(timeout=10)  # the reaper forks at once: this returns as soon as it has


def kill_tree(proc, descendants) -> None:
    """SIGKILL the worker's process group and every process seen below it (bwrap included)."""
    for p in [proc, *descendants]:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            p.kill()
        except Exception:
            pass


def main(argv=None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) >= 3 and argv[0] == "kernel" and "--" in argv:
        launch_kernel(argv[1], argv[argv.index("--") + 1:])
    raise SystemExit("usage: python -m lab_snippets.labs.sandbox kernel SPEC.json -- KERNEL_CMD...")


if __name__ == "__main__":
    main()

"""The first code that runs inside the sandbox: set the limits, drop to the submission's uid, exec.

bubblewrap runs this file (bound read-only into the sandbox, outside the student's package)
as ``python kernel_init.py CONFIG_JSON -- KERNEL_CMD...``. It must stay standard-library only
(the sandbox mounts no grader code) and small: it runs before every kernel start.

* Resource limits are set here, after bubblewrap made the user namespace, so that
  ``RLIMIT_NPROC`` counts only the processes of this sandbox (the kernel counts processes per
  user *and* user namespace), not every process the grading user owns.
* When grading as root, bubblewrap runs without a user namespace and this drops to the
  per-submission uid (no groups); ``RLIMIT_NPROC`` then counts that uid, which only this
  submission uses.
* ``no_new_privs`` stops setuid programs from giving privileges back.

The probe (``lab_snippets.labs.sandbox.detect_isolation``) runs this file twice: first as
above, then, in place of the kernel, ``python kernel_init.py PROBE_JSON`` prints as one JSON
line what an interpreter set up like the kernel's can see and import.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import resource
import signal
import sys

PR_SET_NO_NEW_PRIVS = 38
RLIMITS = {"cpu": resource.RLIMIT_CPU, "address_space": resource.RLIMIT_AS,
           "file_size": resource.RLIMIT_FSIZE, "processes": resource.RLIMIT_NPROC,
           "open_files": resource.RLIMIT_NOFILE, "core": resource.RLIMIT_CORE}


def set_limits(limits: dict) -> list[str]:
    """Apply ``limits`` (names of ``lab_snippets.labs.spec.Limits``) to this process; fail loudly."""
    applied = []
    for key, value in limits.items():
        if value is None:
            continue
        hard = value + 5 if key == "cpu" else value
        resource.setrlimit(RLIMITS[key], (value, hard))
        applied.append(f"RLIMIT_{key.upper()}={value}")
    return applied


def drop_privileges(uid: int | None, gid: int | None) -> list[str]:
    """Switch to ``uid``/``gid`` with no supplementary groups (root grading); then no_new_privs."""
    applied = []
    if uid is not None:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        if os.getuid() != uid or os.geteuid() != uid:
            raise OSError("could not switch user")
        applied.append(f"uid/gid {uid}/{gid}, no groups")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    applied.append("no_new_privs")
    return applied


def probe(config: dict) -> dict:
    """What this sandboxed process can see and do (printed instead of starting a kernel)."""
    wanted = config["probe"]
    return {
        "ok": True,
        "uid": os.getuid(),
        "visible": [p for p, allowed in wanted.get("must_hide", {}).items() if _shows(p, allowed)],
        "importable": [m for m in wanted.get("must_not_import", []) if _importable(m)],
        "missing": [m for m in wanted.get("must_import", []) if not _importable(m)],
        "nproc": resource.getrlimit(resource.RLIMIT_NPROC)[0],
    }


def _shows(path: str, allowed: list[str]) -> bool:
    """Whether a hidden folder shows anything but the mount points of folders bound below it."""
    try:
        return bool(set(os.listdir(path)) - set(allowed))
    except FileNotFoundError:
        return False
    except OSError:
        return os.path.exists(path)


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False


def main(argv: list[str]) -> None:
    config = json.loads(argv[0])
    cmd = argv[argv.index("--") + 1:] if "--" in argv else []
    if config.get("probe"):  # second stage: a fresh interpreter set up like the kernel's
        print(json.dumps(probe(config)), flush=True)
        return
    try:
        set_limits(config.get("limits", {}))
        drop_privileges(config.get("uid"), config.get("gid"))
    except Exception as exc:  # fail closed: no kernel without every layer
        sys.stderr.write(f"lab sandbox: refusing to start: {exc}\n")
        os._exit(97)
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # the launcher ignored it (see sandbox.py)
    os.execv(cmd[0], cmd)


if __name__ == "__main__":
    main(sys.argv[1:])

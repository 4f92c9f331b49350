"""Unit tests of ``lab_snippets.labs.kernel_init``, the sandbox's first stage: the limits it sets (the
CPU limit's hard ceiling 5 s above the soft one), the uid it drops to (as root) and no_new_privs, the
probe's report, and SIGINT given back to the kernel. Whatever changes the process (limits, uid,
no_new_privs) runs in a child process, never in pytest's.

``python -m lab_snippets.bench.mutation labs/kernel_init.py`` runs this file (with
``tests/test_labs_units.py``) against each mutant of the module.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from lab_snippets.labs import kernel_init

HERE = str(Path(kernel_init.__file__).parent)  # the copy under test, imported by file in the child


def _child(code: str, *args: str) -> dict:
    """Run ``code`` (with ``kernel_init`` imported) in a fresh interpreter; return what it printed."""
    prelude = f"import json, os, resource, sys\nsys.path.insert(0, {HERE!r})\nimport kernel_init\n"
    run = subprocess.run([sys.executable, "-c", prelude + code, *args], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.splitlines()[-1])


def test_limits_are_set_soft_and_hard_with_five_seconds_of_cpu_to_spare():
    got = _child("applied = kernel_init.set_limits({'cpu': 7, 'file_size': 1 << 20, 'open_files': None})\n"
                 "print(json.dumps({'applied': applied,\n"
                 "                  'cpu': resource.getrlimit(resource.RLIMIT_CPU),\n"
                 "                  'fsize': resource.getrlimit(resource.RLIMIT_FSIZE)}))\n")
    assert got["applied"] == ["RLIMIT_CPU=7", "RLIMIT_FILE_SIZE=1048576"], "None means: not set"
    assert got["cpu"] == [7, 12], "SIGXCPU at the soft limit, SIGKILL 5 s later"
    assert got["fsize"] == [1 << 20, 1 << 20]


NNP = "status = dict(line.split(':', 1) for line in open('/proc/self/status'))\n"


def test_without_a_uid_only_no_new_privs_is_set():
    got = _child("applied = kernel_init.drop_privileges(None, None)\n" + NNP
                 + "print(json.dumps({'applied': applied, 'uid': os.getuid(),\n"
                 "                  'nnp': status['NoNewPrivs'].strip()}))\n")
    assert got == {"applied": ["no_new_privs"], "uid": os.getuid(), "nnp": "1"}


@pytest.mark.skipif(os.geteuid() != 0, reason="dropping to another uid needs root (grading as root)")
def test_as_root_it_drops_to_the_submissions_uid_with_no_groups():
    got = _child("applied = kernel_init.drop_privileges(1_900_321, 1_900_322)\n" + NNP
                 + "print(json.dumps({'applied': applied, 'ids': [os.getresuid(), os.getresgid()],\n"
                 "    'groups': os.getgroups(), 'nnp': status['NoNewPrivs'].strip()}))\n")
    assert got == {"applied": ["uid/gid 1900321/1900322, no groups", "no_new_privs"],
                   "ids": [[1_900_321] * 3, [1_900_322] * 3], "groups": [], "nnp": "1"}


def test_the_probe_reports_what_shows_what_imports_and_the_enforced_process_limit(tmp_path):
    hidden, clean, missing = tmp_path / "hidden", tmp_path / "clean", tmp_path / "missing"
    (hidden / "box").mkdir(parents=True)
    (hidden / "secret.py").write_text("answers")
    (clean / "box").mkdir(parents=True)
    config = {"probe": {"must_hide": {str(hidden): ["box"], str(clean): ["box"], str(missing): []},
                        "must_not_import": ["json", "no_such_module_for_the_probe"],
                        "must_import": ["json", "no_such_module_for_the_probe", "no_such_pkg.sub"]}}
    got = _child("resource.setrlimit(resource.RLIMIT_NPROC, (500, 600))\n"
                 "kernel_init.main([sys.argv[1]])\n", json.dumps(config))
    assert got == {"ok": True, "uid": os.getuid(), "visible": [str(hidden)], "importable": ["json"],
                   "missing": ["no_such_module_for_the_probe", "no_such_pkg.sub"], "nproc": 500}, \
        "a hidden folder shows only the folders bound below it; nproc is the soft limit, the enforced one"


def test_the_kernel_can_be_interrupted_again(tmp_path):
    """The launcher ignores SIGINT (jupyter_client signals the whole group); the kernel must not."""
    probe = "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
    run = subprocess.run([sys.executable, kernel_init.__file__, json.dumps({"limits": {}}), "--",
                          sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "True", "a kernel started with SIGINT ignored could never be interrupted"

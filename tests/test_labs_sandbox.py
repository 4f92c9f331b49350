"""Unit tests of ``lab_snippets.labs.sandbox``: the bubblewrap command line it builds (what is bound,
read-only or not, which namespaces, which paths are covered), the limits per chapter kind, the probe's
reading of what it saw and the errors it raises, the per-submission uids, and one real bwrap run.

Fast (a few seconds): no kernel starts and nothing is graded. The bubblewrap run and the uid tests
need bwrap or root and skip with the reason otherwise. ``python -m lab_snippets.bench.mutation
labs/sandbox.py`` runs this file against each mutant of the module. Equivalent, so left alive:
``alloc_uid``'s ``_uid_next[0]`` made ``_uid_next[-1]`` (NumberReplacer; the list has one element).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import namedtuple
from dataclasses import asdict, replace
from pathlib import Path

import pytest

import lab_snippets
from lab_snippets.labs import sandbox
from lab_snippets.labs.common import REPO, LabError
from lab_snippets.labs.spec import GradeSpec, Limits, Options, SandboxSpec

# How many arguments each bwrap option takes (the ones the sandbox uses); the rest are flags.
ARITY = {"--ro-bind": 2, "--bind": 2, "--symlink": 2, "--perms": 1, "--dir": 1, "--tmpfs": 1,
         "--proc": 1, "--dev": 1, "--chdir": 1}
SOURCE_ROOT = str(Path(sandbox.__file__).resolve().parents[2])  # the copy of the package under test


def _split(argv: list[str]) -> tuple[list[tuple[str, ...]], list[str]]:
    """bwrap's options as tuples (option, its arguments...), and the command after ``--``."""
    opts, i = [], 1
    while argv[i] != "--":
        n = ARITY.get(argv[i], 0)
        opts.append(tuple(argv[i:i + 1 + n]))
        i += 1 + n
    return opts, argv[i + 1:]


def _box_spec(tmp_path: Path, **over) -> SandboxSpec:
    fields = dict(box=str(tmp_path / "x" / "box"), uid=1_900_001, gid=1_900_002,
                  limits=Limits(cpu=10, address_space=1 << 30, file_size=1 << 20, processes=64,
                                open_files=32, core=0),
                  read_only=(str(tmp_path / "py"),),
                  package_files=(("/src/timeline.py", "lab_snippets/timeline.py"),))
    return SandboxSpec(**{**fields, **over})


@pytest.fixture
def fake_bwrap(monkeypatch):
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: "/opt/bin/bwrap" if name == "bwrap" else None)
    return "/opt/bin/bwrap"


# ---------------------------------------------------------------------------------------
# the command line
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("root", [False, True], ids=["user", "root"])
def test_the_kernel_gets_its_own_pid_network_ipc_and_uts_namespaces(fake_bwrap, monkeypatch, tmp_path, root):
    monkeypatch.setattr(sandbox, "privileged", lambda: root)
    argv = sandbox.bwrap_argv(_box_spec(tmp_path), ["kernel"], {})
    assert argv[0] == fake_bwrap
    flags = {o[0] for o in _split(argv)[0] if len(o) == 1}
    namespaces = {"--die-with-parent", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"}
    assert namespaces <= flags, \
        "the kernel must not share the host's network, processes, IPC or hostname, and must die with bwrap"
    assert not any(f.startswith("--share") for f in flags)
    assert ("--unshare-user" in flags) is not root, \
        "an ordinary user needs a user namespace; as root none (the kernel drops to its own uid instead)"


def test_only_the_whitelist_is_bound_read_only_and_only_the_box_is_writable(fake_bwrap, monkeypatch,
                                                                            tmp_path):
    monkeypatch.setattr(sandbox, "privileged", lambda: False)
    spec = _box_spec(tmp_path)
    opts, _ = _split(sandbox.bwrap_argv(spec, ["kernel"], {}))
    binds = [o for o in opts if o[0] == "--bind"]
    assert binds == [("--bind", spec.box, spec.box)], "the kernel's own folder is the one writable bind"
    ro = {o[1:] for o in opts if o[0] == "--ro-bind"}
    systems = {(d, d) for d in sandbox.SYSTEM_DIRS if os.path.isdir(d) and not os.path.islink(d)}
    assert ro == {("/usr", "/usr"), ("/etc", "/etc"), (spec.read_only[0], spec.read_only[0]),
                  ("/src/timeline.py", "/lab/lab_snippets/timeline.py"),
                  (str(sandbox.KERNEL_INIT), sandbox.INIT_PATH), *systems}
    links = {o[1:] for o in opts if o[0] == "--symlink"}
    assert links == {(os.readlink(d), d) for d in sandbox.SYSTEM_DIRS if os.path.islink(d)}
    assert not any(o[1] in ("/", str(REPO)) for o in opts if o[0] in ("--bind", "--ro-bind"))
    tmpfs = [opts[i - 1:i + 1] for i, o in enumerate(opts) if o[0] == "--tmpfs"]
    assert tmpfs == [[("--perms", "1777"), ("--tmpfs", "/dev/shm")],
                     [("--perms", "1777"), ("--tmpfs", "/tmp")]], \
        "/tmp and /dev/shm are empty private tmpfs"
    assert ("--proc", "/proc") in opts and ("--dev", "/dev") in opts and ("--chdir", spec.box) in opts


def test_every_folder_above_a_bind_target_is_made_traversable_outermost_first(fake_bwrap, monkeypatch,
                                                                              tmp_path):
    """bwrap would make them 0700: a kernel running as the submission's uid could not reach its box."""
    monkeypatch.setattr(sandbox, "privileged", lambda: False)
    spec = _box_spec(tmp_path, box="/tmp/g/w/box", read_only=("/opt/py", "/usr/local/py"))
    expected = ["/lab", "/opt", "/run", "/lab/lab_snippets", "/run/lab-sandbox", "/tmp/g", "/tmp/g/w"]
    assert sandbox._parents(spec) == expected, "never /, /tmp or a folder inside /usr or /etc"
    opts, _ = _split(sandbox.bwrap_argv(spec, ["kernel"], {}))
    made = [opts[i + 1] for i, o in enumerate(opts) if o == ("--perms", "0755")]
    assert made == [("--dir", d) for d in expected]
    first_bind = min(i for i, o in enumerate(opts) if o[0] == "--ro-bind" and o[2] == "/opt/py")
    assert opts.index(("--dir", "/tmp/g/w")) < first_bind


def test_a_hidden_folder_that_a_read_only_bind_would_expose_is_covered(fake_bwrap, monkeypatch, tmp_path):
    monkeypatch.setattr(sandbox, "privileged", lambda: False)
    ro = tmp_path / "py"
    for d in (ro / "secret", tmp_path / "py-other" / "secret", tmp_path / "elsewhere"):
        d.mkdir(parents=True)
    hide = (str(ro / "secret"), str(tmp_path / "py-other" / "secret"), str(tmp_path / "elsewhere"),
            str(ro / "missing"))
    spec = _box_spec(tmp_path, read_only=(str(ro),), hide=hide)
    opts, _ = _split(sandbox.bwrap_argv(spec, ["kernel"], {}))
    covered = [o[1] for o in opts if o[0] == "--tmpfs" and o[1] not in ("/tmp", "/dev/shm")]
    assert covered == [str(ro / "secret")], \
        "only an existing folder inside a bound one is covered (py-other is not inside py)"
    assert opts.index(("--tmpfs", str(ro / "secret"))) > opts.index(("--ro-bind", str(ro), str(ro))), \
        "the cover must come after the bind it covers"


@pytest.mark.parametrize("root", [False, True], ids=["user", "root"])
def test_the_first_stage_gets_the_limits_and_as_root_the_submissions_uid(fake_bwrap, monkeypatch, tmp_path,
                                                                         root):
    monkeypatch.setattr(sandbox, "privileged", lambda: root)
    spec = _box_spec(tmp_path)
    _, cmd = _split(sandbox.bwrap_argv(spec, ["python", "-m", "ipykernel_launcher"], {"probe": {"x": 1}}))
    assert cmd[:4] == [sys.executable, "-I", "-S", sandbox.INIT_PATH], \
        "isolated mode, no site: no user code first"
    assert cmd[5:] == ["--", "python", "-m", "ipykernel_launcher"]
    config = json.loads(cmd[4])
    assert config["limits"] == asdict(spec.limits) and config["probe"] == {"x": 1}
    expected = (1_900_001, 1_900_002) if root else (None, None)
    assert (config["uid"], config["gid"]) == expected, \
        "as root kernel_init drops to the submission's uid; as a user the namespace maps the grader's"


def test_no_bubblewrap_is_an_error_that_names_the_fix(monkeypatch):
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    with pytest.raises(LabError, match=r"bubblewrap \(bwrap\) is not installed.*apt-get install bubblewrap"):
        sandbox.bwrap_path()


@pytest.mark.parametrize(("euid", "root"), [(0, True), (1000, False)])
def test_privileged_means_an_effective_uid_of_root(monkeypatch, euid, root):
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: euid)
    assert sandbox.privileged() is root


# ---------------------------------------------------------------------------------------
# the spec: limits per chapter kind, what is bound, the kernel's environment
# ---------------------------------------------------------------------------------------


def test_the_limits_follow_the_options_and_a_ray_chapter_raises_threads_and_file_size(tmp_path):
    opts = Options(submission_timeout=60, memory_mb=512, max_procs=32)
    plain = sandbox.sandbox_spec(tmp_path, None, opts).limits
    assert plain == Limits(cpu=65, address_space=512 << 20, file_size=64 << 20, processes=32, open_files=256,
                           core=0), plain
    ray = sandbox.sandbox_spec(tmp_path, None, opts, ray=True).limits
    assert ray == replace(plain, processes=512, file_size=256 << 20), \
        "a Ray chapter gets RLIMIT_NPROC 512 and RLIMIT_FSIZE 256 MiB, every other limit as it was"
    assert sandbox.sandbox_spec(tmp_path, None, Options(max_procs=1000), ray=True).limits.processes == 1000, \
        "a larger limit the options ask for is kept"


def test_the_spec_binds_python_and_the_notebook_modules_and_hides_resolved_paths(tmp_path):
    (tmp_path / "course").mkdir()
    spec = sandbox.sandbox_spec(tmp_path / "box", 1_900_005, Options(),
                                [tmp_path / "course" / ".." / "course"])
    assert (spec.box, spec.uid, spec.gid) == (str(tmp_path / "box"), 1_900_005, 1_900_005)
    assert spec.read_only == sandbox.python_dirs() and spec.package_files == sandbox.notebook_package_files()
    assert spec.hide == (str((tmp_path / "course").resolve()),)


def test_the_python_installation_and_the_venv_are_bound_unless_inside_usr(monkeypatch, tmp_path):
    assert os.path.realpath(sys.prefix) in sandbox.python_dirs() or sys.prefix.startswith("/usr/")
    venv = tmp_path / "venv"
    venv.mkdir()
    for base in ("/usr", "/usr/local/py", str(venv)):  # /usr is bound anyway, and bound first
        monkeypatch.setattr(sys, "base_prefix", base)
        monkeypatch.setattr(sys, "prefix", str(venv))
        got = sandbox.python_dirs()
        assert got == (os.path.realpath(venv),), f"base {base}: {got}"


def test_the_kernel_sees_the_notebook_modules_of_the_package_and_no_tooling():
    files = sandbox.notebook_package_files()
    assert files[:2] == ((str(sandbox.PACKAGE_DIR / "__init__.py"), "lab_snippets/__init__.py"),
                         (str(sandbox.PACKAGE_DIR / "sites.toml"), "lab_snippets/sites.toml"))
    expected = []
    for name in lab_snippets.NOTEBOOK_MODULES:
        module = importlib.util.find_spec(f"lab_snippets.{name}")
        expected.append(Path(module.origin).relative_to(sandbox.PACKAGE_DIR.parent).as_posix())
    assert [rel for _, rel in files[2:]] == expected  # a package binds its __init__.py
    assert "lab_snippets/sites/__init__.py" in expected and "lab_snippets/sites/view.py" in expected
    for host, rel in files:
        assert Path(host).is_file() and Path(host) == sandbox.PACKAGE_DIR.parent / rel, (host, rel)
        assert not rel.startswith(("lab_snippets/labs/", "lab_snippets/testing/", "lab_snippets/book/",
                                   "lab_snippets/bench/", "lab_snippets/inventory/")), rel


def test_the_kernels_environment_is_fixed_and_leaks_nothing_of_the_graders(monkeypatch, tmp_path):
    monkeypatch.setenv("GRADER_TOKEN", "secret")
    env = sandbox.kernel_env(_box_spec(tmp_path))
    box = str(tmp_path / "x" / "box")
    assert env == {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": box, "TMPDIR": "/tmp", "LANG": "C.UTF-8",
                   "IPYTHONDIR": f"{box}/.ipython", "JUPYTER_RUNTIME_DIR": f"{box}/.runtime",
                   "MPLCONFIGDIR": f"{box}/.mpl", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": "/lab",
                   "NBGRADER_EXECUTION": "autograde", "SLIME_OFFLINE": "1"}


LAUNCH = """
import json, os, signal, sys
from lab_snippets.labs import sandbox
os.umask(0o022)
sandbox.bwrap_path = lambda: "/opt/bin/bwrap"
def execve(path, argv, env):
    print(json.dumps({"path": path, "argv": argv, "env": env,
                      "sigint_ignored": signal.getsignal(signal.SIGINT) == signal.SIG_IGN,
                      "stdin": os.read(0, 10).decode()}), flush=True)
    sys.stderr.write("to stderr\\n")
    sys.stderr.flush()
    os._exit(0)
os.execve = execve
sandbox.launch_kernel(sys.argv[1], ["python", "-m", "ipykernel_launcher", "-f", "k.json"])
"""


def test_the_launcher_becomes_bwrap_with_its_output_appended_to_a_private_log(tmp_path):
    box = tmp_path / "box"
    box.mkdir()
    spec = GradeSpec(course="c", course_id="c", assignment="a", student="s", notebook="a", timeout=3,
                     iopub_timeout=2, result="r", nonce="n", sandbox_spec=str(tmp_path / "spec.json"),
                     sandbox=_box_spec(tmp_path, box=str(box)))
    spec.write(tmp_path / "spec.json")
    (box / "kernel.log").write_text("earlier start\n")
    (box / "kernel.log").chmod(0o600)
    run = subprocess.run([sys.executable, "-c", LAUNCH, str(tmp_path / "spec.json")], capture_output=True,
                         text=True, timeout=60, input="not for the kernel",
                         env={**os.environ, "PYTHONPATH": SOURCE_ROOT}, cwd=SOURCE_ROOT)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "" and run.stderr == "", "the kernel's output goes to its log, not to the worker"
    earlier, line, err = (box / "kernel.log").read_text().splitlines()
    assert (earlier, err) == ("earlier start", "to stderr"), "the log is appended to, stdout and stderr both"
    seen = json.loads(line)
    assert seen["path"] == "/opt/bin/bwrap" == seen["argv"][0]
    assert seen["argv"][-6:] == ["--", "python", "-m", "ipykernel_launcher", "-f", "k.json"]
    assert seen["env"] == sandbox.kernel_env(spec.sandbox)
    assert seen["sigint_ignored"], "jupyter_client's SIGINT to the group must not kill bwrap"
    assert seen["stdin"] == "", "stdin is /dev/null"
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    spec = replace(spec, sandbox=replace(spec.sandbox, box=str(fresh)))
    spec.write(tmp_path / "spec.json")
    subprocess.run([sys.executable, "-c", LAUNCH, str(tmp_path / "spec.json")], capture_output=True,
                   timeout=60, env={**os.environ, "PYTHONPATH": SOURCE_ROOT}, cwd=SOURCE_ROOT, check=True)
    assert (fresh / "kernel.log").stat().st_mode & 0o777 == 0o600, "a new log is the grader's alone"


@pytest.mark.parametrize(("argv", "launched"), [
    (["kernel", "s.json", "--", "python", "-f", "k.json"], ("s.json", ["python", "-f", "k.json"])),
    (["kernel", "--"], None), (["probe", "s.json", "--", "python"], None),
    (["kernel", "s.json", "python"], None), ([], None)])
def test_the_entry_point_takes_only_kernel_spec_dash_dash_command(monkeypatch, argv, launched):
    called = []
    monkeypatch.setattr(sandbox, "launch_kernel", lambda *a: called.append(a))
    monkeypatch.setattr(sys, "argv", ["sandbox.py", *argv])
    with pytest.raises(SystemExit, match="usage: python -m lab_snippets.labs.sandbox kernel SPEC.json"):
        sandbox.main()  # launch_kernel never returns; here it does, and the usage follows
    assert called == ([launched] if launched else [])


# ---------------------------------------------------------------------------------------
# the probe and detect_isolation (the probe's run faked; a real run below)
# ---------------------------------------------------------------------------------------


class _Run:
    def __init__(self, stdout="", stderr="", returncode=0):
        self.stdout, self.stderr, self.returncode = stdout, stderr, returncode


def test_the_probe_asks_what_must_stay_hidden_and_what_must_import(fake_bwrap, monkeypatch, tmp_path):
    seen = {}

    def run(argv, **kw):
        seen.update(argv=argv, **kw)
        return _Run(stdout='starting\n{"ok": true, "visible": []}\n')

    monkeypatch.setattr(sandbox.subprocess, "run", run)
    monkeypatch.setattr(sandbox, "privileged", lambda: False)
    spec = _box_spec(tmp_path, box=str(tmp_path / "t" / "box"), read_only=(str(tmp_path / "venv" / "py"),))
    assert sandbox.probe(spec, [tmp_path / "t", tmp_path / "venv", "/srv/course/"], timeout=9) == \
        {"ok": True, "visible": []}, "the last line of the probe's output is its report"
    assert seen["timeout"] == 9 and seen["stdin"] == subprocess.DEVNULL
    assert seen["env"] == sandbox.kernel_env(spec)
    config = json.loads(_split(seen["argv"])[1][8])
    assert config["probe"]["must_hide"] == {str(tmp_path / "t"): ["box"], str(tmp_path / "venv"): ["py"],
                                            "/srv/course/": []}, \
        "a hidden folder may show only the mount points of what is bound in it"
    assert config["probe"]["must_not_import"] == list(sandbox.TOOLING)
    assert config["probe"]["must_import"] == [f"lab_snippets.{m}" for m in lab_snippets.NOTEBOOK_MODULES]


@pytest.mark.parametrize(("run", "error"), [
    (_Run(stderr="bwrap: setting up uid map: Permission denied\n", returncode=1),
     "bwrap: setting up uid map: Permission denied"),
    (_Run(stdout="not json", returncode=0), "bwrap exited with 0"),
    (_Run(stderr="x" * 300 + "y" * 400, returncode=1), "y" * 400)])
def test_a_probe_that_reports_nothing_is_not_ok_and_says_why(fake_bwrap, monkeypatch, tmp_path, run, error):
    monkeypatch.setattr(sandbox.subprocess, "run", lambda argv, **kw: run)
    assert sandbox.probe(_box_spec(tmp_path), []) == {"ok": False, "error": error}


def test_a_probe_that_hangs_is_not_ok(fake_bwrap, monkeypatch, tmp_path):
    def run(argv, timeout, **kw):
        raise subprocess.TimeoutExpired(argv, timeout)

    monkeypatch.setattr(sandbox.subprocess, "run", run)
    assert sandbox.probe(_box_spec(tmp_path), [], timeout=7) == {
        "ok": False, "error": "the sandbox probe did not finish within 7 s"}


GOOD = {"ok": True, "visible": [], "importable": [], "missing": [], "nproc": 64}


@pytest.mark.parametrize(("info", "problems"), [
    (GOOD, []),
    ({"ok": False, "error": "bwrap: boom"}, ["bwrap: boom"]),
    ({"ok": False}, ["?"]),
    ({**GOOD, "visible": ["/repo"]}, ["hidden paths are visible inside: ['/repo']"]),
    ({**GOOD, "importable": ["lab_snippets.labs"]},
     ["the kernel could import course tooling: ['lab_snippets.labs']"]),
    ({**GOOD, "missing": ["lab_snippets.timeline"]},
     ["notebook modules missing inside: ['lab_snippets.timeline']"]),
    ({**GOOD, "nproc": 63}, ["the process limit was not applied"]),
    ({**GOOD, "nproc": 65}, ["the process limit was not applied"])])
def test_each_thing_the_probe_saw_wrong_is_a_problem(tmp_path, info, problems):
    assert sandbox._probe_problems(info, _box_spec(tmp_path)) == problems
    no_limit = _box_spec(tmp_path, limits=Limits(processes=None))
    assert sandbox._probe_problems({**GOOD, "nproc": 7}, no_limit) == [], "no limit asked, none checked"


@pytest.mark.parametrize("root", [False, True], ids=["user", "root"])
def test_detect_isolation_describes_the_sandbox_it_checked(fake_bwrap, monkeypatch, root):
    seen = {}

    def probe(spec, must_hide):
        seen.update(spec=spec, must_hide=must_hide, box_there=Path(spec.box).is_dir())
        return {**GOOD, "nproc": spec.limits.processes}

    monkeypatch.setattr(sandbox, "probe", probe)
    monkeypatch.setattr(sandbox, "privileged", lambda: root)
    monkeypatch.setattr(sandbox, "alloc_uid", lambda: 1_900_077)
    monkeypatch.setattr(sandbox.os, "chown", lambda path, uid, gid: seen.update(chown=(path, uid, gid)))
    iso = sandbox.detect_isolation(["/srv/course"], Options())
    box = Path(seen["spec"].box)
    assert seen["box_there"] and not box.exists() and not box.parent.exists(), "the probe's folder is removed"
    assert seen["must_hide"] == ["/srv/course", REPO, Path.home(), box.parent]
    assert seen["spec"].hide == (str(Path("/srv/course").resolve()),)
    assert iso.root is root
    who = ("per-submission uid 1900077 (no groups)" if root
           else f"your uid {os.getuid()} mapped into a user namespace")
    assert seen.get("chown") == ((box, 1_900_077, 1_900_077) if root else None)
    assert iso.description == (
        f"bubblewrap sandbox: {who}; whitelisted read-only root (system, Python, notebook modules of "
        "lab_snippets); own PID/network/IPC namespaces (loopback only); RLIMIT_CPU=305, "
        "RLIMIT_ADDRESS_SPACE=2147483648, RLIMIT_FILE_SIZE=67108864, RLIMIT_PROCESSES=128, "
        "RLIMIT_OPEN_FILES=256, RLIMIT_CORE=0; no_new_privs")


@pytest.mark.parametrize("root", [False, True], ids=["user", "root"])
def test_a_sandbox_that_fails_its_probe_stops_grading_with_the_fix(fake_bwrap, monkeypatch, root):
    monkeypatch.setattr(sandbox, "probe", lambda spec, must_hide: {**GOOD, "visible": ["/r"], "nproc": 1})
    monkeypatch.setattr(sandbox, "privileged", lambda: root)
    monkeypatch.setattr(sandbox, "alloc_uid", lambda: 1_900_078)
    monkeypatch.setattr(sandbox.os, "chown", lambda *a: None)
    fix = "Fix: check that bwrap runs as root." if root else f"Fix: {sandbox.USERNS_HINT}."
    with pytest.raises(LabError) as err:
        sandbox.detect_isolation([], Options())
    assert str(err.value) == ("cannot build the grading sandbox (bubblewrap): hidden paths are visible "
                              f"inside: ['/r']; the process limit was not applied. {fix}")


# ---------------------------------------------------------------------------------------
# per-submission uids
# ---------------------------------------------------------------------------------------

Uids = namedtuple("Uids", "real effective saved")


class _Proc:
    def __init__(self, real):
        self.info = {"uids": None if real is None else Uids(real, 0, 0)}


def test_alloc_uid_skips_every_uid_a_running_process_has(monkeypatch):
    import psutil

    monkeypatch.setattr(sandbox, "_uid_next", [1_900_500])
    running = [_Proc(None), _Proc(1_900_500), _Proc(1_900_502)]  # None: psutil could not read its uids
    monkeypatch.setattr(psutil, "process_iter", lambda attrs: iter(running))
    assert [sandbox.alloc_uid() for _ in range(3)] == [1_900_501, 1_900_503, 1_900_504]


def _first_uid(monkeypatch, pid: int) -> int:
    """The uid a grader process of this pid starts its allocation from (the module run afresh)."""
    monkeypatch.setattr(os, "getpid", lambda: pid)
    spec = importlib.util.spec_from_file_location("_sandbox_fresh", sandbox.__file__)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "_sandbox_fresh", module)
    spec.loader.exec_module(module)
    return module._uid_next[0]


def test_graders_started_one_after_another_allocate_uids_apart(monkeypatch):
    """Two graders at once must not hand out the same uid before either has a process running it."""
    first, second = _first_uid(monkeypatch, 4321), _first_uid(monkeypatch, 4322)
    assert 1_900_000 <= first < 1_950_000 and 1_900_000 <= second < 1_950_000, (first, second)
    assert (second - first) % 50_000 == 211, (first, second)


root_only = pytest.mark.skipif(os.geteuid() != 0,
                               reason="per-submission uids exist only when grading as root")
KILL = "import sys\nfrom lab_snippets.labs import sandbox\nprint(sandbox.kill_uid(int(sys.argv[1])))\n"


def _kill_uid(uid: int) -> str:
    run = subprocess.run([sys.executable, "-c", KILL, str(uid)], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": SOURCE_ROOT}, cwd=SOURCE_ROOT)
    return run.stdout.strip() + run.stderr


# The victim's parent is root (not the uid) and reaps it, as bwrap's init does in the sandbox.
PARENT = """
import subprocess, sys
uid = int(sys.argv[1])
victim = subprocess.Popen([sys.argv[2], "60"], user=uid, group=uid, extra_groups=[])
print(victim.pid, flush=True)
try:
    print(victim.wait(timeout=60), flush=True)
finally:
    victim.kill()
"""


@root_only
def test_kill_uid_kills_every_process_of_the_submission():
    uid = sandbox.alloc_uid()
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(uid), shutil.which("sleep")],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout.readline().strip().isdigit(), "the victim started"
        assert _kill_uid(uid) == "0"
        out, _ = parent.communicate(timeout=10)
        assert out.strip() == str(-signal.SIGKILL), "the victim died of SIGKILL"
    finally:
        parent.kill()
        parent.wait(timeout=10)


@root_only
def test_kill_uid_counts_a_process_it_could_not_end():
    """A zombie outlives SIGKILL until its parent reaps it: kill_uid says one process survived."""
    uid = sandbox.alloc_uid()
    zombie = subprocess.Popen([shutil.which("true")], user=uid, group=uid, extra_groups=[])
    try:
        deadline = time.monotonic() + 10
        while os.waitid(os.P_PID, zombie.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:  # not reaped
            assert time.monotonic() < deadline, "a process that runs /bin/true did not exit within 10 s"
            time.sleep(0.01)
        assert _kill_uid(uid) == "1"
    finally:
        zombie.wait(timeout=10)


# ---------------------------------------------------------------------------------------
# one real bubblewrap run (skipped without bwrap, or where it cannot build a sandbox)
# ---------------------------------------------------------------------------------------


def _bwrap_unusable() -> str | None:
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    args = ["--unshare-user"] if os.geteuid() else []
    try:
        r = subprocess.run(["bwrap", *args, "--ro-bind", "/", "/", "true"], capture_output=True, text=True,
                           timeout=30)
    except subprocess.TimeoutExpired:
        return "bwrap did not start within 30 s"
    return None if r.returncode == 0 else f"bwrap cannot build a sandbox here: {r.stderr.strip()[:200]}"


INSIDE = """
import errno, json, os, resource, socket, sys
box, ro = sys.argv[1], sys.argv[2]
try:
    open(os.path.join(ro, "new"), "w")
    ro_write = "written"
except OSError as exc:
    ro_write = errno.errorcode[exc.errno]
with open(os.path.join(box, "mine"), "w") as fh:
    fh.write("ok")
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
print(json.dumps({
    "uid": os.getuid(), "nnp": status["NoNewPrivs"].strip(),
    "nproc": resource.getrlimit(resource.RLIMIT_NPROC)[0],
    "fsize": resource.getrlimit(resource.RLIMIT_FSIZE)[0],
    "net": sorted(name for _, name in socket.if_nameindex()),
    "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "beside_box": sorted(os.listdir(os.path.dirname(box))), "hidden": os.listdir(os.path.join(ro, "secret")),
    "ro": sorted(os.listdir(ro)), "tmp": sorted(os.listdir("/tmp")), "ro_write": ro_write,
    "paths": {p: os.path.exists(p) for p in sys.argv[3:]}}))
"""


def _tmp_tops(spec: SandboxSpec) -> list[str]:
    """What the box's /tmp may hold: the first folder under /tmp of every path bound at its own
    path (the box; the Python installation and the venv, as for a checkout under /tmp)."""
    return sorted({Path(p).parts[2] for p in (spec.box, *spec.read_only)
                   if Path(p).parts[1:2] == ("tmp",) and len(Path(p).parts) > 2})


def test_the_tmp_a_box_may_show_is_the_top_folder_of_each_bind_under_tmp():
    spec = SandboxSpec(box="/tmp/pytest-of-me/t0/box", read_only=("/opt/py", "/tmp/x y/repo/.venv", "/tmp"))
    assert _tmp_tops(spec) == ["pytest-of-me", "x y"]
    assert _tmp_tops(SandboxSpec(box="/work/box")) == []


@pytest.mark.parametrize("ray", [False, True], ids=["plain", "ray"])
def test_a_real_sandbox_shows_only_its_whitelist_with_no_network_and_the_limits(tmp_path, ray):
    unusable = _bwrap_unusable()
    if unusable:
        pytest.skip(unusable)
    os.chmod(tmp_path, 0o711)
    box, ro = tmp_path / "box", tmp_path / "ro"
    box.mkdir(mode=0o700)
    (ro / "secret").mkdir(parents=True)
    (ro / "secret" / "key").write_text("hidden test")
    (ro / "public").write_text("visible")
    (tmp_path / "canary").write_text("beside the box")
    uid = sandbox.alloc_uid() if sandbox.privileged() else None
    if uid is not None:  # the uid may write box and ro: only the read-only bind stops it in ro
        os.chown(box, uid, uid)
        os.chown(ro, uid, uid)
    spec = sandbox.sandbox_spec(box, uid, Options(), [ro / "secret", REPO], ray=ray)
    spec = replace(spec, read_only=(*spec.read_only, str(ro)))
    repo_files = [str(REPO / "tests"), str(sandbox.PACKAGE_DIR / "labs" / "grader.py"),
                  "/lab/lab_snippets/labs", "/lab/lab_snippets/testing"]
    inner = [sys.executable, "-c", INSIDE, str(box), str(ro), "/lab/lab_snippets/timeline.py", *repo_files]
    r = subprocess.run(sandbox.bwrap_argv(spec, inner, {}), capture_output=True, text=True, timeout=60,
                       env=sandbox.kernel_env(spec), stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    seen = json.loads(r.stdout.splitlines()[-1])
    assert seen["net"] == ["lo"], "no network but a private loopback"
    assert len(seen["pids"]) <= 3, f"the host's processes are not visible: {seen['pids']}"
    assert seen["paths"] == {"/lab/lab_snippets/timeline.py": True, **dict.fromkeys(repo_files, False)}, \
        "the notebook modules are there; the repository, the grader and the tests are not"
    assert seen["beside_box"] == ["box", "ro"], "nothing of the host beside the box (the canary) is there"
    assert (seen["ro"], seen["hidden"]) == (["public", "secret"], []), "a hidden folder under a bind is empty"
    assert seen["ro_write"] == "EROFS", "a read-only bind stays read-only for a uid that owns the folder"
    assert seen["tmp"] == _tmp_tops(spec), "/tmp holds only the folders made for the binds"
    assert (box / "mine").read_text() == "ok", "the box is the kernel's writable folder"
    assert seen["nnp"] == "1", "setuid programs cannot give privileges back"
    assert seen["uid"] == (uid if uid is not None else os.getuid())
    assert (seen["nproc"], seen["fsize"]) == ((512, 256 << 20) if ray else (128, 64 << 20))


def test_the_sandbox_suite_passes_in_a_clone_under_tmp_with_a_space_in_its_path():
    """A newcomer's first checkout: a clone under /tmp, in a folder whose name has a space, with its
    venv inside it (so the venv's folder is bound in the box's /tmp). The clone's own sandbox tests
    run there, with a venv of its own that borrows this one's packages; its lab_snippets is the
    clone's (the current directory comes first)."""
    if os.environ.get("LAB_SANDBOX_CLONE_TEST"):
        pytest.skip("already inside the clone")
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    import sysconfig
    import tempfile

    top = Path(tempfile.mkdtemp(prefix="x y-", dir="/tmp"))
    try:
        clone = top / "a checkout"
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, timeout=120,
                       capture_output=True)
        venv = clone / ".venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
        inner = venv / "bin" / "python"
        purelib = subprocess.run([inner, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 check=True, capture_output=True, text=True, timeout=60).stdout.strip()
        Path(purelib, "borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
        env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTEST_ADDOPTS"}}
        r = subprocess.run([inner, "-m", "pytest", "-p", "no:xdist", "-o", "addopts=",
                            "-p", "no:cacheprovider", "-v", "tests/test_labs_sandbox.py"], cwd=clone,
                           env=dict(env, LAB_SANDBOX_CLONE_TEST="1"), capture_output=True, text=True,
                           timeout=600)
        assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
        if _bwrap_unusable() is None:
            for ray in ("plain", "ray"):
                assert f"the_limits[{ray}] PASSED" in r.stdout, r.stdout[-2000:]
        where = subprocess.run([inner, "-c", "import lab_snippets; print(lab_snippets.REPO_ROOT)"], cwd=clone,
                               env=env, capture_output=True, text=True, timeout=60).stdout.strip()
        assert where == str(clone), f"the clone's tests ran another checkout's package: {where}"
    finally:
        shutil.rmtree(top, ignore_errors=True)

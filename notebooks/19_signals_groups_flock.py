# %% [markdown]
# # 19 · Signals, process groups and file locks: who releases resources after exit?
# *信号、进程组与文件锁：退出以后谁释放资源？*
#
# **The question.** A process dies, by a signal or by SIGKILL. What happens to the processes
# it started, to the signal you meant for the whole job, and to the locks it held? The
# chapter ends at a gap in slime's CI that its experiments explain: a wrapper that holds a
# GPU's lock is SIGKILLed while its test still runs on the GPU. Can the next job take that
# lock?
#
# **You will**
# 1. find out what happens to a process's children when the process is killed;
# 2. find out whether one signal can reach a whole job, and how to send it;
# 3. pass SIGTERM and SIGINT from a wrapper to the program it runs, and see what happens
#    without that forwarding;
# 4. find out what becomes of an `fcntl.flock` whose holder is killed by SIGKILL.
#
# **Needs** chapters 12 (processes) and 18 (process lifecycle) · about 60 minutes
#
# **New to the course?** [How to read an experiment](../book/reading_guide.md) explains the
# timelines, the helpers and the folded checks; the [glossary](../book/glossary.md) gives the
# words the chapters share. The imports are folded below; `figure_style()` only sets how
# the plots look.
#
# **Platform** Linux or macOS: `os.killpg`, sessions, `start_new_session` and the `fcntl`
# module are POSIX-only, so on Windows none of these cells run.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the setup"}
import fcntl
import os
import signal
import subprocess
import sys
import tempfile
import time

import psutil

from lab_snippets.proc_workers import read_line
from lab_snippets.timeline import Timeline, figure_style

figure_style()
WORKER_MODULE = [sys.executable, "-m", "lab_snippets.proc_workers"]


# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the instruments"}
# The instruments: is a pid still running, and when did each of some pids go?
tl = Timeline()


def running(pid: int) -> bool:
    """True while `pid` exists and has not exited (an unreaped zombie does not count)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_until_gone(pids: list[int], timeout: float) -> dict[int, float]:
    """Poll until no pid in `pids` is running; return when each was first seen gone."""
    gone_at: dict[int, float] = {}
    deadline = time.monotonic() + timeout
    while len(gone_at) < len(pids) and time.monotonic() < deadline:
        for pid in pids:
            if pid not in gone_at and not running(pid):
                gone_at[pid] = time.monotonic()
        time.sleep(0.005)
    return gone_at


# %% [markdown]
# Every program here is a command of `lab_snippets.proc_workers`. `spawn-children 2 3` starts
# two `sleep` children of 3 s each, prints `ready <its pid> <child pids>` and waits for them; every
# command ends by itself after a few seconds, so nothing can outlive a failed run for long.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show parents_of"}
def parents_of(pids: list[int]) -> set[int]:
    """The parent pid of each process in `pids` that still exists (psutil's ppid())."""
    parents = set()
    for pid in pids:
        try:
            parents.add(psutil.Process(pid).ppid())
        except psutil.NoSuchProcess:
            pass
    return parents


# %% [markdown]
# ## Predict: does killing a parent stop its children?
#
# In the cell, `read_line(stream, timeout)` reads the child's `ready` line (bounded),
# `running(pid)` and `parents_of(pids)` (both folded above) tell whether a pid still runs
# and give the parent pids of those still running. The `started_a`, `killed_a`
# and `looked_a` lines only note times for the next section's figure.
#
# We start `spawn-children`; it starts its two children. Then we kill it with SIGKILL, the
# signal nobody can catch. Predict: are its two children still running afterwards?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
# WORKER_MODULE: runs the course's worker module, lab_snippets.proc_workers
command = WORKER_MODULE + ["spawn-children", "2", "3"]
parent = subprocess.Popen(command, stdout=subprocess.PIPE)
_, parent_pid, *child_pids = read_line(parent.stdout, timeout=10).split()
child_pids = [int(pid) for pid in child_pids]
# started_a, killed_a, looked_a: three times for the next section's figure
started_a = time.monotonic()

parent.kill()
parent.communicate(timeout=5)
killed_a = time.monotonic()
time.sleep(0.1)
running_now = [pid for pid in child_pids if running(pid)]
looked_a = time.monotonic()
parents_now = parents_of(running_now)
print(f"parent exit code {parent.returncode};",
      f"children still running: {len(running_now)} of 2;",
      f"their parent pids: {parents_now or 'none left'}")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: killing-the-parent-orphans-its-children
for pid in running_now:  # nobody else will stop them before their own time runs out
    os.kill(pid, signal.SIGKILL)
cleaned_a = time.monotonic()
gone_a = wait_until_gone(child_pids, timeout=5)
assert parent.returncode == -signal.SIGKILL
assert running_now == child_pids, "killing the parent did not kill its children"
assert parent.pid not in parents_now, "the orphans were adopted by another process"
assert len(gone_a) == 2
print("✓ SIGKILL ended the parent; both children ran on, adopted by another process,",
      "until we killed them one by one")

# %% [markdown]
# :::{dropdown} Why
#
# The SIGKILL went to one pid, the parent's, and nothing passes a signal on to a process's
# children. When the parent died, its children were simply *re-parented*: adopted by another
# process, usually pid 1, the first process of the system. Look at the end of the printed
# line: both children still running, with a new parent. Had they held GPUs, ports or files,
# those would still be held. We had to find them and kill them one by one. The orphans'
# zombies are reaped by their new parent, not by us.
#
# The parent's `exit code -9` is how `Popen` reports a process killed by a signal: -N for
# signal N (SIGKILL is 9). A shell reports the same death as 128 + N, here 137.
#
# :::

# %% [markdown]
# ## Measure: which processes does one `killpg` reach?
#
# Every process belongs to a **process group**: the set of processes that one
# `os.killpg(pgid, sig)` reaches. `os.getpgid(pid)` gives a process's group id.
#
# The cell below starts the same `spawn-children` with `Popen(..., start_new_session=True)`,
# which gives it a group of its own whose id is its own pid (`leader` is that `Popen`). It
# prints the group id of each process, then sends one SIGTERM to the whole group, with
# `os.killpg` and the group's id, `leader.pid`.
#
# Two folded helpers:
#
# - `wait_until_gone(pids, timeout)`, folded above with `running`, polls until none of the
#   pids runs and returns when each went;
# - the plotting code, folded next, draws the figure that comes with the answer.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the plotting code for the figure in the answer below: both runs"}
import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter, MaxNLocator

STUB = "running, up to the signal (a few ms: too thin to see)"


def draw_both_runs():
    """Both runs on one time axis, one lane per process, each up to when we last saw it."""
    run_a, run_b = Timeline(), Timeline()
    run_a.t0, run_b.t0 = started_a, started_b
    run_a.add("plain parent", started_a, killed_a, "running")
    run_b.add("group leader", started_b, killed_b, "running")
    run_b.add("group leader", killed_b, exited_b, "cancelled")
    for number in range(1, len(child_pids) + 1):
        run_a.add(f"its child {number}", started_a, killed_a, "running")
        run_a.add(f"its child {number}", killed_a, looked_a, "blocked")
    for number, pid in enumerate(member_pids, start=1):
        run_b.add(f"its child {number}", started_b, killed_b, "running")
        run_b.add(f"its child {number}", killed_b, gone_b.get(pid, killed_b), "cancelled")
    fig, (ax_a, ax_b) = plt.subplots(2, 1, figsize=(8, 4.4), layout="constrained", sharex=True)
    fig.suptitle("Killing a parent versus killing its process group: which processes each signal reached")
    run_a.plot("SIGKILL to the parent", ax=ax_a, lanes=["plain parent", "its child 1", "its child 2"],
               xlabel="", meanings={"running": STUB, "blocked": "orphan, still running"})
    run_b.plot("one killpg(SIGTERM) to the group", ax=ax_b,
               lanes=["group leader", "its child 1", "its child 2"],
               xlabel="ms since the parent reported its children started",
               meanings={"running": STUB, "cancelled": "from the signal to the exit"})
    for row in (1, 2):  # the orphans' lanes end where we looked, not where they ended
        ax_a.annotate("runs on (3 s)", (looked_a - started_a, row), xytext=(4, 0),
                      textcoords="offset points", va="center", fontsize=8)
    last_gone = max([exited_b, *gone_b.values()])  # the grey stubs: from the killpg to each exit
    ax_b.annotate(f"all three gone {1000 * (last_gone - killed_b):.1f} ms after the signal",
                  (last_gone - started_b, 0), xytext=(6, 0), textcoords="offset points",
                  va="center", fontsize=8)
    ax_b.xaxis.set_major_locator(MaxNLocator(nbins=6))  # seconds on the data, ms on the ticks
    ax_b.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{1000 * x:g}"))
    ax_b.set_xlim(right=1.25 * (looked_a - started_a))


# %% [markdown]
# Only the leader was started with `start_new_session=True`; its two children were started
# by the leader itself, not by our `Popen` call. Predict: are the children in the leader's group or in ours, and so which of the
# three processes are still running after that one `killpg`?


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
leader = subprocess.Popen(command, stdout=subprocess.PIPE, start_new_session=True)
_, leader_pid, *member_pids = read_line(leader.stdout, timeout=10).split()
member_pids = [int(pid) for pid in member_pids]
started_b = time.monotonic()
groups = {pid: os.getpgid(pid) for pid in [leader.pid, *member_pids]}
print("process groups of the leader and its children:", groups,
      "· ours:", os.getpgid(0))

os.killpg(leader.pid, signal.SIGTERM)
killed_b = time.monotonic()
leader.communicate(timeout=5)
exited_b = time.monotonic()
gone_b = wait_until_gone(member_pids, timeout=1.5)
print("leader exit code:", leader.returncode, "· children still running:",
      [pid for pid in member_pids if running(pid)])
draw_both_runs()  # both runs: the SIGKILL above, this killpg below

# %% [markdown]
# :::{dropdown} Why
#
# The leader, in a new session, leads a new group whose id is its own pid, and the two
# children, started after that, joined their parent's group, as every child does by default; so
# all three shared the leader's pid as their group id (a process stays in the group it was
# born in unless it asks for another), and a group is signalled as a whole:
# one `killpg` reached every member and ended them all, an empty list of survivors. We never
# used the children's pids to stop them.
#
# In the figure's lower panel every lane ends at the one `killpg`, well before the 100 ms mark.
# In the upper panel the children's lanes are red up to the moment the first cell looked, 0.1 s after the
# kill; they were still running then, and left alone each would have slept its full 3 s.
#
# :::

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: killpg-stops-the-whole-group
assert set(groups.values()) == {leader.pid} and os.getpgid(0) != leader.pid
left_running = [pid for pid in member_pids if pid not in gone_b]
for pid in left_running:  # only when the claim below fails: do not leave them running
    os.kill(pid, signal.SIGKILL)
assert leader.returncode == -signal.SIGTERM
assert not left_running and len(gone_b) == 2, "no member of the group survived"
print("✓ the leader and both children shared a group of their own; one killpg ended all three")

# %% [markdown]
# Two more facts about groups, for the exercise at the end of the chapter. A group can outlive
# its leader: while any member still runs, `os.killpg(leader.pid, ...)` reaches it, even after
# the leader has been reaped. And a signal a process ignores stays ignored in the children it
# starts, even after they exec another program; the graded job
# `spawn-children --ignore-sigterm`, whose code is shown under the exercise, starts its
# children that way, so they shrug off SIGTERM from their first instruction.
#
# :::{dropdown} Going further: a new group without a new session
#
# `start_new_session=True` does two things: a new
# session and a new {term}`process group`. A *session* is a set of process groups that share
# at most one controlling terminal, whose Ctrl-C goes to one group of the session;
# `start_new_session=True` makes the child call `setsid()`, and the new session it gets has no
# terminal at all. Since Python 3.11,
# `Popen(..., process_group=0)` gives only the second, and that is already enough to keep
# Ctrl-C away: the terminal sends SIGINT to its *foreground process group*, and a child in a
# group of its own is not in it. The new session adds that the child has no controlling
# terminal at all, so it cannot read from yours or be stopped by it. Before 3.11 the same
# needed `preexec_fn=os.setpgrp`, which runs Python code between `fork` and `exec` and is not
# safe in a program with threads; tools you read (slime's CI wrapper among them) use
# `start_new_session=True`, which works on every version. The folded cell below checks a
# child started with `process_group=0`.
#
# :::

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the experiment"}
sleeper = WORKER_MODULE + ["sleep", "3"]
grouped = subprocess.Popen(sleeper, stdout=subprocess.PIPE, process_group=0)
read_line(grouped.stdout, timeout=10)
own_group = os.getpgid(grouped.pid) == grouped.pid
same_session = os.getsid(grouped.pid) == os.getsid(0)
os.killpg(grouped.pid, signal.SIGKILL)
grouped.communicate(timeout=5)
print(f"leads its own group: {own_group} · still in our session: {same_session}")
assert own_group and same_session
print("✓ process_group=0: a group of its own, in our session")

# %% [markdown]
# ## Signals through a wrapper
#
# CI systems and job schedulers stop a job by sending SIGTERM (or SIGINT) to the process
# they started. Often that process is a wrapper around the real program, and the signal
# lands on the wrapper. `wrap SECONDS -- COMMAND` runs COMMAND as its
# child; with `--forward` it installs a handler that sends SIGTERM and SIGINT on to the child,
# then waits for the child and exits with the child's status, the way a shell reports it. The
# child here, `report-signals`, catches SIGTERM and SIGINT and prints the signal it got.
#
# Here is `wrap` with its forwarding handler, then the child's handler for both signals. In
# these excerpts `_say(text)` prints a line at once (one unbuffered write, safe in a signal
# handler), and `_bounded(seconds)` caps a duration at `MAX_LIFETIME` (8 s), so that no course
# program can run for long:

# %% tags=["remove-input"]
from lab_snippets.proc_workers import _cmd_hold_flock, _cmd_report_signals, _cmd_wrap
from lab_snippets.showcode import show_source  # prints a course function's source

show_source(_cmd_wrap, first="child = subprocess.Popen", last="return 128 - code")
show_source(_cmd_report_signals, first="def report", last="os._exit(128 + signum)")

# %% [markdown]
# `run_wrapper` (folded) starts `wrap` around `report-signals`, sends the wrapper one signal
# once both are ready, and reaps the wrapper. The cell runs it without `--forward`, then with
# it, and prints each run's exit status and the first words of what the two programs printed
# (`first_words`, folded).
#
# Predict: without `--forward`, the wrapper gets SIGTERM. What exit status does it end with,
# and is its child still running afterwards?

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the helpers"}
def run_wrapper(forward: bool, stop_signal: signal.Signals) -> tuple[subprocess.Popen, int]:
    """Start `wrap` around `report-signals`, signal the wrapper once both are ready, reap it."""
    flags = ["--forward"] if forward else []
    wrapper = subprocess.Popen(WORKER_MODULE + ["wrap", *flags, "3", "--"] + WORKER_MODULE
                               + ["report-signals", "3"], stdout=subprocess.PIPE)
    child_pid = int(read_line(wrapper.stdout, timeout=10).split()[2])
    read_line(wrapper.stdout, timeout=10)  # the child's own "ready": its handlers are installed
    wrapper.send_signal(stop_signal)
    wrapper.wait(timeout=5)
    return wrapper, child_pid


def first_words(lines: list[str]) -> list[list[str]]:
    """Each printed line's first two words ("got SIGTERM"), without what follows."""
    return [line.split()[:2] for line in lines]


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
bare_wrapper, bare_child = run_wrapper(forward=False, stop_signal=signal.SIGTERM)
child_running_then = running(bare_child)
print("without forwarding: wrapper exit", bare_wrapper.returncode,
      "· child still running:", child_running_then)

forwarded = {}
for stop_signal in (signal.SIGTERM, signal.SIGINT):
    wrapper, child_pid = run_wrapper(forward=True, stop_signal=stop_signal)
    lines = wrapper.communicate(timeout=5)[0].decode().splitlines()
    print(f"forwarding {stop_signal.name}: wrapper exit {wrapper.returncode} · output:",
          first_words(lines))
    forwarded[stop_signal] = (wrapper.returncode, first_words(lines),
                              running(child_pid))

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: a-wrapper-must-forward-the-signal
try:
    os.kill(bare_child, signal.SIGTERM)  # our cleanup: the unforwarded child's "got SIGTERM" is this
except ProcessLookupError:
    pass  # its own 3 s were up: it had ended already
unforwarded_lines = first_words(bare_wrapper.communicate(timeout=5)[0].decode().splitlines())
print("without forwarding, after our own cleanup SIGTERM to the child:", unforwarded_lines)
assert bare_wrapper.returncode == -signal.SIGTERM and child_running_then
for stop_signal, (code, said, child_running) in forwarded.items():
    assert said == [["wrapper", "forwards"], ["got", stop_signal.name], ["wrapper", "saw"]], (
        f"the wrapper passed {stop_signal.name} on")
    assert code == 128 + stop_signal and not child_running, "and exited with the child's status"
assert unforwarded_lines == [["got", "SIGTERM"]], "only our own cleanup reached it"
print("✓ without forwarding only our own cleanup reached the child; with it, the child got",
      "SIGTERM or SIGINT and the wrapper exited with the child's status")

# %% [markdown]
# :::{dropdown} Why
#
# Without forwarding (the answer's first line), SIGTERM's default action ended the wrapper
# (return code -15: `Popen` reports a process killed by signal N as -N), and the child never
# heard of it from the wrapper: it was orphaned like the children in the first experiment,
# still running. The folded check then ends it with a SIGTERM of its own.
#
# With forwarding, the order is the one a job scheduler expects: the wrapper receives the
# signal, the child receives it, the child exits, the wrapper reports the child's status as
# its own: 143 for SIGTERM, 130 for SIGINT, the shell's 128 + signal number. The child was not
# killed by the signal: it caught it and exited by itself with that exit code
# (`os._exit(128 + signum)`), so the wrapper passed it on unchanged through the last line's
# `else code`. Had the child been killed instead, `wrap` would have turned its -N into the same
# 128 + N (`128 - code`).
#
# :::
#
# :::{dropdown} Why `report-signals` waits with `select`: a race seen only on a busy machine
#
# `report-signals` waits in `wakeup.wait` (the part the excerpt above hides behind `# ...`)
# rather than `time.sleep`, for a reason that shows
# only on a busy machine. A Python handler runs in the main thread between bytecodes, and
# `time.sleep` looks for signals only when its sleep is interrupted, so a signal that arrives
# after Python's last check but before the sleep begins is handled only when the sleep ends.
# A child that installed its handler and then slept handled SIGTERM seconds late in 1 run of
# 1,500 (8 runs at a time on a loaded two-core machine).
# `report-signals` therefore waits with `select` on the pipe it gave to
# `signal.set_wakeup_fd`: the C-level handler writes a byte there, and the byte is waiting
# whether the signal came before the wait or during it. asyncio's `loop.add_signal_handler`
# is built on the same wake-up descriptor.
#
# :::

# %% [markdown]
# ## File locks: who releases a lock when its holder is SIGKILLed?
#
# `fcntl.flock(fd, LOCK_EX | LOCK_NB)` takes an exclusive lock on an open file, or raises
# `BlockingIOError` at once if another open file holds it; `LOCK_UN` releases it. The holder
# below is `hold-flock`: it takes the lock, says `ready <pid> <clock>` and sleeps, and it
# never gets to unlock, because we kill it with SIGKILL.

# %% tags=["remove-input"]
show_source(_cmd_hold_flock)

# %% [markdown]
# The cell tries the lock while the holder lives, kills the holder, then tries again. It
# writes down each step with `tl.mark(name)` on a `Timeline`, the course's stopwatch
# (chapter 01), and prints the marks' names in order.
#
# Predict: does the second attempt get the lock, or raise `BlockingIOError`?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
with tempfile.TemporaryDirectory() as lock_dir:
    lock_path = os.path.join(lock_dir, "gpu0.lock")
    holder = subprocess.Popen(WORKER_MODULE + ["hold-flock", lock_path, "3"],
                              stdout=subprocess.PIPE)
    read_line(holder.stdout, timeout=10)
    tl.mark("lock: held by the child")
    with open(lock_path, "a+") as lock_file:
        try:
            fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            tl.mark("lock: our attempt refused")
        holder.kill()
        holder.communicate(timeout=5)
        tl.mark("lock: holder killed by SIGKILL")
        try:
            fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            tl.mark("lock: refused again")
        else:
            tl.mark("lock: ours")
            fcntl.flock(lock_file, fcntl.LOCK_UN)
print(tl.names()[-4:])

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert holder.returncode == -signal.SIGKILL
assert tl.order("lock: held by the child", "lock: our attempt refused",
                "lock: holder killed by SIGKILL", "lock: ours")
print("✓ refused while the child held it; ours as soon as SIGKILL ended the holder")

# %% [markdown]
# :::{dropdown} Why
#
# An `flock` belongs to the open file, so it ends when the last descriptor of that file is
# closed, and the kernel closes every descriptor of a process that dies, however it dies.
# So the second attempt got the lock: the last printed mark is `lock: ours`, written only
# when the second non-blocking `flock` returned without raising. No cleanup code has to run,
# which is exactly what a lock that must survive crashes needs.
#
# One trap remains. An *open file* is the kernel's record of one `open` call, and several
# file descriptors can share it. The lock is released when the *last* of them is
# closed, so a child of the holder that still has that descriptor keeps the lock after the
# holder dies. The pattern above is safe because its holder starts no children.
#
# :::
#
# :::{dropdown} Going further
#
# **Which children inherit the lock.** Python makes new descriptors non-inheritable by default, but that
# only means *closed on exec*: a child that runs a new program (as `subprocess` starts them;
# it also closes every other descriptor) does not get them. A child made by `fork` without an
# exec gets a copy of every descriptor, the lock file's included; `multiprocessing` makes its
# children that way with the `fork` start method, the default on Linux up to Python 3.13.
# A holder SIGKILLed while such a child lives leaves the lock held; with `spawn`, the lock is
# free. A holder that starts children should start them with `subprocess`, `spawn` or
# `forkserver`.
#
# :::

# %% [markdown]
# ## Exercise 19.1 · Run a job with a time budget, and leave nothing behind
#
# Implement `run_group_with_budget(command, budget, grace=0.3)`; `grace` defaults to 0.3
# seconds, and the visible test leaves it out:
#
# 1. start `command` with `subprocess.Popen` in a new session (so it leads its own process
#    group), with its output discarded (`stdout=subprocess.DEVNULL`);
# 2. if it exits within `budget` seconds, return its return code;
# 3. otherwise SIGTERM the whole group, wait up to `grace` seconds for the leader (stop
#    waiting as soon as it exits), then SIGKILL the whole group (some members may ignore
#    SIGTERM; if the group is already gone, `os.killpg` raises `ProcessLookupError`: catch
#    it), reap the leader (bounded) and return its return code.
#
# :::{dropdown} Two facts from the groups section, and what "nothing behind" covers
#
# `os.killpg(leader.pid, ...)` still reaches the group's members after the leader has been
# reaped, and a SIGTERM ignored by a parent stays ignored in its children. "Nothing behind" is
# about a job that overruns: one that ends within its budget gets no signal at all, so
# children it left running outlive it.
#
# :::
#
# :::{dropdown} What the grader checks
#
# Graded, on many generated runs (one or two jobs at once, each from a thread of its own: a
# job that ends in time with its own code, 0 included, perhaps after writing 200 KB; a job
# that overruns and honours SIGTERM, ignores it together with its children, or cleans up for
# a while, shorter or longer than `grace`, and exits with its own code; up to two children,
# maybe ignoring SIGTERM alone):
#
# - **code**: the leader's own return code, once it is reaped: its exit code when it ends in
#   time or during its cleanup, `-N` for signal N if a signal ended it;
# - **output**: discarded, so a job that writes a lot still ends in time;
# - **signals**: SIGTERM to the whole group once the budget has run out (not before, and none
#   to a job that ends in time), SIGKILL to the whole group after the leader has exited or
#   `grace` has run out; no error when the group is already gone;
# - **timing**: a return as soon as the group has ended (not after the whole `grace`);
# - **what is left**: no member of the group running, the leader reaped.
#
# :::
#
# One graded job is `spawn-children --ignore-sigterm`: its children ignore SIGTERM from the
# start, while the leader takes the default back. Its code:

# %% tags=["remove-input"]
from lab_snippets.proc_workers import _cmd_spawn_children

show_source(_cmd_spawn_children, first="seconds = _bounded", last="_say(line)")

# %% [markdown]
# The visible test, after the folded solution, runs two jobs: one that exits within its budget
# and one that overruns it.

# %% tags=["solution", "hide-input"] mystnb={"code_prompt_show": "Show the solution"}
def run_group_with_budget(command: list[str], budget: float, grace: float = 0.3) -> int:
    """Run `command` as a process group; on overrunning `budget`, stop the whole group."""
    ### BEGIN SOLUTION
    leader = subprocess.Popen(command, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        return leader.wait(timeout=budget)
    except subprocess.TimeoutExpired:
        pass
    for stop_signal, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5)):
        try:
            os.killpg(leader.pid, stop_signal)
        except ProcessLookupError:
            pass
        try:
            leader.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            pass
    return leader.returncode
    ### END SOLUTION


# %% tags=["tests"]
exited_code = run_group_with_budget(WORKER_MODULE + ["exit", "3"], budget=3)
assert exited_code == 3, (
    "a job that exits within its budget returns its own code: "
    f"3 expected, got {exited_code!r}")
overrun_code = run_group_with_budget(WORKER_MODULE + ["sleep", "3"], budget=0.3)
assert overrun_code == -signal.SIGTERM, (
    "a job that overruns its budget is ended by SIGTERM to its group: "
    f"{-signal.SIGTERM} expected, got {overrun_code!r}")

# %% tags=["tests", "hidden-tests", "remove-cell"]
### BEGIN HIDDEN TESTS
from lab_snippets import grading as _grading


def _read_pids(path: str) -> list[int]:
    with open(path) as _pid_file:
        return [int(_pid) for _pid in _pid_file.read().split()[1:]]
_all_pids: list[int] = []
with tempfile.TemporaryDirectory() as _dir:
    try:
        # The leader honours SIGTERM, its two children ignore it. The budget leaves time to
        # start the children even on a loaded machine.
        _pid_file_path = os.path.join(_dir, "pids")
        _code = run_group_with_budget(
            WORKER_MODULE + ["spawn-children", "2", "5", "--ignore-sigterm", "--pid-file", _pid_file_path],
            budget=2.5, grace=0.2)
        assert os.path.exists(_pid_file_path), "the job had time to start its children"
        _all_pids = _read_pids(_pid_file_path)
        assert _code is not None, (
            "the leader's return code was None: reap the leader with wait() (bounded) before "
            "returning its code (chapter 19)")
        assert _code == -signal.SIGTERM, (
            f"the leader, which honours SIGTERM, ended with {_code}: send SIGTERM to the group first "
            "and SIGKILL only after the grace period, then return the leader's code (chapter 19)")
        _gone = wait_until_gone(_all_pids, timeout=2)  # SIGKILL is delivered asynchronously
        _left = [_pid for _pid in _all_pids if _pid not in _gone]
        assert not _left, (
            f"{len(_left)} member(s) of the group that ignore SIGTERM were left running: send "
            "SIGKILL to the whole group (os.killpg) after the grace period, whether or not the "
            "leader is still alive (chapter 19)")
        _pid_file_path = os.path.join(_dir, "pids2")
        _halfway = _grading.ReferenceWait(1.0 + (3 - 1.0) / 2)  # a plain wait, beside the call
        _in_time = _grading.call(run_group_with_budget, WORKER_MODULE + ["spawn-children", "2", "0.2", "--pid-file",
                                                                          _pid_file_path], budget=3)
        assert _in_time.value == 0, "a job that ends in time returns its own code"
        _grading.check_returns_early(
            _in_time, work=1.0, budget=3, by=_halfway.seconds, what="run_group_with_budget, whose job ended in time,",
            hint="wait for the leader with wait(timeout=budget), which returns when it exits; time.sleep(budget) "
                 "waits out the budget (chapter 19)")
        _all_pids += _read_pids(_pid_file_path)
        assert len(wait_until_gone(_read_pids(_pid_file_path), timeout=2)) == 3
        # A lone leader that honours SIGTERM: by the time of SIGKILL its group is gone.
        _halfway = _grading.ReferenceWait(0.5 + (0.3 + 2 - 0.5) / 2)
        _seen = _grading.call(run_group_with_budget, WORKER_MODULE + ["sleep", "3"], budget=0.3, grace=2)
        if isinstance(_seen.error, ProcessLookupError):
            raise AssertionError(
                "ProcessLookupError escaped: by the time SIGKILL is sent the whole group may "
                "already be gone; expect that and carry on (chapter 19)") from None
        assert _seen.error is None, f"run_group_with_budget raised {_seen.error!r}"
        _code = _seen.value
        assert _code == -signal.SIGTERM, f"a lone leader that honours SIGTERM ended with {_code}"
        _grading.check_returns_early(
            _seen, work=0.5, budget=0.3 + 2, by=_halfway.seconds, what="run_group_with_budget, whose group ended at SIGTERM,",
            hint="wait for the leader with wait(timeout=grace), which returns when it exits; time.sleep(grace) "
                 "waits out the grace period (chapter 19)")
        # A leader that ignores SIGTERM itself (ignored here while it starts, so from its first
        # instruction: an ignored signal stays ignored across fork and exec): only SIGKILL ends it.
        _old_term = signal.signal(signal.SIGTERM, signal.SIG_IGN)
        try:
            _limit = _grading.ReferenceWait(0.3 + 0.2 + 1.0)  # budget, grace and 1 s of slack, beside the call
            _deaf = _grading.call(run_group_with_budget, WORKER_MODULE + ["sleep", "5", "--ignore-sigterm"],
                                  budget=0.3, grace=0.2)
        finally:
            signal.signal(signal.SIGTERM, _old_term)
        assert _deaf.error is None and _deaf.value == -signal.SIGKILL, (
            "a leader that ignores SIGTERM must be ended by SIGKILL to its group once the grace period is over; "
            f"got {_deaf.value if _deaf.error is None else _deaf.error!r}: after SIGTERM wait at most `grace` "
            "seconds (wait(timeout=grace)), then SIGKILL the group (chapter 19)")
        _grading.check_within(
            _deaf, budget=_limit.seconds, slack=0, what="run_group_with_budget of a leader that ignores SIGTERM",
            hint="after SIGTERM wait `grace` seconds, not more, before SIGKILL (chapter 19)")
    finally:
        for _pid in _all_pids:
            if running(_pid):
                os.kill(_pid, signal.SIGKILL)
        wait_until_gone(_all_pids, timeout=5)

# Generated scenarios (issue 37): one or two jobs at once, each a small shell script with drawn
# behaviour (ends in time with its own code, perhaps after a flood of output; overruns and honours
# SIGTERM, ignores it with its children, or cleans up for a while and exits with its own code),
# run through run_group_with_budget and the reference side by side, on real processes (the
# chapter's point), compared on the contract's facts (lab_snippets.scenarios explains the pattern).
import dataclasses as _dc
import functools as _functools

from hypothesis import strategies as _st

from lab_snippets import scenarios as _sc
from lab_snippets import scenarios_threads as _sth

_reference = _sc.reference(globals(), "run_group_with_budget")
_GRACE = 0.5  # longer than a short cleanup (0.05 s), shorter than a long one (1.5 s)


@_dc.dataclass(frozen=True)
class _Scenario:
    jobs: tuple  # of _sth.StandIn, one per caller, all at once

    @staticmethod
    def budget(job) -> float:  # roomy for a job that ends in time, short for one that overruns
        return 2.0 if job.seconds is not None else 0.4  # 0.4 s: time for a start on a loaded machine

    def describe(self) -> str:
        who = f"{len(self.jobs)} threads at once, each" if len(self.jobs) > 1 else "one thread"
        calls = "; ".join(f"job {k} (budget={self.budget(j):g}, grace={_GRACE:g}) is {j.describe()}"
                          for k, j in enumerate(self.jobs))
        return f"{who} calls run_group_with_budget: {calls}"


_in_time = _st.builds(_sth.StandIn, seconds=_st.just(0.05), code=_st.sampled_from([0, 3]),
                      chatter=_st.sampled_from([0, 200_000]))
_overruns = _st.builds(_sth.StandIn, on_term=_st.sampled_from(["honour", "ignore", "cleanup"]),
                       code=_st.sampled_from([3, 0]), cleanup=_st.sampled_from([0.05, 1.5]),
                       children=_st.integers(0, 2), deaf_children=_st.booleans())
_scenarios = _st.builds(_Scenario, _st.lists(_st.one_of(_overruns, _in_time), min_size=1, max_size=2).map(tuple))


def _one_job(fn, job, log: str) -> dict:
    seen = _sth.timed(fn, job.argv(log), budget=_Scenario.budget(job), grace=_GRACE)
    lines = _sth.read_log(log)
    leader = [line.split() for line in lines if line.startswith("leader ")]
    seen["leader"] = _sth.state(int(leader[0][1])) if leader else "never started"
    seen["stdout"] = leader[0][2] if leader and len(leader[0]) > 2 else "?"
    return seen


def _observe(fn, s: _Scenario) -> list:
    with tempfile.TemporaryDirectory() as folder:
        logs = [os.path.join(folder, f"job{k}.log") for k in range(len(s.jobs))]
        try:
            seen = _sth.at_once([_functools.partial(_one_job, fn, job, log) for job, log in zip(s.jobs, logs, strict=True)],
                                timeout=10)
            for one, log in zip(seen, logs, strict=True):
                lines = _sth.read_log(log)
                one["left"] = len(_sth.still_running(_sth.pids_in_log(lines), within=1.0))
                one["asked"] = "got SIGTERM" in lines
        finally:
            for log in logs:
                _sth.kill_all(_sth.pids_in_log(_sth.read_log(log)))
    return seen


def _compare_one(me: dict, it: dict, job) -> str | None:
    if me["kind"] != it["kind"] or me.get("value") != it.get("value"):
        got = me.get("value") if me["kind"] == "returned" else me["kind"]
        return (f"the code returned: {got!r}, expected {it.get('value')!r}: the leader's own return code once it "
                "is reaped, its own exit code when it ends in time or while it cleans up, SIGTERM to the group "
                "at the budget and SIGKILL only after the grace period")
    if me["stdout"] == "?" and it["stdout"] != "?":  # its leader never wrote its first line
        return (f"the job was stopped before it had started ({me['seconds']:.2f} s into a budget of "
                f"{_Scenario.budget(job):g} s): SIGTERM once the budget has run out, not before")
    if me["stdout"] != it["stdout"]:
        return (f"the job's output went to {me['stdout']!r}, not {it['stdout']!r}: discard it "
                "(stdout=subprocess.DEVNULL); a pipe nobody reads fills up and stops the job")
    if me["leader"] == "zombie":
        return "the leader was not reaped when the function returned: wait() for it (bounded) before returning"
    if me["asked"] != it["asked"]:
        return ("SIGTERM before SIGKILL: the job's cleanup "
                + ("never got SIGTERM: send SIGTERM to the group first" if it["asked"]
                   else "got SIGTERM although the job ended within its budget"))
    if job.seconds is None and me["seconds"] < _Scenario.budget(job) * 0.9:
        return (f"SIGTERM once the budget has run out, not before: the job was stopped after {me['seconds']:.2f} s "
                f"of a budget of {_Scenario.budget(job):g} s")
    if me["left"]:
        return (f"no member left running: {me['left']} process(es) of the job's group still running after the "
                "function returned: SIGKILL the whole group (os.killpg) after the grace period")
    # members that ignore SIGTERM and outlive the leader may get the rest of the grace (or SIGKILL at once)
    if me["seconds"] > it["seconds"] + 0.3 + (_GRACE if job.deaf_children and job.children else 0):
        return (f"a return as soon as the group has ended: {me['seconds']:.2f} s, where the reference, run beside "
                f"it, returned after {it['seconds']:.2f} s: wait with wait(timeout=...), which returns when the "
                "leader ends, not with time.sleep")
    return None


_compare = _sth.per_item(_compare_one, lambda s: s.jobs, "job", "run_group_with_budget")


# Two drawn runs fit the time (real processes), so one world is always run as well: a leader that
# ends its cleanup within the grace while its child, ignoring SIGTERM, lives on; beside a job that floods.
_always = _Scenario((_sth.StandIn("cleanup", code=3, cleanup=0.05, children=1, deaf_children=True),
                     _sth.StandIn(seconds=0.05, chatter=200_000)))
_sc.differential(run_group_with_budget, _reference, _scenarios, _sth.Beside(_observe, _reference), _compare,
                 what="run_group_with_budget", examples=2, hint="chapter 19", explicit=(_always,))
### END HIDDEN TESTS

# %% [markdown]
# ## Summary
#
# - A signal reaches one process. Killing a parent orphans its children; they are adopted
#   and keep running, with everything they hold.
# - `start_new_session=True` (or `process_group=0` from 3.11) makes the child lead its own
#   process group; `os.killpg` then signals the child and everything it started, without
#   knowing their pids. Escalate SIGTERM, a grace period, then SIGKILL to the group.
# - A wrapper must forward SIGTERM/SIGINT to its child and exit with the child's status.
# - `fcntl.flock` belongs to the open file; the kernel releases it when the holder dies,
#   even by SIGKILL, as long as no other process inherited the descriptor.
#
# **What's next.** Chapter 20 moves from processes to connections: asyncio Streams, where one
# `read()` is not one message and closing has two sides.
#
# ## In slime
#
# slime's CI runs each GPU test through a small wrapper, `tests/ci/gpu_lock_exec.py`, which
# meets the chapter's three topics at once: it starts the test in a new session, stops it from
# a signal handler, and owns each GPU through a `flock`. The quotes follow the order in which
# the wrapper uses them: starting and stopping the test (between the two runs), then the
# handlers and the lock (at the end).
# Other signal and lock sites are in the [source inventory](../book/reference/inventory.md).
#
# The wrapper has two gaps:
#
# - **Gap 1, the wrapper is SIGKILLed:** the lock is freed with the wrapper, but the test in its
#   new session runs on. The run below shows it; it is the cost the lock alone does not show.
# - **Gap 2, the wrapper's own graceful stop:** its handler first signals only the test's own
#   process (`child.terminate()`). A test that exits on that within 5 s ends the wrapper at once
#   (`sys.exit`), and the processes the test started are never signalled: they may outlive the
#   locks. The first quote shows it, just before the second run below.
#
# Below, a holder in the shape of
# `gpu_lock_exec` (the program `GPU_WRAPPER`, folded) takes the lock, starts a 3 s "test" in a
# new session and is SIGKILLed; then the next job tries the lock.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the helpers"}
GPU_WRAPPER = """
import fcntl, subprocess, sys
lock_file = open(sys.argv[1], "a+")
fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
test = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3)"], start_new_session=True,
                        stdout=subprocess.DEVNULL)
print("ready", test.pid, flush=True)
test.wait()
"""

# %%
with tempfile.TemporaryDirectory() as lock_dir:
    lock_path = os.path.join(lock_dir, "gpu0.lock")
    gpu_wrapper = subprocess.Popen([sys.executable, "-c", GPU_WRAPPER, lock_path],
                                   stdout=subprocess.PIPE)
    test_pid = int(read_line(gpu_wrapper.stdout, timeout=10).split()[1])
    gpu_wrapper.kill()  # SIGKILL: no handler runs, nothing stops the test
    gpu_wrapper.communicate(timeout=5)
    with open(lock_path, "a+") as next_job:
        try:
            fcntl.flock(next_job, fcntl.LOCK_EX | fcntl.LOCK_NB)
            next_job_got_lock = True
        except BlockingIOError:
            next_job_got_lock = False
        test_still_running = running(test_pid)  # the test still uses "the GPU"
if running(test_pid):
    os.kill(test_pid, signal.SIGKILL)  # our cleanup
test_gone = wait_until_gone([test_pid], timeout=5)
print("the next job got the lock:", next_job_got_lock,
      "· the old test still running:", test_still_running)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: a-killed-wrapper-frees-the-lock-not-the-test
assert gpu_wrapper.returncode == -signal.SIGKILL and test_pid in test_gone
assert next_job_got_lock and test_still_running, "the lock went with the wrapper; the test ran on"
print("✓ two jobs on one GPU: the lock was free while the killed wrapper's test still ran")

# %% [markdown]
# The first quote: how `gpu_lock_exec` starts the test and stops it.

# %% tags=["remove-input"]
from lab_snippets.sites import show_call_site

show_call_site("19")

# %% [markdown]
# Gap 2 the same way. `GRACEFUL_WRAPPER` (folded) starts a "test", the program
# `TEST_WITH_A_CHILD`, in a new session, and its SIGTERM handler stops it as
# `gpu_lock_exec`'s does: `terminate()` to the test alone, a wait of up to 5 s, then
# `sys.exit`. The test has started a 3 s child of its own, and exits on SIGTERM.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the wrapper and its test"}
TEST_WITH_A_CHILD = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3)"])
print(child.pid, flush=True)
time.sleep(3)
"""
GRACEFUL_WRAPPER = """
import signal, subprocess, sys, time
test = subprocess.Popen([sys.executable, "-c", sys.argv[1]], start_new_session=True,
                        stdout=subprocess.PIPE)
def stop(signum, frame):
    test.terminate()  # the test's own process only
    test.wait(timeout=5)
    sys.exit(128 + signum)
signal.signal(signal.SIGTERM, stop)
print("ready", test.pid, test.stdout.readline().decode().strip(), flush=True)
while test.poll() is None:  # polled, as gpu_lock_exec does
    time.sleep(0.05)
"""

# %% [markdown]
# We send the wrapper one SIGTERM. Predict: afterwards, do the test and its child still run?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
wrapper = subprocess.Popen([sys.executable, "-c", GRACEFUL_WRAPPER, TEST_WITH_A_CHILD],
                           stdout=subprocess.PIPE)
_, test_pid, its_child = read_line(wrapper.stdout, timeout=10).split()
wrapper.terminate()  # SIGTERM: the wrapper's graceful stop
wrapper.communicate(timeout=10)
time.sleep(0.1)
after_stop = {"test": running(int(test_pid)), "its child": running(int(its_child))}
if after_stop["its child"]:
    os.kill(int(its_child), signal.SIGKILL)  # our cleanup
child_gone = wait_until_gone([int(its_child)], timeout=5)
print("wrapper exit code:", wrapper.returncode, "· still running:", after_stop)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: a-graceful-wrapper-stop-orphans-the-tests-children
assert wrapper.returncode == 128 + signal.SIGTERM and int(its_child) in child_gone
assert not after_stop["test"], "the test exited on its SIGTERM"
assert after_stop["its child"], "nothing signalled the test's child: it ran on"
print("✓ the wrapper's graceful stop ended the test; the test's own child ran on")

# %% [markdown]
# :::{dropdown} Why
#
# The handler's `terminate()` sends SIGTERM to one pid, the test's. The test died of it, the
# handler's wait returned at once, and the wrapper exited with 128 + 15 = 143. Nothing sent
# the test's child anything: it sat in the test's process group, which `killpg` would have
# reached, and `gpu_lock_exec` sends that only when the test is still running after 5 s. With
# the wrapper gone, its locks are free while the child runs on: the same hole as Gap 1, by the
# graceful path. Signalling the group first, as the exercise does, closes it.
#
# :::

# %% tags=["remove-input"]
show_call_site("19b")

# %% tags=["remove-input"]
show_call_site("19c")

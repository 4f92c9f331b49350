# %% [markdown]
# # 26 · Subprocesses from asyncio
# *在 asyncio 中运行子进程*
#
# **The question.** An agent rollout runs the model's code in a child process, for hundreds of
# samples at once, from coroutines. How do you start a child from async code so that the
# event loop keeps serving every other sample, neither output pipe fills up, and a child that
# overruns its budget is stopped together with everything it started?
#
# **You will**
# 1. measure with a heartbeat what a blocking `Popen.communicate()` inside `async def` does
#    to every other task, and count the children running at once behind a semaphore of 32;
# 2. run children with `asyncio.create_subprocess_exec` and find a safe way to read both
#    stdout and stderr;
# 3. put a timeout on `communicate()` and find what it does to the child;
# 4. kill a whole process group started with `start_new_session=True` from async code.
#
# **Needs** chapters 06 (semaphores), 08 (blocking the loop), 18 (reaping) and 19 (process
# groups) · about 50 minutes
#
# **New to the course?** [How to read an experiment](../book/reading_guide.md) explains the
# timelines, the helpers and the folded checks; the [glossary](../book/glossary.md) gives the
# words the chapters share. In the first cell, `figure_style()` only sets how the plots look.
#
# Every child here is a command of `lab_snippets.proc_workers` started by this notebook, every
# wait has a timeout, and every child is reaped before its cell ends. The setup is folded
# below: the imports, `WORKER`, the command line that starts a `lab_snippets.proc_workers`
# command, and `CHILD_SECONDS`, how long the first experiment's children sleep (0.15 s).

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the setup"}
import asyncio
import os
import signal
import subprocess
import sys
import time

import psutil

from lab_snippets.loopwatch import LoopWatch
from lab_snippets.timeline import Timeline, figure_style

figure_style()
WORKER = [sys.executable, "-m", "lab_snippets.proc_workers"]
CHILD_SECONDS = 0.15


# %% [markdown]
# ## Predict: how many children run at once, and does the heartbeat keep ticking?
#
# A tool call runs a child process. Below are two versions of the same `async def`: one starts
# the child with `subprocess.Popen` and waits in `communicate()`, as ordinary synchronous code
# does; the other uses `asyncio.create_subprocess_exec` and awaits `communicate()`. Both sit
# behind a `Semaphore(32)`; a heartbeat task (`LoopWatch`, chapter 02's heartbeat) ticks
# every 5 ms.
# Three tool calls start together; each child is a new Python interpreter that starts up and
# then sleeps 0.15 s.
#
# Before running: for each version, how many children run at once, and does the heartbeat
# tick while a child runs?
#
# `tool_permits` below is that `Semaphore(32)`, wrapped so that it also records when each
# call held a permit. A call takes its permit just before it starts its child and gives it
# back just after the child has ended, so one permit held is one child running. From those
# records, `max_overlap_of` counts the most calls that held a permit at one instant (the
# children running at once), and `beats_inside` the heartbeats that came while at least one
# child was running. The wrapper and the counting helpers are folded.

# %% tags=["hide-input", "remove-output"] mystnb={"code_prompt_show": "Show the helpers that record permits, count overlaps and poll for exits"}
# The instruments, one line each:
# WatchedSemaphore(n): an asyncio.Semaphore(n) that records when each task held a permit;
# max_overlap_of(spans): the most (start, end) spans open at one instant;
# beats_inside(watch, spans): the heartbeats taken while some child was running;
# running(pid): the process exists and is not a zombie;
# ends_within(awaitable, s): it finished within s seconds (else cancelled);
# wait_until_gone(pids, timeout): polls until none runs, returns those still running.
class WatchedSemaphore:
    """An asyncio.Semaphore that also records, per task name, when it held a permit."""

    def __init__(self, value: int) -> None:
        self.semaphore = asyncio.Semaphore(value)
        self.since: dict[str, float] = {}
        self.held: dict[str, tuple[float, float]] = {}

    async def __aenter__(self) -> None:
        await self.semaphore.acquire()
        self.since[asyncio.current_task().get_name()] = time.monotonic()

    async def __aexit__(self, *exc_info: object) -> None:
        name = asyncio.current_task().get_name()
        self.held[name] = (self.since.pop(name), time.monotonic())
        self.semaphore.release()


def max_overlap_of(spans: list[tuple[float, float]]) -> int:
    """The largest number of (start, end) spans open at one instant."""
    probe = Timeline()
    for start, end in spans:
        probe.add("span", start, end)
    return probe.max_overlap()


def beats_inside(watch: LoopWatch, spans: list[tuple[float, float]]) -> int:
    """Heartbeats that happened while at least one child was running."""
    return sum(any(start < beat < end for start, end in spans) for beat in watch.beats[1:])


def running(pid: int) -> bool:
    """True while `pid` exists and has not exited (a zombie does not count)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


async def ends_within(awaitable, seconds: float) -> bool:
    """True if `awaitable` finishes within `seconds`; otherwise it is cancelled and False."""
    try:
        await asyncio.wait_for(awaitable, seconds)
        return True
    except TimeoutError:
        return False


async def wait_until_gone(pids: list[int], timeout: float) -> list[int]:
    """Poll (without blocking the loop) until no pid in `pids` runs; return those still running."""
    deadline = time.monotonic() + timeout
    while any(running(p) for p in pids) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    return [p for p in pids if running(p)]


# %% tags=["remove-output"]
tool_permits = WatchedSemaphore(32)  # an asyncio.Semaphore(32) that records its holders


async def blocking_tool() -> None:
    async with tool_permits:
        proc = subprocess.Popen(WORKER + ["sleep", str(CHILD_SECONDS)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        proc.communicate(timeout=5)


async def async_tool() -> None:
    async with tool_permits:
        proc = await asyncio.create_subprocess_exec(
            *WORKER, "sleep", str(CHILD_SECONDS),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        await proc.communicate()


# %% tags=["hide-input", "remove-output"] mystnb={"code_prompt_show": "Show the plotting code"}
def draw_two_runs():
    """Both runs on one time axis: a lane per child, and the loop's heartbeat per run."""
    tl = Timeline()
    tl.t0 = started
    for label, spans in spans_of.items():
        for i, (start, end) in enumerate(spans):
            tl.add(f"{label}: child {i}", start, end,
                   state="blocked" if label == "blocking" else "running")
        watch_of[label].add_to(tl, f"{label}: event loop", threshold=0.03)
    lanes = [f"blocking: child {i}" for i in range(3)] + ["blocking: event loop"]
    lanes += [f"async: child {i}" for i in range(3)] + ["async: event loop"]
    return tl.plot("Three tool calls: blocking communicate() vs awaited communicate()",
                   lanes=lanes, meanings={"blocked": "loop blocked (child waited for)",
                                          "running": "loop ticking (child awaited)"})


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
# Three calls of each tool at once, under a heartbeat.
results, spans_of, watch_of = {}, {}, {}  # spans and beats kept for the figure
started = time.monotonic()  # the figure's time zero
for label, tool in (("blocking", blocking_tool), ("async", async_tool)):
    names = [f"{label}: child {i}" for i in range(3)]
    async with LoopWatch(interval=0.005) as watch:
        await asyncio.wait_for(
            asyncio.gather(*(asyncio.create_task(tool(), name=name) for name in names)),
            timeout=10)
    spans = [tool_permits.held[name] for name in names]
    spans_of[label], watch_of[label] = spans, watch
    results[label] = {"peak children": max_overlap_of(spans),
                      "beats while a child ran": beats_inside(watch, spans),
                      "longest gap (ms)": round(watch.max_gap * 1000)}

for label, seen in results.items():
    print(f"{label:>8}: {seen}")
fig = draw_two_runs()  # folded above

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: blocking-communicate-serialises-children
assert results["blocking"]["peak children"] == 1, (
    "the semaphore allows 32, yet only one child runs at a time")
assert results["blocking"]["beats while a child ran"] == 0, (
    "the loop could not tick while communicate() waited")
assert results["async"]["peak children"] == 3
assert results["async"]["beats while a child ran"] >= 3, (
    "with await, the loop keeps running during the children")
print("✓ blocking: one child at a time and no heartbeat while it ran;",
      "awaited: three at once, the loop ticking")

# %% [markdown]
# :::{dropdown} Why
#
# `Popen.communicate()` waits in the {term}`event loop`'s own thread, so while a child runs nothing
# else on that loop runs: not the heartbeat, not the other tool calls, not the HTTP requests of
# other samples. The run shows it with three calls: a peak of one child at a time where the
# awaited version had three. Nothing in that depends on the number three: the first holder
# does not give the loop back between taking its permit and releasing it, so no other call can
# even reach `acquire()` meanwhile, and a semaphore of 32 would see one holder at a time as
# well. The limit you configured is not the limit you get: the blocking call sets a hidden cap
# of one.
#
# The async version awaits the child, so the three children overlap and the heartbeat ticks,
# except for short gaps while the interpreters start. The `async def` was never the point; the
# `await` on something that really suspends is.
#
# The figure shows both runs on one time axis. Every child bar is a child running; the colour
# says what the loop did meanwhile. Red bars are children waited for with the loop blocked
# (and the loop's own lane red while it could not tick); blue bars are children awaited, the
# loop ticking. The red bars form a staircase, one child after the other; the blue bars overlap.
# Each bar includes the start of a new Python interpreter, so it is longer than the 0.15 s
# sleep.
#
# :::
#
# :::{dropdown} Going further: what an interpreter start costs
#
# Each child is a new Python interpreter that imports `lab_snippets.proc_workers` before it
# sleeps. The cell below prints two timings of the answer's runs: the mean child, how long
# one call held its permit on average, and the whole run, from the first permit to the last
# release. The mean minus the 150 ms sleep is what a start cost in this
# run; it depends on the Python build (its start-up and import time), on whether the files
# are in the disk cache, and on how busy the CPUs are. Three interpreters starting together
# share the CPUs, so each start can take longer in the awaited run, and its whole run can
# take more than a third of the blocking run's; the last line puts the two side by side.
# The loop lane turns red for any gap of more than 30 ms; while three interpreters keep the
# CPUs busy, the heartbeat can wait that long for a CPU, so a short red stretch on the awaited
# run's loop lane, if there is one, is that wait, not a child. The check above counts the
# awaited run's beats while the children ran: at least three.
#
# :::

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the timings of the two runs"}
whole_run = {}
for label, spans in spans_of.items():  # each span: when a call took its permit, when it let go
    whole_run[label] = (max(e for _, e in spans) - min(s for s, _ in spans)) * 1000
    print(f"{label:>8}: mean child {sum(e - s for s, e in spans) / len(spans) * 1000:.0f} ms,",
          f"whole run {whole_run[label]:.0f} ms")
print(f"awaited whole run {whole_run['async']:.0f} ms;",
      f"a third of the blocking run: {whole_run['blocking'] / 3:.0f} ms")

# %% [markdown]
# ## Two pipes, one reader
#
# Between the child and your code, each of its output streams passes through two buffers:
#
# - the kernel's pipe, 64 KiB by default on Linux;
# - behind it, asyncio's `StreamReader`, which reads the pipe in the background but stops at
#   about 128 KiB until your code takes data out.
#
# Once both are full, the child's next write into that pipe waits until someone reads.
#
# The reader below reads stdout to its end *before* it reads stderr, with a timeout on each
# read. Its child, the worker `chatter OUT ERR`, writes ERR bytes to stderr, then OUT bytes to
# stdout, then exits.
#
# Predict, for 10 kB and for 1 MB on stderr (10,000 and 1,000,000 bytes): does the reader finish? If it times out instead,
# is the child still running then, and what does the child do once both pipes are read?

# %% tags=["remove-input", "hide-output"] mystnb={"code_prompt_show": "Show the lines of chatter that write"}
from lab_snippets.proc_workers import _cmd_chatter, _cmd_spawn_children
from lab_snippets.showcode import show_source

show_source(_cmd_chatter, first="_write_all(2", last="return args.exit")

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the helpers: reap (kill, then wait) and the read after a timeout"}
# reap(proc): kill the child if it still runs, then wait for it (bounded); every experiment
# with a child ends with it, so that no child is left behind.
async def reap(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:  # still running: kill it, then wait for it (bounded)
        proc.kill()
        await asyncio.wait_for(proc.wait(), timeout=5)


async def read_after_timeout(proc: asyncio.subprocess.Process) -> str:
    """After a timeout: note whether the child had exited, read both pipes, wait for it."""
    state = "running" if proc.returncode is None else "exited"
    rest = await asyncio.wait_for(asyncio.gather(proc.stdout.read(), proc.stderr.read()),
                                  timeout=5)
    code = await asyncio.wait_for(proc.wait(), timeout=5)
    return (f"timed out, child {state}; after reading both pipes: exit code {code} "
            f"(stderr held {len(rest[1]):,} bytes)")


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer: the reader with 10 kB and with 1 MB"}
async def read_stdout_then_stderr(err_bytes: int, timeout: float) -> str:
    proc = await asyncio.create_subprocess_exec(
        *WORKER, "chatter", "1000", str(err_bytes),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out = await asyncio.wait_for(proc.stdout.read(), timeout)  # stdout to its end,
        err = await asyncio.wait_for(proc.stderr.read(), timeout)  # then stderr
        await asyncio.wait_for(proc.wait(), timeout)
        return f"finished: {len(out)} + {len(err)} bytes"
    except TimeoutError:
        return await read_after_timeout(proc)  # folded above
    finally:
        await reap(proc)


small = await read_stdout_then_stderr(10_000, timeout=2)
large = await read_stdout_then_stderr(1_000_000, timeout=2)
print("10 kB on stderr:", small)
print(" 1 MB on stderr:", large)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: reading-one-pipe-at-a-time-deadlocks
assert small.startswith("finished"), (
    "a small stderr fits in the buffers: the naive reader works in tests")
assert large.startswith("timed out, child running; after reading both pipes: exit code 0"), (
    "with 1 MB on stderr the child waits for us and we wait for it")
print("✓ 10 kB: finished; 1 MB: stuck until stderr was read, then the child exited with 0")

# %% [markdown]
# :::{dropdown} Why
#
# What decides it is whether stderr fits into the pipe and asyncio's buffer behind it, about
# 64 + 128 KiB (the `StreamReader` stops at twice its `limit=`, which is 64 KiB by default).
# 10 kB fits, so the naive reader finishes, which is why it survives small tests.
#
# 1 MB does not. The reader waits for a stdout end that never comes, while the child waits for
# room on stderr: each `os.write` inside `_write_all` blocks while the pipe is full, so the
# child cannot reach its stdout writes, or its exit, until someone reads stderr. That is the
# pipe-buffer deadlock. Reading stderr is what un-sticks the child: it exits with 0 by itself,
# so the hang was ours.
#
# The remedies: `communicate()` reads both pipes together (and feeds stdin if you gave input);
# so does `asyncio.gather(proc.stdout.read(), proc.stderr.read())`. If you do not want the
# output, do not ask for a pipe: pass `subprocess.DEVNULL`.
#
# :::
#
# ## A timeout on `communicate()` stops the wait, not the child
#
# Chapters 14 and 18 showed that a wait which times out leaves its child running (unlike
# `subprocess.run` in chapter 12, which kills and reaps the child on timeout). `wait_for`
# around asyncio's `communicate()` is no exception: cancelling our coroutine does nothing to
# the child, another program. The cell below starts a child that sleeps 5 s, waits for it with
# `asyncio.wait_for(proc.communicate(), timeout=0.3)`, and records the child's `returncode`
# and `running(proc.pid)` (from the first section's folded helpers) right after the timeout;
# the kill in `reap`, in its `finally`, is what ends the child (exit status -9, SIGKILL).
# After a timeout, kill the child and wait for it yourself.

# %%
proc = await asyncio.create_subprocess_exec(
    *WORKER, "sleep", "5", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
try:
    try:
        await asyncio.wait_for(proc.communicate(), timeout=0.3)
        timed_out = False
    except TimeoutError:
        timed_out = True
    # running(pid): true while the process exists and is not a zombie
    after_timeout = {"returncode": proc.returncode, "running": running(proc.pid)}
finally:
    await reap(proc)
print("right after the timeout:", after_timeout)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: timeout-leaves-the-child-running
assert timed_out
assert after_timeout == {"returncode": None, "running": True}, (
    "the timeout stopped our wait, not the child")
assert proc.returncode == -signal.SIGKILL, "only reap's kill() ended it"
print("✓ after the timeout the child was still running; reap's kill() and wait() ended it")

# %% [markdown]
# ## Measure: what `kill()` reaches, and what `killpg()` reaches
#
# A tool often starts children of its own. When it overruns, what does `proc.kill()` reach?
#
# `spawn-children 2 5` starts two children that sleep 5 s and prints one line, `ready`, its own
# pid, then its children's pids (`ready 4107 4110 4111`). We pipe its stdout and its stderr.
# Its children write nothing, and like every child they start with their parent's open files,
# except that their stdout goes to `/dev/null`.
#
# So both children hold the leader's stderr pipe.

# %% tags=["remove-input", "hide-output"] mystnb={"code_prompt_show": "Show the lines of spawn-children that start the children"}
show_source(_cmd_spawn_children, first="sleep = [", last="_say(line)")

# %% [markdown]
# `start_family` starts it with `start_new_session=True`, as chapter 19 did, so that it leads a
# process group whose id is its pid, and returns the leader and its two children's pids.
# The cell after it kills the leader with `kill()`, waits for it with `leader.wait()` (at most
# 0.5 s), then reads its stderr to the end, as `communicate()` would, for at most 0.3 s.
# `kill()` only sends the signal: asyncio records the exit later, once it is told the process
# has ended, so the `wait()` called on the next line finds no exit recorded yet: it is
# already pending when the leader dies.
# Predict: once the leader is dead, are its two children still running, does the read reach
# the end of stderr, and does that `wait()` return?

# %%
async def start_family() -> tuple[asyncio.subprocess.Process, list[int]]:
    leader = await asyncio.create_subprocess_exec(
        *WORKER, "spawn-children", "2", "5",
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    ready = await asyncio.wait_for(leader.stdout.readline(), timeout=10)
    return leader, [int(pid) for pid in ready.split()[2:]]


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer: what kill() leaves running"}
leader, members = await start_family()
leader.kill()
# ends_within(aw, t): true if aw finished within t s (first section's folded helpers)
leader_wait_returned = await ends_within(leader.wait(), 0.5)  # exit not yet recorded
leader_code = leader.returncode  # set once asyncio has recorded (reaped) the exit
stderr_ended_at_kill = await ends_within(leader.stderr.read(), 0.3)  # read to its end
# wait_until_gone(pids, timeout): polls until they exit; returns those still running
survivors_after_kill = await wait_until_gone(members, timeout=0.3)
print("after kill(): leader's return code", leader_code,
      "· its wait() returned within 0.5 s:", leader_wait_returned,
      "· stderr ended within 0.3 s:", stderr_ended_at_kill,
      "· children still running:", len(survivors_after_kill))

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: kill-reaches-only-the-leader
assert len(survivors_after_kill) == 2, "kill() ended the leader only; its children were orphaned"
assert leader_code == -signal.SIGKILL, "the leader itself died of the SIGKILL and was reaped"
assert not stderr_ended_at_kill, (
    "the leader is dead and reaped, yet its stderr did not end: the orphans still hold the pipe, "
    "so reading the output to its end (communicate()) waits for them")
print("✓ kill() left both children running and the stderr pipe open")

# %% [markdown]
# :::{dropdown} Why
#
# `kill()` signals one process, the leader, and a reader sees the end of a pipe only when every
# process holding its write end has closed it. The two children inherited the stderr pipe and
# were never signalled. Look at the output: the return code -9 says the leader died of SIGKILL
# and asyncio has reaped it (`returncode` is set), yet both children still run, orphaned,
# holding the pipe open, so stderr did not end. On the course's Pythons (3.11 to 3.13) the
# `wait()` did not return either: asyncio reaped the leader, but a `wait()` that was already
# pending when it died also waits for the pipes ("Going further" below). Whoever times out a tool with `kill()` and then reads its output
# to the end (`communicate()`, `stderr.read()`) waits for the orphans, not for the tool.
#
# So a tool that started children of its own (a shell, a test runner, a compiler) and is
# stopped with `kill()` leaves them running, as killing a parent did in chapter 19.
#
# :::
#
# ### `killpg()`: the whole group
#
# `os.killpg(pgid, sig)` sends a signal to a process group, and a group's id is the pid of the
# process that started it, its leader. Chapter 19 printed the children's group ids (each was
# the leader's pid) and signalled the group while its leader was alive. Here that leader is
# already dead, and asyncio has reaped it. The cell below calls
# `os.killpg(leader.pid, SIGKILL)` on the family above anyway, then reads the leader's
# stderr again. Predict: how many of the two children are still running after it,
# and does the read reach the end of stderr?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer: what killpg() leaves running"}
try:
    os.killpg(leader.pid, signal.SIGKILL)
except ProcessLookupError:
    pass  # nobody left in the group
survivors_after_killpg = await wait_until_gone(members, timeout=5)
stderr_end = await asyncio.wait_for(leader.stderr.read(), timeout=5)
print("after killpg(): children still running:", len(survivors_after_killpg),
      "· stderr reads", stderr_end)

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert survivors_after_killpg == [] and stderr_end == b"", (
    "killpg() reached every member of the group")
print("✓ killpg() ended them all, and the stderr pipe ended")

# %% [markdown]
# :::{dropdown} Why
#
# `killpg()` signals every process in the group. A process group lives as long as any process
# is in it, whoever started it, and a process keeps its group id when its parent dies: after
# the leader died, its two children were still in the group, so `killpg(leader.pid, ...)`
# reached them, and with them gone the stderr pipe ended
# (`b""`). In real code, signal the group (SIGTERM, a grace period, then SIGKILL, as in
# chapter 19), then wait for the leader. The orphans were reaped by the process that adopted
# them, not by us.
#
# :::

# %% [markdown]
# :::{dropdown} Going further: what `leader.wait()` waits for
#
# **`leader.wait()` depends on the Python release.** The kill cell also waited for the leader with
# `leader.wait()` (at most 0.5 s), and read the return code from `leader.returncode`, which
# asyncio sets when it records the exit. On 3.11.7, 3.12.1 and 3.13.0, the course's Pythons, a `wait()` that is already pending
# when the process exits returns only when every pipe asyncio reads from it has closed as
# well, so it too waits for the orphans (a `wait()` that starts after asyncio has recorded the
# exit returns at once). In the `Lib/asyncio/base_subprocess.py` of all three, the waiters of
# `wait()` are woken only by `_call_connection_lost`, which runs once every pipe is closed.
# CPython issue gh-119710 makes `wait()` return when the process exits, pipes open or not.
# The kill cell printed what that `wait()` did on the Python that built this page
# ("its wait() returned within 0.5 s"). The pipe stays open either way.
#
# Who reaps the child (a watcher thread on 3.11, a pidfd on the event loop from 3.12 on) is
# chapter 14's "Python versions" fold; awaiting `proc.wait()` waits for that reaping, it does
# not do it.
#
# :::

# %% [markdown]
# ## Exercise 26.1 · A tool runner that never blocks, never deadlocks and leaves nothing behind
#
# Implement `run_tool(argv, timeout)`:
#
# 1. start `argv` with `asyncio.create_subprocess_exec` in a new session, with stdout and
#    stderr piped;
# 2. if it finishes within `timeout` seconds, return `(returncode, stdout, stderr)`, with
#    both outputs complete whatever their sizes, including what its children wrote;
# 3. otherwise kill the **whole process group** with SIGKILL (even when the leader has
#    already exited and one of its children still holds the pipes), wait for the leader to
#    exit, and raise `TimeoutError`, not before `timeout` and soon after it; when `run_tool`
#    raises, no process of the group is left running;
# 4. never block the event loop, and let several calls run at once without disturbing one
#    another;
# 5. if the caller cancels `run_tool`, do the same cleanup and let the cancellation through.
#
# :::{dropdown} Hint: `asyncio.timeout`, not `wait_for`
#
# Bound the wait with `async with asyncio.timeout(timeout):` (3.11 and later), not with
# `asyncio.wait_for` as this chapter's experiments do: on 3.11, a cancellation that arrives
# just as the inner wait finishes is swallowed by `wait_for`, which returns the result instead
# (CPython gh-86296; 3.12 rebuilt `wait_for` on `asyncio.timeout`), and the grader cancels
# calls. The experiments are never cancelled from outside, so `wait_for` is safe there.
#
# `CancelledError` is not an `Exception`, so an `except Exception:` clean-up misses a
# cancellation. Put the clean-up where every way out passes: a `finally`, or an
# `except BaseException:` that cleans up and re-raises.
#
# :::
#
# :::{dropdown} What the grader checks
#
# Graded, on generated process families (one or two callers at once; a leader that waits for
# its children, exits at once and leaves them holding the pipes, or hangs; children and
# grandchildren that ignore SIGTERM or not; outputs larger than a pipe holds):
#
# - **result**: a tool whose processes all end within `timeout` gives `(returncode, stdout,
#   stderr)`, both outputs complete, including what its children wrote before they ended;
# - **timeout**: otherwise `TimeoutError`, not before `timeout`, and soon after it (at most a
#   second later than the reference solution, measured beside yours);
# - **nothing left**: when `run_tool` raises, and after the runs where every process of the
#   tool ends within `timeout`, no process of the tool's group is still running: not the leader, not its children or grandchildren, not those that ignore SIGTERM,
#   not those whose leader exited long before;
# - **cancellation**: a caller cancelled mid-run gets `CancelledError`, after the same cleanup;
# - **several callers**: calls at once do not disturb one another;
# - **the event loop** keeps running while the tool runs.
#
# :::
#
# The visible test below shows one run.

# %% tags=["solution", "hide-input"] mystnb={"code_prompt_show": "Show the solution"}
async def run_tool(argv: list[str], timeout: float) -> tuple[int, bytes, bytes]:
    """Run argv as its own process group; return (code, out, err) or kill the group on timeout."""
    ### BEGIN SOLUTION
    proc = await asyncio.create_subprocess_exec(*argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                start_new_session=True)
    try:
        async with asyncio.timeout(timeout):  # not wait_for: on 3.11 it can swallow a cancel (gh-86296)
            out, err = await proc.communicate()
    except BaseException:  # the timeout, or the caller cancelled us
        # Kill the group even if the leader has exited: a member may still hold the pipes (the
        # group keeps the leader's pid as its id while any member lives, so the number is not reused).
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:  # the whole group is gone already
            pass
        await asyncio.wait_for(proc.wait(), 5)
        raise
    return proc.returncode, out, err
    ### END SOLUTION


# %% tags=["tests"]
code, out, err = await asyncio.wait_for(
    run_tool(WORKER + ["chatter", "5", "3", "--exit", "2"], timeout=5), 10)
assert (code, out, err) == (2, b"ooooo", b"eee"), (
    "the child's exit code and complete outputs, (2, b'ooooo', b'eee'), expected; "
    f"got {(code, out, err)!r}")
try:
    await asyncio.wait_for(run_tool(WORKER + ["sleep", "5"], timeout=0.3), 10)
except TimeoutError:
    pass
else:
    raise AssertionError("a child that overruns its timeout must end in TimeoutError")

# %% tags=["tests", "hidden-tests", "remove-cell"]
### BEGIN HIDDEN TESTS
import tempfile as _tempfile


def _pids_from(path: str) -> list[int]:
    try:
        with open(path) as _f:
            return [int(_p) for _p in _f.read().split()[1:]]
    except (FileNotFoundError, ValueError):
        return []


async def _hidden_run_tool_checks() -> None:
    # 1. a child that floods stderr before it writes stdout
    try:
        _got = await asyncio.wait_for(run_tool(WORKER + ["chatter", "200000", "600000", "--exit", "3"], 5), 8)
    except TimeoutError:
        raise AssertionError("a child writing 600 kB to stderr never finished: pipe deadlock, read stdout and "
                             "stderr together (communicate), chapter 26") from None
    assert _got[0] == 3, f"the child's return code must be returned, got {_got[0]}"
    assert (len(_got[1]), len(_got[2])) == (200000, 600000), "both outputs must be complete"

    # 2. the event loop keeps running while the child runs
    async with LoopWatch(interval=0.005) as _watch:
        _t0 = time.monotonic()
        await asyncio.wait_for(run_tool(WORKER + ["sleep", "0.3"], 5), 8)
        _t1 = time.monotonic()
    _inside = sum(_t0 < _b < _t1 for _b in _watch.beats[1:])
    assert _inside >= 3, (f"only {_inside} heartbeats while the tool ran: run_tool blocked the event loop "
                          "(await the child, chapter 26)")

    with _tempfile.TemporaryDirectory() as _dir:
        _all: list[int] = []
        try:
            # 3. a timeout kills the leader and everything it started (the children ignore SIGTERM)
            _pid_file = os.path.join(_dir, "pids")
            # 2.5 s: time for the job to start its children even on a loaded machine; they would live 8 s
            _task = asyncio.create_task(run_tool(WORKER + ["spawn-children", "2", "8", "--ignore-sigterm", "--pid-file", _pid_file], 2.5))
            _done, _ = await asyncio.wait([_task], timeout=6)
            if not _done:
                _task.cancel()
                await asyncio.wait([_task], timeout=2)
            assert _done, ("run_tool did not return within 3.5 s of its 2.5 s timeout: processes it started still "
                           "hold its pipes; kill the whole process group (os.killpg), chapter 19")
            assert isinstance(_task.exception(), TimeoutError), (
                f"overrunning the timeout must raise TimeoutError, got {_task.exception()!r}")
            _family = _pids_from(_pid_file)
            _all += _family
            assert len(_family) == 3, "the job had time to start its two children"
            _leader, _members = _family[0], _family[1:]
            _left = await wait_until_gone([_leader], timeout=1)
            assert not _left, "the tool process itself is still running after the timeout: kill it"
            _left = await wait_until_gone(_members, timeout=1)
            assert not _left, (f"{len(_left)} children of the tool are still running after the timeout: "
                               "kill the whole process group (os.killpg) with SIGKILL, which no process can ignore, chapter 19")

            # 3b. the leader exits at once, its child keeps the stderr pipe open: the timeout
            #     still ends in TimeoutError, and the child must not outlive it
            _pid_file = os.path.join(_dir, "pids-orphan")
            _task = asyncio.create_task(run_tool(
                WORKER + ["spawn-children", "1", "6", "--leader-exits", "--pid-file", _pid_file], 1.0))
            _done, _ = await asyncio.wait([_task], timeout=4)
            if not _done:
                _task.cancel()
                await asyncio.wait([_task], timeout=2)
            _family = _pids_from(_pid_file)
            _all += _family
            assert _done, ("run_tool did not return within 3 s of its 1 s timeout although its tool process "
                           "had exited: a process it started still holds the pipes (chapter 26)")
            assert isinstance(_task.exception(), TimeoutError), (
                "a tool whose process exits while its child keeps the pipes open has not finished: "
                f"the timeout must raise TimeoutError, got {_task.exception()!r}")
            assert len(_family) == 2, "the job had time to start its child"
            _left = await wait_until_gone(_family[1:], timeout=1)
            assert not _left, ("the tool's child was still running after the timeout although the tool process "
                               "had exited: kill the process group whether or not its leader is still alive "
                               "(os.killpg on proc.pid, ignore ProcessLookupError), chapter 19")

            # 4. cancelling run_tool cleans up the same way
            _pid_file = os.path.join(_dir, "pids2")
            _task = asyncio.create_task(run_tool(WORKER + ["spawn-children", "2", "5", "--pid-file", _pid_file], 5))
            for _ in range(500):
                if len(_pids_from(_pid_file)) == 3:
                    break
                await asyncio.sleep(0.01)
            _family = _pids_from(_pid_file)
            _all += _family
            assert len(_family) == 3, "the job had time to start"
            _task.cancel()
            _done, _ = await asyncio.wait([_task], timeout=5)
            assert _done and _task.cancelled(), "cancelling run_tool must end it with CancelledError"
            _left = await wait_until_gone(_family, timeout=1)
            assert not _left, (f"{len(_left)} processes were left running after run_tool was cancelled: "
                               "clean up on cancellation too (finally), chapter 05")
        finally:
            for _pid in _all:
                if running(_pid):
                    os.kill(_pid, signal.SIGKILL)
            await wait_until_gone(_all, timeout=5)


async def _hidden_run_tool() -> None:
    _before = {_c.pid for _c in psutil.Process().children(recursive=True)}
    try:
        await asyncio.wait_for(_hidden_run_tool_checks(), timeout=30)
    finally:  # whatever a wrong answer left behind
        _new = [_c for _c in psutil.Process().children(recursive=True) if _c.pid not in _before]
        for _c in _new:
            if running(_c.pid):
                _c.kill()
        await wait_until_gone([_c.pid for _c in _new], timeout=5)


await _hidden_run_tool()

# Generated scenarios (issue 37): small process families drawn at random (members that ignore
# SIGTERM, grandchildren, a leader that exits and leaves its members holding the pipes, outputs
# larger than a pipe, one or two callers at once, a caller cancelled), run through run_tool and
# then the reference, on real processes (the chapter's point). Compared: the outcome, what is
# still running at the return, how late the return comes (beside the reference's own time).
import dataclasses as _dc
import shlex as _shlex
import shutil as _shutil

from hypothesis import strategies as _st

from lab_snippets import scenarios as _sc

_reference = _sc.reference(globals(), "run_tool")
_LONG = 5  # seconds an overrunning process would live; the cleanup kills it long before


@_dc.dataclass(frozen=True)
class _Member:
    """A child of the tool: a shell that starts grandchildren (`sleep`) and waits for them."""
    grandchildren: int
    overruns: bool       # the grandchildren sleep _LONG s, else 0.1 s
    ignores_term: bool
    says: bool           # writes b"m" to stdout once its grandchildren have ended

    def describe(self) -> str:
        return (f"a child{' ignoring SIGTERM' if self.ignores_term else ''} with {self.grandchildren} "
                f"grandchild(ren) of {_LONG if self.overruns else 0.1} s"
                f"{', then writing to stdout' if self.says else ''}")

    def script(self, pids: str) -> str:  # pids: the pid file's path, quoted for the shell
        body = "".join(f"sleep {_LONG if self.overruns else 0.1} & echo $! >> {pids}; "
                       for _ in range(self.grandchildren))
        trap = "trap '' TERM; " if self.ignores_term else ""
        return f"( {trap}{body}wait; {'printf m; ' if self.says else ''}) & echo $! >> {pids}\n"


@_dc.dataclass(frozen=True)
class _Tool:
    out: int
    err: int
    code: int
    leader: str          # "waits" for its children, "exits" at once, or "hangs"
    ignores_term: bool
    members: tuple

    @property
    def overruns(self) -> bool:
        return self.leader == "hangs" or any(m.overruns for m in self.members)

    @property
    def timeout(self) -> float:  # short when it overruns, long when it finishes (whatever the load)
        return 0.3 if self.overruns else 3.0

    def describe(self) -> str:
        kids = "; ".join(m.describe() for m in self.members) or "no children"
        return (f"run_tool(timeout={self.timeout:g}) of a tool that writes {self.err} bytes to stderr, "
                f"then {self.out} to stdout, {'ignores SIGTERM, ' if self.ignores_term else ''}"
                f"{ {'waits': 'waits for its children', 'exits': 'exits at once', 'hangs': f'hangs {_LONG} s'}[self.leader]} "
                f"and ends with exit code {self.code} ({kids})")

    def argv(self, pid_file: str) -> list[str]:
        pids = _shlex.quote(pid_file)
        lines = [f"echo $$ >> {pids}\n", *(m.script(pids) for m in self.members),
                 "trap '' TERM\n" if self.ignores_term else "",
                 f"head -c {self.err} /dev/zero >&2\nhead -c {self.out} /dev/zero\n",
                 f"sleep {_LONG} & echo $! >> {pids}; wait $!\n" if self.leader == "hangs" else "",
                 "wait\n" if self.leader == "waits" else "", f"exit {self.code}\n"]
        return [_shutil.which("sh") or "/bin/sh", "-c", "".join(lines)]


@_dc.dataclass(frozen=True)
class _Scenario:
    tools: tuple
    cancel_first: bool   # the first caller is cancelled at 0.15 s, once its tool runs (it overruns)

    def describe(self) -> str:
        calls = [f"caller {k}: {t.describe()}" + (", cancelled at 0.15 s" if k == 0 and self.cancel_first else "")
                 for k, t in enumerate(self.tools)]
        return f"{len(self.tools)} caller(s) at once; " + "; ".join(calls)


@_st.composite
def _tools(draw):
    members = draw(_st.lists(_st.builds(_Member, _st.integers(1, 2), _st.booleans(), _st.booleans(),
                                        _st.booleans()), max_size=2))
    return _Tool(draw(_st.sampled_from([2, 0, 100_000])), draw(_st.sampled_from([3, 100_000])),
                 draw(_st.sampled_from([0, 3])), draw(_st.sampled_from(["waits", "exits", "hangs"])),
                 draw(_st.booleans()), tuple(members))


@_st.composite
def _scenarios(draw):
    tools = tuple(draw(_st.lists(_tools(), min_size=1, max_size=2)))
    return _Scenario(tools, tools[0].overruns and draw(_st.booleans()))


def _alive(pid_file: str) -> list[int]:
    return [p for p in _pids_from_all(pid_file) if running(p)]


def _pids_from_all(path: str) -> list[int]:
    try:
        with open(path) as _f:
            return [int(_p) for _p in _f.read().split()]
    except (FileNotFoundError, ValueError):
        return []


async def _started(task: asyncio.Task, pid_file: str) -> None:
    """Until the tool's shell has written its pid (bounded), then a few loop turns: the cancel
    must land in run_tool's wait for the tool, not in create_subprocess_exec. On releases before
    gh-119710 a cancel there makes asyncio itself wait for the pipes' orphans (seen on 3.12.1
    under load: 5.19 s for the reference beside 0.15 s in its own run); no run_tool can help it."""
    end = time.monotonic() + 5
    while not _pids_from_all(pid_file) and not task.done() and time.monotonic() < end:
        await asyncio.sleep(0.005)
    for _ in range(50):  # Popen has returned (it runs in this thread); the pipes connect in a few turns
        await asyncio.sleep(0)


async def _one_call(fn, tool: _Tool, pid_file: str, cancel: bool) -> dict:
    t0 = time.monotonic()
    task = asyncio.create_task(fn(tool.argv(pid_file), tool.timeout))
    if cancel:
        await _started(task, pid_file)
        await asyncio.wait([task], timeout=max(0.0, 0.15 - (time.monotonic() - t0)))
        task.cancel()
    done, _ = await asyncio.wait([task], timeout=tool.timeout + 8)
    elapsed = time.monotonic() - t0
    if not done:
        task.cancel()
        await asyncio.wait([task], timeout=2)
        return {"kind": "still running", "elapsed": elapsed, "left": 0}
    if task.cancelled():
        kind, got = "cancelled", None
    elif task.exception() is not None:
        kind, got = type(task.exception()).__name__, None
    else:
        code, out, err = task.result()
        kind, got = "result", (code, len(out), out.count(b"m"), len(err))
    end = time.monotonic() + 0.5  # SIGKILLed processes need a moment to be gone
    while _alive(pid_file) and time.monotonic() < end:
        await asyncio.sleep(0.01)
    return {"kind": kind, "got": got, "elapsed": elapsed, "left": len(_alive(pid_file))}


def _observe(fn, s: _Scenario) -> list:
    with _tempfile.TemporaryDirectory() as folder:
        files = [os.path.join(folder, f"pids{k}") for k in range(len(s.tools))]

        async def main() -> list:
            return await asyncio.gather(*(_one_call(fn, t, f, k == 0 and s.cancel_first)
                                          for k, (t, f) in enumerate(zip(s.tools, files, strict=True))))
        try:
            return asyncio.run(main())
        finally:  # whatever a wrong answer left behind
            for f in files:
                pids = _pids_from_all(f)
                for sig_pid in pids[:1]:
                    try:
                        os.killpg(sig_pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
                for pid in pids:
                    if running(pid):
                        os.kill(pid, signal.SIGKILL)
            end = time.monotonic() + 3
            while any(_alive(f) for f in files) and time.monotonic() < end:
                time.sleep(0.01)


def _compare_call(me: dict, it: dict, tool: _Tool) -> str | None:
    if me["kind"] != it["kind"]:
        if it["kind"] == "result":
            return (f"a tool that ends within its timeout must return (code, stdout, stderr), got {me['kind']}: "
                    "read both pipes together and to their end (communicate), chapter 26")
        if it["kind"] == "cancelled":
            return (f"cancelling run_tool must end it with CancelledError, got {me['kind']}: "
                    "clean up, then let the cancellation through (chapter 05)")
        return (f"overrunning the timeout must raise {it['kind']}, got {me['kind']}: kill the group and "
                "raise TimeoutError (chapter 26)")
    if me["kind"] == "result" and me["got"] != it["got"]:
        return (f"the result must be the exit code and both outputs complete, including what the tool's "
                f"children wrote: (code, len(out), b'm' in out, len(err)) = {me['got']}, expected {it['got']}")
    if me["left"] > it["left"]:
        return (f"{me['left']} processes of the tool were left running after run_tool "
                f"{'was cancelled' if me['kind'] == 'cancelled' else 'timed out'}: kill the whole process "
                "group (os.killpg on proc.pid, SIGKILL, which no process can ignore), whether or not its "
                "leader is still alive, chapter 19")
    if me["kind"] == "TimeoutError" and me["elapsed"] < tool.timeout * 0.9:
        return f"gave up after {me['elapsed']:.2f} s, before the {tool.timeout:g} s timeout"
    if me["elapsed"] > it["elapsed"] + 1.0:
        return (f"run_tool returned {me['elapsed']:.2f} s after the call, the reference in {it['elapsed']:.2f} s: "
                "once the group is killed, wait for the leader only (bounded), not for its children's natural end")
    return None


def _compare(mine: list, ref: list, s: _Scenario) -> str | None:
    for k, (me, it, tool) in enumerate(zip(mine, ref, s.tools, strict=True)):
        problem = _compare_call(me, it, tool)
        if problem:
            return f"caller {k}: {problem}" if len(s.tools) > 1 else problem
    return None


# Always tried first: two callers at once, the first cancelled while its leader has exited and
# its child, ignoring SIGTERM, still holds the pipes; then a tool whose child writes last.
_EXPLICIT = (
    _Scenario((_Tool(2, 100_000, 3, "exits", False, (_Member(1, True, True, False),)),
               _Tool(2, 3, 0, "hangs", True, (_Member(1, True, False, False),))), True),
    _Scenario((_Tool(2, 100_000, 3, "exits", False, (_Member(2, False, False, True),)),), False),
)
_sc.differential(run_tool, _reference, _scenarios(), _observe, _compare, what="run_tool",
                 examples=2, timeout=60, hint="chapter 26", explicit=_EXPLICIT)
### END HIDDEN TESTS

# %% [markdown]
# ## Summary
#
# - An `async def` that calls `Popen.communicate()` (or `subprocess.run`) blocks its event
#   loop for the child's whole life: other tasks stop, and a semaphore around it never has a
#   second holder. Await `asyncio.create_subprocess_exec` instead (or push the blocking call
#   to a thread with `asyncio.to_thread`).
# - Read stdout and stderr together (`communicate()`), or not at all (`DEVNULL`): reading one
#   pipe to its end while the other fills up deadlocks, but only with enough output, so small
#   tests pass.
# - A timeout around `communicate()` stops your waiting, not the child: kill it (the whole
#   group if it may have children: `start_new_session=True` + `os.killpg`), then await
#   `proc.wait()`, in a `finally` so cancellation cleans up too.
# - asyncio reaps its children itself: you await `proc.wait()`, you never call `waitpid`.
#
# **What's next.** Chapter 27 reads real slime code for hazards like these, one model at a
# time.
#
# ## In slime
#
# Both quotes come from slime's retool example, which gives the model a Python interpreter as
# a tool: its sandbox, which runs the model's code (first quote), and the tool registry that
# calls it (second). Other subprocess uses are listed in the
# [source inventory](../book/reference/inventory.md).

# %% tags=["remove-input"]
from lab_snippets.sites import show_call_site

show_call_site("26")

# %% tags=["remove-input"]
show_call_site("26b")

# %% [markdown]
# # 18 · Process lifecycle: from queued work to timeout reaping
# *进程生命周期：从队列工作到超时回收*
#
# **The question.** A worker process sends you its last result. Is it gone? And when you ask
# a process to stop and it does not, what do you do, and how long do you wait?
#
# **You will**
# 1. find out what a worker's completion message tells you about the process that sent it,
#    and what the parent still owes that process afterwards;
# 2. watch a process from the outside with `psutil`, without disturbing it;
# 3. read `exitcode`, and find out what it says about how a process ended;
# 4. stop a worker that does not stop when asked, without waiting forever, and handle a
#    `subprocess` that is past its timeout.
#
# **Needs** chapters 07 (queues) and 12 (processes) · about 60 minutes
#
# **New to the course?** [How to read an experiment](../book/reading_guide.md) explains the
# timelines, the helpers and the folded checks; the [glossary](../book/glossary.md) gives the
# words the chapters share.
#
# **Platform** Linux or macOS (POSIX signals and process states). On Windows `terminate()` and
# `kill()` both end the process at once (`TerminateProcess`), a signal cannot be ignored or
# caught, and there are no zombies, so the chapter's experiments show nothing to wait for
# there.
#
# The imports are folded below. Skip them: the names they take from `lab_snippets.proc_workers`
# are the course's small worker programs and two readers of what a worker sends back, each
# shown or explained where it first runs.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the imports"}
import multiprocessing
import os
import signal
import subprocess
import sys
import time

import psutil

from lab_snippets.proc_workers import (
    consume_until_stop,
    exit_on_signal,
    exit_with,
    ignore_sigterm,
    messages,
    note_sigterm,
    pid_after,
    read_line,
)
from lab_snippets.showcode import show_source
from lab_snippets.timeline import Timeline, figure_style

figure_style()
SPAWN = multiprocessing.get_context("spawn")
WORKER_MODULE = [sys.executable, "-m", "lab_snippets.proc_workers"]

# %% [markdown]
# The first experiment's parent starts a worker by `spawn` (`SPAWN` is that `multiprocessing` context).
# Here is the worker's whole code, `consume_until_stop`: it squares the numbers it takes from
# a queue until it reads the stop message `None`, puts `"done"` on the results queue, then
# spends `linger` seconds (0.15 below) on what a real worker does last, such as flushing and
# closing. It lives in the course's worker module, because a `spawn` child imports its target
# by name and cannot find a function defined in a notebook.

# %% tags=["remove-input"]
show_source(consume_until_stop)

# %% [markdown]
# Its last line sleeps for `linger` seconds; the `_bounded(...)` around it is only a safety
# cap, so that no worker outlives a broken run.
#
# The parent, `read_results_then_join`, starts the worker, sends it five numbers and the stop
# message and reads results until `"done"`. The notebook then pauses until the worker exits;
# after that, the parent is busy for 0.3 s before `join`.
#
# To see those moments, the program as it runs calls `looks`, a watcher that asks `psutil`
# about the worker's pid from outside and writes each moment on a timeline. Both are folded;
# the plain program comes after them.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show looks and the two helpers it calls to ask psutil about a pid"}
def is_running(pid: int) -> bool:
    """True while `pid` exists and has not exited."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def zombie_within(pid: int, timeout: float) -> bool:
    """Poll `pid` for up to `timeout` seconds: True once it is a zombie (exited, its pid still
    listed because nobody has reaped it); False if it runs on all that time or is reaped."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return False
        time.sleep(0.005)
    return False


class Looks:
    """The first experiment's looks at its worker: named moments on `tl` and psutil answers."""

    def start_called(self) -> None:
        tl.mark("queue consumer: start() called")

    def after_done(self, proc) -> None:
        tl.mark("queue consumer: parent got 'done'")
        self.running_at_done = is_running(proc.pid)

    def wait_until_exited(self, proc) -> None:
        """Not a look: it waits (up to 5 s) until the worker has exited, and marks that moment."""
        self.seen_at_exit = zombie_within(proc.pid, timeout=5)
        tl.mark("queue consumer: exit")

    def before_join(self, proc) -> None:
        self.listed_before_join = zombie_within(proc.pid, timeout=0.1)

    def join_returned(self) -> None:
        tl.mark("queue consumer: join() returned")


# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the program as it runs, with the lines that look at the worker"}
# The lines that call `looks` (folded above) only look at the worker from outside, through
# psutil, and write the moments on a Timeline, the course's stopwatch (chapter 01); one of
# them waits for the worker's exit, so that the parent's 0.3 s count from the exit.
def read_results_then_join():
    tasks, results = SPAWN.Queue(), SPAWN.Queue()  # SPAWN: starts processes by spawn
    consumer = SPAWN.Process(target=consume_until_stop, args=(tasks, results, 0.15),
                             name="queue consumer")
    looks.start_called()
    consumer.start()
    for number in [0, 1, 2, 3, 4, None]:  # None is the stop message
        tasks.put(number)

    squares = []
    while (message := results.get(timeout=10)) != "done":
        squares.append(message)
    looks.after_done(consumer)  # does it still run?
    looks.wait_until_exited(consumer)  # from here, the 0.3 s
    time.sleep(0.3)  # the parent is busy elsewhere for 0.3 s
    looks.before_join(consumer)  # is its pid still listed?
    consumer.join(timeout=5)
    looks.join_returned()
    return consumer, tasks, results, squares


# %% tags=["remove-input"]
from IPython.display import Markdown, display

from lab_snippets.showcode import source_lines


def plain(line: str) -> str | None:
    """The line as you would write it: the wait for the exit becomes a comment."""
    if "looks.wait_until_exited" in line:
        return line.split("looks.")[0] + "# (the run waits here until the worker has exited)"
    return None if "looks." in line else line


display(Markdown("```python\n" + "\n".join(
    kept for line in source_lines(read_results_then_join)
    if (kept := plain(line)) is not None) + "\n```"))  # without the lines that look

# %% [markdown]
# ## Predict: when does a finished worker's pid go away?
#
# The worker's `linger` already tells you that it still runs when `"done"` arrives. Predict
# what happens after its exit: is its pid gone at once, gone a few milliseconds later while
# the operating system tidies up, or still listed when the parent gets round to `join`?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
tl, looks = Timeline(), Looks()  # Looks: the folded watcher of this experiment
consumer, tasks, results, squares = read_results_then_join()
print("results:", squares, "· still running at 'done':", looks.running_at_done)
print("pid still listed 0.3 s after the exit:", looks.listed_before_join)
print("exit code:", consumer.exitcode,
      "· pid exists after join:", psutil.pid_exists(consumer.pid))

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: exit-then-zombie-until-reaped
assert squares == [(n, n * n) for n in range(5)]
assert looks.seen_at_exit, "the worker should exit, and stay a zombie until somebody reaps it"
assert looks.running_at_done, "receiving the last result should not mean the worker was gone"
assert looks.listed_before_join, "nobody reaped the worker: it should still be a zombie before join"
assert consumer.exitcode == 0 and not psutil.pid_exists(consumer.pid)
assert tl.order("queue consumer: parent got 'done'", "queue consumer: exit",
                "queue consumer: join() returned")
print("✓ 'done' arrived while the worker still ran; it then exited, a zombie until join")

# %% [markdown]
# :::{dropdown} Why
#
# Three different events, in this order:
#
# 1. **the message**: the worker says it has finished the work; it is still running;
# 2. **the exit**: the process ends; the kernel keeps a small record of it (its pid and exit
#    status) so the parent can ask how it ended. Until then it is a *zombie*: it runs no
#    code and its memory has been freed; what is left is that small kernel record, which
#    holds a pid and a slot in the process table;
# 3. **the reaping**: the parent collects the status (`waitpid`, which `join` calls) and the
#    record disappears.
#
# A program that counts completion messages and never joins has finished its *work*, not
# its *processes*. (`multiprocessing` quietly reaps finished children whenever you start a new
# `Process` or call `active_children()`, which is why such programs usually get away with it.)
#
# The worker was still running at `"done"` because of its `linger` (the 0.15 passed as its
# third argument). What the `looks` probe saw between the exit and `join` is a zombie: a process that
# has exited with its pid still listed. It looks through `psutil` on purpose: asking
# `multiprocessing` itself (`is_alive()`, `exitcode`) would reap the process as a side effect, and we wanted to
# see it *before* it was reaped.
#
# :::
#
# :::{dropdown} Going further: the rest of the cleanup
#
# Reaping is not the whole cleanup. Even a reaped `Process` object keeps a pipe open (its
# *sentinel*), and each `multiprocessing.Queue` has a feeder thread in every process that put
# something on it. Once a worker has been joined:
#
# - `proc.close()` frees its sentinel pipe (join first: on a process that is still running,
#   `close()` raises `ValueError`);
# - for each `multiprocessing.Queue` this process put on: `q.close()` (no more puts), then
#   `q.join_thread()` (wait until its feeder thread has flushed what was put).
#
# The folded cell below does both for the worker and the two queues above; the cells after it
# close every process they start.
#
# :::

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the cleanup"}
consumer.close()  # frees its sentinel pipe
for q in (tasks, results):
    q.close()  # no more puts from this process
    q.join_thread()  # until its feeder thread has flushed them
del tasks, results, q  # the notebook lives on: drop the closed queues now

# %% [markdown]
# ## What `exitcode` tells you
#
# `exitcode` is `None` while the process runs, and a number once it has been reaped.
# The four workers below are functions of the standard library, which a `spawn` child can
# import by name: `time.sleep(0)` returns at once, `sys.exit(3)` raises `SystemExit(3)`, and
# `time.sleep(3)` would sleep 3 s, but the parent signals it right after `start()`. SIGTERM is
# signal 15 and SIGKILL signal 9. Predict: what `exitcode` does each of the four end with?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
def run_to_exit(target, args, stop_signal=None) -> int | None:
    """Start a process, maybe signal it, reap it, close it; return its exit code."""
    proc = SPAWN.Process(target=target, args=args)
    proc.start()
    if stop_signal is not None:
        os.kill(proc.pid, stop_signal)
    proc.join(timeout=10)
    code = proc.exitcode
    proc.close()
    return code


codes = {
    "returns normally": run_to_exit(time.sleep, (0,)),
    "sys.exit(3)": run_to_exit(sys.exit, (3,)),
    "SIGTERM, default action": run_to_exit(time.sleep, (3,), signal.SIGTERM),
    "SIGKILL": run_to_exit(time.sleep, (3,), signal.SIGKILL),
}
for how, code in codes.items():
    print(f"{how:<26} exitcode {code}")

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert codes == {"returns normally": 0, "sys.exit(3)": 3,
                 "SIGTERM, default action": -signal.SIGTERM, "SIGKILL": -signal.SIGKILL}, codes
print("✓ 0, the worker's own status, and minus the signal number")

# %% [markdown]
# :::{dropdown} Why
#
# `exitcode` records *how* the process ended, not only whether it failed. Read the four
# lines from the top: the first two workers ended by themselves, the last two were ended by a
# signal; compare their numbers with SIGTERM's 15 and SIGKILL's 9 (an uncaught exception
# would give `1`). The signals went right after `start()`, most often before the child had
# even reached its target, without waiting for it to be ready. That is fine here: the default
# action of SIGTERM ends the process whenever the signal lands. Reading `exitcode` or `is_alive()`
# polls with `waitpid` too, so they reap a finished process as a side effect.
#
# :::
#
# ## Asking, waiting, then insisting
#
# `terminate()` sends SIGTERM: a *request*, which a process may catch to clean up. `kill()`
# sends SIGKILL.
#
# **Predict.** The next worker ignores SIGTERM. The parent calls `terminate()`, gives the
# worker 0.2 s of grace with `join(timeout=0.2)`, asks `is_alive()`, then calls `kill()` and
# `join` again. How does the parent find out that the worker survived `terminate()`?
#
# - `terminate()` raises, or returns something;
# - `join(timeout=0.2)` raises when the grace runs out;
# - only the later look with `is_alive()` tells.
#
# (`is_alive()` only looks: it never ends a process; if the process has already exited, it
# reaps it.)
#
# Below is the worker's whole code: one call to `signal.signal` that ignores SIGTERM, then
# `_announce(ready)`, which sends "ready" through a pipe, and a sleep. When "ready" arrives,
# the parent knows that the worker already ignores SIGTERM. The pipe is a
# `multiprocessing.Pipe`: the parent keeps one end, the worker gets the other, and
# `messages(conn, timeout)` reads what has arrived.

# %% tags=["remove-input"]
show_source(ignore_sigterm)

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
ready, workers_end = SPAWN.Pipe()
stubborn = SPAWN.Process(target=ignore_sigterm, args=(workers_end, 3),
                         name="stubborn worker")
tl.mark("stubborn worker: start() called")
stubborn.start()
said = messages(ready, timeout=10)  # "ready": its signal.signal call has been made

asked = stubborn.terminate()
tl.mark("stubborn worker: terminate() sent")
joined = stubborn.join(timeout=0.2)
alive_after_grace = stubborn.is_alive()
stubborn.kill()
tl.mark("stubborn worker: kill() sent")
stubborn.join(timeout=5)
tl.mark("stubborn worker: reaped")
print("terminate() returned:", asked, "· join(timeout=0.2) returned:", joined,
      "(no exception)")
print("alive after SIGTERM and 0.2 s of grace:", alive_after_grace,
      "· exit code:", stubborn.exitcode)

# %% [markdown]
# :::{dropdown} Why
#
# `SIG_IGN` told the kernel to drop SIGTERM for this process. `terminate()` only sends the
# signal and returns `None` whatever becomes of it, and `join(timeout)` returns `None` too
# when its time runs out, without an exception. So only the look afterwards, `is_alive()`,
# told the parent that the request had been ignored. Its `exitcode` is minus the number of the
# signal that did end it, SIGKILL, which cannot be caught or ignored. `is_alive()` reported the
# worker alive before the kill without ending anything. So the polite, bounded way to stop a
# process is: `terminate()`, `join()` with a grace period, and only if it is still alive,
# `kill()` and `join()` again.
#
# :::

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: sigterm-is-a-request-sigkill-is-not
assert said == ["ready"], "the worker must ignore SIGTERM before we send it"
assert alive_after_grace, "SIGTERM should be ignored: the worker was gone after the grace"
assert stubborn.exitcode == -signal.SIGKILL and not stubborn.is_alive(), (
    f"SIGKILL should end it: exit code {stubborn.exitcode}")
assert tl.order("stubborn worker: terminate() sent", "stubborn worker: kill() sent",
                "stubborn worker: reaped")
stubborn.close()
ready.close()
workers_end.close()
print("✓ the worker outlived SIGTERM and its grace period; SIGKILL ended it")

# %% [markdown]
# ## A subprocess whose wait times out
#
# A wait on a `subprocess.Popen` can be bounded too: `communicate(timeout=...)` raises
# `TimeoutExpired` when the time is up. As `result(timeout)` in chapters 13 and 17 and
# `wait_for` in chapter 14, it ends only the wait: the child is still running then (the
# printed line below shows it).
#
# The child is the `sleep` command of the course's worker module (`python -m
# lab_snippets.proc_workers sleep 5`). Once it is set up it prints one line, `ready` and its
# pid, and sleeps 5 s; the parent reads that line before it starts the timeout, so the 0.2 s
# begin once the child is set up. Three helpers (the last two folded at the top):
#
# - `read_line(stream, timeout)` reads one line from the child, or raises after `timeout`
#   seconds;
# - `is_running(pid)` returns `True` while the child runs, `False` once it has exited;
# - `zombie_within(pid, timeout)` waits up to `timeout` seconds and returns `True` once the
#   child is a zombie (exited, with its pid still listed), else `False`.
#
# `Popen.returncode` reports a death by signal N as `exitcode` does, -N.
#
# **Predict.** After the timeout the parent calls `kill()`, is busy elsewhere for 0.3 s, and
# only then calls `communicate()` again. What is `child.returncode` right after `kill()` has
# returned, and what is it after `communicate()`?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
tl.mark("sleeping child: Popen")
# WORKER_MODULE: runs the course's worker module, lab_snippets.proc_workers
child = subprocess.Popen(WORKER_MODULE + ["sleep", "5"], stdout=subprocess.PIPE)
said, pid = read_line(child.stdout, timeout=10).split()[:2]  # "ready", its pid
print(f"the child says: {said} (pid {pid})")
try:
    child.communicate(timeout=0.2)
except subprocess.TimeoutExpired:
    tl.mark("sleeping child: TimeoutExpired")
    still_running = is_running(child.pid)  # True while it has not exited
    child.kill()
    tl.mark("sleeping child: killed")
    code_after_kill = child.returncode
    seen_after_kill = zombie_within(child.pid, timeout=5)  # True once a zombie
    time.sleep(0.3)  # the parent is busy elsewhere for 0.3 s
    child.communicate(timeout=5)
    tl.mark("sleeping child: communicate() returned")
print(f"running after the timeout: {still_running} · a zombie after kill(): "
      f"{seen_after_kill}")
print(f"returncode after kill(): {code_after_kill} · after communicate(): "
      f"{child.returncode}")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: a-killed-child-is-a-zombie-until-waited-for
assert still_running, "communicate(timeout) should leave the child running"
assert seen_after_kill, "killed, the child should stay a zombie until we wait for it"
assert code_after_kill is None, "kill() only sends the signal: nobody has collected the exit"
assert child.returncode == -signal.SIGKILL and not psutil.pid_exists(child.pid)
assert tl.order("sleeping child: TimeoutExpired", "sleeping child: killed",
                "sleeping child: communicate() returned")
print("✓ the child ran on past the timeout; killed, it was a zombie until communicate()")

# %% [markdown]
# :::{dropdown} Why
#
# `communicate(timeout=...)` only stops *waiting* when it raises `TimeoutExpired`: it sends
# the child nothing. And `kill()` only sends SIGKILL: the child's exit still has to be
# collected, and until someone calls `wait` a killed child is a {term}`zombie`, with no
# `returncode` yet: `Popen` sets it only when a wait collects the exit. The steps are the
# `multiprocessing` worker's without the polite `terminate()`: a bounded wait, `kill()`, then
# a wait that collects the exit, here `communicate()`, which also reads what is left of the
# output. `subprocess.run` does these
# steps inside when you give it a `timeout`, with `wait()` as the last one on POSIX.
#
# :::

# %% [markdown]
# ## Measure: the three lifecycles side by side
#
# This section runs nothing new: it measures on the marks the three experiments above left on
# `tl`. One panel per lifecycle. Each panel has its own start time but the same scale (the
# axis, in seconds since the first experiment started, is labelled under the last panel).
# Blue is the process
# **running**, purple its **cleanup**, light green a **zombie** (exited, waiting to be
# reaped); the ticks mark the moments, most of them the parent's calls. The folded
# cell below holds the plotting code, `draw_lifecycles()`.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the plotting code"}
import matplotlib.pyplot as plt


def clock_at(name: str) -> float:
    """A mark's raw clock reading (Timeline.add takes raw readings)."""
    return tl.t0 + next(e.at for e in tl.events if e.name == name)


PERIODS = {  # lane: (state, from mark, to mark, words written over the span)
    "queue consumer": [("running", "start() called", "parent got 'done'", ""),
                       ("cleanup", "parent got 'done'", "exit", "cleanup"),
                       ("waiting", "exit", "join() returned", "zombie")],
    "stubborn worker": [("running", "start() called", "terminate() sent", ""),
                        ("running", "terminate() sent", "kill() sent", "SIGTERM ignored")],
    "sleeping child": [("running", "Popen", "killed", ""),
                       ("waiting", "killed", "communicate() returned", "zombie after SIGKILL")],
}
TICKS = {  # the parent's events, written under their ticks
    "queue consumer": {"start() called": "start()", "parent got 'done'": "'done' read",
                       "exit": "exit", "join() returned": "join()"},
    "stubborn worker": {"start() called": "start()", "terminate() sent": "terminate()",
                        "kill() sent": "kill()", "reaped": "join() returned"},
    "sleeping child": {"Popen": "Popen", "killed": "timeout, kill()",
                       "communicate() returned": "communicate()"},
}
TITLES = {"queue consumer": "a worker that finishes: 'done', exit, reaping",
          "stubborn worker": "a worker that ignores SIGTERM: terminate, grace, kill",
          "sleeping child": "a subprocess past its timeout: kill, then wait"}


def draw_lifecycles() -> None:
    """The three lifecycles, one panel each, from the marks the experiments left on `tl`."""
    for lane, periods in PERIODS.items():
        for state, start, end, _ in periods:
            tl.add(lane, clock_at(f"{lane}: {start}"), clock_at(f"{lane}: {end}"), state)
    fig, axes = plt.subplots(3, 1, figsize=(8, 5.4), layout="constrained")
    stretch = {lane: (clock_at(f"{lane}: {PERIODS[lane][0][1]}") - tl.t0,  # first mark, last mark
                      max(e.at for e in tl.events if e.name.startswith(lane))) for lane in PERIODS}
    width = max(last - first for first, last in stretch.values())  # the longest, for every panel
    fig.suptitle("Completion, exit and reaping are three moments")
    for ax, lane in zip(axes, PERIODS, strict=True):
        tl.plot(TITLES[lane], ax=ax, lanes=[lane], meanings={"waiting": "zombie"})
        ax.set_ylabel("")
        first = stretch[lane][0]
        ax.set_xlim(first - 0.03 * width, first + 1.03 * width)  # one scale for all three
        for span, (_, _, _, words) in zip(tl.spans_of(lane), PERIODS[lane], strict=True):
            ax.text((span.start + span.end) / 2, -0.33, words, ha="center", va="bottom",
                    fontsize=8)
            assert span.duration > 0.02 * width, f"{lane}: {words or span.state} is a sliver"
        previous, row = None, 0
        for mark, words in TICKS[lane].items():  # a label close to the one before goes a row lower
            at = clock_at(f"{lane}: {mark}") - tl.t0
            row = 1 - row if previous is not None and at - previous < 0.15 * width else 0
            ax.text(at, 0.42 + 0.2 * row, words, ha="center", va="top", fontsize=8)
            previous = at
        ax.set_ylim(0.85, -0.6)
    for ax in axes[1:]:
        ax.get_legend().remove()
    axes[-1].set_xlabel("time since the first experiment started (s)")
    for ax in axes[:-1]:
        ax.set_xlabel("")


# %% [markdown]
# The figure puts the three processes side by side. In each, the parent might
# think the process is over at one moment: the "done" message, `terminate()`, the timeout.
# Each panel shows how long the process outlived that moment, and in which states; the
# printed lines give the same in seconds.

# %%
draw_lifecycles()  # the folded plotting code above
# per lane: the moment the parent might think it over, and the reaping
OUTLIVED = [("queue consumer", "parent got 'done'", "join() returned"),
            ("stubborn worker", "terminate() sent", "reaped"),
            ("sleeping child", "TimeoutExpired", "communicate() returned")]
for lane, moment, end in OUTLIVED:
    outlived = clock_at(f"{lane}: {end}") - clock_at(f"{lane}: {moment}")
    print(f"{lane}: its pid outlived {moment!r} by {outlived:.2f} s")

# %% [markdown]
# The queue consumer ran on for its cleanup after "done" was read, then stayed a zombie until
# `join`. The stubborn worker kept running through SIGTERM and the 0.2 s grace. The ticks of
# SIGKILL and of the `join` that reaped it are a few milliseconds apart, because `join` came
# right after `kill`. The sleeping child was still running when its timeout expired (the tick
# "timeout, kill()" marks the timeout and the kill right after it), and once killed it was a
# zombie for as long as the parent left it there. A zombie lasts as long as its parent leaves
# it: in the first and third panels, the 0.3 s the cell kept the parent busy before it reaped.

# %% [markdown]
# :::{dropdown} Going further
#
# **Python 3.14: `Process.interrupt()`.** Python 3.14 adds `Process.interrupt()`, which sends
# SIGINT, the signal behind Ctrl-C, so a worker can be asked to stop the way a terminal user
# would ask (POSIX only: the documentation leaves its behaviour on Windows undefined). On
# older Pythons you send the signal yourself with `os.kill(proc.pid, signal.SIGINT)`. The
# folded cell below runs a worker, `exit_on_signal`, that exits with status 128 + the signal
# number, the shell's convention, stops it this way and checks the exit code.
#
# :::

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the experiment"}
ready, workers_end = SPAWN.Pipe()
interrupted = SPAWN.Process(target=exit_on_signal, args=(workers_end, 3))
interrupted.start()
said = messages(ready, timeout=10)  # "ready": it handles SIGINT from now on
if sys.version_info >= (3, 14):
    interrupted.interrupt()
else:
    print("Python < 3.14 has no Process.interrupt(): sending SIGINT with os.kill.")
    os.kill(interrupted.pid, signal.SIGINT)
interrupted.join(timeout=5)
print("exit code:", interrupted.exitcode)
assert said == ["ready"], said
assert interrupted.exitcode == 128 + signal.SIGINT, interrupted.exitcode
interrupted.close()
ready.close()
workers_end.close()

# %% [markdown]
# ## Exercise 18.1 · Stop a process, politely and for sure
#
# Implement `stop_with_escalation(proc, grace)` for a started `multiprocessing.Process`:
#
# 1. if it has already exited, reap it and return `"exited"`;
# 2. otherwise send SIGTERM and wait at most `grace` seconds; if it ended, return
#    `"terminated"`;
# 3. if it is still alive, send SIGKILL, wait for it (bounded: a few seconds), and return
#    `"killed"`.
#
# In every case the process must be reaped when the function returns: no zombie left. Wait
# with something the process's end wakes (`join(timeout)`), not a loop that sleeps and
# looks, and touch no other process: two threads may call it at once, each for its own.
#
# :::{dropdown} What the grader checks
#
# Graded, on many generated runs (one or two processes stopped at once, each from a thread
# of its own: one that has already exited, with exit code 0 or another; one that honours
# SIGTERM; one that cleans up for 0.05 s on SIGTERM and exits with its own code; one whose
# cleanup outlasts the grace period; one that ignores SIGTERM):
#
# - **step reported**: `"exited"` for a process that had exited before the call (whatever
#   its exit code, 0 included), `"terminated"` for one that ended after SIGTERM within `grace`
#   (whatever its exit code), `"killed"` for one that needed SIGKILL;
# - **signals**: SIGTERM before SIGKILL, SIGKILL only once `grace` has passed, and no signal
#   at all for a process that had already exited;
# - **timing**: a return as soon as the process has ended (well before `grace` for one that
#   ends at SIGTERM), and no more than `grace` plus a short wait in all; a wait that the
#   process's end wakes, not a loop that wakes itself to look;
# - **what is left**: the process reaped (no zombie); the other processes untouched.
#
# :::
#
# The visible tests below show two runs; `pid_after(seconds)` is a worker that sleeps that long,
# then returns its pid, and ends at SIGTERM as a process does by default.

# %% tags=["remove-input"]
# The exercise's hidden checks call this helper: zombie_within under another name.
def exit_keeps_pid(pid: int, timeout: float) -> bool:
    """Poll until `pid` has exited but is not reaped yet (a zombie); False if never."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return False
        time.sleep(0.005)
    return False


wait_for_zombie = exit_keeps_pid  # the name the exercise's checks use


# %% tags=["solution", "hide-input"] mystnb={"code_prompt_show": "Show the solution"}
def stop_with_escalation(proc: multiprocessing.Process, grace: float) -> str:
    """Reap `proc`, terminating and then killing it if needed; say which step ended it."""
    ### BEGIN SOLUTION
    proc.join(timeout=0)
    if not proc.is_alive():
        return "exited"
    proc.terminate()
    proc.join(timeout=grace)
    if not proc.is_alive():
        return "terminated"
    proc.kill()
    proc.join(timeout=5)
    return "killed"
    ### END SOLUTION


# %% tags=["tests"]
polite = SPAWN.Process(target=pid_after, args=(3,))
try:
    polite.start()
    polite_step = stop_with_escalation(polite, grace=2)
    assert polite_step == "terminated", (
        "a process that ends on SIGTERM within the grace period: 'terminated' "
        f"expected, got {polite_step!r}")
    polite_code = polite.exitcode
    assert polite_code == -signal.SIGTERM, (
        "the polite process must be ended by SIGTERM: "
        f"exitcode {-signal.SIGTERM} expected, got {polite_code!r}")
finally:
    if polite.pid is not None:
        polite.kill()
        polite.join(timeout=5)
        polite.close()

# %% tags=["tests"]
ready, workers_end = SPAWN.Pipe()
stubborn = SPAWN.Process(target=ignore_sigterm, args=(workers_end, 3))
try:
    stubborn.start()
    stubborn_said = messages(ready, timeout=10)
    assert stubborn_said == ["ready"], (
        "the stubborn worker must say 'ready' (SIGTERM ignored) before it is stopped, "
        f"got {stubborn_said!r}")
    stubborn_step = stop_with_escalation(stubborn, grace=0.2)
    assert stubborn_step == "killed", (
        "a process that ignores SIGTERM must be killed after the grace period: "
        f"'killed' expected, got {stubborn_step!r}")
    stubborn_code = stubborn.exitcode
    assert stubborn_code == -signal.SIGKILL, (
        "the stubborn process must be ended by SIGKILL: "
        f"exitcode {-signal.SIGKILL} expected, got {stubborn_code!r}")
finally:
    if stubborn.pid is not None:
        stubborn.kill()
        stubborn.join(timeout=5)
        stubborn.close()
    ready.close()
    workers_end.close()

# %% tags=["tests", "hidden-tests", "remove-cell"]
### BEGIN HIDDEN TESTS
from lab_snippets import grading as _grading


def _is_gone(pid: int) -> bool:
    return not psutil.pid_exists(pid)  # a zombie still exists until its parent reaps it
_NOT_REAPED = ("the process was not reaped when the function returned: it is a zombie until its "
               "parent waits for it; join it (bounded) after the signal that ended it (chapter 18)")
_started: list = []
_report, _workers_end = SPAWN.Pipe()
try:
    _finished = SPAWN.Process(target=exit_with, args=(4,))
    _finished.start()
    _started.append(_finished)
    assert wait_for_zombie(_finished.pid, timeout=10)
    _said_finished = stop_with_escalation(_finished, grace=2)
    assert _is_gone(_finished.pid), _NOT_REAPED
    assert _said_finished == "exited", (
        f"a process that had already exited was reported as {_said_finished!r}, not 'exited': a "
        "zombie still has its pid, so os.kill(pid, 0) finds it; ask exitcode or is_alive() "
        "(chapter 18)")
    assert _finished.exitcode == 4, "a process that already exited keeps its own exit code"
    _slow = SPAWN.Process(target=note_sigterm, args=(_workers_end, 3))
    _slow.start()
    _started.append(_slow)
    assert messages(_report, timeout=10) == ["ready"]
    _limit = _grading.ReferenceWait(0.2 + 0.2)  # a plain wait of grace and 0.2 s of slack, beside the call
    _slow_timed = _grading.call(stop_with_escalation, _slow, grace=0.2)
    _said_slow = _slow_timed.value
    _gone = _is_gone(_slow.pid)  # checked before anything that would reap it for you
    _said = messages(_report)
    assert "got SIGTERM" in _said, (
        "SIGTERM must be sent before SIGKILL: ask politely first, so a process can clean up "
        "(chapter 18)")
    assert "lived to the end" not in _said, (
        "after the grace period the process must be killed, not waited for: join with "
        "timeout=grace, then SIGKILL (chapter 18)")
    assert _said_slow == "killed", f"a process that ignored SIGTERM was reported as {_said_slow!r}"
    assert _gone, _NOT_REAPED
    assert _slow.exitcode == -signal.SIGKILL
    _grading.check_within(_slow_timed, budget=_limit.seconds, slack=0,
                          what="stop_with_escalation of a process that ignores SIGTERM",
                          hint="SIGKILL once grace seconds have passed, not later (join(timeout=grace), not a coarse "
                               "polling loop), then a bounded join (chapter 18)")
    _polite = SPAWN.Process(target=pid_after, args=(3,))
    _polite.start()
    _started.append(_polite)
    _halfway = _grading.ReferenceWait(0.2 + (2 - 0.2) / 2)  # a plain wait, beside the call
    _polite_seen = _grading.call(stop_with_escalation, _polite, grace=2)
    assert _polite_seen.value == "terminated", (
        "a process that honours SIGTERM within the grace period must be reported as 'terminated'")
    _grading.check_returns_early(
        _polite_seen, work=0.2, budget=2, by=_halfway.seconds,
        what="stop_with_escalation of a process that ended at SIGTERM",
        hint="join(timeout=grace) returns when the process ends; time.sleep(grace) waits out the grace period "
             "(chapter 18)")
    assert _polite.exitcode == -signal.SIGTERM, "a process that honours SIGTERM must not be killed"
    assert _is_gone(_polite.pid), _NOT_REAPED
finally:
    for _proc in _started:
        if _proc.is_alive():
            _proc.kill()
        _proc.join(timeout=5)
        _proc.close()
    _report.close()
    _workers_end.close()
    _started.clear()

# Generated scenarios (issue 37): one or two processes stopped at once, each from a thread of
# its own, each a small shell script (run by a spawn child through os.execv) with drawn behaviour:
# already exited with its own code (0 included), honours SIGTERM, cleans up for a while and exits
# with its own code, cleans up for longer than the grace period, or ignores SIGTERM. The student's
# function and the reference run one after the other on real processes (the chapter's point), compared on
# the contract's facts (lab_snippets.scenarios explains the pattern).
import contextlib as _contextlib
import dataclasses as _dc
import functools as _functools
import io as _io
import tempfile as _tempfile

from hypothesis import strategies as _st

from lab_snippets import scenarios as _sc
from lab_snippets import scenarios_threads as _sth

_reference = _sc.reference(globals(), "stop_with_escalation")
_GRACE = 0.4  # longer than a short cleanup (0.05 s), shorter than a long one (1.5 s)


@_dc.dataclass(frozen=True)
class _Scenario:
    processes: tuple  # of _sth.StandIn, each stopped by its own thread, all at once

    def describe(self) -> str:
        who = f"{len(self.processes)} threads at once, each" if len(self.processes) > 1 else "one thread"
        procs = "; ".join(f"process {k} is " + (f"one that has already exited with {p.code}" if p.seconds == 0
                                                 else p.describe())
                          for k, p in enumerate(self.processes))
        return f"{who} calls stop_with_escalation(proc, grace={_GRACE:g}): {procs}"


_process = _st.one_of(
    _st.builds(_sth.StandIn, on_term=_st.sampled_from(["honour", "ignore"])),
    _st.builds(_sth.StandIn, on_term=_st.just("cleanup"), cleanup=_st.sampled_from([0.05, 1.5]),
               code=_st.sampled_from([3, 0])),
    _st.builds(_sth.StandIn, seconds=_st.just(0), code=_st.sampled_from([0, 4])))
_scenarios = _st.builds(_Scenario, _st.lists(_process, min_size=1, max_size=2).map(tuple))


def _start(spec, log: str):
    # short foreground sleeps: no child of the script outlives it holding the Process's sentinel pipe
    spec = _dc.replace(spec, tick=0.05)
    proc = SPAWN.Process(target=os.execv, args=("/bin/sh", spec.argv(log)))
    with _contextlib.redirect_stdout(_io.StringIO()), _contextlib.redirect_stderr(_io.StringIO()):
        proc.start()  # it flushes stdout: the kernel's stdout, flushed from this thread, costs a descriptor
    if spec.seconds == 0:
        ready = wait_for_zombie(proc.pid, timeout=10)
    else:
        ready = _sth.wait_for_line(log, "ready", timeout=10)
    return proc, ready


def _one(fn, proc, log: str) -> dict:
    seen = _sth.timed_wakeups(fn, proc, _GRACE)
    seen["state"] = _sth.state(proc.pid)  # before anything else could reap it
    seen["exitcode"] = proc.exitcode
    seen["asked"] = "got SIGTERM" in _sth.read_log(log)
    return seen


def _observe(fn, s: _Scenario) -> list:
    with _tempfile.TemporaryDirectory() as folder:
        logs = [os.path.join(folder, f"p{k}.log") for k in range(len(s.processes))]
        started = []
        try:
            for spec, log in zip(s.processes, logs, strict=True):
                started.append(_start(spec, log))
            if not all(ready for _, ready in started):
                return [{"kind": "did not start"}] * len(logs)  # a loaded machine: both sides say so
            return _sth.at_once([_functools.partial(_one, fn, proc, log) for (proc, _), log in zip(started, logs, strict=True)],
                                timeout=10)
        finally:
            for (proc, _), log in zip(started, logs, strict=False):
                _sth.kill_all([proc.pid, *_sth.pids_in_log(_sth.read_log(log))])
                proc.join(timeout=5)
                proc.close()


def _compare_one(me: dict, it: dict, _process) -> str | None:
    if it["kind"] == "did not start":
        return None
    if (me["kind"], me.get("value")) != (it["kind"], it.get("value")):
        got = me.get("value") if me["kind"] == "returned" else me["kind"]
        return (f"the step reported: {got!r}, expected {it.get('value')!r}: 'exited' for a process that had ended "
                "before the call (exit code 0 included), 'terminated' for one that ended after SIGTERM within the "
                "grace period (whatever its exit code), 'killed' for one that needed SIGKILL")
    if me["state"] == "zombie":
        return "no zombie left: the process was not reaped when the function returned; join it (bounded)"
    if me["exitcode"] != it["exitcode"]:
        return (f"the signal that ended it: exit code {me['exitcode']!r}, expected {it['exitcode']!r}: SIGTERM "
                "first, SIGKILL only once the grace period is over")
    if me["asked"] != it["asked"]:
        return ("SIGTERM before SIGKILL: " + ("the process never got SIGTERM" if it["asked"]
                                               else "a process that had already exited got SIGTERM"))
    if me.get("value") == "killed" and me["seconds"] < _GRACE * 0.9:
        return (f"SIGKILL only once grace has passed: the process was killed after {me['seconds']:.2f} s, "
                f"within a grace period of {_GRACE:g} s")
    if me["wakeups"] > it["wakeups"] + 1:
        return (f"a return as soon as the process has ended: the call woke {me['wakeups']} times from a blocking "
                f"wait, where the reference's woke {it['wakeups']} time(s): a poll (sleep, is_alive) "
                "sees the end up to one interval late; join(timeout=...) is woken by the end itself")
    if me["seconds"] > it["seconds"] + 0.2:
        return (f"a return as soon as the process has ended: {me['seconds']:.2f} s, where the reference, run "
                f"right after it, returned after {it['seconds']:.2f} s: join(timeout=grace) returns when the process "
                "ends; SIGKILL once grace has passed, not later")
    return None


_compare = _sth.per_item(_compare_one, lambda s: s.processes, "process", "stop_with_escalation")


# one side after the other, not side by side: every process is started from the one grading thread,
# which alone swaps sys.stdout while it does. Always tried first, as one random draw may miss them:
# the two quick paths (a short cleanup, an exit before the call), then the two that outlast the
# grace period (SIGTERM ignored, a cleanup longer than grace), each stopped at once from a thread.
_sc.differential(stop_with_escalation, _reference, _scenarios, _observe, _compare,
                 what="stop_with_escalation", examples=1, hint="chapter 18",
                 explicit=(_Scenario((_sth.StandIn("cleanup", code=3, cleanup=0.05), _sth.StandIn(seconds=0))),
                           _Scenario((_sth.StandIn("ignore"), _sth.StandIn("cleanup", code=0, cleanup=1.5)))))
### END HIDDEN TESTS

# %% [markdown]
# :::{dropdown} Why the course does it this way: the resource tracker
#
# As in chapter 12, the `spawn` start method left multiprocessing's resource tracker running
# in this Jupyter kernel; the folded cell below stops it, so that this notebook ends with no
# child process at all. A script of your own would let it exit with the parent.
#
# :::

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
from lab_snippets.proc_workers import stop_resource_tracker

assert stop_resource_tracker()
assert not psutil.Process().children(), "no child process of any kind is left"
print("✓ the resource tracker is stopped: no child process of any kind is left")

# %% [markdown]
# ## Summary
#
# - "Done" on a queue, the process's exit and the parent's reaping are three events; only
#   the last one frees the pid. Between exit and reaping the process is a zombie.
# - `join(timeout)` reaps; so do `is_alive()` and `exitcode`, which poll. `exitcode` is 0, the
#   worker's own status, 1 for an uncaught exception, or minus the signal number.
# - Stopping is a request (`terminate`, SIGTERM), a bounded wait, then force (`kill`,
#   SIGKILL), then a final bounded `join`.
# - `Popen.communicate(timeout)` leaves the child running on timeout: kill it, then wait for
#   it (or let `subprocess.run` do both).
#
# **What's next.** Chapter 19 asks what happens to the processes a child started itself, how
# signals travel between a wrapper and its child, and which resources the kernel releases for
# you when a process dies.
#
# ## In slime
#
# Two quotes. The first is a `run` that reads its workers' results until each has sent its
# completion message, and then stops looking: it does not join them. The second stops a process
# as the third experiment did. Other places where slime starts, waits for and stops processes are listed in
# the [source inventory](../book/reference/inventory.md).

# %% tags=["remove-input"]
from lab_snippets.sites import show_call_site

show_call_site("18")

# %% [markdown]
# The program below is the quoted `run`
# in a few lines: it starts one `spawn` worker (`consume_until_stop`, the chapter's first
# worker), reads its results up to `"done"`, does not join it, and prints `run returned` as
# its very last line. It passes `LINGER` = 2 s as the worker's `linger`.

# %%
LINGER = 2.0
RUN_WITHOUT_JOIN = """
import multiprocessing, sys
from lab_snippets.proc_workers import consume_until_stop
spawn = multiprocessing.get_context("spawn")
tasks, results = spawn.Queue(), spawn.Queue()
worker = spawn.Process(target=consume_until_stop,
                       args=(tasks, results, float(sys.argv[1])))
worker.start()
print("worker", worker.pid, flush=True)
tasks.put(None)  # no work: the stop message at once
while results.get(timeout=10) != "done":
    pass
print("run returned", flush=True)  # the program's last line
"""

# %% [markdown]
# Predict: one second after the program has printed its last line, is it still running?
# (Chapter 09 showed what the interpreter does at its end with a thread that is not a daemon;
# a `Process` has a `daemon` flag too, off unless you set it.)

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
program = subprocess.Popen([sys.executable, "-c", RUN_WITHOUT_JOIN, str(LINGER)],
                           stdout=subprocess.PIPE)
worker_pid = int(read_line(program.stdout, timeout=10).split()[1])
last_line = read_line(program.stdout, timeout=10).strip()
try:
    program.wait(timeout=LINGER / 2)
    running_after_last_line = False
except subprocess.TimeoutExpired:
    running_after_last_line = True
worker_running_then = is_running(worker_pid)
program.wait(timeout=10)
program.stdout.close()
print(f"{last_line!r}; the program still running {LINGER / 2:g} s later: "
      f"{running_after_last_line} (its worker too: {worker_running_then})")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: an-unjoined-worker-holds-the-program-at-its-end
assert last_line == "run returned", last_line
assert running_after_last_line and worker_running_then, (
    "the program should wait at its end for the worker it never joined: "
    f"running {running_after_last_line}, worker {worker_running_then}")
assert program.returncode == 0 and not psutil.pid_exists(worker_pid)
print("✓ after its last line, the program waited for its unjoined worker, then exited")

# %% [markdown]
# :::{dropdown} Why
#
# At the end of the program, `multiprocessing` joins each non-daemon child it started, with
# no timeout. The worker was still flushing (its 2 s `linger` after `"done"`), so the program that had "returned" waited for
# it, without a word. In slime a worker that hangs after its `COMPLETE` (a flush that does not
# return) would hold the program at its very end, for ever; a bounded `join` after the
# `COMPLETE` messages, with a kill behind it (Exercise 18.1), would say which worker it was.
#
# :::


# %% tags=["remove-input"]
show_call_site("18b")

# %% [markdown]
# # 09 · Lock, Event and thread exit
# *Lock、Event 与线程退出*
#
# **The question.** Several threads update the same object, and one background thread has
# to run until you tell it to stop. What keeps the updates from getting lost, how do you
# tell a thread to stop, and what happens to a thread nobody stopped when the program ends?
#
# **You will**
# 1. see that `x += ...` is a read, a computation and a write, and make a lost update show
#    on every run;
# 2. fix it with `threading.Lock` and check that the total is then exact;
# 3. stop a background thread with a `threading.Event`, and bound the wait with
#    `join(timeout)` followed by `is_alive()`;
# 4. watch a daemon thread vanish at interpreter exit, mid-work and without its cleanup,
#    while a normal thread is waited for.
#
# **Needs** chapter 08 (threads next to the event loop) · about 35 minutes
#
# **New to the course?** [How to read an experiment](../book/reading_guide.md) explains the
# timelines, the helpers and the folded checks; the [glossary](../book/glossary.md) gives the
# words the chapters share.

# %%
import dis
import json
import subprocess
import sys
import threading
import time

from lab_snippets.thread_workers import join_all, parse_daemon_exit
from lab_snippets.timeline import Timeline, figure_style

figure_style()

# %% [markdown]
# ## One statement, three steps
#
# A rollout worker counts the tokens it has produced: `stats.tokens += count_tokens(text)`.
# It reads like one step. The bytecode the interpreter runs says otherwise: it loads the
# current value of `stats.tokens`, then calls `count_tokens`, then adds, then stores the sum.
# The read happens **before** the call on the right-hand side, and any other thread may
# run between the read and the store.

# %%
class TokenStats:
    def __init__(self) -> None:
        self.tokens = 0


def record_tokens(stats: TokenStats, text: str) -> None:
    stats.tokens += count_tokens(text)


SHOWN = ("LOAD_ATTR", "CALL", "STORE_ATTR", "BINARY_OP", "INPLACE_ADD")
steps = [(ins.opname, ins.argval) for ins in dis.get_instructions(record_tokens)
         if ins.opname.startswith(SHOWN)]
print(steps)

# %% tags=["hide-input"]
opnames = [name for name, _ in steps]
read_at = opnames.index("LOAD_ATTR")
call_at = next(i for i, name in enumerate(opnames) if name.startswith("CALL"))
write_at = opnames.index("STORE_ATTR")
assert read_at < call_at < write_at, (
    "the old value is read before the call, the sum written after it")
print("✓ the old value is read before count_tokens runs; the sum is stored after it")

# %% [markdown]
# ## Predict, then run
#
# A common belief: "CPython has a Global Interpreter Lock, so only one thread runs Python at a
# time, so `+=` is safe." Four threads each record 300 lines of two tokens. `count_tokens`
# stands for any helper that touches the outside world (a log write, a cache lookup): here it
# yields the GIL with `time.sleep(0)`, as every blocking call does. Predict the total. (On a
# free-threaded build there is no GIL at all; the end of the chapter comes back to it.)

# %% tags=["hide-output"]
def count_tokens(text: str) -> int:
    time.sleep(0)  # any I/O releases the GIL; this is the smallest stand-in for it
    return len(text.split())


def run_recorders(record, stats, threads: int, lines: int) -> int:
    start_together = threading.Barrier(threads)

    def recorder() -> None:
        start_together.wait(timeout=2)
        for _ in range(lines):
            record(stats, "two tokens")

    workers = [threading.Thread(target=recorder, name=f"recorder-{i}")
               for i in range(threads)]
    for worker in workers:
        worker.start()
    assert not join_all(workers, timeout=5), "a recorder thread is stuck"
    return stats.tokens


# %% tags=["hide-output"]
expected = 4 * 300 * 2
racy_total = run_recorders(record_tokens, TokenStats(), threads=4, lines=300)
print(f"expected {expected}, got {racy_total}: {expected - racy_total} tokens lost")

# %% tags=["claim", "hide-cell"]
# claim: plus-equals-loses-updates
assert racy_total < expected, "updates were lost: the GIL does not make += atomic"
print(f"✓ {expected - racy_total} of {expected} tokens lost: the GIL does not make += atomic")

# %% [markdown]
# Most of the updates vanished. Each thread read the total, gave up the GIL inside
# `count_tokens`, and when it came back wrote `old value + 2` over the sums the other threads
# had stored meanwhile.
#
# Is it only because of the I/O? No. With pure computation the GIL still changes hands (in
# the default build, which has one), every `sys.getswitchinterval()` seconds (5 ms by
# default), at points the interpreter chooses; on a free-threaded build with the GIL off the
# threads run at once, and nothing needs to change hands. Lowering
# the interval makes the switches frequent enough to see within a few runs. The `finally`
# restores the interval, because it is process-wide.

# %%
def count_tokens_cpu(text: str) -> int:
    return len(text.split())


def record_tokens_cpu(stats: TokenStats, text: str) -> None:
    stats.tokens += count_tokens_cpu(text)


default_interval = sys.getswitchinterval()
sys.setswitchinterval(1e-6)
try:
    trials = []
    for _ in range(8):
        total = run_recorders(record_tokens_cpu, TokenStats(), threads=4, lines=5000)
        trials.append(total)
        if trials[-1] < 4 * 5000 * 2:
            break
finally:
    sys.setswitchinterval(default_interval)
print(f"expected {4 * 5000 * 2} per trial, got {trials}")

# %% tags=["hide-input"]
assert sys.getswitchinterval() == default_interval
assert min(trials) < 4 * 5000 * 2, (
    "pure computation loses updates too, once threads switch often")
print(f"✓ pure computation lost updates too, within {len(trials)} trial(s)")

# %% [markdown]
# ## The fix: one lock around the whole read-modify-write
#
# A `threading.Lock` lets one thread at a time through the block it guards. The {term}`lock` must
# cover the read **and** the write: guarding only the store would still let two threads read
# the same old value. Both experiments above, repeated with the lock, come out exact.

# %%
stats_lock = threading.Lock()


def record_tokens_locked(stats: TokenStats, text: str) -> None:
    with stats_lock:
        stats.tokens += count_tokens(text)


def record_tokens_cpu_locked(stats: TokenStats, text: str) -> None:
    with stats_lock:
        stats.tokens += count_tokens_cpu(text)


locked_total = run_recorders(record_tokens_locked, TokenStats(), threads=4, lines=300)
sys.setswitchinterval(1e-6)
try:
    locked_cpu_totals = [
        run_recorders(record_tokens_cpu_locked, TokenStats(), threads=4, lines=5000)
        for _ in range(3)]
finally:
    sys.setswitchinterval(default_interval)
print("with the lock:", locked_total, locked_cpu_totals)

# %% tags=["claim", "hide-input"]
# claim: lock-around-read-and-write-is-exact
assert locked_total == 4 * 300 * 2, f"with I/O in the block: {locked_total}"
assert locked_cpu_totals == [4 * 5000 * 2] * 3, f"pure computation: {locked_cpu_totals}"
print("✓ with the lock around the read and the write, every total is exact")

# %% [markdown]
# ## Stopping a thread: ask, then wait with a bound
#
# Python has no supported way to kill a thread from outside. A long-running thread has to check a stop
# signal, and `threading.Event` is the standard one: `set()` from any thread, `is_set()` or
# `wait(timeout)` in the worker. `wait(timeout)` doubles as the pause between rounds, and
# returns `True` at once when the event is set, so the worker never sleeps through a stop.
#
# The other half is `join(timeout)`. It bounds how long **you** wait; it does nothing to the
# thread. After it returns, only `is_alive()` tells you whether the thread really ended.

# %%
tl = Timeline()
stop = threading.Event()
first_poll = threading.Event()
polls = []


def poll_engines() -> None:
    tl.mark("poller started")
    while not stop.wait(0.02):  # False after 0.02 s of quiet, True once stop is set
        polls.append(time.monotonic())
        first_poll.set()
    tl.mark("poller exited")


# %%
poller = threading.Thread(target=poll_engines, name="engine-poller")
poller.start()
first_poll.wait(timeout=2)

poller.join(timeout=0.1)
alive_after_bounded_join = poller.is_alive()
tl.mark("join(0.1) returned")

stop.set()
tl.mark("stop requested")
poller.join(timeout=2)
print(f"alive after join(0.1): {alive_after_bounded_join}; "
      f"alive after stop + join: {poller.is_alive()}; polls done: {len(polls)}")
print(tl.names())

# %% tags=["claim", "hide-input"]
# claim: bounded-join-does-not-stop-the-thread
assert first_poll.is_set(), "the poller polled at least once"
assert alive_after_bounded_join, "join(timeout) returned, but the thread was still running"
assert not poller.is_alive()
assert tl.order("poller started", "join(0.1) returned", "stop requested", "poller exited")
print("✓ join(0.1) returned with the thread still running; only stop.set() ended it")

# %% [markdown]
# ## What happens at exit: daemon threads are not waited for
#
# When the main thread of a program finishes, the interpreter first waits for every normal
# thread (as if it called `join` on each), then runs `atexit` handlers, then shuts down. A
# thread started with `daemon=True` is **not** waited for: it is stopped wherever it is, and
# its remaining work and its `finally` block never run.
#
# A notebook's kernel never exits, so we watch this in a child process. The script
# `lab_snippets.thread_workers` starts a normal thread with 6 steps and a {term}`daemon thread` with
# 40 steps (0.05 s each), and its main thread returns at once. An `atexit` handler reports
# what each thread had done; each `finally` prints a `CLEANUP` line if it runs.

# %%
child = subprocess.run(
    [sys.executable, "-m", "lab_snippets.thread_workers", "daemon-exit",
     "--joined-steps", "6", "--daemon-steps", "40", "--step", "0.05"],
    capture_output=True, text=True, timeout=20, check=True,
)
exit_report = parse_daemon_exit(child.stdout)
shown = ("steps_done", "steps_planned", "daemon_alive_at_exit", "cleanups_printed")
for key in shown:
    print(f"{key}: {json.dumps(exit_report[key])}")

# %% tags=["hide-input"]
at = {(e["thread"], e["event"]): e["at"] for e in exit_report["events"]}
done = exit_report["steps_done"]
assert done["joined"] == 6, "the normal thread was waited for and finished"
assert done["daemon"] < 40, "the daemon thread was cut off mid-work"
assert exit_report["daemon_alive_at_exit"] and not exit_report["joined_alive_at_exit"]
assert exit_report["cleanups_printed"] == ["joined"], "the daemon's finally block never ran"
assert (at[("main", "main returns")] < at[("joined", "finished all steps")]
        < at[("main", "atexit handler")])
print("✓ the normal thread finished and cleaned up; the daemon was cut off, no cleanup")

# %% [markdown]
# ## Measure it
#
# The child's times are `time.monotonic()` readings. Python promises only that differences
# between two readings are meaningful; on Linux it reads the system's `CLOCK_MONOTONIC`, one
# clock for every process of the machine, so the child's readings go straight onto our
# timeline (on another system, read the chart as a sketch). The main thread is done almost at once; the interpreter's exit
# then waits for the normal thread, and the daemon thread's work is cut off at that moment,
# although most of it was still ahead.

# %% tags=["hide-input"]
tl = Timeline()
tl.t0 = min(at.values()) - 0.02  # the child's clock readings, from just before its threads start
exit_at = at[("main", "atexit handler")]
tl.add("main thread", at[("main", "main returns")] - 0.005, at[("main", "main returns")])
tl.add("exit waits for normal threads", at[("main", "main returns")], exit_at, state="waiting")
tl.add("normal thread", at[("joined", "start")], at[("joined", "finished all steps")])
tl.add("normal thread", at[("joined", "finished all steps")], at[("joined", "cleanup")] + 0.003,
       state="cleanup")
tl.add("daemon thread", at[("daemon", "start")], exit_at)
planned_daemon_end = at[("daemon", "start")] + 40 * 0.05
tl.add("daemon work dropped at exit", exit_at, planned_daemon_end, state="cancelled")
fig = tl.plot("At exit the interpreter waits for normal threads and drops daemon threads",
              lanes=["main thread", "exit waits for normal threads", "normal thread", "daemon thread",
                     "daemon work dropped at exit"],
              xlabel="time since just before the child's threads started (s)")
done_share = exit_report["steps_done"]["daemon"] / exit_report["steps_planned"]["daemon"]
print(f"the daemon thread did {done_share:.0%} of its work before it was dropped")
assert done_share <= 0.5

# %% [markdown]
# So `daemon=True` is not a way to stop a thread. It is a fallback that keeps a thread which
# failed to stop from holding the whole process open. A thread that owns something (a file
# being written, a connection, a child process) needs a stop signal and a bounded join, so
# its cleanup runs.
#
# ### Python 3.13 and later: a build without the GIL
#
# Python 3.13 offers an optional free-threaded build (`python3.13t`, PEP 703; officially
# supported, still optional, in 3.14 under PEP 779) in which
# threads run Python code truly in parallel. Nothing in this chapter depends on the GIL: the
# lost update happens with it, and the lock fixes it with or without it. What the GIL hid is
# only how *often* the race shows. `sys._is_gil_enabled()` (3.13+) says whether the GIL is on
# right now, which is not the same as the build: a free-threaded build can turn the GIL back on
# (`-X gil=1`, `PYTHON_GIL=1`, or an extension module not marked safe without it);
# `sysconfig.get_config_var("Py_GIL_DISABLED")` names the build.

# %%
if sys.version_info >= (3, 13):
    import sysconfig

    print("free-threaded build:", bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
          "· GIL enabled right now:", sys._is_gil_enabled())
else:
    print(f"Python {sys.version_info.major}.{sys.version_info.minor} has no "
          "free-threaded build:\nthere is always a GIL, and the races above still "
          "happen.")

# %% [markdown]
# ## Exercise 9.1 · A periodic check that stops on request
#
# Implement `start_periodic_check(check, interval, stop)`. It must start and return a
# thread that
#
# 1. calls `check()` once right away, then once every `interval` seconds;
# 2. ends promptly when `stop` is set, **even in the middle of an interval** (a thread that
#    sleeps the full interval before noticing makes every shutdown slow);
# 3. never calls `check()` again once `stop` is set.
#
# The caller owns `stop`; it sets it and joins the thread with a timeout.
#
# Graded, with an interval of seconds: the thread returned is started; `check()` runs in it
# at once; the thread ends within half a second of `stop` being set, however long the
# interval; no call to `check()` once `stop` is set.

# %% tags=["solution", "hide-input"]
def start_periodic_check(check, interval: float, stop: threading.Event) -> threading.Thread:
    """Start a thread that calls check() now and every `interval` s until `stop` is set."""
    ### BEGIN SOLUTION
    def run() -> None:
        while not stop.is_set():
            check()
            if stop.wait(interval):
                break

    thread = threading.Thread(target=run, name="periodic-check", daemon=True)
    thread.start()
    return thread
    ### END SOLUTION


# %% tags=["tests"]
visible_calls: list[float] = []
visible_stop = threading.Event()
checker = start_periodic_check(lambda: visible_calls.append(time.monotonic()), 0.02,
                               visible_stop)
try:
    deadline = time.monotonic() + 2
    while len(visible_calls) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
finally:
    visible_stop.set()
    checker.join(timeout=2)
assert not checker.is_alive(), "the thread must end once stop is set"
assert len(visible_calls) >= 3, (
    "check() must run at once and then every 0.02 s: 3 calls expected within 2 s, "
    f"got {len(visible_calls)}")

# %% tags=["tests", "hidden-tests", "remove-cell"]
### BEGIN HIDDEN TESTS
from lab_snippets import grading

_interval = 3.0  # long: a thread that sleeps it out is still running long after stop is set
_stop = threading.Event()
_first_call = threading.Event()
_calls: list[int] = []


def _check() -> None:
    _calls.append(threading.get_ident())
    _first_call.set()


_thread = start_periodic_check(_check, _interval, _stop)
try:
    assert isinstance(_thread, threading.Thread) and _thread.is_alive(), (
        "start_periodic_check must return the thread it started: call start() before returning "
        "(chapter 09)")
    assert _first_call.wait(timeout=2), (
        "check() must run right away, before the first wait of `interval` (chapter 09)")
    time.sleep(0.05)
    # the stop latency: at most 0.5 s whatever the interval (a nap of half the 3 s interval is late)
    _limit = grading.ReferenceWait(0.5)  # a plain wait of 0.5 s, started beside the stop
    _stopped = grading.stop_thread(_thread, _stop, timeout=1.5)
finally:
    _stop.set()
    if isinstance(_thread, threading.Thread) and _thread.ident is not None:
        _thread.join(timeout=_interval + 0.5)
grading.check_stops_promptly(
    _stopped, _limit.seconds, f"the thread (with a {_interval:g} s interval)",
    hint="wait on the event (stop.wait(interval)) so that setting it wakes the thread at once (chapter 09)")
assert _calls.count(_thread.ident) <= 1, (
    "check() was called again after stop was set: test stop after every wait, before the next call "
    "(chapter 09)")
assert _calls == [_thread.ident], (
    "check() must be called in the new thread, not in the caller's, and only once before the first "
    "interval ends (chapter 09)")
### END HIDDEN TESTS

# %% [markdown]
# ## Summary
#
# - `x += f()` reads, computes and writes in separate steps; threads can switch in between,
#   GIL or not. Lost updates become likely as soon as the right-hand side does any I/O.
# - A `threading.Lock` around the whole read-modify-write makes the result exact.
# - Python has no supported way to kill a thread from outside. Give a long-running thread a
#   `threading.Event`, let it wait with `event.wait(interval)`, and end with `join(timeout)`
#   plus an `is_alive()` check, because `join(timeout)` only bounds your wait.
# - At exit normal threads are waited for; daemon threads are dropped mid-work and their
#   `finally` blocks never run.
#
# **What's next.** Chapter 10 leaves threads for `async with` and `async for`, where cleanup
# is tied to the structure of the code.
#
# ## In slime
#
# slime watches its inference engines from a background thread, the rollout health monitor.
# It is started as a daemon thread, but it is not left to die with the interpreter: it is
# stopped by setting a stop Event (`stop`, the first quote). Its loop waits on that Event between health checks rather
# than sleeping, so a stop request wakes it at once. Stopping also clears the pause flag, then
# joins with a timeout of one health-check timeout plus one interval plus five seconds, and
# logs a warning if the thread is still alive afterwards: the same ask, wait with a bound,
# then check pattern as above.
#
# The fully-async rollout keeps a single background worker in a module-level variable. A
# function that finds the worker missing or dead and creates a new one is a check-then-act
# sequence, the same shape as our read-modify-write, so it runs under a module-level
# `threading.Lock` (`_get_global_worker`, the second quote); the exit hook that stops the worker takes the
# same lock. More uses of locks, events and threads are listed in the
# [source inventory](../book/reference/inventory.md).

# %% tags=["remove-input"]
from lab_snippets.sites import show_call_site

show_call_site("09")

# %% tags=["remove-input"]
show_call_site("09b")

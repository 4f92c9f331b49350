# %% [markdown]
# # 23 · Diagnosing hangs and silent failures
# *诊断卡死与无声的失败*
#
# **The question.** A service stops making progress, or a piece of it fails and nobody hears.
# How do you find out where every task and thread is waiting, from inside the process and
# from outside it, and which failures does Python only report to a hook you may never see?
#
# **You will**
# 1. list a stuck program's tasks, and find which record of a task says where it is really
#    waiting;
# 2. make a frozen process print every thread's stack, from outside with a signal
#    (`faulthandler.register`) and from inside with a timer (`faulthandler.dump_traceback_later`);
# 3. catch the failures Python only logs: "Task exception was never retrieved", exceptions in
#    threads (`threading.excepthook`), exceptions nobody can raise (`sys.unraisablehook`), and
#    a callback that holds the loop too long (asyncio debug mode);
# 4. write a watchdog that reports every thread's and task's stack when progress stops,
#    without stopping the program.
#
# **Needs** chapters 05 (cancellation), 08 (a blocked loop) and 22 (signals to a service) ·
# about 70 minutes
#
# **New to the course?** [How to read an experiment](../book/reading_guide.md) explains the
# timelines, the helpers and the folded checks; the [glossary](../book/glossary.md) gives the
# words the chapters share.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the setup"}
import asyncio
import gc
import itertools
import linecache
import os
import re
import signal
import subprocess
import sys
import threading
import time

from lab_snippets.hangs import await_chain, describe_tasks, format_all_stacks
from lab_snippets.loopwatch import slow_callback_log
from lab_snippets.proc_workers import read_line
from lab_snippets.showcode import show_source  # prints a course function's source

HANGS = [sys.executable, "-m", "lab_snippets.hangs"]

# %% [markdown]
# ## Two stuck requests
#
# A miniature of a rollout worker that has stopped making progress. Two requests run the same
# coroutine function, `fetch_with_retry`. One is stuck waiting for a free slot (the slot holder
# waits for an approval that never comes); the other is stuck reading a reply from a server that
# never answers.

# %%
slot = asyncio.Semaphore(1)
approval = asyncio.Event()


async def hold_slot_until_approved() -> None:
    async with slot:
        await approval.wait()


async def acquire_slot() -> None:
    await slot.acquire()
    slot.release()


async def read_reply(server_never_answers: asyncio.Event) -> None:
    await server_never_answers.wait()


async def fetch_with_retry(step) -> None:
    await step()


# %% [markdown]
# ## Predict: does `get_stack()` tell the two requests apart?
#
# A timeout fires and, as many services do, logs the pending tasks by the name of their
# coroutine: for these two requests that is `fetch_with_retry` both times, which the cell
# prints first. `Task.get_stack()` returns a task's frames, and the cell prints them next.
# Predict: do the frames tell request A from request B?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
silent_server = asyncio.Event()
holder = asyncio.create_task(hold_slot_until_approved(), name="slot holder")
await asyncio.sleep(0)
stuck = [
    asyncio.create_task(fetch_with_retry(acquire_slot), name="request A"),
    asyncio.create_task(fetch_with_retry(lambda: read_reply(silent_server)),
                        name="request B"),
]
await asyncio.sleep(0.01)
timeout_log = {t.get_name(): t.get_coro().__qualname__ for t in stuck}
own_frames = {t.get_name(): [(f.f_code.co_name, f.f_lineno) for f in t.get_stack()]
              for t in stuck}
print("what the timeout log shows:", timeout_log)
print("Task.get_stack():          ", own_frames)

# %% [markdown]
# :::{dropdown} Why
#
# No: on each printed line, A's entry and B's are the same. `get_stack()` returns only the frame of the task's *own* coroutine, and both requests'
# own coroutine is `fetch_with_retry`, suspended at its one `await step()` line. The line that is really waiting
# is further in, in the coroutine that `fetch_with_retry` awaits.
#
# :::
#
# ## Following the awaits
#
# A suspended coroutine keeps, in `cr_await`, the object it is awaiting right now; its frame,
# `cr_frame`, says where it stopped. Following `cr_await` from the task's coroutine walks down
# the awaits, until what is awaited is no longer a coroutine: the future at the bottom. The
# idea fits in a few lines that you can take to your own service:

# %%
def await_chain_sketch(task: asyncio.Task) -> list[str]:
    """Where each coroutine of the task's chain stopped, outermost first."""
    chain, awaited = [], task.get_coro()
    while getattr(awaited, "cr_frame", None) is not None:  # a suspended coroutine
        frame = awaited.cr_frame
        chain.append(f"{frame.f_code.co_name} (line {frame.f_lineno})")
        awaited = awaited.cr_await  # what it is awaiting right now
    return chain  # it stops at the first thing that is not a coroutine: the future


print(await_chain_sketch(stuck[1]))

# %% [markdown]
# The course's `await_chain(task)` (in `lab_snippets.hangs`, source in the fold) does the same.
# It also follows async generators and generator-based coroutines, notes each link's file, and
# ends the chain with `<a future>`.

# %% tags=["remove-input", "hide-output"] mystnb={"code_prompt_show": "Show the source of await_chain and its helpers"}
from lab_snippets.hangs import ChainLink, _awaiting

show_source(ChainLink)
show_source(_awaiting)
show_source(await_chain)

# %% [markdown]
# The cell prints `await_chain` of both requests. Each link is a function with its file and
# line; a file name such as `4194896919.py` is how Jupyter names a notebook cell's code, and
# the number after the colon is the line in that cell.

# %%
chains = {t.get_name(): await_chain(t) for t in stuck}
for name, chain in chains.items():
    print(f"{name}: " + " → ".join(link.where for link in chain))

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: await-chain-finds-the-stuck-await
innermost = {name: [link.name for link in chain if link.filename and "asyncio" not in link.filename][-1]
             for name, chain in chains.items()}
assert len(set(timeout_log.values())) == 1 and len({tuple(f) for f in own_frames.values()}) == 1, (
    "names and the task's own frame are the same for both requests")
assert innermost == {"request A": "acquire_slot", "request B": "read_reply"}, (
    "the await chain reaches the coroutine that is really waiting")
print("✓ the names and get_stack() are the same for both; the await chains end in",
      "acquire_slot and read_reply")

# %% [markdown]
# Following `cr_await` goes down to the innermost coroutine and the future it waits on: A's
# chain passes through `acquire_slot`, B's through `read_reply`. The chain of A ends in
# `Semaphore.acquire`, which sends us to whoever holds the slot.
#
# `describe_tasks()` prints such a chain for every task of the loop, one `Task 'name':` line and
# then its chain, indented. The cell prints the slot holder's entry (`entry_of`, folded, cuts
# one entry out of such a report).

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show entry_of: one entry of a report"}
def entry_of(lines: list[str], header: str) -> list[str]:
    """The header line and the indented lines under it (empty if the header is missing)."""
    if header not in lines:
        return []
    first = lines.index(header)
    return [header, *itertools.takewhile(lambda line: line.startswith("    "), lines[first + 1:])]


# %%
report = describe_tasks().splitlines()
print(*entry_of(report, "Task 'slot holder':"), sep="\n")

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
first = report.index("Task 'slot holder':")
assert "hold_slot_until_approved" in report[first + 1], "the holder's chain shows what it waits for"
print("✓ describe_tasks() shows the slot holder waiting in hold_slot_until_approved")
approval.set()
silent_server.set()
await asyncio.wait([holder, *stuck], timeout=2)
assert all(t.done() for t in [holder, *stuck])

# %% [markdown]
# :::{dropdown} Going further: Python 3.14's call graph, and reading another process's tasks
#
# (On a Python older than 3.14, such as the one that built this page, the folded cell shows only
# the `await_chain` fallback.) Python
# 3.14 added the same idea to `asyncio` itself: `asyncio.capture_call_graph(task)`,
# `format_call_graph` and `print_call_graph` follow a task's awaits *and* the tasks that await
# it. Older Pythons have none of it; `await_chain` is our stand-in. The folded cell below
# prints whichever this Python has.
#
# Python 3.14 also added `python -m asyncio ps PID` and `python -m asyncio pstree PID`, which
# read the task tree of **another** running process without running any code in it. They need
# permission to inspect another process: on Linux the same ptrace permission as `py-spy`
# (next section's "Going further").
#
# :::

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the experiment"}
async def waits_on(event: asyncio.Event) -> None:
    await event.wait()


event = asyncio.Event()
probe = asyncio.create_task(fetch_with_retry(lambda: waits_on(event)), name="probe")
await asyncio.sleep(0)
if sys.version_info >= (3, 14):
    graph = asyncio.format_call_graph(probe)
    print(graph)
else:
    graph = " → ".join(link.where for link in await_chain(probe))
    print(f"Python {sys.version_info.major}.{sys.version_info.minor}:",
          "no asyncio.format_call_graph (new in 3.14); await_chain shows:", graph)
# the check
if sys.version_info >= (3, 14):
    assert "waits_on" in graph
else:
    assert [link.name for link in await_chain(probe)][:2] == ["fetch_with_retry", "waits_on"]
print("✓ the chain goes through fetch_with_retry down to waits_on")
event.set()
_ = await asyncio.wait([probe], timeout=2)  # assigned: no stray output

# %% [markdown]
# ## Measure: a frozen process, seen from outside
#
# Task chains need a loop that still answers. When threads are deadlocked, or the loop's thread
# is stuck in a blocking call, nothing in the process runs Python code for you. Two tools work
# anyway:
#
# - `faulthandler.register(signal.SIGUSR1, all_threads=True)`: when the process receives
#   SIGUSR1, a handler written in C writes every thread's stack to stderr.
# - `py-spy dump --pid PID` (a separate tool from PyPI) reads another process's memory and
#   prints its threads' stacks without the process's cooperation, given permission to. The
#   cells below use `faulthandler`, which needs none.
#
# `frozen` starts two threads that deadlock: `take_a_then_b` holds lock A and waits for lock B
# (`with a: b.acquire()`), `take_b_then_a` holds B and waits for A. The experiment has three
# steps, one cell each: start the child and wait until it says it is stuck; send it SIGUSR1 and
# read the dump; then let it go and see how it ended.
#
# **Step 1.** Start `frozen`: it deadlocks two threads and registers a SIGUSR1 dump, then
# prints `ready`; closing its stdin ends it with status 0.

# %%
# HANGS: python -m lab_snippets.hangs; "5": it never runs longer than 5 s
frozen = subprocess.Popen(HANGS + ["frozen", "5", "--register"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
print(read_line(frozen.stdout, timeout=10).strip())  # "ready": each holds one lock

# %% tags=["remove-input", "hide-output"] mystnb={"code_prompt_show": "Show the course's source: the registration and one of the two threads"}
from lab_snippets.hangs import _cmd_frozen, take_a_then_b

show_source(_cmd_frozen, first="if args.register", last="faulthandler.register(")
show_source(take_a_then_b, first="with a:", last="b.acquire()")

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the helpers: reading the child's output and the dump's frames"}
# read_until(stream, *words): reads line by line until every one of `words` has appeared.
# frames_of(dump): the dump's lines that name the two deadlocked functions (file, line number,
# function), each with the source line it points at.
def read_until(stream, *words: str, timeout: float = 5) -> str:
    """Read lines from `stream` until every one of `words` has appeared, or the stream ends."""
    text = ""
    while not all(word in text for word in words):
        line = read_line(stream, timeout=timeout)
        if not line:
            break  # end of file: the process is gone
        text += line
    return text


def frames_of(dump: str) -> list[str]:
    """The dump's frames in take_a_then_b / take_b_then_a, each with the source line it points at."""
    found = []
    for line in dump.splitlines():
        frame = re.match(r'\s*File "(.+)", line (\d+) in (take_\w+)', line)
        if frame:
            code = linecache.getline(frame[1], int(frame[2])).split("#")[0].strip()
            found.append(f"{os.path.basename(frame[1])}:{frame[2]} in {frame[3]}:  {code}")
    return found


# %% [markdown]
# **Step 2.** Send SIGUSR1 and read stderr until the dump names both functions; 0.1 s later,
# ask whether the child still runs. Then read what is left of its output and its exit status
# (`communicate()` closes its stdin: a child still running then prints `gave-up` and exits 0).
#
# Without a handler, SIGUSR1 ends a process (`Popen` would report -10). Predict: once its C
# handler has written the dump, does the child go on to that default action and end with -10,
# or does it stay in its deadlock until our `communicate()` (status 0)?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
frozen.send_signal(signal.SIGUSR1)
sent_at = time.monotonic()
dump = read_until(frozen.stderr, "take_a_then_b", "take_b_then_a")
dumped_at = time.monotonic()
time.sleep(0.1)  # time enough for a signal to end it
status_after_dump = frozen.poll()  # None if it still runs, else how it ended
print(*frames_of(dump), sep="\n")
print(f"frames read {1000 * (dumped_at - sent_at):.0f} ms after the signal")

try:  # read what is left, and the exit status (bounded)
    out, err = frozen.communicate(timeout=5)
finally:
    if frozen.poll() is None:
        frozen.kill()
        frozen.communicate(timeout=5)
dump_text = dump + err.decode()
print("exit status:", frozen.returncode,
      "· stdout after the dump:", out.decode().split())

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: sigusr1-dump-shows-every-thread
# Why the child's threads sit in one blocking call: an earlier child, whose threads woke every
# 50 ms to check a flag, died of SIGSEGV in 4 of 300 dumps on a loaded two-core machine
# (CPython 3.11.7).
assert "take_a_then_b" in dump_text and "take_b_then_a" in dump_text, (
    "both deadlocked threads are in the dump")
assert status_after_dump is None and frozen.returncode == 0, "the dump did not stop the process"
print("✓ the dump showed both deadlocked threads, and the process went on running")

# %% [markdown]
# :::{dropdown} Why
#
# It stays in its deadlock. `faulthandler.register` replaces SIGUSR1's default action with
# one that writes the dump and returns (it would also call the action it replaced only if
# asked to, with `chain=True`). In order: the dump named both threads' functions
# and lines (`take_a_then_b` stuck in `b.acquire()`, `take_b_then_a` in `a.acquire()`); the
# threads went back to their deadlock, and 0.1 s later the child still ran. Only our
# `communicate()` ended it: it printed `gave-up` and exited with status 0, the last printed
# line. The dump reached us within milliseconds of
# the signal, read through a pipe, so the dump itself took at most that: cheap enough to take
# from a live service. Register it early, in every long-running service: it costs nothing
# until the signal comes.
#
# :::
#
# From inside, `faulthandler.dump_traceback_later(timeout)` starts a watchdog thread in C that
# dumps every stack if the timer is not cancelled (`cancel_dump_traceback_later()`) in time.
# The child below arms it for 0.3 s after its two threads deadlock. Predict: once the dump is
# written, does the process go on running, or does the watchdog end it?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
watchdog_child = HANGS + ["frozen", "5", "--later", "0.3"]
later = subprocess.Popen(watchdog_child, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
try:
    # read the whole dump first: an exit (on closing stdin) can cut it short
    later_dump = read_until(later.stderr, "take_a_then_b", "take_b_then_a", timeout=10)
    later_dump += later.communicate(timeout=5)[1].decode()  # closes stdin: it gives up
finally:
    if later.poll() is None:
        later.kill()
        later.communicate(timeout=5)
print(later_dump.splitlines()[0], "·", later_dump.count("take_"),
      "frames of the two deadlocked functions · exit status", later.returncode)

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert later_dump.startswith("Timeout (0:00:00.300000)!"), (
    f"the watchdog's dump comes first: {later_dump[:200]!r}")
assert "take_a_then_b" in later_dump, (
    f"the dump shows the deadlocked worker thread: {later_dump[:600]!r}")
assert later.returncode == 0, (later.returncode, later_dump[-300:])
print("✓ 0.3 s after the deadlock the watchdog dumped both threads; the process ran on until"
      " we closed its stdin")

# %% [markdown]
# :::{dropdown} Why
#
# `dump_traceback_later(timeout, repeat=False, file=sys.stderr, exit=False)`: with `exit=False`,
# the default, the watchdog only writes the dump, and the process runs on. The child went on
# until our `communicate()` closed its stdin, then gave up and exited with status 0. Pass
# `exit=True` to end the process after the dump instead.
#
# :::

# %% [markdown]
# :::{dropdown} Going further: when a dump can crash, and what py-spy needs
#
# `faulthandler` reads the other threads' frames without holding the GIL. A thread that runs
# Python code during the dump can change its frames under the reader, and the dump can then
# crash the process (CPython's tracker has reports like it, gh-116008). So the child above
# prints `ready` only once both threads hold their first lock and sit in `b.acquire()` or
# `a.acquire()`, one blocking call each, running no Python code while we dump: that is what
# `_meet(both_hold)` and `parked` are for, in the thread's source folded under Step 1 (the
# other thread is its mirror image). `parked.append` is itself a call into C, so it leaves the
# thread's own function as its top frame, which is what the child checks. `py-spy` needs ptrace permission on Linux: the same user
# and a Yama `ptrace_scope` that allows it, or root, and in a container the `CAP_SYS_PTRACE`
# capability. The course does not depend on it.
#
# :::

# %% [markdown]
# ## Silent failures
#
# Which failures reach your code as an exception, and which go only to a hook? A hook's
# default writes to stderr (or to the `asyncio` logger), where a service's logs may lose them.
#
# **A task that fails and is never awaited.** The exception is stored in the task, and asyncio
# can report it to the loop's exception handler with the message "Task exception was never
# retrieved". The cell below installs a handler that records each report, starts a task that
# raises, keeps a reference to it for 0.01 s, then drops it. Predict: how many reports arrive
# while the task is still referenced, and how many once it is dropped?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
reported: list[str] = []
loop = asyncio.get_running_loop()
previous_handler = loop.get_exception_handler()
loop.set_exception_handler(lambda _loop, context: reported.append(context["message"]))


async def score_sample() -> None:
    raise ValueError("reward model returned garbage")


try:
    lost = asyncio.create_task(score_sample())
    await asyncio.sleep(0.01)
    reported_while_referenced = len(reported)
    del lost
    reported_at_del = len(reported)
    gc.collect()
finally:
    loop.set_exception_handler(previous_handler)
print("reports while the task was referenced:", reported_while_referenced,
      "· right after the del:", reported_at_del, "· after gc.collect():", len(reported))
print("the report:", reported[0] if reported else "none")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: unretrieved-exception-reported-at-collection
assert reported_while_referenced == 0, "a failed task that is still referenced reports nothing"
assert reported_at_del == 1 and reported == ["Task exception was never retrieved"], (
    "dropping it unretrieved reports it, once, as the last reference goes")
print("✓ nothing while the task was referenced; one report once it was dropped unretrieved")

# %% [markdown]
# :::{dropdown} Why
#
# asyncio reports the exception only when the task object is destroyed without anyone having
# looked at it: while something still references the task, it might still look, so the first
# count stays at 0, and the report comes once the last reference goes (in CPython, at the
# `del`: reference counting destroys the task there; `gc.collect()` adds nothing, and would
# matter only if the task sat in a reference cycle). A service that
# keeps its failed tasks in a list hears nothing at all. The fix is not the handler: it is to
# own every task (chapter 03) and look at its result or
# exception. The handler is the net under that rule, for the ones that slip through.
#
# :::
#
# **Errors in threads and in `__del__`.** An exception that ends a thread goes to
# `threading.excepthook`. The cell below replaces that hook, and `sys.unraisablehook`
# beside it, with ones that record what they get; then a thread dies of `ZeroDivisionError`,
# and a `Connection` whose `__del__` raises `OSError` is created and dropped inside a `try`
# that has no `except`. Predict: does the cell end with an exception?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
thread_errors, unraisable = [], []
saved_hooks = threading.excepthook, sys.unraisablehook
threading.excepthook = lambda args: thread_errors.append(
    (args.thread.name, args.exc_type.__name__))
sys.unraisablehook = lambda args: unraisable.append(args.exc_type.__name__)


class Connection:
    def __del__(self):
        raise OSError("socket already closed")


try:
    worker = threading.Thread(target=lambda: 1 / 0, name="scorer")
    worker.start()
    worker.join(timeout=2)
    Connection()
    gc.collect()
finally:
    threading.excepthook, sys.unraisablehook = saved_hooks
print("threading.excepthook got:", thread_errors,
      "· sys.unraisablehook got:", unraisable)

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert thread_errors == [("scorer", "ZeroDivisionError")] and unraisable == ["OSError"]
print("✓ each hook got its error once")

# %% [markdown]
# :::{dropdown} Why
#
# No: the cell ran to its end. The thread's `ZeroDivisionError` ended only that thread: it went
# to `threading.excepthook` (the default one prints it), and the rest of the program carried
# on. The unreferenced `Connection()` is destroyed at once, and its
# `__del__` then runs at a moment no caller's code is waiting for it,
# so its exception has nowhere to propagate: Python hands it to `sys.unraisablehook` and
# carries on. The same goes for an exception in a weakref callback. Both hooks can be replaced,
# as here, to count or forward such errors.
#
# :::

# %% [markdown]
# **A callback that holds the loop.** asyncio's debug mode makes the loop log a warning for
# every callback or task step that ran longer than `loop.slow_callback_duration`. The course's
# `slow_callback_log(threshold)` (from `lab_snippets.loopwatch`, first used in chapter 02)
# switches it on for one block, sets that duration, here 0.03 s, and collects the warnings in a
# list. A task named `tokenizer` spins for 0.06 s without an `await`, its whole body. Predict:
# what will the warning call the task, and in what state: still running, or finished?

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the helper that shortens the warning"}
def shortened(warning: str) -> str:
    """The warning without its middle: the coroutine's repr, where it was defined."""
    # "Executing <Task … name='tokenizer' coro=<…> …> took 0.060 seconds"
    head, took = warning.split(" coro=")[0], warning.split("> took ")[-1]
    return f"{head} … took {took}"


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
async def tokenize_on_the_loop() -> None:
    until = time.monotonic() + 0.06
    while time.monotonic() < until:
        pass


with slow_callback_log(threshold=0.03) as slow:
    tokenizer = asyncio.create_task(tokenize_on_the_loop(), name="tokenizer")
    await asyncio.wait([tokenizer], timeout=2)
print(shortened(slow[0]))  # the first warning, shortened (folded above)

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert any("tokenizer" in message for message in slow), (
    "the warning names the task that held the loop")
print("✓ the slow-callback warning names the task that held the loop")

# %% [markdown]
# :::{dropdown} Why
#
# The loop times each step and writes the warning after the step has returned, so it describes
# the task as it is by then: look at the line, where `tokenizer` is named and already
# `finished`, because this one step was its whole body, and the time is the step's full 0.06 s.
# The task's name is what leads you to the code; a task without a name gets one like
# `Task-12`.
#
# :::
#
# ## Exercise 23.1 · A watchdog that reports where everything waits
#
# Implement `watch_progress(progress, stall, reports, stop, loop=None, poll=0.01)`. It runs in
# a thread of its own (the test starts it), so that it still works when the {term}`event loop`'s
# thread is the one that is stuck:
#
# 1. every `poll` seconds, call `progress()`, which returns a number that changes whenever the
#    service makes progress;
# 2. when the number has not changed for `stall` seconds (by the clock, not by counting polls),
#    append **one** report to `reports`: the string `format_all_stacks(loop)` returns, as it
#    is (`loop` may be `None`);
# 3. report once per stall: no second report until progress has resumed (to any other
#    number) and stalled again;
# 4. never stop or interrupt the program; return within a `poll` of `stop` (a
#    `threading.Event`) being set, and report nothing after it.
#
# :::{dropdown} What `format_all_stacks(loop)` returns
#
# It is imported at the top. Its string holds every thread's stack, each under a
# `Thread 'name':` line, one indented `function (file:line)` line per call, innermost last;
# then, when a loop is given, every task of `loop` exactly as `describe_tasks` printed it
# above (the slot holder's entry in "Following the awaits"). Its shape, with the lines elided:
#
# ```text
# Thread 'MainThread':
#     ...
# Thread '<the next thread's name>':
#     ...
# Task '<a task's name>':
#     ...
# ```
#
# Calling it from the watchdog's thread is safe because it only reads: `asyncio.all_tasks(loop)`
# copies the loop's set of tasks (it retries if the loop's thread changes the set meanwhile),
# and each chain is read from a task's coroutine, without calling the loop. If the loop is
# still running, the report is a snapshot that may be a step out of date; if it is stuck,
# nothing changes under it.
#
# :::
#
# :::{dropdown} What the grader checks
#
# Graded, on real threads and on many generated runs in which the watchdog's clock and waits
# are virtual (`poll` 0.01 to 0.05 s, `stall` 5 to 8 polls; waits and sleeps that wake on time
# or up to one `poll` late, as on a loaded machine; progress that counts up or wraps around to
# values it had before, so that two stalls can stop at the same number; pauses shorter and
# longer than `stall`, one after another, from the very start, or still going when `stop` is
# set; `loop` given or not):
#
# **When it reports**
#
# - **no false alarm**: no report while progress is being made, and none for a pause shorter
#   than `stall`; a number that comes back to an earlier value has still changed;
# - **on time**: a stall is reported no earlier than `stall` seconds after the last change,
#   measured on the clock (a count of polls is not a time when a wait wakes late), and within a
#   few turns of your loop after that (a turn is one `poll`, plus however late the wait wakes):
#   check every `poll` seconds, not every `stall`;
# - **once per stall**: one report per stall, and a new one for each later stall, even one at a
#   number an earlier stall was reported at;
#
# **What it reports, and how it stops**
#
# - **content**: each report is `format_all_stacks(loop)`: every thread's stack, and the tasks of
#   `loop` when one is given;
# - **stop**: the watchdog returns within one `poll` of `stop` being set (one turn, when the wait
#   wakes late), and appends nothing after, not even for a stall whose time came while it slept.
#
# :::

# %% tags=["solution", "hide-input"] mystnb={"code_prompt_show": "Show the solution"}
def watch_progress(progress, stall: float, reports: list[str], stop: threading.Event,
                   loop: asyncio.AbstractEventLoop | None = None, poll: float = 0.01) -> None:
    """Append format_all_stacks(loop) to `reports` once each time `progress()` stalls for `stall` s."""
    ### BEGIN SOLUTION
    last_value = progress()
    last_change = time.monotonic()
    reported = False
    while not stop.wait(poll):
        value = progress()
        now = time.monotonic()
        if value != last_value:
            last_value, last_change, reported = value, now, False
        elif not reported and now - last_change >= stall:
            reports.append(format_all_stacks(loop))
            reported = True
    ### END SOLUTION


# %% [markdown]
# `run_watchdog` starts your watchdog in a daemon thread, lets the main thread live through
# the given windows of "no progress" (while it sits in `stuck_in_approval`), then stops the
# watchdog and joins it (bounded). The visible test prints the first lines of the first report.
# A report holds every thread of this process, and the first thread in it need not be the main
# one: it is often the watchdog itself, whose stack ends in your `watch_progress`. The cell
# after the tests prints the main thread's part.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the helpers: a service that stalls, to run your watchdog on"}
def stuck_in_approval(until: float) -> None:
    while time.monotonic() < until:
        time.sleep(0.005)


def run_watchdog(stalls: list[tuple[float, float]], total: float, stall: float = 0.1, loop=None):
    """Run the watchdog for `total` s; progress stops during each (start, end) window (seconds)."""
    t0 = time.monotonic()
    windows = [(t0 + start, t0 + end) for start, end in stalls]

    def progress() -> int:
        now = time.monotonic()
        for number, (start, end) in enumerate(windows):
            if start <= now < end:
                return -number - 1
        return int(now * 1000)  # changes every millisecond while the service works

    reports: list[str] = []
    stop = threading.Event()
    watcher = threading.Thread(target=watch_progress, args=(progress, stall, reports, stop, loop),
                               name="watchdog", daemon=True)
    watcher.start()
    for start, end in windows:
        time.sleep(max(0.0, start - time.monotonic()))
        stuck_in_approval(end)
    time.sleep(max(0.0, t0 + total - time.monotonic()))
    stop.set()
    stopped = time.monotonic()
    watcher.join(timeout=2)
    return reports, not watcher.is_alive(), time.monotonic() - stopped


# %% tags=["tests"]
reports, ended, stop_delay = run_watchdog(stalls=[(0.05, 0.4)], total=0.5)
print(f"{len(reports)} report(s); the first lines of the first:")
print("\n".join(reports[0].splitlines()[:4]) if reports else "(none)")
assert len(reports) == 1, f"one stall, so one report, not {len(reports)}"
assert "stuck_in_approval" in reports[0] and ended, (
    "the watchdog thread was still running 2 s after stop was set: "
    "return soon after stop is set"
    if "stuck_in_approval" in reports[0]
    else "the report must hold every thread's stack, "
    "with the main thread inside stuck_in_approval")

# %% tags=["tests", "hidden-tests", "remove-cell"]
### BEGIN HIDDEN TESTS
_reports, _ended, _ = run_watchdog(stalls=[], total=0.35)
assert not _reports, (
    f"{len(_reports)} report(s) while progress was being made all along: measure the stall from the "
    "last change of progress(), not from the start")
_approval = asyncio.Event()


async def wait_for_approval() -> None:
    await _approval.wait()


_waiting = asyncio.create_task(wait_for_approval(), name="approval waiter")
await asyncio.sleep(0)
try:
    _t0 = time.monotonic()
    _reports, _ended, _stop_delay = run_watchdog(stalls=[(0.05, 0.4), (0.7, 1.05)], total=1.15,
                                                 loop=asyncio.get_running_loop())
    _ran = time.monotonic() - _t0 - _stop_delay  # how long it watched before stop was set
finally:
    _approval.set()
    await asyncio.wait([_waiting], timeout=2)
assert len(_reports) <= 2, (
    f"{len(_reports)} reports for 2 stalls: report once per stall, not at every poll")
assert len(_reports) == 2, (
    f"{len(_reports)} report(s) for 2 stalls: after progress resumes, the watchdog must report the next stall")
for _report in _reports:
    assert "stuck_in_approval" in _report, (
        "the report does not show where the stuck thread is waiting: report every thread's stack "
        "(format_all_stacks), not only the watchdog's own")
    assert "wait_for_approval" in _report, (
        "the report does not show the loop's tasks: pass the loop to format_all_stacks")
assert _ended and _stop_delay < 0.5 * _ran, "the watchdog did not return soon after stop was set"

# Pauses shorter than `stall` are not stalls.
_reports, _ended, _ = run_watchdog(stalls=[(0.05, 0.1), (0.2, 0.25), (0.35, 0.4)], total=0.5, stall=0.1)
assert _ended, "the watchdog did not return soon after stop was set"
assert not _reports, (
    f"{len(_reports)} report(s) for three pauses of 0.05 s with stall=0.1: report only when the number "
    "has not changed for `stall` seconds, measured from its last change (chapter 23)")


from lab_snippets.measure import ReferenceWait as _ReferenceWait


def _report_lag(stall: float, pause_from: float, pause_until: float, total: float):
    """How long after progress stopped the first report appeared (None if none), the count, and
    when a plain wait of 1.5 × stall, started as the pause began, ended (from the pause's start).

    The pause is timed from the watchdog's first call to progress(), so it begins at the same
    point of the watchdog's own polling rhythm however late its thread starts."""
    t0 = time.monotonic()
    first_call: list[float] = []

    def progress() -> int:
        now = time.monotonic()
        if not first_call:
            first_call.append(now)
        return -1 if pause_from <= now - first_call[0] < pause_until else int(now * 1000)

    reports: list[str] = []
    stop = threading.Event()
    watcher = threading.Thread(target=watch_progress, args=(progress, stall, reports, stop),
                               name="watchdog", daemon=True)
    watcher.start()
    first = reference = None
    while time.monotonic() < (first_call[0] if first_call else t0) + total:
        if first is None and reports:
            first = time.monotonic()
        if reference is None and first_call and time.monotonic() >= first_call[0] + pause_from:
            reference = _ReferenceWait(1.5 * stall)  # a plain wait from the pause's start, beside it
        time.sleep(0.002)
    stop.set()
    watcher.join(timeout=2)
    assert not watcher.is_alive(), "the watchdog did not return soon after stop was set"
    assert first_call, "the watchdog never called progress()"
    lag = None if first is None else first - (first_call[0] + pause_from)
    # the reference's end as an instant, counted from the pause's start like the lag
    limit = float("inf") if reference is None else reference.started + reference.seconds - (first_call[0] + pause_from)
    return lag, len(reports), limit


# A stall is reported about `stall` seconds after progress stopped: the pause begins just after
# a watchdog that checks every `stall` (instead of every `poll`) has looked, so that one would
# report about 2 x stall late.
_lag, _count, _limit = _report_lag(stall=0.2, pause_from=0.22, pause_until=0.75, total=0.8)
assert _count == 1 and _lag is not None, f"{_count} reports for one stall of 0.53 s with stall=0.2 (chapter 23)"
# floor: a wait never ends early, so no load makes the report come before `stall` has passed
assert _lag >= 0.8 * 0.2, (
    f"the stall was reported {_lag:.2f} s after progress stopped, with stall=0.2: report only when the "
    "number has not changed for `stall` seconds (chapter 23)")
assert _lag < _limit, (
    f"the stall was reported {_lag:.2f} s after progress stopped, with stall=0.2: report about `stall` "
    "seconds after progress stopped. Call progress() every `poll` seconds, not every `stall` (chapter 23)")

# Generated scenarios (issue 37): the same progress, pauses and stop through watch_progress and the
# reference, compared on when the reports come (lab_snippets.scenarios explains the pattern). The
# watchdog is a thread function, so its clock is made virtual by rebinding (scenarios_services):
# the rebound function reads `time` from a stand-in whose clock moves only when it sleeps or waits
# on `stop`, and `format_all_stacks` is a stand-in that notes when it was called and with which loop.
import dataclasses as _dc
import types as _types

from hypothesis import strategies as _st

from lab_snippets import scenarios as _sc
from lab_snippets.scenarios_services import rebind as _rebind

_reference = _sc.reference(globals(), "watch_progress")
_LOOP = object()  # the loop the scenario passes, when it passes one


@_dc.dataclass(frozen=True)
class _Scenario:
    poll: float
    stall: float
    segments: tuple   # (seconds, working?) in turn; stop is set at the end of the last one
    wraps: int        # progress() counts milliseconds of work modulo this (0: no wrap), so old values come
                      # back: modulo 300, a stall after 0.3 s of work has the very value of the one before
    with_loop: bool
    late: float = 0.0  # every wait and sleep of the watchdog wakes this much later than asked (a loaded machine)

    @property
    def stop_at(self) -> float:
        return round(sum(length for length, _ in self.segments), 9)

    def pauses(self) -> list:
        out, t = [], 0.0
        for length, working in self.segments:
            if not working:
                out.append((round(t, 9), round(t + length, 9)))
            t += length
        return out

    def describe(self) -> str:
        parts, t = [], 0.0
        for length, working in self.segments:
            parts.append(f"{'works' if working else 'pauses'} from {_sc.fmt(round(t, 9))} to {_sc.fmt(round(t + length, 9))}")
            t += length
        what = "a count of milliseconds of work" + (f" modulo {self.wraps}" if self.wraps else "")
        late = f"; each wait or sleep wakes {self.late:g} s late" if self.late else ""
        return (f"watch_progress(progress, stall={self.stall:g}, reports, stop, loop={'a loop' if self.with_loop else None}, "
                f"poll={self.poll:g}); progress() returns {what}; the service {', '.join(parts)}; stop is set at "
                f"{_sc.fmt(self.stop_at)}{late}")


@_st.composite
def _scenarios(draw):
    poll = draw(_st.sampled_from([0.01, 0.02, 0.05]))
    stall = round(poll * draw(_st.sampled_from([5, 8])), 9)
    segments = []
    for _ in range(draw(_st.integers(0, 3))):
        if segments or draw(_st.booleans()):  # the first pause may start at once
            segments.append((draw(_st.sampled_from([0.3, round(4 * poll, 9), 1.0])), True))
        # a pause half a poll short of a stall: its time is never reached, however the polls fall
        pause = draw(_st.sampled_from([stall + 3 * poll, stall - 3 * poll, 2 * stall, stall - poll / 2]))
        segments.append((round(pause, 9), False))
    if draw(_st.booleans()):  # stop comes while progress is being made
        segments.append((draw(_st.sampled_from([0.3, round(4 * poll, 9)])), True))
    else:  # stop comes during a stall, after its report or before it is due
        if segments:  # progress first, so that the stall is one pause of its own
            segments.append((round(4 * poll, 9), True))
        # half a poll short of a stall: the stall's time would come within the poll in which stop is set
        # half a poll over a stall: its time comes inside the wait in which stop is set, on a late clock
        segments.append((round(draw(_st.sampled_from([2 * stall, stall - poll / 2, stall - 3 * poll,
                                                      stall + poll / 2])), 9), False))
    return _Scenario(poll, stall, tuple(segments), draw(_st.sampled_from([0, 300, 97])), draw(_st.booleans()),
                     round(poll * draw(_st.sampled_from([0, 0.5, 1])), 9))


class _Hung(BaseException):
    """Raised into the watchdog once it runs far past its stop (virtual), or 2 s of real time."""


class _World:
    """The watchdog's virtual clock: it moves when the watchdog sleeps or waits on `stop` (and by
    a microsecond per reading, so that a loop that only reads the clock still sees it move)."""

    def __init__(self, s: _Scenario) -> None:
        self.s, self.now, self.real_end = s, 0.0, time.monotonic() + 2.0
        self.reports: list = []  # (time, loop given?, told of stop before?)
        self.told = False  # a wait or is_set has answered that stop is set

    def _check(self) -> None:
        if self.now > self.s.stop_at + 5 or time.monotonic() > self.real_end:
            raise _Hung

    def monotonic(self) -> float:
        self._check()
        self.now += 1e-6
        return self.now

    def sleep(self, seconds: float) -> None:
        self._check()
        self.now += max(0.0, seconds) + self.s.late

    def wait(self, timeout: float | None = None) -> bool:
        self._check()
        if timeout is None or self.now + max(0.0, timeout) + self.s.late >= self.s.stop_at:
            self.now = max(self.now, self.s.stop_at)  # set() wakes the wait at once
        else:
            self.now += max(0.0, timeout) + self.s.late
        self.told |= self.now >= self.s.stop_at
        return self.now >= self.s.stop_at

    def is_set(self) -> bool:
        self._check()
        self.told |= self.now >= self.s.stop_at
        return self.now >= self.s.stop_at

    def progress(self) -> int:
        self._check()
        worked, t = 0.0, 0.0
        for length, working in self.s.segments:
            if working:
                worked += max(0.0, min(self.now, t + length) - t)
            t += length
        count = int(round(worked * 1000, 6))
        return count % self.s.wraps if self.s.wraps else count

    def stacks(self, loop=None) -> str:
        self.reports.append((self.now, loop is _LOOP, self.told))
        return f"stacks #{len(self.reports)}"


def _observe(fn, s: _Scenario) -> dict:
    world = _World(s)
    fake_time = _types.SimpleNamespace(monotonic=world.monotonic, perf_counter=world.monotonic, time=world.monotonic,
                                      sleep=world.sleep, monotonic_ns=lambda: int(world.monotonic() * 1e9),
                                      perf_counter_ns=lambda: int(world.monotonic() * 1e9))
    stop = _types.SimpleNamespace(wait=world.wait, is_set=world.is_set, isSet=world.is_set, set=lambda: None)
    copy = _rebind(fn, {"format_all_stacks": world.stacks},
                   objects=[(time, fake_time), (time.monotonic, world.monotonic), (time.perf_counter, world.monotonic),
                            (time.time, world.monotonic), (time.sleep, world.sleep)])
    reports: list = []
    error = None
    try:
        copy(world.progress, s.stall, reports, stop, loop=_LOOP if s.with_loop else None, poll=s.poll)
    except _Hung:
        error = "hung"
    except Exception as exc:  # noqa: BLE001 - what came out is the observation
        error = f"raised {exc!r}"
    return {"error": error, "returned": world.now, "calls": list(world.reports), "reports": list(reports)}


def _compare(me: dict, it: dict, s: _Scenario) -> str | None:
    if me["error"] == "hung":
        return ("the watchdog did not return soon after stop was set (it kept running, or kept the thread busy "
                "without waiting): wait with stop.wait(poll) and return when it is set")
    if me["error"]:
        return f"watch_progress {me['error']}"
    if me["reports"] != [f"stacks #{n + 1}" for n in range(len(me["calls"]))]:
        return ("a report is not format_all_stacks(loop): append exactly what it returns, once per call, to "
                "`reports` (every thread's stack)")
    if any(given != s.with_loop for _, given, _ in me["calls"]):
        return "the report does not show the loop's tasks: pass the loop to format_all_stacks"
    pauses, tol = s.pauses(), s.poll + s.late + 1e-6  # one turn of the watchdog's loop

    def pause_of(at: float):  # the pause a report is about: the one it falls in, else one just over
        inside = [(a, b) for a, b in pauses if a - 0.002 <= at <= b + 2 * tol]
        after = [(a, b) for a, b in pauses if b < at <= b + s.stall + 2 * tol]
        return (inside or after[-1:] or [None])[0]

    for at, _, told in me["calls"]:
        pause = pause_of(at)
        if told or at > s.stop_at + 1e-6:
            return f"a report at {_sc.fmt(round(at, 3))}, after stop was set at {_sc.fmt(s.stop_at)}: report nothing after stop"
        if pause is None:
            return (f"a report at {_sc.fmt(round(at, 3))} while progress was being made: measure the stall from the "
                    "last change of progress() (any change, even back to an earlier value), not from the start")
        if pause[1] - pause[0] < s.stall:
            return (f"a report for a pause of {_sc.fmt(round(pause[1] - pause[0], 3))}, shorter than stall={s.stall:g}: "
                    "report only when the number has not changed for `stall` seconds, measured from its last change")
        if at < pause[0] + s.stall - 0.002:  # a reading may see the pause's value up to 1 ms early
            return (f"the stall was reported {_sc.fmt(round(at - pause[0], 3))} after progress stopped, with "
                    f"stall={s.stall:g}: report only when the number has not changed for `stall` seconds, measured "
                    "from its last change (any change, even back to an earlier value)")
    for a, b in pauses:
        mine = [at for at, _, _ in me["calls"] if pause_of(at) == (a, b)]
        theirs = [at for at, _, _ in it["calls"] if pause_of(at) == (a, b)]
        if len(mine) > len(theirs):
            return (f"{len(mine)} reports for one stall (from {_sc.fmt(a)} to {_sc.fmt(b)}): report once per stall, "
                    "not at every poll")
        if len(mine) < len(theirs):
            again = "after progress resumes, the watchdog must report the next stall" if a > 0 else "report it"
            return (f"the stall from {_sc.fmt(a)} to {_sc.fmt(b)} went unreported (stall={s.stall:g}): {again}, "
                    "about `stall` seconds after progress stopped, checking progress() every `poll` seconds and "
                    "measuring on the clock (a wait can wake late, so a count of polls is not a time)")
        if mine and mine[0] > theirs[0] + 2 * tol:
            return (f"the stall was reported {_sc.fmt(round(mine[0] - a, 3))} after progress stopped, with "
                    f"stall={s.stall:g}: report about `stall` seconds after progress stopped. Call progress() every "
                    "`poll` seconds, not every `stall`")
    if me["returned"] > s.stop_at + tol:
        return (f"the watchdog returned {_sc.fmt(round(me['returned'] - s.stop_at, 3))} after stop was set, with "
                f"poll={s.poll:g}: return soon after stop is set (wait on it: stop.wait(poll))")
    return None


# A stall whose time comes while the watchdog waits for its last poll, on a clock that wakes late:
# the wait returns because stop was set, and nothing may be appended after that.
_sc.differential(watch_progress, _reference, _scenarios(), _observe, _compare, what="watch_progress",
                 examples=60, hint="chapter 23",
                 explicit=(_Scenario(0.02, 0.1, ((0.11, False),), 0, False, 0.01),))
### END HIDDEN TESTS


# %% [markdown]
# The main thread's part of that report, innermost call last:

# %%
lines = reports[0].splitlines() if reports else []
main_entry = entry_of(lines, "Thread 'MainThread':")  # entry_of: folded earlier
print("Thread 'MainThread':", *main_entry[1:][-3:], sep="\n")

# %% [markdown]
# ## Summary
#
# - A task's name or coroutine says what it is, not where it waits. Follow `cr_await` from the
#   task's coroutine (our `await_chain`; `asyncio.capture_call_graph` from 3.14) to the
#   innermost await and the future behind it.
# - When no Python code can run for you, `faulthandler` still can: register it on SIGUSR1 for an
#   outside trigger, or arm `dump_traceback_later` as an inside timer. `py-spy dump` and, from
#   3.14, `python -m asyncio ps/pstree` read another process, with ptrace permission.
# - Unretrieved task exceptions, exceptions in threads and unraisable errors go to hooks
#   (`loop.set_exception_handler`, `threading.excepthook`, `sys.unraisablehook`): make sure they
#   reach your logs, and own your tasks so the first one stays rare.
# - A watchdog that must see a frozen loop runs in its own thread, measures time since the last
#   progress, reports once per stall, and never stops the program.
#
# **What's next.** Chapter 24 looks at one common cause of a frozen loop: CPU-bound work run
# inside a coroutine.
#
# ## In slime
#
# The coding-agent example puts a wall-clock timeout around each rollout, and when it fires it
# logs a small diagnostic. Ask two questions of that log: what would it tell you about a stuck
# rollout, and when can it be written? The first quote is the diagnostic, for the first
# question; the second is the handler that calls it, and the run after it answers the second.
# Other `asyncio.all_tasks` and logging sites are in the
# [source inventory](../book/reference/inventory.md).

# %% tags=["remove-input"]
from lab_snippets.sites import show_call_site

show_call_site("23")

# %% [markdown]
# Would an await chain, logged in that handler, tell the stuck rollouts apart?
# `asyncio.timeout` works by cancelling the rollout's own task. The cell below takes one stuck
# rollout's await chain twice: from outside, before its 0.05 s deadline, and inside its own
# `except TimeoutError`, where slime's handler writes the diagnostic.

# %%
async def stuck_rollout() -> None:
    await asyncio.Event().wait()  # never set: stuck for good


chains: dict[str, list[str]] = {}


async def timed_rollout() -> None:
    try:
        async with asyncio.timeout(0.05):
            await stuck_rollout()
    except TimeoutError:  # where the diagnostic is written
        here = asyncio.current_task()
        chains["in the except"] = [link.name for link in await_chain(here)]


rollout = asyncio.create_task(timed_rollout())
await asyncio.sleep(0.01)
chains["before the deadline"] = [link.name for link in await_chain(rollout)]
await asyncio.wait_for(rollout, timeout=2)
for when, chain in chains.items():
    print(f"{when:<20}", " → ".join(chain))

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert "stuck_rollout" in chains["before the deadline"], "from outside, the chain reaches the stuck await"
assert chains["in the except"] == ["timed_rollout"], "in the except, only the handler's own coroutine"
print("✓ the chain reached stuck_rollout before the deadline; in the except it held only the handler")

# %% [markdown]
# In the `except`, the chain holds only the handler's own coroutine. The cancellation unwound
# the awaits the rollout was stuck in, so by the time the handler runs, they are no longer on
# its stack. The other tasks are not cancelled, so their chains would still show where they
# wait. To see where the rollout itself waited, take the stacks at the deadline, before
# cancelling: a watchdog, as in this chapter's exercise.

# %% tags=["remove-input"]
show_call_site("23b")

# %% [markdown]
# A model of that handler: `asyncio.timeout(0.05)` around a rollout that makes a 0.3 s blocking
# call (standing for one that does not return), then waits for good; the `except TimeoutError`
# writes the diagnostic, as slime's handler does. Predict: how long after the guard is armed is
# the diagnostic written?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
guard_times: dict[str, float] = {}


async def rollout_with_a_blocking_call() -> None:
    time.sleep(0.3)  # a blocking call, standing for one that never returns
    guard_times["blocking call returned"] = asyncio.get_running_loop().time()
    await asyncio.Event().wait()  # then stuck for good


async def guarded_rollout() -> None:
    loop = asyncio.get_running_loop()
    guard_times["guard armed"] = loop.time()
    try:
        async with asyncio.timeout(0.05) as guard:
            guard_times["guard due"] = guard.when()  # on the loop's clock
            await rollout_with_a_blocking_call()
    except TimeoutError:
        guard_times["diagnostic written"] = loop.time()


await asyncio.wait_for(guarded_rollout(), 5)
armed = guard_times["guard armed"]
print("after arming the guard:",
      {what: f"{at - armed:.2f} s" for what, at in guard_times.items()})

# %% [markdown]
# :::{dropdown} Why
#
# The timeout is a timer on the event loop, and its `except TimeoutError` runs on the loop too;
# while the blocking call holds the loop's thread, neither can run. So the diagnostic is written
# when the call returns, about 0.3 s after arming, not at 0.05 s; a call that does not return
# leaves it unwritten. Slime's handler and its diagnostic run on the rollout's event loop in
# the same way, so a rollout stuck in a blocking call keeps the loop from reaching them: the
# log stays empty exactly when it is most needed. A watchdog thread or `faulthandler` (this
# chapter's exercise and SIGUSR1 dump) still reports then.
#
# :::

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: timeout-diagnostic-waits-for-the-blocking-call
returned = guard_times.get("blocking call returned", float("inf"))
assert guard_times["guard due"] < returned <= guard_times["diagnostic written"], (
    "the guard was due first, yet its handler ran only after the blocking call gave the "
    f"loop back: {guard_times}")
print("✓ the diagnostic waited for the blocking call: a call that never returns leaves it unwritten")

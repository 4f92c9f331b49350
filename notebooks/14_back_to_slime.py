# %% [markdown]
# # 14 · Back to slime: creation, waiting and cleanup along one whole task
# *回到 Slime：串起创建、等待与清理*
#
# **The question.** One agent task in slime opens a session, boots a sandbox under a limit,
# runs an agent process in it with a budget, grades the result, and must give everything back
# whether it succeeds, fails, hangs or is cancelled. How do chapters 01–13 fit together so
# that **every path releases every resource**?
#
# **You will**
# 1. see what a timeout on *waiting* for a child process does to the child;
# 2. run slime's agent task chain, rebuilt in miniature, on a batch with injected faults
#    (failed boots, a hung child, a crashing grader, a stuck boot, a cancellation from
#    outside) and check on a timeline and a resource ledger that nothing leaks;
# 3. take the chain apart: a time guard, a bounded boot with retries, a child process with a
#    budget, an evaluation, and cleanup in `finally`;
# 4. write the harness step so that it owns its child process on every path.
#
# **Needs** chapters 03, 05, 06, 10 and 12 (Tasks, cancellation and timeouts, Semaphore,
# `async with`, child processes with `subprocess.run`; running one from asyncio is introduced
# here) · about 65 minutes
#
# **New to the course?** [How to read an experiment](../book/reading_guide.md) explains the
# timelines, the helpers and the folded checks; the [glossary](../book/glossary.md) gives the
# words the chapters share. In the first cell, `figure_style()` only sets how the plots look.
#
# **Platform** Linux or macOS: the experiments use signals and zombie processes, which
# Windows does not have.

# %% [markdown]
# The two folded cells below hold the imports (among them `lab_snippets.agent_sim`, the
# course's stand-in agent) and two instruments: `harness_children()` lists this kernel's
# harness child processes, zombies included, and `is_running(child)` says whether a child has
# neither exited nor become a zombie.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the setup"}
import asyncio
import os
import sys
import threading
import time
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass

import matplotlib.pyplot as plt
import psutil

from lab_snippets.agent_sim import ResourceRegistry, harness_command, parse_result
from lab_snippets.timeline import Timeline, figure_style

figure_style()

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the instruments"}
# Instruments: which harness children exist, and whether a child process is still running.
def harness_children() -> list[int]:
    """Our child processes that run the harness, zombies (exited, not yet reaped) included."""
    found = []
    for child in psutil.Process().children():
        try:
            if child.status() == psutil.STATUS_ZOMBIE or "lab_snippets.agent_sim" in " ".join(child.cmdline()):
                found.append(child.pid)
        except psutil.ZombieProcess:
            found.append(child.pid)
        except psutil.NoSuchProcess:
            pass
    return found


def is_running(child: asyncio.subprocess.Process) -> bool:
    """True while the child has neither exited nor become a zombie."""
    try:
        status = psutil.Process(child.pid).status()
    except psutil.NoSuchProcess:
        return False
    return child.returncode is None and status != psutil.STATUS_ZOMBIE


# %% [markdown]
# ## Predict: after the wait times out, is the child still running?
#
# An agent task runs its agent as a child process and waits for it with a time budget.
# Chapter 12 ran children with `subprocess.run`, which blocks; asyncio has its own calls, which
# let the event loop run meanwhile:
#
# - `proc = await asyncio.create_subprocess_exec(program, *args, stdout=...)` starts a child
#   and returns a `Process` at once, without waiting for the child to end;
#   `stdout=asyncio.subprocess.PIPE` gives you its output, `DEVNULL` throws it away;
# - `await proc.wait()` waits until the child has ended; `await proc.communicate()` also reads
#   its output to the end and returns `(stdout, stderr)`, bytes or `None`;
# - `proc.returncode` is `None` until the child has ended and been reaped, then its exit code,
#   or a negative number if a signal ended it (-9 for `SIGKILL`); `proc.kill()` sends it
#   `SIGKILL`.
#
# Below, the parent waits for a child that hangs, with `asyncio.wait_for(child.wait(),
# timeout=0.1)`. `tl.mark(...)` writes down named moments on a `Timeline`, the course's
# stopwatch (chapter 01); `harness_command(...)` is the command line of the course's stand-in
# harness, a child that works, hangs or exits as asked. The folded check kills and reaps it.
#
# **Predict.** Two chapters pull in opposite directions here. In chapter 13, a timeout left
# the work it timed out running on its thread. In chapter 12, `subprocess.run(...,
# timeout=0.6)` killed and reaped its child before it raised `TimeoutExpired`. Here the wait
# times out after 0.1 s and raises `TimeoutError`. Which of the two happens to the child:
# right after the timeout, is it still running?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
tl = Timeline()
command = harness_command("predict", hang=True, max_life=3)
quiet = asyncio.subprocess.DEVNULL
child = await asyncio.create_subprocess_exec(*command, stdout=quiet)
tl.mark("child started")
try:
    await asyncio.wait_for(child.wait(), timeout=0.1)
except TimeoutError:
    tl.mark("the wait timed out")
running_after_timeout = is_running(child)
print("after the timeout, the child is still running:", running_after_timeout)


# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: a-timeout-does-not-stop-the-child
if running_after_timeout:
    tl.mark("child still running")
if child.returncode is None:
    child.kill()
await asyncio.wait_for(child.wait(), timeout=2)
tl.mark("child killed and reaped")

print(tl.names(), "| exit code after kill:", child.returncode)
assert running_after_timeout, "the timeout cancelled our wait, not the child"
assert tl.order("the wait timed out", "child still running", "child killed and reaped")
assert child.returncode < 0 and harness_children() == []
print("✓ the timeout ended our wait; the child ran on until we killed and reaped it")

# %% [markdown]
# :::{dropdown} Why
#
# Yes, it is still running. Chapter 13 showed that a timeout bounds the wait, not the work; a
# child process is no exception. `subprocess.run` kills its child because its own code does so
# when the timeout fires; `wait_for` only cancels what it waits on.
# A timeout cancels the *coroutine that waits*; the child process is another program and does
# not know about it. It stops only when someone kills it; if nobody does, the child keeps
# working until it ends by itself. Once it has ended, something must reap it (`waitpid`) to
# take it off the process table. For a child started through asyncio the event loop does that
# as soon as the child exits, whether or not anyone awaits `wait()`, which only collects the
# exit code. In slime that is why the sandbox, not the wait, is what stops the agent: killing
# the sandbox takes everything running inside it along.
#
# :::
#
# :::{dropdown} Python versions: on 3.11 and macOS, every running child costs a thread
#
# **Who reaps the child: a watcher thread before 3.12.** Reaping needs someone to call
# `waitpid` for each child. On 3.11, asyncio does it with a **thread per child process**
# (named `asyncio-waitpid-N` on 3.11.7, `waitpid-N` on earlier 3.11 releases). From 3.12, on Linux 5.3 or later (where
# `os.pidfd_open` works), asyncio watches a *pidfd* from the event loop instead, and no
# thread is started; macOS has no pidfd and keeps the thread per child, and so does Linux
# when a security policy (a seccomp profile, as in some containers) refuses the call: asyncio
# tries `os.pidfd_open` once and falls back to the thread if it fails. The folded cell below
# makes the same test, starts one child, and lists the threads that watch it with
# `threading.enumerate()`. (The child-watcher classes were deprecated in 3.12 and removed in
# 3.14.)
#
# On Windows, which has no signals to kill with, a killed child's return code is positive,
# not minus the signal.
#
# :::

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the experiment: the threads that watch one child"}
import re


def pidfd_works() -> bool:
    """asyncio's own test (3.12+): not that os.pidfd_open exists, but that it works."""
    if not hasattr(os, "pidfd_open"):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:  # an old kernel, or a security policy that blocks the call
        return False
    return True


child = await asyncio.create_subprocess_exec(*harness_command("watch", work=0.1),
                                             stdout=asyncio.subprocess.DEVNULL)
try:
    watcher_threads = [t.name for t in threading.enumerate()
                       if re.fullmatch(r"(asyncio-)?waitpid-\d+", t.name)]
finally:
    await asyncio.wait_for(child.wait(), timeout=10)
if sys.version_info >= (3, 12) and pidfd_works():
    print("3.12+ with pidfd: threads watching the child:", watcher_threads)
    assert watcher_threads == []
else:
    print("Python < 3.12, or no working os.pidfd_open (macOS, old kernel, seccomp):",
          "one waitpid thread per running child:", watcher_threads)
    assert len(watcher_threads) == 1
assert child.returncode == 0


# %% [markdown]
# ## Measure: a batch of seven agent tasks with injected faults
#
# slime's coding-agent example turns one dataset instance into one training sample. Stripped
# of the details, its `generate` does this:
#
# 1. open a session on the adapter that will record the agent's model calls;
# 2. start a **whole-task time guard** (`asyncio.timeout`) sized as the agent's budget plus the
#    evaluation's timeout plus a margin;
# 3. inside it, **boot a sandbox** through an async context manager that takes a permit of a
#    boot semaphore, retries failed boots, and kills the sandbox on exit;
# 4. in the sandbox, run the agent's **harness** (a command-line process) with its own, smaller
#    **time budget**, then collect the diff it produced;
# 5. leave the sandbox block (the sandbox is killed), then **evaluate** the diff in a fresh
#    environment with its own timeout;
# 6. turn a guard timeout or any other `Exception` into an *aborted* sample, and in `finally`
#    always **drop the session**.
#
# Every step is something earlier chapters taught. The new question is whether the pieces
# still clean up when they are combined and something goes wrong in the middle. The course
# rebuilds the chain in miniature as `agent_task`, with the work scaled down from slime's
# minutes to hundredths of a second. The folded set-up holds the helpers it calls, its time
# limits and the instruments that record a run. Then comes `agent_task` itself, without the
# one line that draws the harness step on the timeline (the fold above it shows that line).

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the set-up: the helpers agent_task calls, the time limits, the sandbox model, the instruments"}
BOOT_LIMIT = 2
BUDGET = 10.0  # the agent's time budget: a harness that finishes returns long before
SHORT_BUDGET = 1.0  # for a harness that hangs: the batch does not wait ten seconds
EVAL_TIMEOUT = 2.0  # the grader needs 0.04 s
START_TIMEOUT = 5.0  # for the harness child's "started" line
REAP_TIMEOUT = 2.0  # for a killed child to be reaped
# the margin: the start, the reap, and 3 s to wait for a boot permit and boot
GUARD_MARGIN = START_TIMEOUT + REAP_TIMEOUT + 3.0
BUDGET_EXCEEDED = -1  # what the harness step reports when the budget runs out


def guard_for(budget: float) -> float:
    """The whole-task guard: longer than everything the task waits for, so that it
    fires only for a stuck step."""
    return budget + EVAL_TIMEOUT + GUARD_MARGIN


# The instruments (a resource registry, a timeline with phase letters) and the sandbox model.
registry = ResourceRegistry()
tl = Timeline()
phase_letters: list[tuple[str, float, str]] = []
lane_of: dict[str, str] = {}


@contextmanager
def phase(task: str, letter: str, state: str = "running"):
    lane = lane_of.get(task, task)
    phase_letters.append((lane, tl.now(), letter))
    with tl.span(lane, state=state):
        yield


class MiniSandbox:
    """Stands in for a remote sandbox: it owns the processes started in it and kills them on close."""

    def __init__(self, name: str, registry: ResourceRegistry) -> None:
        self.name, self.registry = name, registry
        self.processes: list[asyncio.subprocess.Process] = []
        registry.acquire("sandbox", name)

    async def start(self, argv: list[str]) -> asyncio.subprocess.Process:
        proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE,
                                                    stderr=asyncio.subprocess.DEVNULL)
        self.processes.append(proc)
        self.registry.acquire("child", self.name)
        return proc

    def forget(self, proc: asyncio.subprocess.Process) -> None:
        """Record that a child of this sandbox has exited and been reaped."""
        assert proc.returncode is not None, "forget() a child only after reaping it"
        self.registry.release("child", self.name)

    async def close(self) -> None:
        """Kill whatever still runs in the sandbox, reap it, and give the sandbox back."""
        for proc in self.processes:
            if proc.returncode is None:
                proc.kill()
            await asyncio.wait_for(proc.communicate(), timeout=REAP_TIMEOUT)  # reap, and read the pipe to its end
            self.forget(proc)
        self.registry.release("sandbox", self.name)


# The injected faults of a boot.
async def boot_once(task: str, fault: str, attempt: int) -> None:
    if fault == "boot hangs":
        await asyncio.sleep(30)  # a stuck remote call: only the whole-task guard can end it
    await asyncio.sleep(0.05)
    if fault == "boot always fails" or (fault == "boot fails once" and attempt == 0):
        raise ConnectionError(f"{task}: boot attempt {attempt + 1} failed")


@asynccontextmanager
async def boot_sandbox(task: str, fault: str, permits: asyncio.Semaphore,
                       retries: int = 3):
    last_error: Exception | None = None
    for attempt in range(retries):
        asked = time.monotonic()
        async with permits:
            tl.add(lane_of.get(task, task), asked, time.monotonic(), state="waiting")
            try:
                with registry.held("boot permit", task), phase(task, "B"):
                    await boot_once(task, fault, attempt)
                break
            except ConnectionError as exc:
                last_error = exc
        await asyncio.sleep(0.02 * (attempt + 1))
    else:
        raise last_error
    sandbox = MiniSandbox(task, registry)
    try:
        yield sandbox
    finally:
        with phase(task, "C", state="cleanup"):
            await sandbox.close()


async def run_harness(sandbox: MiniSandbox, task: str, work: float, budget: float,
                      hang: bool = False) -> tuple[int, str | None]:
    proc = await sandbox.start(harness_command(task, work, hang=hang, max_life=3))
    # the child's first line is "started <pid>": the budget counts from here
    async with asyncio.timeout(START_TIMEOUT):
        await proc.stdout.readline()
    deadline = time.monotonic() + budget
    while time.monotonic() < deadline:
        await asyncio.sleep(0.02)
        if proc.returncode is not None:
            async with asyncio.timeout(REAP_TIMEOUT):
                out, _ = await proc.communicate()
            sandbox.forget(proc)
            result = parse_result(out.decode())
            return proc.returncode, result["diff"] if result else None
    return BUDGET_EXCEEDED, None


async def evaluate(task: str, diff: str | None, fault: str) -> float:
    with registry.held("grader", task), phase(task, "E"):
        async with asyncio.timeout(EVAL_TIMEOUT):
            await asyncio.sleep(0.04)
            if fault == "evaluation error":
                raise RuntimeError(f"{task}: the grader crashed")
            return 1.0 if diff else 0.0


def open_session(task: str) -> None:
    registry.acquire("session", task)


async def drop_session(task: str) -> None:
    """Idempotent cleanup: safe to call on every path, even twice."""
    with phase(task, "S", state="cleanup"):
        await asyncio.sleep(0.01)
        registry.release("session", task)


@dataclass
class Outcome:
    task: str
    status: str
    reward: float | None = None
    agent_exit_code: int | None = None


# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show agent_task as it runs, with the line that draws its harness step"}
async def agent_task(task: str, fault: str, permits: asyncio.Semaphore,
                     harness=run_harness, work: float = 0.02, budget: float = BUDGET,
                     guard: float | None = None) -> Outcome:
    hang = fault == "harness hangs"
    open_session(task)  # 1. the session
    try:
        # 2. the whole-task guard, around the sandbox and the evaluation
        async with asyncio.timeout(guard_for(budget) if guard is None else guard):
            async with boot_sandbox(task, fault, permits) as sandbox:  # 3. the boot
                # instrument: the next line only draws the harness step on the timeline
                with phase(task, "H"):
                    # 4. the harness, with its budget
                    exit_code, diff = await harness(sandbox, task, work, budget,
                                                    hang=hang)
            # 5. the sandbox is closed: evaluate the diff
            reward = await evaluate(task, diff, fault)
            return Outcome(task, "ok", reward, exit_code)
    except TimeoutError:  # 6. a guard timeout or any other Exception: aborted
        return Outcome(task, "aborted: wall-clock timeout")
    except Exception as exc:
        return Outcome(task, f"aborted: {type(exc).__name__}")
    finally:  # 6. on every path, drop the session
        await drop_session(task)


# %% tags=["remove-input"]
from IPython.display import Markdown, display

from lab_snippets.showcode import source_lines


def plain_lines(function, instruments: tuple[str, ...]) -> list[str]:
    """The function's real source, read at run time, without the lines holding an instrument;
    the block of an instrument `with` keeps its lines, moved one level out."""
    lines, kept, skip_indent = source_lines(function), [], None
    for line in lines:
        indent = len(line) - len(line.lstrip())
        if skip_indent is not None and line.strip() and indent <= skip_indent:
            skip_indent = None
        if any(mark in line for mark in instruments):
            if line.rstrip().endswith(":"):
                skip_indent = indent
            continue
        kept.append(line[4:] if skip_indent is not None else line)
    return kept


def show_listing(function, instruments: tuple[str, ...] = (), plain: bool = False) -> None:
    """The function's real source; with `plain`, without its instrument lines; else with them marked."""
    if plain:
        lines = plain_lines(function, instruments)
    else:
        lines = [line + "  # instrument" if any(mark in line for mark in instruments) else line
                 for line in source_lines(function)]
    display(Markdown("```python\n" + "\n".join(lines) + "\n```"))


show_listing(agent_task, instruments=("# instrument", "phase(task,"), plain=True)

# %% [markdown]
# The numbers in the comments are the six steps above. `agent_task` calls seven names from
# the set-up cell, and this is all you need to know of them:
#
# - `open_session(task)` and `drop_session(task)` take and give back the session (steps 1
#   and 6);
# - `guard_for(budget)` is the guard's length: the budget, plus the evaluation's timeout, plus
#   a margin, so that the guard fires only for a stuck step (step 2); a caller can pass its
#   own `guard` instead;
# - `async with boot_sandbox(task, fault, permits) as sandbox` boots a sandbox while holding a
#   boot permit, tries a failed boot again (three attempts in all, then it raises the last
#   attempt's error), and on exit closes the sandbox: it kills and reaps whatever still runs
#   in it (step 3);
# - `run_harness(sandbox, task, work, budget, hang=...)` runs the harness child in the sandbox
#   and returns `(exit code, diff)` once the child ends; if the budget runs out first, it
#   returns `(BUDGET_EXCEEDED, None)` instead of raising (step 4);
# - `evaluate(task, diff, fault)` grades the diff under its own timeout: reward 1.0 for a
#   diff, 0.0 for none; it raises if the fault is an evaluation error (step 5);
# - `Outcome(task, status, reward, agent_exit_code)` is what a task returns.
#
# `fault` names the fault to inject, and the helpers act it out: a boot that fails or hangs,
# a harness child that hangs, a grader that crashes.

# %% [markdown]
# Seven tasks start together under a boot limit of two, `BOOT_LIMIT`. One is clean. Each
# other task meets the fault that the dict `faults` gives it, and the dict `options` changes
# three tasks' settings.

# %%
faults = {
    "t1": "none",
    "t2": "boot fails once",
    "t3": "boot always fails",
    "t4": "harness hangs",
    "t5": "evaluation error",
    "t6": "cancelled from outside",
    "t7": "boot hangs",
}
options = {"t4": {"budget": SHORT_BUDGET}, "t6": {"work": 2.0}, "t7": {"guard": 0.5}}

# %% [markdown]
# t6's cancel comes from outside, the way a rollout that has collected enough samples cancels
# the rest. The folded instruments give the batch a fresh timeline, a fresh `registry` (the
# course's ledger: it records each acquire and release of a resource), and an event,
# `t6_child_started`, that the batch waits for before it counts the 0.1 s. `draw_batch`
# (folded) draws the timeline, each step lettered: **B**oot, **H**arness, **E**valuation,
# **C**lose the sandbox, drop the **S**ession; then what the registry held.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the instruments"}
# Fresh instruments for the batch; an event set when t6's harness child has started.
t6_child_started = asyncio.Event()


def on_registry_event(event) -> None:
    if (event.action, event.kind, event.name) == ("acquire", "child", "t6"):
        t6_child_started.set()


registry = ResourceRegistry(on_event=on_registry_event)
tl = Timeline()
phase_letters.clear()
lane_of.clear()
lane_of.update({task: f"{task} {fault}" for task, fault in faults.items()})

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the plotting code"}
def draw_batch():
    """The timeline of the batch, lettered by phase, then what the registry held over time."""
    fig = tl.plot("Seven agent tasks: one clean, six with a fault (B boot, H harness, E evaluation, C close, S session)",
                  lanes=list(lane_of.values()))
    row = {lane: i for i, lane in enumerate(lane_of.values())}
    # Each letter goes in the middle of its own phase's bar, in white, when the bar is wide enough
    # to hold it; a shorter phase (a close, a session drop) has its letter in black above its bar,
    # moved right if it would overprint the letter before it, so no letter lands on a neighbour.
    min_width = 0.025 * tl.total()
    last_above: dict[str, float] = {}
    for lane, start, letter in sorted(phase_letters, key=lambda p: (p[0], p[1])):
        bars = [s for s in tl.spans_of(lane) if s.state != "waiting"]
        bar = min(bars, key=lambda s: abs(s.start - start))
        middle = (bar.start + bar.end) / 2
        if bar.duration >= min_width:
            fig.axes[0].text(middle, row[lane], letter, va="center", ha="center", fontsize=8, color="white")
        else:
            x = max(middle, last_above.get(lane, -1.0) + min_width)
            fig.axes[0].text(x, row[lane] - 0.32, letter, va="bottom", ha="center", fontsize=7, color="black")
            last_above[lane] = x
    times, held = registry.counts_over_time(["session", "boot permit", "sandbox", "child", "grader"], t0=tl.t0)
    held_fig, held_axes = plt.subplots(len(held), 1, figsize=(8, 4.2), sharex=True, layout="constrained")
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"][:len(held)]
    for held_ax, (kind, counts), colour in zip(held_axes, held.items(), colours, strict=True):
        held_ax.step(times, counts, where="post", label=kind, color=colour)
        held_ax.set_ylim(-0.3, max(counts) + 0.6)
        held_ax.set_yticks([0, max(counts)] if max(counts) > 0 else [0])  # two ticks: zero and the peak
        _ = held_ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    held_axes[-1].set_xlabel("time since start (s)")
    held_axes[len(held) // 2].set_ylabel("held")
    _ = held_axes[0].set_title("Resources held by the batch, one row per kind")
    return held


# %% [markdown]
# The lesson in the cell below is four steps: start the seven tasks (t7 first), cancel t6,
# gather the outcomes with `return_exceptions=True`, print them. The other lines time t6's
# cancel, bound the waits, clean up and draw: you can skip them.
#
# What meets each task (`faults` and `options` above; every guard not listed is
# `guard_for(budget)`, far longer than anything its task waits for):
#
# | task | fault | setting | what happens in the chain |
# |---|---|---|---|
# | t1 | none | | nothing goes wrong |
# | t2 | boot fails once | | the first boot raises `ConnectionError`; `boot_sandbox` retries (three attempts in all) |
# | t3 | boot always fails | | all three boots raise `ConnectionError`; then `boot_sandbox` raises it |
# | t4 | harness hangs | budget 1 s | at the budget, `run_harness` returns `(BUDGET_EXCEEDED, None)`, without raising |
# | t5 | evaluation error | | `evaluate` raises `RuntimeError` |
# | t6 | cancelled from outside | work 2 s | cancelled 0.1 s into its harness: `CancelledError` |
# | t7 | boot hangs | guard 0.5 s | the boot never returns; the guard raises `TimeoutError` at 0.5 s |
#
# t7 starts first, so it holds one of the two boot permits from t = 0.
#
# **Predict**, from the listing of `agent_task` above. Which of the seven tasks end with
# status `ok`? And what does the caller of t6, the task cancelled from outside, get back?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
permits = asyncio.Semaphore(BOOT_LIMIT)


def start(task: str) -> asyncio.Task:
    coro = agent_task(task, faults[task], permits, **options.get(task, {}))
    return asyncio.create_task(coro)


tasks = {"t7": start("t7")}  # t7 is started first
tasks.update({task: start(task) for task in faults if task != "t7"})
try:
    await asyncio.wait_for(t6_child_started.wait(), timeout=guard_for(BUDGET))
    await asyncio.sleep(0.1)  # t6's harness runs for a moment
    tasks["t6"].cancel()
    everything = asyncio.gather(*tasks.values(), return_exceptions=True)
    bound = guard_for(BUDGET) + REAP_TIMEOUT
    results = await asyncio.wait_for(everything, timeout=bound)
finally:  # instrument: leaves no task behind, even if the bound is reached
    for pending in tasks.values():
        pending.cancel()
    await asyncio.gather(*tasks.values(), return_exceptions=True)
outcomes = dict(sorted(zip(tasks, results, strict=True)))
for task, outcome in outcomes.items():
    print(f"{lane_of[task]:<26}", repr(outcome))  # lane_of: the task's lane, its fault
held = draw_batch()  # the timeline, then what was held

# %% [markdown]
# :::{dropdown} Why
#
# Read each outcome against its fault. `agent_task` does one of three things with what
# reaches it:
#
# - an exception (the guard's `TimeoutError`, or any other `Exception`): it returns an aborted
#   `Outcome`, so t3, t5 and t7 are aborted;
# - a harness step that returns, even with `BUDGET_EXCEEDED`: the diff is graded (no diff,
#   reward 0.0), and the status is `ok`. Running out of budget is not a failure but a graded
#   sample with no diff, so t4 is among the `ok` ones, with t1 and t2 (its second boot
#   worked);
# - a `CancelledError`, which is not an `Exception`: neither `except` clause catches it, so
#   it propagates, and t6's caller got the `CancelledError` once the `finally` had dropped the
#   session.
#
# One catch in the first clause: `except TimeoutError` catches *any* `TimeoutError` raised
# inside the guard, so an inner timeout (the grader's `EVAL_TIMEOUT`, the child's start or
# reap timeout) would also be reported as a wall-clock timeout. slime's step 6 has the same
# shape.
#
# The first figure is the timeline (one lane per task, lettered by step). A bar's colour is
# its step's state, set once for the whole step: H is blue ("running") from start to end,
# though the task mostly awaits its child there (t4's hung child too). The second counts
# what the registry says is held, one row per kind, over the same time axis. Whatever
# happened, every task gave back everything it took, in the nested order: in the second
# figure every row returns to zero. And the boot permits never exceed two, although t7
# sat on one permit for half a second and the other tasks queued behind the remaining one;
# yet the sandbox and child rows climb above two. Step 3 below asks why. (A thin dip or spike
# in a row is one task giving a resource back at almost the same instant as another takes
# one.)
#
# Follow each lane:
#
# - **t1** boots, runs its harness, is closed, graded and its session dropped.
# - **t2**'s first boot fails (orange B); it backs off outside the permit (the white gap:
#   the back-off is not drawn) and boots again.
# - **t3** fails three boots, with a back-off (a white gap) after each, and never gets a
#   sandbox; the exception becomes an aborted outcome and the session is still dropped.
# - **t4**'s harness hangs. The harness step returns the "budget exceeded" code when the
#   budget runs out, and the child is killed when the sandbox closes (C). The task still gets
#   graded, with no diff.
# - **t5**'s grader crashes after the sandbox is gone; aborted, session dropped.
# - **t6** is cancelled while its harness runs (its H bar is grey, the colour of a
#   cancelled step): the sandbox's close kills and reaps the child, the session is dropped,
#   and the cancellation reaches the caller.
# - **t7**'s boot never returns. Its one grey bar is that boot, holding one of the two
#   permits from the start, so the others queue (green) for a single permit until t7's
#   guard fires at half a second; then the boot is cancelled, the permit comes back, no
#   sandbox was ever made, and the task is aborted.
#
# :::

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: faults-become-outcomes-nothing-leaks
status = {task: (o.status if isinstance(o, Outcome) else type(o).__name__) for task, o in outcomes.items()}
assert status == {"t1": "ok", "t2": "ok", "t3": "aborted: ConnectionError", "t4": "ok",
                  "t5": "aborted: RuntimeError", "t6": "CancelledError", "t7": "aborted: wall-clock timeout"}, status
assert outcomes["t4"].agent_exit_code == BUDGET_EXCEEDED and outcomes["t4"].reward == 0.0, outcomes["t4"]
print("✓ each fault became its outcome; the cancellation from outside stayed a CancelledError")

registry.assert_no_leak()
assert harness_children() == [], "every harness child was killed and reaped"
assert all(counts[-1] == 0 for counts in held.values()), "every curve ends at zero"
for task in faults:
    history = registry.history(task)
    assert history[-1] == "release session", f"{task}: the session is given back last: {history}"
t4_history = registry.history("t4")
assert t4_history.index("release child") < t4_history.index("release sandbox") < t4_history.index(
    "acquire grader"), f"t4: the hung child goes with the sandbox, before grading: {t4_history}"
t6_history = registry.history("t6")
assert t6_history[-3:] == ["release child", "release sandbox", "release session"], t6_history
assert "acquire sandbox" not in registry.history("t7"), "t7 never got a sandbox"
assert "release boot permit" in registry.history("t7"), "the guard gave t7's permit back"
print("✓ every task gave back everything it took, in nested order, on every path")

print("most boot permits held at once:", registry.peak("boot permit"), "of", BOOT_LIMIT)
assert registry.peak("boot permit") <= BOOT_LIMIT, "the boot semaphore bounds concurrent boots"
print("✓ no more than two boots at once: the boot semaphore's limit held")

# %% [markdown]
# ## Taking the chain apart
#
# Nested, the chain looks like this. Each level gives back what it took before the one around
# it does:
#
# - `agent_task`: `open_session` first, `drop_session` last, in `finally`;
#   - the guard, `asyncio.timeout(guard_for(budget))`, around:
#     - `boot_sandbox`: a boot permit, `boot_once` (retried), a `MiniSandbox`, and its
#       `close()` at the end;
#       - `run_harness`: the harness child in the sandbox, until it ends or the budget is
#         spent;
#     - `evaluate`: grade the diff, under `EVAL_TIMEOUT`.
#
# The two sections below look inside step 3, the boot, and step 4, the harness.

# %% [markdown]
# ## Step 3, the boot: where the permit is held
#
# Booting, `boot_sandbox`, is chapter 10's context manager: it takes a
# permit of the boot {term}`semaphore` with `async with permits`, retries a failed boot after
# a short back-off, and closes the sandbox in the `finally` around `yield`.
# `boot_once(task, fault, attempt)` is one boot attempt of 0.05 s that hangs or fails as the
# fault says, and the sandbox it yields is a `MiniSandbox`, the course's stand-in for slime's
# remote sandbox. Here is its code, read from the function when the page runs, without the
# lines that only draw it on the timeline and record it in the ledger (the fold under it has
# the function as it runs, those lines marked). The `else` of the `for` runs only when no
# attempt reached `break`, that is when every boot failed.

# %% tags=["remove-input"]
BOOT_INSTRUMENTS = ("asked = ", "tl.add(", "registry.held(", "phase(task, \"C\"")
show_listing(boot_sandbox, instruments=BOOT_INSTRUMENTS, plain=True)

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show boot_sandbox as it runs, with its instrument lines"}
# the marks that pick out the lines that only draw or record (the listing above hides them)
BOOT_INSTRUMENTS = ("asked = ", "tl.add(", "registry.held(", "phase(task, \"C\"")
show_listing(boot_sandbox, instruments=BOOT_INSTRUMENTS)  # marks the instrument lines

# %% [markdown]
# ## Predict: when is the boot permit given back?
#
# The cell below runs one clean task through `agent_task` and prints its history from
# `registry`, the course's ledger: each acquire and release of five kinds of resource (the
# session, a boot permit, the sandbox, a child and the evaluation's `"grader"`), in the order
# they happened. **Predict**, from the listing of `boot_sandbox` above: where in that history
# does `release boot permit` fall, right after the boot and before `acquire sandbox`, or next
# to `release sandbox`, when the sandbox closes?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
clean = await asyncio.wait_for(
    agent_task("clean", "none", asyncio.Semaphore(BOOT_LIMIT)),  # BOOT_LIMIT = 2 boots
    timeout=guard_for(BUDGET) + REAP_TIMEOUT)  # a bound: the task's guard, plus a reap
print(clean)
print(registry.history("clean"))

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert clean.status == "ok" and clean.reward == 1.0 and clean.agent_exit_code == 0
assert registry.history("clean") == [
    "acquire session", "acquire boot permit", "release boot permit", "acquire sandbox", "acquire child",
    "release child", "release sandbox", "acquire grader", "release grader", "release session"]
registry.assert_no_leak()
print("✓ one clean task: reward 1.0, every resource taken and given back in nested order")

# %% [markdown]
# :::{dropdown} Why
#
# The permit is given back right after the boot, before the sandbox is even made:
# `boot_sandbox` holds `async with permits` only around the boot attempt, and the
# back-off after a failed attempt is taken outside it too. So the permits bound how many
# tasks *boot* at once, not how many run their harness: any number can be in a sandbox
# together, which is why the batch's sandbox and child rows climbed above two. The rest
# of the list is nested. The session is the first thing taken and the last given back,
# the child is gone before the sandbox closes, and the grader runs after the sandbox is
# gone.
#
# :::

# %% [markdown]
# ## Step 4, the harness: a child with a budget
#
# Here is `run_harness`. It works the way slime's does: start the agent process
# in the sandbox, then **poll** until it has finished or the budget is spent, sleeping between
# polls so the event loop stays free. Running out of budget is not an exception: it returns a
# sentinel exit code, `BUDGET_EXCEEDED`, and no diff, and the child is left for the sandbox's
# close to kill. `parse_result` reads the harness's JSON result line, or None if it printed
# none. `MiniSandbox` stands in for slime's remote sandbox: `sandbox.start(argv)` starts a
# child in it with its output on a pipe, `sandbox.forget(proc)` records in the ledger that a
# child has exited and been reaped, and `sandbox.close()` kills and reaps whatever still runs
# there, then gives the sandbox back.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show how this listing is made"}
show_listing(run_harness)


# %% [markdown]
# `START_TIMEOUT` and `REAP_TIMEOUT` bound the small waits of this stand-in code itself: the
# child's "started" line and the reap. With 3 s for a boot permit and the boot, they make up
# the guard's margin, `GUARD_MARGIN`: as in slime, the guard is the budget plus the evaluation
# timeout plus a margin, so that it fires only for a stuck step.
#
# :::{dropdown} Why the course does it this way
#
# Which timer fires must be decided by the design, not by how busy the machine is. So the
# margin also covers what the budget does not count (a boot permit, starting a Python
# process, reaping a killed child), each with its own bound in the set-up fold; a
# harness that finishes gets a roomy budget (the step returns as soon as the child is done);
# and the budget starts at the child's "started" line, so a slow start on a busy machine does
# not eat into it.
#
# :::
#
# Every name of the chain is now on the page. What each stands for in slime's example:
#
# | here | in slime's example |
# |---|---|
# | `open_session`, `drop_session` | the adapter's `open_session` and `drop_session` |
# | `guard_for(budget)`, the guard | `CONFIG.rollout_guard_sec`: the agent budget plus the eval timeout plus 180 s |
# | `permits`, a `Semaphore(BOOT_LIMIT)` of 2 | `_BOOT_SEM`, 16 permits unless `SWE_BOOT_CONCURRENCY` says otherwise |
# | `boot_sandbox`, `MiniSandbox` | `boot_agent_sandbox`, a remote `E2BSandbox` |
# | `harness=run_harness`, `BUDGET` | `HARNESS_CLS().run(...)` with `time_budget_sec` |
# | `BUDGET_EXCEEDED` | the exit code -1 that the harness returns when its budget runs out |
# | `evaluate`, `EVAL_TIMEOUT` | `swe.run_evaluation(...)` with `timeout_sec` |
# | `Outcome(task, "aborted: …")` | a sample marked aborted |
# | `registry` | nothing: the course's ledger of every acquire and release |
# | `phase(task, "H")` | nothing: draws a lettered step on the timeline |

# %% [markdown]
# ## What does a five-second poll cost?
#
# slime's harness step polls too: its helper `_await_done_marker` (quoted under *In slime*)
# sleeps 5 s, then asks the sandbox whether the agent's exit-code marker exists, until the
# deadline; meanwhile the sandbox stays up. A model: the same loop, its 5 s scaled to 0.1 s
# and a file for the marker, watches eight agents that finish at different moments; beside
# it, a wait woken by the marker being written (as `proc.wait()` is by a child's end).
# Predict: on average, how long after its agent has finished does the loop return, as a share
# of the interval?

# %%
import tempfile

POLL = 0.1  # slime's 5 s, scaled down 50 times


async def await_done_marker(marker: str, budget: float) -> int:
    deadline = time.monotonic() + budget
    while time.monotonic() < deadline:
        await asyncio.sleep(POLL)
        if os.path.exists(marker):
            with open(marker) as done:
                return int(done.read())
    return BUDGET_EXCEEDED


# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the agents and the two watchers"}
# Eight agents: each writes its marker after its own time, and sets an event as it does.
FINISH = [0.03, 0.17, 0.24, 0.31, 0.49, 0.55, 0.62, 0.86]
lag = {"poll": [], "woken": []}


async def agent(marker: str, seconds: float, written: asyncio.Event) -> float:
    await asyncio.sleep(seconds)
    with open(marker, "w") as done:
        done.write("0")
    written.set()
    return time.monotonic()


async def watch(marker: str, seconds: float) -> None:
    written = asyncio.Event()
    finishing = asyncio.create_task(agent(marker, seconds, written))
    polled = asyncio.create_task(await_done_marker(marker, budget=5))
    await asyncio.wait_for(written.wait(), timeout=5)
    woken_at = time.monotonic()
    exit_code = await asyncio.wait_for(polled, timeout=6)
    finished_at = await finishing
    lag["poll"].append(time.monotonic() - finished_at)
    lag["woken"].append(woken_at - finished_at)
    assert exit_code == 0


with tempfile.TemporaryDirectory() as folder:
    async with asyncio.timeout(10):
        await asyncio.gather(*(watch(os.path.join(folder, f"agent{k}.done"), s)
                               for k, s in enumerate(FINISH)))

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
# FINISH (folded above): when each agent finishes; lag: how late each watcher answered
print("agent finished at   lag of the 0.1 s poll   lag of a wait woken by the marker")
for finished, polled, woken in zip(FINISH, lag["poll"], lag["woken"], strict=True):
    print(f"{finished:17.2f} s {polled:19.3f} s {woken:22.4f} s")
mean_poll, mean_woken = (sum(lag[k]) / len(FINISH) for k in ("poll", "woken"))
print(f"mean: the poll {mean_poll:.3f} s ({mean_poll / POLL:.0%} of the interval), "
      f"the woken wait {mean_woken:.4f} s")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: a-poll-answers-half-an-interval-late
# floor: a look never comes before its planned moment (a sleep never ends early), and the eight
# finishing times are spread over the interval, so the lag is a share of it on any machine
assert mean_poll > POLL / 4, (
    f"a loop that sleeps {POLL} s between looks finds a finished agent a good share of an "
    f"interval late: mean lag {mean_poll:.4f} s")
assert mean_woken * 5 < mean_poll, (
    f"a loop that looks every {POLL} s finds a finished agent late, a wait woken by the marker at "
    f"once: the woken wait's mean lag {mean_woken:.4f} s against the poll's {mean_poll:.3f} s")
print(f"✓ the poll answered {mean_poll / POLL:.0%} of an interval late on average; "
      f"the woken wait ≈0 s ({mean_woken * 1000:.2f} ms measured)")

# %% [markdown]
# :::{dropdown} Why
#
# An agent finishes at any moment between two looks, so on average the loop finds it half
# an interval late. The last printed line shows a little over half, because each look also
# starts a little late: each sleep begins after the previous check, and a sleep ends a
# little after its time, more so on a busy machine. In slime the interval is 5 s: a finished
# agent keeps its sandbox up about 2.5 s longer on average, up to 5 s. Against
# an agent budget of minutes that is small, and slime pays it on purpose: the docstring of
# `_await_done_marker` says the short polls keep the sandbox alive against idle garbage
# collection. A step that owns its child can wait on the child itself, as Exercise 14.1
# asks, and is woken at its end.
#
# :::

# %% [markdown]
# ## Why the harness step reads the pipe
#
# Once the child has ended, the step reads its output with `communicate()`, and so does
# `MiniSandbox.close`. Reading matters: a pipe holds only so much, roughly 450 KiB in all
# on Linux, between the OS pipe and asyncio's own buffer. Once both are full, a child
# that writes more is blocked in its write until someone reads. `wait()` reads nothing, so a
# parent that only waits for a chatty child's end can wait for ever; `communicate()` reads
# while it waits. The fold below shows it with a child that writes 1 MB.
#
# :::{dropdown} Where the 450 KiB comes from
#
# The OS pipe holds 64 KiB on Linux. asyncio reads ahead into its own buffer: it stops
# reading once the buffer holds more than 128 KiB, and one read takes up to 256 KiB, so the
# buffer can hold up to 384 KiB. 64 + 384 = 448 KiB.
#
# :::

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show a run: a parent that only waits for a child that writes 1 MB"}
chatty_command = [sys.executable, "-c", "import sys; sys.stdout.buffer.write(b'x' * 10**6)"]
pipe = asyncio.subprocess.PIPE
chatty = await asyncio.create_subprocess_exec(*chatty_command, stdout=pipe)
try:
    try:
        await asyncio.wait_for(chatty.wait(), timeout=1)
        print("wait() alone: the child ended")
    except TimeoutError:
        print("wait() alone: after 1 s the child still runs, blocked in its write")
    output, _ = await asyncio.wait_for(chatty.communicate(), timeout=5)
    print(f"communicate(): read {len(output):,} bytes, and the child ended"
          f" with exit code {chatty.returncode}")
finally:  # whatever happened, no child is left behind
    if chatty.returncode is None:
        chatty.kill()
        await asyncio.wait_for(chatty.wait(), timeout=2)

# %% [markdown]
# The step bounds its waits with `asyncio.timeout`, not `wait_for`. The reason matters only
# on Python 3.11, and the fold below gives it.
#
# :::{dropdown} Why `asyncio.timeout` and not `wait_for`
#
# On Python 3.11, `wait_for` could swallow a cancellation that arrived just as the result it
# waited for came in; the batch above cancelled t6's harness step from outside, and that
# cancellation could have been lost. From 3.12 on, `wait_for` is built on `asyncio.timeout`
# and the two behave alike.
#
# :::

# %% [markdown]
# ## Exercise 14.1 · A harness step that owns its child
#
# Implement `run_harness_owned` with the same signature and results as `run_harness`:
#
# 1. start the harness in the sandbox: `proc = await sandbox.start(harness_command(task, work, hang=hang, max_life=3))`;
# 2. wait for its end with `communicate()`, bounded by `asyncio.timeout(budget)` from
#    when `sandbox.start` returns (no polling; no "started" line to wait for:
#    `communicate()` reads it with the rest);
# 3. if it finished, return `(proc.returncode, diff)`, with the diff from `parse_result`
#    (or `None`);
# 4. if the budget ran out, **kill the child and reap it** (read its output to the end),
#    then return `(BUDGET_EXCEEDED, None)`;
# 5. if the step is cancelled, kill and reap the child alike and let the cancellation
#    propagate;
# 6. on every path, call `sandbox.forget(proc)` once the child has been reaped.
#
# :::{dropdown} What the grader checks
#
# The hidden test plugs your step into `agent_task`, and checks that the child is gone
# *before* the step returns or raises, that the budget is honoured, and that cancellation
# propagates.
#
# Graded, on many generated runs (one or two steps at once, each in a sandbox of its own; a
# child that finishes with exit code 0 or 2, with or without a result line, perhaps after
# writing 200 KB; a child that hangs, quiet or writing without end, that honours SIGTERM or
# ignores it; a step cancelled by its caller while its child runs):
#
# - **one child** started by each step;
# - **result**: `(returncode, diff)` once the child finishes, the diff `None` when it printed
#   no result line, as soon as it finishes (a wait woken by the child's end, not by a timer);
#   `(BUDGET_EXCEEDED, None)` when the budget runs out, not before and not later;
# - **cancellation**: propagated to the caller once the child is cleaned up;
# - **what is left**: the child killed (SIGKILL, which no child can ignore), reaped and its
#   output read to the end before the step returns or the cancellation leaves it; `forget`
#   called once, after reaping.
#
# Bound the wait with `asyncio.timeout`, not `wait_for`. The fold *Why `asyncio.timeout` and
# not `wait_for`*, in the section *Why the harness step reads the pipe*, says why.
#
# :::
#
# :::{dropdown} Hint: the three pieces, and where you saw them
#
# - **The wait**: `await proc.communicate()` reads the child's output to the end and returns
#   when the child has ended; inside `async with asyncio.timeout(budget):` a budget that runs
#   out raises `TimeoutError` there.
# - **Kill and reap**: `proc.kill()`, then `communicate()` again, bounded by
#   `async with asyncio.timeout(REAP_TIMEOUT):` as `run_harness` bounds its own.
# - **Let the cancellation through**: `except asyncio.CancelledError:`, the same clean-up, then a
#   bare `raise` (chapter 05), so the caller still sees the cancellation.
#
# :::
#
# The visible test below shows one run, with a new `ResourceRegistry`.

# %% tags=["solution", "hide-input"] mystnb={"code_prompt_show": "Show the solution"}
async def run_harness_owned(sandbox: MiniSandbox, task: str, work: float, budget: float,
                            hang: bool = False) -> tuple[int, str | None]:
    """Run the harness child with a budget; kill and reap it on timeout or cancellation."""
    ### BEGIN SOLUTION
    proc = await sandbox.start(harness_command(task, work, hang=hang, max_life=3))
    try:
        async with asyncio.timeout(budget):  # not wait_for: see the harness step above
            out, _ = await proc.communicate()
    except TimeoutError:
        proc.kill()
        async with asyncio.timeout(REAP_TIMEOUT):  # the reap, bounded as in run_harness
            await proc.communicate()
        sandbox.forget(proc)
        return BUDGET_EXCEEDED, None
    except asyncio.CancelledError:
        proc.kill()
        async with asyncio.timeout(REAP_TIMEOUT):  # the reap, bounded as in run_harness
            await proc.communicate()
        sandbox.forget(proc)
        raise
    sandbox.forget(proc)
    result = parse_result(out.decode())
    return proc.returncode, result["diff"] if result else None
    ### END SOLUTION


# %% tags=["tests"]
registry = ResourceRegistry()
visible = await asyncio.wait_for(
    agent_task("visible", "none", asyncio.Semaphore(1), harness=run_harness_owned),
    timeout=guard_for(BUDGET) + REAP_TIMEOUT)
print(visible)
assert (visible.status, visible.agent_exit_code, visible.reward) == ("ok", 0, 1.0), (
    "a harness that finishes in time gives status 'ok', exit code 0 and reward 1.0; "
    f"got {visible!r}")
registry.assert_no_leak()
visible_children = harness_children()
assert visible_children == [], (
    "the harness child must be reaped before the step returns; "
    f"children still there: {visible_children}")

# %% tags=["tests", "hidden-tests", "remove-cell"]
### BEGIN HIDDEN TESTS
from lab_snippets import grading as _grading


class _ChattySandbox(MiniSandbox):
    """Runs, whatever the step asks for, a hung child that writes without end to a 1 MB pipe."""

    async def start(self, argv: list[str]) -> asyncio.subprocess.Process:
        return await super().start(_grading.floods(10**9, 0, pipe_size=1 << 20))


_FORGOT = ("the step must forget() its child (sandbox.forget) once it is reaped, before it returns or "
           "re-raises: the sandbox's close() afterwards is not the step's cleanup (chapter 14)")


async def _hidden_check_run_harness_owned():
    global registry
    _alive_at_forget: list[list[int]] = []
    def _on_event(event):
        if event.kind == "child" and event.action == "release":
            _alive_at_forget.append(harness_children())
    _unreaped = ("the hung child must be killed and reaped before the step returns: after kill(), "
                 "wait for it and read its output to the end (communicate) before returning "
                 "(chapters 12 and 14)")
    # 1. a hung child: the budget is honoured, the child is gone before the step returns
    registry = ResourceRegistry(on_event=_on_event)
    _box = MiniSandbox("_hang", registry)
    try:
        async with asyncio.timeout(5):
            _got = await run_harness_owned(_box, "_hang", 0.05, 0.25, hang=True)
        # checked at once, before any other loop pass could reap the child for the step
        _exit_codes = [_proc.returncode for _proc in _box.processes]
        _left = harness_children()
        _forgot = "release child" not in registry.history("_hang")
    finally:
        await _box.close()
    assert len(_exit_codes) == 1, f"the step must start exactly one child, it started {len(_exit_codes)}"
    assert _exit_codes[0] is not None and _left == [], _unreaped
    assert _exit_codes[0] < 0, (
        f"the step must kill the hung child when the budget runs out, not wait for it to end by "
        f"itself (exit code {_exit_codes[0]}): bound the wait by the budget (chapter 14)")
    assert _got == (BUDGET_EXCEEDED, None), (
        f"a step whose budget ran out must return (BUDGET_EXCEEDED, None), got {_got!r}")
    assert not _forgot, _FORGOT
    assert _alive_at_forget and _alive_at_forget[0] == [], "forget() only after reaping"
    assert registry.history("_hang")[:3] == ["acquire sandbox", "acquire child", "release child"]
    # 1b. a hung child that keeps writing, on a busy loop: unless the step reads the output to the
    # end after kill(), the pipe never reaches its end and the child is never reaped
    registry = ResourceRegistry()
    _box = _ChattySandbox("_chatty", registry)
    try:
        async with _grading.busy_loop(0.005):
            _seen = await _grading.observe(run_harness_owned(_box, "_chatty", 0.05, 0.3, hang=True), timeout=5)
        _exit_codes = [_proc.returncode for _proc in _box.processes]
        # probed, not assumed: from CPython gh-119710 (3.13.15, 3.14.8) wait() returns at the exit
        # with the pipe still full, so a step that only waits finishes; its output is left unread
        _unread = [_proc.pid for _proc in _box.processes if not _proc.stdout.at_eof()]
    finally:
        await _box.close()
    _what = ("a hung child that keeps writing was not reaped: after kill(), read its output to the end "
             "(communicate), or the pipe is never drained and wait() never returns (chapters 12 and 14)")
    _grading.check_finished(_seen, "the step", within=5, hint=_what)
    assert _seen.error is None, f"{_what}; the step raised {type(_seen.error).__name__}: {_seen.error}"
    assert _seen.value == (BUDGET_EXCEEDED, None) and _exit_codes and _exit_codes[0] is not None, (
        f"{_what}; the step returned {_seen.value!r}")
    assert not _unread, (
        "a hung child that keeps writing was killed but its output was not read to the end before the "
        "step returned: after kill(), read it (communicate); where wait() also waits for the pipes "
        "(3.11 to 3.13.0) a step that only waits never returns (chapters 12 and 14)")
    # 1c. a child that works 0.6 s: the wait is woken by the child's end, not by a timer
    registry = ResourceRegistry()
    _box = MiniSandbox("_work", registry)
    try:
        _seen = await _grading.observe(run_harness_owned(_box, "_work", 0.6, BUDGET), timeout=8,
                                       count_wakeups=True)
        _forgot = "release child" not in registry.history("_work")
    finally:
        await _box.close()
    _grading.check_finished(_seen, "the step", within=8)
    assert isinstance(_seen.value, tuple) and _seen.value[:1] == (0,), (
        f"a harness that finishes gives exit code 0, got {_seen.value!r} ({_seen.error!r})")
    assert not _forgot, _FORGOT
    _grading.check_not_polling(
        _seen, 10, "the step",
        hint="wait for the child itself (communicate() or wait() under asyncio.timeout) instead of sleeping and "
             "looking at returncode (chapter 14)")
    # 2. cancelled while the child runs: killed, reaped, forgotten, and the cancellation propagates
    _alive_at_forget.clear()
    _child_started = asyncio.Event()
    def _on_event_and_start(event):
        _on_event(event)
        if (event.action, event.kind) == ("acquire", "child"):
            _child_started.set()
    registry = ResourceRegistry(on_event=_on_event_and_start)
    _box = MiniSandbox("_cancel", registry)
    _task = asyncio.create_task(run_harness_owned(_box, "_cancel", 0.05, BUDGET, hang=True))
    try:
        async with asyncio.timeout(5):
            await _child_started.wait()
        await asyncio.sleep(0.05)  # let the step reach its wait
        _task.cancel()
        await asyncio.wait([_task], timeout=5)
        _left = harness_children()
        _forgot = "release child" not in registry.history("_cancel")
    finally:
        _task.cancel()
        await asyncio.gather(_task, return_exceptions=True)
        await _box.close()
    assert _task.cancelled(), (
        "the cancellation must propagate: after cleaning up, re-raise CancelledError instead of "
        "returning a result (chapter 05)")
    assert _left == [] and _alive_at_forget == [[]], (
        "the child must be killed and reaped before the cancellation left the step: catch "
        "CancelledError (or use finally), kill, reap, forget, then re-raise (chapters 05 and 14)")
    assert not _forgot, _FORGOT
    # 3. inside the chain: a clean task and a hung one, nothing left behind
    registry = ResourceRegistry()
    _permits = asyncio.Semaphore(2)
    async with asyncio.timeout(guard_for(BUDGET) + REAP_TIMEOUT):
        _results = await asyncio.gather(
            agent_task("_ok", "none", _permits, harness=run_harness_owned),
            agent_task("_hung", "harness hangs", _permits, harness=run_harness_owned, budget=0.2),
        )
    assert [r.status for r in _results] == ["ok", "ok"], [r.status for r in _results]
    assert [r.agent_exit_code for r in _results] == [0, BUDGET_EXCEEDED]
    registry.assert_no_leak()
    _hung = registry.history("_hung")
    assert _hung.index("release child") < _hung.index("release sandbox"), (
        "the step must reap and forget its child itself, before the sandbox closes (chapter 14)")
# A child killed but not reaped by the step can be reaped by the subprocess machinery before
# asyncio's watcher gets to it; from 3.12 the watcher then logs a warning. The verdict and its
# message come from the assertions, so asyncio's log is kept out of this cell's output.
import logging as _logging

_asyncio_log = _logging.getLogger("asyncio")
_asyncio_log_level = _asyncio_log.level
_asyncio_log.setLevel(_logging.CRITICAL)
try:
    async with asyncio.timeout(guard_for(BUDGET) + 20):
        await _hidden_check_run_harness_owned()
finally:
    for _pid in harness_children():
        psutil.Process(_pid).kill()
    await asyncio.sleep(0.1)  # lets the watcher finish with any child killed above
    _asyncio_log.setLevel(_asyncio_log_level)

# Generated scenarios (issue 37): one or two steps at once, each in a sandbox of its own whose
# child is a small shell script with drawn behaviour: it finishes with its own exit code, with or
# without a result line, perhaps after writing 200 KB; or it hangs, honouring SIGTERM or ignoring
# it, quiet or writing; and the step may be cancelled while it runs. run_harness_owned and the
# reference run side by side on real processes (the chapter's point), each on an event loop of its
# own, compared on the contract's facts (lab_snippets.scenarios explains the pattern).
import dataclasses as _dc
import json as _json
import tempfile as _tempfile

from hypothesis import strategies as _st

from lab_snippets import scenarios as _sc
from lab_snippets import scenarios_threads as _sth

_reference = _sc.reference(globals(), "run_harness_owned")


@_dc.dataclass(frozen=True)
class _Step:
    child: _sth.StandIn
    cancel_at: float | None = None  # the step's caller cancels it then (seconds after the call)

    @property
    def budget(self) -> float:  # roomy for a child that finishes, short for one that hangs
        return 2.0 if self.child.seconds is not None else 0.3

    def describe(self) -> str:
        cancel = f", cancelled by its caller after {self.cancel_at:g} s" if self.cancel_at is not None else ""
        return f"a step with budget={self.budget:g} whose child is {self.child.describe()}{cancel}"


@_dc.dataclass(frozen=True)
class _Scenario:
    steps: tuple

    def describe(self) -> str:
        who = f"{len(self.steps)} steps at once, each in its own sandbox: " if len(self.steps) > 1 else ""
        return who + "; ".join(f"step {k} is {st.describe()}" for k, st in enumerate(self.steps))


# More output than asyncio can take in while nobody reads: its StreamReader pauses the pipe past
# 2 x 64 KiB, one read adds up to 256 KiB and the pipe holds 64 KiB (448 KiB in all), so a step
# that waits before it reads is stuck whatever the chunk sizes (200 kB was not: 3.14.8 let one pass).
_CHATTER = 2_000_000
_result = _st.sampled_from([_json.dumps({"task": "_t", "diff": "fix"}), ""])
_finishes = _st.builds(_sth.StandIn, seconds=_st.just(0.05), code=_st.sampled_from([0, 2]), says=_st.just("started"),
                       chatter=_st.sampled_from([0, _CHATTER]), result=_result)
_hangs = _st.builds(_sth.StandIn, on_term=_st.sampled_from(["honour", "ignore"]), says=_st.just("started"),
                    chatter=_st.sampled_from([0, _CHATTER]))
_step = _st.one_of(_st.builds(_Step, _finishes),
                   _st.builds(_Step, _hangs, _st.sampled_from([None, 0.15])))
_scenarios = _st.builds(_Scenario, _st.lists(_step, min_size=1, max_size=2).map(tuple))


class _StandInSandbox(MiniSandbox):
    """Runs the scenario's stand-in child, whatever the step asks for."""

    def __init__(self, name: str, registry: ResourceRegistry, child: _sth.StandIn, log: str) -> None:
        super().__init__(name, registry)
        self.child, self.log = child, log

    async def start(self, argv: list[str]) -> asyncio.subprocess.Process:
        return await super().start(self.child.argv(self.log))


async def _one_step(fn, st: _Step, name: str, log: str) -> dict:
    ledger = ResourceRegistry()
    box = _StandInSandbox(name, ledger, st.child, log)
    seen: dict = {"kind": "still running after 6 s", "value": None, "started": 0, "unreaped": 0, "forgot": 0}

    async def call() -> None:
        try:
            seen.update(kind="returned", value=await fn(box, name, 0.05, st.budget, hang=st.child.seconds is None))
        except asyncio.CancelledError:
            seen["kind"] = "cancelled"
            raise
        except Exception as exc:  # noqa: BLE001 - what came out is the observation
            seen["kind"] = f"raised {type(exc).__name__}"
        finally:  # the moment the step ends, before anything else could reap its child
            seen["started"] = len(box.processes)
            seen["unreaped"] = sum(p.returncode is None for p in box.processes)
            seen["forgot"] = ledger.history(name).count("release child")

    started = time.monotonic()
    task = asyncio.create_task(call())
    if st.cancel_at is not None:
        asyncio.get_running_loop().call_later(st.cancel_at, task.cancel)
    await asyncio.wait([task], timeout=6)
    seen["seconds"] = time.monotonic() - started
    task.cancel()
    await asyncio.wait([task], timeout=2)
    try:
        async with asyncio.timeout(REAP_TIMEOUT + 1):
            await box.close()
    except Exception:  # noqa: BLE001, S110 - a wrong step may leave the sandbox unable to close; killed below
        pass
    return seen


def _observe(fn, s: _Scenario) -> list:
    with _tempfile.TemporaryDirectory() as folder:
        logs = [os.path.join(folder, f"step{k}.log") for k in range(len(s.steps))]

        async def main() -> list:
            return await asyncio.gather(*(_one_step(fn, st, f"_step{k}", log)
                                          for k, (st, log) in enumerate(zip(s.steps, logs, strict=True))))
        try:
            return asyncio.run(main())
        finally:
            for log in logs:
                _sth.kill_all(_sth.pids_in_log(_sth.read_log(log)))


def _compare_one(me: dict, it: dict, st: _Step) -> str | None:
    if it.get("started") == 0:  # a loaded machine: the cancel came before the child was started
        return None
    if (me["kind"], me["value"]) != (it["kind"], it["value"]):
        got = me["value"] if me["kind"] == "returned" else me["kind"]
        want = it["value"] if it["kind"] == "returned" else it["kind"]
        return (f"the result: got {got!r}, expected {want!r}: (the child's exit code, the diff of its result "
                "line or None) once it finishes, (BUDGET_EXCEEDED, None) when the budget runs out, and the "
                "cancellation propagated; read the output as it comes (communicate), kill() the child (SIGKILL: "
                "a child may ignore SIGTERM)")
    if me["value"] == (BUDGET_EXCEEDED, None) and me["seconds"] < st.budget * 0.9:
        return (f"the budget honoured, not before: (BUDGET_EXCEEDED, None) after {me['seconds']:.2f} s of a budget "
                f"of {st.budget:g} s")
    if me["started"] > 1:
        return f"one child started: the step started {me['started']}"
    if me["unreaped"]:
        return ("the child killed and reaped before the step returns or the cancellation leaves it: it was still "
                "running, or not reaped; kill(), then communicate() to the end")
    if me["forgot"] != it["forgot"]:
        return f"forget once the child is reaped: the step called forget {me['forgot']} time(s), expected {it['forgot']}"
    if me["seconds"] > it["seconds"] + 0.3:
        return (f"a wait woken by the child's end or the budget: the step took {me['seconds']:.2f} s, where the "
                f"reference, run beside it, took {it['seconds']:.2f} s")
    return None


_compare = _sth.per_item(_compare_one, lambda s: s.steps, "step", "run_harness_owned")


_asyncio_log.setLevel(_logging.CRITICAL)  # as above: the verdict comes from the comparison
try:
    _sc.differential(run_harness_owned, _reference, _scenarios, _sth.Beside(_observe, _reference), _compare,
                     what="run_harness_owned", examples=2, hint="chapter 14",
                     explicit=(_Scenario((_Step(_sth.StandIn("ignore", says="started"), 0.15),
                                          _Step(_sth.StandIn(seconds=0.05, code=2, says="started",
                                                             chatter=_CHATTER)))),))
finally:
    _asyncio_log.setLevel(_asyncio_log_level)
### END HIDDEN TESTS

# %% [markdown]
# ## Summary
#
# - A timeout or a cancellation stops the *waiting* coroutine, never a child process: kill it
#   and reap it, or let something that owns it (the sandbox) do so.
# - Nest resources so each is released by the block that acquired it: the session outside
#   everything, the guard around the sandbox and the evaluation, the permit only around the
#   boot, the child inside the sandbox.
# - Convert expected failures (a timeout, an exception) into results at one place, and let
#   cancellation through; put idempotent cleanup in `finally`.
# - A resource ledger turns "nothing leaks" from a hope into an assertion on every path.
#
# **What's next.** [Part IV](../book/parts/processes.md) opens with chapter 15, which returns
# to coordination inside one event loop: `asyncio.Event` and `asyncio.Lock`.
#
# ## In slime
#
# Here is the real chain, in slime's coding-agent example (`examples/coding_agent_rl/`). After
# checking the instance (or returning an aborted sample at once) it opens the adapter session,
# step 1. Below, step 2 is quoted first: the guard, which encloses the rest. Steps 3 to 5
# (the boot; the harness, with the budget helper `_await_done_marker` that our
# `run_harness` copies; the evaluation) follow it. Last comes step 6, the
# end, where failures become aborted samples and the session is dropped. Every use of these mechanisms in slime is listed in the
# [source inventory](../book/reference/inventory.md); *What does a five-second poll cost?*
# measured that helper's poll. To pick what to read:
#
# | step | in slime | here | taught in |
# |---|---|---|---|
# | 2 | `async with asyncio.timeout(CONFIG.rollout_guard_sec)` | the guard | 05 |
# | 3 | `async with boot_agent_sandbox(...) as sb` | `boot_sandbox` | 06, 10 |
# | 4 | `HARNESS_CLS().run(...)`, its budget in `_await_done_marker` | `run_harness` | 12, 14 |
# | 5 | `swe.run_evaluation(...)`, after the sandbox block | `evaluate` | 05 |
# | 6 | `except asyncio.TimeoutError`, `except Exception`, `finally` | the same | 05 |

# %% tags=["remove-input"]
from lab_snippets.sites import show_call_site

show_call_site("14")

# %% tags=["remove-input"]
show_call_site("14b")

# %% tags=["remove-input"]
show_call_site("14c")

# %% tags=["remove-input"]
show_call_site("14d")

# %% tags=["remove-input"]
show_call_site("14e")

# %% tags=["remove-input"]
show_call_site("14f")

# %% [markdown]
# # 05 · Cancellation and timeouts: after asking to stop, you still wait for cleanup
# *取消与超时：请求停止以后，还要等待收尾*
#
# **The question.** When you call `task.cancel()` or a timeout expires, what actually stops,
# when, and what must the caller still do before the work is really over?
#
# **You will**
# 1. find out when `cancel()` takes effect, and where in the task `CancelledError` arrives;
# 2. test what catching `CancelledError` does to `asyncio.timeout` and `wait_for`;
# 3. measure the cleanup that runs after a cancel, and what a caller must do to know it is
#    over;
# 4. find out what `asyncio.shield` protects when a caller is cancelled, and what a second
#    cancel does while you wait for a cleanup.
#
# **Needs** chapters 03 (tasks) and 04 (wait) · about 70 minutes
#
# **New to the course?** [How to read an experiment](../book/reading_guide.md) explains the
# timelines, the helpers and the folded checks; the [glossary](../book/glossary.md) gives the
# words the chapters share. The first cell, folded, imports what the page uses; its
# `figure_style()` only sets how the plots look.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the setup"}
import asyncio
import sys
import time

from matplotlib.lines import Line2D

from lab_snippets.timeline import Timeline, figure_style

figure_style()

# %% [markdown]
# ## When does a cancel take effect?
#
# `task.cancel()` asks a task to stop; inside the task, the stop arrives as a `CancelledError`.
# In the next cell the worker first tokenises a long prompt (a 0.04 s loop stands in for it),
# then waits for its request. A cancel is scheduled for 0.01 s after the start
# (`loop.call_later(0.01, f)` asks the loop to run `f` 0.01 s from now). The moments are
# written down with `tl.mark` on a `Timeline`, the course's recorder. Predict their order:
# where among the worker's marks does "cancel requested" fall, and where does
# `CancelledError` arrive?

# %%
tl = Timeline()


async def tokenize_then_request() -> None:
    tl.mark("busy stretch started")
    busy_until = time.monotonic() + 0.04
    while time.monotonic() < busy_until:
        pass  # tokenising the prompt
    tl.mark("busy stretch finished")
    try:
        await asyncio.sleep(1)
        tl.mark("request finished")
    except asyncio.CancelledError:
        tl.mark("CancelledError arrived")
        raise
    finally:
        tl.mark("finally ran")


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
worker = asyncio.create_task(tokenize_then_request())
state_at_request: dict[str, bool] = {}


def request_cancel() -> None:
    state_at_request["accepted"] = worker.cancel()
    state_at_request["done right after cancel()"] = worker.done()
    tl.mark("cancel requested")


asyncio.get_running_loop().call_later(0.01, request_cancel)
await asyncio.wait([worker], timeout=2)

print(tl.names())
print(state_at_request, "· finally cancelled:", worker.cancelled())

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: cancel-lands-at-the-next-await
assert tl.order("busy stretch started", "busy stretch finished", "cancel requested",
                "CancelledError arrived", "finally ran"), (
    f"the cancel must wait for the busy stretch and land at the next await: {tl.names()}")
assert state_at_request == {"accepted": True, "done right after cancel()": False}
assert worker.cancelled() and "request finished" not in tl.names()
print("✓ the cancel ran only after the busy stretch; CancelledError arrived at the next await")

# %% [markdown]
# :::{dropdown} Why
#
# While plain code runs, the event loop has no control; it gets it back only at the worker's
# next `await`. Look at where "cancel requested" falls in the list of marks, and at what
# `done()` said the moment `cancel()` returned. `task.cancel()` does not stop anything by itself: it marks
# the task and returns at once. The next time the task is resumed at an `await`, that `await`
# raises `CancelledError` inside the task. The exception then travels up the task's stack like
# any other: `except` and `finally` blocks run on the way, and the task ends *cancelled* only
# when the exception leaves its coroutine. A cancellation is a message that the task reads at
# its next `await`.
#
# :::
#
# ## What does catching `CancelledError` do to a timeout?
#
# `CancelledError` is an exception, and an `except` clause can catch it. Since Python 3.8 it
# derives from `BaseException`, not from `Exception` (like `KeyboardInterrupt`), so an
# `except Exception` clause does not catch it; a bare `except` catches everything. The three
# workers below differ only in their `except` clause: `except Exception`, a bare `except`, and
# `except CancelledError` that cleans up and re-raises.

# %%
TIMEOUT = 0.03


async def catches_exception() -> str:
    try:
        await asyncio.sleep(1)
    except Exception:
        return "caught it"
    return "finished"


async def bare_except() -> str:
    try:
        await asyncio.sleep(1)
    except:  # noqa: E722 - a bare except clause
        pass
    await asyncio.sleep(2 * TIMEOUT)  # more work after the swallowed cancel
    return "finished"


# %%
async def cleans_up_and_reraises() -> str:
    try:
        await asyncio.sleep(1)
    except asyncio.CancelledError:
        await asyncio.sleep(0)  # e.g. tell the server to drop the request
        raise
    return "finished"


# %% [markdown]
# The folded helper `under_timeout(worker)` runs one worker inside
# `async with asyncio.timeout(TIMEOUT)`; the timeout cuts every worker off while it waits.
# It returns what came out of the block and how long the block lasted, as a multiple of the
# budget: 2.0 × means 0.06 s. `asyncio.wait_for(aw, timeout)` is the older way to put a
# timeout on an await; the fourth row runs `bare_except` under
# `asyncio.wait_for(..., timeout=0.03)` instead (`under_wait_for`, in the same fold).

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the helpers that run a worker under a timeout and time it"}
async def under_timeout(worker) -> tuple[str, float]:
    loop = asyncio.get_running_loop()
    start = loop.time()
    try:
        async with asyncio.timeout(TIMEOUT):
            outcome = "returned " + repr(await worker())
    except Exception as exc:
        outcome = type(exc).__name__
    return outcome, (loop.time() - start) / TIMEOUT


async def under_wait_for(worker) -> tuple[str, float]:
    loop = asyncio.get_running_loop()
    start = loop.time()
    try:
        outcome = "returned " + repr(await asyncio.wait_for(worker(), timeout=TIMEOUT))
    except Exception as exc:
        outcome = type(exc).__name__
    return outcome, (loop.time() - start) / TIMEOUT


# %% [markdown]
# **Predict** the `bare_except` row under `asyncio.timeout`: does the block raise
# `TimeoutError`, and how long does it last compared with its 0.03 s budget? The other three
# rows are printed beside it to compare with.

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
outcomes = {}
for worker_fn in (catches_exception, bare_except, cleans_up_and_reraises):
    outcomes[worker_fn.__name__] = await under_timeout(worker_fn)
outcomes["bare_except, wait_for"] = await under_wait_for(bare_except)
for name, (outcome, ratio) in outcomes.items():
    print(f"{name:<24} {outcome:<22} lasted {ratio:.1f} × the budget")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: swallowed-cancel-disables-the-timeout
assert outcomes["catches_exception"][0] == "TimeoutError"
assert outcomes["cleans_up_and_reraises"][0] == "TimeoutError"
assert outcomes["bare_except"][0] == "returned 'finished'", "the swallowed cancel silently disabled the timeout"
assert outcomes["bare_except"][1] >= 2.5, "and the block overran its budget"  # floor: a sleep never ends early
assert outcomes["bare_except, wait_for"][0] == "returned 'finished'", (
    "wait_for has no CancelledError to turn into TimeoutError either")
assert outcomes["bare_except, wait_for"][1] >= 2.5, "and wait_for overran its timeout too"  # floor: a sleep never ends early
print("✓ two timeouts raised TimeoutError; the bare except returned 'finished' after about 3 × the budget")

# %% [markdown]
# :::{dropdown} Why
#
# `except Exception` lets `CancelledError` through (it is a `BaseException`), so its timeout
# raises as it should. A bare `except` (or
# `except BaseException`, or `except CancelledError` without `raise`) eats the cancellation
# that `asyncio.timeout` sent. The timeout can only turn a `CancelledError` that comes *out* of
# the block into `TimeoutError`; when nothing comes out, it has nothing to convert. Look at the
# `bare_except` row: its block ran on through the 0.06 s of further work, about 3 × the budget.
# `wait_for` (the last row) turns a timeout into `TimeoutError` the same way: it cancels the
# work, and converts the `CancelledError` only if one comes back out. Any timeout built on
# cancellation depends on the worker letting the cancel through. Catching `CancelledError` is
# fine for cleanup, as long as you re-raise it.
#
# :::
#
# ## Measure: how long does a caller wait after `cancel()`, and what does it see?
#
# Two workers below hold a "slot" (think of a request slot on an inference server) and
# release it in `finally` with `release_slot`, an `await` that takes 0.08 s. It is folded
# below with `draw_slot_timeline`, which draws the whole run, cleanup included, once it is
# over.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show release_slot (the 0.08 s cleanup) and the plotting code"}
CLEANUP = 0.08
slot_free = {"A": False, "B": False}


async def release_slot(name: str) -> None:
    """The worker's cleanup: 0.08 s of awaiting, then the slot is free (drawn purple)."""
    with tl.span(f"worker {name}", state="cleanup"):
        await asyncio.sleep(CLEANUP)
    slot_free[name] = True
    tl.mark(f"worker {name} released the slot")


def draw_slot_timeline() -> None:
    """Draw the run on a timeline (the last output of the run below)."""
    for name in "AB":  # each worker's wait: from its start to where its cleanup starts
        cleanup = tl.spans_of(f"worker {name}")[0]
        tl.add(f"worker {name}", tl.t0, tl.t0 + cleanup.start, state="waiting")
    fig = tl.plot("cancel() asks; cleanup still runs: moving on vs waiting for it",
                  lanes=["worker A", "caller A", "worker B", "caller B"])
    ax = fig.axes[0]
    tick = Line2D([], [], color="black",
                  label="mark: a moment (a cancel, moving on, a slot freed)")
    ax.legend(handles=[*ax.get_legend().legend_handles, tick],
              loc="upper left", bbox_to_anchor=(1.01, 1.0), title="state", frameon=False)
    moved_on = tl.events[tl.names().index("caller A continues")].at
    ax.annotate("moved on here; slot still taken", (moved_on, 1), xytext=(6, 0),
                textcoords="offset points", va="center", fontsize=8)


# %% [markdown]
# Caller A cancels its worker and moves on at once; caller B cancels and then awaits the
# worker (bounded by a timeout). Each caller then checks whether the slot is free:
# `slot_free[name]` turns true when `release_slot` has finished.

# %%
async def hold_slot(name: str) -> None:
    try:
        await asyncio.sleep(1)  # waiting, until the cancel arrives here
    finally:
        await release_slot(name)  # releasing the slot is itself an await


async def cancel_and_move_on(task: asyncio.Task) -> bool:
    task.cancel()
    tl.mark("caller A cancelled")
    await asyncio.sleep(0)
    tl.mark("caller A continues")
    return slot_free["A"]


async def cancel_and_wait(task: asyncio.Task) -> bool:
    task.cancel()
    tl.mark("caller B cancelled")
    with tl.span("caller B", state="waiting"):
        await asyncio.wait([task], timeout=2)
    tl.mark("caller B continues")
    return slot_free["B"]


# %% [markdown]
# The next cell starts both workers and, 0.03 s later, runs both callers, each on its own
# worker. It prints what each caller sees and how long caller B waits after `cancel()`, and
# draws the run.
#
# Predict: does caller A, which moves on at once, find its slot free? And how long does caller
# B wait after `cancel()`: about 0.97 s, what is left of its worker's 1 s sleep; about 0.08 s,
# the cleanup; or the two together?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
tl = Timeline()
workers = {name: asyncio.create_task(hold_slot(name)) for name in "AB"}
await asyncio.sleep(0.03)
seen_by_a, seen_by_b = await asyncio.gather(
    cancel_and_move_on(workers["A"]), cancel_and_wait(workers["B"]))
print(f"caller A saw the slot free: {seen_by_a}; caller B saw it free: {seen_by_b}")
print(f"caller B waited {tl.spans_of('caller B')[0].duration:.2f} s after cancel()")
# A's cleanup ends too before we go on
_ = await asyncio.wait(workers.values(), timeout=2)
draw_slot_timeline()  # the run on a timeline (plotting code folded above)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: only-awaiting-sees-the-cleanup-done
waited = tl.spans_of("caller B")[0].duration
print(f"caller B waited {waited / CLEANUP:.2f} × the cleanup time after cancel()")
assert seen_by_a is False and seen_by_b is True, (
    f"A moves on before the cleanup, B after it: A saw {seen_by_a}, B saw {seen_by_b}")
assert tl.order("caller A cancelled", "caller A continues", "worker A released the slot")
assert tl.order("caller B cancelled", "worker B released the slot", "caller B continues")
assert waited >= 0.8 * CLEANUP, "cancel-and-wait lasts at least as long as the cleanup"  # floor: a sleep never ends early
assert all(t.cancelled() for t in workers.values())
print("✓ caller A moved on with the slot still taken; caller B saw it free after the cleanup")

# %% [markdown]
# :::{dropdown} Why
#
# In the figure, compare where each caller's lane ends with where its worker's purple
# cleanup ends: caller A's lane holds only its mark, labelled where it moved on.
#
# The cancel cut the worker's sleep short at its `await`, so the 0.97 s left of it never
# happened; what remained was the cleanup. `cancel()` returning tells the caller nothing about
# that cleanup; awaiting the task (or waiting for it with `asyncio.wait`, or a done callback)
# is how it learns that the cleanup is over. So caller B waits about as long as the cleanup,
# 0.08 s. Caller A waits only one pass of the loop, and finds its slot still taken.
#
# Chapter 04's "Before the exercise: a deadline for each job" showed this once, for one job
# under `asyncio.wait`, whose timeout had run out. Here it is the rule for any caller: whoever
# cancels a task and needs its cleanup done has to wait for the task.
#
# :::
#
# ## Predict: with `asyncio.shield`, which one is cancelled?
#
# Sometimes the work a caller waits for is not its own: a checkpoint save that other requests
# also need. `asyncio.shield(task)` wraps the task in a new awaitable for the caller to wait
# on instead of the task itself. In the cell below a caller awaits a 0.05 s save and is
# cancelled after 0.01 s, once through `asyncio.shield(save)` and once awaiting `save`
# directly. Predict, for each: does the caller end cancelled, and does the save complete?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
async def save_checkpoint(step: int) -> str:
    await asyncio.sleep(0.05)
    return f"checkpoint {step}"


async def impatient_caller(work: asyncio.Task, shielded: bool) -> str:
    return await (asyncio.shield(work) if shielded else work)


outcome = {}
for shielded in (True, False):
    save = asyncio.create_task(save_checkpoint(7))
    caller = asyncio.create_task(impatient_caller(save, shielded))
    await asyncio.sleep(0.01)
    caller.cancel()
    await asyncio.wait([caller], timeout=2)
    await asyncio.wait([save], timeout=2)  # then wait for the save itself
    outcome["with shield" if shielded else "without shield"] = (
        caller.cancelled(), "cancelled" if save.cancelled() else save.result())

print(outcome)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: shield-protects-the-work
assert outcome["with shield"] == (True, "checkpoint 7"), "the caller stopped, the save completed"
assert outcome["without shield"] == (True, "cancelled"), "the caller's cancellation reached the save"
print("✓ both callers were cancelled; the shielded save completed, the unshielded one was cancelled")

# %% [markdown]
# :::{dropdown} Why
#
# `asyncio.shield` puts a second awaitable between the caller and the work: a cancel of the
# caller stops at that outer awaitable and never reaches `save`. Without that outer layer,
# the caller's cancellation goes on into the work it is awaiting. Compare the two entries of
# the answer, each a pair: whether the caller ended cancelled, and what became of the save. A
# shield protects the work,
# not the caller, and it creates a duty: somebody must still await the shielded task (or keep a
# reference to it) so that it is not lost when it ends.
#
# :::

# %% [markdown]
# ## A second cancel while you are stopping
#
# Caller B cancels its worker and waits for the cleanup. Shutdown code does that in a
# `finally`: cancel the jobs still running, then await them. What if the caller itself is
# cancelled again while it waits there (a second Ctrl-C, or a supervisor's own timeout)?
#
# First, one fact about `gather` that the answer turns on: what `asyncio.gather(...)`
# returns can be cancelled, and cancelling it cancels each gathered task that has not
# finished yet. With `return_exceptions=True`, the `gather` then ends only when the last of
# those tasks has ended, and it raises `CancelledError` instead of returning the list. (By
# contrast, `asyncio.wait` never cancels the tasks it waits for: chapter 04.) The cell below
# cancels a `gather`, not the task it gathers, and looks at the task.

# %%
child = asyncio.create_task(asyncio.sleep(1))
gathered = asyncio.gather(child, return_exceptions=True)
gathered.cancel()  # cancel what gather returned, not the child
await asyncio.wait([gathered], timeout=1)
print("the child cancelled:", child.cancelled(),
      "| the gather ended with", repr(gathered.exception()))

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the plotting code"}
def draw_two_stops(run_of: dict[str, Timeline]) -> None:
    """Both runs on one axis: `collect` until it ended, the job until it was gone."""
    from lab_snippets.timeline import Event

    drawn = Timeline()
    for name, run in run_of.items():
        at = {e.name: e.at for e in run.events}
        job, collector = f"{name}: the job", f"{name}: collect"
        drawn.add(collector, drawn.t0, drawn.t0 + at["collect ended"], state="waiting")
        drawn.add(job, drawn.t0, drawn.t0 + at["first cancel"], state="waiting")
        drawn.add(job, drawn.t0 + at["first cancel"], drawn.t0 + at["the job gone"],
                  state="cleanup")
        drawn.events += [Event(f"{collector} cancelled", at[c])
                         for c in ("first cancel", "second cancel")]
    drawn.plot("A second cancel during the job's cleanup: gather vs asyncio.wait",
               lanes=[f"{n}: {lane}" for n in run_of for lane in ("collect", "the job")])

# %% [markdown]
# Now the experiment. In the cell below:
#
# - `slow_to_stop` is a job that would run 1 s and, once cancelled, needs 0.03 s to clean up;
# - `collect` starts one such job and, in a `finally`, cancels it and awaits it, as chapter
#   04's `rollout_refill` does; it awaits it one of two ways, `gather_jobs` or `wait_jobs`.
#
# The answer cancels `collect` at 0.02 s, so the job starts its cleanup then, and cancels
# `collect` again at 0.03 s, in the middle of that cleanup; it runs once with each way.
# Each cancel of `collect` goes to what `collect` is awaiting at that moment: the `gather`,
# or the `asyncio.wait`.
#
# **Predict:** with which of the two, `gather` or `asyncio.wait`, is the job already gone when
# `collect` ends? And what does the second cancel do to the job's 0.03 s cleanup in that run?
# The answer prints both runs and draws them, a black tick at each cancel of `collect`.

# %%
async def slow_to_stop(name: str, tl: Timeline) -> str:
    try:
        await asyncio.sleep(1)
    except asyncio.CancelledError:
        try:
            await asyncio.sleep(0.03)  # its cleanup
        finally:
            tl.mark(f"{name} gone")
        raise
    return name


# %%
async def collect(tl: Timeline, wait_for_jobs) -> None:
    jobs = [asyncio.create_task(slow_to_stop("the job", tl))]
    try:
        await asyncio.sleep(1)  # waiting for results
    finally:
        for task in jobs:
            task.cancel()
        await wait_for_jobs(jobs)


async def gather_jobs(jobs):
    await asyncio.gather(*jobs, return_exceptions=True)


async def wait_jobs(jobs):
    await asyncio.wait(jobs, timeout=1)


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
run_of: dict[str, Timeline] = {}
for name, wait_for_jobs in (("gather", gather_jobs), ("asyncio.wait", wait_jobs)):
    stopping = run_of[name] = Timeline()
    caller = asyncio.create_task(collect(stopping, wait_for_jobs))
    await asyncio.sleep(0.02)
    caller.cancel()  # the first cancel
    stopping.mark("first cancel")
    await asyncio.sleep(0.01)
    caller.cancel()  # the second, while the finally waits for the job
    stopping.mark("second cancel")
    await asyncio.wait([caller], timeout=1)
    stopping.mark("collect ended")
    await asyncio.sleep(0.05)  # let a job still cleaning up finish
    at = {e.name: e.at for e in stopping.events}
    when = "before" if stopping.order("the job gone", "collect ended") else "after"
    print(f"{name:<13} collect ended at {at['collect ended']:.2f} s;",
          f"the job was gone at {at['the job gone']:.2f} s, {when} it")
draw_two_stops(run_of)  # folded above: the plotting code

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: second-cancel-reaches-gathered-jobs-only
by_gather, by_wait = run_of["gather"], run_of["asyncio.wait"]
assert by_gather.order("the job gone", "collect ended"), (
    f"with gather, collect ended before its job was gone: {by_gather.names()}")
assert by_wait.order("collect ended", "the job gone"), (
    f"with wait, the job was gone before collect ended: {by_wait.names()}")
print("✓ gather: collect ended after its job was gone; "
      "wait: collect ended while its job was still cleaning up")

# %% [markdown]
# :::{dropdown} Why
#
# In both runs the second cancel reaches `collect` while its `finally` is awaiting the job,
# and `collect` ends then, at 0.03 s, cancelled. What differs is what that `await` passes on:
#
# - with `gather`, the cancel goes on into the work `collect` awaits, as it went on into the
#   unshielded save: `gather` cancels the gathered jobs and goes on waiting for them. The
#   cancel lands in the `await` of the job's cleanup and cuts it short: the job is gone at
#   0.03 s, not 0.05 s, and `collect` ends just after it. Cleanup does run after a cancel, as
#   the runs before showed, but it runs to its end only if nothing cancels the cleanup's own
#   `await`; here the second cancel does.
# - `asyncio.wait` never cancels the tasks it waits for, so the cancel stops only the `wait`:
#   `collect` ends with its job still cleaning up, and the cleanup runs on to 0.05 s with
#   nobody waiting for it.
#
# In the figure, the job's purple cleanup is cut short at the second tick under `gather`,
# and `collect` ends just after it; under `asyncio.wait`, `collect` ends at the second tick
# and the cleanup runs on alone to 0.05 s.
#
# So the two keep different promises. With `gather`, once `collect` has ended its job is gone,
# at the price of a cleanup cut short; chapter 04's `rollout_refill` awaits its cancelled
# groups with `gather`, so however often its caller cancels it, no group outlives it. With
# `asyncio.wait`, a cleanup runs to its end, but nobody is waiting when it does.
#
# :::

# %% [markdown]
# :::{dropdown} Going further: a cancel swallowed on purpose, then a `TaskGroup` (Python 3.13)
#
# Workers sometimes swallow a cancel on purpose: a supervisor cancels one to mean "drop this
# sample and take the next", and the worker catches `CancelledError` and carries on. Since
# Python 3.11 each task counts the cancel requests it has received and not taken back,
# `task.cancelling()`. Catching the error does not lower that count; `task.uncancel()` does.
# From Python 3.13 on, a `TaskGroup` whose child failed cancels its own task once more if the
# count is above zero when its block ends (the `TaskGroup` of 3.11 and 3.12 does not).
#
# In the run below, a worker swallows a cancel, then runs a `TaskGroup` whose child raises
# `ValueError`, handles it with `except* ValueError`, and returns the count and the outcome.
# Its last line before `return` writes the outcome into `reached`, so the answer shows
# whether it got that far. It runs twice, without and with `uncancel()` after the catch.
# Predict, for Python 3.13: in which run does the worker's return value reach its caller?
#
# :::

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the answer"}
async def drop_sample_then_group(use_uncancel: bool, reached: dict) -> tuple[int, str]:
    try:
        await asyncio.sleep(1)  # a supervisor cancels us here: "drop this sample"
    except asyncio.CancelledError:
        if use_uncancel:
            asyncio.current_task().uncancel()
    count = asyncio.current_task().cancelling()

    async def failing_step() -> None:
        await asyncio.sleep(0.01)
        raise ValueError("bad sample")

    outcome = "nothing raised"
    try:
        async with asyncio.TaskGroup() as group:
            group.create_task(failing_step())
            await asyncio.sleep(1)
    except* ValueError:
        outcome = "ExceptionGroup"
    reached[use_uncancel] = outcome
    return count, outcome


if sys.version_info < (3, 13):
    version = "{}.{}".format(*sys.version_info[:2])
    print(f"This page ran on Python {version}, not 3.13: its TaskGroup never cancels",
          "the parent task again, so the lines below show that older behaviour,",
          "not the answer for 3.13 (the Why gives that).")
results, reached_return = {}, {}
for use_uncancel in (False, True):
    soft_stopped = asyncio.create_task(
        drop_sample_then_group(use_uncancel, reached_return))
    await asyncio.sleep(0.01)
    soft_stopped.cancel()
    await asyncio.wait([soft_stopped], timeout=2)
    results[use_uncancel] = ("task cancelled" if soft_stopped.cancelled()
                             else soft_stopped.result())
for flag, label in ((False, "without uncancel:"), (True, "with uncancel:   ")):
    print(label, results[flag], "| reached return with:", reached_return[flag])

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert results[True] == (0, "ExceptionGroup"), results[True]
assert reached_return == {False: "ExceptionGroup", True: "ExceptionGroup"}, (
    "on every version the child's error arrives as an ExceptionGroup that except* handles")
if sys.version_info >= (3, 13):
    assert results[False] == "task cancelled", (
        "a stale count makes TaskGroup cancel the task again: it ends cancelled after its return")
else:
    assert results[False][0] == 1, "the swallowed request is still counted"
print("✓ with uncancel: count 0 and the ExceptionGroup; without it the stale count is",
      "fatal to the task's result on 3.13+" if sys.version_info >= (3, 13) else "still there (1)")

# %% [markdown]
# :::{dropdown} Why
#
# Without `uncancel()` the count was still 1 when the group ended, so on 3.13 and later the
# `TaskGroup` cancelled its task once more. The child's error was still raised and handled,
# and the worker reached its `return` (the last column of the answer). But that cancel came
# with no `await` left before the `return`, so no `CancelledError` was ever raised in the
# worker. The task still ends cancelled, because a cancel was pending when it returned, and
# its return value is dropped: the caller never got the pair. On
# 3.11 and 3.12 the same code returns its pair with the stale count of 1 in it, as the answer
# shows when run there: a bug waiting for an upgrade. The `with uncancel` row is right on
# every version. Swallowing a cancel has a cost even when done on purpose: do it rarely, and
# call `uncancel()` when you do.
#
# :::
#
# :::{dropdown} Going further: how `asyncio.timeout` uses the count
#
# How does `asyncio.timeout` know that a `CancelledError` is its own, to turn into
# `TimeoutError`, and not a cancel sent from outside, which must propagate? A timeout that
# fires adds one to the task's `cancelling()` count. When its block exits after it fired, it
# calls `task.uncancel()` to take its request back, and turns the `CancelledError` into
# `TimeoutError` only if the count is then back where it was when the block was entered, that
# is, if nobody else asked for a cancel meanwhile (`Lib/asyncio/timeouts.py` compares the
# count after `uncancel()` with the one saved on entry, in 3.11.7, 3.12.1 and 3.13.0 alike).
# `TaskGroup` likewise takes back the request
# it made when it cancelled its parent because a child failed.
#
# The 3.13 step of the fold above is in `TaskGroup.__aexit__` (`Lib/asyncio/taskgroups.py`),
# and the dropped return value in `Task.__step` (`Lib/asyncio/tasks.py`), both read in 3.13.0.
#
# :::

# %% [markdown]
# ## Exercise 5.1 · Drain: grace period, cancel, wait for cleanup
#
# Implement `drain(tasks, grace, cleanup_budget=1.0)`, the shutdown step of a session that has
# requests in flight:
#
# 1. give the tasks up to `grace` seconds to finish on their own, and return as soon as all
#    are done;
# 2. cancel every task still running after the grace period, and only those, once each;
# 3. wait at most `cleanup_budget` seconds until the cancelled tasks have finished their
#    cleanup; a longer cleanup is left running, not cut short;
# 4. return `(finished_on_their_own, cancelled)`, two counts over the tasks in `tasks` at the
#    call. `tasks` may shrink while you wait (a running set drops each task as it finishes):
#    count over a copy taken at the start. A task that failed, or was already done, counts as
#    finished. `drain` must not raise; an empty set drains to `(0, 0)`.
#
# :::{dropdown} What the grader checks
#
# Graded, on many generated runs (no task, one, several; tasks that finish, fail or never
# finish on their own; cleanups that are quick, slow, longer than `cleanup_budget` or endless;
# `tasks` as a plain set or as a session's running set, which drops each task as it finishes
# (`add_done_callback(running.discard)`, chapter 03); several drains at once, each of its own
# tasks):
#
# - **counts**: the two counts, failures counted as finished;
# - **cancelled**: every task still running after the grace period, and only those, each
#   cancelled once;
# - **cleanup**: every cancelled task's cleanup is over when `drain` returns, except a cleanup
#   longer than `cleanup_budget`, which is left to run, not cut short;
# - **when it returns**: as soon as every task is done; `grace` and `cleanup_budget` bound the
#   whole drain (not each task), so it never takes longer than their sum;
# - **errors**: `drain` never raises.
#
# The tasks use `slow_request` below, which frees its slot in `finally`.
#
# :::
#
# :::{dropdown} Hint: the pieces
#
# Each step is a call this chapter or chapter 04 has run. `asyncio.wait(tasks, timeout=...)`
# returns the pair `(done, pending)` as soon as every task is done, or when the timeout
# expires, and it never cancels what it waits for (unlike `wait_for`). Cancel what is
# pending, then wait for it again the way caller B waited above, this time bounded by
# `cleanup_budget`. `asyncio.wait` raises `ValueError` when given an empty set. It also
# copies the set you pass before it waits, so its `done` and `pending` cover the tasks as they
# were at the call even if `tasks` shrinks meanwhile: passing `tasks` to it is one way to take
# the copy item 4 asks for.
#
# :::

# %%
async def slow_request(duration: float, freed: list[float], fail: bool = False) -> str:
    try:
        await asyncio.sleep(duration)
        if fail:
            raise ValueError("upstream error")
        return "ok"
    finally:
        await asyncio.sleep(0.03)  # freeing the slot takes an await of its own
        freed.append(duration)


# %% tags=["solution", "hide-input"] mystnb={"code_prompt_show": "Show the solution"}
async def drain(tasks: set[asyncio.Task], grace: float, cleanup_budget: float = 1.0) -> tuple[int, int]:
    """Wait up to `grace` s, cancel what is left, wait for its cleanup; return (finished, cancelled)."""
    ### BEGIN SOLUTION
    if not tasks:
        return 0, 0
    done, pending = await asyncio.wait(tasks, timeout=grace)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=cleanup_budget)
    return len(done), len(pending)
    ### END SOLUTION


# %% tags=["tests"]
freed: list[float] = []
in_flight = {asyncio.create_task(slow_request(d, freed)) for d in (0.01, 0.02, 5.0)}
try:
    counts = await asyncio.wait_for(drain(in_flight, grace=0.3), timeout=2)
finally:
    for t in in_flight:
        t.cancel()
    await asyncio.wait(in_flight, timeout=2)
assert counts == (2, 1), (
    "the 0.01 s and 0.02 s requests finish within the 0.3 s grace and the 5 s one "
    f"is cancelled: (2, 1) expected, got {counts!r}")

# %% tags=["tests", "hidden-tests", "remove-cell"]
### BEGIN HIDDEN TESTS
from lab_snippets import grading as _grading
from lab_snippets.asyncio_tools import cancel_new_tasks


async def _drain_or_report(tasks, grace, cleanup_budget=1.0):
    try:
        async with asyncio.timeout(5):  # runs drain in this task: we look right after it returns
            return await drain(tasks, grace=grace, cleanup_budget=cleanup_budget)
    except TimeoutError:
        raise AssertionError("drain did not return within 5 s (chapter 05)") from None
    except Exception as exc:
        raise AssertionError(
            f"drain raised {exc!r}: drain must not raise; a task that failed during the grace period "
            "counts as finished (chapter 05)") from None


_tasks_before = asyncio.all_tasks()
try:
    # 1. Two finish, one fails, three would take seconds: (3, 3), and every slot freed on return.
    _freed: list[float] = []
    _fast = {asyncio.create_task(slow_request(d, _freed)) for d in (0.01, 0.02)}
    _failing = {asyncio.create_task(slow_request(0.01, _freed, fail=True))}
    _slow = {asyncio.create_task(slow_request(5.0 + i, _freed)) for i in range(3)}
    _limit = _grading.ReferenceWait(1.0 + 1.0 + 0.3)  # a plain wait of grace + cleanup_budget + slack, beside it
    _t0 = time.monotonic()
    _counts = await _drain_or_report(_fast | _failing | _slow, grace=1.0)
    _freed_at_return = sorted(_freed)
    _grading.check_within(
        _grading.Outcome(finished=True, seconds=time.monotonic() - _t0), budget=_limit.seconds, slack=0,
        what="drain (grace 1 s, cleanup_budget 1 s, three slow tasks)",
        hint="grace and cleanup_budget bound the whole drain, not each task: wait for all the tasks together "
             "(asyncio.wait(tasks, timeout=grace)), then for all the cancelled ones (chapter 05)")
    _ = [t.exception() for t in _failing if t.done() and not t.cancelled()]  # retrieved here
    assert len(_freed_at_return) == 6, (
        f"only {len(_freed_at_return)} of 6 slots were freed when drain returned: wait for the "
        "cancelled tasks' cleanup before returning (chapter 05)")
    assert _counts == (3, 3), (
        f"drain returned {_counts}, expected (3, 3): finished = every task done within the grace "
        "period, errors included; cancelled = the tasks still running after it (chapter 05)")
    assert all(t.cancelled() for t in _slow), "the tasks still running after the grace period must end cancelled"
    assert not any(t.cancelled() for t in _fast | _failing), "tasks that finished in time must not be cancelled"

    # 2. All finish at once: drain returns long before the grace period is over.
    _events: list[str] = []

    async def _half_grace() -> None:
        await asyncio.sleep(1.0)
        _events.append("half of the grace period passed")

    _witness = asyncio.create_task(_half_grace())
    _quick = {asyncio.create_task(slow_request(0.01, [])) for _ in range(3)}
    _counts = await _drain_or_report(_quick, grace=2.0)
    _events.append("drain returned")
    assert _events[0] == "drain returned" and _counts == (3, 0), (
        "drain waited out the grace period although every task had finished: return as soon as all "
        "are done (asyncio.wait with a timeout; chapter 05)")

    # 3. A cleanup that outlasts the budget: drain gives up on it after cleanup_budget.
    async def _stubborn() -> str:
        try:
            await asyncio.sleep(5)
            return "ok"
        finally:
            await asyncio.sleep(2)  # a cleanup far longer than the budget

    _slow_cleanup = asyncio.create_task(_stubborn())
    await asyncio.sleep(0)  # let it start, so the cancellation lands in its body
    _counts = await _drain_or_report({_slow_cleanup}, grace=0.05, cleanup_budget=0.2)
    assert not _slow_cleanup.done(), (
        "drain waited for a cleanup longer than cleanup_budget: bound the wait for the cancelled "
        "tasks (asyncio.wait(..., timeout=cleanup_budget); chapter 05)")
    assert _counts == (0, 1), f"drain returned {_counts} for one task cancelled after the grace period"

    # 4. Four such cleanups: cleanup_budget bounds the wait for all of them together.
    _slow_cleanups = {asyncio.create_task(_stubborn()) for _ in range(4)}
    await asyncio.sleep(0)
    _limit = _grading.ReferenceWait(0.05 + 0.2 + 0.2)  # a plain wait of grace + cleanup_budget + slack
    _t0 = time.monotonic()
    _counts = await _drain_or_report(_slow_cleanups, grace=0.05, cleanup_budget=0.2)
    _grading.check_within(
        _grading.Outcome(finished=True, seconds=time.monotonic() - _t0), budget=_limit.seconds, slack=0,
        what="drain (grace 0.05 s, cleanup_budget 0.2 s, four cleanups of 2 s)",
        hint="cleanup_budget bounds the wait for all the cancelled tasks together, not for each in turn: one "
             "asyncio.wait(pending, timeout=cleanup_budget) (chapter 05)")
    assert _counts == (0, 4), f"drain returned {_counts} for four tasks cancelled after the grace period"

    assert await _drain_or_report(set(), grace=0.1) == (0, 0), "an empty set drains to (0, 0)"
finally:
    await cancel_new_tasks(_tasks_before)


# Generated scenarios (issue 37): the same scenarios through drain and the reference, on virtual
# time, compared on what the contract names (lab_snippets.scenarios explains the pattern).
import dataclasses as _dc

from hypothesis import strategies as _st

from lab_snippets import scenarios as _sc

_reference = _sc.reference(globals(), "drain")


@_dc.dataclass(frozen=True)
class _Plan:  # one drain's: each of several drains at once has its own (_sc.Callers)
    tasks: tuple          # of _sc.Job, each already running in a task when drain is called
    grace: float
    cleanup_budget: float
    live: bool = False    # the set drops each task as it finishes (chapter 03's running set)

    def describe(self, who: str) -> str:
        tasks = "; ".join(j.describe(f"task {n}") for n, j in enumerate(self.tasks)) or "no task"
        live = (", a set that drops each task as it finishes (add_done_callback(tasks.discard))"
                if self.live else "")
        return (f"{who} calls drain(tasks, grace={_sc.fmt(self.grace)}, cleanup_budget="
                f"{_sc.fmt(self.cleanup_budget)}){live}; {tasks}")


@_st.composite
def _plans(draw):
    # Tasks end at whole seconds, grace ends at half past, the cleanup budget at a whole second
    # again: nothing the counts depend on happens at the same instant as a deadline.
    job = _st.builds(_sc.Job, seconds=_st.sampled_from([1, 0, 2, 3, 1000]), value=_st.none(),
                     raises=_st.sampled_from([False, False, True]), cleanup=_st.sampled_from([0, 1, 3, 1000]))
    return _Plan(tasks=tuple(draw(_st.lists(job, max_size=6))), grace=draw(_st.sampled_from([1.5, 0.5, 2.5])),
                 cleanup_budget=draw(_st.sampled_from([1.5, 0.5, 2.5])), live=draw(_st.booleans()))


def _observe(fn, s: _sc.Callers) -> list:
    async def one_caller(plan: _Plan) -> dict:
        rec = _sc.Recorder()
        tasks = {asyncio.create_task(rec.run(n, job)) for n, job in enumerate(plan.tasks)}
        for task in list(tasks) if plan.live else ():
            task.add_done_callback(tasks.discard)
        await asyncio.sleep(0)  # every task has started: a cancel lands in its body
        return await _sc.call_once(lambda: fn(tasks, plan.grace, plan.cleanup_budget), rec)

    return _sc.run_each(one_caller, s, limit=2000)


def _compare_one(me: dict, it: dict, s: _Plan) -> str | None:
    if me["kind"] != "returned":
        return (f"drain ended with {me['kind']!r}: drain never raises; a task that failed during the "
                "grace period counts as finished")
    if me["value"] != it["value"]:
        live = "; the set drops tasks as they finish: count what the wait returned" if s.live else ""
        return (f"drain returned {me['value']!r}, expected {it['value']!r}: finished = every task done "
                f"within the grace period, errors included; cancelled = the tasks still running after it{live}")
    if sorted(me["cancelled"]) != sorted(it["cancelled"]):
        return (f"drain cancelled tasks {sorted(me['cancelled'])}, expected {sorted(it['cancelled'])}: "
                "cancel every task still running after the grace period, and only those")
    if me["at"] != it["at"]:
        return (f"drain returned at {_sc.fmt(me['at'])}, expected at {_sc.fmt(it['at'])}: return as soon "
                "as every task is done; grace and cleanup_budget bound the whole drain (one wait for all "
                "the tasks, one for all the cancelled ones), and the cleanup is waited for up to the budget")
    if me["left"] > it["left"]:
        return (f"{me['left']} tasks were still running when drain returned, expected {it['left']}: "
                "wait (up to cleanup_budget) until the cancelled tasks' cleanup is over")
    if me["left"] < it["left"]:
        return (f"only {me['left']} tasks were still running when drain returned, expected "
                f"{it['left']}: a cleanup longer than cleanup_budget was cut short; cancel each task once "
                "and then only wait for it (asyncio.wait with a timeout; wait_for cancels again)")
    return None


_compare = _sc.per_caller(_compare_one)


_sc.differential(drain, _reference, _sc.several(_plans(), counts=(1, 1, 2)), _observe, _compare, what="drain",
                 examples=50, hint="chapter 05")
### END HIDDEN TESTS

# %% [markdown]
# ## Summary
#
# - `cancel()` is a request. `CancelledError` arrives inside the task at the `await` where it
#   next suspends; plain code, and an `await` that does not suspend, runs on until then.
# - `finally` cleanup runs after the request and takes its own time. Cancel **and then
#   await** (bounded) when you need to know the cleanup is over.
# - Catch `CancelledError` only to clean up, then re-raise. Swallowing it silently disables
#   `asyncio.timeout` and `wait_for`: the block overruns and reports success.
# - `asyncio.shield` keeps a caller's cancellation away from shared work; someone must still
#   await that work.
#
# **What's next.** Chapter 06 limits how many tasks may enter a section at once with a
# semaphore, whose permits are given back on every path, cancellation included.
#
# ## In slime
#
# The first quote is exercise 5.1's drain in slime's agent adapter: `_drain` waits up to
# `wait_timeout`, cancels what is left, then awaits it with a `gather` that has no timeout.
# The quote's last line runs `_drain` on the loop that owns the tasks and waits until it is
# over (chapter 13 explains how).
#
# The second quote is the cleanup that the handlers it cancels run: it catches
# `CancelledError`, awaits a POST that asks SGLang to abort the request, and re-raises. That
# `raise` is what lets the drain end. A handler that swallowed the cancel would keep the
# unbounded `gather` waiting, and `shutdown_session` with it, until that handler finished its
# work on its own, however long that took.
#
# Every `cancel`, `shield` and timeout in slime is listed in the
# [source inventory](../book/reference/inventory.md).

# %% tags=["remove-input"]
from lab_snippets.sites import show_call_site

show_call_site("05")

# %% [markdown]
# The next quote is the cleanup those handlers run. `finish_session` awaits
# `shutdown_session`, then reads the session's trajectory: what would it find if `_drain`
# skipped its `gather`? A model of both quotes, written for this page: four agent turns are
# in flight on a stand-in SGLang server (`generating` holds the turns it is still generating
# for); each turn's cleanup awaits a 0.05 s abort POST, after which the server frees the
# slot, and re-raises, as `call_sglang_generate` does. `shutdown` is `_drain`, with a switch
# for its last step.
#
# Predict, with the `gather` and without it: when `shutdown` returns, for how many of the 4
# turns is the server still generating?

# %%
ABORT_POST = 0.05
generating: set[str] = set()  # the turns the stand-in server is generating for


async def agent_turn(rid: str) -> None:
    generating.add(rid)
    try:
        await asyncio.sleep(10)  # SGLang generates this turn
    except asyncio.CancelledError:
        await asyncio.sleep(ABORT_POST)  # POST /abort_request
        generating.discard(rid)  # the server frees the slot
        raise


async def shutdown(turns: list[asyncio.Task], wait_timeout: float, gather: bool):
    _, pending = await asyncio.wait(turns, timeout=wait_timeout)
    for task in pending:
        task.cancel()
    if pending and gather:
        await asyncio.gather(*pending, return_exceptions=True)


# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the answer"}
clock = asyncio.get_running_loop().time
still_generating, took, turns_of = {}, {}, {}
for gather in (True, False):
    turns_of[gather] = [asyncio.create_task(agent_turn(f"turn {i}")) for i in range(4)]
    await asyncio.sleep(0)  # every turn has started generating
    began = clock()
    async with asyncio.timeout(2):
        await shutdown(turns_of[gather], wait_timeout=0.02, gather=gather)
    took[gather] = clock() - began
    still_generating[gather] = len(generating)  # what finish_session's next line meets
    await asyncio.wait(turns_of[gather], timeout=2)  # the model's own tidy-up
print("shutdown (wait_timeout 0.02 s)    returned after    still generating")
for gather, label in ((True, "cancel, then gather (slime)"), (False, "cancel, no gather")):
    print(f"{label:<33} {took[gather]:.2f} s            {still_generating[gather]} of 4")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: drain-without-gather-leaves-turns-generating
assert still_generating == {True: 0, False: 4}, (
    f"with the gather every abort is over when shutdown returns, without it none: {still_generating}")
assert took[True] > took[False], "the gather costs the abort POST's time"
assert all(t.cancelled() for ts in turns_of.values() for t in ts) and not generating
print("✓ slime's gather returned with nothing generating; without it all 4 turns still were")

# %% [markdown]
# :::{dropdown} Why
#
# Without the `gather`, `shutdown` returns before a single cancel has even been delivered
# (each lands at its turn's next `await`, as in the first experiment), so `finish_session`
# reads the trajectory while the server is still generating for all four turns; their abort
# POSTs go out later, with nobody waiting for them. With it, the drain lasts one abort POST
# longer and ends with every slot freed.
#
# :::

# %% tags=["remove-input"]
show_call_site("05b")

# %% [markdown]
# # 03 · Task and gather: scheduling several pieces of work
# *Task 与 gather：把多份工作安排起来*
#
# **The question.** To score a group of samples at the same time you wrap each one in a Task.
# When does each Task start, in what order do the results come back, who keeps the Tasks
# alive, and what happens to the others when one of them fails?
#
# **You will**
# 1. predict when the bodies of several new Tasks start, and in what order;
# 2. find out in what order `gather` hands back its results;
# 3. find out what happens to a "fire and forget" Task once you drop your reference to it;
# 4. compare what `gather` and `TaskGroup` do to the other Tasks when one fails, and catch
#    what a `TaskGroup` raises.
#
# **Needs** chapters 01 and 02 · about 70 minutes
#
# **New to the course?** [How to read an experiment](../book/reading_guide.md) explains the
# timelines, the helpers and the folded checks; the [glossary](../book/glossary.md) gives the
# words the chapters share. The first cell, folded, imports what the page uses; its
# `figure_style()` only sets how the plots look.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the setup"}
import asyncio
import gc
import sys
import time
import weakref

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

# Timeline: the course's recorder of named moments and spans (see "One piece of work")
from lab_snippets.timeline import STATE_COLOURS, Timeline, figure_style

figure_style()

# %% [markdown]
# ## One piece of work
#
# Every experiment uses the same stand-in for "generate and score one sample": it marks its
# start, waits, optionally fails the way a reward model call can fail, and marks its end. If
# it is cancelled, it marks that too and lets the cancellation go on (chapter 05 explains why
# it must).
#
# The marks go to a `Timeline`, the course's recorder: `tl.mark(name)` notes a named moment,
# `with tl.span(name):` a stretch of time, and `tl.names()` lists the moments in the order they
# happened.

# %%
async def score_sample(name: str, seconds: float, tl: Timeline,
                       fail: bool = False) -> str:
    tl.mark(f"{name} starts")
    try:
        with tl.span(name):
            await asyncio.sleep(seconds)
            if fail:
                raise ValueError(f"{name}: the reward model rejected it")
    except asyncio.CancelledError:
        tl.mark(f"{name} cancelled")
        raise
    tl.mark(f"{name} ends")
    return f"{name} scored"


# %% [markdown]
# ## When does each Task start?
#
# `asyncio.create_task(coro)` wraps the coroutine object in a Task and returns it; as chapter
# 01 showed, no body starts inside the call. The cell below creates three Tasks, marks "all
# three tasks created", then suspends once with `await asyncio.sleep(0)` and marks "creator
# resumed". Predict the order of the three bodies' starts, and where "creator resumed" falls
# among them: before the first, between two, or after the last?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
tl = Timeline()
tasks = [asyncio.create_task(score_sample(f"sample {i}", 0.02, tl)) for i in range(3)]
tl.mark("all three tasks created")
states_at_creation = [t.done() for t in tasks]
await asyncio.sleep(0)  # the creator suspends once
tl.mark("creator resumed")
await asyncio.gather(*tasks)

print(tl.names()[:5])

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert tl.order("all three tasks created", "sample 0 starts", "sample 1 starts", "sample 2 starts",
                "creator resumed"), f"created, then the three bodies, then the creator: {tl.names()}"
assert states_at_creation == [False, False, False]
print("✓ the three bodies started after create_task returned, in creation order, before the creator resumed")

# %% [markdown]
# :::{dropdown} Why
#
# Each `create_task` put its body's first step in the loop's queue of ready callbacks, and the
# creator's `await asyncio.sleep(0)` put its own wake-up in the same queue, after them. The
# loop runs that queue first in, first out: the three bodies start in creation order, 0, 1,
# 2, and the creator resumes after the last of them, as the five marks of the answer show.
#
# :::

# %% [markdown]
# :::{dropdown} Python versions: a task done inside `create_task`
#
# With the default task factory, on every Python version, a new task is never done before
# the creator suspends. With the eager task factory of Python 3.12 that chapter 01 showed, a
# body that never suspends (a cache hit, say) *finishes* inside `create_task`: the task is
# already done when you get it. (Python 3.14's `create_task` gains a parameter for the same
# on one call, `create_task(coro, eager_start=True)`.) On Python 3.12 and later, the folded cell below
# shows it; on older Pythons it creates the task the default way and prints that it is not
# done yet.
#
# :::

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the experiment"}
async def cached_score(name: str) -> str:
    return f"{name} from cache"  # no await: nothing to wait for


if sys.version_info >= (3, 12):
    loop = asyncio.get_running_loop()
    previous_factory = loop.get_task_factory()
    loop.set_task_factory(asyncio.eager_task_factory)
    try:
        hit = asyncio.create_task(cached_score("sample 7"))
        done_at_creation = hit.done()
    finally:
        loop.set_task_factory(previous_factory)
    print("done right after create_task:", done_at_creation, "->", hit.result())
else:
    hit = asyncio.create_task(cached_score("sample 7"))
    done_at_creation = hit.done()
    await hit
    print("Python < 3.12: a new task is never done before the creator suspends:",
          done_at_creation)

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert done_at_creation == (sys.version_info >= (3, 12)), done_at_creation
print(f"✓ done right after create_task: {done_at_creation} "
      "(True with the eager factory of 3.12+, False with the default one)")

# %% [markdown]
# ## Predict: in what order does `gather` answer?
#
# `asyncio.gather(*aws)` waits for all of them and returns a list of their results. Below, the
# first sample is the slowest and the last one the fastest. Predict the order of the list:
# the order they finish in, or the order of the arguments?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
tl = Timeline()
durations = [0.2, 0.15, 0.1, 0.05]
started = time.monotonic()
results = await asyncio.gather(
    *(score_sample(f"sample {i}", d, tl) for i, d in enumerate(durations)))
gather_elapsed = time.monotonic() - started

finishing = [n.removesuffix(" ends") for n in tl.names() if n.endswith(" ends")]
print("finishing order:", finishing)
print("gather returned:", results)
print(f"gather took {gather_elapsed:.3f} s; one by one: {sum(durations):.2f} s")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: gather-keeps-argument-order
assert finishing == ["sample 3", "sample 2", "sample 1", "sample 0"]
assert results == ["sample 0 scored", "sample 1 scored", "sample 2 scored", "sample 3 scored"], (
    "gather's list follows the arguments, not the finishing order")
names = tl.names()
last_start = max(names.index(f"sample {i} starts") for i in range(4))
assert last_start < names.index("sample 3 ends"), "all four had started before the first one ended"
print("✓ they finished 3, 2, 1, 0, overlapping; gather's list is in argument order 0, 1, 2, 3")

# %% [markdown]
# :::{dropdown} Why
#
# The list follows the order of the arguments, 0 to 3, although the samples finished 3, 2, 1,
# 0 (the first two lines of the answer). `gather` keeps one slot per argument and fills each
# slot when that awaitable finishes: whatever the finishing order, the list's *i*-th entry is the result of the *i*-th argument, so you can `zip` it with the inputs without
# sorting anything. `gather` also wrapped the plain coroutine objects in Tasks for us,
# which is why they overlapped.
#
# :::

# %% [markdown]
# ## Does the loop keep a fire-and-forget task alive?
#
# A common habit is "fire and forget": start a task with `asyncio.create_task(...)` on a line
# of its own and keep nothing it returns. The loop is running the task: does it also keep it
# alive?
#
# The cell below drops two tasks as soon as it makes them. A **Future** is an object a task
# awaits until someone calls its `set_result(value)` (chapter 13 is about them). Task A
# creates a Future, keeps it to itself, and awaits it. Task B sleeps. The cell lets both start, then runs
# the garbage collector once, `gc.collect()`, as a busy program may at any moment; a
# `weakref.ref` watches each task without keeping it alive. Predict, for A and for B: is it
# still alive after `gc.collect()`? The answer also prints A's log and what the loop wrote to
# its own log (`loop_complaints`, collected by the folded cell above).

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show what collects the loop's log"}
# Collect what the loop reports through its exception handler (the check restores it).
loop = asyncio.get_running_loop()
loop_complaints: list[str] = []
about_a_task: list[bool] = []  # per report: did it name a task, with no exception?
previous_handler = loop.get_exception_handler()


def note_complaint(_loop, context) -> None:
    loop_complaints.append(context["message"])
    about_a_task.append(isinstance(context.get("task"), asyncio.Task) and "exception" not in context)


loop.set_exception_handler(note_complaint)


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
async def wait_for_reply(log: list[str]) -> str:
    reply = asyncio.get_running_loop().create_future()  # held by this task alone
    log.append("waiting for the reply")
    try:
        return await reply  # set_result(...) would wake it: nobody else can reach it
    finally:
        log.append("finally ran")


a_log: list[str] = []
watch_a = weakref.ref(asyncio.create_task(wait_for_reply(a_log)))  # A, dropped at once
watch_b = weakref.ref(asyncio.create_task(asyncio.sleep(0.05)))  # B, dropped at once
await asyncio.sleep(0)  # A and B start, and suspend in their awaits
gc.collect()
alive = {"A": watch_a() is not None, "B": watch_b() is not None}

print("alive after gc.collect():", alive)
print("A's log:", a_log)
print("the loop's log:", loop_complaints)  # collected by the folded cell above

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: unreferenced-task-is-collected
loop.set_exception_handler(previous_handler)
assert not alive["A"], "the pending task A, held by nothing but its own Future, was collected"
assert a_log == ["waiting for the reply", "finally ran"], "A never got past its await"
assert any(about_a_task), "the loop reported the destroyed pending task, with no exception to raise"
print("✓ task A was collected while pending, and the loop only logged it")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: a-sleeping-task-is-held-by-its-timer
assert alive["B"], "a dropped task waiting on asyncio.sleep is held by the loop's timer"
if (sleeper := watch_b()) is not None:  # let it end: nothing left behind
    await asyncio.wait_for(sleeper, timeout=2)
print("✓ task B, dropped while in asyncio.sleep, survived gc.collect()")

# %% [markdown]
# :::{dropdown} Why
#
# A was collected while it waited: no exception was raised, and the only trace is the
# loop's log line "Task was destroyed but it is pending!". B survived.
#
# The rule, as CPython's asyncio works today: a waiting task lives only through what will
# wake it. The loop holds a task strongly only while one of its steps is queued to run; its
# list of tasks, `asyncio.all_tasks()`, holds tasks weakly. A task suspended in an `await` is
# held by what it waits for (a timer, a socket, a Future), and that holds it only as long as
# something else holds that in turn:
#
# ```text
# B:  loop -> timer heap -> timer -> Future -> task B     a chain from the loop: kept
# A:  task A <-> its Future                               only each other: collected
# ```
#
# That is how the two tasks went:
#
# - **A** awaits its Future. The Future holds A, through the callback that will wake it, but
#   nothing outside A holds the Future: the two hold only each other, and `gc.collect()`
#   took them together.
# - **B** is in `asyncio.sleep`. A sleep in progress is a timer in the loop's timer heap.
#   The timer will complete a Future that B awaits, and that Future's callback wakes B. So
#   the loop holds its timers, the timer holds the Future, and the Future holds B.
#
# Waiting for an `asyncio.Event` or a `Queue` is awaiting a Future too: a dropped task waiting
# on one that nothing else holds goes the way of A. A's log ends in "finally ran": collecting
# a suspended coroutine runs its `finally` blocks (the fold below says how).
#
# :::
#
# :::{dropdown} Going further: how programs build A by accident, and why its `finally` ran
#
# Nobody writes A on purpose; programs build it by accident. A task makes an
# `asyncio.Event()` or a `Queue` and hands it to nobody; or it awaits the Future of a client
# object that was itself dropped. Some clients also file their pending replies in a
# `weakref.WeakValueDictionary`, a registry of *weak* references, so that a request its caller
# abandoned cleans itself up: the registry lets the client find the Future when the reply
# comes, but does not keep it alive. A dropped task waiting on such a Future is collected
# with it, and the reply, when it comes, finds nobody.
#
# Collecting a suspended coroutine closes it: Python raises `GeneratorExit` at the `await`
# where it stopped, so its `finally` blocks run, there and then, inside `gc.collect()`. That is
# why A's log says "finally ran". Such a `finally` cannot wait for anything: no loop runs it,
# and an `await` in it that would suspend ends in `RuntimeError: coroutine ignored
# GeneratorExit`, which Python only prints.
#
# :::
#
# So whether a dropped task survives depends on what it waits for when the garbage collector
# runs, which is why these bugs are rare, silent and hard to reproduce. The rule above is how
# CPython behaves, not a promise. The `asyncio` documentation says only that the loop keeps
# weak references to tasks, so a task referenced nowhere else may be collected at any time,
# and it advises keeping a reference to every task you start. It gives the way, which works whatever the task waits on: hold a strong
# reference until it is done, in a set the task removes itself from when it ends. The cell
# below starts a task like A again, this time held in such a set. Nothing can ever send its
# reply, so once the set has kept it through `gc.collect()`, the cell cancels it.

# %%
background_tasks: set[asyncio.Task] = set()


def start_and_keep(coro) -> asyncio.Task:
    task = asyncio.create_task(coro)
    background_tasks.add(task)  # a strong reference, until the task is done
    task.add_done_callback(background_tasks.discard)
    return task


kept_log: list[str] = []
start_and_keep(wait_for_reply(kept_log))
await asyncio.sleep(0)
gc.collect()
print("tracked after gc.collect():", len(background_tasks), "| task log:", kept_log)
for task in background_tasks:
    task.cancel()  # nothing can send its reply: stop it
await asyncio.wait(background_tasks, timeout=2)
print("tracked once it ended:", len(background_tasks), "| task log:", kept_log)

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert kept_log == ["waiting for the reply", "finally ran"]
assert background_tasks == set(), "the done callback removed the finished task"
print("✓ the kept task survived gc.collect(), and left the set when it ended")

# %% [markdown]
# ## When one of them fails
#
# Scoring can fail. Below, sample 1 fails after 0.04 s, while samples 0 and 2 take 0.15 s and
# 0.1 s. `gather` raises sample 1's error as soon as it happens. Predict: at that moment, are
# samples 0 and 2 still running, or has `gather` stopped them?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
gather_tl = Timeline()
plan = {"sample 0": (0.15, False), "sample 1": (0.04, True), "sample 2": (0.1, False)}
group = [asyncio.create_task(score_sample(name, d, gather_tl, fail))
         for name, (d, fail) in plan.items()]
try:
    await asyncio.gather(*group)
except ValueError as exc:
    gather_tl.mark("gather raised")
    print("gather raised:", exc)
still_running = [not t.done() for t in group]
await asyncio.gather(*group, return_exceptions=True)  # wait for all three
print("still running when gather raised:", still_running)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: gather-raises-and-siblings-run-on
assert still_running == [True, False, True], (
    f"samples 0 and 2 must still run when gather raises: {still_running}")
assert gather_tl.order("sample 1 starts", "gather raised", "sample 2 ends", "sample 0 ends")
assert "sample 0 cancelled" not in gather_tl.names(), "gather does not cancel the siblings"
print("✓ gather raised sample 1's error at once; samples 0 and 2 ran on to their end")

# %% [markdown]
# :::{dropdown} Why
#
# `gather` only waits for its arguments; it does not own them. When one fails, it hands the
# error on and stops waiting, and leaves the others alone: the last line of the answer says
# which samples were still running when it raised. They run on in the background, and their
# results are lost unless you still hold the Tasks.
#
# :::
#
# The cell below runs the same plan again, now with `return_exceptions=True` (shorter, since
# only the list matters here). Predict the list it returns: how many entries, and what stands
# in the place of sample 1?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
outcomes = await asyncio.gather(
    *(score_sample(name, d / 4, Timeline(), fail) for name, (d, fail) in plan.items()),
    return_exceptions=True)
print(outcomes)

# %% [markdown]
# :::{dropdown} Why
#
# With `return_exceptions=True`, a failure takes the place of a result, at its argument's
# position. Look at the middle entry of the list: sample 1's is the `ValueError` object itself,
# returned rather than raised. Nothing marks it as a failure but its type, so code that reads
# the list must check each entry with `isinstance(entry, BaseException)` before using it as a
# result.
#
# :::

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert [type(o).__name__ for o in outcomes] == ["str", "ValueError", "str"], outcomes
print("✓ with return_exceptions=True the error takes the failed entry's place")

# %% [markdown]
# ## Does a `TaskGroup` do the same?
#
# A `TaskGroup` (Python 3.11+) is the other way to run several tasks: you create them with
# `tg.create_task(...)` inside `async with asyncio.TaskGroup() as tg:`. When no task fails,
# the block ends once every task has ended, and `task.result()` on each Task that
# `tg.create_task` returned gives its value, with no `await`. When one fails, what the group
# raises is an `ExceptionGroup`, a bundle of exceptions; `except* ValueError` catches the
# `ValueError`s in it.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the plotting code"}
def as_in_progress(tl: Timeline) -> Timeline:
    """The same spans, each drawn as waiting up to its end; how it ended is marked separately
    (crosses), so the marks are left out."""
    drawn = Timeline()
    drawn.t0 = tl.t0
    for span in tl.spans:
        drawn.add(span.label, tl.t0 + span.start, tl.t0 + span.end, state="waiting")
    return drawn


def mark_endings(tl: Timeline, ax) -> None:
    for span in tl.spans:
        if span.state != "running":
            ax.scatter(span.end, [*plan].index(span.label), marker="X", s=110, zorder=3,
                       color=STATE_COLOURS[span.state], edgecolors="black", linewidths=0.6)
    ending = [Patch(facecolor=STATE_COLOURS["waiting"], edgecolor="black", label="waiting")]
    ended = {span.state for span in tl.spans} - {"running"}  # the ways this run's spans ended
    ending += [Line2D([], [], marker="X", linestyle="", markersize=9, markeredgecolor="black",
                      color=STATE_COLOURS[state], label=f"{state} here")
               for state in sorted(ended, key=list(STATE_COLOURS).index)]
    ending.append(Line2D([], [], color="black", linestyle="--", label="caller told"))
    ax.legend(handles=ending, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def draw_both_runs() -> None:
    """Both runs on one time axis: gather's above, the TaskGroup's below."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 4.2), sharex=True, layout="constrained")
    lanes = list(plan)
    as_in_progress(gather_tl).plot("gather: sample 1 fails", ax=top, lanes=lanes)
    as_in_progress(group_tl).plot("TaskGroup: sample 1 fails", ax=bottom, lanes=lanes)
    mark_endings(gather_tl, top)
    mark_endings(group_tl, bottom)
    top.axvline(gather_tl.events[gather_tl.names().index("gather raised")].at, color="black", linestyle="--")
    bottom.axvline(group_tl.events[group_tl.names().index("TaskGroup raised")].at, color="black", linestyle="--")
    top.set_xlabel("")
    for ax in (top, bottom):
        ax.set_ylabel("sample")


# %% [markdown]
# The cell below runs the same three samples, sample 1 failing again. Predict: when the error
# reaches the caller, are samples 0 and 2 still running?
#
# The answer draws both runs: each bar is a sample in progress, a cross marks how it ended
# (orange: failed, grey: cancelled; no cross: it ended normally), and a dashed line marks
# the moment the caller hears of the failure.

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
group_tl = Timeline()
caught: BaseExceptionGroup | None = None
try:
    async with asyncio.TaskGroup() as tg:
        for name, (d, fail) in plan.items():
            tg.create_task(score_sample(name, d, group_tl, fail))
except* ValueError as failures:
    group_tl.mark("TaskGroup raised")
    caught = failures

print("caught:", repr(caught))
print(group_tl.names())
draw_both_runs()  # the folded plotting code above: both runs on one time axis

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert isinstance(caught, ExceptionGroup) and len(caught.exceptions) == 1
# Each cancellation is checked on its own: their order is not specified (the group keeps its
# tasks in a set).
assert group_tl.order("sample 1 starts", "sample 0 cancelled", "TaskGroup raised")
assert group_tl.order("sample 2 cancelled", "TaskGroup raised")
assert not any(n.endswith(" ends") for n in group_tl.names()), "no sibling ran to its end"
print("✓ the TaskGroup cancelled samples 0 and 2 and raised an ExceptionGroup after they were gone")
# The figure's two runs on one clock:
gather_raised = gather_tl.events[gather_tl.names().index("gather raised")].at
group_raised = group_tl.events[group_tl.names().index("TaskGroup raised")].at
assert {s.state for s in group_tl.spans} == {"failed", "cancelled"}
# Orders on one clock, not times: a load can delay every step but cannot reorder these.
siblings_after = [s.end > gather_raised for s in gather_tl.spans if s.state == "running"]
assert siblings_after == [True, True], "under gather the siblings ran on after the caller was told"
assert max(s.end for s in group_tl.spans) <= group_raised, "the TaskGroup stopped every task before it raised"
print("✓ under gather the siblings ran to their end; under the TaskGroup all ended soon after the failure")

# %% [markdown]
# :::{dropdown} Why
#
# A `TaskGroup` treats its tasks as one unit of work: when one fails, it cancels the others
# and raises an `ExceptionGroup` holding the failure. So samples 0 and 2 were no longer
# running when the error reached the caller: "TaskGroup raised" comes after both
# cancellations in the list of marks. The list has no "sample 1 failed" because `score_sample` marks only
# its start, its end and a cancellation.
#
# The figure shows both runs on one time axis. Each light green bar is the time a sample was
# in progress, suspended in its `await` (the stand-in for the reward model's reply), up to the
# moment it ended; an orange cross marks where it failed, a grey one where it was cancelled; a
# bar with no cross ended normally. The dashed line is the moment the caller hears about the
# failure: under `gather` two samples are still in progress to the right of it, under the
# `TaskGroup` none.
#
# :::
#
# ## Measure: when the caller hears of a failure
#
# A real sample may have cleanup to do when it is cancelled, such as telling the server to
# drop its request. Below, sample 0's `finally` clause takes 0.1 s, and sample 1 fails at
# 0.04 s. Predict: when does the caller hear of sample 1's failure, under `gather` and under a
# `TaskGroup`?

# %%
cleanup_ended: list[float] = []  # when each cleanup finished (time.monotonic())


async def slow_to_clean_up(seconds: float) -> None:
    try:
        await asyncio.sleep(seconds)
    finally:
        await asyncio.sleep(0.1)  # cleanup: 0.1 s, also when cancelled
        cleanup_ended.append(time.monotonic())


async def fails_after(seconds: float) -> None:
    await asyncio.sleep(seconds)
    raise ValueError("sample 1: the reward model rejected it")


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
started = time.monotonic()
pair = [asyncio.create_task(slow_to_clean_up(0.15)),
        asyncio.create_task(fails_after(0.04))]
try:
    await asyncio.gather(*pair)
except ValueError:
    heard_under_gather = time.monotonic() - started
    sample_0_running = not pair[0].done()
await asyncio.gather(*pair, return_exceptions=True)

started = time.monotonic()
try:
    async with asyncio.TaskGroup() as tg:
        tg.create_task(slow_to_clean_up(0.15))
        tg.create_task(fails_after(0.04))
except* ValueError:
    group_raised_at = time.monotonic()
    heard_under_group = group_raised_at - started

print(f"the caller heard of the failure after {heard_under_gather:.2f} s under gather, "
      f"{heard_under_group:.2f} s under the TaskGroup")

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# Orders only: a load can delay every step, but not reorder these.
assert sample_0_running, "gather raised while sample 0 was still at work"
assert cleanup_ended[-1] <= group_raised_at, "the TaskGroup raised after sample 0's cleanup ended"
assert heard_under_gather < heard_under_group, (heard_under_gather, heard_under_group)
print("✓ the TaskGroup raised only after sample 0's 0.1 s cleanup; gather raised at once")

# %% [markdown]
# :::{dropdown} Why
#
# Under `gather` the caller heard at about 0.04 s, when sample 1 failed; under the
# `TaskGroup`, about 0.1 s later, after sample 0's cleanup. A `TaskGroup` tells its caller
# only after every cancelled task has ended, so a slow cleanup delays the news. Whether the cleanup is quick or slow, one difference always holds:
# once a `TaskGroup` has raised, no task of it is left running in the background.
#
# :::

# %% [markdown]
# ## Exercise 3.1 · Score a group, all or nothing
#
# slime generates the samples of one prompt group concurrently and needs them back in the
# group's order. Implement `score_group(names, score_one)` for a stricter version:
#
# 1. call `score_one(name)` once per name (repeats included), **all at the same time**,
#    started in the order of `names`;
# 2. return the results in the order of `names`, as soon as the last one is in;
# 3. if any call fails, **cancel the others**, wait until they are gone, and raise an
#    `ExceptionGroup` (a caller will use `except*`);
# 4. leave no task running when you return or raise, also when the caller cancels
#    `score_group`: the calls are gone before the `CancelledError` reaches it.
#
# Concurrent callers, each with its own `score_one`, must not disturb each other.
#
# :::{dropdown} Hint: where this page ran it
#
# Everything this needs ran on this page: the `TaskGroup` of "Does a `TaskGroup` do the
# same?" cancelled samples 0 and 2 when sample 1 failed, waited until they were gone and raised
# an `ExceptionGroup` (item 3). After the block every task has ended, so `task.result()`
# hands back each one's value without an `await`. For item 4, the hint "When the caller
# cancels", after the grader's list, says what the same block does when the caller is
# cancelled.
#
# :::
#
# :::{dropdown} What the grader checks
#
# Graded, on many generated runs (no names, one, several, over a hundred; the same name more
# than once; calls that take any time, several that finish at the same moment, calls that raise,
# calls that take a while to clean up once cancelled):
#
# **Calls and results**
#
# - **calls**: `score_one` once per name, a repeated name once per occurrence, every call
#   started at once, in the order of `names`;
# - **results**: the list in the order of `names` (a repeated name gets the result of its own
#   call);
#
# **Errors and cancellation**
#
# - **errors**: when a call raises, an `ExceptionGroup` holding the error comes out as soon as
#   the other calls are cancelled and cleaned up;
# - **cancellation**: when the caller cancels `score_group`, it ends cancelled once the calls
#   are cleaned up (when an error and a cancel both happen, either may come out);
#
# **When it ends, and beside other callers**
#
# - **when it ends**: when the last result is in, or the error or cancel plus the cleanup of
#   the cancelled calls: not earlier (no call left running), not later;
# - **several callers at once**, each with its own `score_one`: each call behaves as if alone.
#
# :::
#
# :::{dropdown} Hint: when the caller cancels
#
# A cancel from outside arrives where `score_group` is suspended. At the end of an
# `async with asyncio.TaskGroup()` block, the group treats that `CancelledError` as it treats
# a failed task: it cancels every task it holds, waits until they have all ended, and only
# then lets the `CancelledError` go on to the caller.
#
# :::
#
# The visible test follows the solution.
#
# :::{dropdown} What `asyncio.timeout(2)` does in the visible test
#
# `async with asyncio.timeout(2)` only stops the test if it hangs for 2 s; chapter 05
# introduces it.
#
# :::

# %%
in_flight = {"now": 0, "peak": 0}


async def score_one_slowly(name: str) -> str:
    """Slower for earlier names: finishing order is the reverse of the input order."""
    in_flight["now"] += 1
    in_flight["peak"] = max(in_flight["peak"], in_flight["now"])
    try:
        await asyncio.sleep(0.02 * (5 - int(name.split()[-1])))
    finally:
        in_flight["now"] -= 1
    return f"{name} scored"


# %% tags=["solution", "hide-input"] mystnb={"code_prompt_show": "Show the solution"}
async def score_group(names: list[str], score_one) -> list:
    """Run `score_one(name)` for all names concurrently; results in input order; all or nothing."""
    ### BEGIN SOLUTION
    async with asyncio.TaskGroup() as tg:
        tasks = [tg.create_task(score_one(name)) for name in names]
    return [task.result() for task in tasks]
    ### END SOLUTION


# %% tags=["tests"]
names = [f"sample {i}" for i in range(5)]
in_flight.update(now=0, peak=0)
async with asyncio.timeout(2):
    got = await score_group(names, score_one_slowly)
assert got == [f"sample {i} scored" for i in range(5)], (
    f"the results must follow the order of the names, not the order they finished in; "
    f"got {got!r}")
assert in_flight["peak"] == 5, (
    f"the calls must overlap: at most {in_flight['peak']} of 5 ran at once")

# %% tags=["tests", "hidden-tests", "remove-cell"]
### BEGIN HIDDEN TESTS
from lab_snippets.asyncio_tools import cancel_and_wait


class _Spy:
    def __init__(self, failing: str | None = None) -> None:
        self.now = self.peak = 0
        self.finished: list[str] = []
        self.cancelled: list[str] = []
        self.tasks: list[asyncio.Task] = []
        self.failing = failing
        self.caller = asyncio.current_task()  # a call awaited inline runs in the caller's task

    async def __call__(self, name: str) -> str:
        if asyncio.current_task() is not self.caller:
            self.tasks.append(asyncio.current_task())
        self.now += 1
        self.peak = max(self.peak, self.now)
        try:
            if self.failing is None:  # later names finish first
                await asyncio.sleep(0.02 * (6 - int(name.split()[-1])))
            else:  # one fails at once; the others are far from done (cancelled, or 1 s if never)
                await asyncio.sleep(0.01 if name == self.failing else 1.0)
            if name == self.failing:
                raise ValueError(name)
            self.finished.append(name)
            return name.upper()
        except asyncio.CancelledError:
            self.cancelled.append(name)
            raise
        finally:
            self.now -= 1

    async def clean_up(self) -> None:
        _stuck = await cancel_and_wait(self.tasks, timeout=2)
        assert not _stuck, f"tasks that would not stop when cancelled: {_stuck}"


_names = [f"sample {i}" for i in range(6)]
_spy = _Spy()
try:
    async with asyncio.timeout(3):  # runs score_group in this task on every Python version
        _got = await score_group(_names, _spy)
finally:
    await _spy.clean_up()
assert _spy.peak == len(_names), (
    f"only {_spy.peak} of {len(_names)} calls were in flight at once: start them all before awaiting "
    "any of them (create_task, a TaskGroup or gather; chapter 03)")
assert _got == [n.upper() for n in _names], (
    "the results must follow the order of the names, not the order the calls finished in: keep the "
    "tasks in a list and read their results in that order (chapter 03)")
assert _spy.finished == list(reversed(_names)), "finishing order was the reverse of the input order"

_spy = _Spy(failing="sample 2")
_failure: BaseException | None = None
try:
    async with asyncio.timeout(3):  # runs score_group in this task: no extra loop pass before we look
        await score_group(_names, _spy)
except BaseException as _exc:  # noqa: BLE001 - we inspect whatever came out
    _failure = _exc
    _running_after = [t for t in _spy.tasks if not t.done()]
finally:
    await _spy.clean_up()
assert _failure is not None, (
    "score_group returned normally although a call failed: the failure must propagate to the caller, "
    "not come back as a value (chapter 03)")
assert _running_after == [], (
    f"{len(_running_after)} calls were still running when score_group raised: cancel the others and "
    "wait until they are gone (a TaskGroup does both; chapter 03)")
assert isinstance(_failure, ExceptionGroup) and [type(e) for e in _failure.exceptions] == [ValueError], (
    f"the failure must come out as an ExceptionGroup holding the one ValueError, got {_failure!r} "
    "(a TaskGroup raises exactly that; chapter 03)")
assert sorted(_spy.cancelled) == [n for n in _names if n != "sample 2"] and _spy.finished == [], (
    "the other calls must be cancelled, not allowed to finish (chapter 03)")
async with asyncio.timeout(2):
    assert await score_group([], _Spy()) == [], "no names: return an empty list"

# The caller is cancelled while every call is still running: the calls must be cancelled and
# gone by the time the CancelledError reaches the caller.
_spy = _Spy(failing="none of them")  # every call sleeps 1 s, none fails
_caller = asyncio.create_task(score_group(_names, _spy))
try:
    async with asyncio.timeout(3):
        while _spy.peak < len(_names) and not _caller.done():
            await asyncio.sleep(0.005)
        _caller.cancel()
        _caller_outcome = (await asyncio.gather(_caller, return_exceptions=True))[0]
    _running_after = [t for t in _spy.tasks if not t.done()]
finally:
    await cancel_and_wait([_caller], timeout=2)
    await _spy.clean_up()
assert isinstance(_caller_outcome, asyncio.CancelledError), (
    f"the caller was cancelled, but score_group ended with {_caller_outcome!r}: let the cancellation "
    "propagate (chapter 03)")
assert _running_after == [], (
    f"{len(_running_after)} calls were still running when the cancelled caller got its CancelledError: "
    "when the caller is cancelled, cancel the calls and wait until they are gone (a TaskGroup does "
    "both; chapter 03)")
assert sorted(_spy.cancelled) == _names and _spy.finished == [], (
    "when the caller is cancelled, every call must be cancelled, not left to finish (chapter 03)")


# Generated scenarios (issue 37): the same scenarios through score_group and the reference, on
# virtual time, compared on what the contract names (lab_snippets.scenarios explains the pattern).
import dataclasses as _dc

from hypothesis import strategies as _st

from lab_snippets import scenarios as _sc

_reference = _sc.reference(globals(), "score_group")


@_dc.dataclass(frozen=True)
class _Plan:  # one caller's: each caller of several at once has its own (_sc.Callers)
    names: tuple         # may repeat; the k-th call for a name returns "<name>/<k>"
    calls: tuple         # of _sc.Job: the n-th call of score_one to start behaves as calls[n] (else 1 s)
    cancel_at: float | None = None

    def call(self, n: int) -> _sc.Job:
        return self.calls[n] if n < len(self.calls) else _sc.Job(1)

    def describe(self, who: str) -> str:
        calls = "; ".join(j.describe(f"call {n}") for n, j in enumerate(self.calls))
        _, cancel = _sc.callers_phrase(1, self.cancel_at)
        return (f"{who} calls score_group({list(self.names)!r}, score_one){cancel}; the calls of score_one, "
                f"in the order they start: {calls + '; later ones' if calls else 'each'} take 1 s; the k-th "
                "call for a name returns '<name>/<k>'")


@_st.composite
def _plans(draw):
    ok = _st.builds(_sc.Job, seconds=_st.sampled_from([1, 0, 2, 3]), value=_st.none(),
                    cleanup=_st.sampled_from([0, 1, 3]))
    bad = _st.builds(_sc.Job, seconds=_st.sampled_from([1.25, 0.25]), raises=_st.just(True),
                     cleanup=_st.sampled_from([0, 1]))
    pool = _st.sampled_from(["s1", "s0", "s2", "é"])
    # now and then a crowd, more names than a cap a caller might pick (8, 10, 16, 32, 50, 100):
    # "every call at once"
    crowd = _st.sampled_from([9, 17, 33, 65, 129]).flatmap(lambda n: _st.lists(pool, min_size=n, max_size=n))
    names = draw(_st.one_of(_st.lists(pool, max_size=6), _st.lists(pool, max_size=6), crowd))
    calls = draw(_st.lists(_st.one_of(ok, ok, ok, bad), max_size=min(len(names), 6)))
    return _Plan(names=tuple(names), calls=tuple(calls),
                 cancel_at=draw(_st.sampled_from([None, None, 0.5, 1.5, 2.5])))


def _observe(fn, s: _sc.Callers) -> list:
    async def one_caller(plan: _Plan) -> dict:
        rec, seen = _sc.Recorder(), {}

        async def score_one(name: str) -> str:
            k = seen[name] = seen.get(name, -1) + 1
            return await rec.run(name, _dc.replace(plan.call(len(rec.starts)), value=f"{name}/{k}"))

        return await _sc.call_once(lambda: fn(list(plan.names), score_one), rec, plan.cancel_at)

    return _sc.run_each(one_caller, s)


def _compare_one(me: dict, it: dict, s: _Plan) -> str | None:
    allowed, ev = _sc.fate(it, s.cancel_at, {"raised ExceptionGroup[JobFailed]"})
    problem = _sc.check_ending(me, it, allowed, ev, "score_group", names="score_one call")
    if problem:
        return problem + (" (a TaskGroup raises an ExceptionGroup)" if "raised" in problem[:60] else "")
    if me["kind"] == "returned" and me["value"] != it["value"]:
        return (f"returned {me['value']!r}, expected {it['value']!r}: call score_one once per name (a repeated "
                "name too) and keep the results in the order of the names")
    return _sc.check_starts(me, it, ev, names="score_one call")


_compare = _sc.per_caller(_compare_one)


_sc.differential(score_group, _reference, _sc.several(_plans()), _observe, _compare, what="score_group",
                 examples=60, hint="chapter 03")
### END HIDDEN TESTS

# %% [markdown]
# ## Summary
#
# - `create_task` schedules a body and returns; the body starts at the creator's next
#   suspension (with the default task factory).
# - `gather` returns results in argument order. On the first failure it raises, but the
#   other tasks run on; `return_exceptions=True` puts exceptions in the list instead.
# - The loop keeps a waiting Task alive only through what it schedules or watches (a timer, a
#   ready callback, a socket): a Task waiting on a Future that nothing else holds can be collected mid-flight.
#   Keep a reference until a task is done (a set `background_tasks` plus
#   `task.add_done_callback(background_tasks.discard)`).
# - `TaskGroup` treats its tasks as one unit: a failure cancels the rest, the group waits for
#   them, then raises an `ExceptionGroup`, handled with `except*`.
#
# **What's next.** Chapter 04 stops waiting for *all* of them: `asyncio.wait` and
# `as_completed` hand you each piece of work as soon as it is finished.
#
# ## In slime
#
# slime's rollout makes Tasks at two levels: one per sample within a prompt group, and one
# per group within a rollout. Read each quote with this chapter's two questions: what happens
# to the others when one fails, and where each Task's reference lives.
# The [source inventory](../book/reference/inventory.md) lists every `create_task` in slime;
# ask the second question of each. After the first quote, a run asks it the first question.

# %% tags=["remove-input"]
from lab_snippets.sites import show_call_site

show_call_site("03")

# %% [markdown]
# ### A run: one failing sample in a group of eight
#
# A model of the first quote, written for this page: eight samples in a group (the
# `--n-samples-per-prompt 8` of slime's example scripts), one task per sample, one `gather`
# without `return_exceptions`, and the group itself run as a task, as `state.pendings` holds
# it. Sample 3's call fails after 0.02 s; the other seven need 0.1 s. Once the group's task
# has ended, the cell counts the sample tasks still running: `asyncio.all_tasks()` returns the
# loop's unfinished tasks, and `t.get_coro().__name__` names the function each one runs.
#
# Predict: when the group's task has ended, how many of the 8 samples are still generating?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
async def generate_and_rm(i: int) -> str:
    await asyncio.sleep(0.02 if i == 3 else 0.1)  # generation, then the reward call
    if i == 3:
        raise ConnectionError("sample 3: the reward call failed")
    return f"sample {i}"


async def generate_and_rm_group(group_size: int) -> list[str]:
    tasks = [asyncio.create_task(generate_and_rm(i)) for i in range(group_size)]
    return await asyncio.gather(*tasks)


group_task = asyncio.create_task(generate_and_rm_group(8))
await asyncio.gather(group_task, return_exceptions=True)  # until the group's task ends
siblings = [t for t in asyncio.all_tasks()
            if t.get_coro().__name__ == "generate_and_rm"]
print("the group's task ended with", repr(group_task.exception()))
print(f"samples still generating at that moment: {len(siblings)} of 8")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: failed-group-keeps-generating
assert isinstance(group_task.exception(), ConnectionError), (
    f"the group ended with sample 3's own error: {group_task.exception()!r}")
assert len(siblings) == 7, f"the seven siblings run on after their group failed: {len(siblings)}"
await asyncio.wait(siblings, timeout=2)  # let them end: nothing left behind
assert [t.done() and not t.cancelled() for t in siblings] == [True] * 7, "each ran to its end"
print("✓ the group failed at sample 3's error; its 7 other samples generated on to their end")

# %% [markdown]
# :::{dropdown} Why
#
# The group failed at 0.02 s, and seven samples went on generating for a result nobody will
# read: 7 × 0.08 s, some 0.56 s of generation wasted. In slime each of them also holds a permit of the
# semaphore that limits generation (chapter 06), so the samples of other groups wait behind
# them. Had the group used a `TaskGroup`, as Exercise 3.1 asks, the seven would have been
# cancelled before the group's task ended.
#
# :::
#
# :::{dropdown} Where the error goes
#
# The group's task failed with sample 3's own `ConnectionError` (not an `ExceptionGroup`: it
# is `gather`'s, not a `TaskGroup`'s), and at that moment each of the seven other samples had
# about 0.08 s of its 0.1 s still to go. The semaphore that limits generation is taken in
# `generate_and_rm` (quoted in chapter 06). The group's error comes out of `task.result()` in the rollout loop that
# chapter 04 quotes. With a `TaskGroup` the check above would find no sample still running.
#
# :::


# %% tags=["remove-input"]
show_call_site("03b")

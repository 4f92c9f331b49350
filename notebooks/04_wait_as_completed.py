# %% [markdown]
# # 04 · wait and as_completed: handle finished work first
# *wait 与 as_completed：先处理已经完成的工作*
#
# **The question.** You have many jobs in flight (requests to a server, say), and they finish
# in no particular order.
# How do you handle each one as soon as it is done, keep the number in flight topped up, and
# stop when you have enough, without waiting for the slowest?
#
# **You will**
# 1. predict what becomes of the jobs still running when `asyncio.wait` returns at its
#    timeout, then compare when `gather` and `as_completed` put the first result in your hands;
# 2. stop those left running: cancel them, then wait for them;
# 3. build the loop slime's rollout uses: `wait(FIRST_COMPLETED)` over a pending set that is
#    refilled as work finishes, and measure it against waiting batch by batch;
# 4. see what slime's loop leaves running when one group fails.
#
# **Needs** chapters 02 and 03 · about 70 minutes
#
# **New to the course?** [How to read an experiment](../book/reading_guide.md) explains the
# timelines, the helpers and the folded checks; the [glossary](../book/glossary.md) gives the
# words the chapters share. The first cell, folded, imports what the page uses and defines
# `job(name, seconds, tl)`, the stand-in for one job: it waits `seconds` and returns
# its name, and notes its start, its end or its cancellation on `tl`, a `Timeline` (the
# course's recorder of named moments and spans, which the figures draw).

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the setup"}
import asyncio
import math
import sys
import time
import types

import matplotlib.pyplot as plt

from lab_snippets.measure import ainterleaved
from lab_snippets.timeline import Timeline, figure_style

figure_style()


async def job(name: str, seconds: float, tl: Timeline):
    tl.mark(f"{name} starts")
    try:
        with tl.span(name):
            await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        tl.mark(f"{name} cancelled")
        raise
    tl.mark(f"{name} ends")
    return name


# %% [markdown]
# ## Predict: when `wait` times out, do the jobs still running stop?
#
# Four jobs take 0.16, 0.14, 0.06 and 0.04 s, started in that order (`start_four`
# below). `asyncio.wait(tasks, timeout=0.1)` waits at most 0.1 s and returns two sets of
# {term}`tasks <task>`: `done` and `pending`. The cell prints the two sets, waits 0.1 s more,
# and then prints each moment the jobs noted, in seconds since the start.
#
# Predict before you open the answer: which jobs are in `done`, and are the two in
# `pending` stopped when `wait` returns, or do they run on?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
def start_four(tl: Timeline) -> list[asyncio.Task]:
    return [asyncio.create_task(job(f"job {i}", s, tl))
            for i, s in enumerate([0.16, 0.14, 0.06, 0.04])]


tl = Timeline()
done, pending = await asyncio.wait(start_four(tl), timeout=0.1)
tl.mark("wait returned")
print("done:", sorted(task.result() for task in done), "| pending:", len(pending))
await asyncio.sleep(0.1)  # look again a little later
for event in tl.events:
    print(f"{event.at:.2f} s  {event.name}")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: wait-timeout-cancels-nothing
assert sorted(task.result() for task in done) == ["job 2", "job 3"]
assert tl.order("wait returned", "job 1 ends") and tl.order("wait returned", "job 0 ends"), (
    "the two pending jobs ran to their end after wait returned")
assert not [name for name in tl.names() if name.endswith("cancelled")], "wait cancelled nothing"
print("✓ wait returned with jobs 2 and 3 done; 0 and 1 were not cancelled and ran to their end")

# %% [markdown]
# :::{dropdown} Why
#
# `wait` returned at its timeout with jobs 2 and 3 in `done` and jobs 0 and 1 in
# `pending`, and those two ran to their end at 0.14 and 0.16 s: the timeout limits how long
# *you* wait, not how long the work runs. `asyncio.wait_for(aw, timeout)` and
# `asyncio.timeout()` are different: on timeout they *do* cancel what they wrap (chapter 05).
# `done` is a set, with no order; the cell sorts it.
#
# :::
#
# ## `gather` or `as_completed`: when is the first result in your hands?
#
# `wait` with a timeout hands you what is done by then. Two other ways hand you every
# result. `gather` (chapter 03) returns them all at once, in argument order. `as_completed(tasks)`
# gives you as many awaitables as there are tasks, here one per turn of a `for` loop: the
# first one you await returns the first result to finish, the second the second, and so on.
# The folded helper `collect_each_way` runs each way on its own four jobs and prints when
# the first result was in your hands (for `gather`, the moment it returned; for
# `as_completed`, the moment the loop had its first result) and the order you got them in.
#
# The four jobs are the first section's: job 0 takes 0.16 s, job 1 0.14 s, job 2 0.06 s and
# job 3 0.04 s. Predict, for each way: when is the first result in your hands, and in what
# order are the results handed back?

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the helper that runs each way and prints the table"}
async def collect_each_way(ways: dict) -> dict[str, dict]:
    """Each way of collecting on a fresh Timeline: what it handed back, in what order, and when
    the first result was in hand (the moment the call returned, or the loop's first result)."""
    rows = {}
    for way, collect in ways.items():
        tl = Timeline()
        handed = await collect(tl)
        tl.mark("returned")
        at = {e.name: e.at for e in tl.events}
        first = min([at[n] for n in at if n.startswith("handled")] or [at["returned"]])
        rows[way] = {"handed": handed, "first": first, "tl": tl}
    print(f"{'way':<14} {'first result in hand':>21}  handed back")
    for way, row in rows.items():
        handed = ", ".join(h.removeprefix("job ") for h in row["handed"])
        print(f"{way:<14} {row['first']:>19.2f} s  jobs {handed}")
    return rows


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
async def with_gather(tl: Timeline) -> list[str]:
    return await asyncio.gather(*start_four(tl))


async def with_as_completed(tl: Timeline) -> list[str]:
    handled = []
    for next_done in asyncio.as_completed(start_four(tl), timeout=2):
        handled.append(await next_done)
        tl.mark(f"handled {handled[-1]}")
    return handled


rows = await collect_each_way({"gather": with_gather,
                               "as_completed": with_as_completed})

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: as-completed-yields-in-finishing-order
assert rows["as_completed"]["handed"] == ["job 3", "job 2", "job 1", "job 0"], (
    "as_completed handed the results over in finishing order")
assert rows["as_completed"]["tl"].order("handled job 3", "job 0 ends"), (
    "the first result was handled while the slowest still ran")
assert rows["gather"]["handed"] == [f"job {i}" for i in range(4)], "gather: argument order"
assert rows["as_completed"]["first"] < rows["gather"]["first"], rows
print("✓ as_completed handed over the first result before gather returned, in finishing order;",
      "gather in argument order")

# %% [markdown]
# :::{dropdown} Why
#
# `gather` handed back everything when the slowest was done, at about 0.16 s, in argument
# order. `as_completed` handed the results over in finishing order, here the reverse of the
# list: the first awaitable it hands out returns whichever result comes first, not one
# task's. Each `await` returned as soon as that result existed: the first was in hand after
# about 0.04 s while job 0 still had 0.12 s to go. Handling (logging, scoring, updating a
# progress bar) starts with the first result instead of the last.
#
# :::
#
# When you use `as_completed` yourself, two details matter. The loop passes `timeout=2` so
# it cannot hang; on timeout `as_completed` raises `TimeoutError` but, like `wait`, does not
# cancel anything. And a plain `for` loop over it gets *new* coroutines, not your tasks, so
# put in each result what tells you which job it was: here the name. Python 3.13 added `async for`, which gives back the
# tasks themselves (the note below).
#
# ## How do you stop the ones still running?
#
# The `pending` set that `wait` returns is yours to deal with. The cell below runs the `wait`
# row again, then calls `cancel()` on each pending task and awaits them; the printed marks show
# which jobs ended, which were cancelled, and where "pending cancelled and awaited" falls.

# %%
tl = Timeline()
done, pending = await asyncio.wait(start_four(tl), timeout=0.1)
for task in pending:
    task.cancel()
await asyncio.gather(*pending, return_exceptions=True)
tl.mark("pending cancelled and awaited")
print(tl.names())

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: cancel-then-await-stops-pending
assert all(t.cancelled() for t in pending)
assert tl.order("job 1 cancelled", "pending cancelled and awaited")
assert not any(n in tl.names() for n in ("job 0 ends", "job 1 ends"))
print("✓ the pending jobs were cancelled and had finished their cleanup before we went on")

# %% [markdown]
# `cancel()` only asks; awaiting the cancelled tasks (here with `gather`, which with
# `return_exceptions=True` hands back their `CancelledError`s instead of raising one) is what
# lets each one's cleanup run, its "cancelled" mark, before the next line. Chapter 05 looks at
# what a cancel does inside the task.

# %% [markdown]
# :::{dropdown} Going further: `as_completed` gives back your own tasks (Python 3.13)
#
# Since Python 3.13, `asyncio.as_completed` is also an *asynchronous* iterator:
# `async for task in asyncio.as_completed(tasks)` yields the original task objects in finishing
# order, so you can look a task up in a dict (task → input) instead of carrying the input in
# the result. The plain `for` form still works as before. On 3.11 and 3.12 the `async for` form
# does not exist, and what you get from the plain form are wrapper coroutines.
#
# In the folded cell below, job 1 (0.02 s) finishes first; on 3.13 and later what comes
# back is its own task, the key of `input_of`.
#
# :::

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the experiment"}
tl = Timeline()
tasks = [asyncio.create_task(job(f"job {i}", d, tl))
         for i, d in enumerate([0.06, 0.02])]
input_of = {task: i for i, task in enumerate(tasks)}
if sys.version_info >= (3, 13):
    finishing = asyncio.as_completed(tasks, timeout=2)
    finished_inputs = [input_of[task] async for task in finishing]
    print("async for yields the original tasks:", finished_inputs)
    assert finished_inputs == [1, 0]
else:
    yielded = list(asyncio.as_completed(tasks, timeout=2))
    same_objects = [aw in input_of for aw in yielded]
    results = [await aw for aw in yielded]
    print("Python < 3.13: as_completed yields new awaitables, not the tasks:",
          same_objects, results)
    assert same_objects == [False, False] and results == ["job 1", "job 0"]

# %% [markdown]
# ## Measure: how long does each way take to keep 8 groups?
#
# An RL rollout needs a batch of good sample groups. Some groups come back useless (for
# example every sample got the same reward) and are dropped, so the rollout cannot know in
# advance how many groups to start. Below are two ways to keep 8 groups with at most 4 in
# flight at once (call those 4 places *slots*):
#
# - `rollout_batched`: start 4 groups, `gather` them, keep the good ones, repeat;
# - `rollout_refill`: keep a pending set of 4 tasks; `asyncio.wait(pending,
#   return_when=asyncio.FIRST_COMPLETED)` returns as soon as at least one of them is done;
#   handle each finished group (keep it or drop it), top the set up again, and go round until
#   8 are kept; its `finally` cancels and awaits what is left, as in the section before.
#
# Groups 0, 4, 8, ... take 0.12 s, the others 0.03 s, and the filter drops groups 3, 7, 11,
# .... In the code below, `group(group_id, tl)` is one group, `keep_group(group_id)` is the
# filter, `IN_FLIGHT` is 4 and `TARGET` is 8. The folded cell defines them, and the code that
# times the two rollouts and draws them.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the groups, the timing and the plotting code"}
DURATIONS = [0.12, 0.03, 0.03, 0.03]
IN_FLIGHT = 4
TARGET = 8


def group_duration(group_id: int) -> float:
    return DURATIONS[group_id % len(DURATIONS)]


def keep_group(group_id: int) -> bool:
    """The stand-in for slime's dynamic filter: every fourth group is useless."""
    return group_id % 4 != 3


async def group(group_id: int, tl: Timeline) -> int:
    """One group of samples: a job on the timeline; returns its id."""
    await job(f"group {group_id}", group_duration(group_id), tl)
    return group_id


last_run: dict[str, tuple[list[int], Timeline]] = {}  # name -> (kept, timeline)


async def one_rollout(name: str) -> None:
    """One run of a rollout, bounded, keeping what it kept and its timeline."""
    rollout = {"batched": rollout_batched, "refill": rollout_refill}[name]  # the two cells below
    tl = Timeline()
    last_run[name] = (await asyncio.wait_for(rollout(tl), timeout=3), tl)


async def time_both():
    """The two rollouts in turn, three times each: each one's best time."""
    return await ainterleaved({"batched": lambda: one_rollout("batched"),
                               "refill": lambda: one_rollout("refill")}, k=3)


def by_slot(tl: Timeline) -> tuple[Timeline, list[tuple[int, float, float, int]]]:
    """The groups' spans, each moved to the first slot free when it started (a group holding its
    slot drawn as running, one the filter drops as failed), and each one's slot, start, end, id."""
    slotted = Timeline()
    slotted.t0 = tl.t0
    free_at = [0.0] * IN_FLIGHT
    ids = []
    for s in sorted((s for s in tl.spans if s.label.startswith("group")), key=lambda s: s.start):
        slot = next(k for k in range(IN_FLIGHT) if free_at[k] <= s.start)
        free_at[slot] = s.end
        group_id = int(s.label.split()[1])
        if s.state == "running":  # a group only sleeps: it holds its slot while it waits
            state = "running" if keep_group(group_id) else "failed"
        else:
            state = s.state
        slotted.add(f"slot {slot}", tl.t0 + s.start, tl.t0 + s.end, state=state)
        ids.append((slot, s.start, s.end, group_id))
    return slotted, ids


def draw_slots(tl: Timeline, ax, meanings: dict[str, str]) -> None:
    """One run drawn slot by slot on `ax`, each bar carrying its group's id; a bar too short to
    hold it (a group cancelled as it started) has its id written just after its end."""
    slotted, ids = by_slot(tl)
    slotted.plot("", ax=ax, lanes=[f"slot {k}" for k in range(IN_FLIGHT)], meanings=meanings)
    for slot, start, end, group_id in ids:
        if end - start >= min(DURATIONS) / 2:
            ax.text((start + end) / 2, slot, str(group_id), ha="center", va="center", fontsize=7)
        else:  # a sliver: its id outside, just after its end
            ax.text(end, slot, f" {group_id}", ha="left", va="center", fontsize=7)


def draw_runs(batched_tl: Timeline, refill_tl: Timeline, batched_elapsed: float,
              refill_elapsed: float) -> None:
    """The two runs slot by slot: the batches on top, the refill loop below."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 4.4), sharex=True,
                                      layout="constrained")
    for ax, run in ((top, batched_tl), (bottom, refill_tl)):
        draw_slots(run, ax, meanings={"running": "holding a slot (awaiting its reply)",
                                      "failed": "dropped by the filter"})
    top.set_title(f"Batches of {IN_FLIGHT} with gather: {batched_elapsed:.2f} s")
    bottom.set_title(f"wait(FIRST_COMPLETED) and refill: {refill_elapsed:.2f} s")
    top.set_xlabel("")


def occupied_share(tl: Timeline) -> float:
    """The groups' time over the 4 slots' time, first start to last end."""
    return sum(s.duration for s in tl.spans) / (IN_FLIGHT * tl.total())


# %%
async def rollout_batched(tl: Timeline) -> list[int]:
    kept: list[int] = []
    next_id = 0
    while len(kept) < TARGET:
        batch = range(next_id, next_id + IN_FLIGHT)
        next_id += IN_FLIGHT
        finished = await asyncio.gather(*(group(g, tl) for g in batch))
        kept += [group_id for group_id in finished if keep_group(group_id)]
    return kept[:TARGET]


# %%
async def rollout_refill(tl: Timeline) -> list[int]:
    kept: list[int] = []
    pending: set[asyncio.Task] = set()  # the groups in flight
    next_id = 0
    try:
        while len(kept) < TARGET:
            while len(pending) < IN_FLIGHT:  # top up
                pending.add(asyncio.create_task(group(next_id, tl)))
                next_id += 1
            done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                pending.discard(task)
                group_id = task.result()
                if keep_group(group_id) and len(kept) < TARGET:
                    kept.append(group_id)
        return kept
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)


# %% [markdown]
# Predict the two times: how long does each rollout take to keep 8 groups, about 0.12, 0.15,
# 0.24 or 0.36 s? The answer runs each rollout three times, in turn, prints each one's best
# time and how much of the 4 slots' time held a group, and draws both last runs.
#
# The chart has one lane per slot, not per group: each group is drawn in the first slot
# free when it started, and its bar carries its id, so one lane can hold a fast group and
# then a slow one. A group that only awaits its reply is drawn blue here, "holding a slot",
# not the light green "waiting" of the reading guide: what matters on this chart is that the
# slot is taken. Chapter 06 draws a semaphore's permits the same way.

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the answer"}
runs = await time_both()  # each rollout three times, in turn
batched_elapsed, refill_elapsed = runs.best("batched"), runs.best("refill")  # best of 3
batched_kept, batched_tl = last_run["batched"]  # what the last run kept, and its timeline
refill_kept, refill_tl = last_run["refill"]
occupied = {"batched": occupied_share(batched_tl), "refill": occupied_share(refill_tl)}

for name, elapsed, kept in (("batched", batched_elapsed, batched_kept),
                            ("refill", refill_elapsed, refill_kept)):
    print(f"{name:<8} {elapsed:.3f} s | slots holding a group {occupied[name]:.0%}",
          f"| kept {kept}")
draw_runs(batched_tl, refill_tl, batched_elapsed, refill_elapsed)  # one lane per slot

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: refill-beats-batches
assert len(batched_kept) == len(refill_kept) == TARGET
assert refill_tl.max_overlap(state=None) <= IN_FLIGHT, "never more than IN_FLIGHT groups at once"
# Batches keep 3 of every 4 groups, so 8 need 3 batches, each as slow as its slowest group: a floor
# no batched run can beat, however quiet the machine (a sleep never ends early).
batched_floor = math.ceil(TARGET / sum(map(keep_group, range(IN_FLIGHT)))) * max(DURATIONS)
# floor: a sleep never ends early
assert batched_elapsed >= 0.95 * batched_floor, "each batch waited for its slowest group"
# The refill loop needs about 0.15 s of sleeps against the batches' 0.36: compared with the batches'
# time measured beside it (interleaved, best of 3), not with a constant a busy machine could break.
assert refill_elapsed < 0.75 * batched_elapsed, "the refill loop does not wait for each batch's slowest"
assert any(s.state == "cancelled" for s in refill_tl.spans), "leftover groups were cancelled at the end"
print("✓ the refill loop kept as many groups in less time, never above the limit")
assert occupied["refill"] >= 1.2 * occupied["batched"], "the refill loop kept its slots occupied longer"
print("✓ the refill loop kept its slots occupied a larger share of the time")

# %% [markdown]
# :::{dropdown} Why
#
# The batches cannot finish in less than 0.36 s: the filter keeps 3 groups of every 4, so 8
# kept groups take 3 batches, and each batch waits 0.12 s for its slow group. The refill loop
# has its 8 groups after about 0.15 s: a slow group holds one slot while the other slots take
# one fast group after another.
#
# The chart shows it, one lane per slot. A blue bar is a group holding its slot (the groups
# sleep: nothing computes). Orange is a group the filter dropped, grey a group cancelled when the batch was full; a group cancelled
# as it started is a sliver, with its id just after it. In the top panel each slot that ran a
# fast group stays empty until its batch's slow group ends, so the slots hold a group a little
# under half of the time; in the bottom panel a freed slot gets a new group at once, and all
# four stay occupied. That is also why the refill list of kept groups is not in id order.
#
# Not all of the refill loop's slot time is useful: like the batches, it runs groups the
# filter drops, and it cancels the groups still in flight when the batch is full (grey). The
# idle time it saves is far larger than that waste.
#
# Each time printed is that approach's best of three runs, the two run in turn, so a busy
# moment on the machine slows both alike; the check compares the two times, not a fixed number
# of seconds.
#
# :::

# %% [markdown]
# ## Before the exercise: a deadline for each job
#
# Exercise 4.1 gives each job a deadline, counted from its own start. `wait`'s `timeout`
# bounds the wait, not the work (the first Predict), so you keep the deadline yourself, on the
# loop's clock (`loop.time()`): give `wait` the time left until it, and cancel the job if it
# is still pending then. First, one job with a deadline.
# `slow_to_stop` would run 1 s and, once cancelled, takes 0.03 s to clean up (closing its
# connection, say); its deadline is 0.05 s after its start. The cell gives `wait` the time
# left until the deadline, cancels the job if it is still pending then, and waits for it
# again, for up to 1 s.

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


# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the plotting code"}
def draw_one_deadline(tl: Timeline) -> None:
    """The run below, drawn: the job waits until its deadline, then cleans up."""
    moment = {e.name: e.at for e in tl.events}
    drawn = Timeline()
    drawn.t0 = tl.t0
    cancelled_at, gone_at = moment["deadline: cancel job A"], moment["job A gone"]
    drawn.add("job A", tl.t0, tl.t0 + cancelled_at, state="waiting")
    drawn.add("job A", tl.t0 + cancelled_at, tl.t0 + gone_at, state="cleanup")
    drawn.plot("Cancelled at its own deadline, pending until its cleanup ends",
               meanings={"waiting": "before its deadline (awaiting its work)",
                         "cleanup": "cancelled, cleaning up (still pending)"})
    plt.show()


# %% [markdown]
# Predict: the job is cancelled at its deadline, 0.05 s. When does the second `wait` return
# it in `done`: at once, at about 0.08 s, or after its 1 s? And what does its `result()` do
# then? The answer prints each moment in seconds since the start, and draws the run.

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
JOB_TIMEOUT = 0.05
loop = asyncio.get_running_loop()
tl = Timeline()
task = asyncio.create_task(slow_to_stop("job A", tl))
deadline = loop.time() + JOB_TIMEOUT  # counted from the job's own start
done, pending = await asyncio.wait({task}, timeout=deadline - loop.time())
if task in pending:  # still running at its deadline
    task.cancel()
    tl.mark("deadline: cancel job A")
done, pending = await asyncio.wait(pending, timeout=1)
tl.mark(f"wait returned job A in done (cancelled: {task.cancelled()})")
try:
    task.result()
except asyncio.CancelledError:
    tl.mark("job A's result() raised CancelledError")
for event in tl.events:
    print(f"{event.at:.2f} s  {event.name}")
draw_one_deadline(tl)  # folded above: the plotting code

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert tl.order("deadline: cancel job A", "job A gone", "wait returned job A in done (cancelled: True)",
                "job A's result() raised CancelledError"), tl.names()
print("✓ job A was cancelled at its deadline, came back in done only when its cleanup was over,",
      "and its result() raised CancelledError")

# %% [markdown]
# :::{dropdown} Why
#
# The first `wait` returned at the deadline, 0.05 s, because its `timeout` was the time left
# until then, and job A was still in `pending`, so the cell cancelled it. The second `wait`
# returned it in `done` only when its cleanup was over, 0.03 s later, at 0.08 s: until then a
# cancelled job is still running, and still holds its slot (item 4 of the exercise). In
# `done` it is a cancelled task with no result: its `result()` raises `CancelledError`, so a
# loop that reads every task in `done` must remember which ones it cancelled.
#
# :::
#
# For one job, `asyncio.wait_for(task, 0.05)` would do this: cancel it at its deadline, wait
# until it is gone, and raise `TimeoutError` (chapter 05). The exercise's loop waits on
# several jobs at once, each with its own deadline, so `wait`'s `timeout` is the time left
# until the soonest one. The cell below runs that loop on two jobs, the bookkeeping
# Exercise 4.1 needs.
#
# Two jobs start 0.01 s apart, each with a 0.05 s deadline. The loop keeps two collections:
#
# - `deadline_of`: the jobs it still times, each with its deadline;
# - `pending`: the jobs not gone yet, as `wait` returns them.
#
# Each turn of the loop has two steps.
#
# 1. Wait. `soonest` is the nearest deadline still timed (or 1 s from now, once none is
#    left). `wait` gets the time left until it, never less than 0, so it returns when a job
#    ends or when that deadline comes, whichever is first.
# 2. Cancel. Each job past its deadline is cancelled and removed from `deadline_of`. The loop
#    goes over a copy of `deadline_of`, because it deletes from it as it goes.
#
# Predict: job A is cancelled at its deadline, 0.05 s. When job B's deadline comes, 0.01 s
# later, how many jobs are still in `pending`, 1 or 2?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
tl = Timeline()  # its clock starts as job A starts
job_a = asyncio.create_task(slow_to_stop("job A", tl), name="job A")
deadline_of = {job_a: loop.time() + JOB_TIMEOUT}  # the jobs not cancelled yet
await asyncio.sleep(0.01)  # job B starts 0.01 s after job A
job_b = asyncio.create_task(slow_to_stop("job B", tl), name="job B")
deadline_of[job_b] = loop.time() + JOB_TIMEOUT  # each job's own deadline
pending = set(deadline_of)
while pending:
    # no deadline left: wait at most 1 s
    soonest = min(deadline_of.values(), default=loop.time() + 1)
    # return when a job ends or when the soonest deadline comes, whichever is first
    done, pending = await asyncio.wait(pending, timeout=max(0.0, soonest - loop.time()),
                                       return_when=asyncio.FIRST_COMPLETED)
    for task in done:
        tl.mark(f"{task.get_name()} in done (cancelled: {task.cancelled()})")
    for task, deadline in list(deadline_of.items()):  # a copy: we delete as we go
        if deadline <= loop.time():  # past its deadline: cancel it, stop timing it
            task.cancel()
            del deadline_of[task]
            tl.mark(f"{task.get_name()}'s deadline: cancel it; {len(pending)} pending")
for event in tl.events:
    print(f"{event.at:.2f} s  {event.name}")

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert tl.order("job A's deadline: cancel it; 2 pending", "job B's deadline: cancel it; 2 pending",
                "job A gone", "job B gone"), tl.names()
assert tl.order("job A gone", "job A in done (cancelled: True)"), tl.names()

# %% [markdown]
# :::{dropdown} Why
#
# Two. A cancelled job stays in `pending` until its cleanup is over, so job A, cancelled at
# 0.05 s, is still one of the 2 pending when job B's deadline comes at 0.06 s.
#
# :::

# %% [markdown]
# ## Exercise 4.1 · The first results, each job with a deadline
#
# Implement `first_results(start_work, wanted, limit, job_timeout=None)`:
#
# 1. `start_work(i)` returns a coroutine for job `i` (0, 1, 2, ... in that order);
# 2. keep `limit` jobs in flight while results are wanted, **never more**; start the next
#    the moment a slot frees;
# 3. return the results of the first `wanted` jobs **to finish**, in finishing order;
# 4. a job still running `job_timeout` seconds after *its own* start is cancelled
#    while the others run on; it gives no result and holds its slot until it is gone;
# 5. before returning, cancel the jobs in flight and wait until they are gone; the same when
#    a job raises (raise its error, not an `ExceptionGroup`) and when the caller cancels you.
#
# Concurrent callers must not disturb each other.
#
# :::{dropdown} Hint: what of cancelling this needs
#
# Cancelling is chapter 05's subject; this exercise needs only what this page shows:
# `task.cancel()` asks a task to stop, awaiting the task (here with `gather`) waits until its
# cleanup is over, and a `finally` like `rollout_refill`'s covers returning, raising and being
# cancelled alike: it is all item 5 asks. A job's error comes out of `task.result()` as it
# was raised.
#
# Items 1 to 3 and 5 first: `rollout_refill` with `limit` in place of `IN_FLIGHT`, `wanted`
# in place of `TARGET` and no filter passes the first visible test. Then the deadlines (item
# 4): `asyncio.wait`'s `timeout` can be the time left until the soonest one (the two-job loop
# under the deadline run); a job you cancelled stays in `pending` until it is gone, and then its
# `task.result()` raises `CancelledError` (the deadline run above), so keep a set of the jobs
# you cancelled and take no result from them.
#
# :::
#
# :::{dropdown} What the grader checks
#
# Graded, on many generated runs (`wanted` and `limit` from 1 up; with and without a
# `job_timeout`; jobs that take any time, several that finish at the same moment, two that
# return the same value, jobs that never finish, jobs that raise (a `TimeoutError` of their
# own too), jobs that take a while to clean up once cancelled):
#
# - **in flight**: never more than `limit` jobs at once, and `limit` of them as long as more
#   results are wanted; jobs start in order 0, 1, 2, ..., each the moment a slot frees, not
#   later;
# - **deadline per job** (`None`, the default, sets none): each job is cancelled exactly
#   `job_timeout` seconds after its own start if it is still running then, not earlier and not
#   later, however many other jobs finish meanwhile; it gives no result and does not end `first_results`; it
#   counts as in flight until its cleanup is over, and its slot goes to the next job then;
# - **results**: exactly `wanted` of them, those of the first jobs to finish, in finishing order
#   (jobs that finish at the same moment in any order; the same value twice counts twice);
# - **errors**: when a job raises before `wanted` results are in, `first_results` raises that
#   error itself (not an `ExceptionGroup` around it) as soon as the job has raised and the
#   others are cleaned up;
# - **cancellation**: when the caller cancels `first_results` (once, while it still waits for
#   results), it ends cancelled once the jobs in flight are cleaned up;
# - **when it ends**: the moment the last result (or the error, or the cancel) is in, plus the
#   time the cancelled jobs take to clean up: not earlier, not later; no job is left running;
# - **several callers at once**, each with its own `start_work`: each call behaves as if alone.
#
# :::
#
# The visible test below shows two runs, one with a deadline.

# %%
async def fetch_job(i: int) -> str:
    await asyncio.sleep(0.5 if i % 3 == 0 else 0.01)
    return f"job {i}"


# %% tags=["solution", "hide-input"] mystnb={"code_prompt_show": "Show the solution"}
async def first_results(start_work, wanted: int, limit: int, job_timeout: float | None = None) -> list:
    """Results of the first `wanted` jobs to finish, never more than `limit` in flight, none
    running longer than `job_timeout` seconds."""
    ### BEGIN SOLUTION
    loop = asyncio.get_running_loop()
    results: list = []
    pending: set[asyncio.Task] = set()
    deadline_of: dict[asyncio.Task, float] = {}  # the jobs not yet timed out
    timed_out: set[asyncio.Task] = set()  # cancelled, but in flight until they are gone
    next_job = 0
    try:
        while len(results) < wanted:
            while len(pending) < limit:
                task = asyncio.create_task(start_work(next_job))
                pending.add(task)
                next_job += 1
                if job_timeout is not None:
                    deadline_of[task] = loop.time() + job_timeout
            soonest = min(deadline_of.values(), default=None)
            left = None if soonest is None else max(0.0, soonest - loop.time())
            done, pending = await asyncio.wait(pending, timeout=left,
                                               return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                deadline_of.pop(task, None)
                if task in timed_out:
                    timed_out.discard(task)  # gone: no result, and its slot is free
                elif len(results) < wanted:
                    results.append(task.result())
            for task, deadline in list(deadline_of.items()):
                if deadline <= loop.time():
                    task.cancel()
                    timed_out.add(task)
                    del deadline_of[task]
        return results
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    ### END SOLUTION


# %% tags=["tests"]
async with asyncio.timeout(2):
    got = await first_results(fetch_job, wanted=4, limit=3)
assert len(got) == 4 and len(set(got)) == 4, (
    f"wanted=4: the results of 4 different jobs expected, got {got!r}")
assert "job 0" not in got, "job 0 is slow: faster jobs started after it finish first"
# With job_timeout=0.1, job 0 (0.5 s) is cancelled at 0.1 s; job 4 takes its slot.
async with asyncio.timeout(2):
    got = await first_results(fetch_job, wanted=3, limit=2, job_timeout=0.1)
assert got == ["job 1", "job 2", "job 4"], (
    "job 0 (0.5 s) is still running at its deadline (job_timeout=0.1): it is "
    "cancelled, gives no result, and its slot goes to job 4; expected "
    f"['job 1', 'job 2', 'job 4'], got {got!r}")
leftovers = [t for t in asyncio.all_tasks()
             if t is not asyncio.current_task() and "fetch_job" in repr(t)]
assert leftovers == [], "no job may be left running"

# %% tags=["tests", "hidden-tests", "remove-cell"]
### BEGIN HIDDEN TESTS
from lab_snippets.asyncio_tools import cancel_and_wait


class _Jobs:
    """Job i takes 1 s if i is a multiple of 4, else 0.02 s; records every event in order."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.now = self.peak = 0
        self.tasks: list[asyncio.Task] = []
        self.caller = asyncio.current_task()  # a job awaited inline runs in the caller's task

    async def __call__(self, i: int) -> str:
        if asyncio.current_task() is not self.caller:
            self.tasks.append(asyncio.current_task())
        self.now += 1
        self.peak = max(self.peak, self.now)
        self.events.append(f"start {i}")
        try:
            await asyncio.sleep(1.0 if i % 4 == 0 else 0.02)
            self.events.append(f"end {i}")
            return f"result {i}"
        except asyncio.CancelledError:
            self.events.append(f"cancel {i}")
            raise
        finally:
            self.now -= 1

    async def clean_up(self) -> None:
        _stuck = await cancel_and_wait(self.tasks, timeout=2)
        assert not _stuck, f"tasks that would not stop when cancelled: {_stuck}"


# With limit 4: jobs 0-3 start, 1-3 finish first; 4-6 fill the freed slots and 5, 6 finish next.
# Job 5 cannot start before one of 1-3 has finished, so the two waves are ordered by cause.
_jobs = _Jobs()
try:
    try:
        async with asyncio.timeout(3):  # runs first_results in this task: we look right after it returns
            _got = await first_results(_jobs, wanted=5, limit=4)
    except TimeoutError:
        _got = None
    _running_after = [t for t in _jobs.tasks if not t.done()]
    _cancelled_not_done = [t for t in _running_after if t.cancelling()]
finally:
    await _jobs.clean_up()
assert _jobs.peak <= 4, (
    f"{_jobs.peak} jobs were in flight at once with limit 4: start a new job only when one has "
    "finished (chapter 04)")
assert _jobs.peak == 4, (
    f"only {_jobs.peak} jobs were in flight at once with limit 4: keep `limit` jobs running "
    "side by side (chapter 04)")
assert "start 4" in _jobs.events and "end 0" not in _jobs.events[:_jobs.events.index("start 4")], (
    "a freed slot must be refilled at once, not after the whole batch has finished: wait for the "
    "first job to finish (asyncio.wait with return_when=FIRST_COMPLETED) and start the next "
    "(chapter 04)")
assert _got is not None, "first_results did not return within 3 s (chapter 04)"
assert len(_got) == 5 and set(_got[:3]) == {"result 1", "result 2", "result 3"} \
    and set(_got[3:]) == {"result 5", "result 6"}, (
    "the results must be those of the first `wanted` jobs to finish, in finishing order "
    "(chapter 04)")
assert not _cancelled_not_done, (
    f"{len(_cancelled_not_done)} jobs were cancelled but still running when first_results returned: "
    "after cancel(), wait until they have finished (chapter 05)")
assert not _running_after, (
    f"{len(_running_after)} jobs were left running when first_results returned: cancel the jobs "
    "still in flight, then wait until they have finished (chapter 04)")
assert sum(e.startswith("start") for e in _jobs.events) <= 5 + 4, "started far more jobs than needed"


# Every path: a job that raises, and a caller that gives up, clean up the jobs in flight too.
from lab_snippets import grading as _grading


async def _slow_job(i: int) -> str:
    await asyncio.sleep(2)
    return f"result {i}"


async def _one_fails(i: int) -> str:
    if i == 1:
        raise _grading.JobFailed("job 1 failed")
    return await _slow_job(i)


async def _every_path() -> None:
    with _grading.Leftovers(threads=False) as _left:
        _seen = await _grading.observe(first_results(_one_fails, wanted=2, limit=3), timeout=3)
    _grading.check_raises(_seen, _grading.JobFailed, "first_results, when a job raises,",
                          hint="let the job's error through (chapter 04)")
    await _left.check("a job raised", hint="cancel and await the jobs in flight in a finally, so that every "
                                          "way out of first_results cleans up (chapter 05)")
    with _grading.Leftovers(threads=False) as _left:
        _seen = await _grading.cancel_midway(lambda: first_results(_slow_job, wanted=2, limit=3), after=0.1)
    _grading.check_cancelled(_seen, "first_results")
    await _left.check("first_results was cancelled", hint="cancel and await the jobs in flight in a finally, so "
                                                          "that a cancelled caller cleans up too (chapter 05)")


await _every_path()


async def _timed_run(durations: dict, wanted: int, limit: int) -> tuple[list, dict]:
    """first_results over jobs that sleep durations[i] (2 s if not given); (results, start/end times)."""
    _marks: dict[str, float] = {}
    _t0 = time.monotonic()

    async def _timed_job(i: int) -> str:
        _marks[f"start {i}"] = time.monotonic() - _t0
        try:
            await asyncio.sleep(durations.get(i, 2.0))
        finally:
            _marks.setdefault(f"end {i}", time.monotonic() - _t0)
            if i == 0:  # the reference: a plain 40 ms wait on the same loop, from job 0's end
                asyncio.get_running_loop().call_later(
                    0.04, lambda: _marks.setdefault("end 0 + a 40 ms wait", time.monotonic() - _t0))
        return f"result {i}"

    with _grading.Leftovers(threads=False) as _left:
        _seen = await _grading.observe(first_results(_timed_job, wanted=wanted, limit=limit), timeout=3)
    await _left.check("first_results returned")
    _grading.check_finished(_seen, "first_results", within=3)
    return _seen.value, _marks


async def _timing_and_order() -> None:
    # limit 2: job 0 ends at 0.02 s while job 1 runs on, and its slot goes to job 2 at once
    _, _marks = await _timed_run({0: 0.02, 2: 0.02}, wanted=2, limit=2)
    _refill = _marks.get("start 2", float("inf")) - _marks["end 0"]
    await asyncio.sleep(0.05)  # let the reference wait end
    assert _marks.get("start 2", float("inf")) < _marks.get("end 0 + a 40 ms wait", float("inf")), (
        f"the slot freed by job 0 at {_marks['end 0']:.3f} s was refilled {_refill * 1000:.0f} ms later: start the "
        "next job as soon as one finishes (asyncio.wait with return_when=FIRST_COMPLETED), not at the next "
        "poll (chapter 04)")
    # limit 2: job 1 ends at 0.06 s, job 0 at 0.095 s (35 ms later)
    _got, _ = await _timed_run({0: 0.095, 1: 0.06}, wanted=2, limit=2)
    assert _got == ["result 1", "result 0"], (
        f"job 1 finished 35 ms before job 0, so the results are ['result 1', 'result 0'], got {_got!r}: "
        "keep finishing order; take each result as its job finishes (FIRST_COMPLETED), not in batches sorted "
        "by job number (chapter 04)")


await _timing_and_order()


async def _no_more_no_later() -> None:
    # Jobs that finish in the same step: asyncio.wait hands them over together, and only `wanted`
    # of them are results.
    async def _instant(i: int) -> str:
        return f"result {i}"

    with _grading.Leftovers(threads=False) as _left:
        _seen = await _grading.observe(first_results(_instant, wanted=2, limit=3), timeout=3)
    await _left.check("first_results returned")
    _grading.check_finished(_seen, "first_results", within=3)
    assert _seen.error is None and len(_seen.value) == 2, (
        f"wanted=2 with three jobs finishing together: exactly 2 results expected, got "
        f"{_seen.value if _seen.error is None else _seen.error!r}: take a result only while fewer "
        "than `wanted` are in (chapter 04)")
    # The wanted results are in after about 0.1 s; the jobs still in flight would run 2 s.
    _halfway = _grading.ReferenceWait(0.1 + (2.0 - 0.1) / 2)  # a plain wait, beside the call
    with _grading.Leftovers(threads=False) as _left:
        _seen = await _grading.observe(
            first_results(_timed_job_factory({0: 0.05, 1: 0.1}), wanted=2, limit=3), timeout=3)
    await _left.check("first_results returned")
    _grading.check_returns_early(
        _seen, work=0.1, budget=2.0, by=_halfway.seconds, what="first_results",
        hint="once `wanted` results are in, cancel the jobs still in flight rather than wait for them "
             "to finish (chapter 04)")


def _timed_job_factory(durations: dict):
    async def _job(i: int) -> str:
        await asyncio.sleep(durations.get(i, 2.0))
        return f"result {i}"
    return _job


await _no_more_no_later()


# Generated scenarios (issue 37): the same scenarios through first_results and the reference, on
# virtual time, compared on what the contract names (lab_snippets.scenarios explains the pattern).
import dataclasses as _dc

from hypothesis import strategies as _st

from lab_snippets import scenarios as _sc

_reference = _sc.reference(globals(), "first_results")


@_dc.dataclass(frozen=True)
class _Plan:  # one caller's: each caller of several at once has its own (_sc.Callers)
    wanted: int
    limit: int
    jobs: tuple                      # of _sc.Job; job i >= len(jobs) runs 1000 s
    cancel_at: float | None = None   # the caller cancels first_results then
    job_timeout: float | None = None  # passed only when set

    def describe(self, who: str) -> str:
        jobs = "; ".join(j.describe(f"job {i}") for i, j in enumerate(self.jobs))
        _, cancel = _sc.callers_phrase(1, self.cancel_at)
        deadline = "" if self.job_timeout is None else f", job_timeout={self.job_timeout:g}"
        return (f"{who} calls first_results(start_work, wanted={self.wanted}, limit={self.limit}{deadline})"
                f"{cancel}; {jobs + '; later jobs' if jobs else 'every job'} run 1000 s")


@_st.composite
def _plans(draw, errors: tuple = (_sc.JobFailed,)):
    # Jobs that return end at whole seconds, failing ones at a quarter past, cancels at half past:
    # no outcome hangs on which of two things at the same instant runs first. A failing job raises
    # one of `errors` (drawn only when there are several).
    ok = _st.builds(_sc.Job, seconds=_st.sampled_from([1, 0, 2, 3, 5]), value=_st.sampled_from("aab"),
                    cleanup=_st.sampled_from([0, 0, 1, 3]))
    error = {"error": _st.sampled_from(errors)} if len(errors) > 1 else {}
    bad = _st.builds(_sc.Job, seconds=_st.sampled_from([1.25, 0.25, 2.25]), raises=_st.just(True),
                     cleanup=_st.sampled_from([0, 1]), **error)
    jobs = draw(_st.lists(_st.one_of(ok, ok, bad), max_size=9))
    return _Plan(wanted=draw(_st.integers(1, 5)), limit=draw(_st.integers(1, 4)), jobs=tuple(jobs),
                 cancel_at=draw(_st.sampled_from([None, None, 0.5, 1.5, 2.5, 4.5])))


_WATCHED_WITH_DEADLINES = 40  # virtual seconds: jobs that time out keep the call going, so watch it less long


class _Recorder(_sc.Recorder):
    """The course's recorder, noting also when each job stopped working: it returned, raised, or a
    cancel reached it (its cleanup comes after)."""

    def __init__(self) -> None:
        super().__init__()
        self.stops: dict = {}  # job -> (started, stopped)

    async def run(self, name, job: _sc.Job):  # Recorder.run, noting when the job stopped working
        loop = asyncio.get_running_loop()
        started = loop.time()
        self.starts.append((started, name))
        self.tasks.append(asyncio.current_task())
        self.now += 1
        self.peak = max(self.peak, self.now)
        try:
            try:
                await asyncio.sleep(job.seconds)
            finally:
                self.stops[name] = (started, loop.time())
            if job.raises:
                self.fail_at = self.fail_at if self.fail_at is not None else loop.time()
                self.fails.append((loop.time(), name, job.error.__name__))
                raise job.error(f"{name} failed")
            self.ended.append((loop.time(), name, job.value))
            return job.value
        except asyncio.CancelledError:
            self.cancelled.append(name)
            await asyncio.sleep(job.cleanup)
            raise
        finally:
            self.now -= 1
            self.last_end = loop.time()


def _observe(fn, s: _sc.Callers) -> list:
    async def one_caller(plan: _Plan) -> dict:
        rec = _Recorder()

        def start_work(i: int):
            return rec.run(i, plan.jobs[i] if i < len(plan.jobs) else _sc.Job(1000))

        deadline = {} if plan.job_timeout is None else {"job_timeout": plan.job_timeout}
        seen = await _sc.call_once(lambda: fn(start_work, plan.wanted, plan.limit, **deadline), rec,
                                   plan.cancel_at, limit=200 if plan.job_timeout is None else _WATCHED_WITH_DEADLINES)
        return {**seen, "stops": rec.stops, "fails": rec.fails}

    return _sc.run_each(one_caller, s)


def _in_finishing_order(got: list, ended: list) -> bool:
    """Whether `got` takes, in order, the earliest results to finish (ties in any order)."""
    groups: dict = {}
    for t, _, value in ended:
        groups.setdefault(t, []).append(value)
    queue = [groups[t] for t in sorted(groups)]
    for value in got:
        while queue and not queue[0]:
            queue.pop(0)
        if not queue or value not in queue[0]:
            return False
        queue[0].remove(value)
    return True


def _compare_one(me: dict, it: dict, s: _Plan) -> str | None:
    if it["kind"].startswith("still running"):  # too few jobs ever finish: it must keep waiting
        return None if me["kind"] == it["kind"] else f"first_results ended ({me['kind']}) though too few jobs end"
    wanted_in = sorted(t for t, _, _ in it["ended"])[s.wanted - 1] if it["kind"] == "returned" else None
    # the errors that may come out: those of the jobs that raised first (at the same instant, any one)
    first = [(job, error) for t, job, error in it.get("fails", ()) if t == it["fail_at"]]
    allowed, ev = _sc.fate(it, s.cancel_at, {f"raised {e}" for _, e in first} or {"raised JobFailed"},
                           returned_at=wanted_in)
    own = [job for job, error in first if error == _sc.JobTimedOut.__name__]
    if own and f"raised {_sc.JobTimedOut.__name__}" in allowed and me["kind"] not in allowed \
            and not me["kind"].startswith("raised"):
        did = (f"returned {me['value']!r} at {_sc.fmt(me['at'])}" if me["kind"] == "returned" else
               f"ended cancelled at {_sc.fmt(me['at'])}" if me["kind"] == "cancelled" else
               f"was {me['kind']}" if me["kind"].startswith("still running") else me["kind"])
        return (f"a job's own TimeoutError was swallowed as if its deadline had passed: job {own[0]} raised "
                f"JobTimedOut (a TimeoutError subclass) at {_sc.fmt(it['fail_at'])}, before its job_timeout, "
                f"and first_results {did}; when a job raises, first_results raises that error: take a "
                "TimeoutError for the deadline's only when the deadline has passed (asyncio.Timeout.expired())")
    if me.get("peak", 0) > s.limit:
        return f"{me['peak']} jobs were in flight at once with limit {s.limit}"
    problem = _sc.check_ending(me, it, allowed, ev, "first_results")
    if problem:
        return problem
    problem = _sc.check_starts(me, it, ev)
    if problem:
        return problem
    if me["kind"] == "returned" and me["peak"] < it["peak"]:
        return f"only {me['peak']} jobs were in flight at once where {it['peak']} could: keep `limit` jobs running"
    if me["kind"] == "returned" and (len(me["value"]) != s.wanted
                                     or not _in_finishing_order(me["value"], me["ended"])):
        return (f"returned {me['value']!r}: the results of the first {s.wanted} jobs to finish, in finishing "
                "order, expected")
    if me["kind"] == it["kind"] and me["at"] is not None and it["at"] is not None and me["at"] < it["at"]:
        return (f"first_results ended before the jobs it cancelled had finished their cleanup: it ended "
                f"({me['kind']}) at {_sc.fmt(me['at'])}, where the jobs it cancelled were gone at {_sc.fmt(it['at'])}; "
                "wait for them, and let nothing cut their cleanup short")
    return None


_compare = _sc.per_caller(_compare_one)


def _settled_at(plan: _Plan) -> float | None:
    """When the reference's fate is settled in `plan` without its cancel: at its `wanted`-th result or
    its first error (None: not within the watch)."""
    seen = _observe(_reference, _sc.Callers((_dc.replace(plan, cancel_at=None),)))[0]
    if seen["kind"] == "returned":
        return sorted(t for t, _, _ in seen["ended"])[plan.wanted - 1]
    return seen.get("fail_at")


def _cancel_while_waiting(plan: _Plan) -> _Plan:
    """The caller cancels only while first_results still waits for results: a cancel that would come
    while it stops (its finally waiting for the jobs it cancelled) is dropped, as Exercise 4.1 does
    not ask for that case (chapter 05 shows it)."""
    if plan.cancel_at is None:
        return plan
    settled = _settled_at(plan)
    return plan if settled is None or plan.cancel_at < settled else _dc.replace(plan, cancel_at=None)


def _compare_deadline_one(me: dict, it: dict, s: _Plan) -> str | None:
    """The deadline per job first (when the call's fate was not yet settled), then the rest."""
    if me.get("peak", 0) > s.limit:
        return (f"a timed-out job keeps its slot until it is gone: {me['peak']} jobs were in flight at once "
                f"with limit {s.limit}")
    if "stops" in me and "fail_at" in it:
        ends = sorted(t for t, _, _ in it["ended"])
        # settled: the wanted-th result, the first error or the caller's cancel, whichever came first
        # (or the end of the observation, when too few jobs ever finish)
        ev = min(t for t in (ends[s.wanted - 1] if len(ends) >= s.wanted else None, it["fail_at"], s.cancel_at,
                             _WATCHED_WITH_DEADLINES) if t is not None)
        for job, (started, stopped) in sorted(me["stops"].items()):
            due = started + s.job_timeout
            if due < ev and stopped > due + 1e-9:
                return (f"a job ran past its job_timeout: job {job} started at {_sc.fmt(started)} with "
                        f"job_timeout={s.job_timeout:g}, but ran until {_sc.fmt(stopped)}")
            if stopped < min(due, ev) - 1e-9 and job in me["cancelled"]:
                return (f"a job was cancelled before its job_timeout: job {job} started at {_sc.fmt(started)} "
                        f"with job_timeout={s.job_timeout:g}, but was cancelled at {_sc.fmt(stopped)}: each "
                        "job's deadline counts from its own start")
    return _compare_one(me, it, s)


_compare_deadline = _sc.per_caller(_compare_deadline_one)


@_st.composite
def _plans_with_deadline(draw):
    # Deadlines a 32nd or 16th past: exact in binary (a clock read as `start + job_timeout` reaches them),
    # and before a long chain of timeouts, never at the same instant as a job's end (whole seconds from
    # its start), a failure (a quarter past) or a cancel (half past).
    # A failing job raises JobFailed or a TimeoutError of its own (JobTimedOut), which a deadline kept
    # with asyncio.timeout must let through.
    plan = draw(_plans(errors=(_sc.JobFailed, _sc.JobTimedOut)))
    return _dc.replace(plan, job_timeout=draw(_st.sampled_from([1.03125, 2.0625, 0.53125])))


_sc.differential(first_results, _reference, _sc.several(_plans().map(_cancel_while_waiting)), _observe,
                 _compare, what="first_results", examples=60, hint="chapters 04 and 05")

# The deadline per job (the exercise's twist): one named run, then generated scenarios with a job_timeout.

async def _deadline_per_job() -> None:
    # limit 2, wanted 4, job_timeout 0.12 s: job 0 would run 2 s and needs 40 ms to clean up once
    # cancelled; the others take 0.05 s. Job 0 is cancelled at 0.12 s while jobs 1, 2, 3 run on and is
    # gone at 0.16 s; results come from jobs 1, 2, 3 and the job that took job 0's slot.
    _marks: dict[str, float] = {}
    _now = [0, 0]  # in flight, most at once
    _t0 = time.monotonic()

    async def _job(i: int) -> str:
        _marks[f"start {i}"] = time.monotonic() - _t0
        if i == 0:  # the reference: a plain wait of job_timeout + 40 ms from job 0's start, on the same loop
            asyncio.get_running_loop().call_later(
                0.12 + 0.04, lambda: _marks.setdefault("deadline 0 + a 40 ms wait", time.monotonic() - _t0))
        _now[0] += 1
        _now[1] = max(_now[1], _now[0])
        try:
            await asyncio.sleep(2.0 if i == 0 else 0.05)
            return f"result {i}"
        except asyncio.CancelledError:
            _marks.setdefault(f"cancel {i}", time.monotonic() - _t0)
            await asyncio.sleep(0.04 if i == 0 else 0)
            raise
        finally:
            _now[0] -= 1

    with _grading.Leftovers(threads=False) as _left:
        _seen = await _grading.observe(first_results(_job, wanted=4, limit=2, job_timeout=0.12), timeout=3)
    await _left.check("first_results returned")
    _grading.check_finished(_seen, "first_results", within=3)
    await asyncio.sleep(0.05)  # let the reference wait end
    assert _seen.error is None, (
        f"a job past its job_timeout gives no result and does not end first_results: with job 0 still running "
        f"at its deadline, first_results raised {_seen.error!r}; cancel that job, drop it, and carry on "
        "(chapter 04)")
    _cancelled = _marks.get("cancel 0", float("inf"))
    assert _cancelled < _marks.get("deadline 0 + a 40 ms wait", float("inf")), (
        "a job ran past its job_timeout: job 0 (job_timeout 0.12 s) was "
        + ("never cancelled while the others ran" if _cancelled == float("inf") else
           f"cancelled only {(_cancelled - _marks['start 0']) * 1000:.0f} ms after it started")
        + ": while jobs finish, keep track of when each job in flight is due, wake up at the earliest of "
        "those moments, and cancel the jobs that are due (chapter 04)")
    assert _now[1] <= 2, (
        f"a timed-out job keeps its slot until it is gone: {_now[1]} jobs were in flight at once with limit 2 "
        "while job 0 was cleaning up after its cancel; start the next job once it has finished (chapter 05)")
    assert _seen.value is not None and len(_seen.value) == 4 and "result 0" not in _seen.value, (
        f"a job past its job_timeout gives no result: expected 4 results from jobs other than job 0, got "
        f"{_seen.value!r} (chapter 04)")


await _deadline_per_job()



_real_time = time


class _LoopClock:
    """The `time` module as the code under test sees it on virtual time: its clocks read the running
    loop's (which, on a real loop, is time.monotonic), so a deadline kept with time.monotonic() counts."""

    def __getattr__(self, name: str):
        return getattr(_real_time, name)

    @staticmethod
    def monotonic() -> float:
        try:
            return asyncio.get_running_loop().time()
        except RuntimeError:
            return _real_time.monotonic()

    perf_counter = monotonic


_LoopClock.time = _LoopClock.monotonic


def _on_the_loops_clock(fn):
    """fn's globals with `time` (and names imported from it) reading the loop's clock, restored after."""
    scope = fn.__globals__
    clock = _LoopClock()
    swaps = {"time": clock} if scope.get("time") is _real_time else {}
    swaps.update({name: clock.monotonic for name in ("monotonic", "perf_counter")
                  if scope.get(name) is getattr(_real_time, name)})
    saved = {name: scope[name] for name in swaps}
    scope.update(swaps)
    return lambda: scope.update(saved)


_restore = _on_the_loops_clock(first_results)
try:
    _sc.differential(first_results, _reference, _sc.several(_plans_with_deadline().map(_cancel_while_waiting)),
                     _observe, _compare_deadline,
                     what="first_results with a job_timeout", examples=40, hint="chapters 04 and 05")
finally:
    _restore()
### END HIDDEN TESTS

# %% [markdown]
# ## Summary
#
# - `asyncio.wait` returns `(done, pending)`; with `timeout=` or `FIRST_COMPLETED` it returns
#   early, and the pending tasks keep running. Cancel them yourself if you want them stopped,
#   then await them.
# - `as_completed` hands you results in finishing order, so handling starts with the first
#   one in.
# - A `wait(FIRST_COMPLETED)` loop that refills the pending set keeps a fixed number of jobs in
#   flight and is not held up by the slowest job of a batch; it is the way to collect "the first
#   N good results" when some results get thrown away.
#
# **What's next.** Chapter 05 looks at what cancelling really does: when it takes effect, and
# what the caller must still do before the work is really over.
#
# ## In slime
#
# slime's main rollout loop, `generate_rollout_async` (the quote below), is this page's
# refill loop. It reads each finished group with `task.result()` and no `try` around it, and
# only after the loop, when the batch is full, does it call `abort`, the step that stops the
# groups still in flight. One group that raises skips that step; the run after the quote
# counts what it leaves running.

# %% tags=["remove-input"]
from lab_snippets.sites import show_call_site

show_call_site("04")

# %% [markdown]
# ### A run: one group fails in a rollout of 32
#
# A model of the quote and of `abort`, written for this page. slime's `abort` calls no
# `cancel()`. It sets an "aborted" flag, asks every SGLang server to abort all its requests,
# then waits with the same `FIRST_COMPLETED` loop until the pending set is empty: this page's
# "stop what is left, then wait for it", done cooperatively. Our `abort(state)`, in the
# folded cell, keeps the flag and the wait; `generate_and_rm_group(group_id)`, one group, is
# there too. With `--rollout-batch-size 32` (a common value
# in slime's example scripts) the loop has submitted at least 32 groups before its first
# `wait`; here exactly 32. Group 5 fails after 0.02 s (one of its samples raised, as in
# chapter 03's run); the others need 0.1 s.
#
# Predict: when the rollout raises group 5's error, has `abort` run? How many of the 32
# groups are still generating?

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the models of a group and of abort()"}
async def generate_and_rm_group(group_id: int) -> int:
    await asyncio.sleep(0.02 if group_id == 5 else 0.1)
    if group_id == 5:
        raise ConnectionError("group 5: a sample's reward call failed")
    return group_id


async def abort(state) -> None:
    state.aborted = True
    while state.pendings:
        _, state.pendings = await asyncio.wait(state.pendings, return_when=asyncio.FIRST_COMPLETED)


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
async def generate_rollout_async(state, target: int) -> list[int]:
    data = []
    while len(data) < target:
        done, state.pendings = await asyncio.wait(
            state.pendings, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            data.append(task.result())  # no try around it, as in slime
    await abort(state)
    return data


state = types.SimpleNamespace(aborted=False, pendings=set())
state.pendings = {asyncio.create_task(generate_and_rm_group(g)) for g in range(32)}
try:
    await generate_rollout_async(state, target=32)
except ConnectionError as exc:
    print("the rollout raised:", exc)
still = [task for task in state.pendings if not task.done()]
print(f"abort ran: {state.aborted} | groups still generating: {len(still)} of 32")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: failed-rollout-skips-the-abort
assert not state.aborted, "the error left generate_rollout_async before its abort step"
assert len(still) == 31, f"the 31 other groups were still generating: {len(still)}"
await asyncio.wait(still, timeout=2)  # let them end: nothing left behind
assert [t.done() and not t.cancelled() for t in still] == [True] * 31, "each ran to its end"
print("✓ the rollout raised with 31 groups still generating; no abort ran, and all 31 ran to their end")

# %% [markdown]
# :::{dropdown} Why
#
# The rollout raised group 5's error at once, the abort step never ran, and the 31 other
# groups ran to their end for a rollout that had already failed. The cost outlives the
# failure: `GenerateState` is one object for the whole process (a singleton), and the
# `state.reset()` at the end of `generate_rollout_async` is skipped too, so its pending set
# still holds those 31 tasks. The next `generate_rollout_async` in the same process starts
# with them.
#
# :::
#
# :::{dropdown} What else the run shows
#
# Each of the 31 groups ran 0.08 s more. In slime that is 31 groups of samples (248 generation
# requests with `--n-samples-per-prompt 8`) that the servers go on generating. With the loop
# in a `try` whose `finally` calls `abort`, as `rollout_refill` does with its cancels, the
# check above would find the abort run and no group left generating. That `finally`, which
# your `first_results` needs too, is what slime's loop lacks. Nothing else stops the groups
# left running: slime runs this loop on an event loop of its own, in a thread that lives as
# long as the process (chapter 13 looks at such a loop).
#
# :::
#
# slime's evaluation, in the quote below, collects its samples with `as_completed`, this page's
# other way. The [source inventory](../book/reference/inventory.md) lists every `asyncio.wait`
# and `as_completed` in slime.


# %% tags=["remove-input"]
show_call_site("04b")

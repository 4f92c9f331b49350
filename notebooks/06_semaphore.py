# %% [markdown]
# # 06 · Semaphore: limiting how much work enters at once
# *Semaphore：限制同时进入的工作数量*
#
# **The question.** A rollout creates one task per sample, hundreds of them, yet the inference
# servers should see only a few dozen requests at a time. What does an `asyncio.Semaphore`
# limit, what does it leave alone, and how does the limit change the time a batch takes?
# Getting it wrong costs in two ways: a semaphore made in the wrong place limits nothing, and
# slow work done while holding a permit keeps a request slot from the servers (in slime's
# coding-agent example, for up to 600 s per sample).
#
# **You will**
# 1. predict how many of 12 tasks have started, and how many are inside, when they share
#    3 permits;
# 2. instrument a section of code and assert that the peak number of tasks inside it never
#    exceeds the limit;
# 3. measure the total time of a fixed batch against the limit and find which extra permits
#    make it faster and which buy nothing;
# 4. find out what happens, with one task and under load, when one path takes the same
#    semaphore twice.
#
# **Needs** chapters 03 (tasks and gather) and 05 (cancellation) · about 55 minutes
#
# **New to the course?** [How to read an experiment](../book/reading_guide.md) explains the
# timelines, the helpers and the folded checks; the [glossary](../book/glossary.md) gives the
# words the chapters share. The folded setup cell imports the tools; its `figure_style()` only
# sets how the plots look.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the setup"}
import asyncio
import math
import random
import sys
import time

import matplotlib.pyplot as plt

from lab_snippets.asyncio_tools import InFlight, ideal_batch_time
from lab_snippets.measure import ainterleaved
from lab_snippets.timeline import Timeline, figure_style

figure_style()
SEED = 6

# %% [markdown]
# ## Predict: 12 tasks and a `Semaphore(3)`: how many have started?
#
# A semaphore holds a number of **permits**. `async with permits:` takes one on the way in
# and gives it back on the way out, on every path, exceptions and cancellation included.
# Write it that way rather than calling `acquire()` and `release()` yourself: a `release()`
# that an exception skips loses a permit for good.
#
# The cell below creates 12 tasks, and each one goes through a `Semaphore(3)`. `InFlight`
# counts how many tasks are inside its `with` block at once and keeps the peak. Right after
# the event loop has let every task take its first step, how many tasks exist, how many have
# started their body, and how many are inside the limited section?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
permits = asyncio.Semaphore(3)
inside = InFlight()
bodies_started: list[int] = []


async def generate_sample(sample_id: int) -> int:
    bodies_started.append(sample_id)
    async with permits:
        with inside:
            await asyncio.sleep(0.03)
    return sample_id


tasks = [asyncio.create_task(generate_sample(i)) for i in range(12)]
await asyncio.sleep(0)
seen = {"tasks": len(tasks), "bodies started": len(bodies_started),
        "inside": inside.now, "not done": sum(not t.done() for t in tasks)}
results = await asyncio.gather(*tasks)

print(seen)
print("peak inside:", inside.peak, "· entered in total:", inside.entered)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: limits-permits-not-tasks
assert seen == {"tasks": 12, "bodies started": 12, "inside": 3, "not done": 12}, (
    f"after one loop turn: 12 tasks, 12 bodies started, 3 inside expected; got {seen}")
assert inside.peak == 3 and inside.entered == 12, f"peak 3 and 12 entries expected: {inside}"
assert results == list(range(12))
print("✓ 12 tasks exist and all 12 started; 3 are inside the section, 9 wait for a permit")

# %% [markdown]
# :::{dropdown} Why
#
# A semaphore counts permits, not tasks: `create_task` and the start of each body never touch
# it, and only `async with permits` asks it for anything. A task that finds no free permit
# is suspended right there, at `async with permits`, until another task gives one back. So
# all 12 tasks exist and all 12 bodies have started, but only 3 are inside: the semaphore
# bounds the number of tasks **inside the section**, not how many tasks are created.
#
# :::
#
# ## See it on a timeline: when does a waiting task get its permit?
#
# Real requests do not take equal times. The next experiment runs 10 samples of random
# duration through 3 permits. Samples 0 to 2 take the three permits at once; the figure shows
# when each of the others gets one, and the cell prints when sample 3, the fourth, got its
# permit.
#
# A `Timeline`, the course's stopwatch (chapter 01), records two spans per sample: *waiting*
# (light green) from the moment the task starts until it holds a permit, then *running*
# (blue) while it holds one. The samples only await a sleep, but what this figure is about
# is the permit, so blue means "holding a permit", as the legend says (chapter 04 drew a
# group holding its slot the same way).
# `WatchedSemaphore` (folded below) is the `Semaphore(3)` wrapped so that it writes those
# spans. The cell calls it `watched`, and the samples use it with `async with`, as they
# would the plain semaphore.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the wrapper that records each wait and hold"}
class WatchedSemaphore:
    """A semaphore that draws, per task, the wait for a permit and the time holding one."""

    def __init__(self, semaphore: asyncio.Semaphore, tl: Timeline) -> None:
        self.semaphore, self.tl, self.inside = semaphore, tl, InFlight()
        self.granted: dict[str, float] = {}

    async def __aenter__(self) -> None:
        lane, asked = asyncio.current_task().get_name(), time.monotonic()
        await self.semaphore.acquire()
        self.granted[lane] = time.monotonic()
        self.tl.add(lane, asked, self.granted[lane], state="waiting")
        self.inside.__enter__()

    async def __aexit__(self, *exc_info: object) -> None:
        lane = asyncio.current_task().get_name()
        self.inside.__exit__()
        self.tl.add(lane, self.granted.pop(lane), time.monotonic(), state="running")
        self.semaphore.release()


# %%
rng = random.Random(SEED)  # SEED (setup cell): the same durations every run
durations = [rng.uniform(0.02, 0.07) for _ in range(10)]
tl = Timeline()
watched = WatchedSemaphore(asyncio.Semaphore(3), tl)  # records each wait and hold


async def timed_sample(duration: float) -> None:
    async with watched:
        await asyncio.sleep(duration)


_ = await asyncio.gather(*(asyncio.create_task(timed_sample(d), name=f"sample {i}")
                           for i, d in enumerate(durations)))

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the code that reads the permit times and draws the figure"}
print("peak inside:", watched.inside.peak,
      "· most running spans at one instant:", tl.max_overlap("running"))
held = {s.label: s for s in tl.spans if s.state == "running"}  # each sample's permit
first_back = min(range(3), key=lambda i: held[f"sample {i}"].end)
print(f"sample 3 got its permit at {held['sample 3'].start:.3f} s;",
      f"the first of samples 0 to 2 to give one back was sample {first_back},",
      f"at {held[f'sample {first_back}'].end:.3f} s")
fig = tl.plot("10 samples through Semaphore(3): waiting for a permit, then running",
              lanes=[f"sample {i}" for i in range(10)],
              meanings={"waiting": "waiting for a permit",
                        "running": "holding a permit (awaiting its sleep)"})

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: peak-never-exceeds-limit
inside = watched.inside
assert inside.peak == 3, "with more samples than permits, the section fills up to the limit"
assert tl.max_overlap("running") <= 3, "and never goes beyond it"
assert inside.entered == 10 and inside.now == 0
print("✓ the section filled up to 3 and never held more, for 10 samples of mixed length")

# %% [markdown]
# Sample 3 got its permit the moment the shortest of samples 0 to 2 gave one back, not
# before. A waiting task enters only by taking a permit that another task has just given
# back, so the count inside cannot pass the number of permits, however the lengths fall: the
# peak stayed at 3.
#
# ## Measure: what does the limit cost a batch?
#
# A fixed batch of 12 equal jobs of 0.03 s runs under limits from 1 to 12, and the answer
# prints one row per limit: the measured time and the ideal time, `ideal_batch_time(n_jobs,
# limit, duration)`: the time if each permit given back went to the next job with no delay at
# all. Predict three rows before you run it: how long do limits 4, 5 and 6 take, in
# multiples of 0.03 s?
#
# The cell below is the batch: `n_jobs` jobs through one `Semaphore(limit)`, gathered and
# timed. The folded cell after it runs the batch for each of the `limits` (`N_JOBS` jobs of
# `DURATION` seconds each), three times per limit, the limits in turn so that a busy machine
# slows them alike, and keeps each limit's best time in `measured`.


# %%
async def run_batch(n_jobs: int, limit: int, duration: float) -> float:
    batch_permits = asyncio.Semaphore(limit)
    loop = asyncio.get_running_loop()

    async def job() -> None:
        async with batch_permits:
            await asyncio.sleep(duration)

    start = loop.time()
    await asyncio.gather(*(job() for _ in range(n_jobs)))
    return loop.time() - start


# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the timing: each limit run 3 times, in turn, best kept"}
N_JOBS, DURATION = 12, 0.03
limits = [1, 2, 3, 4, 5, 6, 12]
runs = await ainterleaved(  # 3 runs per limit, in turn
    {limit: (lambda k=limit: run_batch(N_JOBS, k, DURATION)) for limit in limits}, k=3)
measured = {limit: runs.best(limit) for limit in limits}


# %% [markdown]
# `measured` now holds each limit's best time. The answer prints them beside the ideal times
# and draws both.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the plotting code"}
def draw_batch_times() -> plt.Axes:
    """The measured times against the ideal; the caller sets the title."""
    fig, ax = plt.subplots(figsize=(7, 3.6), layout="constrained")
    every_limit = range(1, N_JOBS + 1)  # the ideal at every limit, drawn as steps
    ax.plot(every_limit, [ideal_batch_time(N_JOBS, k, DURATION) for k in every_limit],
            drawstyle="steps-post", color="grey", linestyle="--",
            label="ideal: no overhead")
    ax.plot(limits, [measured[k] for k in limits], "o", label="measured (best of 3)")
    ax.set_xlabel("limit (permits)")
    ax.set_ylabel("total time (s)")
    ax.legend()
    return ax


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
ax = draw_batch_times()  # the measured times against the ideal, as a figure
ax.set_title("A batch of 12 jobs of 0.03 s: total time against the semaphore's limit")
for limit in limits:
    print(f"limit {limit:>2}: measured {measured[limit]:.3f} s, "
          f"ideal {ideal_batch_time(N_JOBS, limit, DURATION):.3f} s")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: batch-time-follows-rounds
rounds = {limit: math.ceil(N_JOBS / limit) for limit in limits}
at_least = {limit: 0.95 * rounds[limit] * DURATION for limit in limits}
# floor: a sleep never ends early, so no load can make a batch beat its rounds
for limit in limits:
    assert measured[limit] >= at_least[limit], f"limit {limit} finished faster than its {rounds[limit]} rounds"
# floor: limits 4 and 5 both need 3 rounds, so 5 has the same floor as 4
assert measured[5] >= at_least[4], "4 → 5 permits: still 3 rounds, so no faster"
# Half the rounds, so about half the time: compared with the other limit's time, measured beside it.
# Only the floor is load-proof: a neighbour that slows the larger limit's runs and not the smaller
# one's could still flip a ratio; interleaving the runs and keeping the best of three make that
# unlikely, not impossible.
for fewer, more in [(1, 2), (2, 4), (3, 6), (6, 12)]:
    assert measured[more] < 0.75 * measured[fewer], (
        f"limit {more} needs half the rounds of limit {fewer}, so it finishes in well under its time")
print("✓ no limit beat its rounds × 0.03 s; 4 → 5 gained nothing; each doubling halved the rounds")

# %% [markdown]
# :::{dropdown} Why
#
# With `limit` permits the jobs go through in ceil(12 / limit) rounds, and a sleep never ends
# early, so no batch takes less than its rounds × 0.03 s. Limits 4 and 5 both need 3 rounds
# (4 + 4 + 4, or 5 + 5 + 2), so both take about 3 × 0.03 s and 5 is no faster; limit 6 needs
# 2 rounds, about 2 × 0.03 s, and the dashed steps show that limits 7 to 11 would need 2
# rounds like 6. When the limit divides the batch, doubling it halves the rounds,
# and so about halves the time.
#
# :::
#
# The limit is not free to raise, though: here the "server" is a sleep that never slows
# down, while a real inference server gets slower per request as more requests share it.
# A higher limit shortens the batch, but it loads the server more and makes each request
# slower: the limit is where you trade the one for the other.
#
# ## What if a helper takes a permit too?
#
# A function that holds a permit calls a helper, `tokenize`, that takes a permit from the
# same semaphore. The cell below runs one such sample alone, then four at once, through a
# `Semaphore(2)`. It waits for each group with `asyncio.wait(..., timeout=...)` (chapter 04)
# and prints how many tasks finished and how many had not when the wait ended. Predict both
# pairs.

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
shared_permits = asyncio.Semaphore(2)


async def tokenize(sample_id: int) -> None:
    async with shared_permits:
        await asyncio.sleep(0.01)


async def generate_with_nested_permit(sample_id: int) -> int:
    async with shared_permits:
        await asyncio.sleep(0.01)
        await tokenize(sample_id)
    return sample_id


alone = [asyncio.create_task(generate_with_nested_permit(0))]
done, pending = await asyncio.wait(alone, timeout=1)
light_load = (len(done), len(pending))

busy = [asyncio.create_task(generate_with_nested_permit(i)) for i in range(4)]
done, pending = await asyncio.wait(busy, timeout=0.2)
under_load = (len(done), len(pending))
print("one sample:   done, not done =", light_load)
print("four samples: done, not done =", under_load)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: nested-permit-deadlocks-under-load
for task in pending:
    task.cancel()
await asyncio.wait(busy, timeout=2)
assert light_load == (1, 0)
assert under_load == (0, 4), "every permit is held by a task waiting for a second permit"
assert all(t.cancelled() for t in busy)
print("✓ one sample alone finished; four samples all stuck on their second permit (now cancelled)")

# %% [markdown]
# :::{dropdown} Why
#
# A sample that holds a permit and asks for a second one needs two at once. Alone, it finds
# both free, which is why the bug passes every small test. Under load, two samples can take the
# two permits and then each wait for a second permit that only the other could give back,
# while the rest wait for a first one: nobody will ever release, a deadlock. The folded check
# cancels the stuck tasks.
#
# `asyncio.Semaphore` has no owner and no re-entrancy, so it cannot tell that the second
# request comes from a task that already holds a permit. The fix is to take the permit once,
# at one level: either the helper assumes its caller holds a permit, or the caller releases
# before calling.
#
# :::

# %% [markdown]
# :::{dropdown} Python versions: eager tasks and the first permits
#
# Python 3.12 added an eager task factory (`loop.set_task_factory(asyncio.eager_task_factory)`,
# chapter 01's version note): with it, `create_task` starts running the task's body at once.
# The folded cells below create six tasks that each take a permit of a `Semaphore(3)`, once
# with default tasks and once with eager tasks (which need 3.12), and count how many of the
# six are inside the section right after the `create_task` calls. With default tasks none
# is; with eager tasks three are, because taking a free permit does not suspend. The answer
# below shows both rows.
#
# :::

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the experiment"}
async def hold_permit(limit: asyncio.Semaphore, counter: InFlight) -> None:
    async with limit:
        with counter:
            await asyncio.sleep(0.01)


async def inside_right_after_create(eager: bool) -> int | None:
    if eager and sys.version_info < (3, 12):
        return None
    loop = asyncio.get_running_loop()
    previous_factory = loop.get_task_factory()
    limit, counter = asyncio.Semaphore(3), InFlight()
    if eager:
        loop.set_task_factory(asyncio.eager_task_factory)
    try:
        tasks = [asyncio.create_task(hold_permit(limit, counter)) for _ in range(6)]
        inside_now = counter.now
    finally:
        loop.set_task_factory(previous_factory)
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=2)
    return inside_now


# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the answer"}
inside_after = {"default tasks": await inside_right_after_create(eager=False),
                "eager tasks": await inside_right_after_create(eager=True)}
for kind, inside_now in inside_after.items():
    shown = "(needs 3.12)" if inside_now is None else inside_now
    print(f"{kind:13}  inside right after create_task: {shown}")

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert inside_after["default tasks"] == 0, "a default task starts only at the caller's next await"
if sys.version_info >= (3, 12):
    assert inside_after["eager tasks"] == 3, f"eager tasks: 3 inside right after create_task, not {inside_after}"
print("✓ default tasks: 0 inside right after create_task"
      + ("; eager tasks: 3" if sys.version_info >= (3, 12) else ""))

# %% [markdown]
# :::{dropdown} Why
#
# A default task only starts at the caller's next suspension, and the cell does not suspend
# between the `create_task` calls and the count, so nothing is inside yet (the first
# experiment needed one `await asyncio.sleep(0)` for that reason). An eager task (3.12 and
# later) runs its first step inside `create_task`, up to its first real suspension. Taking a
# free permit does not suspend, so the first three are inside when `create_task` returns.
#
# :::

# %% [markdown]
# ## Where is the semaphore made?
#
# Where the `Semaphore(3)` is created is easy to get wrong when code is moved around. The cell
# below runs twelve samples twice through a `Semaphore(3)`: once sharing one semaphore made before the tasks, and once
# with a semaphore made inside each task (what a state object created per sample would give).
# Predict the peak number of samples inside the section in each run.

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
async def peak_inside(shared: bool) -> int:
    one_for_all, counter = asyncio.Semaphore(3), InFlight()

    async def sample() -> None:
        limit = one_for_all if shared else asyncio.Semaphore(3)
        async with limit:
            with counter:
                await asyncio.sleep(0.02)

    await asyncio.wait_for(asyncio.gather(*(sample() for _ in range(12))), timeout=5)
    return counter.peak


peaks = {"one shared semaphore": await peak_inside(shared=True),
         "a semaphore per task": await peak_inside(shared=False)}
print(peaks)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: a-semaphore-per-task-limits-nothing
assert peaks == {"one shared semaphore": 3, "a semaphore per task": 12}, peaks
print("✓ the shared semaphore held the peak at 3; a semaphore per task let all 12 in")

# %% [markdown]
# :::{dropdown} Why
#
# A semaphore counts the tasks that ask it for a permit, and a task that asks another one does
# not count. Made inside each task, each of the twelve semaphores sees one task and has a free
# permit for it, so the twelve samples are inside at once: the limit is still written in the
# code and limits nothing. A limit holds only if the tasks ask the same semaphore. In a
# rollout, every sample's request would go to the inference servers at once.
#
# :::

# %% [markdown]
# ## Exercise 6.1 · Bounded fan-out
#
# Implement `generate_all(prompts, limit, generate)`, the pattern of a rollout:
#
# 1. call `generate(prompt)` for every prompt, each in its own task, all created up front;
# 2. at most `limit` calls run at once, and the next prompt starts as soon as one finishes
#    (not in fixed batches of `limit`);
# 3. return the results in the order of `prompts`;
# 4. if a call raises, or the caller cancels, the other calls are cancelled and cleaned up,
#    nothing new starts, and then the error (an `ExceptionGroup` holding it counts) or the
#    cancellation comes out;
# 5. each call of `generate_all` has a limit of its own.
#
# :::{dropdown} What the grader checks
#
# Graded, on many generated runs (no prompts, one, several; the same prompt more than once;
# `limit` from 1 up, below and above the number of prompts; calls that take any time, several
# that finish at the same moment, calls that raise, calls that take a while to clean up once
# cancelled):
#
# **Calls, concurrency and results**
#
# - **calls**: `generate` once per prompt, a repeated prompt once per occurrence; the prompts
#   start in their order, and the next one the moment a running call finishes, not later;
# - **at once**: never more than `limit` calls running, and as many as `limit` allows while
#   prompts are waiting;
# - **results**: the list of results in the order of `prompts` (a repeated prompt gets the
#   result of its own call);
#
# **Errors and cancellation**
#
# - **errors**: when a call raises, the error comes out as soon as the other calls are
#   cancelled and cleaned up; no new call starts later than the error (one that got a permit
#   at the very instant of the error may start, and is cancelled with the rest);
# - **cancellation**: when the caller cancels `generate_all`, it ends cancelled once the
#   running calls are cleaned up; no new call starts after it (when an error and a cancel both
#   happen, either may come out);
#
# **When it ends, and beside other callers**
#
# - **when it ends**: when the last result is in, or the error or cancel plus the cleanup of
#   the cancelled calls: not earlier (no call left running), not later;
# - **several callers at once**, each with its own `generate`: each call behaves as if alone
#   (its semaphore is its own).
#
# :::
#
# :::{dropdown} Hint 1: the limit
#
# Where must the semaphore be made so that all the tasks of one `generate_all` call share
# it, and what does a semaphore made inside each task do? The run before the exercise shows
# it. Around which call does each task take its permit? The first experiment shows how.
#
# :::
#
# :::{dropdown} Hint 2: the pieces, and where the chapter shows them
#
# - One `asyncio.Semaphore(limit)`, made once per `generate_all` call and shared by all its
#   tasks, as slime's rollout shares one.
# - Each task takes a permit with `async with` around its `generate` call, as in the first
#   experiment.
# - `asyncio.TaskGroup` (chapter 03) creates the tasks; when one raises it cancels the others
#   and waits for them before an `ExceptionGroup` comes out, and when the caller is
#   cancelled it cancels them too. Read the results from your list of tasks, in prompt order.
#
# :::
#
# The visible test below shows one run.

# %%
async def fake_generate(prompt: str) -> str:
    await asyncio.sleep(0.005 * len(prompt))
    return prompt.upper()


# %% tags=["solution", "hide-input"] mystnb={"code_prompt_show": "Show the solution"}
async def generate_all(prompts: list[str], limit: int, generate) -> list:
    """Run `await generate(p)` for every prompt, at most `limit` at once; results in prompt order."""
    ### BEGIN SOLUTION
    shared = asyncio.Semaphore(limit)

    async def generate_one(prompt: str):
        async with shared:
            return await generate(prompt)

    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(generate_one(p)) for p in prompts]
    return [t.result() for t in tasks]
    ### END SOLUTION


# %% tags=["tests"]
async with asyncio.timeout(2):
    got = await generate_all(["abcd", "ab", "a", "abc"], 2, fake_generate)
    visible_empty = await generate_all([], 3, fake_generate)
assert got == ["ABCD", "AB", "A", "ABC"], (
    f"the results must follow the order of the prompts; got {got!r}")
assert visible_empty == [], f"no prompts: an empty list expected, got {visible_empty!r}"

# %% tags=["tests", "hidden-tests", "remove-cell"]
### BEGIN HIDDEN TESTS
from lab_snippets.asyncio_tools import cancel_new_tasks

_inside = InFlight()
_running: set[asyncio.Task] = set()


def _spy(durations: dict[str, float], failing: str | None = None):
    async def spy_generate(prompt: str) -> str:
        me = asyncio.current_task()
        _running.add(me)
        try:
            with _inside:
                await asyncio.sleep(durations[prompt])
                if prompt == failing:
                    raise ValueError(f"generation failed for {prompt}")
                return f"out {prompt}"
        finally:
            _running.discard(me)

    return spy_generate


def _contains(exc: BaseException, kind: type) -> bool:
    if isinstance(exc, kind):
        return True
    return isinstance(exc, BaseExceptionGroup) and any(_contains(e, kind) for e in exc.exceptions)


async def _stop_leftovers(before: set[asyncio.Task]) -> None:
    await cancel_new_tasks(before)
    _running.clear()


_tasks_before = asyncio.all_tasks()
try:
    _prompts = [f"p{i}" for i in range(12)]
    _durations = {p: 0.03 - 0.002 * i for i, p in enumerate(_prompts)}  # later prompts finish first
    _got = await asyncio.wait_for(generate_all(_prompts, 4, _spy(_durations)), timeout=3)
    assert _got == [f"out {p}" for p in _prompts], (
        "the results must follow the order of the prompts, not the order the calls finished in: "
        "keep the tasks in a list and read their results in that order (chapter 03)")
    assert _inside.entered == 12, f"{_inside.entered} generate calls for 12 prompts: call it exactly once per prompt"
    assert _inside.peak <= 4, (
        f"{_inside.peak} calls ran at once with limit 4: one semaphore must be shared by all the calls "
        "(a semaphore made inside each task limits nothing; chapter 06)")
    assert _inside.peak == 4, (
        f"only {_inside.peak} calls ran at once with limit 4: the work must run concurrently, "
        "each prompt in its own task, all created up front (chapter 03)")

    _inside = InFlight()
    _few = ["a", "b", "c", "d", "e"]
    _got = await asyncio.wait_for(generate_all(_few, 20, _spy(dict.fromkeys(_few, 0.02))), timeout=3)
    assert _got == [f"out {p}" for p in _few] and _inside.peak == 5, (
        f"5 prompts with limit 20 ran {_inside.peak} at once: the work must run concurrently")

    _inside = InFlight()
    _finished: list[str] = []
    _shorts_done = asyncio.Event()
    _uneven = ["long"] + [f"short{i}" for i in range(6)]

    async def _long_or_short(prompt: str) -> str:
        with _inside:
            if prompt == "long":  # stays busy until every short prompt has been generated
                await asyncio.wait_for(_shorts_done.wait(), timeout=1)
            else:
                await asyncio.sleep(0.002)
        _finished.append(prompt)
        if len(_finished) == 6 and "long" not in _finished:
            _shorts_done.set()
        return f"out {prompt}"

    try:
        _got = await asyncio.wait_for(generate_all(_uneven, 2, _long_or_short), timeout=3)
    except BaseException as exc:  # noqa: BLE001 - reported below
        _got = exc
    assert _got == [f"out {p}" for p in _uneven], (
        "while one slow call holds a permit, the other permit must go to the next prompt as soon "
        "as it is free, not wait for a fixed batch to complete: let the semaphore hand out the "
        "permits (chapter 06)")

    _inside = InFlight()
    _mixed = ["slow1", "bad", "slow2", "slow3", "slow4"]
    _mixed_durations = {"slow1": 0.5, "bad": 0.01, "slow2": 0.5, "slow3": 0.5, "slow4": 0.5}
    _raised, _still_running = None, []
    try:
        async with asyncio.timeout(3):  # runs generate_all in this task: no extra loop pass before we look
            await generate_all(_mixed, 3, _spy(_mixed_durations, failing="bad"))
    except BaseException as exc:  # noqa: BLE001 - the test inspects whatever came out
        _raised = exc
        _still_running = [t for t in _running if not t.done()]  # looked at before any other await
    assert _raised is not None, (
        "one generate call raised, but generate_all returned normally: the failure must propagate "
        "to the caller, not be swallowed or returned as a value (chapter 03)")
    assert not isinstance(_raised, TimeoutError), (
        "generate_all must fail fast when one call fails, not wait for the slow calls (chapter 03)")
    assert _contains(_raised, ValueError), f"the failure must propagate, got {_raised!r}"
    assert not _still_running, (
        f"{len(_still_running)} generate calls were still running after the failure: cancel the "
        "others, then wait for them to finish (a TaskGroup does both; chapter 05)")
finally:
    await _stop_leftovers(_tasks_before)

# Generated scenarios (issue 37): the same scenarios through generate_all and the reference, on
# virtual time, compared on what the contract names (lab_snippets.scenarios explains the pattern).
import dataclasses as _dc

from hypothesis import strategies as _st

from lab_snippets import scenarios as _sc

_reference = _sc.reference(globals(), "generate_all")


@_dc.dataclass(frozen=True)
class _Plan:  # one caller's: each caller of several at once has its own (_sc.Callers)
    prompts: tuple       # may repeat; the k-th call for a prompt returns "<prompt>/<k>"
    limit: int
    calls: tuple         # of _sc.Job: the n-th call of generate to start behaves as calls[n] (else 1 s)
    cancel_at: float | None = None

    def call(self, n: int) -> _sc.Job:
        return self.calls[n] if n < len(self.calls) else _sc.Job(1)

    def describe(self, who: str) -> str:
        calls = "; ".join(j.describe(f"call {n}") for n, j in enumerate(self.calls))
        _, cancel = _sc.callers_phrase(1, self.cancel_at)
        return (f"{who} calls generate_all({list(self.prompts)!r}, limit={self.limit}){cancel}; the calls "
                f"of generate, in the order they start: {calls + '; later ones' if calls else 'each'} take 1 s; "
                "the k-th call for a prompt returns '<prompt>/<k>'")


@_st.composite
def _plans(draw):
    ok = _st.builds(_sc.Job, seconds=_st.sampled_from([1, 0, 2, 3]), value=_st.none(),
                    cleanup=_st.sampled_from([0, 1, 3]))
    bad = _st.builds(_sc.Job, seconds=_st.sampled_from([1.25, 0.25]), raises=_st.just(True),
                     cleanup=_st.sampled_from([0, 1]))
    prompts = draw(_st.lists(_st.sampled_from("abcé"), max_size=7))
    calls = draw(_st.lists(_st.one_of(ok, ok, ok, bad), max_size=len(prompts)))
    return _Plan(prompts=tuple(prompts), limit=draw(_st.integers(1, 4)), calls=tuple(calls),
                 cancel_at=draw(_st.sampled_from([None, None, 0.5, 1.5, 2.5])))


def _observe(fn, s: _sc.Callers) -> list:
    async def one_caller(plan: _Plan) -> dict:
        rec, seen = _sc.Recorder(), {}

        async def generate(prompt: str) -> str:
            k = seen[prompt] = seen.get(prompt, -1) + 1
            job = plan.call(len(rec.starts))
            return await rec.run(prompt, _dc.replace(job, value=f"{prompt}/{k}"))

        return await _sc.call_once(lambda: fn(list(plan.prompts), plan.limit, generate), rec, plan.cancel_at)

    return _sc.run_each(one_caller, s)


_ERRORS = {"raised JobFailed", "raised ExceptionGroup[JobFailed]"}  # a group holding it counts


def _compare_one(me: dict, it: dict, s: _Plan) -> str | None:
    if me.get("peak", 0) > s.limit:
        return (f"{me['peak']} calls ran at once with limit {s.limit}: one semaphore must be shared by all "
                "the calls")
    allowed, ev = _sc.fate(it, s.cancel_at, _ERRORS)
    problem = _sc.check_ending(me, it, allowed, ev, "generate_all", names="generate call")
    if problem:
        return problem
    if me["kind"] == "returned" and me["value"] != it["value"]:
        return (f"returned {me['value']!r}, expected {it['value']!r}: call generate once per prompt (a "
                "repeated prompt too) and keep the results in the order of the prompts")
    if me["kind"] == "returned" and me["peak"] < it["peak"]:
        return (f"only {me['peak']} calls ran at once where {it['peak']} could: the work must run "
                "concurrently, up to `limit` calls")
    return _sc.check_starts(me, it, ev, names="generate call")


_compare = _sc.per_caller(_compare_one)


_sc.differential(generate_all, _reference, _sc.several(_plans()), _observe, _compare, what="generate_all",
                 examples=60, hint="chapters 03, 05 and 06")
### END HIDDEN TESTS

# %% [markdown]
# ## Summary
#
# - A semaphore limits how many tasks are **inside** a section at once, never how many tasks
#   exist; the others wait at `async with` for a permit.
# - Count what is inside (here with `InFlight`) and assert the peak: it reaches the limit when
#   there is enough work, and never exceeds it.
# - For a batch of equal jobs the time follows ceil(n / limit) × duration; a permit that does
#   not remove a whole round buys nothing.
# - The same semaphore taken twice on one path deadlocks as soon as all permits are held by
#   tasks waiting for their second; the fix is to acquire at one level only.
# - Share one semaphore between all the work it limits; one made per call limits nothing.
#
# **What's next.** Chapter 07 connects a fast producer to a slow consumer with a bounded
# queue, a second way to keep one side from running away from the other.
#
# ## In slime
#
# In the rollout, every sample becomes a task long before the inference servers can take it.
# `generate_and_rm` (quoted below) takes a permit of `GenerateState`'s semaphore around the
# generate call. `GenerateState` is a singleton, so every sample task of the process shares
# its one semaphore, as the exercise needs. Other semaphores in slime are listed in the
# [source inventory](../book/reference/inventory.md).

# %% tags=["remove-input"]
from lab_snippets.sites import show_call_site

show_call_site("06")

# %% [markdown]
# ### A run: one sample grades while it holds its permit
#
# A model of the quote, written for this page: 2 permits stand for the servers' request
# limit, and 8 samples each need one 0.03 s generate call. Sample 0 also needs a 0.3 s
# grading step. On the built-in path that step runs after the `async with` block, like
# slime's reward step; in a custom generate function like the coding-agent example's, it runs
# inside the block, holding the permit. The cell runs the batch both ways and prints when the
# last of the 8 generate calls was done.
#
# Predict, for each way: when are the 8 generate calls done, after about 0.12, 0.21 or
# 0.42 s?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
GENERATE, GRADE = 0.03, 0.3  # seconds: one generate call, sample 0's grading


async def generate_and_rm(sample_id: int, permits: asyncio.Semaphore,
                          grade_inside: bool, generated_at: list[float]) -> None:
    async with permits:  # one request slot on the servers
        await asyncio.sleep(GENERATE)  # the generate call
        generated_at.append(loop.time())
        if sample_id == 0 and grade_inside:
            await asyncio.sleep(GRADE)  # grading inside the generate function
    if sample_id == 0 and not grade_inside:
        await asyncio.sleep(GRADE)  # the reward step, after the permit is given back


loop = asyncio.get_running_loop()
last_generated = {}
for grade_inside in (False, True):
    permits, generated_at, start = asyncio.Semaphore(2), [], loop.time()
    async with asyncio.timeout(2):
        await asyncio.gather(*(generate_and_rm(i, permits, grade_inside, generated_at)
                               for i in range(8)))
    last_generated[grade_inside] = max(generated_at) - start
    where = "inside the permit" if grade_inside else "after the permit "
    print(f"grading {where}: the 8 generate calls done after",
          f"{last_generated[grade_inside]:.2f} s")

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# floor: samples 0 and 1 first, then one permit held by grading: the 6 calls left go one at a time
assert last_generated[True] >= 0.95 * 7 * GENERATE, last_generated
assert last_generated[False] < 0.75 * last_generated[True], last_generated
print("✓ grading inside the permit: the 6 calls still waiting went through one permit, and took longer")

# %% [markdown]
# :::{dropdown} Why
#
# With the grading after the block, the 8 calls went through 2 at a time, in 4 rounds of
# 0.03 s. With the grading inside, sample 0 kept one of the 2 permits for 0.3 s after its
# call was over, so the 6 calls still waiting went one at a time. For those 0.3 s the servers
# had one request where the limit allowed two.
#
# :::
#
# slime's coding-agent example (`examples/coding_agent_rl/generate.py`) is such a custom
# generate function: inside the call it runs an agent in a sandbox, then grades the agent's
# patch with a SWE-bench-style evaluation. So each sample that gets as far as its evaluation
# holds its permit through it, up to the evaluation's default timeout of 600 s.
#
# The coding-agent example bounds its sandbox boots the same way, with one module-level
# semaphore, `_BOOT_SEM`, in `boot_agent_sandbox` (the next quote). Made inside each call
# instead, it would limit nothing (the run before the exercise): a rollout's sandboxes would
# boot at once, however many there are. The permit bounds the boot, not the sandbox's life:
# the sandbox outlives the semaphore's block, and is closed later, when the caller leaves
# `boot_agent_sandbox`, an async context manager (written with `@asynccontextmanager`) that
# the example's `generate` enters with `async with`.

# %% tags=["remove-input"]
show_call_site("06b")

# %% [markdown]
# # 07 · Queue: connecting producer speed and consumer speed
# *Queue：把生产速度和消费速度接起来*
#
# **The question.** Rollout workers produce finished samples at one speed and the trainer
# consumes them at another. What happens between the two when they run at different speeds,
# and how do both sides stop cleanly when the work is over? At the end, slime's own answer
# holds a puzzle: a gate that starts no new group while 4 finished groups wait, and yet 7
# end up waiting at once.
#
# **You will**
# 1. predict what an unbounded and a bounded queue do between a fast producer and a slow
#    consumer, then measure it as queue depth and as how stale items are when used,
#    counted in items taken while they waited;
# 2. plot queue depth over time for a fast producer and for a slow one;
# 3. end consumers cleanly, in three ways: sentinels, `join()` with `task_done()`, and
#    `Queue.shutdown()`;
# 4. pass results from a thread to the event loop through a `queue.Queue`, and count what
#    each way of taking them costs the loop.
#
# **Needs** chapters 03 (tasks), 05 (cancellation) and 06 (semaphore) · about 70 minutes
#
# **New to the course?** [How to read an experiment](../book/reading_guide.md) explains the
# timelines, the helpers and the folded checks; the [glossary](../book/glossary.md) gives the
# words the chapters share. The folded setup cell imports the tools; its `figure_style()` only
# sets how the plots look.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the setup"}
import asyncio
import queue
import sys
import threading
import time

import matplotlib.pyplot as plt

# LoopWatch is a heartbeat task that notes the time every few ms while the loop is free.
from lab_snippets.asyncio_tools import InFlight
from lab_snippets.loopwatch import LoopWatch
from lab_snippets.timeline import figure_style

figure_style()

# %% [markdown]
# ## Two speeds and a queue between them
#
# An `asyncio.Queue` holds the items one side has put and the other has not yet taken.
# `get()` suspends while the queue is empty. With `maxsize=0` (the default) the queue is
# unbounded and `put()` never waits. With `maxsize=k`, `put()` suspends while `k` items are
# waiting: the producer is slowed to the consumer's pace. That push-back from a slow consumer
# to its producer is called **backpressure**.
#
# The producer and the consumer below are what you would write in a program: `put` each
# item, `get` each item. The queue they share is a `WatchedQueue`, an `asyncio.Queue` that
# also records (in the folded cell above them) its depth after every `put` and `get`.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the instruments"}
class WatchedQueue(asyncio.Queue):
    """An asyncio.Queue that records its depth after every put and get, and each item's age."""

    def __init__(self, maxsize: int = 0) -> None:
        super().__init__(maxsize)
        self.start = time.monotonic()
        self.depth, self.ages, self.gets_at_put = [(0.0, 0)], [], []
        self.gets = 0

    def _record(self) -> None:
        self.depth.append((time.monotonic() - self.start, self.qsize()))

    def put_nowait(self, item) -> None:  # put() ends here once there is room
        super().put_nowait((item, self.gets))
        self.gets_at_put.append(self.gets)
        self._record()

    def get_nowait(self):  # get() ends here once there is an item
        item, gets_when_put = super().get_nowait()
        self.ages.append(self.gets - gets_when_put)
        self.gets += 1
        self._record()
        return item

    @property
    def summary(self) -> dict:
        return {"peak": max(d for _, d in self.depth), "stalest": max(self.ages),
                "consumed by the time the producer finished": self.gets_at_put[-1]}


# %%
async def producer(items: asyncio.Queue, n_items: int, every: float) -> None:
    for i in range(n_items):
        if every:
            await asyncio.sleep(every)
        await items.put(i)  # waits while the queue is full


async def consumer(items: asyncio.Queue, n_items: int, every: float) -> None:
    for _ in range(n_items):
        await items.get()  # waits while the queue is empty
        await asyncio.sleep(every)  # the work on the item


async def run_pair(maxsize: int, n_items: int, produce_every: float,
                   consume_every: float) -> WatchedQueue:
    items = WatchedQueue(maxsize=maxsize)
    await asyncio.gather(producer(items, n_items, produce_every),
                         consumer(items, n_items, consume_every))
    return items


# %% [markdown]
# ## Predict: how full does the queue get, and how stale are its items?
#
# A producer makes 20 items as fast as it can; the consumer needs 0.01 s per item. First the
# queue is unbounded, the usual default, then bounded at 3. Each run prints three columns:
#
# - the *peak depth*: the most items waiting at once;
# - how many of the 20 items the consumer had taken by the time the producer finished;
# - the *stalest item*: how many items overtook the one that waited longest. For each item,
#   count the items the consumer took while it waited in the queue (put when the consumer
#   had taken 5, taken when it had taken 8: 3 items); the column prints the largest count.
#
# For each run, predict the peak depth, and whether the consumer had taken none, about half,
# or almost all of the items when the producer finished.

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
N_ITEMS, CONSUME_EVERY = 20, 0.01
unbounded = await run_pair(0, N_ITEMS, 0, CONSUME_EVERY)
bounded = await run_pair(3, N_ITEMS, 0, CONSUME_EVERY)

for name, run in (("unbounded", unbounded.summary), ("maxsize=3", bounded.summary)):
    consumed = run["consumed by the time the producer finished"]
    print(f"{name:<10} peak depth {run['peak']:>2} · consumed when the producer "
          f"finished {consumed:>2} · stalest item {run['stalest']:>2}")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: bound-limits-depth-and-staleness
free, held = unbounded.summary, bounded.summary
assert free["peak"] >= N_ITEMS - 2, f"everything piles up in the unbounded queue: {free}"
assert free["consumed by the time the producer finished"] <= 1, (
    f"the producer finished before the consumer got going: {free}")
assert held["peak"] <= 3, f"the bound holds: {held}"
assert held["consumed by the time the producer finished"] >= N_ITEMS - 3 - 1, (
    f"the bounded producer kept the consumer's pace: {held}")
assert free["stalest"] >= N_ITEMS - 2, (
    f"unbounded: the last items waited for almost all the others: {free}")
assert held["stalest"] <= 3 - 1, (
    f"bounded: an item waits for at most the items queued ahead of it: {held}")
print("✓ unbounded: all 20 piled up, the last waited for all the others\n"
      "✓ maxsize=3: at most 3 waiting, each taken soon after it was put")

# %% [markdown]
# :::{dropdown} Why
#
# An unbounded queue's `put()` never suspends, and a coroutine that never suspends never lets
# another task run (chapter 02): nothing made the unbounded producer stop before it had put its
# last item. The bounded producer suspended whenever 3 items were waiting, and the consumer ran
# each time.
#
# The unbounded queue made nothing faster (the consumer needed the same 0.2 s either way); it
# only moved the waiting from the producer into the queue, where items grow stale. The third
# column counts that staleness in items, not seconds, so a busy machine cannot skew it.
# Unbounded, the stalest item was the last one put: all 19 others were taken while it
# waited. Bounded, no item saw more than the 2 queued ahead of it. In RL rollouts a stale
# sample was generated by older weights, so "unbounded" needs another brake somewhere else; slime's fully-async rollout, at
# the end of this chapter, has one.
#
# :::
#
# ## Measure: queue depth over time, with a fast and with a slow producer
#
# The same runs will be drawn as queue depth over time, with a third: a slow producer (one
# item per 0.01 s) feeding a consumer that needs no time at all, through an unbounded queue.
# Predict: what is the peak depth of that third run?

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the plotting code"}
def draw_depths(runs: dict[str, WatchedQueue]) -> plt.Axes:
    """Each run's queue depth over time, one step line per run; the caller sets the title."""
    fig, ax = plt.subplots(figsize=(8, 3.8), layout="constrained")
    for name, run in runs.items():
        times, depths = zip(*run.depth, strict=True)
        ax.step(times, depths, where="post", label=name, linewidth=2, marker="o", markersize=3)
    ax.legend()
    ax.set_xlabel("time since start (s)")
    ax.set_ylabel("items waiting in the queue")
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_ylim(bottom=-0.6)  # a line at depth 0 stays visible above the axis
    return ax


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
slow_producer = await run_pair(0, 10, 0.01, 0)
ax = draw_depths({  # each run's queue depth over time, as a figure
    "fast producer, unbounded queue": unbounded,
    "fast producer, maxsize=3": bounded,
    "slow producer, fast consumer": slow_producer})
ax.set_title("Queue depth over time: who waits, the producer or the consumer?")
print("peak depth with a slow producer:", slow_producer.summary["peak"])

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert slow_producer.summary["peak"] <= 1, "a slow producer never lets items pile up"
print("✓ slow producer: never more than 1 item waiting")

# %% [markdown]
# :::{dropdown} Why
#
# With the slow producer the queue is almost always empty: each item is taken as soon as it
# is put, and the consumer is the one that waits. With the fast producer it is the other way
# round: the consumer is the slow side and the items wait for it. The figure under the answer
# draws all three runs: the unbounded queue climbs to the peak the first answer printed, all or nearly
# all of the 20 items, the bounded one stays at 3 or below, the slow producer's at 1 or 0. The
# dots of the bounded line at depth 2 are its gets: each `get()` frees a slot, and the waiting
# producer fills it again as soon as it runs.
#
# :::

# %% [markdown]
# ## Ending cleanly: how many sentinels?
#
# A consumer usually loops `while True: item = await queue.get()`. Nothing in that loop ends
# by itself: `get()` on an empty queue waits forever. The classic end signal is a
# **sentinel**, an agreed value that means "no more items". Make it an object of its own,
# `NO_MORE = object()`, and test it with `is`: no producer can put that object on the queue by
# accident. `None` is a common choice, and it works until an item can itself be `None` (a hook
# that returned nothing, a missing field): that item is taken for the end signal and never
# handled. Below, three consumers share one queue, and the producer puts six items and
# then a single sentinel. The cell waits until one consumer has ended, and 0.1 s more, and
# prints how many had ended and how many were still waiting. Predict that pair: how many of
# the three consumers does one sentinel end?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
NO_MORE = object()  # the sentinel: equal to nothing else


async def consume_until_sentinel(jobs: asyncio.Queue, handled: list[int]) -> None:
    while True:
        item = await jobs.get()
        if item is NO_MORE:
            return
        await asyncio.sleep(0.005)
        handled.append(item)


jobs: asyncio.Queue = asyncio.Queue()
handled: list[int] = []
consumers = [asyncio.create_task(consume_until_sentinel(jobs, handled))
             for _ in range(3)]
for item in range(6):
    jobs.put_nowait(item)
jobs.put_nowait(NO_MORE)
# wait until one consumer ends, then give the others 0.1 s more
await asyncio.wait(consumers, timeout=2, return_when=asyncio.FIRST_COMPLETED)
done, pending = await asyncio.wait(consumers, timeout=0.1)
with_one_sentinel = (len(done), len(pending))
print("one sentinel: ended, still waiting =", with_one_sentinel)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: one-sentinel-ends-one-consumer
assert with_one_sentinel == (1, 2), f"one sentinel ends one consumer: {with_one_sentinel}"
print("✓ one sentinel ended one consumer of three")

# %% [markdown]
# :::{dropdown} Why
#
# Each sentinel is taken by exactly one consumer, and the consumer that takes it returns; the
# others go back to `get()`, where an empty queue makes them wait for an item that never
# comes. So N consumers need N sentinels. A `None` item taken for a sentinel ends its consumer
# early in the same way, and leaves the rest of the items to fewer consumers (to none, if it
# was the only one).
#
# :::
#
# To finish, the cell below puts one more sentinel per consumer in `pending`, and waits for
# them all.

# %%
for _ in pending:
    jobs.put_nowait(NO_MORE)
done, pending = await asyncio.wait(consumers, timeout=2)
print("one per consumer: ended, still waiting =", (len(done), len(pending)))
print("items handled:", sorted(handled))

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert (len(done), len(pending)) == (3, 0) and sorted(handled) == list(range(6))
print("✓ one sentinel per consumer ended all three, 6 items handled")

# %% [markdown]
# ## Ending cleanly: `join()` and `task_done()`
#
# Sometimes the consumers are long-lived workers and the producer only needs to know that
# everything it put has been handled. `queue.join()` is meant for that; the worker below calls
# `task_done()` in a `finally` after each item. Once `join()` returns,
# the workers are cancelled (and awaited, chapter 05).
#
# `put_then_join` below puts 8 items for two workers, waits until the log shows every item
# handled, and then gives `join()` 0.1 s; it returns the log. It runs twice: once with workers
# that call `task_done()`, once with workers that never call it. Both runs handle all 8 items.
# Predict: in each run, does `join()` then return?

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the helpers"}
async def all_handled(log: list[str], n_items: int, timeout: float = 2) -> None:
    """Wait until the log shows every item handled (2 s at most)."""
    async with asyncio.timeout(timeout):
        while sum("handled" in entry for entry in log) < n_items:
            await asyncio.sleep(0.005)


async def cancel_all(tasks: list[asyncio.Task]) -> None:
    """Cancel the tasks and wait for them to end (chapter 05): none is left running."""
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    assert all(task.cancelled() for task in tasks), "every worker ended by its cancellation"


# %%
async def worker(jobs: asyncio.Queue, log: list[str], calls_task_done: bool) -> None:
    while True:
        item = await jobs.get()
        try:
            await asyncio.sleep(0.005)
            log.append(f"item {item} handled")
        finally:
            if calls_task_done:
                jobs.task_done()


# %%
async def put_then_join(calls_task_done: bool) -> list[str]:
    jobs, log = asyncio.Queue(), []
    workers = [asyncio.create_task(worker(jobs, log, calls_task_done))
               for _ in range(2)]
    for item in range(8):
        jobs.put_nowait(item)
    await all_handled(log, 8)  # folded above: until the log shows 8 items handled
    try:
        async with asyncio.timeout(0.1):
            await jobs.join()
        log.append("join returned")
    except TimeoutError:
        log.append("join timed out")
    await cancel_all(workers)  # folded above: the workers cancelled and awaited
    return log


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
with_task_done = await put_then_join(True)
without_task_done = await put_then_join(False)
print("with task_done:    ", with_task_done[-1])
print("without task_done: ", without_task_done[-1])

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: join-waits-for-task-done
def handled(log: list[str]) -> int:
    return sum("handled" in entry for entry in log)


assert (with_task_done[-1], handled(with_task_done)) == ("join returned", 8), with_task_done
assert (without_task_done[-1], handled(without_task_done)) == ("join timed out", 8), (
    f"all 8 handled, yet join() never returned: {without_task_done}")
print("✓ with task_done() join returned; without it, all 8 were handled and join() still waited")

# %% [markdown]
# :::{dropdown} Why
#
# `join()` counts `task_done()` calls, not handled items. Look at the second run's line: all 8
# items were handled, yet with no `task_done()` the count never reached 8, and `join()` would
# have waited forever; only the timeout ended the wait. That is also why the worker calls
# `task_done()` in a `finally`: an item whose handling raised must still be counted, or one
# failed item keeps `join()` waiting forever.
#
# :::
#
# ## Ending cleanly on Python 3.13+: `Queue.shutdown()`
#
# Python 3.13 added a third way, `Queue.shutdown()`, which closes a queue: after it,
# `put()` raises `QueueShutDown`, and so does a `get()` that finds the queue empty. Each
# consumer ends with `except QueueShutDown: return`. The demonstration below puts six
# items for three consumers and calls `shutdown()` once, at once, before any consumer
# has run (on an older Python the cell says so instead).
#
# **Predict:** after that one call, how many of the three consumers end, and how many of
# the six items are handled first?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
if sys.version_info >= (3, 13):
    async def consume_until_shutdown(jobs: asyncio.Queue, handled: list[int]) -> str:
        while True:
            try:
                item = await jobs.get()
            except asyncio.QueueShutDown:
                return "ended by shutdown"
            await asyncio.sleep(0.005)
            handled.append(item)

    jobs, handled = asyncio.Queue(), []
    consumers = [asyncio.create_task(consume_until_shutdown(jobs, handled))
                 for _ in range(3)]
    for item in range(6):
        jobs.put_nowait(item)
    jobs.shutdown()
    done, pending = await asyncio.wait(consumers, timeout=2)
    print(f"consumers ended: {[t.result() for t in done]}")
    print(f"items handed out: {sorted(handled)}")
else:
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    print(f"This page ran on Python {version}, which has no Queue.shutdown(),\n"
          "so this cell cannot run it; the text below says what 3.13 does.\n"
          "On older Pythons, end each consumer with its own sentinel (N consumers,\n"
          "N sentinels), or join() the queue and then cancel and await the consumers.")

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
if sys.version_info >= (3, 13):
    assert not pending and sorted(handled) == list(range(6)), (
        f"shutdown() ends every consumer once the items are handed out: {pending}, {handled}")
    print("✓ shutdown(): all three consumers ended, all 6 items handled")

# %% [markdown]
# :::{dropdown} Why
#
# On 3.13 and later all three consumers end, and all six items are handled first:
# `get()` looks at the shutdown mark only when it finds the queue empty, so one call
# ends however many consumers there are. `shutdown(immediate=True)` would drop the
# waiting items instead, and `get()` would raise at once.
#
# :::

# %% [markdown]
# ## From a thread to the event loop: `queue.Queue`
#
# A thread runs a plain function beside the event loop's thread:
# `t = threading.Thread(target=f, args=(x,))` makes one that will call `f(x)`, `t.start()`
# starts it, and `t.join(timeout=2)` waits at most 2 s for it to end (Part II covers threads).
#
# `asyncio.Queue` is for tasks on one event loop; it is not thread-safe. Between a thread and
# a loop, use the thread-safe `queue.Queue`. The cell below times two ways for the loop's side
# to take the items a thread puts there, one *stretch* each:
#
# 1. **Polling**: a thread puts five groups, one per 0.03 s, and the loop tries
#    `get_nowait()`, with an `await asyncio.sleep(0.005)` between tries while the queue is empty.
# 2. **The blocking `get()`** a thread would call: a second thread puts one group after 0.1 s,
#    and the loop waits for it with `finished_groups.get(timeout=2)`.
#
# A heartbeat task on the loop ticks every 5 ms, and a tick can happen only while the loop is
# free. Predict, for each of the two stretches: many heartbeats, a few, or none?
#
# How it is counted: the course's `LoopWatch` runs the heartbeat and notes the time of each
# tick in `watch.beats`; `with Stretch() as polling:` notes when the block starts and ends,
# and `polling.beats(watch)` counts the ticks between the two. (The queue in the cell is a
# `queue.Queue` that also notes when each item was put; only the folded check reads that.)

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the instruments: Stretch, and a queue that notes put times"}
class Stretch:
    """The start and end of a stretch of code, and the loop's heartbeats inside it."""

    def __enter__(self) -> "Stretch":
        self.start = time.monotonic()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.end = time.monotonic()

    def beats(self, watch: LoopWatch) -> int:
        return sum(self.start < beat < self.end for beat in watch.beats)


class TimedQueue(queue.Queue):
    """A queue.Queue that records when each item was put, for the check below."""

    def __init__(self) -> None:
        super().__init__()
        self.put_at: list[float] = []

    def put(self, item, block: bool = True, timeout: float | None = None) -> None:
        self.put_at.append(time.monotonic())
        super().put(item, block, timeout)


# %%
finished_groups = TimedQueue()  # a queue.Queue that also notes put times for the check


def rollout_thread(n_groups: int, every: float, prefix: str = "group") -> None:
    for i in range(n_groups):
        time.sleep(every)
        finished_groups.put(f"{prefix} {i}")


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
collected: list[str] = []
async with LoopWatch(interval=0.005) as watch:  # a heartbeat task, ticking every 5 ms
    producer_thread = threading.Thread(target=rollout_thread, args=(5, 0.03))
    producer_thread.start()
    with Stretch() as polling:  # stretch 1: polling
        while len(collected) < 5:
            try:
                collected.append(finished_groups.get_nowait())
            except queue.Empty:
                await asyncio.sleep(0.005)
    slow_thread = threading.Thread(target=rollout_thread, args=(1, 0.1, "slow group"))
    slow_thread.start()
    with Stretch() as in_get:  # stretch 2: the blocking get()
        collected.append(finished_groups.get(timeout=2))  # 2 s at most
print("collected:", collected)
for name, stretch in (("polling", polling), ("in get()", in_get)):
    print(f"heartbeats while {name} for {stretch.end - stretch.start:.2f} s:",
          stretch.beats(watch))

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: blocking-get-freezes-the-loop
for t in (producer_thread, slow_thread):
    t.join(timeout=2)
    assert not t.is_alive()
put_at = finished_groups.put_at
assert collected == [f"group {i}" for i in range(5)] + ["slow group 0"], collected
assert polling.beats(watch) >= 2, "polling kept the loop alive"
assert len(put_at) == 6 and in_get.start < put_at[5] < in_get.end, (
    "get() must still have been waiting when the slow thread put its group")
assert in_get.beats(watch) == 0, (
    "a blocking get() froze the loop: not one heartbeat while it waited")
print("✓ the loop kept beating while it polled;\n"
      "✓ not one beat while get() blocked it")

# %% [markdown]
# :::{dropdown} Why
#
# A blocking `get()` holds the thread it is called on, and the event loop runs on that same
# thread. Compare the two counts, each with the length of its stretch: polling let the
# heartbeat tick many times, a blocking `get()` not once. While `get()` blocks, every other
# task on the loop waits with it, for as long as the group takes to arrive. A tick can only
# happen while the loop is free.
#
# Polling keeps the loop free, but it has two costs. It wakes every 5 ms to find nothing, and
# an item waits up to one poll interval before it is seen.
#
# :::
#
# If you can change the thread's side, you can avoid both costs. An event loop, like most
# asyncio objects, is not thread-safe, and `loop.call_soon_threadsafe(callback, *args)` is the
# method made for calls from other threads. It queues `callback(*args)` and wakes the loop,
# which then runs the call on its own thread. So a thread can hand over an item with
# `loop.call_soon_threadsafe(handed.put_nowait, item)` into an ordinary `asyncio.Queue`, and
# the loop's side awaits `handed.get()` as it would for any task. Below, a third thread does
# that after 0.1 s, and the same heartbeat counts the ticks while the loop awaits the group.

# %%
def hand_to_loop(loop: asyncio.AbstractEventLoop, handed: asyncio.Queue,
                after: float) -> None:
    time.sleep(after)
    loop.call_soon_threadsafe(handed.put_nowait, "handed group 0")


handed: asyncio.Queue = asyncio.Queue()
async with LoopWatch(interval=0.005) as handoff_watch:
    handoff_thread = threading.Thread(target=hand_to_loop,
                                      args=(asyncio.get_running_loop(), handed, 0.1))
    handoff_thread.start()
    with Stretch() as awaited:
        group = await asyncio.wait_for(handed.get(), timeout=2)  # 2 s at most
print("got:", group)
print(f"heartbeats while awaiting it for {awaited.end - awaited.start:.2f} s:",
      awaited.beats(handoff_watch))

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: call-soon-threadsafe-keeps-the-loop-free
handoff_thread.join(timeout=2)
assert not handoff_thread.is_alive()
assert group == "handed group 0", group
assert awaited.beats(handoff_watch) >= 2, "awaiting the handed group kept the loop alive"
print("✓ the loop kept beating while it awaited the handed group")

# %% [markdown]
# The loop slept in `await handed.get()` until the thread's call woke it: no polls, no wait
# for the next poll, and the item went into the `asyncio.Queue` on the loop's own thread,
# where that queue is safe. That is the usual way from a thread into a loop. Polling is for
# when the thread's side is fixed as a `queue.Queue`, and a blocking `get` can also be handed
# to a thread of its own (chapter 08).

# ## Exercise 7.1 · A bounded pipeline that ends cleanly
#
# Implement `run_pipeline(items, process, n_workers, jobs)`:
#
# 1. start `n_workers` worker tasks; each repeatedly takes a job from `jobs` (an
#    `asyncio.Queue` you are given, already bounded) and runs `await process(item)`;
# 2. put every item on `jobs` (the bound makes this wait when the workers fall behind);
# 3. end every worker cleanly once all items are handled: no worker may be left running
#    when `run_pipeline` returns;
# 4. return the results in the order of `items`, whatever order they finish in;
# 5. if a call of `process` raises, stop the workers, start nothing new, and let the error
#    come out (an `ExceptionGroup` holding it counts); if the caller cancels `run_pipeline`,
#    stop the workers before the cancellation comes out. A `TaskGroup` (chapter 03) does
#    both.
#
# Up to `n_workers` (at least 1) items should be processed at once. Items may be `None`.
#
# :::{dropdown} Hint 1: how does each worker end?
#
# One sentinel per worker ends the workers when the items run out (the sentinel experiment
# above). The grader passes `None` as an item too, so a worker must never take an item for the
# sentinel: it would drop that item and stop early.
#
# :::
#
# :::{dropdown} Hint 2: keeping the results in order, and a safe sentinel
#
# A worker needs to know where in the results list its result goes. What could you put on
# the queue instead of the bare item, so that it carries that position and can never be
# mistaken for the sentinel?
#
# :::
#
# :::{dropdown} Hint 3: the pieces of one solution, from this chapter and chapter 03
#
# Put `(index, item)` pairs on the queue: the index says where the result goes, and `None`
# is then safe as the sentinel (a pair is never `None`); an object of its own,
# `NO_MORE = object()`, works too. Starting the workers in an `async with asyncio.TaskGroup()`
# block (chapter 03) does the rest: when one worker raises, the group cancels the others
# and waits for them, and when the caller cancels, the block cancels and waits for every
# worker before the cancellation comes out. The group also cancels the body of its
# `async with` when a worker raises, so a producer stuck in `await jobs.put(...)` on a full
# queue is not left waiting: the `put` raises `CancelledError`, and the group raises an
# `ExceptionGroup` holding the worker's error.
#
# :::
#
# :::{dropdown} What the grader checks
#
# Graded, on many generated runs (no items, one, several; any value, `None` too; the same item
# more than once; more workers than items; queue bounds from 1 up; calls of `process` that take
# any time, several that finish at the same moment, calls that raise, calls that take a while to
# clean up once cancelled):
#
# **Inputs, concurrency and results**
#
# - **calls**: `process` once per item, a repeated item once per occurrence, every item put
#   through the given queue; the items start in their order, each the moment a worker is free;
# - **at once**: never more than `n_workers` items processed;
# - **results**: in the order of `items` (a repeated item gets the result of its own call);
#
# **Errors and cancellation**
#
# - **errors**: when a call of `process` raises, the error comes out (an `ExceptionGroup` holding
#   it counts) once the workers are stopped; nothing new starts after it;
# - **cancellation**: when the caller cancels `run_pipeline`, it ends cancelled once the workers
#   are stopped (when an error and a cancel both happen, either may come out);
#
# **When it ends, and beside other callers**
#
# - **when it ends**: no worker, and no task it started, left running; it ends as soon as
#   the last result is in, and after an error or a cancel, as soon as the workers have cleaned
#   up;
# - **several callers at once**, each with its own queue and `process`: each call behaves as if
#   alone.
#
# :::

# %%
async def double_slowly(x: int) -> int:
    await asyncio.sleep(0.002 * (x % 4))
    return 2 * x


# %% tags=["solution", "hide-input"] mystnb={"code_prompt_show": "Show the solution"}
async def run_pipeline(items: list, process, n_workers: int, jobs: asyncio.Queue) -> list:
    """Feed `items` through `jobs` to `n_workers` workers running `process`; results in item order."""
    ### BEGIN SOLUTION
    results: list = [None] * len(items)

    async def work() -> None:
        while True:
            job = await jobs.get()
            if job is None:
                return
            index, item = job
            results[index] = await process(item)

    async with asyncio.TaskGroup() as group:
        for _ in range(n_workers):
            group.create_task(work())
        for job in enumerate(items):
            await jobs.put(job)
        for _ in range(n_workers):
            await jobs.put(None)
    return results
    ### END SOLUTION


# %% tags=["tests"]
got = await asyncio.wait_for(
    run_pipeline(list(range(10)), double_slowly, 3, asyncio.Queue(maxsize=2)),
    timeout=2)
assert got == [2 * x for x in range(10)], (
    f"the results must follow the order of the items; got {got!r}")
visible_empty = await asyncio.wait_for(
    run_pipeline([], double_slowly, 2, asyncio.Queue(maxsize=2)), timeout=2)
assert visible_empty == [], f"no items: an empty list expected, got {visible_empty!r}"

# %% tags=["tests", "hidden-tests", "remove-cell"]
### BEGIN HIDDEN TESTS
from lab_snippets.asyncio_tools import cancel_new_tasks


class _CountingQueue(asyncio.Queue):
    def __init__(self, maxsize: int) -> None:
        super().__init__(maxsize)
        self.puts = 0
        self.peak = 0

    def put_nowait(self, item) -> None:
        super().put_nowait(item)
        self.puts += 1
        self.peak = max(self.peak, self.qsize())


def _spy_process(inside: InFlight):
    async def process(x: int) -> str:
        with inside:
            await asyncio.sleep(0.02 - 0.001 * (x % 10))  # later items tend to finish first
        return f"done {x}"

    return process


async def _run(items: list, n_workers: int, jobs: asyncio.Queue, inside: InFlight):
    """Run the pipeline in this task; return its result and the tasks it left unfinished."""
    before = asyncio.all_tasks()
    try:
        async with asyncio.timeout(3):  # no extra loop pass between the return and our look
            got = await run_pipeline(items, _spy_process(inside), n_workers, jobs)
    except TimeoutError:
        raise AssertionError(
            "run_pipeline did not return within 3 s: every worker must be told to stop once the "
            "items are handled (one sentinel per worker; chapter 07)") from None
    left = [t for t in asyncio.all_tasks() - before if not t.done()]
    return got, left


def _no_leftovers(left: list) -> None:
    cancelled = [t for t in left if t.cancelling()]
    assert not cancelled, (
        f"{len(cancelled)} worker tasks were cancelled but still running when run_pipeline returned: "
        "after cancel(), wait until they have finished (chapter 05)")
    assert not left, (
        f"{len(left)} worker tasks were left running after run_pipeline returned: stop every worker "
        "and wait for it before returning (chapter 07)")


_tasks_before = asyncio.all_tasks()
try:
    _inside, _jobs = InFlight(), _CountingQueue(maxsize=2)
    _got, _left = await _run(list(range(15)), 3, _jobs, _inside)
    assert _jobs.puts >= 15, (
        f"only {_jobs.puts} puts on the given queue for 15 items: the items must go through the "
        "given queue, so that its bound holds the producer back (chapter 07)")
    assert _got == [f"done {x}" for x in range(15)], (
        "the results must follow item order, not the order the items finished in: send each item "
        "with its index and store the result at that index (chapter 07)")
    assert _inside.entered == 15, f"{_inside.entered} items processed for 15: each exactly once"
    assert _inside.peak == 3, (
        f"{_inside.peak} items were processed at once by 3 workers: start `n_workers` workers, each "
        "taking its own jobs (chapter 07)")
    assert _jobs.peak <= 2
    _no_leftovers(_left)

    _inside, _jobs = InFlight(), _CountingQueue(maxsize=1)
    _got, _left = await _run(list(range(6)), 1, _jobs, _inside)
    assert _got == [f"done {x}" for x in range(6)] and _inside.peak == 1, (
        "one worker must process the items one at a time, in order (chapter 07)")
    _no_leftovers(_left)

    _inside, _jobs = InFlight(), _CountingQueue(maxsize=3)
    _got, _left = await _run([1, 2], 5, _jobs, _inside)
    assert _got == ["done 1", "done 2"], "with more workers than items, every item is still processed once"
    _no_leftovers(_left)
finally:
    await cancel_new_tasks(_tasks_before)


# Generated scenarios (issue 37): the same scenarios through run_pipeline and the reference, on
# virtual time, compared on what the contract names (lab_snippets.scenarios explains the pattern).
import dataclasses as _dc

from hypothesis import strategies as _st

from lab_snippets import scenarios as _sc

_reference = _sc.reference(globals(), "run_pipeline")


@_dc.dataclass(frozen=True)
class _Plan:  # one caller's: each caller of several at once has its own (_sc.Callers)
    items: tuple         # may repeat; the k-th call of process for an item returns "<item>/<k>"
    n_workers: int
    maxsize: int         # the bound of the queue run_pipeline is given
    calls: tuple         # of _sc.Job: the n-th call of process to start behaves as calls[n] (else 1 s)
    cancel_at: float | None = None

    def describe(self, who: str) -> str:
        calls = "; ".join(j.describe(f"call {n}") for n, j in enumerate(self.calls))
        _, cancel = _sc.callers_phrase(1, self.cancel_at)
        return (f"{who} calls run_pipeline({list(self.items)!r}, process, n_workers={self.n_workers}, "
                f"jobs=asyncio.Queue(maxsize={self.maxsize})){cancel}; the calls of process, in the order they "
                f"start: {calls + '; later ones' if calls else 'each'} take 1 s; the k-th call for an item returns "
                "'<item>/<k>'")


@_st.composite
def _plans(draw):
    ok = _st.builds(_sc.Job, seconds=_st.sampled_from([1, 0, 2, 3]), value=_st.none(),
                    cleanup=_st.sampled_from([0, 1]))
    bad = _st.builds(_sc.Job, seconds=_st.sampled_from([1.25, 0.25]), value=_st.none(), raises=_st.just(True))
    items = draw(_st.lists(_st.sampled_from([3, 1, 2, -1, None]), max_size=7))
    return _Plan(items=tuple(items), n_workers=draw(_st.integers(1, 4)), maxsize=draw(_st.integers(1, 3)),
                 calls=tuple(draw(_st.lists(_st.one_of(ok, ok, ok, bad), max_size=len(items)))),
                 cancel_at=draw(_st.sampled_from([None, None, 0.5, 1.5])))


class _Counting(asyncio.Queue):
    puts = 0

    def put_nowait(self, item) -> None:
        super().put_nowait(item)
        self.puts += 1


def _observe(fn, s: _sc.Callers) -> list:
    async def one_caller(plan: _Plan) -> dict:
        rec, seen, jobs = _sc.Recorder(), {}, _Counting(maxsize=plan.maxsize)

        async def process(item):
            k = seen[item] = seen.get(item, -1) + 1
            job = plan.calls[len(rec.starts)] if len(rec.starts) < len(plan.calls) else _sc.Job(1)
            return await rec.run(item, _dc.replace(job, value=f"{item}/{k}"))

        out = await _sc.call_once(lambda: fn(list(plan.items), process, plan.n_workers, jobs), rec, plan.cancel_at)
        return {**out, "puts": jobs.puts}

    return _sc.run_each(one_caller, s)


_ERRORS = {"raised JobFailed", "raised ExceptionGroup[JobFailed]"}  # a group holding it counts


def _compare_one(me: dict, it: dict, s: _Plan) -> str | None:
    allowed, ev = _sc.fate(it, s.cancel_at, _ERRORS)
    problem = _sc.check_ending(me, it, allowed, ev, "run_pipeline", names="task")
    if problem:
        return problem + (": stop every worker and wait for it before returning" if "left running" in problem
                          else "")
    if me["kind"] == "returned" and me["value"] != it["value"]:
        return (f"returned {me['value']!r}, expected {it['value']!r}: process every item once (a repeated item "
                "too) and keep the results in the order of the items")
    if me["kind"] == "returned" and me["puts"] < len(s.items):
        return (f"only {me['puts']} puts on the given queue for {len(s.items)} items: the items must go through "
                "the given queue, so that its bound holds the producer back")
    if me.get("peak", 0) > s.n_workers:
        return f"{me['peak']} items were processed at once by {s.n_workers} workers"
    return _sc.check_starts(me, it, ev, names="process call")


_compare = _sc.per_caller(_compare_one)

_sc.differential(run_pipeline, _reference, _sc.several(_plans()), _observe, _compare, what="run_pipeline",
                 examples=50, hint="chapter 07")
### END HIDDEN TESTS

# %% [markdown]
# ## Summary
#
# - A queue connects two speeds; it cannot make the slow side faster. Unbounded, it turns a
#   fast producer into a growing pile of stale items. Bounded, `put()` waits and the producer
#   runs at the consumer's pace (backpressure).
# - Queue depth over time tells you who waits: a full queue means a slow consumer, an empty
#   one a slow producer.
# - Consumers do not end by themselves: one sentinel per consumer, or `join()` (with
#   `task_done()` after each item) then cancel and await, or `shutdown()` on 3.13+.
# - From a thread to the loop: have the thread call `loop.call_soon_threadsafe(q.put_nowait,
#   item)` on an `asyncio.Queue` the loop awaits. With a `queue.Queue`, never a blocking
#   `get()` on the loop's side: poll with `get_nowait()` and `await asyncio.sleep`, or hand
#   the wait to a thread.
#
# **What's next.** [Part II](../book/parts/threads.md) opens with chapter 08, which moves
# blocking work off the event loop into a thread pool, the other half of the thread-to-loop
# handoff seen here.
#
# ## In slime
#
# The fully-async rollout has two event loops in two threads, linked by one `queue.Queue`,
# `output_queue`, which has no `maxsize`:
#
# - the generation loop, on an event loop of its own in a worker thread, puts each finished
#   group on the queue;
# - the training side's rollout function, `generate_rollout_fully_async`, on slime's shared
#   background event loop in another thread, takes them off.
#
# The generation loop puts each group there from a *done-callback*: a plain function that
# `task.add_done_callback(fn)` asks the event loop to call, on the loop's thread, once the
# task has ended; it cannot `await`. Three things to look for in the quote:
#
# - **the gate**: the loop starts no new group once `max_concurrent` finished groups wait in
#   `output_queue` (its `qsize`); that check, not a `maxsize`, holds the queue back;
# - **why no `maxsize`**: the callback's `put` runs on the loop's thread, so a `put` waiting on
#   a full queue would freeze that loop and the generations running on it (the zero
#   heartbeats of the blocking `get()` above);
# - **the gate is soft**: groups started while it was open still land on the queue, so the
#   queue can grow past `max_concurrent`. The model after the quote measures by how much.
#
# Every queue in slime is listed in the [source inventory](../book/reference/inventory.md).

# %% tags=["remove-input"]
from lab_snippets.sites import show_call_site

show_call_site("07")

# %% [markdown]
# Below is our own model of that loop, with `max_concurrent = 4`. Each group's generation is
# a 0.023 s sleep whose done-callback puts the group on the queue, and a folded trainer takes
# one group per 0.1 s. Set the two speeds side by side: a group is done in less than a quarter
# of the time between two takes, so a batch of 4 started right after a take has landed long
# before the next one. The queue is a `PeakQueue` (folded), a `queue.Queue` that notes the
# most items it held. Predict the most groups waiting at once: 4, 5, 7 or 12? Count what
# lands between two takes: how many wait just after a take, and how many the gate then
# starts.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the queue that notes its peak"}
class PeakQueue(queue.Queue):
    """A queue.Queue that notes the most items it held at once."""

    peak = 0

    def put(self, item, block: bool = True, timeout: float | None = None) -> None:
        super().put(item, block, timeout)
        self.peak = max(self.peak, self.qsize())


# %%
async def top_up(output_queue: queue.Queue, max_concurrent: int, group_time: float,
                 run_for: float) -> None:
    active: set[asyncio.Task] = set()
    deadline = time.monotonic() + run_for
    while time.monotonic() < deadline:
        active = {t for t in active if not t.done()}
        while len(active) < max_concurrent and output_queue.qsize() < max_concurrent:
            task = asyncio.create_task(asyncio.sleep(group_time))  # one group
            task.add_done_callback(lambda _: output_queue.put("group"))
            active.add(task)
        await asyncio.sleep(0.005)
    await asyncio.wait_for(asyncio.gather(*active), timeout=2)


# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the trainer and the run"}
async def run_gate(max_concurrent: int = 4) -> int:
    output_queue = PeakQueue()

    async def trainer() -> None:  # takes one finished group per 0.1 s
        while True:
            await asyncio.sleep(0.1)
            if not output_queue.empty():
                output_queue.get_nowait()

    taker = asyncio.create_task(trainer())
    try:
        await top_up(output_queue, max_concurrent, group_time=0.023, run_for=0.35)
    finally:
        taker.cancel()
        await asyncio.gather(taker, return_exceptions=True)
    return output_queue.peak


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
MAX_CONCURRENT = 4
gate_peak = await run_gate(MAX_CONCURRENT)  # top_up above, with the folded trainer
print(f"max_concurrent = {MAX_CONCURRENT}: most groups waiting at once = {gate_peak}")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: soft-gate-lets-the-queue-pass-max-concurrent
assert gate_peak > MAX_CONCURRENT, (
    f"the gate is soft: groups started while it was open still land: {gate_peak}")
assert gate_peak < 3 * MAX_CONCURRENT, (
    f"the gate still holds the queue to a few groups past max_concurrent: {gate_peak}")
print(f"✓ {gate_peak} groups waited at once: more than {MAX_CONCURRENT}, "
      f"fewer than {3 * MAX_CONCURRENT}")

# %% [markdown]
# :::{dropdown} Why
#
# The gate counts waiting groups only when the loop starts new ones, and a group it starts
# lands on the queue when it finishes, whatever the queue holds by then. Follow one take in the
# run:
#
# 1. The trainer takes a group; 3 are left waiting. No group is being generated: the last
#    ones were done 0.023 s after they started, long before this take.
# 2. The gate is open (3 is fewer than 4), so the loop starts 4 groups at once.
# 3. 0.023 s later the 4 land, and the trainer's next take is still about 0.08 s away:
#    3 + 4 = 7 waiting.
#
# In slime each waiting group was generated with the weights of its time. The 7th group
# waits while the trainer takes the 6 ahead of it, so by the time it is used its weights
# are up to 6 takes old. A `put` that waited on a bounded queue would hold
# this loop's thread (the zero heartbeats of the blocking `get()` above); a soft gate is the
# price of a done-callback that never waits.
#
# :::
#
# :::{dropdown} If your run printed 8
#
# A smaller effect adds one now and then. In order:
#
# 1. A group's task finishes: `t.done()` is now True, so the loop drops it from `active`.
# 2. Its done-callback, which puts the group on the queue, is scheduled (`call_soon`), but
#    it has not run yet.
# 3. For that moment the group is in neither count, so the gate sees room for one more and
#    starts one group more.
#
# slime drops finished tasks the same way, with `t.done()`.
#
# :::
#
# slime also uses a `queue.Queue` the other way round. In `_encode_delta`, on a thread with
# no event loop, the loop that copies weights waits in a blocking `free_q.get()` for a free
# copy buffer: the wait holds up nothing but that loop, which is what should wait (the
# [source inventory](../book/reference/inventory.md) links the line, under *Synchronous
# queues*).

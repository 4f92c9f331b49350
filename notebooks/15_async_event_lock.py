# %% [markdown]
# # 15 · Event notification and async mutual exclusion
# *Event 通知与异步互斥*
#
# **The question.** Tasks on one event loop never run at the same instant. So when does one
# task need to tell others "it happened" (an `Event`), when do tasks need a lock to keep out
# of each other's way (a `Lock`), and how can many requests share one slow operation?
#
# **You will**
# 1. find out how many waiters one `asyncio.Event.set()` wakes, and what a later waiter sees;
# 2. find out whether code on a single thread needs a lock, and when `asyncio.Lock` is the
#    answer;
# 3. measure what a lock held across a slow `await` costs;
# 4. let many callers share one in-flight operation, as slime's weight-update endpoint does,
#    and try it with a caller that gives up while it waits.
#
# **Needs** chapters 03 (tasks), 05 (cancellation and `shield`) and 09 (threading Lock and
# Event) · about 65 minutes
#
# **New to the course?** [How to read an experiment](../book/reading_guide.md) explains the
# timelines, the helpers and the folded checks; the [glossary](../book/glossary.md) gives the
# words the chapters share. In the first cell, `figure_style()` only sets how the plots look.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the setup"}
import asyncio

import matplotlib.pyplot as plt

from lab_snippets.asyncio_tools import InFlight
from lab_snippets.timeline import Timeline, figure_style

figure_style()

# %% [markdown]
# ## How many waiters does one `set()` wake?
#
# `await event.wait()` suspends a task until the `asyncio.Event` is set, and `event.set()`
# sets it. Below, four rollout tasks wait for "new weights are loaded", and the notebook calls
# `set()` once; a `Timeline`, the course's stopwatch (chapter 01), notes when each one waits
# and wakes. The answer's cell then adds a fifth waiter (the notebook itself), arriving after
# the `set()`, and a sixth, arriving after `event.clear()`. Predict: how many of the four
# wake, and what does each later waiter see: does it wait, or pass straight through?

# %%
tl = Timeline()
weights_loaded = asyncio.Event()


async def rollout_waits_for_weights(name: str) -> None:
    tl.mark(f"{name} waits")
    await weights_loaded.wait()
    tl.mark(f"{name} woke")


waiters = [asyncio.create_task(rollout_waits_for_weights(f"rollout {i}"))
           for i in range(4)]
await asyncio.sleep(0.01)
woken_before_set = sum(t.done() for t in waiters)
tl.mark("weights loaded: set()")
weights_loaded.set()
await asyncio.wait(waiters, timeout=2)
woken_after_set = sum(t.done() for t in waiters)

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
# waiters 5 and 6: one after the set(), one after clear()
try:  # the fifth waiter: the notebook itself
    late_waiter_passed = await asyncio.wait_for(weights_loaded.wait(), timeout=0.5)
except TimeoutError:
    late_waiter_passed = False
weights_loaded.clear()
try:  # the sixth waiter
    await asyncio.wait_for(weights_loaded.wait(), timeout=0.05)
    after_clear = "passed"
except TimeoutError:
    after_clear = "waited until the timeout"

print("woken before set:", woken_before_set, "· by set:", f"{woken_after_set} of 4")
print("fifth waiter passed:", late_waiter_passed, "· sixth (after clear):", after_clear)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: set-wakes-every-waiter-and-stays-set
assert woken_before_set == 0
assert all(tl.order("weights loaded: set()", f"rollout {i} woke") for i in range(4)), "set() woke all four"
assert late_waiter_passed is True, "the flag stayed set: a later waiter passed straight through"
assert after_clear == "waited until the timeout"
print("✓ set() woke all four waiters and stayed set until clear()")

# %% [markdown]
# :::{dropdown} Why
#
# An `Event` is a flag that tasks can wait on. `set()` does not hand the event to one
# waiter: it raises the flag, every task suspended in `wait()` sees the flag and resumes, and
# the flag stays up until `clear()` lowers it; while it is up, `wait()` returns at once,
# without suspending. So none of the four woke before the `set()` and all four after it, the
# fifth waiter passed straight through, and the sixth, arriving after `clear()`, waited until
# its timeout. An `Event` carries no value and does not count: setting it twice is the same as
# once, and a waiter cannot tell *which* `set()` woke it. When the waiters need a result, a
# future is the better tool (the section "One operation in flight, many waiters" below).
#
# One `set()` waking every waiter is the pattern behind slime's weight-update handler (*In
# slime*, at the end), where many requests share one reload; slime builds it from a shared
# future instead of an `Event`, and a future wakes all its waiters alike.
#
# :::
#
# **Predict.** Two new waiters wait on the cleared event. The notebook calls `set()` and then
# `clear()` at once, with no `await` between them, so the flag is down again before either
# waiter gets to run. Do they wake?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
last_two = [asyncio.create_task(weights_loaded.wait()) for _ in range(2)]
await asyncio.sleep(0.01)  # both are waiting now
weights_loaded.set()  # and at once, with no await between:
weights_loaded.clear()
woke, still_waiting = await asyncio.wait(last_two, timeout=0.5)
for task in still_waiting:
    task.cancel()
print("set() then clear() at once:", f"{len(woke)} of 2 woke")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: set-then-clear-still-wakes-the-waiters
await asyncio.gather(*last_two, return_exceptions=True)
assert not weights_loaded.is_set(), "the flag was down again before the waiters ran"
assert len(woke) == 2 and not still_waiting, "set() woke both waiters; the clear() after it took nothing back"
print("✓ both waiters woke, although the flag was down again before they ran")

# %% [markdown]
# :::{dropdown} Why
#
# `set()` wakes each waiter at the moment it is called: it marks the future each waiter is
# suspended on as done. A waiter it has woken returns from `wait()` whatever the flag says by
# the time it runs, so the `clear()` right after took nothing back.
#
# :::
#
# ## Predict: do tasks on one thread lose updates to a shared counter?
#
# Only one task runs at a time on an event loop. Ten tasks each add one to a shared token
# counter, in three versions: the first reads the counter and writes it back; the second
# awaits something in between (a log write, a metrics call); the third is the second with an
# `asyncio.Lock` around the read and the write. What are the three final counts?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
usage = {"tokens": 0}
counter_lock = asyncio.Lock()


async def add_token_no_await() -> None:
    current = usage["tokens"]
    usage["tokens"] = current + 1


async def add_token_with_await() -> None:
    current = usage["tokens"]
    await asyncio.sleep(0)  # a log write, a metrics call
    usage["tokens"] = current + 1


async def add_token_locked() -> None:
    async with counter_lock:
        current = usage["tokens"]
        await asyncio.sleep(0)
        usage["tokens"] = current + 1


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
final = {}
for add_token in (add_token_no_await, add_token_with_await, add_token_locked):
    usage["tokens"] = 0
    await asyncio.gather(*(add_token() for _ in range(10)))
    final[add_token.__name__] = usage["tokens"]
print(final)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: an-await-inside-read-modify-write-loses-updates
assert final["add_token_no_await"] == 10, "no await between read and write: the update is atomic"
assert final["add_token_with_await"] == 1, "all ten read 0 before any wrote: nine updates lost"
assert final["add_token_locked"] == 10, "the lock kept each read-modify-write whole"
print("✓ an await between read and write lost nine updates; the lock kept all ten")

# %% [markdown]
# :::{dropdown} Why
#
# With no `await` between the read and the write, nothing else can run in between, and no
# {term}`lock` is needed. With one `await`, each task reads the counter and then lets the others
# run before it writes back: look at the middle count, updates lost on a single thread. The rule for asyncio: a read-modify-write needs a lock
# exactly when an `await` sits inside it. `asyncio.Lock` is not a thread lock: it only keeps
# *tasks of one loop* apart, and waiting for it suspends the task instead of blocking the
# thread.
#
# :::
#
# ## Measure: what does a lock held across a slow call cost?
#
# Five requests each update a bit of
# shared bookkeeping and then make a slow call of 0.04 s. In the *wide* version the lock
# covers both; in the *narrow* version it covers only the bookkeeping, and the slow call runs
# outside it. The run draws both, one lane per request, with its plotting code folded
# below. Light green is time queued for the lock; blue is the slow call. The slow call is an
# `asyncio.sleep` standing in for a request's own work (a call to another service), so the
# figure draws it as that work, in blue, not as a wait.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the plotting code"}
def draw_scopes(timelines: dict[str, Timeline]) -> None:
    fig, axes = plt.subplots(2, 1, figsize=(8, 5.2), sharex=True, layout="constrained")
    for ax, version in zip(axes, ("wide", "narrow"), strict=True):
        timelines[version].plot(f"lock held across the slow call ({version} scope)" if version == "wide"
                                else "lock held only for the bookkeeping (narrow scope)",
                                ax=ax, lanes=[f"request {i}" for i in range(5)],
                                meanings={"waiting": "queued for the lock", "running": "slow call"})
    axes[0].set_xlabel("")
    plt.show()


# %% [markdown]
# Both versions spell out `await lock.acquire()` … `finally: lock.release()`. It does the
# same as `async with lock:`; the explicit form only lets the timeline record the time spent
# queued for the lock as its own span.

# %%
SLOW_CALL = 0.04
served = {"count": 0}


async def request_wide(tl: Timeline, lock: asyncio.Lock, name: str) -> None:
    with tl.span(name, state="waiting"):
        await lock.acquire()
    try:
        served["count"] += 1
        with tl.span(name):
            await asyncio.sleep(SLOW_CALL)
    finally:
        lock.release()


async def request_narrow(tl: Timeline, lock: asyncio.Lock, name: str) -> None:
    with tl.span(name, state="waiting"):
        await lock.acquire()
    try:
        served["count"] += 1
    finally:
        lock.release()
    with tl.span(name):
        await asyncio.sleep(SLOW_CALL)


# %%
timelines = {}
for version, request in (("wide", request_wide), ("narrow", request_narrow)):
    timelines[version] = Timeline()
    lock = asyncio.Lock()
    await asyncio.gather(*(request(timelines[version], lock, f"request {i}")
                           for i in range(5)))

# %% [markdown]
# **Predict.** Both runs are done. How many times as long as the narrow version did the wide
# one take, and how many slow calls ran at once, at most, in each?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
ratio = timelines["wide"].total() / timelines["narrow"].total()
print(f"wide scope took {ratio:.1f} × as long as narrow scope")
print("most slow calls at once: wide", timelines["wide"].max_overlap("running"),
      "· narrow", timelines["narrow"].max_overlap("running"))
draw_scopes(timelines)  # one lane per request, wide scope above, narrow below

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: a-wide-lock-serialises-the-slow-calls
assert timelines["wide"].max_overlap("running") == 1, "the wide lock lets one slow call run at a time"
assert timelines["narrow"].max_overlap("running") == 5, "with the narrow lock all five slow calls overlap"
print("✓ held across the slow call, the lock let one run at a time; held narrowly, all five overlapped")

# %% [markdown]
# :::{dropdown} Why
#
# In the wide version each request keeps the lock through its 0.04 s call, so the
# next request cannot even do its bookkeeping until that call has ended: five calls one after
# the other, against five side by side, which is the printed ratio. In the figure, one lane
# per request, the slow calls form a staircase in the top panel and run side by side in the
# bottom one. It is correct, but a lock held across a slow `await` turns concurrency into a
# queue.
#
# :::
#
# Hold a lock for the shared state only, and do slow work outside it. If the slow work
# itself must not run twice at once, that is a different need, and the next section meets it
# without holding a lock while waiting.
#
# ## One operation in flight, many waiters
#
# Several clients ask the server to load the same new checkpoint at almost the same time.
# Loading is slow and must happen once. The first request creates a future, registers it as
# "the load in flight" and does the load; later requests find the future and await it; when
# the load ends, the first request sets the future's result, which wakes every waiter with the
# same value. It behaves like an `Event` that carries a result. In its plainest form:

# %%
async def update_weights_plain(state: dict, load, path: str) -> str:
    shared = state["in_flight"]
    if shared is not None:  # no await before the next line: no lock needed
        return await shared  # a waiter awaits the shared future itself
    shared = state["in_flight"] = asyncio.get_running_loop().create_future()
    try:
        result = await load(path)
        shared.set_result(result)  # wakes every waiter with the same value
        return result
    finally:
        state["in_flight"] = None


# %% [markdown]
# `coalesced_updates(update)` runs five requests (0 to 4) for one checkpoint through the
# handler `update`: request 0 finds nothing in flight and does the load, the others wait for
# it, and request 2, an impatient client (a dropped connection), is cancelled while it waits.
# It also keeps a log: when the load ended, and when and how each request ended.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show coalesced_updates: five requests, request 2 cancelled, and the log"}
async def coalesced_updates(update) -> dict:
    state: dict = {"in_flight": None}
    loads = InFlight()  # course helper: counts the loads that ran (loads.entered)
    clock, log = asyncio.get_running_loop().time, []
    started = clock()

    def note(what: str) -> None:
        log.append(f"{clock() - started:.2f} s  {what}")

    def ending(request: asyncio.Task) -> str:
        if request.cancelled():
            return "cancelled"
        return type(request.exception()).__name__ if request.exception() else request.result()

    async def load_checkpoint(path: str) -> str:
        with loads:
            await asyncio.sleep(0.05)
        note("the load ends")
        return f"loaded {path}"

    requests = [asyncio.create_task(update(state, load_checkpoint, "ckpt-12"))
                for _ in range(5)]
    for number, request in enumerate(requests):
        request.add_done_callback(lambda r, n=number: note(f"request {n} ends: {ending(r)}"))
    await asyncio.sleep(0.01)
    note("request 2's client goes away: cancel()")
    requests[2].cancel()  # one client goes away while waiting
    await asyncio.wait(requests, timeout=2)
    await asyncio.sleep(0)  # the done callbacks of the last requests to end write their lines
    return {"loads": loads.entered, "outcomes": [ending(r) for r in requests], "log": log}


# %% [markdown]
# **Predict.** Request 2 is cancelled while it waits. What do requests 0, 1, 3 and 4 get?
# (Chapter 05 showed what cancelling a task does to the thing it awaits.)

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
plain = await coalesced_updates(update_weights_plain)
print("plain:", plain["outcomes"])
print(*plain["log"], sep="\n")

# %% [markdown]
# :::{dropdown} Why
#
# Recall chapter 05: cancelling a task cancels what it is awaiting, unless an `asyncio.shield`
# stands in between. So when a task is cancelled while it awaits a future directly, asyncio cancels the
# **future itself**, not only the task's wait. The log shows what followed. At 0.01 s
# request 2's cancel cancelled the one future that requests 1, 3 and 4 were awaiting too, and
# all four ended cancelled together. Request 0 awaited the load, not the future; at 0.05 s
# the load ended well, and request 0 called `set_result` on a future that was cancelled
# already. Setting a result on a future that is done raises `InvalidStateError`: the client
# that did the work got an error too.
#
# :::
#
# The fix changes two places, one for the waiters and one for the request that does the
# load. A waiter awaits `asyncio.shield(shared)`, a wrapper of the shared
# future (chapter 05): cancelling the waiter cancels its own wrapper, and the shared future
# stays intact. And the request that loads completes the future on every path, so that no
# waiter waits on it forever: with the result, with the load's own error (a waiter's `except`
# sees what went wrong, not a `CancelledError` nobody asked for), or cancelled when request 0
# itself was cancelled.

# %%
async def update_weights(state: dict, load, path: str) -> str:
    shared = state["in_flight"]
    if shared is not None:
        return await asyncio.shield(shared)  # a cancel reaches only this wrapper
    shared = state["in_flight"] = asyncio.get_running_loop().create_future()
    try:
        result = await load(path)
    except asyncio.CancelledError:  # this request was cancelled: nobody will load
        shared.cancel()  # release the waiters instead of leaving them waiting
        raise
    except Exception as error:  # the load failed: every waiter gets its error
        shared.set_exception(error)
        raise
    else:
        shared.set_result(result)
        return result
    finally:
        state["in_flight"] = None


with_shield = await coalesced_updates(update_weights)
print("with shield:", with_shield["outcomes"], "· loads:", with_shield["loads"])

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: shield-keeps-the-shared-result
assert plain["outcomes"] == ["InvalidStateError"] + ["cancelled"] * 4, (
    "one cancelled waiter cancelled the shared future: every waiter lost it, and the loader's set_result failed")
assert with_shield["loads"] == 1, "five requests, one load"
assert with_shield["outcomes"] == ["loaded ckpt-12"] * 2 + ["cancelled"] + ["loaded ckpt-12"] * 2, \
    "with the shield, only the client that left was cancelled"
print("✓ without the shield one cancelled waiter cost everyone the result; with it, only itself")

# %% [markdown]
# With the shield one load served four requests, and only request 2, the client that left,
# ended cancelled.
#
# ## Going further: `asyncio.Barrier`, waiting for each other
#
# Optional: slime's code has no `Barrier`, and the exercise below continues the shield story,
# so you can skip ahead to it.
#
# An `Event` is set by one task for all the others. Sometimes a group of tasks must wait for
# *each other*: no rollout worker may continue until all of them have paused for the weight
# update. `asyncio.Barrier(n)` does that: `await barrier.wait()` suspends until `n` tasks
# are waiting, then releases them all together. Below, three workers pause 0.01 s apart:
# worker 0 at once, worker 1 after 0.01 s, worker 2 after 0.02 s. Predict how long each one
# waits at `wait()`.

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
tl = Timeline()
all_paused = asyncio.Barrier(3)


async def pause_for_update(name: str, delay: float) -> None:
    await asyncio.sleep(delay)
    tl.mark(f"{name} paused")
    with tl.span(name, state="waiting"):
        await all_paused.wait()
    tl.mark(f"{name} continues")


await asyncio.gather(*(pause_for_update(f"worker {i}", 0.01 * i) for i in range(3)))
waited = {f"worker {i}": tl.spans_of(f"worker {i}")[0].duration for i in range(3)}
for name, seconds in waited.items():
    print(f"{name} waited {seconds:.2f} s at the barrier")
print(tl.names())

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert all(tl.order("worker 2 paused", f"worker {i} continues") for i in range(3)), \
    "nobody continues before the last worker has paused"
assert waited["worker 0"] > waited["worker 2"] and waited["worker 1"] >= waited["worker 2"], \
    f"the first to arrive waits longest, the last hardly at all: {waited}"
print("✓ nobody continued before the last worker had paused; worker 0 waited longest")

# %% [markdown]
# :::{dropdown} Why
#
# Nobody continues before all three have arrived, and all three are there at about 0.02 s,
# when worker 2 pauses. So each waits from its own arrival until then: worker 0 about 0.02 s,
# worker 1 about 0.01 s, and worker 2, the last, almost nothing. The barrier turns the
# workers' different arrival times into one common departure time.
#
# The list of marks shows one more thing, on the Python that built this page: the last to
# arrive, worker 2, is the first to continue. The task that completes the barrier needs no
# wake-up: it finds the others waiting, releases them and goes straight on, while they resume
# only when the loop next runs them. That order comes from how CPython's `asyncio.Barrier` is
# written (3.11 to 3.13), not from its documentation, so do not build on it.
#
# :::
#
# ## Exercise 15.1 · Share a load that is in flight
#
# Implement `load_once(path, in_flight, load)`: return `await load(path)`, but let concurrent
# callers for the same path share one load.
#
# 1. If a load of `path` is already in flight (recorded in the dict `in_flight`), wait for it
#    instead of starting another.
# 2. Otherwise start `load(path)` at once as a task (unlike a bare future, it completes
#    itself) and record it in `in_flight`; it leaves `in_flight` once it finishes, with a
#    result or an error (`task.add_done_callback(fn)` schedules `fn(task)` when the task
#    ends, chapter 13).
# 3. A cancelled caller stops waiting, but the load carries on, and a later caller still
#    joins it.
# 4. Each caller returns the moment its load ends, with its result or its error.
#
# Whether you need a lock depends on where your `await`s are.
#
# :::{dropdown} What the grader checks
#
# Graded, on many generated runs (one caller or several; the same path or different paths;
# callers arriving at once, while a load is in flight or in the loop turn in which it ends;
# loads that take any time or raise; callers cancelled at any moment):
#
# **Results and loads**
#
# - **results**: every caller gets the result of the load in flight for its path when it
#   arrived, or of a load it starts; the load's error is raised to every caller that waited;
#   a caller arriving in the loop turn in which its path's load ends may get that load's result
#   or start a fresh load (both are right);
# - **loads**: one load per path in flight, never two; loads of different paths side by side,
#   each starting the moment its first caller arrives; a call after the load has ended, with
#   a result or an error, loads afresh;
#
# **Cancellation**
#
# - **cancellation**: a cancelled caller ends cancelled at once; the load carries on for the
#   others, and a caller arriving after the cancel still joins it;
#
# **Timing and what is left**
#
# - **when each caller ends**: the moment its load ends, not later;
# - **what is left**: the entry in `in_flight` until its load ends, and gone once it has ended,
#   even if every caller was cancelled.
#
# :::
#
# The visible test below shows one run.

# %%
async def load_checkpoint(path: str) -> str:
    await asyncio.sleep(0.03)
    return f"weights of {path}"


# %% tags=["solution", "hide-input"] mystnb={"code_prompt_show": "Show the solution"}
async def load_once(path: str, in_flight: dict[str, asyncio.Task], load) -> str:
    """`await load(path)`, shared among concurrent callers for the same path."""
    ### BEGIN SOLUTION
    task = in_flight.get(path)
    if task is None:
        task = asyncio.create_task(load(path))
        in_flight[path] = task

        def forget(finished: asyncio.Task) -> None:
            if in_flight.get(path) is finished:
                del in_flight[path]

        task.add_done_callback(forget)
    return await asyncio.shield(task)
    ### END SOLUTION


# %% tags=["tests"]
shared_loads: dict[str, asyncio.Task] = {}
got = await asyncio.wait_for(
    asyncio.gather(*(load_once("ckpt-3", shared_loads, load_checkpoint)
                     for _ in range(4))), timeout=2)
assert got == ["weights of ckpt-3"] * 4, (
    f"every one of the 4 callers must get the loaded weights; got {got!r}")
assert shared_loads == {}, "a finished load must leave in_flight"

# %% tags=["tests", "hidden-tests", "remove-cell"]
### BEGIN HIDDEN TESTS
from lab_snippets.asyncio_tools import cancel_new_tasks

_tasks_before = asyncio.all_tasks()
try:
    _loads = InFlight()
    _failing_paths: set[str] = set()
    _held: dict[str, asyncio.Event] = {}  # a load of a path listed here waits until the test releases it
    async def _spy_load(path: str) -> str:
        with _loads:
            if path in _held:
                async with asyncio.timeout(2):
                    await _held[path].wait()
            else:
                await asyncio.sleep(0.05)
        if path in _failing_paths:
            raise OSError(f"cannot read {path}")
        return f"weights of {path}"
    _table: dict[str, asyncio.Task] = {}
    async with asyncio.timeout(2):
        _got = await asyncio.gather(*(load_once(p, _table, _spy_load) for p in ["a", "b", "a", "a", "b"]))
    assert _got == ["weights of a", "weights of b", "weights of a", "weights of a", "weights of b"], _got
    assert _loads.peak >= 2, (
        "loads of different paths must run concurrently: do not hold a lock across the await "
        "of the load (chapter 15)")
    assert _loads.entered == 2, (
        f"{_loads.entered} loads for 2 distinct paths: a caller must join the load already in "
        "flight for its path (chapter 15)")
    assert _table == {}, "finished loads must leave in_flight, so a later call loads afresh (chapter 15)"
    _loads = InFlight()
    _held["c"] = asyncio.Event()
    _callers = [asyncio.create_task(load_once("c", _table, _spy_load)) for _ in range(4)]
    await asyncio.wait(_callers, timeout=0.05)  # every caller is now waiting for the held load
    _callers[0].cancel()  # the caller that started the load goes away
    await asyncio.wait([_callers[0]], timeout=1)
    _callers.append(asyncio.create_task(load_once("c", _table, _spy_load)))  # arrives after that
    await asyncio.sleep(0)  # lets the late caller take its first step
    _held["c"].set()
    await asyncio.wait(_callers, timeout=2)
    assert _callers[0].cancelled(), "the cancelled caller must end cancelled"
    _rest = ["cancelled" if c.cancelled() else repr(c.exception()) if c.exception() else c.result()
             for c in _callers[1:]]
    assert _rest == ["weights of c"] * 4, (
        f"the other callers must still get the result when one caller is cancelled, got {_rest}: "
        "a cancelled await cancels what it awaits unless it is shielded (chapter 15)")
    assert _loads.entered == 1, (
        f"{_loads.entered} loads: a cancelled caller must not stop or duplicate the load; only "
        "the load's own end may take it out of in_flight (chapter 15)")
    _loads = InFlight()
    _failing_paths.add("d")
    async with asyncio.timeout(2):
        _results = await asyncio.gather(*(load_once("d", _table, _spy_load) for _ in range(3)),
                                        return_exceptions=True)
    assert all(isinstance(r, OSError) for r in _results), f"every waiter must see the error: {_results}"
    assert _loads.entered == 1, f"{_loads.entered} loads for 3 concurrent callers of a failing path"
    assert _table == {}, (
        f"a failed load must leave in_flight too, or the path can never be loaded again: {_table} "
        "(chapter 15)")
    _failing_paths.clear()
    async with asyncio.timeout(2):
        assert await load_once("d", _table, _spy_load) == "weights of d"
    assert _loads.entered == 2, "a call after the failure loads afresh"
finally:
    await cancel_new_tasks(_tasks_before)

# Generated scenarios (issue 37): the same callers through load_once and the reference, on
# virtual time, compared on what the contract names (lab_snippets.scenarios explains the pattern).
import dataclasses as _dc

from hypothesis import strategies as _st

from lab_snippets import scenarios as _sc

_reference = _sc.reference(globals(), "load_once")


@_dc.dataclass(frozen=True)
class _Caller:
    arrive: float
    path: str
    cancel_after: float | None = None
    at_end_of: int | None = None  # asks for load n's path in the loop turn load n ends (`arrive`, `path` unused)

    def describe(self, n: int) -> str:
        cancel = f", cancelled {_sc.fmt(self.cancel_after)} later" if self.cancel_after is not None else ""
        if self.at_end_of is not None:
            return f"caller {n} asks for load {self.at_end_of}'s path in the loop turn load {self.at_end_of} ends{cancel}"
        return f"caller {n} asks for {self.path!r} at {_sc.fmt(self.arrive)}{cancel}"


@_dc.dataclass(frozen=True)
class _Scenario:
    callers: tuple   # of _Caller
    loads: tuple     # of _sc.Job: the n-th load to start behaves as loads[n] (else 1.25 s); it returns '<path>#<n>'

    def load(self, n: int) -> _sc.Job:
        return self.loads[n] if n < len(self.loads) else _sc.Job(1.25)

    def describe(self) -> str:
        loads = "; ".join(j.describe(f"load {n}") for n, j in enumerate(self.loads))
        return ("; ".join(c.describe(n) for n, c in enumerate(self.callers))
                + f"; the loads, in the order they start: {loads + '; later ones' if loads else 'each'} "
                "return after 1.25 s; load n of a path returns '<path>#<n>', a load that fails raises OSError")


@_st.composite
def _scenarios(draw):
    # Callers arrive at whole seconds, loads end at quarters (a load started as another ends, too,
    # up to three in a row), cancels at tenths: no two events share an instant unless drawn to
    # (`at_end_of`). A cancelled caller is often its load's only caller.
    caller = _st.builds(_Caller, arrive=_st.sampled_from([0, 1, 2, 3, 4, 5]),
                        path=_st.sampled_from(["a", "a", "b", "é"]),
                        cancel_after=_st.sampled_from([None, 0.3, None, 1.3]),
                        at_end_of=_st.sampled_from([None, None, 0, 0, 1]))
    load = _st.builds(_sc.Job, seconds=_st.sampled_from([1.25, 0.25, 2.25]),
                      raises=_st.sampled_from([False, False, True]))
    return _Scenario(callers=tuple(draw(_st.lists(caller, min_size=1, max_size=6))),
                     loads=tuple(draw(_st.lists(load, max_size=5))))


def _observe_once(fn, s: _Scenario, late: bool) -> dict:
    """One run; a caller that arrives as a load ends starts its call inside that load's last step
    (before the load's task is done) or, if `late`, in the loop turn after (after its done callbacks)."""
    seen: dict = {"starts": [], "loads": [], "outcomes": [("never arrived", None, None)] * len(s.callers),
                  "unrecorded": [], "left": None}

    async def main() -> dict:
        loop, table = asyncio.get_running_loop(), {}
        arrived = [loop.create_future() for _ in s.callers]

        def arrive(n: int) -> None:
            c = s.callers[n]
            path = c.path if c.at_end_of is None else seen["starts"][c.at_end_of][1]
            task = asyncio.create_task(fn(path, table, load))
            if c.cancel_after is not None:
                loop.call_at(loop.time() + c.cancel_after, task.cancel)
            arrived[n].set_result(task)

        async def load(path: str) -> str:
            n = len(seen["starts"])
            seen["starts"].append((loop.time(), path))
            job = s.load(n)
            try:
                await asyncio.sleep(job.seconds)
                if path not in table:  # still in flight: a caller arriving now would start another
                    seen["unrecorded"].append((n, path, loop.time()))
                if job.raises:
                    raise OSError(f"cannot read {path}")
                return f"{path}#{n}"
            finally:
                seen["loads"].append((seen["starts"][n][0], loop.time(), path))
                for k, c in enumerate(s.callers):
                    if c.at_end_of == n:
                        loop.call_soon(arrive, k) if late else arrive(k)

        async def caller(n: int, c: _Caller) -> None:
            if c.at_end_of is None:
                loop.call_at(c.arrive, arrive, n)
            done, _ = await asyncio.wait([arrived[n]], timeout=30)
            if not done:
                return
            try:
                got = ("returned", await arrived[n].result())
            except asyncio.CancelledError:
                got = ("cancelled", None)
            except Exception as exc:  # noqa: BLE001 - what came out is the observation
                got = (_sc.kind_of(exc), None)
            seen["outcomes"][n] = (*got, loop.time())

        await asyncio.gather(*(caller(n, c) for n, c in enumerate(s.callers)))
        await asyncio.sleep(10)  # every load has ended by now
        seen["left"] = sorted(table)
        return seen

    run = _sc.run_virtual(main, limit=90)
    if run.error is not None or run.hung or run.spinning:
        seen["failed"] = ("spun without ever letting time pass" if run.spinning
                          else "did not end" if run.hung else f"failed: {run.error!r}")
    return seen


def _observe(fn, s: _Scenario) -> dict:
    seen = _observe_once(fn, s, late=False)
    if fn is _reference and any(c.at_end_of is not None for c in s.callers):
        # at a load's last loop turn, joining the load that ends and loading afresh are both right
        seen["or"] = _observe_once(fn, s, late=True)
    return seen


def _two_at_once(me: dict) -> str | None:
    for n, (start, end, path) in enumerate(me["loads"]):
        for start2, end2, path2 in me["loads"][n + 1:]:
            if path2 == path and start < end2 and start2 < end:
                return (f"one load per path in flight, never two: loads of {path!r} ran from {_sc.fmt(start)} to "
                        f"{_sc.fmt(end)} and from {_sc.fmt(start2)} to {_sc.fmt(end2)}; a later caller must find "
                        "the load in flight, so only that load's own end may take its entry out of in_flight")
    for n, path, at in me["unrecorded"]:
        return (f"one load per path in flight, never two: load {n} of {path!r} was still in flight at "
                f"{_sc.fmt(at)} but no longer in in_flight, so a caller arriving then would start a second "
                "load; only that load's own end may take its entry out of in_flight")
    return None


def _compare_one(me: dict, it: dict) -> str | None:
    for n, (got, want) in enumerate(zip(me["outcomes"], it["outcomes"], strict=True)):
        if got[:2] != want[:2]:
            return (f"caller {n} ended with {got[:2]!r}, expected {want[:2]!r}: join the load in "
                    "flight for the path (a cancelled caller must not stop it), raise its error to every "
                    "waiter, and load afresh once it has ended")
        if got[2] != want[2]:
            return (f"caller {n} ended at {_sc.fmt(got[2])}, expected {_sc.fmt(want[2])}: a caller ends "
                    "the moment its load ends, or the moment it is cancelled")
    if me["starts"] != it["starts"]:
        return (f"loads (time, path) started {me['starts']!r}, expected {it['starts']!r}: one load per path "
                "in flight, loads of different paths side by side, and a fresh load once the last has ended")
    return None


def _compare(me: dict, it: dict, s: _Scenario) -> str | None:
    if "failed" in me:
        return f"the callers {me['failed']}"
    problem = _compare_one(me, it)
    if problem and "or" in it and not _compare_one(me, it["or"]):
        problem = None
    problem = _two_at_once(me) or problem
    if problem:
        return problem
    if me["left"]:
        return (f"{me['left']!r} still in in_flight after every load had ended: the entry must go when its "
                "load ends, with a result or an error, even if every caller was cancelled")
    return None


_sc.differential(load_once, _reference, _scenarios(), _observe, _compare, what="load_once",
                 examples=30, hint="chapter 15")
### END HIDDEN TESTS

# %% [markdown]
# :::{dropdown} After you have solved the exercise
#
# `load_once` needs no lock: between its look into `in_flight` and its write there is no
# `await`, so no other task can run in between. Nor can it get stuck the way the slime
# handler at the end of this chapter can, when the request doing the update is cancelled and
# leaves the shared future unresolved (chapter 27, hazard 4): `load_once`'s load runs as a task
# of its own, and a cancelled caller cancels its shielded wait, not the task.
#
# :::
#
# ## Summary
#
# - `asyncio.Event` wakes every waiter and stays set until `clear()`; it carries no value.
# - One thread is not enough for safety: a read-modify-write that spans an `await` loses
#   updates. Put an `asyncio.Lock` around exactly that, or remove the `await` from it.
# - A lock held across a slow `await` serialises every request; keep its scope to the shared
#   state.
# - To share one in-flight operation, record a future (or a task) where the others find it,
#   and let them await it through `asyncio.shield`, so that one cancelled waiter cannot cancel
#   everyone's result.
# - `asyncio.Barrier(n)` holds every task at `wait()` until `n` of them are there; which one
#   continues first is not documented.
#
# **What's next.** Chapter 16 returns to threads: a `Condition` to wait for a state rather
# than a signal, re-entrant locks, and timers.
#
# ## In slime
#
# The teacher server's `/update_weights_from_disk` handler uses most of this chapter in one
# function: a lock for the bookkeeping, a shared future for the result, and a shield for the waiters.
# Its lock guards a block with no `await` in it, which this chapter's rule says needs no
# lock; it costs nothing there, and it keeps the block whole if someone later adds an
# `await` to it. Every lock and event in slime is listed in the [source inventory](../book/reference/inventory.md).

# %% tags=["remove-input"]
from lab_snippets.sites import show_call_site

show_call_site("15")

# %% [markdown]
# The quoted block makes one of three decisions: start a reload, join the one in flight, or
# answer 409. A request that joins then waits for the shared future through `asyncio.shield`,
# a few lines further down:

# %% tags=["remove-input"]
show_call_site("15b")

# %% [markdown]
# Below are the two blocks in a few lines of our own, with a 0.05 s `reload`. Six requests arrive while nothing is in flight: five ask
# for `ckpt-12` (request 2's client disconnects while it waits), then request 5 asks for
# `ckpt-13`. Predict: how many reloads run, and what does request 5 get?

# %%
async def update_from_disk(state: dict, lock: asyncio.Lock, path: str, reload) -> str:
    async with lock:
        if state["in_progress"]:
            if state["path"] != path:
                return f"409: already in progress for {state['path']}"
            update_future, coalesced = state["future"], True
        else:
            update_future = state["future"] = asyncio.get_running_loop().create_future()
            state.update(in_progress=True, path=path)
            coalesced = False
    if coalesced:
        return await asyncio.shield(update_future)
    result = await reload(path)
    async with lock:
        update_future.set_result(result)
        state.update(in_progress=False, path=None, future=None)
    return result


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
async def six_requests() -> tuple[int, list]:
    state = {"in_progress": False, "path": None, "future": None}
    lock, reloads = asyncio.Lock(), InFlight()  # InFlight counts the reloads that ran

    async def reload(path: str) -> str:
        with reloads:
            await asyncio.sleep(0.05)
        return f"loaded {path}"

    paths = ["ckpt-12"] * 5 + ["ckpt-13"]
    requests = [asyncio.create_task(update_from_disk(state, lock, p, reload))
                for p in paths]
    await asyncio.sleep(0.01)
    requests[2].cancel()  # a client disconnects while it waits
    await asyncio.wait(requests, timeout=2)
    return reloads.entered, ["cancelled" if r.cancelled()
                             else repr(r.exception()) if r.exception() else r.result()
                             for r in requests]


reload_count, answers = await six_requests()
print("reloads:", reload_count)
for n, answer in enumerate(answers):
    print(f"request {n}: {answer}")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: an-update-is-joined-by-its-path-and-refused-to-others
assert reload_count == 1, "one reload served every request for ckpt-12"
assert answers == ["loaded ckpt-12"] * 2 + ["cancelled"] + ["loaded ckpt-12"] * 2 + [
    "409: already in progress for ckpt-12"], answers
print("✓ one reload for five requests; the disconnect cost nobody else; ckpt-13 was refused, not queued")

# %% [markdown]
# :::{dropdown} Why
#
# One reload ran: requests 1 to 4 found it in flight for their path and joined it, and the
# shield kept request 2's disconnect to request 2. Request 5 found it in flight for another
# path and got a 409 at once: the handler joins an update only for the same checkpoint and
# queues nothing, so a client asking for another checkpoint must try again later.
#
# :::
#
# And if the client that started the reload disconnects? Neither quote above shows this weak
# spot: the disconnect cancels the handler, its `finally` fails before it reaches
# `set_result`, and the shared future stays unresolved, so later requests for that checkpoint
# wait with no end. Chapter 27 (hazard 4) quotes that `finally` and runs a model of it.

# %% [markdown]
# # 28 · Ray: ObjectRefs are futures, actors are concurrency units
# *Ray：ObjectRef 就是 future，actor 就是并发单元*
#
# *Part VI goes beyond the original series: it runs a real Ray cluster on this machine.*
#
# **The question.** slime's rollout, training and server code waits on remote work all the
# time: it calls an actor's method, gets an `ObjectRef` back, and later needs the value. From
# inside a coroutine, which ways of waiting keep the event loop alive, and what do actors add:
# how many calls run inside one actor at once, and in what order?
#
# **You will**
# 1. see that `ray.get` inside `async def` freezes the event loop, while `await ref` does not;
# 2. see that `asyncio.to_thread(ray.get, ...)` frees the loop but spends a pool thread per
#    wait, so the pool's size caps how many waits are in flight;
# 3. use `ray.wait` the way chapter 04 used `asyncio.wait`: finished work first;
# 4. watch `max_concurrency` act as a semaphore on an async actor, and a synchronous actor run
#    one call at a time;
# 5. build an awaitable lock on top of an actor, the shape slime uses for its engine lock.
#
# **Needs** chapters 02, 04, 06 and 08 · about 30 minutes, plus Ray's start-up.
#
# **What it costs.** The first code cell starts a private Ray on this machine: a few server
# processes (the GCS, a raylet, a log monitor, two idle workers), about 700 MB of memory, and
# 6–9 seconds on a busy two-core laptop, mostly spent starting those processes. It stays on
# 127.0.0.1, writes into a temporary folder, and the last cells stop it and remove the folder.
# `lab_snippets.raylab.LocalRay` explains each setting it applies.

# %%
import asyncio
import threading
import time

import matplotlib.pyplot as plt
import ray

from lab_snippets.asyncio_tools import InFlight
from lab_snippets.loopwatch import LoopWatch, borrowed_default_executor
from lab_snippets.raylab import LocalRay
from lab_snippets.timeline import Timeline, figure_style

figure_style()
cluster = LocalRay(num_cpus=2).start()
print(f"Ray {ray.__version__} started in {cluster.start_seconds:.1f} s on "
      f"{ray.util.get_node_ip_address()}")

# %% [markdown]
# ## Gates instead of sleeps
#
# Most experiments below need remote work that finishes *when we say so*, not after a number
# of seconds a busy machine would stretch. `Gate` is an async actor: `wait_open(i)` suspends
# until `open(i)` is called (or a bound runs out) and returns `i`. Because it is an async
# actor with a high `max_concurrency`, one actor process holds every waiting call at once.

# %%
@ray.remote
class Gate:
    def __init__(self):
        self.events: dict[int, asyncio.Event] = {}

    def _event(self, i: int) -> asyncio.Event:
        return self.events.setdefault(i, asyncio.Event())

    async def wait_open(self, i: int, bound: float = 10.0) -> int:
        await asyncio.wait_for(self._event(i).wait(), timeout=bound)
        return i

    async def open(self, i: int) -> None:
        self._event(i).set()


gate = Gate.options(max_concurrency=64).remote()
ray.get(gate.open.remote(-1), timeout=60)  # the actor is up

# %% [markdown]
# ## Predict, then run: `ray.get` inside a coroutine
#
# A coroutine needs the value of a remote call. It can write `ray.get(ref)`, as synchronous
# code does, or `await ref`: an `ObjectRef` is awaitable. A heartbeat (chapter 08's
# `LoopWatch`) beats every 10 ms while the coroutine waits 0.4 s for the gate. How many beats
# does each way of waiting let through? Many readers expect the same number: both "wait for
# the result".

# %% tags=["claim"]
# claim: ray-get-blocks-the-loop
def release_from_a_thread(i: int, after: float) -> threading.Thread:
    """Open gate i from another thread: while ray.get blocks the loop, no task could do it."""
    def run():
        time.sleep(after)
        ray.get(gate.open.remote(i), timeout=30)
    t = threading.Thread(target=run, name=f"opener-{i}")
    t.start()
    return t


async def wait_with_get(i: int) -> int:
    return ray.get(gate.wait_open.remote(i), timeout=30)


async def wait_with_await(i: int) -> int:
    return await gate.wait_open.remote(i)


beats = {}
for name, waiter, i in (("ray.get", wait_with_get, 1), ("await ref", wait_with_await, 2)):
    opener_thread = release_from_a_thread(i, after=0.4)
    async with LoopWatch(interval=0.01) as watch:
        assert await waiter(i) == i
    opener_thread.join(timeout=30)
    beats[name] = len(watch.beats)
print(beats)
assert beats["ray.get"] <= 3 and beats["await ref"] >= 5 * max(1, beats["ray.get"]), beats

# %% [markdown]
# The `ray.get` call held the only thread the event loop has for the whole 0.4 s: the
# heartbeat could beat only before and after it. `await ref` handed the wait to Ray, which
# completes an asyncio future on the loop when the value arrives; in between the loop ran
# the heartbeat. Inside `async def`, `ray.get` is a blocking call like `time.sleep`.
#
# ## A thread per wait: `to_thread(ray.get, ...)`
#
# Chapter 08's answer to a blocking call is `asyncio.to_thread`. It does free the loop, but
# every wait now occupies a worker of the default pool until the remote value arrives. With a
# pool of 2 threads and 6 outstanding calls, how many waits are in flight at once? And with
# `await ref`?

# %% tags=["claim"]
# claim: to-thread-waits-are-capped-by-the-pool
POOL_THREADS = 2
CALLS = 6


async def peak_waiting(wait_one, first_id: int) -> int:
    """Start CALLS waits on the gate, open it, and return how many were waiting at once."""
    waiting = InFlight()
    tasks = [asyncio.create_task(wait_one(first_id + k, waiting)) for k in range(CALLS)]
    deadline = time.monotonic() + 10
    while waiting.now < POOL_THREADS and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.2)  # room for any further wait to start, if anything lets it
    for k in range(CALLS):
        await gate.open.remote(first_id + k)
    async with asyncio.timeout(30):
        assert sorted(await asyncio.gather(*tasks)) == [first_id + k for k in range(CALLS)]
    return waiting.peak


def get_in_thread(i: int, waiting: InFlight) -> int:
    with waiting:
        return ray.get(gate.wait_open.remote(i), timeout=30)


async def wait_in_thread(i: int, waiting: InFlight) -> int:
    return await asyncio.to_thread(get_in_thread, i, waiting)


async def wait_on_ref(i: int, waiting: InFlight) -> int:
    with waiting:
        return await gate.wait_open.remote(i)


with borrowed_default_executor(max_workers=POOL_THREADS):
    thread_peak = await peak_waiting(wait_in_thread, 100)
await_peak = await peak_waiting(wait_on_ref, 200)
print(f"waits in flight at once: to_thread(ray.get) {thread_peak}, await ref {await_peak}")
assert thread_peak <= POOL_THREADS < await_peak == CALLS, (thread_peak, await_peak)

# %% [markdown]
# With `to_thread`, each wait is a `ray.get` in a pool thread, and it holds that thread until
# the value arrives: two threads, two waits; the other four calls queued for a thread and did
# not even reach the actor. With `await ref` all six waited together and no thread was used.
# This is the effect slime's HTTP helpers describe in a comment (chapter 08, site 08b): each
# in-flight request held a thread of the default pool, so the pool size became a hidden cap
# on the requests in flight.
#
# ## `ray.wait` is `asyncio.wait` for ObjectRefs
#
# `ray.wait(refs, num_returns=k, timeout=t)` returns two lists, the refs that are ready and
# the rest, like `asyncio.wait(..., return_when=FIRST_COMPLETED)` returns done and pending
# sets (chapter 04). The gate below opens jobs in the order 2, 0, 1. In what order does a loop
# of `ray.wait(num_returns=1)` hand them back?

# %% tags=["claim"]
# claim: ray-wait-hands-back-finished-work-first
jobs = [gate.wait_open.remote(300 + k) for k in range(3)]
pending = list(jobs)
handed_back = []
for k in (2, 0, 1):
    ray.get(gate.open.remote(300 + k), timeout=30)
    ready, pending = ray.wait(pending, num_returns=1, timeout=30)
    handed_back.append(jobs.index(ready[0]))
polled_ready, polled_rest = ray.wait([gate.wait_open.remote(399)], timeout=0)
ray.get(gate.open.remote(399), timeout=30)
print(f"opened 2, 0, 1 -> handed back {handed_back}; a poll with timeout=0 found "
      f"{len(polled_ready)} ready, {len(polled_rest)} not")
assert handed_back == [2, 0, 1], handed_back
assert polled_ready == [] and len(polled_rest) == 1

# %% [markdown]
# `ray.wait` does not care about the order of the list: it returns what has finished. With
# `timeout=0` it is a poll: it returns at once with whatever is ready, here nothing. slime
# uses both forms: its placement-group set-up waits in a loop of `ray.wait` with a 30 s
# timeout, so that it can log progress while GPUs are missing, and the Megatron server's
# worker loop polls its oldest batch with `timeout=0` until too many batches are in flight,
# and only then waits without a timeout.
#
# ## `max_concurrency` is a semaphore on an async actor
#
# An async actor (one with `async def` methods) runs its calls as tasks on one event loop in
# the actor process. `max_concurrency` caps how many of them may run at once; the others
# queue. Nine calls arrive together at an actor with `max_concurrency=3`. How many are inside
# the method at the peak?

# %% tags=["claim"]
# claim: max-concurrency-caps-calls-inside-an-async-actor
@ray.remote
class Poster:
    def __init__(self):
        self.now = self.peak = 0
        self.spans: list[tuple[int, float, float]] = []

    async def post(self, i: int, hold: float) -> int:
        self.now += 1
        self.peak = max(self.peak, self.now)
        start = time.monotonic()
        await asyncio.sleep(hold)
        self.spans.append((i, start, time.monotonic()))
        self.now -= 1
        return i

    async def report(self):
        return self.peak, self.spans


LIMIT = 3
poster = Poster.options(max_concurrency=LIMIT).remote()
async with asyncio.timeout(60):
    results = await asyncio.gather(*[poster.post.remote(i, 0.15) for i in range(9)])
    peak, poster_spans = await poster.report.remote()
print(f"9 calls, max_concurrency={LIMIT}: at most {peak} inside at once")
assert results == list(range(9))
assert peak == LIMIT, peak

# %% [markdown]
# ## Measure it
#
# The actor recorded when each call entered and left `post` (on Linux `time.monotonic()` is
# one clock for every process of the machine, so the spans line up with ours). Three lanes
# of work, in three waves: the semaphore of chapter 06, built into the actor.

# %%
tl = Timeline()
for i, start, end in sorted(poster_spans):
    tl.add(f"call {i}", start, end, state="waiting")
fig = tl.plot(f"Nine calls to an async actor with max_concurrency={LIMIT}")
plt.show()
assert tl.max_overlap(state="waiting") == LIMIT

# %% [markdown]
# ## A synchronous actor runs one call at a time
#
# Without `async def` methods and without `max_concurrency`, an actor runs its calls one after
# another, in the order they arrive from one caller. That makes a read-modify-write on the
# actor's state safe even with a pause in the middle, the race of chapter 09 that needed a
# lock. Twenty calls, each reading a counter, pausing 5 ms and writing it back plus one:
# what is the final count?

# %% tags=["claim"]
# claim: a-sync-actor-serialises-its-calls
@ray.remote
class SlowCounter:
    def __init__(self):
        self.count = 0

    def bump(self) -> int:
        seen = self.count
        time.sleep(0.005)
        self.count = seen + 1
        return self.count


counter = SlowCounter.remote()
returned = ray.get([counter.bump.remote() for _ in range(20)], timeout=60)
print(f"final count {returned[-1]}; values returned in call order: {returned[:5]}...")
assert returned == list(range(1, 21)), returned

# %% [markdown]
# Each call saw the state the previous one left: no update was lost, and the values came back
# in call order. Give the same actor `max_concurrency=4` and Ray runs its synchronous methods
# on a pool of 4 threads: the counter then loses updates exactly as chapter 09's threads did.
# slime's engine lock (below) relies on this: its `acquire` is a check-then-set on a plain
# attribute, safe only because the actor runs one call at a time.
#
# ## Exercise 28.1 · An awaitable lock on an actor
#
# `TryLock` below is an actor with two methods: `try_acquire()` returns `True` and takes the
# lock if it is free, `False` otherwise; `release()` frees it. slime's trainer takes its
# engine lock the same way, asking again and again until the answer is `True`.
#
# Write `async def acquire(lock, poll=0.01, timeout=2.0)` for coroutines:
#
# 1. ask `lock.try_acquire` until it answers `True`, then return the number of attempts;
# 2. never block the event loop: other tasks must keep running while you wait (no
#    `ray.get`, no `time.sleep`);
# 3. pause `poll` seconds between attempts, so a held lock is not asked hundreds of times a
#    second;
# 4. give up with `TimeoutError` once `timeout` seconds have passed since the call began
#    (one deadline for the whole call, not one per attempt).

# %%
@ray.remote
class TryLock:
    def __init__(self):
        self.held = False
        self.attempts = 0

    def try_acquire(self) -> bool:
        self.attempts += 1
        if self.held:
            return False
        self.held = True
        return True

    def release(self) -> None:
        assert self.held, "release() of a lock that is not held"
        self.held = False

    def stats(self) -> tuple[bool, int]:
        return self.held, self.attempts


# %% tags=["solution"]
async def acquire(lock, poll: float = 0.01, timeout: float = 2.0) -> int:
    """Take the actor lock without blocking the loop; return the number of attempts."""
    ### BEGIN SOLUTION
    deadline = time.monotonic() + timeout
    attempts = 0
    while True:
        attempts += 1
        if await lock.try_acquire.remote():
            return attempts
        if time.monotonic() >= deadline:
            raise TimeoutError(f"lock not acquired within {timeout} s ({attempts} attempts)")
        await asyncio.sleep(poll)
    ### END SOLUTION


# %% tags=["tests"]
free_lock = TryLock.remote()
assert await acquire(free_lock) == 1
await free_lock.release.remote()

# %% tags=["tests", "hidden-tests", "remove-cell"]
### BEGIN HIDDEN TESTS
@ray.remote
class _SlowTryLock:
    """TryLock's behaviour, but every answer takes 0.25 s, as from a busy actor."""

    def __init__(self):
        self.held = False

    async def try_acquire(self) -> bool:
        await asyncio.sleep(0.25)
        if self.held:
            return False
        self.held = True
        return True

    async def release(self) -> None:
        self.held = False


@ray.remote
class _StampedLock:
    """TryLock's behaviour, and the time of every attempt."""

    def __init__(self):
        self.held = False
        self.stamps: list[float] = []

    def try_acquire(self) -> bool:
        self.stamps.append(time.monotonic())
        if self.held:
            return False
        self.held = True
        return True

    def release(self) -> None:
        self.held = False

    def attempt_times(self) -> list[float]:
        return self.stamps


async def _hold_then_release(lock, hold: float) -> None:
    await asyncio.sleep(hold)
    await lock.release.remote()


async def _beats_while_acquiring(lock, hold: float, poll: float) -> tuple[float, int]:
    """Acquire a held lock that is released after ``hold`` s; (beats per expected beat, attempts)."""
    assert await lock.try_acquire.remote()
    releaser = asyncio.create_task(_hold_then_release(lock, hold))
    started = time.monotonic()
    try:
        async with LoopWatch(interval=0.02) as watch:
            async with asyncio.timeout(20):
                attempts = await acquire(lock, poll=poll, timeout=10)
    finally:
        await asyncio.wait({releaser}, timeout=10)
    elapsed = time.monotonic() - started
    await lock.release.remote()
    return len(watch.beats) / max(1.0, elapsed / 0.02), attempts


_LOOP_MESSAGE = ("the event loop beat only {share:.0%} of the expected heartbeats while acquire waited "
                 "for a held lock: waiting must not block the event loop; await the actor's ref and "
                 "pause with asyncio.sleep, never ray.get or time.sleep inside async def (chapters 02, 28)")

# 1. mutual exclusion: four tasks, each with an await inside its critical section
_lock = TryLock.remote()
_shared = {"value": 0, "inside": 0, "peak": 0}


async def _critical(k: int) -> None:
    await acquire(_lock, poll=0.005, timeout=20)
    try:
        _shared["inside"] += 1
        _shared["peak"] = max(_shared["peak"], _shared["inside"])
        seen = _shared["value"]
        await asyncio.sleep(0.01)
        _shared["value"] = seen + 1
    finally:
        _shared["inside"] -= 1
        await _lock.release.remote()


async with asyncio.timeout(60):
    _outcomes = await asyncio.gather(*[_critical(k) for k in range(4)], return_exceptions=True)
assert _shared["peak"] == 1 and _shared["value"] == 4, (
    f"{_shared['peak']} tasks were inside at once and {4 - _shared['value']} updates were lost: "
    "acquire may return only after try_acquire has answered True (chapter 09's lock)")
_errors = [o for o in _outcomes if isinstance(o, BaseException)]
assert not _errors, f"acquire raised with a free lock among four callers: {_errors[0]!r}"

# 2. the pause between attempts, and no blocking sleep in it
_lock = _StampedLock.remote()
_share, _attempts = await _beats_while_acquiring(_lock, hold=0.7, poll=0.2)
_stamps = (await _lock.attempt_times.remote())[1:]  # the first stamp is the holder's own
_gaps = [b - a for a, b in zip(_stamps, _stamps[1:], strict=False)]
assert _gaps and min(_gaps) >= 0.18, (
    f"two attempts came {min(_gaps, default=0):.3f} s apart with poll=0.2: "
    "pause poll seconds between attempts instead of asking in a tight loop")
assert _share >= 0.25, _LOOP_MESSAGE.format(share=_share)

# 3. no blocking wait for the actor's answer (each answer takes 0.25 s here)
_share, _ = await _beats_while_acquiring(_SlowTryLock.remote(), hold=0.6, poll=0.005)
assert _share >= 0.25, _LOOP_MESSAGE.format(share=_share)

# 4. one deadline for the whole call
_lock = TryLock.remote()
assert await _lock.try_acquire.remote()  # held for good
_waiter = asyncio.create_task(acquire(_lock, poll=0.02, timeout=0.3))
_done, _ = await asyncio.wait({_waiter}, timeout=5)
try:
    assert _done, (
        "acquire was still waiting 5 s after a timeout of 0.3 s: the deadline must count "
        "from the call's start, once for the whole call (chapter 05)")
    _exc = _waiter.exception()
    assert isinstance(_exc, TimeoutError), (
        f"acquire ended with {_exc!r} instead of raising TimeoutError when the lock stayed held: "
        "give up by raising TimeoutError")
finally:
    if not _waiter.done():
        _waiter.cancel()
        await asyncio.wait({_waiter}, timeout=5)
### END HIDDEN TESTS

# %% [markdown]
# ## Summary
#
# - An `ObjectRef` is a future. Inside `async def`, `await ref` waits without holding the loop;
#   `ray.get(ref)` holds it, like any blocking call.
# - `asyncio.to_thread(ray.get, ref)` frees the loop but spends a pool thread per wait, so the
#   pool's size quietly caps the waits in flight.
# - `ray.wait` hands back finished refs first, whatever their order in the list; with
#   `timeout=0` it is a poll.
# - An async actor's `max_concurrency` is a semaphore on its methods; a synchronous actor runs
#   one call at a time, which makes check-then-set on its state safe.
# - An actor is a natural home for a lock shared by processes; awaiting it from a coroutine
#   takes the same care as any other remote wait.
#
# **What's next.** Chapter 29 places actors on (logical) GPUs with placement groups, kills
# stuck ones and shuts everything down.
#
# ## In slime
#
# slime's rollout can send its HTTP requests through a small async actor, one or more per node,
# each created with `max_concurrency` set to its share of the total request budget. The actor's
# only method awaits slime's ordinary `_post` coroutine on an `httpx.AsyncClient` whose
# connection limit matches the same share, so the actor's semaphore and the client's pool cap
# the same thing. The caller awaits the ObjectRef directly: the comment beside it records that
# the earlier `to_thread(ray.get, ...)` tied up a thread of the default pool per request, the
# cap this chapter measured.
#
# The second site is slime's engine lock. It is a synchronous actor whose `acquire` checks a
# flag and sets it, safe because such an actor runs one call at a time. The trainer takes it
# before it broadcasts new weights to the rollout engines, asking with `ray.get` until the
# answer is `True` and sleeping 0.1 s between attempts; that code runs in a plain thread of
# the training actor, not in a coroutine, so the blocking `ray.get` there stops nothing else.
# A question to take to the quote: between `acquire` and `release` the trainer waits on the
# transfer with `ray.get`, with no `try`/`finally`; what would another caller see if that
# transfer raised? The [source inventory](../book/reference/inventory.md) lists Python's own
# concurrency mechanisms in slime, not Ray's calls; to find the other places where slime waits
# on Ray, search its source for `ray.get(` and `ray.wait(`.

# %%
from lab_snippets.sites import show_call_site

show_call_site("28b")

# %%
cluster.stop()
print(f"Ray stopped in {cluster.stop_seconds:.1f} s; its session folder is removed")

# %%
from lab_snippets.sites import show_call_site

show_call_site("28")

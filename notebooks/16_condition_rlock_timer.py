# %% [markdown]
# # 16 · Condition, RLock and Timer
# *Condition、RLock 与 Timer*
#
# **The question.** Threads that share a buffer need more than a lock: when the buffer is
# empty, a consumer must wait, and a producer that puts something there must wake it. A
# `threading.Condition` does that job; what does its `notify` promise the thread it
# wakes? Two neighbouring questions follow: what happens when a thread takes a lock it
# already holds (`RLock`), and how quickly does a periodic loop stop when asked (`Timer`,
# `Event.wait`)?
#
# **You will**
# 1. find out what `notify` promises the thread it wakes, and what
#    `wait_for(predicate, timeout)` adds to a plain `wait`;
# 2. build a bounded producer/consumer buffer on one `threading.Condition`;
# 3. meet two more tools of `threading`, `RLock` and `Timer`, and measure how quickly three
#    ways of writing a periodic loop stop when asked.
#
# **Needs** chapter 09 (Lock and Event) · about 60 minutes
#
# **New to the course?** [How to read an experiment](../book/reading_guide.md) explains the
# timelines, the helpers and the folded checks; the [glossary](../book/glossary.md) gives the
# words the chapters share. The imports are folded below: `figure_style()` only sets how
# the plots look, and `join_all(threads, timeout)` joins threads within one shared time
# budget and returns those still alive.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the setup"}
import queue
import sys
import threading
import time

# join_all(threads, timeout): join them all within one shared budget; it returns the
# threads still alive afterwards, so `assert not join_all(...)` means "none is left".
from lab_snippets.thread_workers import join_all
from lab_snippets.timeline import Timeline, figure_style

figure_style()

# %% [markdown]
# ## Predict: what does the woken consumer find?
#
# A `threading.Condition` is a {term}`lock` plus a waiting room. A consumer holding the lock calls
# `cond.wait()`: it releases the lock and sleeps. A producer takes the lock, changes the
# state, and calls `cond.notify()`. Two pictures of `notify` fit that description: it hands
# the lock straight to the waiter, which then sees the state exactly as the producer left it
# at `notify`; or it only marks the waiter, which then competes for the lock like any other
# thread. The cell writes down named moments with `tl.mark(...)` on a `Timeline`, the course's
# stopwatch (chapter 01).
#
# Below, the producer appends a group, notifies, then, still inside its `with` block,
# finds the group invalid and drops it (slime's rollout buffer filters groups too). What
# does the woken consumer find?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
tl = Timeline()
buffer_cond, consumer_waiting = threading.Condition(), threading.Event()
groups: list[str] = []
consumer_saw: list[list[str]] = []


def consumer() -> None:
    with buffer_cond:
        consumer_waiting.set()
        buffer_cond.wait(timeout=2)
        tl.mark("consumer woke up holding the lock")
        consumer_saw.append(list(groups))


waiter = threading.Thread(target=consumer, name="consumer")
waiter.start()
consumer_waiting.wait(timeout=2)
with buffer_cond:  # blocks until the consumer is inside wait(), which released the lock
    groups.append("group 1")
    buffer_cond.notify()
    tl.mark("notify returned")
    groups.remove("group 1")  # the group turned out invalid
    tl.mark("producer releases the lock")
waiter.join(timeout=2)
print("the consumer found:", consumer_saw)

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
print(tl.names())
assert not waiter.is_alive()
assert tl.order("notify returned", "producer releases the lock",
                "consumer woke up holding the lock")
assert consumer_saw == [[]], "woken, but the group it was woken for is gone"
print("✓ the consumer woke after the producer released the lock, and found the group gone")

# %% [markdown]
# :::{dropdown} Why
#
# `notify` only marks a waiter as "may wake up". The waiter still has to re-acquire the lock,
# which the notifier holds until its `with` block ends; any thread can change the state in
# between. That is why the consumer found an empty list: the group it was woken for had
# been dropped before it got the lock back.
#
# :::
#
# ## Predict: one item, two woken consumers
#
# Two consumers wait, one item arrives, and the producer calls `notify_all`,
# which wakes every waiter. In the first run each consumer checks the buffer once with `if`
# before it waits; in the second it waits with `cond.wait_for(predicate, timeout)`, which
# waits until `predicate()` is true or the timeout runs out. The folded `run_two_consumers`
# runs both consumers and returns what each got.

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show run_two_consumers, which starts two consumers and adds one item"}
# The harness: two consumers wait, one item arrives, notify_all wakes both.
def run_two_consumers(take) -> list[str]:
    cond = threading.Condition()
    items: list[str] = []
    ready = [threading.Event(), threading.Event()]
    outcomes: list[str] = []

    def consume(index: int) -> None:
        with cond:
            try:
                outcomes.append(take(cond, items, ready[index]))
            except Exception as exc:  # whatever take() raised, by its type
                outcomes.append(f"raised {type(exc).__name__}")

    threads = [threading.Thread(target=consume, args=(i,), name=f"consumer-{i}") for i in range(2)]
    for thread in threads:
        thread.start()
    assert all(event.wait(timeout=2) for event in ready)
    with cond:
        items.append("group 1")
        cond.notify_all()
    assert not join_all(threads, timeout=3)
    return sorted(outcomes)


# %% [markdown]
# What does each of the two consumers get in each run?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
def take_with_if(cond, items, ready) -> str:
    ready.set()
    if not items:
        cond.wait(timeout=2)
    return f"took {items.pop()}"


def take_with_wait_for(cond, items, ready) -> str:
    ready.set()
    if not cond.wait_for(lambda: items, timeout=0.2):
        return "timed out, nothing taken"
    return f"took {items.pop()}"


with_if = run_two_consumers(take_with_if)
with_wait_for = run_two_consumers(take_with_wait_for)
print("if + wait():", with_if)
print("wait_for():  ", with_wait_for)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: wait-for-rechecks-after-waking
assert with_if == ["raised IndexError", "took group 1"], with_if
assert with_wait_for == ["timed out, nothing taken", "took group 1"], "wait_for re-checked and kept waiting"
print("✓ with if, the second consumer popped an empty buffer; wait_for re-checked and kept waiting")

# %% [markdown]
# :::{dropdown} Why
#
# A wait can end while the condition is still false: another thread changed the state
# before the waiter got the lock back (the first experiment), a `notify_all` woke every waiter
# for one item, or the timeout ran out. With a single `if` check (the output's first line), both
# consumers woke: one took the item, the other popped an empty list and raised `IndexError`.
# So the rule is: **after waking, check
# the condition again**, in a loop. `wait_for` is that loop: the second consumer checked
# again, kept waiting and reported a timeout. It returns the predicate's last value, so
# `False` means "timed out, condition still false".
#
# :::

# %% [markdown]
# ## A bounded buffer on one Condition
#
# A producer/consumer buffer needs two conditions over one piece of state: "not full" for
# producers and "not empty" for consumers. One `Condition` can serve both: each side waits
# with `wait_for` on its own predicate and calls `notify_all` after it changes the buffer
# (the run after this one shows why a single `notify` is not enough). Below, two producers
# and two consumers pass 12 items through a buffer of capacity 2; consumers sleep 0.01 s per item, and the buffer records the most items it
# held at once.

# %%
class BoundedBuffer:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.items: list[int] = []
        self.cond = threading.Condition()
        self.peak = 0

    def put(self, item: int, timeout: float) -> None:
        with self.cond:
            if not self.cond.wait_for(lambda: len(self.items) < self.capacity, timeout):
                raise TimeoutError("buffer stayed full")
            self.items.append(item)
            self.peak = max(self.peak, len(self.items))
            self.cond.notify_all()

    def get(self, timeout: float) -> int:
        with self.cond:
            if not self.cond.wait_for(lambda: self.items, timeout):
                raise TimeoutError("buffer stayed empty")
            item = self.items.pop(0)
            self.cond.notify_all()
            return item


# %%
shared = BoundedBuffer(capacity=2)
consumed: list[int] = []
consumed_lock = threading.Lock()


def produce(first: int) -> None:
    for item in range(first, first + 6):
        shared.put(item, timeout=2)


def consume() -> None:
    for _ in range(6):
        item = shared.get(timeout=2)
        time.sleep(0.01)  # consuming is slower than producing, so the buffer fills up
        with consumed_lock:
            consumed.append(item)


workers = [threading.Thread(target=produce, args=(first,)) for first in (0, 100)]
workers += [threading.Thread(target=consume) for _ in range(2)]
for worker in workers:
    worker.start()
for worker in workers:
    worker.join(timeout=5)  # bounded: the check below asserts none is still alive
print(f"consumed {len(consumed)} items, peak buffer size {shared.peak} (capacity 2)")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: the-buffer-never-exceeds-its-capacity
assert not [worker for worker in workers if worker.is_alive()], "every worker ended"
assert sorted(consumed) == list(range(6)) + list(range(100, 106)), "each item exactly once"
assert shared.peak <= 2, "producers waited while the buffer was full"
assert shared.peak == 2, "producers filled the buffer before they had to wait"
print("✓ 12 items passed once each; the buffer filled to 2 and never beyond")

# %% [markdown]
# **Why `notify_all`, not `notify`?** A single `notify` wakes one waiter, of either kind. The
# run below shows what that costs, with a slot that holds one item and one `Condition`,
# `cond`. Three threads share it, and each holds `cond`'s lock except while it waits:
#
# | thread | what it does, in order |
# |---|---|
# | consumer 1 | waits until the slot holds an item; takes it; `wake(cond)` |
# | consumer 2 | the same |
# | producer | waits until the slot is empty; puts item 1; `wake(cond)`; the same for item 2 |
#
# `wake(cond)` is how each change wakes the waiters: the answer's cell passes
# `wake=lambda c: c.notify()` (one) or `wake=lambda c: c.notify_all()` (every one). Every wait
# has a timeout; the producer's wait for room gives up after 1 s (`timeout=1.0` in its
# `wait_for`), which then checks its predicate once more. Each run prints its log: when,
# counted from the first put, a thread put or took an item.
#
# **Predict.** How long does the producer wait for room for its second item, with
# `notify_all` and with `notify`?

# %%
def pass_two_items(wake) -> list[tuple[float, str]]:
    cond, slot, log = threading.Condition(), [], []

    def consumer(name: str, ready: threading.Event) -> None:
        with cond:
            ready.set()  # the lock is ours until wait_for lets it go
            cond.wait_for(lambda: slot, timeout=3)
            log.append((time.monotonic(), f"{name} takes item {slot.pop()}"))
            wake(cond)

    ready = [threading.Event(), threading.Event()]
    consumers = [threading.Thread(target=consumer, args=(f"consumer {k + 1}", ready[k]),
                                  name=f"consumer {k + 1}") for k in range(2)]
    for thread, started in zip(consumers, ready, strict=True):
        thread.start()
        started.wait(timeout=2)
    with cond:  # the producer
        for item in (1, 2):
            cond.wait_for(lambda: not slot, timeout=1.0)  # room in the slot
            log.append((time.monotonic(), f"producer puts item {item}"))
            slot.append(item)
            wake(cond)
    for thread in consumers:
        thread.join(timeout=5)
    return log


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
logs = {
    "notify_all": pass_two_items(wake=lambda c: c.notify_all()),
    "notify": pass_two_items(wake=lambda c: c.notify()),
}
for name, log in logs.items():
    first = log[0][0]
    print(f"with {name}:", "; ".join(f"{at - first:.2f} s {what}" for at, what in log))

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: a-single-notify-can-wake-the-wrong-waiter
assert not [t.name for t in threading.enumerate() if t.name.startswith("consumer ")], "both consumers ended"
for log in logs.values():
    assert [what[:len("producer puts item 1")] for _, what in log][::2] == [
        "producer puts item 1", "producer puts item 2"], log
    assert [what[-len("takes item 1"):] for _, what in log][1::2] == ["takes item 1", "takes item 2"], log
assert [what for _, what in logs["notify"]] == ["producer puts item 1", "consumer 1 takes item 1",
                                                "producer puts item 2", "consumer 2 takes item 2"]
waited = {name: log[2][0] - log[1][0] for name, log in logs.items()}  # from the first take to the second put
print({name: f"{seconds:.3f} s" for name, seconds in waited.items()})
assert waited["notify"] > 5 * waited["notify_all"], (
    f"with notify the producer, not woken, waits out its timeout: {waited}")
print(f"✓ with notify_all the producer put its second item at once; with notify it waited "
      f"{waited['notify']:.2f} s, until its timeout ran out, though the slot had room")

# %% [markdown]
# :::{dropdown} Why
#
# Whom does a `notify` wake? A `Condition` keeps its waiters in a queue: a thread that starts
# to wait joins the back, and CPython's `notify` wakes the one at the front, the thread that
# has waited longest (the documentation promises no order; this is `Lib/threading.py` in 3.11
# to 3.13). Follow the run with `notify`, one step at a time: what happens, then the slot,
# then the waiters from the front of the queue to the back.
#
# 1. Both consumers wait on the empty slot. Slot: empty. Waiting: consumer 1, consumer 2.
# 2. The producer puts item 1; `notify` wakes consumer 1. Slot: item 1. Waiting: consumer 2.
# 3. Still in its `with cond:` block, the producer waits for room for item 2: its `wait_for`
#    lets the lock go and puts the producer at the back of the queue. Slot: item 1. Waiting:
#    consumer 2, the **producer**.
# 4. Consumer 1 takes item 1; `notify` wakes the front of the queue, consumer 2. Slot: empty.
#    Waiting: the **producer**.
# 5. Consumer 2 finds the slot empty and waits again. Slot: empty. Waiting: the
#    **producer**, consumer 2.
# 6. Nobody changes the slot, so nobody notifies, until the producer's 1 s timeout runs out.
#    Slot: empty. Waiting: the **producer**, consumer 2.
#
# From step 4 on the slot has room, and the producer, the one thread that could go on,
# sleeps. When its 1 s timeout runs out, `wait_for` checks its predicate once more, finds
# room and puts item 2. So the cost is a stall of the whole timeout; without a timeout the
# producer and consumer 2 would wait for ever. With `notify_all`, step 2 wakes both
# consumers, and whichever gets the lock first takes item 1, so it need not be consumer 1.
# Its `notify_all` then wakes every waiter, each one checks its own predicate, and the
# producer, among them, puts item 2 at once.
#
# :::

# %% [markdown]
# ## Two more tools: RLock and Timer
#
# **`RLock`: taking a lock you already hold.** slime's `initialize_accelerator` (the first
# quote under *In slime*) holds a module-level lock and, inside it, calls `get_accelerator`,
# which takes the same lock again. Below is that shape in a few lines, with a plain `with`
# and no timeout, as in slime. The lock is handed over wrapped in `GiveUpAfter` (folded),
# which bounds every wait in this demo: an acquire still waiting after 0.2 s raises `Hung`
# instead of waiting on. What does `initialize_accelerator` give with a plain `Lock`, and
# what with an `RLock`?

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show GiveUpAfter: the wrapper that bounds each wait"}
class Hung(Exception):
    """An acquire that was still waiting when its bound ran out."""


class GiveUpAfter:
    """Wraps a lock so that `with` on it waits at most `seconds`, then raises Hung."""

    def __init__(self, lock, seconds: float) -> None:
        self.lock, self.seconds = lock, seconds

    def __enter__(self) -> None:
        if not self.lock.acquire(timeout=self.seconds):
            raise Hung(f"still waiting for the lock after {self.seconds} s")

    def __exit__(self, *exc_info) -> None:
        self.lock.release()


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
def get_accelerator(lock) -> str:
    with lock:  # the same lock, taken again by the same thread
        return "accelerator"


def initialize_accelerator(lock) -> str:
    with lock:
        return get_accelerator(lock)


def initialize_with(lock) -> str:
    try:
        return initialize_accelerator(GiveUpAfter(lock, 0.2))
    except Hung as hung:
        return f"hung: {hung}"


with_lock = initialize_with(threading.Lock())
with_rlock = initialize_with(threading.RLock())
print(f"Lock: {with_lock}\nRLock: {with_rlock!r}")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: a-lock-is-not-reentrant-an-rlock-is
assert with_lock.startswith("hung"), "a Lock refuses its own holder"
assert with_rlock == "accelerator", "an RLock lets its owner in again"
print("✓ the Lock refused its own holder; the RLock let it in again")

# %% [markdown]
# :::{dropdown} Why
#
# A plain `Lock` does not know who holds it, so the second acquire by the same thread waits
# for a release that only this thread could make, and this thread is the one waiting: the
# wrapper gave up after 0.2 s, and without it the call would never return. An `RLock`
# (re-entrant lock) counts acquisitions by its owner and lets it in again; it still belongs to that thread: one
# `release` per `acquire`, and another thread gets in only after the last. In slime's
# accelerator selection the second acquire has no timeout: with a plain `Lock`, a process
# would hang, with no error, the first time it imports slime's Megatron or SGLang backend,
# whose import calls `initialize_accelerator`. Its lock is an `RLock`.
#
# :::

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the experiment: another thread tries the RLock after each acquire and release"}
# attempt(): another thread tries the lock for 0.05 s, and other_thread_got_it notes whether it got it.
other_thread_got_it: list[bool] = []


def try_from_other_thread() -> None:
    got = selection_lock.acquire(timeout=0.05)
    other_thread_got_it.append(got)
    if got:
        selection_lock.release()


def attempt() -> None:
    probe = threading.Thread(target=try_from_other_thread)
    probe.start()
    probe.join(timeout=2)


selection_lock = threading.RLock()
selection_lock.acquire()
selection_lock.acquire()  # the owner re-enters: depth 2
attempt()  # another thread tries it
selection_lock.release()  # depth 1: still held
attempt()
selection_lock.release()  # depth 0: free
attempt()
print("another thread got it after 2 acquires, after 1 release, after 2 releases:",
      other_thread_got_it)
assert other_thread_got_it == [False, False, True]
print("✓ another thread got the RLock only after the last release")

# %% [markdown]
# **`threading.Timer(delay, fn)`** calls `fn` once, `delay` seconds after `start()`, unless
# `cancel()` comes first; `start()` starts it and `join(timeout)` waits for it to finish. Below,
# one timer fires after 0.05 s and calls `record_firing`, which appends its thread's name to
# `fired_in`; one with a 2 s delay is cancelled at once (it would append to `cancelled_calls`).

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the two functions the timers call"}
from lab_snippets.measure import ReferenceWait

fired_in: list[str] = []
cancelled_calls: list[str] = []


def record_firing() -> None:
    fired_in.append(threading.current_thread().name)


def record_cancelled_call() -> None:
    cancelled_calls.append("fired")


# For the check only: a plain wait of half the delay, in a thread of its own. The check asks
# whether the cancelled timer's thread ended before this wait woke, rather than comparing
# with a fixed number of seconds.
CANCELLED_DELAY = 2.0
half_delay = ReferenceWait(CANCELLED_DELAY / 2)

# %% [markdown]
# **Predict.** The cancelled timer was set for 2 s. After `cancel()`, does its thread end at
# once, or live on until its 2 s are up? And in which thread does the other timer's `fn` run?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
fire_timer = threading.Timer(0.05, record_firing)
cancelled_timer = threading.Timer(CANCELLED_DELAY, record_cancelled_call)  # 2 s
fire_timer.start()
cancelled_timer.start()

cancel_at = time.monotonic()
cancelled_timer.cancel()
cancelled_timer.join(timeout=CANCELLED_DELAY + 2)
cancel_to_exit = time.monotonic() - cancel_at
fire_timer.join(timeout=2)
print(f"fired in thread {fired_in}; this cell runs in",
      repr(threading.current_thread().name))
print(f"the cancelled timer called {cancelled_calls}; its thread ended "
      f"{cancel_to_exit * 1000:.1f} ms after cancel()")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: cancel-stops-a-timer-before-it-fires
# Measured against half_delay, a wait started with the timers, not against a fixed time.
print(f"the cancelled timer's thread ended {cancel_to_exit * 1000:.1f} ms after cancel(), "
      f"of a {CANCELLED_DELAY * 1000:.0f} ms delay")
assert not cancelled_timer.is_alive() and not fire_timer.is_alive(), "both timer threads ended"
assert fired_in and fired_in[0] != threading.current_thread().name
assert cancelled_calls == [], "a timer cancelled before its delay never calls its function"
assert cancel_to_exit < half_delay.seconds, "cancel() ends the timer's wait at once, not after its delay"
print("✓ the cancelled timer never called its function, and its thread ended at once")

# %% [markdown]
# :::{dropdown} Why
#
# A `Timer` is a thread whose `run` waits on an internal event for `delay` seconds and then
# calls `fn` itself; `cancel()` sets that event. So `fn` ran in the timer's own thread, not
# the main one, and needs the same locking as any other thread's code; and the cancelled
# timer never called its function, its thread ending right after `cancel()`, not after 2 s.
#
# :::
#
# **Predict.** That cancel came before the delay ran out. What if `cancel()` comes once `fn`
# has already started: does it stop `fn`, raise, or do nothing? Below, `fn` signals when it
# has begun, the notebook cancels the timer, and only then lets `fn` finish.

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
began, may_finish = threading.Event(), threading.Event()
late_calls: list[str] = []


def slow_fn() -> None:
    began.set()
    may_finish.wait(timeout=2)
    late_calls.append("finished")


late_timer = threading.Timer(0.01, slow_fn)
late_timer.start()
began.wait(timeout=2)  # fn is now running, in the timer's thread
late_timer.cancel()  # after fn started
may_finish.set()
late_timer.join(timeout=2)
print("after a late cancel(), fn still ran to its end:", late_calls)

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert began.is_set() and not late_timer.is_alive(), "the timer's thread ended"
assert late_calls == ["finished"], "a cancel() once fn runs does not stop it"
print("✓ cancel() after fn had started neither stopped fn nor raised")

# %% [markdown]
# :::{dropdown} Why
#
# `cancel()` only sets the event the timer waits on *before* it calls `fn`. Once `fn` runs,
# nothing looks at that event again, so a late `cancel()` silently does nothing. To stop
# work that is under way, `fn` has to check a stop signal of its own, which is what the
# periodic loops below do.
#
# :::
#
# ## Measure: how soon does a periodic loop stop when asked?
#
# A health monitor ticks every `interval` seconds until told to stop. Three usual ways to
# write it, one a chain of `Timer`s (`tick()` does the work, `stop` is a `threading.Event`):
#
# ```python
# # 1. a time.sleep loop
# while not stop.is_set():
#     tick()
#     time.sleep(interval)
#
# # 2. a Timer chain: each tick schedules the next one
# def run():
#     tick()
#     with lock:
#         if not stopped:
#             threading.Timer(interval, run).start()
# # stop(): with lock: stopped = True, and cancel() the pending Timer
#
# # 3. an Event.wait loop
# while True:
#     tick()
#     if stop.wait(interval):
#         break
# ```
#
# The folded cell holds them as classes with an interval of 0.2 s, and a driver that starts
# the three at once, asks each to stop right after its fourth tick and times the stop.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the three loops as classes, the driver that stops each after its fourth tick, and the plotting code"}
interval = 0.2


class EventWaitLoop:
    def __init__(self, tick) -> None:
        self.stop_flag = threading.Event()
        self.thread = threading.Thread(target=self._run, name="event-wait-loop")
        self.tick = tick

    def _run(self) -> None:
        while True:
            self.tick()
            if self.stop_flag.wait(interval):
                break

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stop_flag.set()
        self.thread.join(timeout=2)


class SleepLoop:
    def __init__(self, tick) -> None:
        self.stop_flag = threading.Event()
        self.thread = threading.Thread(target=self._run, name="sleep-loop")
        self.tick = tick

    def _run(self) -> None:
        while not self.stop_flag.is_set():
            self.tick()
            time.sleep(interval)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stop_flag.set()
        self.thread.join(timeout=2)


class TimerChain:
    def __init__(self, tick) -> None:
        self.tick = tick
        self.lock, self.stopped = threading.Lock(), False
        self.timers: list[threading.Timer] = []

    def _run(self) -> None:
        self.tick()
        with self.lock:
            if not self.stopped:
                self._schedule(interval)

    def _schedule(self, delay: float) -> None:  # the caller holds the lock
        self.timers.append(threading.Timer(delay, self._run))
        self.timers[-1].start()

    def start(self) -> None:
        with self.lock:
            self._schedule(0)

    def stop(self) -> None:
        with self.lock:
            self.stopped = True
            self.timers[-1].cancel()
        join_all(self.timers, timeout=2)


# One instance of each loop, with a tick that records its thread and sets an event at the
# fourth tick; `ticks`, `latencies` and `next_tick_due` collect what the check reads.
tl = Timeline()
NAMES = {SleepLoop: "time.sleep loop", TimerChain: "Timer chain", EventWaitLoop: "Event.wait loop"}


def make_ticker(label: str, ticks: list[tuple[str, float]], fourth_tick: threading.Event):
    def tick() -> None:
        tl.mark(f"{label} tick")
        ticks.append((threading.current_thread().name, time.monotonic()))
        if len(ticks) == 4:
            fourth_tick.set()
    return tick


loops, ticks, latencies, next_tick_due, asked_at = [], {}, {}, {}, {}
for kind, kind_name in NAMES.items():
    ticks[kind_name] = []
    fourth_tick = threading.Event()
    loops.append((kind(make_ticker(kind_name, ticks[kind_name], fourth_tick)), fourth_tick))


# A driver thread per loop starts it, stops it after its fourth tick and times the stop.
def run_and_stop(loop, fourth_tick: threading.Event) -> None:
    name = NAMES[type(loop)]
    started = time.monotonic()
    loop.start()
    assert fourth_tick.wait(timeout=5)
    asked = time.monotonic()
    loop.stop()
    ended = time.monotonic()
    tl.add(name, started, asked, state="waiting")
    tl.add(name, asked, ended, state="blocked")
    latencies[name], asked_at[name] = ended - asked, asked
    last_tick = max(at for _, at in ticks[name] if at <= asked)
    # > 0: ended before the next tick was due
    next_tick_due[name] = (last_tick + interval) - ended


def run_all_three() -> dict[str, int]:
    """Drive the three loops at once; return how many threads each one's ticks ran in."""
    drivers = [threading.Thread(target=run_and_stop, args=pair,
                                name=f"drive {NAMES[type(pair[0])]}")
               for pair in loops]
    for driver in drivers:
        driver.start()
    assert not join_all(drivers, timeout=8)
    return {name: len({thread for thread, _ in names}) for name, names in ticks.items()}


def draw_stop_figure():
    """Each loop's ticks numbered by the thread that ran them, and its stop time at the lane's end."""
    fig = tl.plot(f"Stopping periodic work (interval {interval} s): from stop request to thread exit",
                  lanes=list(NAMES.values()), meanings={"waiting": "ticking", "blocked": "stopping"})
    axes = fig.axes[0]
    for lane, (name, lane_ticks) in enumerate(ticks.items()):
        thread_number: dict[str, int] = {}
        for thread, at in lane_ticks:  # over each tick: which of its loop's threads ran it
            thread_number.setdefault(thread, len(thread_number) + 1)
            axes.text(at - tl.t0, lane - 0.32, f"thread {thread_number[thread]}", ha="center", va="bottom",
                      fontsize=8, fontweight="bold", bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})
        stopped = asked_at[name] + latencies[name] - tl.t0  # the stop time, written after the lane's end
        axes.text(stopped + 0.01, lane, f"{latencies[name] * 1000:.1f} ms", va="center", fontsize=10)
    axes.set_xlim(right=axes.get_xlim()[1] + 0.1)


# %% [markdown]
# **Predict.** Each loop is asked to stop right after its fourth tick. How long does each
# take from the stop request to its thread's exit, and how many threads does each use?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
threads_used = run_all_three()  # per loop: how many threads ran its ticks
print({name: f"{latency * 1000:.1f} ms" for name, latency in latencies.items()},
      "| threads used:", threads_used)
draw_stop_figure()  # the run on one time axis, from the fold above

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: event-wait-stops-at-once-sleep-does-not
loop_threads = [loop.thread for loop, _ in loops if hasattr(loop, "thread")] + loops[1][0].timers
assert not [t for t in loop_threads if t.is_alive()], "every loop's threads ended when it was stopped"
# Each claim compares a loop with its own tick schedule, measured in the same run, not the three
# loops' latencies with one another (the stop request can come late after a tick on a busy machine).
assert next_tick_due["time.sleep loop"] <= 0, "the sleep loop slept through the stop request to the end of its interval"
for name in ("Event.wait loop", "Timer chain"):  # against its own tick period, measured in the same run
    period = ticks[name][1][1] - ticks[name][0][1]
    assert latencies[name] < period / 2, f"the {name} stopped long before its next tick was due"
assert threads_used["Event.wait loop"] == 1 and threads_used["Timer chain"] == len(ticks["Timer chain"])
print("✓ the sleep loop slept to the end of its interval; the Timer chain and Event.wait stopped at once")

# %% [markdown]
# :::{dropdown} Why
#
# Each loop stops as soon as whatever it is waiting in can be interrupted. Taking them in
# the order of the list above:
#
# 1. The `time.sleep` loop notices the flag only when its sleep ends, so it ran out the rest
#    of its interval.
# 2. The Timer chain stopped at once, in a few milliseconds at most, as printed: its pending
#    timer's thread only waits on an event, `cancel()` sets that event, and the thread ends.
#    It started a new thread for every tick.
# 3. The `Event.wait` loop also stopped at once: setting the event ends the wait. It used one
#    thread for all its ticks. slime's health monitor is this kind (the second quote below).
#
# In the figure, red is the time from the stop request to the thread's exit, written in ms
# at each lane's end; the label over each tick names the thread that ran it (thread 1 for
# the loop's first thread, thread 2 for a second one, and so on).
#
# :::
#
# :::{dropdown} Going further: telling consumers no more items are coming
#
# `queue.Queue.shutdown()` (Python 3.13 and later) makes blocked and future `get` calls
# raise `queue.ShutDown` once the queue is empty. Before 3.13, and in a hand-made buffer like
# the one above, use one sentinel item per consumer, or a `closed` flag that the `wait_for`
# predicate also checks, plus `notify_all`. The folded cell shuts a queue down under a
# blocked `get`, on the Python that built this page.
#
# :::

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the code"}
if sys.version_info >= (3, 13):
    work_queue: queue.Queue[int] = queue.Queue()
    getter_outcome: list[str] = []

    def blocked_getter() -> None:
        try:
            getter_outcome.append(f"got {work_queue.get(timeout=2)}")
        except queue.ShutDown:  # no more items are coming
            getter_outcome.append("queue.ShutDown")

    getter = threading.Thread(target=blocked_getter)
    getter.start()
    work_queue.shutdown()
    getter.join(timeout=3)
    print("a getter on a shut-down queue:", getter_outcome)
    assert not getter.is_alive(), "the getter thread ended"
    assert getter_outcome == ["queue.ShutDown"], "get on a shut-down, empty queue raised queue.ShutDown"
    print("✓ the blocked get raised queue.ShutDown and its thread ended")
else:
    print("Python < 3.13: queue.Queue has no shutdown()")

# %% [markdown]
# ## Exercise 16.1 · Take a whole batch or nothing
#
# slime's trainer reads rollouts in whole groups. Implement `take_batch(cond, items, size,
# timeout)`: wait (with `cond`) until `items` holds at least `size` entries, then remove the
# **first** `size` entries and return them as a list. If that does not happen within
# `timeout` seconds, return `None` and remove nothing. Producers call `put_item`, which
# appends one item and notifies everyone.
#
# So a consumer may be woken many times before its batch is there: it keeps waiting through
# every wake-up, with one deadline for the whole wait, not a fresh timeout per wake-up.
# Several consumers may call `take_batch` at once: no item may be taken twice, and every
# batch must have exactly `size` items, in the order they were put.
#
# :::{dropdown} What the grader checks
#
# Graded, on many generated runs (one to three consumers at once; `size` from 1 to 3; items
# already there, put one by one while the consumers wait, or both; the same value more than
# once; enough items for every consumer, or not; runs where the test lets the other threads
# run whenever the lock is released, as a busy machine may):
#
# - **batches**: each batch is the first `size` items in `items` when it is taken, in their
#   order; no item taken twice, none skipped;
# - **waiting**: a consumer waits through every wake-up until its batch is there, and returns
#   it then;
# - **timeout**: `None` only once `timeout` has run out, not before, and one deadline for the
#   whole wait; a take that times out removes nothing;
# - **what is left**: exactly the items no batch took, in their order.
#
# :::
#
# :::{dropdown} Hint
#
# `cond.wait_for(predicate, timeout)` re-checks `predicate` after every wake-up and keeps one
# deadline for the whole wait. Check and take in one `with cond:` block.
#
# :::
#
# The visible test below shows one run.

# %%
def put_item(cond: threading.Condition, items: list, item) -> None:
    with cond:
        items.append(item)
        cond.notify_all()


# %% tags=["solution", "hide-input"] mystnb={"code_prompt_show": "Show the solution"}
def take_batch(cond: threading.Condition, items: list, size: int, timeout: float) -> list | None:
    """Remove and return the first `size` items once there are that many; None on timeout."""
    ### BEGIN SOLUTION
    with cond:
        if not cond.wait_for(lambda: len(items) >= size, timeout=timeout):
            return None
        batch = items[:size]
        del items[:size]
        return batch
    ### END SOLUTION


# %% tags=["tests"]
test_cond, test_items = threading.Condition(), []
for number in range(5):
    put_item(test_cond, test_items, number)
test_batch = take_batch(test_cond, test_items, 3, timeout=1)
assert test_batch == [0, 1, 2], (
    f"a full batch takes the first 3 items in order, got {test_batch!r}")
test_timed_out = take_batch(test_cond, test_items, 3, timeout=0.05)
assert test_timed_out is None, (
    "with only 2 items left, a batch of 3 must time out and return None, "
    f"got {test_timed_out!r}")
assert test_items == [3, 4], "a timed-out take must leave the items in place"

# %% tags=["tests", "hidden-tests", "remove-cell"]
### BEGIN HIDDEN TESTS
_cond, _items = threading.Condition(), []
_batches: list = []
_batches_lock = threading.Lock()
def _consumer() -> None:
    _batch = take_batch(_cond, _items, 3, timeout=2)
    with _batches_lock:
        _batches.append(_batch)
_consumers = [threading.Thread(target=_consumer, daemon=True) for _ in range(3)]
try:
    for _t in _consumers:
        _t.start()
    for _n in range(9):
        put_item(_cond, _items, _n)
        time.sleep(0.005)
    assert not join_all(_consumers, timeout=3), "consumers must return once their batch is there"
finally:
    with _cond:
        _items.extend(range(100, 130))
        _cond.notify_all()
    join_all(_consumers, timeout=3)
assert None not in _batches and len(_batches) == 3, (
    f"a consumer gave up before its timeout, with items still coming (batches: {_batches}): "
    "notify_all wakes every waiter at each item, so check the condition again after each "
    "wake-up, as wait_for does (chapter 16)")
assert all(len(_b) == 3 for _b in _batches), f"every batch must have exactly 3 items: {_batches}"
assert sorted(_batches) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]], (
    f"batches must be taken first-in first-out, no item twice: got {_batches} (chapter 16)")
# A producer trickles one item every 20 ms, never enough for the batch, while one consumer waits
# with timeout=0.3. Each item wakes the consumer; the timeout must still run out during the
# trickle (it lasts 3 s: ten times the timeout), and nothing may be taken.
_cond3, _items3 = threading.Condition(), []
_outcome: list = []
_returned = threading.Event()
def _patient() -> None:
    _outcome.append(take_batch(_cond3, _items3, 1000, timeout=0.3))
    _returned.set()
_waiter = threading.Thread(target=_patient, daemon=True)
_waiter.start()
_put = 0
try:
    while _put < 150 and not _returned.is_set():
        put_item(_cond3, _items3, _put)
        _put += 1
        time.sleep(0.02)
    _returned_during_trickle = _returned.is_set()
finally:
    join_all([_waiter], timeout=3)
assert _returned_during_trickle, (
    f"take_batch(timeout=0.3) was still waiting after {_put} items had woken it over about "
    f"{_put * 0.02:.1f} s: each wake-up restarted the full timeout; keep one deadline for the "
    "whole wait, as wait_for does (chapter 16)")
assert _outcome == [None], f"a take that timed out must return None, got {_outcome}"
assert _items3 == list(range(_put)), "a timed-out take must remove nothing (chapter 16)"
_cond2, _items2 = threading.Condition(), ["only one"]
_t0 = time.monotonic()
_got = take_batch(_cond2, _items2, 2, timeout=0.1)
_waited = time.monotonic() - _t0
assert _got is None and _items2 == ["only one"], (
    f"a take that timed out must return None and remove nothing: got {_got!r}, left {_items2}")
# floor: a wait never ends early, so no load makes it give up before its timeout
assert _waited >= 0.1 * 0.9, f"gave up after {_waited:.3f} s, before the 0.1 s timeout (chapter 16)"
# While a consumer waits for a batch that is not all there, the items stay on the list for every
# other thread to see: looked at once the consumer is inside cond.wait (no timing involved).
class _SeenWaiting(threading.Condition):
    def __init__(self) -> None:
        super().__init__()
        self.waiting = threading.Event()

    def wait(self, timeout=None):
        self.waiting.set()
        return super().wait(timeout)
_cond4, _items4, _got4 = _SeenWaiting(), [1, 2], []
_t4 = threading.Thread(target=lambda: _got4.append(take_batch(_cond4, _items4, 3, timeout=2)), daemon=True)
_t4.start()
try:
    _waited4 = _cond4.waiting.wait(3)
    with _cond4:
        _seen4 = list(_items4)
        _items4.append(3)
        _cond4.notify_all()
finally:
    join_all([_t4], timeout=3)
assert _waited4, "with 2 items for a batch of 3, take_batch must wait on cond (chapter 16)"
assert _seen4 == [1, 2], (
    f"while a consumer waited for a batch of 3 with items [1, 2] there, the list held {_seen4}: "
    "no item taken before its batch is whole; other threads must still see them (chapter 16)")
assert _got4 == [[1, 2, 3]] and _items4 == [], (
    f"once the third item came, the batch must be [1, 2, 3] and the list empty: got {_got4}, left {_items4}")

# Generated scenarios (issue 37): the same consumers and producer through take_batch and the
# reference, on real threads (the chapter's point), compared on what no timing can change: the
# batches taken, the Nones, the items left (lab_snippets.scenarios explains the pattern).
import dataclasses as _dc

from hypothesis import strategies as _st

from lab_snippets import scenarios as _sc

_reference = _sc.reference(globals(), "take_batch")


class _GivesWay:
    """A lock that lets other threads run for a moment after each release, as a busy machine may
    at any release: a consumer that lets go of `cond` between its wait and its take is overtaken."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        return self._lock.acquire(blocking, timeout)

    def release(self) -> None:
        self._lock.release()
        time.sleep(0.002)

    def locked(self) -> bool:  # Condition reads it from 3.14
        return self._lock.locked()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


@_dc.dataclass(frozen=True)
class _Scenario:
    consumers: int
    size: int
    preload: tuple    # in `items` before the consumers start
    produced: tuple   # put with put_item, one by one, once the consumers wait
    gives_way: bool = False  # cond's lock lets other threads run after each release

    @property
    def timeout(self) -> float:  # long when every batch can be filled, short when some cannot
        return 5.0 if len(self.preload) + len(self.produced) >= self.consumers * self.size else 0.05

    def describe(self) -> str:
        return (f"{self.consumers} consumer thread(s) call take_batch(cond, items, {self.size}, "
                f"timeout={self.timeout:g}) with items={list(self.preload)!r}; then a producer puts "
                f"{list(self.produced)!r} one by one with put_item"
                + ("; cond's lock lets the other threads run after each release" if self.gives_way else ""))


@_st.composite
def _scenarios(draw):
    values = _st.lists(_st.sampled_from([1, 2, 3, 1, 4, 5]), max_size=6)
    consumers, size, preload = draw(_st.integers(1, 3)), draw(_st.integers(1, 3)), draw(values)
    produced = draw(values)
    if len(preload) + len(produced) < consumers * size:
        produced = []  # not enough for everyone: who waits in vain is then decided before any wait
    return _Scenario(consumers, size, tuple(preload), tuple(produced),
                     draw(_st.sampled_from([False, True, True])))


def _observe(fn, s: _Scenario) -> dict:
    cond, items, got, waits = threading.Condition(_GivesWay() if s.gives_way else None), list(s.preload), [], []
    lock = threading.Lock()

    def consume() -> None:
        t0 = time.monotonic()
        batch = fn(cond, items, s.size, s.timeout)
        with lock:
            got.append(batch)
            waits.append(time.monotonic() - t0 if batch is None else s.timeout)

    threads = [threading.Thread(target=consume, daemon=True) for _ in range(s.consumers)]
    for t in threads:
        t.start()
    time.sleep(0.02)  # lets the consumers start waiting
    for item in s.produced:
        put_item(cond, items, item)
        time.sleep(0.003)  # each item wakes every waiter before the next comes
    stuck = join_all(threads, timeout=s.timeout + 3)
    with cond:
        left = list(items)
        items.extend([0] * 30)  # frees a consumer that is still waiting
        cond.notify_all()
    join_all(threads, timeout=3)
    return {"got": sorted(got, key=repr), "left": left, "stuck": len(stuck), "waited": min(waits, default=9)}


def _compare(me: dict, it: dict, s: _Scenario) -> str | None:
    if me["stuck"]:
        return f"{me['stuck']} consumer(s) still waiting well after their timeout of {s.timeout:g} s"
    short = [b for b in me["got"] if b is not None and len(b) != s.size]
    if short:
        return (f"every batch must have exactly `size` items: a consumer got {short[0]!r} with size {s.size} "
                f"(all batches: {me['got']!r}); check and take in one hold of `cond`, or another consumer "
                "takes the items in between")
    if me["got"] != it["got"]:
        return (f"the consumers got {me['got']!r}, expected {it['got']!r}: each takes the first `size` items "
                "once there are that many, no item twice, and None only when its timeout runs out")
    if me["left"] != it["left"]:
        return (f"{me['left']!r} left in items, expected {it['left']!r}: take exactly the first `size` items, "
                "and nothing on a timeout")
    if me["waited"] < s.timeout * 0.9:
        return f"a consumer gave up after {me['waited']:.3f} s, before its timeout of {s.timeout:g} s"
    return None


# Always tried first: items already there for one batch and part of the next, the rest put one by
# one while two consumers wait (a consumer that pulls items as they come gets a mixed batch).
_sc.differential(take_batch, _reference, _scenarios(), _observe, _compare, what="take_batch",
                 examples=8, hint="chapter 16",
                 explicit=(_Scenario(2, 3, (1, 2, 3, 4), (5, 1, 2, 3, 4, 5), True),
                           _Scenario(3, 3, (1, 1, 1, 1), (3, 1, 2, 1, 2), True)))
### END HIDDEN TESTS

# %% [markdown]
# ## Summary
#
# - `notify` does not hand over the lock: the waiter wakes only after the notifier releases
#   it, and the state may have changed by then. Re-check after waking; `wait_for(predicate,
#   timeout)` does it for you.
# - One `Condition`, `notify_all` and `wait_for` on both sides make a correct bounded buffer.
# - A `Lock` held by a thread blocks that same thread's next acquire; an `RLock` lets its
#   owner re-enter and needs one release per acquire.
# - A `Timer` is a one-shot thread; `cancel()` stops it only before it fires. For periodic
#   work that must stop promptly, loop on `stop_event.wait(interval)`: one thread, and it
#   stops at once, where a `time.sleep` loop sleeps out its interval.
#
# **What's next.** Chapter 17 hands work to a thread pool and asks what its futures and its
# shutdown really promise.
#
# ## In slime
#
# The quotes below are the accelerator selection's `RLock`, the health monitor's loop and
# the rollout-buffer plugin's `Condition`; slime has no `threading.Timer`. The buffer's reads
# never wait: its clients poll. So a group that is put just after a read has found the
# buffer empty waits for the client's next poll, about half an interval on average (chapter
# 14 measured what a poll costs, in *What does a five-second poll cost?*), where a reader in
# `wait_for` would be woken by the put's `notify_all` at once. If you add a blocking read to the buffer, write it with
# `wait_for` and a timeout, as in Exercise 16.1.
# More sites are in the [source inventory](../book/reference/inventory.md).

# %% tags=["remove-input"]
from lab_snippets.sites import show_call_site

show_call_site("16b")

# %% tags=["remove-input"]
show_call_site("16c")

# %% tags=["remove-input"]
show_call_site("16")

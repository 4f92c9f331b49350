# %% [markdown]
# # 10 · async with, async for and async generators
# *async with、async for 与异步生成器*
#
# **The question.** When a block that holds a resource ends (normally, by an exception, or by
# cancellation), and when a loop over a stream stops early, exactly when does the cleanup
# code run?
#
# **You will**
# 1. trace the order of `__aenter__`, the body and `__aexit__` when the body finishes, raises
#    and is cancelled;
# 2. write an `asynccontextmanager` that boots a resource while holding a semaphore permit,
#    retries failed boots, and releases the resource on every path;
# 3. stream lines with an async generator and see what `break`, `aclose()` and
#    `contextlib.aclosing` do to its `finally`;
# 4. implement a bounded, retrying boot whose cleanup a hidden test checks under faults.
#
# **Needs** chapters 05 (cancellation and timeouts) and 06 (Semaphore) · about 65 minutes
#
# **New to the course?** [How to read an experiment](../book/reading_guide.md) explains the
# timelines, the helpers and the folded checks; the [glossary](../book/glossary.md) gives the
# words the chapters share. The folded setup cell imports the tools; its `figure_style()` only
# sets how the plots look.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the setup"}
import asyncio
from contextlib import aclosing, asynccontextmanager

from lab_snippets.timeline import Timeline, figure_style

figure_style()

# %% [markdown]
# ## What does `async with` do when its body is cancelled?
#
# `async with manager as value:` awaits `manager.__aenter__()` and binds its result to
# `value`, then runs the body; when the body finishes, it awaits
# `manager.__aexit__(exc_type, exc, tb)`. Both halves are coroutines, so taking a resource and
# giving it back may each wait (for a connection, a sandbox, a permit).
#
# `use_lease` below runs a block three ways: the body finishes, the body raises, and the task
# running it is cancelled from outside while the body sleeps. Its manager, `TracedLease`
# (folded), marks each of its steps on a `Timeline`, the course's recorder of moments: `enter
# starts`, `entered`, `exit sees` what ended the body, and `released`. Its `__aexit__` does
# three things: it marks `exit sees …`, awaits `asyncio.sleep(0.01)`, then marks `released`
# and returns `False`, so the exception, if any, goes on to the caller. The cell prints the
# marks in order.
#
# Predict, for the cancelled run: does `__aexit__` run at all, and if it does, can its own
# `await asyncio.sleep(0.01)` still finish, or is it cancelled too? And in the two runs that end
# in an exception, which comes first: the exit's `released` line, or the caller's?

# %%
async def use_lease(name: str, tl: Timeline, ending: str) -> None:
    async with TracedLease(name, tl):
        tl.mark(f"{name}: body starts")
        if ending == "raise":
            raise ValueError("bad input")
        await asyncio.sleep(0.02 if ending == "finish" else 1.0)
        tl.mark(f"{name}: body ends")


# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show TracedLease, the manager that marks each step"}
class TracedLease:
    """An async context manager that marks each step of its protocol on a Timeline."""

    def __init__(self, name: str, tl: Timeline) -> None:
        self.name, self.tl = name, tl

    async def __aenter__(self) -> "TracedLease":
        self.tl.mark(f"{self.name}: enter starts")
        await asyncio.sleep(0.01)
        self.tl.mark(f"{self.name}: entered")
        return self

    async def __aexit__(self, exc_type, exc, tb) -> bool:
        how = exc_type.__name__ if exc_type else "no error"
        self.tl.mark(f"{self.name}: exit sees {how}")
        await asyncio.sleep(0.01)
        self.tl.mark(f"{self.name}: released")
        return False  # never swallow the exception


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
tl = Timeline()
await use_lease("finish", tl, "finish")

try:
    await use_lease("raise", tl, "raise")
except ValueError:
    tl.mark("raise: caller got ValueError")

cancelled = asyncio.create_task(use_lease("cancel", tl, "cancel"))
await asyncio.sleep(0.03)  # let it enter and start its body
cancelled.cancel()
try:
    await cancelled
except asyncio.CancelledError:
    tl.mark("cancel: caller saw the task cancelled")

for event in tl.names():
    print(event)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: aexit-runs-on-every-path
assert tl.order("finish: enter starts", "finish: entered", "finish: body starts", "finish: body ends",
                "finish: exit sees no error", "finish: released")
assert tl.order("raise: body starts", "raise: exit sees ValueError", "raise: released",
                "raise: caller got ValueError")
assert tl.order("cancel: body starts", "cancel: exit sees CancelledError", "cancel: released",
                "cancel: caller saw the task cancelled")
assert "raise: body ends" not in tl.names() and "cancel: body ends" not in tl.names()
assert cancelled.cancelled()
print("✓ __aexit__ ran on all three paths, before the caller heard of the exception")

# %% [markdown]
# :::{dropdown} Why
#
# Look at the last three lines of the `raise` run and of the `cancel` run. `__aexit__` runs on
# all three paths, with the exception that ended the body (or `None, None, None` when the body
# finished), and it runs *before* the caller hears about the exception, so the exit's
# `released` line comes before the caller's. It is told why the body ended (the exception
# type), so it can decide what cleanup means. And on the cancelled path its own `await` still
# finished (`cancel: released` comes after the exit's sleep): cancellation is delivered once, at
# the `await` in the body, and the exit code that runs afterwards is not cancelled again unless
# someone asks a second time.
#
# :::
#
# ## `asynccontextmanager`: boot under a permit, release on every way out
#
# Writing a class for every resource is heavy. `contextlib.asynccontextmanager` turns an
# async generator that yields exactly once when it runs into a context manager: the code
# before `yield` is `__aenter__`, the yielded value is what `as` binds, and a `finally`
# around the `yield` is `__aexit__`. `sandbox_once` below boots an agent sandbox, the
# way slime does, in three steps: take one of `BOOT_LIMIT` permits (a semaphore) **only
# while booting**, yield the sandbox to the caller's block, and close it in the
# `finally`, however that block ends.

# %%
@asynccontextmanager
async def sandbox_once(name: str, permits: asyncio.Semaphore, ledger: "SandboxLedger",
                       tl: Timeline):
    async with permits:  # a permit only while booting
        await boot_once(name, ledger, tl)
    try:
        yield name  # the caller's block runs here, permit given back
    finally:
        await close_sandbox(name, ledger, tl)  # cleanup, on every way out


# %% [markdown]
# `sandbox_once` calls two stand-ins, folded below: `boot_once`, one boot attempt of 0.04 s
# (it raises `ConnectionError` when told to fail), and `close_sandbox`, 0.01 s of cleanup.
# Both draw on the timeline and note on a `SandboxLedger` what is open and the most boots at
# once.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the stand-ins: one boot attempt, the cleanup, and what records them"}
BOOT_LIMIT = 2


class SandboxLedger:
    """What is open right now, and the largest number of boots that ever ran at once."""

    def __init__(self) -> None:
        self.open: set[str] = set()
        self.booting = 0
        self.peak_booting = 0
        self.closed: list[str] = []


async def boot_once(name: str, ledger: SandboxLedger, tl: Timeline, fail: bool = False) -> None:
    ledger.booting += 1
    ledger.peak_booting = max(ledger.peak_booting, ledger.booting)
    try:
        with tl.span(f"{name} boot"):  # a failed attempt is drawn as "failed"
            await asyncio.sleep(0.04)
            if fail:
                raise ConnectionError(f"{name}: boot attempt failed")
        ledger.open.add(name)
    finally:
        ledger.booting -= 1


async def close_sandbox(name: str, ledger: SandboxLedger, tl: Timeline) -> None:
    with tl.span(f"{name} use", state="cleanup"):
        await asyncio.sleep(0.01)  # closing a sandbox takes a moment
        ledger.open.discard(name)
        ledger.closed.append(name)


# %% [markdown]
# One sandbox, used by a block that prints what is open:

# %%
tl = Timeline()
ledger = SandboxLedger()
permits = asyncio.Semaphore(BOOT_LIMIT)
async with sandbox_once("sb0", permits, ledger, tl) as box:
    print(f"in the block: {box} is open: {sorted(ledger.open)}")
print(f"after the block: open {sorted(ledger.open)}, closed {ledger.closed}")

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert ledger.closed == ["sb0"] and ledger.open == set() and permits._value == BOOT_LIMIT
print("✓ sb0 was open in the block and closed after it; its permit came back")

# %% [markdown]
# ### Adding retries
#
# A real boot fails now and then (the network, a busy host), so slime tries again. `sandbox`
# wraps the boot in a loop of at most `retries` attempts. Each attempt takes a permit for
# itself, and a failed one waits a short back-off *after* giving its permit back, so a
# sandbox that waits to retry does not keep another one from booting. The loop uses Python's
# `for ... else`: the `else` block runs only when the loop ends without a `break`, so here
# only when every attempt failed. The `try`/`yield`/`finally` half is the same as above.

# %%
@asynccontextmanager
async def sandbox(name: str, permits: asyncio.Semaphore, ledger: SandboxLedger,
                  tl: Timeline, fail_attempts: int = 0, retries: int = 3):
    last_error: Exception | None = None
    for attempt in range(retries):
        async with permits:  # a permit for this one attempt
            try:
                await boot_once(name, ledger, tl, fail=attempt < fail_attempts)
                break  # booted: leave the loop and skip its else
            except ConnectionError as exc:
                last_error = exc
        await asyncio.sleep(0.01 * (attempt + 1))  # back off, permit given back
    else:  # no break: every attempt failed
        raise last_error
    try:
        yield name
    finally:
        await close_sandbox(name, ledger, tl)


# %% [markdown]
# ## Measure: how does each of three sandboxes end?
#
# Three sandboxes start together under a limit of two boots, each set up for a different fate:
#
# | sandbox | set up to | its task ends with |
# |---|---|---|
# | `sb1` | work for 1 s, under a time guard of 0.25 s around its whole task | ? |
# | `sb2` | fail its first boot, then work for 0.08 s | ? |
# | `sb3` | raise an error after 0.03 s of work | ? |
#
# `agent_task` runs one sandbox's task inside its guard, `asyncio.timeout(guard)`, and draws the
# sandbox's use with `tl.span`, a `with` block that draws the stretch it encloses.
#
# Predict the last column: a return value, or which exception?

# %%
tl = Timeline()
ledger = SandboxLedger()
permits = asyncio.Semaphore(BOOT_LIMIT)


async def agent_task(name: str, work: float, fail_attempts: int = 0,
                     raise_in_body: bool = False, guard: float = 2.0) -> str:
    async with asyncio.timeout(guard):
        booting = sandbox(name, permits, ledger, tl, fail_attempts=fail_attempts)
        async with booting as box:
            with tl.span(f"{name} use"):
                await asyncio.sleep(work)
                if raise_in_body:
                    raise RuntimeError(f"{box}: the work failed")
    return f"{name} ok"


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
batch = {
    "sb1": ("work 1 s, guard 0.25 s", agent_task("sb1", 1.0, guard=0.25)),
    "sb2": ("fail first boot, work", agent_task("sb2", 0.08, fail_attempts=1)),
    "sb3": ("raise after 0.03 s", agent_task("sb3", 0.03, raise_in_body=True)),
}
tasks = [task for _, task in batch.values()]
results = await asyncio.gather(*tasks, return_exceptions=True)
outcomes = dict(zip(batch, results, strict=True))
for name, (setup, _) in batch.items():
    print(f"{name}  {setup:<24} ended with {outcomes[name]!r}")

# %% [markdown]
# :::{dropdown} Why
#
# Each task ends with what comes out of its outermost `async with`, the guard: the task's
# return value, or the exception it ended with. A boot that failed and was retried (`sb2`'s
# first) leaves no trace there. `sb3`'s `RuntimeError` went out through both blocks. `sb1`'s
# cancellation came from its own guard, and, as in chapter 05, `asyncio.timeout` turns the
# `CancelledError` it caused into `TimeoutError` when it exits.
#
# :::
#
# ### Which boot gets the next permit?
#
# `sb3` asked for a permit while `sb1` and `sb2` held both. `sb2`'s first attempt fails after
# its 0.04 s, and `sb2` then backs off for 0.01 s before it asks again. Predict: when does
# `sb3`'s boot start, and which starts first, `sb3`'s boot or `sb2`'s second attempt? The
# figure below draws every boot, use and cleanup of the run, from the first boots' start
# (`from_first_boot`, folded, moves the timeline's zero there).

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the plotting code"}
def from_first_boot(tl: Timeline) -> Timeline:
    """The same spans, with 0 at the first boot's start."""
    first_boot = min(span.start for span in tl.spans)
    shifted = Timeline()
    for span in tl.spans:
        shifted.add(span.label, shifted.t0 + span.start - first_boot,
                    shifted.t0 + span.end - first_boot, span.state)
    return shifted


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
drawn = from_first_boot(tl)  # the same spans, timed from the first boot (folded above)
lanes = [f"sb{i} {part}" for i in range(1, 4) for part in ("boot", "use")]
fig = drawn.plot("Three sandboxes, at most two booting at once: how does each one end?",
                 xlabel="time since the first boot (s)", lanes=lanes,
                 meanings={"running": "booting / in use",
                           "failed": "ended by an exception",
                           "cancelled": "in use, cut off by its guard"})

# %% [markdown]
# :::{dropdown} Why
#
# `sb3`'s boot starts at 0.04 s (0 is the first boots' start). The moment `sb1` and
# `sb2` end their first attempts, each gives its permit back, and `sb3`, already waiting,
# takes one. `sb2` asks again only after its back-off, 0.01 s during which `sb2` holds no
# permit (the white gap in its boot lane), and takes the permit `sb1` left free. No boot
# waits for a sandbox to close, and at no instant are more than two boots drawn.
#
# In the figure each sandbox has two lanes, `boot` and `use`. Blue is a boot holding a permit,
# or a sandbox in use; orange a boot attempt or a piece of work that raised; grey `sb1`'s use,
# working until its guard cut it off; purple a cleanup. Every sandbox is followed by a purple
# cleanup span, `sb1`'s too: as in the first experiment, the guard's cancellation was
# delivered once, at the `await` in `sb1`'s work, so the `finally` around the `yield` could
# still await its cleanup, and only then did the guard let the exception out, as
# `TimeoutError`.
#
# :::

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: boots-capped-and-every-sandbox-cleaned-up
kinds = {n: type(o).__name__ if isinstance(o, BaseException) else o for n, o in outcomes.items()}
assert kinds == {"sb1": "TimeoutError", "sb2": "sb2 ok", "sb3": "RuntimeError"}, kinds
assert ledger.peak_booting == BOOT_LIMIT, ledger.peak_booting
assert ledger.open == set(), f"still open: {ledger.open}"
assert sorted(ledger.closed) == ["sb1", "sb2", "sb3"]
assert not permits.locked() and permits._value == BOOT_LIMIT, "every permit came back"
for name in ("sb1", "sb2", "sb3"):
    work = [s for s in tl.spans_of(f"{name} use") if s.state != "cleanup"][0]
    cleanup = [s for s in tl.spans_of(f"{name} use") if s.state == "cleanup"][0]
    assert work.end <= cleanup.start, f"{name}: cleanup must come after the work ends"
assert [s.state for s in tl.spans_of("sb2 boot")] == ["failed", "running"]
print(f"✓ at most {ledger.peak_booting} boots at once; every booted sandbox was cleaned up")

# %% [markdown]
# And a sandbox whose every boot fails? The loop's `else` raises the last boot's error from
# the enter half, so the block never runs, and there is nothing to close:

# %%
try:
    async with sandbox("sb4", permits, ledger, tl, fail_attempts=3):
        print("the block ran")
except ConnectionError as exc:
    attempts = len(tl.spans_of("sb4 boot"))
    print(f"{exc!r} after {attempts} attempts | sb4 closed: {'sb4' in ledger.closed}")

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert [s.state for s in tl.spans_of("sb4 boot")] == ["failed"] * 3
assert "sb4" not in ledger.closed and permits._value == BOOT_LIMIT
print("✓ three failed boots, the last one's error out, no block, nothing to close, permits back")

# %% [markdown]
# ## An async generator: a stream with a `finally`
#
# An async generator is an `async def` with `yield`: `async for` pulls one value at a time,
# awaiting between them. It is the natural shape for a stream of lines arriving over a
# connection. The one below opens its "connection" and closes it in a `finally`, writing each
# step to a log.

# %%
async def stream_lines(source: str, log: list[str], lines: int = 5):
    log.append(f"{source}: connection opened")
    try:
        for number in range(1, lines + 1):
            await asyncio.sleep(0.005)  # the next line arrives
            yield f"{source} line {number}"
    finally:
        log.append(f"{source}: closing")
        await asyncio.sleep(0.005)
        log.append(f"{source}: connection closed")


# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show let_the_loop_turn, a bounded wait used by the next Predict"}
async def let_the_loop_turn(log: list[str], until: str) -> None:
    """Short sleeps, so that the loop runs other tasks, until the log shows `until` (1 s at most)."""
    for _ in range(200):
        if until in log:
            return
        await asyncio.sleep(0.005)


# %% [markdown]
# ## Predict: does `break` run an async generator's `finally`?
#
# Two consumers `break` out of `async for` after two lines. `held` keeps the generator in a
# variable, `stream`; `dropped` writes the common `async for line in stream_lines(...)`, so
# nothing refers to the generator after its loop. The cell prints the last entry of each log
# right after the loops, and again after letting the event loop turn for a while
# (`let_the_loop_turn`, folded above). What are the four entries: `connection opened`, or
# `connection closed`?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
held_log: list[str] = []
stream = stream_lines("held", held_log)
async for line in stream:
    if line.endswith("2"):
        break

dropped_log: list[str] = []
async for line in stream_lines("dropped", dropped_log):
    if line.endswith("2"):
        break

at_break = {"held": list(held_log), "dropped": list(dropped_log)}
await let_the_loop_turn(dropped_log, until="dropped: connection closed")
later = {"held": list(held_log), "dropped": list(dropped_log)}
print(f"{'consumer':<9} {'right after break':<28} after the loop turned")
for name in ("held", "dropped"):
    print(f"{name:<9} {at_break[name][-1]:<28} {later[name][-1]}")

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
suspended = stream.ag_frame is not None and not stream.ag_running
print("held generator suspended at its yield:", suspended)
assert at_break == {"held": ["held: connection opened"], "dropped": ["dropped: connection opened"]}
assert later["held"] == ["held: connection opened"] and suspended, "held stays paused at yield"
assert later["dropped"][-1] == "dropped: connection closed", "the loop's finalizer closed it, later"
print("✓ break closed neither; the loop closed the dropped one later; the held one is still open")

# %% [markdown]
# :::{dropdown} Why
#
# `break` leaves the *loop*; it says nothing to the generator, which stays paused at its
# `yield`, connection open. The `held` one stays that way for as long as something refers to
# it.
#
# Nothing refers to the `dropped` one once its loop ends, so it is dropped. In CPython a
# dropped plain generator is closed on the spot (reference counting frees it at once, unless
# it sits in a reference cycle), but an async generator's `finally` may need to `await`, and
# nothing can await in the middle of garbage collection. So the loop installs a *finalizer
# hook* (`sys.set_asyncgen_hooks`), which schedules `aclose()` as a new task on the loop. So
# its connection is still open right after the `break`; the cleanup runs some loop iterations later, in another task,
# where an exception in it can only be logged.
#
# :::
#
# `aclose()` is how you ask a generator you still hold to finish: it raises `GeneratorExit` at
# the paused `yield`, so the `finally` runs, and it can still `await`. The held one, closed by
# hand:

# %%
await stream.aclose()
print(held_log)

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert held_log == ["held: connection opened", "held: closing", "held: connection closed"]
print("✓ aclose() ran the held generator's finally, its await included")

# %% [markdown]
# `contextlib.aclosing(agen)` puts a generator in an `async with` block:
# `async with aclosing(agen) as lines:`. The cell below marks each
# step on a timeline, the generator's own log entries too, each at the moment it is written, and
# prints the marks in order; after the loop, one more statement in the block marks itself. Where
# does the generator's `finally` run now: (a) at the `break`, before the block's last
# statement; (b) when the block ends, after its last statement and before the statement after
# the `async with`; or (c) later, after that statement?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
tl = Timeline()


class MarkedLog(list):
    """A log that also marks each entry on the timeline, as the generator writes it."""

    def append(self, entry: str) -> None:
        tl.mark(entry)
        super().append(entry)


closing_log = MarkedLog()
async with aclosing(stream_lines("scoped", closing_log)) as lines:
    async for line in lines:
        tl.mark(f"got {line}")
        if line.endswith("2"):
            tl.mark("consumer breaks")
            break
    tl.mark("last statement in the block")
tl.mark("statement after the async with")

for event in tl.names():
    print(event)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: aclosing-closes-at-the-block-end
assert closing_log == ["scoped: connection opened", "scoped: closing", "scoped: connection closed"]
assert tl.order("consumer breaks", "last statement in the block", "scoped: closing",
                "scoped: connection closed", "statement after the async with")
print("✓ aclosing closed the generator at the end of the block, before the next statement")

# %% [markdown]
# :::{dropdown} Why
#
# `aclosing(agen)` is an {term}`async context manager` whose exit awaits `agen.aclose()`.
# Look at where the generator's `closing` and `connection closed` sit: after the block's last
# statement and before the statement after the `async with`, so (b). The `break` only left the
# loop; the exit of `aclosing` awaited `aclose()`, so the generator's `finally` ran, its own
# `await` included, at the end of the block. This holds on every way out of the block.
#
# :::
#
# ## A time guard around a stream: what unwinds first?
#
# Below, a generator that would stream 100 lines runs under a 0.03 s guard, inside `aclosing`,
# in the task running the cell. The cell prints the last three entries of the log. Predict
# the order of the three entries: the generator's `closing` and `connection closed`, and the
# guard's `TimeoutError` caught by the cell. Does the generator close before the guard raises,
# or after?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
guard_log: list[str] = []
try:
    async with asyncio.timeout(0.03):
        async with aclosing(stream_lines("guarded", guard_log, lines=100)) as lines:
            async for _line in lines:
                pass
except Exception as exc:  # whatever the guard let out, by its type
    guard_log.append(f"guard: {type(exc).__name__}")
print(guard_log[-3:])

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert guard_log[-3:] == ["guarded: closing", "guarded: connection closed", "guard: TimeoutError"]
assert asyncio.current_task().cancelling() == 0
print("✓ the timeout closed the generator first, then raised TimeoutError; nothing left cancelling")

# %% [markdown]
# :::{dropdown} Why
#
# Nested `async with` blocks unwind from the inside out: each one inside the guard sees
# `CancelledError`, so `aclosing` closed the generator first (`closing`, then `connection
# closed`), and only then did the guard's own `__aexit__` run, turn the cancellation into
# `TimeoutError`. `sb1` above ended this way.
#
# :::
#
# :::{dropdown} Going further: what the guard leaves in `cancelling()`
#
# A task that catches a guard's `TimeoutError` often goes on running: it retries, or takes
# the next sample. Code in it that asks "is my task on its way out?" calls
# `asyncio.current_task().cancelling()`, which counts the `cancel()` requests made to the task
# and not yet taken back by `uncancel()` (chapter 05): 0 means "not being cancelled". In
# chapter 05, catching a `CancelledError` left the count at 1. A guard does not: when
# `asyncio.timeout` exits, it recognises the cancellation it caused, turns it into
# `TimeoutError`, and calls `task.uncancel()` itself. The count, printed by the folded cell
# below, is 0, so a retry loop written as `while not asyncio.current_task().cancelling():`
# goes on after a caught `TimeoutError`.
#
# :::

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show cancelling() after the guard (Going further)"}
print("cancelling() of the task that caught the guard's TimeoutError:",
      asyncio.current_task().cancelling())

# %% [markdown]
# ## Before the exercise
#
# The exercise below needs one more fact about cancellation, which this short cell shows.
# `CancelledError` is a `BaseException`, not an `Exception`, so an `except Exception` does not
# catch a cancellation.

# %%
try:
    raise asyncio.CancelledError
except Exception:
    print("caught by except Exception")
except BaseException as exc:
    print(f"{type(exc).__name__} passed except Exception; except BaseException got it")

# %% [markdown]
# ## Exercise 10.1 · A bounded, retrying, always-released boot
#
# Implement `booted(factory, permits, attempts)` as an async context manager (use
# `@asynccontextmanager`). It must:
#
# 1. try at most `attempts` times: `resource = factory()`, then `await resource.boot()`
#    holding one permit of `permits` **only while `boot()` runs**;
# 2. unlike `sandbox()` above, close every candidate whose boot failed: when `boot()` raises an
#    `Exception`, `await resource.close()` and retry at once (no back-off); when every attempt
#    fails, raise the last error;
# 3. when cancelled during `boot()`, close that candidate too (it may be half open), then let
#    the cancellation through;
# 4. yield the booted resource and `await resource.close()` on every way out of the caller's
#    block; the block's own error or cancellation comes out of the `async with`;
# 5. give every permit back on every path, also when cancelled while waiting for one
#    (`async with permits` does this).
#
# :::{dropdown} What the grader checks
#
# Graded, on many generated runs (1 to 4 callers at once sharing `permits`, 1 to 3 permits;
# `attempts` from 1 up; boots that take any time and fail or succeed in any pattern; blocks that
# exit, raise or are cancelled; callers cancelled while they wait for a permit, boot or use the
# resource; a close that takes time):
#
# - **boots**: at most `attempts` per caller; the next one at once after a failure;
# - **permits**: never more boots at once than permits; a permit is held only while `boot()`
#   runs, so a caller's boot starts as soon as a permit is free, whatever the other callers do with
#   their resources;
# - **permits back**: every permit is given back, also when the caller is cancelled while it
#   waits for a permit or boots;
# - **the block** gets the booted, open resource; its own error or cancellation comes out of
#   the `async with`;
# - **every attempt fails**: the last boot error comes out of the `async with`;
# - **closed**: every failed candidate; a candidate whose boot was cancelled; the booted
#   resource, on every way out of the block;
# - **not opened**: a candidate whose `boot()` never started (its caller was cancelled while it
#   waited for a permit) was never opened, so it needs no `close()`;
# - **the end**: the `async with` ends once its `close()` has finished.
#
# `FlakyResource` below is what the tests pass as `factory`; its ledger counts boots in
# flight and what is still open.
#
# :::
#
# :::{dropdown} Hint: the first error you will see
#
# Until you write the body, the tests fail with `'coroutine' object is not an async iterator`:
# without a `yield`, the function is not an async generator yet, so `@asynccontextmanager`
# cannot drive it.
#
# :::
#
# :::{dropdown} Hint: closing a candidate whose boot was cancelled
#
# `sandbox()` above catches only `ConnectionError`, and the chapter cleaned up after a
# cancellation in `finally` blocks and in `__aexit__`. Point 3 needs one more piece: `CancelledError` is a
# `BaseException`, not an `Exception`, so `except Exception` does not see it. To close the
# candidate on a failure *and* on a cancellation, catch `BaseException` around `boot()` and
# await the close; then re-raise it with a bare `raise`, unless it is an `Exception` you will
# retry.
#
# :::

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the helpers"}
class ResourceLedger:
    def __init__(self) -> None:
        self.booting = 0
        self.peak_booting = 0
        self.open = 0
        self.peak_open = 0
        self.closes = 0


class FlakyResource:
    """A resource whose first `fail_first` boots (counted across the factory) raise ConnectionError."""

    # failures: [fail_first], the list flaky_factory (below) shares with every resource it
    # makes; each failed boot counts it down, so the first fail_first boots of all fail
    def __init__(self, ledger: ResourceLedger, failures: list[int], boot_time: float = 0.03) -> None:
        self.ledger, self.failures, self.boot_time = ledger, failures, boot_time
        self.is_open = False

    async def boot(self) -> None:
        self.ledger.booting += 1
        self.ledger.peak_booting = max(self.ledger.peak_booting, self.ledger.booting)
        self.is_open = True
        self.ledger.open += 1
        self.ledger.peak_open = max(self.ledger.peak_open, self.ledger.open)
        try:
            await asyncio.sleep(self.boot_time)
            if self.failures and self.failures[0] > 0:
                self.failures[0] -= 1
                raise ConnectionError("boot failed")
        finally:
            self.ledger.booting -= 1

    async def close(self) -> None:
        if self.is_open:
            self.is_open = False
            self.ledger.open -= 1
        self.ledger.closes += 1


def flaky_factory(ledger: ResourceLedger, fail_first: int = 0, boot_time: float = 0.03):
    failures = [fail_first]
    return lambda: FlakyResource(ledger, failures, boot_time)


# %% tags=["solution", "hide-input"] mystnb={"code_prompt_show": "Show the solution"}
@asynccontextmanager
async def booted(factory, permits: asyncio.Semaphore, attempts: int = 3):
    """Boot a resource from `factory` under one permit of `permits`, retrying up to `attempts` times;
    yield it, and close it on every way out of the caller's block."""
    ### BEGIN SOLUTION
    last_error: Exception | None = None
    resource = None
    for _ in range(attempts):
        candidate = factory()
        async with permits:
            try:
                await candidate.boot()
            except Exception as exc:
                last_error = exc
                await candidate.close()
                continue
            except BaseException:  # cancelled mid-boot: the candidate may be half open
                await candidate.close()
                raise
        resource = candidate
        break
    if resource is None:
        raise last_error
    try:
        yield resource
    finally:
        await resource.close()
    ### END SOLUTION


# %% tags=["tests"]
visible_ledger = ResourceLedger()
visible_permits = asyncio.Semaphore(1)


async def use_once() -> bool:
    factory = flaky_factory(visible_ledger, fail_first=1)
    async with booted(factory, visible_permits) as resource:
        return resource.is_open


visible_open = await asyncio.wait_for(use_once(), timeout=2)
assert visible_open is True, (
    "the block must get a booted, open resource (a failed first boot is retried); "
    f"is_open was {visible_open!r}")
assert visible_ledger.open == 0, "the resource must be closed after the block"
assert not visible_permits.locked(), (
    "the permit must be given back: hold it only while boot() runs")

# %% tags=["tests", "hidden-tests", "remove-cell"]
### BEGIN HIDDEN TESTS
async def _hidden_check_booted():
    # 1. the permit is held only while booting: 6 users, 2 permits; each keeps its resource open
    #    until a third user is in (at most 1 s): with the permit held during use, no third gets in.
    _ledger = ResourceLedger()
    _permits = asyncio.Semaphore(2)
    _factory = flaky_factory(_ledger, fail_first=2, boot_time=0.02)
    _third_in = asyncio.Event()
    _inside = [0]

    async def _user():
        async with booted(_factory, _permits, attempts=4):
            _inside[0] += 1
            if _inside[0] >= 3:
                _third_in.set()
            try:
                async with asyncio.timeout(1.0):
                    await _third_in.wait()
            except TimeoutError:
                pass

    _tasks = [asyncio.create_task(_user()) for _ in range(6)]
    try:
        async with asyncio.timeout(8):
            await asyncio.gather(*_tasks)
    finally:
        for _t in _tasks:
            _t.cancel()
        await asyncio.gather(*_tasks, return_exceptions=True)
    assert _ledger.peak_booting <= 2, (
        f"{_ledger.peak_booting} boots ran at once with 2 permits: hold a permit while boot() runs "
        "(chapter 10)")
    assert _ledger.peak_open >= 3, (
        "the permit must be released once booted, not held during use: with 2 permits no more than "
        "2 resources were ever open at once (chapter 10)")
    assert _ledger.open == 0, (
        f"{_ledger.open} resources still open after every user left: every resource, including "
        "the candidates whose boot failed, must be closed (chapter 10)")
    assert _permits._value == 2, "every permit must be given back"

    # 2. the body raises: closed, and the exception reaches the caller
    _ledger = ResourceLedger()
    _permits = asyncio.Semaphore(1)
    _escaped = None
    try:
        async with booted(flaky_factory(_ledger), _permits):
            raise KeyError("body failed")
    except KeyError as exc:
        _escaped = exc
    assert _escaped is not None, (
        "the body's exception must propagate out of the async with block, not be swallowed "
        "(chapter 10)")
    assert _ledger.open == 0, (
        "the resource must be closed when the body raises: close it in a finally around the "
        "yield (chapter 10)")
    assert _permits._value == 1, "every permit must be given back"

    # 3. cancelled from outside while in use: closed, and the cancellation propagates
    _ledger = ResourceLedger()

    async def _long_user():
        async with booted(flaky_factory(_ledger), _permits):
            _ledger_in_use.set()
            await asyncio.sleep(5)

    _ledger_in_use = asyncio.Event()
    _task = asyncio.create_task(_long_user())
    try:
        async with asyncio.timeout(2):
            await _ledger_in_use.wait()
        _task.cancel()
        await asyncio.wait([_task], timeout=2)
    finally:
        _task.cancel()
        await asyncio.gather(_task, return_exceptions=True)
    assert _task.cancelled(), "the cancellation must propagate to the caller, not be swallowed (chapter 05)"
    assert _ledger.open == 0, (
        "the resource must be closed when the block is cancelled: close it in a finally around the "
        "yield (chapter 10)")
    assert _permits._value == 1, "every permit must be given back"

    # 4. cancelled while booting: the permit comes back, the cancellation propagates
    _ledger = ResourceLedger()
    _permits = asyncio.Semaphore(1)

    async def _early_user():
        async with booted(flaky_factory(_ledger, boot_time=5.0), _permits):
            pass

    _task = asyncio.create_task(_early_user())
    try:
        for _ in range(200):
            if _ledger.booting:
                break
            await asyncio.sleep(0.01)
        assert _ledger.booting == 1, "booted() must call boot() on a candidate"
        _task.cancel()
        await asyncio.wait([_task], timeout=2)
    finally:
        _task.cancel()
        await asyncio.gather(_task, return_exceptions=True)
    assert _permits._value == 1, (
        "a permit was lost when the task was cancelled while booting: hold it with `async with "
        "permits` (or release it in a finally), so that every way out gives it back (chapter 10)")
    assert _task.cancelled(), "the cancellation must propagate to the caller, not be swallowed (chapter 05)"

    # 5. every attempt fails: the last error is raised, nothing is open, exactly `attempts` tries
    _ledger = ResourceLedger()
    _permits = asyncio.Semaphore(1)
    _raised = None
    try:
        async with booted(flaky_factory(_ledger, fail_first=10), _permits, attempts=3):
            raise AssertionError("must not enter the block")
    except ConnectionError as exc:
        _raised = exc
    assert _raised is not None, "when every attempt fails, raise the last boot error (chapter 10)"
    assert _ledger.open == 0, (
        f"{_ledger.open} candidates left open: close every candidate whose boot failed (chapter 10)")
    assert _permits._value == 1, "every permit must be given back"
    assert _ledger.closes == 3, (
        f"{_ledger.closes} candidates closed for attempts=3: try exactly `attempts` times, closing "
        "each failed candidate (chapter 10)")


async with asyncio.timeout(12):
    await _hidden_check_booted()


# Generated scenarios (issue 37): the same scenarios through booted and the reference, on virtual
# time, compared on what the contract names (lab_snippets.scenarios explains the pattern).
import dataclasses as _dc

from hypothesis import strategies as _st

from lab_snippets import scenarios as _sc

_reference = _sc.reference(globals(), "booted")


@_dc.dataclass(frozen=True)
class _User:
    boots: tuple         # (seconds, fails) of this user's n-th boot; later boots take 1 s and succeed
    use: float = 1       # seconds the block keeps the resource
    then: str = "exits"  # "exits", "raises" (a KeyError) or "is cancelled" (its caller cancels it there)
    cancel_at: float | None = None  # or its caller cancels it then, wherever it is (waiting, booting, ...)

    def describe(self, k: int) -> str:
        boots = ", ".join(f"{_sc.fmt(t)} then {'fails' if bad else 'succeeds'}" for t, bad in self.boots)
        return (f"user {k}: boots take {boots + ', later ones 1 s and succeed' if boots else '1 s each and succeed'}"
                f"; its block keeps the resource {_sc.fmt(self.use)} then {self.then}"
                + (f"; its caller cancels it at {_sc.fmt(self.cancel_at)}" if self.cancel_at is not None else ""))


@_dc.dataclass(frozen=True)
class _Scenario:
    permits: int
    attempts: int
    close: float         # seconds a close() takes
    users: tuple         # of _User, all at once, sharing the permits
    callers: int = 1

    def describe(self) -> str:
        return (f"{len(self.users)} user(s) at once, sharing asyncio.Semaphore({self.permits}), each entering "
                f"booted(factory, permits, attempts={self.attempts}); closing a booted resource takes "
                f"{_sc.fmt(self.close)}; "
                + "; ".join(u.describe(k) for k, u in enumerate(self.users)))


@_st.composite
def _scenarios(draw):
    boot = _st.tuples(_st.sampled_from([1, 0, 2]), _st.booleans())
    user = _st.builds(_User, boots=_st.lists(boot, max_size=4).map(tuple), use=_st.sampled_from([1, 0, 3]),
                      then=_st.sampled_from(["exits", "raises", "is cancelled"]),
                      cancel_at=_st.sampled_from([None, None, None, 0.5, 1.5]))
    return _Scenario(permits=draw(_st.integers(1, 3)), attempts=draw(_st.integers(1, 4)),
                     close=draw(_st.sampled_from([0, 0.25, 1])), users=tuple(draw(_st.lists(user, min_size=1, max_size=4))))


class _Resource:
    def __init__(self, user: dict, plan: tuple) -> None:
        self.user, self.plan, self.is_open = user, plan, False

    async def boot(self) -> None:
        loop = asyncio.get_running_loop()
        self.user["boots"].append(loop.time())
        self.is_open = True
        _sc_booting[0] += 1
        _sc_booting[1] = max(_sc_booting[1], _sc_booting[0])
        try:
            await asyncio.sleep(self.plan[0])
            if self.plan[1]:  # each failure says which boot it was: the last one must come out
                raise ConnectionError(f"boot {len(self.user['boots'])} failed")
        finally:
            _sc_booting[0] -= 1

    async def close(self) -> None:
        self.user["closing"] += 1
        try:
            if not self.plan[1]:  # a booted resource takes a while to close (a failed candidate closes at once,
                await asyncio.sleep(self.user["close"])  # so it may be closed with the permit held or not)
            self.is_open = False
        finally:
            self.user["closing"] -= 1


_sc_booting = [0, 0]  # boots in flight now, and at most


def _observe(fn, s: _Scenario) -> list:
    async def one_user(u: _User, permits: asyncio.Semaphore) -> dict:
        loop = asyncio.get_running_loop()
        seen = {"boots": [], "close": s.close, "made": [], "inside": None, "closing": 0, "closing_at_end": 0}

        def factory():
            n = len(seen["made"])
            resource = _Resource(seen, u.boots[n] if n < len(u.boots) else (1, False))
            seen["made"].append(resource)
            return resource

        async def use():
            try:
                async with fn(factory, permits, s.attempts) as resource:
                    seen["inside"] = (loop.time(), resource is seen["made"][-1] and resource.is_open)
                    await asyncio.sleep(u.use)
                    if u.then == "raises":
                        raise KeyError("the block failed")
                    if u.then == "is cancelled":
                        asyncio.current_task().cancel()
                        await asyncio.sleep(0)
            except ConnectionError as exc:
                seen["error"] = str(exc)
                raise
            finally:  # close() calls still running as the async with ends (a shielded close outlives it)
                seen["closing_at_end"] = seen["closing"]
            return "exited"

        out = await _sc.call_once(use, _sc.Recorder(), u.cancel_at)
        return {**out, "boots": seen["boots"], "inside": seen["inside"], "error": seen.get("error"),
                "open": sum(r.is_open for r in seen["made"]), "closing_at_end": seen["closing_at_end"]}

    async def main():
        _sc_booting[:] = [0, 0]
        permits = asyncio.Semaphore(s.permits)
        seen = await asyncio.gather(*(one_user(u, permits) for u in s.users))
        return [{**x, "peak_booting": _sc_booting[1], "permits_back": permits._value} for x in seen]

    run = _sc.run_virtual(main, limit=300)
    return run.value if run.value is not None else [{"kind": f"failed: {run.error!r}"}] * len(s.users)


def _compare(mine: list, ref: list, s: _Scenario) -> str | None:
    for k, (me, it) in enumerate(zip(mine, ref, strict=True)):
        who = f"user {k}: " if len(s.users) > 1 else ""
        if me["kind"] != it["kind"]:
            return (f"{who}the async with ended with {me['kind']!r}, expected {it['kind']!r}: a failed boot is "
                    "retried up to `attempts` times, then the last error comes out; the block's own error or "
                    "cancellation goes through")
        if me.get("error") != it.get("error"):
            return (f"{who}the async with raised ConnectionError({me.get('error')!r}), expected "
                    f"ConnectionError({it.get('error')!r}): when every attempt fails, the last boot error comes out")
        if me.get("peak_booting", 0) > s.permits:
            return f"{me['peak_booting']} boots ran at once with {s.permits} permits: hold a permit while boot() runs"
        if me["permits_back"] != s.permits:
            return f"only {me['permits_back']} of {s.permits} permits were given back"
        if me["closing_at_end"]:
            return (f"{who}the `async with` ends once its `close()` has finished: {me['closing_at_end']} close() "
                    f"still running when it ended ({me['kind']}); a shielded close the caller does not wait for "
                    "outlives the block")
        if s.users[k].cancel_at is not None:  # cancelled wherever it was, while it waited, booted or used
            if me["open"] > it["open"]:
                return (f"{who}{me['open']} resource(s) still open after the cancelled async with ended: close "
                        "a candidate whose boot was cancelled, and the booted resource on every way out")
            continue
        if me["boots"] != it["boots"]:
            return (f"{who}boots started at {[_sc.fmt(t) for t in me['boots']]}, expected at "
                    f"{[_sc.fmt(t) for t in it['boots']]}: try at most `attempts` times, at once after a failure, "
                    "and hold the permit only while boot() runs (not while the block uses the resource)")
        if me["inside"] != it["inside"]:
            return (f"{who}the block got {me['inside']!r} (time, a booted open resource), expected {it['inside']!r}")
        if me["open"]:
            return (f"{who}{me['open']} resource(s) still open after the async with ended ({me['kind']}): close "
                    "every failed candidate, and the booted one on every way out of the block")
        if me["at"] != it["at"]:
            return (f"{who}the async with ended at {_sc.fmt(me['at'])}, expected {_sc.fmt(it['at'])}: close the "
                    "resource (and wait for close()) when the block ends, then return")
    return None


_sc.differential(booted, _reference, _scenarios(), _observe, _compare, what="booted", examples=50,
                 hint="chapter 10")
### END HIDDEN TESTS

# %% [markdown]
# ## Summary
#
# - `async with` awaits `__aenter__`, runs the body, then awaits `__aexit__` with whatever
#   ended the body (nothing, an exception, or `CancelledError`) before the caller hears of it.
# - `@asynccontextmanager` makes the code before `yield` the enter half and a `finally` around
#   the `yield` the exit half; put the permit, the retries and the back-off in the enter half,
#   and hold the permit only as long as the scarce step needs it.
# - An async generator's `finally` does not run at `break`: it runs at `aclose()`, or later in
#   a task the loop's finalizer starts. Use `contextlib.aclosing` to close it at a known point.
#
# **What's next.** Chapter 11 looks at a different kind of "current" state that travels with
# each task: context variables.
#
# ## In slime
#
# slime uses both halves of this chapter on the two things a rollout holds the longest: a remote
# sandbox for each coding-agent task, and a streamed HTTP response for each generated sample.
# Both are given back on the way out of a block, however the block is left; each caption below
# says what that release does not cover, and what it would cost if it came late. Every such
# site is listed in the [source inventory](../book/reference/inventory.md).
#
# **The sandbox.** The coding-agent example boots each task's sandbox in E2B, a hosted service
# that runs sandboxes, with a retry loop shaped like this chapter's `sandbox()`.

# %% tags=["remove-input"]
from lab_snippets.sites import show_call_site

show_call_site("10")

# %% [markdown]
# **The stream.** The second quote reads a generated sample line by line as it streams in from
# SGLang, the server that generates the text. One thing to see in it: the `async with` around
# the response, not the `async for` over its lines, is what closes the response, however the
# loop is left. The fold below the quote names the libraries involved and what an early exit
# costs.

# %% tags=["remove-input"]
show_call_site("10b")

# %% [markdown]
# :::{dropdown} An early exit in detail: the pool, and the generator left behind
#
# SGLang sends its answer as SSE (server-sent events): the response arrives bit by bit, as a
# stream of lines. slime reads it with httpx, an HTTP client library; the pool of connections
# under httpx is another library, httpcore. A connection pool keeps connections open for the
# next request, so that a request need not open a new one. A stream read to the end has
# exhausted the generator and returns its connection to the pool. When the loop leaves early,
# the response is closed with its body not read to the end, and httpcore (1.0.9) then closes
# the connection instead of returning it: a later request opens a new one.
# What an early exit also leaves behind is the `aiter_lines()` generator, suspended like the
# chapter's `dropped` generator: the loop's finalizer hook closes it some turns later, in
# another task, where an error while closing is logged, not raised. `contextlib.aclosing`
# around `aiter_lines()` would close it at the block end too.
#
# :::

# %% [markdown]
# What does the `finally` around `yield sb`, in the first quote, save? A sandbox nobody kills
# stays alive in E2B for up to an hour (slime's default lifetime, 3600 s), however soon its run ended. A model of
# the quoted shape, run two ways: `agent_sandbox` kills its `FakeSandbox` in a `finally`, as the
# quote does, and `agent_sandbox_no_finally` has the same kill written after the `yield`. Six
# agent runs go through each, each one inside a guard of 0.1 s, as slime's `generate` wraps
# the sandbox in `asyncio.timeout(rollout_guard_sec)`: three finish, two crash, one outlives
# its guard. Predict how many of the six sandboxes each version leaves alive.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show FakeSandbox, which records the sandboxes alive"}
class FakeSandbox:
    """Stands in for slime's E2BSandbox: alive from its enter until its exit kills it."""

    alive: set[str] = set()

    def __init__(self, name: str) -> None:
        self.name = name

    async def __aenter__(self) -> "FakeSandbox":
        await asyncio.sleep(0.001)
        FakeSandbox.alive.add(self.name)
        return self

    async def __aexit__(self, exc_type, exc, tb) -> None:
        await asyncio.sleep(0.001)  # the kill is a network call
        FakeSandbox.alive.discard(self.name)


# %%
@asynccontextmanager
async def agent_sandbox(name: str):
    sb = FakeSandbox(name)
    await sb.__aenter__()
    try:
        yield sb
    finally:
        await sb.__aexit__(None, None, None)


@asynccontextmanager
async def agent_sandbox_no_finally(name: str):
    sb = FakeSandbox(name)
    await sb.__aenter__()
    yield sb
    await sb.__aexit__(None, None, None)  # runs only when the block ended normally


async def agent_run(boot, name: str, ends: str) -> str:
    async with asyncio.timeout(0.1):  # the rollout guard
        async with boot(name):
            await asyncio.sleep(0.5 if ends == "outlives its guard" else 0.01)
            if ends == "crashes":
                raise RuntimeError("the agent crashed")
    return "ok"


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
runs = ["finishes"] * 3 + ["crashes"] * 2 + ["outlives its guard"]
left_alive = {}
for boot in (agent_sandbox_no_finally, agent_sandbox):
    FakeSandbox.alive.clear()
    results = await asyncio.gather(
        *(agent_run(boot, f"run{i}", ends) for i, ends in enumerate(runs)),
        return_exceptions=True,
    )
    left_alive[boot.__name__] = sorted(FakeSandbox.alive)
    alive = len(FakeSandbox.alive)
    print(f"{boot.__name__:<25} sandboxes still alive: {alive} of {len(runs)}")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: the-finally-kills-every-sandbox
kinds = sorted(type(r).__name__ for r in results if isinstance(r, BaseException))
assert kinds == ["RuntimeError", "RuntimeError", "TimeoutError"], kinds
assert left_alive["agent_sandbox_no_finally"] == ["run3", "run4", "run5"], left_alive
assert left_alive["agent_sandbox"] == [], f"sandboxes left alive: {left_alive['agent_sandbox']}"
FakeSandbox.alive.clear()  # the model's leftovers are names in a set, nothing runs
print("✓ without the finally the three failed runs' sandboxes stayed alive; with it, none")

# %% [markdown]
# :::{dropdown} Why
#
# The crash and the guard's cancellation both reach the generator at its `yield`. With the
# `finally`, the kill is awaited before the exception goes on (the first section's order), so
# each of the six sandboxes was killed. Without it, the exception leaves the generator at the `yield`
# and the line after it never runs: the three runs that failed (`run3`, `run4` crashed, `run5`
# outlived its guard) left their sandboxes alive, and in E2B each would stay alive for up to
# an hour. The lifetime is `SLIME_AGENT_SANDBOX_LIFETIME_SEC`, 3600 s by default, in
# `slime/agent/sandbox.py`.
#
# :::

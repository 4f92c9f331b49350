# %% [markdown]
# # 01 · async def: after defining it, when does it run?
# *async def：定义之后，什么时候执行？*
#
# **The question.** You write `async def score(sample): ...` and then call `score(s)`.
# Which lines of the body have run when that call returns, and what makes the rest run?
#
# **You will**
# 1. tell apart three moments of one `async def`: defining it, calling it, and running its
#    body;
# 2. find out by experiment which lines of the body a call runs, and what makes the rest run;
# 3. see what becomes of a coroutine object that nothing ever drives;
# 4. check each of the three with `inspect`.
#
# Halfway down, three coroutine objects are created together and one is wrapped in a Task
# before the others are awaited. Which body starts first is the chapter's real surprise:
# keep your guess for it.
#
# **Needs** basic Python functions · about 60 minutes
#
# **New to the course?** [How to read an experiment](../book/reading_guide.md) explains the
# timelines, the helpers and the folded checks; the [glossary](../book/glossary.md) gives the
# words the chapters share. The first cell, folded, imports what the page uses; its
# `figure_style()` only sets how the plots look.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the setup"}
import asyncio
import gc
import inspect
import sys
import warnings

from lab_snippets.timeline import Timeline, figure_style

figure_style()

# %% [markdown]
# ## Defining and calling an `async def`
#
# A plain `def` has two moments: you define it, and each call runs the body. Defining an
# `async def` makes a {term}`coroutine function`. Does calling it run the body, as a plain call
# does?
#
# The experiments below use one small coroutine function. It writes to a log when its body
# starts and when it ends, so the log tells us exactly which lines have run.

# %%
async def score_sample(sample_id: int, log: list[str]) -> float:
    log.append(f"body of {sample_id} started")
    await asyncio.sleep(0.01)
    log.append(f"body of {sample_id} finished")
    return sample_id / 10


print(type(score_sample).__name__, inspect.iscoroutinefunction(score_sample))

# %% [markdown]
# ## Predict: what has the call `score_sample(1, log)` run?
#
# The cell above printed `function True`: defining `score_sample` gave an ordinary function
# object, which `inspect` recognises as a coroutine function. The next cell calls
# `score_sample(1, log)`. Before you run it, write down what `log` holds right after the call,
# and what the call returns.

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
log: list[str] = []
returned = score_sample(1, log)

print("the call returned:", type(returned).__name__)
print("log after the call:", log)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: calling-runs-nothing
assert log == [], "calling a coroutine function must not run any of its body"
assert inspect.iscoroutine(returned), f"the call must return a coroutine object, not {returned!r}"
state = inspect.getcoroutinestate(returned)
assert state == inspect.CORO_CREATED, f"the coroutine must not have started; it is {state}"
print(f"✓ the call ran none of the body: the log is empty and the coroutine is {state}")

# %% [markdown]
# :::{dropdown} Why
#
# Look at the type on the first line, then at the log: together they say what a call of an
# `async def` function does. It builds an object that *holds* the body and its arguments,
# ready to start. So an `async def` has three moments, not two. Defining it makes a
# coroutine function. Calling that function makes a {term}`coroutine object` and returns at
# once. The **body** runs only when something drives the object: an `await` in another
# coroutine, or a {term}`Task <task>` that the {term}`event loop` runs.
#
# :::
#
# Now drive it with `await` in the cell below. A notebook cell already runs inside an event
# loop, so it may use `await` at its top level; in a script the same line goes inside an
# `async def` that `asyncio.run` starts.

# %%
result = await returned

print("await gave:", result)
print("log after await:", log)
print("state:", inspect.getcoroutinestate(returned))

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert log == ["body of 1 started", "body of 1 finished"]
assert result == 0.1
assert inspect.getcoroutinestate(returned) == inspect.CORO_CLOSED
print("✓ the await ran the whole body once and gave its return value")

# %% [markdown]
# The body ran from its first line to its `return`, and the value of the `await` expression is
# the return value. `returned` has now run to its end. What happens if you await it a second time: does the body
# run again, do you get `0.1` again, or something else? Predict, then open the answer.

# %% tags=["raises-exception", "hide-output"] mystnb={"code_prompt_show": "Show the answer"}
await returned

# %% [markdown]
# :::{dropdown} Why
#
# A coroutine object is a single run, not a reusable function: once its body has finished,
# there is nothing left in it to resume, so a second `await` raises the `RuntimeError` the
# answer shows instead of running the body or giving `0.1` again. To run the body again, call
# `score_sample` again.
#
# :::

# %% [markdown]
# ## What becomes of a coroutine object nobody awaits?
#
# The cell below calls `score_sample(2, forgotten_log)` and keeps no reference to the object
# it returns, then prints the log and what Python's warnings module recorded meanwhile (an
# empty list if nothing). Predict both: does any of the body run, and is the list empty?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
forgotten_log: list[str] = []
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    score_sample(2, forgotten_log)  # called, and the object it returns dropped
    gc.collect()

messages = [f"{w.category.__name__}: {w.message}" for w in caught]
print("log:", forgotten_log)
print("warnings:", messages)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: forgotten-coroutine-warns
# the warning's source is the coroutine object that was dropped unawaited
unawaited = [w.source.__qualname__ for w in caught
             if issubclass(w.category, RuntimeWarning)
             and inspect.iscoroutine(w.source)]
assert "score_sample" in unawaited, (
    f"dropping a coroutine object unawaited must warn 'was never awaited'; warnings: {messages}")
assert forgotten_log == [], "the forgotten body never ran"
print("✓ the body never ran, and Python warned that the coroutine was never awaited")

# %% [markdown]
# :::{dropdown} Why
#
# A body runs only when something drives its object, and nothing drove this one: the log
# stays empty. With no reference kept, the object is destroyed: in CPython as soon as its last
# reference goes, with no garbage collector needed (the cell runs `gc.collect()` for Pythons
# that reclaim objects later). When a coroutine object is destroyed, Python checks whether its
# body ever started; the warnings line of the answer is what that check said. Such a warning is how you find
# a forgotten `await`, and in a large codebase it is often the only sign of one.
#
# :::

# %% [markdown]
# ## A Task: does the body start now?
#
# `asyncio.create_task(coro)` hands the object to the event loop and returns a Task. The cell
# below reads the log that `score_sample` writes twice: right after `create_task`, and after
# the caller's first `await asyncio.sleep(0)`. Predict what each read holds.

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
task_log: list[str] = []
task = asyncio.create_task(score_sample(3, task_log))
at_creation = list(task_log)
await asyncio.sleep(0)
after_sleep_0 = list(task_log)
value = await task

print("right after create_task:", at_creation)
print("after the caller's first await:", after_sleep_0)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: task-starts-at-next-suspension
assert at_creation == [], f"create_task must not run the body; the log held {at_creation}"
assert after_sleep_0 == ["body of 3 started"], (
    f"the body starts at the caller's first suspension; the log held {after_sleep_0}")
assert value == 0.3
print("✓ the Task's body started only when the caller suspended")

# %% [markdown]
# :::{dropdown} Why
#
# `create_task` only puts the body's first step in the loop's queue; the loop runs it the next
# time the current code suspends, here at `await asyncio.sleep(0)`. So, as with the plain call,
# creating runs none of the body; unlike the plain call's object, a Task's body then starts
# without anyone awaiting it.
#
# :::

# %% [markdown]
# ## Measure: three coroutine objects created together, which body starts when?
#
# The cell below creates three coroutine objects at once from `timed_body` (folded just above
# the cell: a little work of its own, then a sleep). The caller then does 0.05 s of busy work,
# a loop in plain Python with no `await`, and drives each object its own way:
#
# - `first`: awaited at once, before the busy work. It is the plain case to compare with.
# - `as_task`: wrapped in a Task right before the busy work.
# - `awaited_late`: awaited after the busy work.
#
# `Timeline` is the course's stopwatch (the [reading guide](../book/reading_guide.md) shows its
# charts): each `with tl.span(...)` block becomes one bar of the figure.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show timed_body and the plotting code"}
async def timed_body(name: str) -> None:
    with tl.span(name, state="blocked"):  # the body's own work: it holds the loop
        until = tl.now() + 0.005
        while tl.now() < until:
            pass  # the same spin as the caller's busy work, for 0.005 s
    with tl.span(name, state="waiting"):  # suspended in its await
        await asyncio.sleep(0.04)


def draw_three_bodies() -> None:
    tl.plot("Three coroutine objects created together: when does each body run?",
            lanes=["first", "caller's busy work", "awaited_late", "as_task"],
            meanings={"waiting": "suspended in await", "blocked": "holding the loop"})


# %%
tl = Timeline()  # the stopwatch: tl.span(...) bars, tl.mark(...) moments
first = timed_body("first")  # timed_body, folded: spins 0.005 s, then sleeps
awaited_late = timed_body("awaited_late")
as_task = timed_body("as_task")
tl.mark("all three created")

await first
task = asyncio.create_task(as_task)
with tl.span("caller's busy work", state="blocked"):
    busy_until = tl.now() + 0.05
    while tl.now() < busy_until:
        pass  # spins in plain code, with no await
await awaited_late
await task

# %% [markdown]
# Predict, knowing from the last section that a Task's body waits for the loop's next turn:
# does either body start during the busy work, and which starts first, `awaited_late` or
# `as_task`? The answer lists the moments of the run in the order they happened, then draws
# the run.

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the answer"}
bodies = ("first", "awaited_late", "as_task")
starts = {label: tl.spans_of(label)[0].start for label in bodies}
blocked = tl.spans_of("caller's busy work")[0]
moments = {"first's body starts": starts["first"],  # a tie keeps this order
           "the busy work starts": blocked.start, "the busy work ends": blocked.end,
           "awaited_late's body starts": starts["awaited_late"],
           "awaited_late suspends in its sleep": tl.spans_of("awaited_late")[1].start,
           "as_task's body starts": starts["as_task"]}
for n, moment in enumerate(sorted(moments, key=moments.get), start=1):
    print(n, moment)  # the moments in the order they happened
draw_three_bodies()  # folded: the plotting code

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: task-waits-while-caller-blocks
assert starts["first"] < blocked.start
assert starts["as_task"] >= blocked.end, "a Task cannot start while the caller blocks the loop"
assert starts["awaited_late"] >= blocked.end
assert starts["awaited_late"] < starts["as_task"]
print("✓ both bodies started after the caller's busy work ended, `awaited_late` first")

# %% [markdown]
# :::{dropdown} Why
#
# `await` on a coroutine object does not hand the body to the loop. It runs the body at
# once, in the caller, like a function call, until the body reaches a real wait: an await
# that actually suspends, here its `asyncio.sleep`. Only there does the loop get a turn. That
# is why the Task, created before `awaited_late` was awaited, started after `awaited_late`,
# and why neither started during the busy work.
#
# The busy work has no `await`, so it gave the loop no turn. Then
# `await awaited_late` ran that body in the caller, as a call would, so the loop got its first
# turn only when `awaited_late`'s body suspended in its sleep. That turn is when the Task's
# body started: it waited until the caller's busy work was over, and then until
# `awaited_late` suspended. Chapter 02 tests which awaits count as a real wait.
#
# In the figure, red marks code that holds the loop: the caller's busy work, and each body's
# 0.005 s of work before its sleep, which is there so that the body's start shows as a bar.
# If your figure shows a gap of a few milliseconds between `awaited_late` turning green and
# `as_task` starting, that is time the machine or the kernel spent on other work: the rule
# fixes the order of the moments, not that gap.
#
# :::

# %% [markdown]
# ## What do `inspect`'s three checks say about each?
#
# `inspect` has three questions: `iscoroutinefunction`, `iscoroutine` and `isawaitable` (can
# `await` take this thing?). The cell below asks each of them about the function
# `score_sample`, the object `score_sample(4, [])` and a Task, and prints one row of three
# answers per thing. Predict the nine answers, in particular which of them a Task passes.

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
obj = score_sample(4, [])
task = asyncio.create_task(asyncio.sleep(0))
checks = (inspect.iscoroutinefunction, inspect.iscoroutine, inspect.isawaitable)
rows = {name: tuple(check(held) for check in checks)
        for name, held in (("function", score_sample), ("object", obj), ("task", task))}
for name, flags in rows.items():
    print(f"{name:<9}", flags)
obj.close()  # only inspected: closing it on purpose means no 'never awaited' warning
await task

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert rows == {"function": (True, False, False), "object": (False, True, True),
                "task": (False, False, True)}
print("✓ the table above holds")

# %% [markdown]
# :::{dropdown} Why
#
# Each check asks about a different thing: `iscoroutinefunction` about the function that
# `async def` defines, `iscoroutine` about the object a call returns, and `isawaitable` about
# anything `await` accepts. Read the task row of the answer against the object row: `await`
# accepts any awaitable, and a coroutine object is only one kind of awaitable. Chapter 21
# returns to these checks and to the cases where they disagree with what a call really
# returns. For example, a plain `def` that returns `score_sample(4, [])` fails
# `iscoroutinefunction`, yet its call gives you a coroutine object to await.
#
# :::

# %% [markdown]
# :::{dropdown} Python versions
#
# **Eager tasks (3.12 and later).** Since Python 3.12 a loop can use
# `asyncio.eager_task_factory`. With it, `create_task` runs
# the body at once, up to its first real suspension, before returning. That changes the
# answer of the Task experiment above. On 3.12 and later, the folded cell below prints the log
# right after such a `create_task`; on 3.11 it cannot run the experiment and says why.
#
# :::

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the experiment"}
if sys.version_info >= (3, 12):
    loop = asyncio.get_running_loop()
    previous_factory = loop.get_task_factory()
    eager_log: list[str] = []
    loop.set_task_factory(asyncio.eager_task_factory)
    try:
        eager = asyncio.create_task(score_sample(5, eager_log))
        seen_at_creation = list(eager_log)
    finally:
        loop.set_task_factory(previous_factory)
    await eager
    print("log right after create_task with eager tasks:", seen_at_creation)
    assert seen_at_creation == ["body of 5 started"]
else:
    print(f"This is Python {sys.version_info.major}.{sys.version_info.minor}: asyncio has no",
          "eager_task_factory before 3.12, so this cell cannot show an eager create_task here;",
          "on 3.12 and later it prints the log with the body's first line already in it.")

# %% [markdown]
# ## Before the exercise
#
# Exercise 1.1 asks your code to tidy up after itself however an `await` ends: with a value,
# with a body's error, or with a cancel of the Task it runs in. Two pieces are new: closing a
# coroutine object you will not await, and how an `await` ends early. Cancelling is chapter
# 05's subject; the exercise needs only the one fact this section shows.
#
# ### Closing an object you will not await
#
# A coroutine object you decide not to await can be closed: `close()` marks it finished
# without running its body, so it does not warn "was never awaited" when it is destroyed.
# The cell below closes one and reads its state with `inspect.getcoroutinestate`. Then it
# closes `returned`, the object awaited to its end at the top of the page: closing a finished
# object does nothing, so you may close every object without tracking which ones ran.

# %%
closed_log: list[str] = []
with warnings.catch_warnings(record=True) as caught_after_close:
    warnings.simplefilter("always")
    unused = score_sample(6, closed_log)
    unused.close()
    print(inspect.getcoroutinestate(unused), "| log:", closed_log)
    del unused
    gc.collect()
print("warnings:", [str(w.message) for w in caught_after_close])
returned.close()  # finished already: nothing happens
print("the finished object after close():", inspect.getcoroutinestate(returned))

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert closed_log == [] and caught_after_close == [], (closed_log, caught_after_close)
print("✓ the closed object never ran its body and did not warn")

# %% [markdown]
# ### How does an await end early: by an error, or by a cancel?
#
# An `await` can end without a value in two ways. The body raises, or the Task running the
# caller is cancelled: `task.cancel()` asks a Task to stop (chapter 05 is about it), and the
# stop arrives as a `CancelledError` raised at the `await` in progress. The cell below runs
# one of each in a Task, each awaiting its body inside `try`/`finally`. Then it awaits each
# Task in a `try` of its own: awaiting a Task hands you what the Task ended with, its error or
# the `CancelledError`. It prints the log and how each Task ended.

# %%
async def failing_body(log: list[str]) -> None:
    log.append("body started")
    await asyncio.sleep(0.01)
    raise ValueError("bad sample")


async def await_then_tidy(body, log: list[str]) -> None:
    try:
        await body
    finally:
        log.append("finally ran")


# %%
error_log: list[str] = []
cancel_log: list[str] = []
raised = asyncio.create_task(await_then_tidy(failing_body(error_log), error_log))
stopped = asyncio.create_task(await_then_tidy(score_sample(7, cancel_log), cancel_log))
await asyncio.sleep(0)  # both bodies start, and suspend in their sleeps
stopped.cancel()

try:
    await raised
except ValueError as body_error:
    print(f"error_log:  {error_log}  · the Task raised {body_error!r}")
try:
    await stopped
except asyncio.CancelledError:
    print(f"cancel_log: {cancel_log}  · the Task ended cancelled")

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert error_log == ["body started", "finally ran"], error_log
assert cancel_log == ["body of 7 started", "finally ran"], cancel_log
assert stopped.cancelled() and isinstance(raised.exception(), ValueError)
print("✓ both endings ran the finally, and the exception went on to the Task")

# %% [markdown]
# The error and the cancel take the same path: the `finally` runs, then the exception goes on
# out, and the Task ends with it (cancelled, or holding the error). Neither body reached its
# last line. One `try`/`finally` around the awaits covers both endings, and that is all the
# exercise needs to know about cancelling.

# %% [markdown]
# ## Exercise 1.1 · Create now, run later
#
# A coroutine object can be made long before it runs. Implement `run_in_reverse(job_ids, log)`:
#
# 1. first create one coroutine object `record_job(job_id, log)` for **every** id, in the
#    given order (a repeated id once per occurrence), without running any of them;
# 2. then await them one by one in **reverse** order, one ending before the next starts;
# 3. return their results in the order they were awaited;
# 4. if a body raises, or the caller cancels `run_in_reverse` (a cancel arrives at the
#    `await` as an exception), let that exception out and start no later body;
# 5. either way, close the objects you did not await before returning, so none of them warns
#    "was never awaited" (closing a finished one does nothing).
#
# Several calls may run at once, each with its own `log`; local variables keep them apart.
#
# :::{dropdown} Hint: an error and a cancel alike
#
# The grader runs `run_in_reverse` inside a Task and, in some runs, calls that Task's
# `cancel()` part-way through. As "Before the exercise" above showed, one `try`/`finally`
# around the awaits covers a body's error and a cancel alike: let the exception go on to the
# caller, and let the `finally` close the objects not yet awaited. "Several calls at once"
# means several such Tasks running together, each with its own `log`: keep what a call
# creates in its own local variables, and they cannot disturb each other.
#
# :::
#
# :::{dropdown} What the grader checks
#
# Graded, on many generated runs (no ids, one, several; ids in any order, negative ones, the
# same id more than once; bodies that take time and bodies that raise):
#
# - **objects**: one coroutine object per id, a repeated id once per occurrence, all created
#   in the given order before any body runs;
# - **bodies**: each starts only when it is awaited, after the previous one has ended, last
#   id first;
# - **results**: in the order they were awaited;
# - **errors**: a body's error comes out of `run_in_reverse` (no later body runs);
# - **cancellation**: when the caller cancels `run_in_reverse`, it ends cancelled and no later
#   body runs;
# - **nothing left to warn**: after an error or a cancel, every object that was not awaited is
#   closed by the time `run_in_reverse` ends (none of them warns "was never awaited");
# - **several callers at once**, each with its own `log`: each call behaves as if alone.
#
# :::
#
# The visible test follows the solution.

# %%
async def record_job(job_id: int, log: list[str]) -> str:
    log.append(f"start {job_id}")
    await asyncio.sleep(0)
    return f"job {job_id} done"


# %% tags=["solution", "hide-input"] mystnb={"code_prompt_show": "Show the solution"}
async def run_in_reverse(job_ids: list[int], log: list[str]) -> list[str]:
    """Create every coroutine object first, then await them in reverse order."""
    ### BEGIN SOLUTION
    created = [record_job(job_id, log) for job_id in job_ids]
    results = []
    try:
        for coro in reversed(created):
            results.append(await coro)
    finally:
        for coro in created:
            coro.close()  # a finished object ignores it; an unawaited one can no longer warn
    return results
    ### END SOLUTION


# %% tags=["tests"]
visible_log: list[str] = []
got = await asyncio.wait_for(run_in_reverse([1, 2, 3], visible_log), timeout=2)
assert got == ["job 3 done", "job 2 done", "job 1 done"], (
    "the results must come back in the order they were awaited, last id first; "
    f"got {got!r}")
assert visible_log == ["start 3", "start 2", "start 1"], (
    "each body must start only when it is awaited, last id first; "
    f"the log was {visible_log!r}")


# %% tags=["tests"]
class LogThatFailsOn2(list):
    """A log whose append raises for job 2, so that job's body raises."""

    def append(self, line: str) -> None:
        if line == "start 2":
            raise RuntimeError("job 2 failed")
        super().append(line)


with warnings.catch_warnings(record=True) as visible_warnings:
    warnings.simplefilter("always")
    try:
        await asyncio.wait_for(run_in_reverse([1, 2, 3], LogThatFailsOn2()), timeout=2)
        visible_error = None
    except RuntimeError as exc:
        visible_error = exc
    gc.collect()
assert str(visible_error) == "job 2 failed", (
    f"job 2's error must come out of run_in_reverse; got {visible_error!r}")
never_awaited = [str(w.message) for w in visible_warnings
                 if "never awaited" in str(w.message)]
assert not never_awaited, (
    "after job 2 raised, job 1's object was never awaited and not closed either: "
    f"close the objects you do not await; warnings: {never_awaited}")

# %% tags=["tests", "hidden-tests", "remove-cell"]
### BEGIN HIDDEN TESTS
def _check_run_in_reverse_hidden():
    events: list[str] = []

    async def body(job_id: int) -> str:
        events.append(f"start {job_id}")
        await asyncio.sleep(0)
        events.append(f"end {job_id}")
        return f"job {job_id} done"

    def spy(job_id: int, log: list[str]):
        events.append(f"create {job_id}")  # calling it makes the object; the body runs later
        return body(job_id)

    return spy, events


_spy, _events = _check_run_in_reverse_hidden()
_original_record_job = record_job
record_job = _spy
try:
    with warnings.catch_warnings(record=True) as _caught:
        warnings.simplefilter("always")
        async with asyncio.timeout(2):
            _got = await run_in_reverse(list(range(6)), [])
        gc.collect()
finally:
    record_job = _original_record_job
_creates = [e for e in _events if e.startswith("create")]
assert _creates == [f"create {i}" for i in range(6)] and _events[:6] == _creates, (
    "every coroutine object must be created first, in the given order, before any body runs: "
    "calling an async def function runs none of its body (chapter 01)")
assert not [w for w in _caught if inspect.iscoroutine(w.source)], (
    "every coroutine object must be awaited: an object that is never awaited never runs its body "
    "(chapter 01)")
_runs = [e for e in _events if not e.startswith("create")]
assert _runs == [f"{what} {i}" for i in reversed(range(6)) for what in ("start", "end")], (
    "each body must start only when it is awaited, after the previous one has finished, last id first: "
    "await the objects one by one (a Task or gather starts the bodies on its own; chapter 01)")
assert _got == [f"job {i} done" for i in reversed(range(6))], (
    "return the results in the order they were awaited, the last id first (chapter 01)")
_empty_log: list[str] = []
async with asyncio.timeout(2):
    assert await run_in_reverse([], _empty_log) == [], "no ids: return an empty list"


# Generated scenarios (issue 37): the same scenarios through run_in_reverse and the reference, on
# virtual time, compared on what the contract names (lab_snippets.scenarios explains the pattern).
import dataclasses as _dc

from hypothesis import strategies as _st

from lab_snippets import scenarios as _sc

_reference = _sc.reference(globals(), "run_in_reverse")


@_dc.dataclass(frozen=True)
class _Scenario:
    job_ids: tuple                   # any ints, in any order, repeats allowed
    bodies: tuple                    # of _sc.Job: the n-th body to start behaves as bodies[n] (else 0 s)
    cancel_at: float | None = None   # the caller cancels run_in_reverse then
    callers: int = 1

    def describe(self) -> str:
        bodies = "; ".join(j.describe(f"body {n}") for n, j in enumerate(self.bodies))
        who, cancel = _sc.callers_phrase(self.callers, self.cancel_at)
        return (f"{who} calls run_in_reverse({list(self.job_ids)!r}, log){cancel}; the bodies, in the order "
                f"they start: {bodies + '; later ones' if bodies else 'each'} return at once")


@_st.composite
def _scenarios(draw):
    ok = _st.builds(_sc.Job, seconds=_st.sampled_from([0, 1]), value=_st.none())
    bad = _st.builds(_sc.Job, seconds=_st.sampled_from([0.25, 1.25]), raises=_st.just(True))
    ids = draw(_st.lists(_st.integers(-2, 3), max_size=6))
    return _Scenario(job_ids=tuple(ids), bodies=tuple(draw(_st.lists(_st.one_of(ok, ok, ok, bad), max_size=6))),
                     cancel_at=draw(_st.sampled_from([None, None, 0.5, 1.5])),
                     callers=draw(_st.sampled_from([1, 1, 2])))


def _observe(fn, s: _Scenario) -> list:
    recorders: dict = {}  # id(log) -> (Recorder, events, objects): callers at once share the stand-in
    made: list = []       # every coroutine object handed out

    def spy(job_id: int, log: list):
        rec, events, objects = recorders[id(log)]
        events.append(f"create {job_id}")

        async def body():
            log.append(f"start {job_id}")
            events.append(f"start {job_id}")
            job = s.bodies[len(rec.starts)] if len(rec.starts) < len(s.bodies) else _sc.Job(0)
            try:
                return await rec.run(job_id, _dc.replace(job, value=f"job {job_id} done"))
            finally:
                events.append(f"end {job_id}")
        made.append(body())
        objects.append(made[-1])
        return made[-1]

    async def one_caller() -> dict:
        log: list = []
        rec, events, objects = recorders[id(log)] = (_sc.Recorder(), [], [])
        seen = await _sc.call_once(lambda: fn(list(s.job_ids), log), rec, s.cancel_at)
        unclosed = sum(inspect.getcoroutinestate(c) == inspect.CORO_CREATED for c in objects)
        return {**seen, "events": events, "unclosed": unclosed}

    names = fn.__globals__
    saved = names.get("record_job")
    names["record_job"] = spy
    try:
        return _sc.run_callers(one_caller, s.callers)
    finally:
        names["record_job"] = saved
        for coro in made:  # a wrong answer's unclosed objects: closed here, once counted, so
            coro.close()   # the grader's own run warns of nothing


def _compare_one(me: dict, it: dict, s: _Scenario) -> str | None:
    if me["kind"] != it["kind"]:
        return (f"run_in_reverse ended with {me['kind']!r} where the contract says {it['kind']!r} (a body's "
                "error comes out, a cancelled caller is cancelled, otherwise it returns)")
    if me["events"] != it["events"]:
        return (f"the calls and bodies went {me['events']!r}, expected {it['events']!r}: create every coroutine "
                "object first, in the given order (repeats too), then await them one by one, last id first; "
                "each body starts only when awaited")
    if me["kind"] == "returned" and me["value"] != it["value"]:
        return f"returned {me['value']!r}, expected {it['value']!r}: the results in the order awaited"
    if me["unclosed"] != it["unclosed"]:
        return (f"nothing left to warn: {me['unclosed']} coroutine object(s) were neither awaited nor closed when "
                "run_in_reverse ended; each will warn 'was never awaited' when collected: close() the objects "
                "you do not await, after an error or a cancel too (chapter 01)")
    return None


_compare = _sc.per_caller(_compare_one)


_sc.differential(run_in_reverse, _reference, _scenarios(), _observe, _compare, what="run_in_reverse",
                 examples=50, hint="chapter 01")
### END HIDDEN TESTS

# %% [markdown]
# ## Summary
#
# - `async def` makes a coroutine function; calling it makes a coroutine object and runs
#   nothing of the body.
# - The body runs when the object is awaited, or when the loop runs the Task that wraps it.
# - An object that is never awaited never runs; Python says so with a `RuntimeWarning` when
#   the object is destroyed (in CPython, as soon as its last reference goes).
# - `inspect.iscoroutinefunction`, `inspect.iscoroutine` and `inspect.getcoroutinestate` tell
#   the three moments apart; `inspect.isawaitable` holds for the object and for a Task alike.
#
# **What's next.** Chapter 02 asks what `await` does while it waits, and whether two awaits in
# a row overlap.
#
# ## In slime
#
# slime's rollout code is built from coroutine functions, and reading it means keeping the three
# moments apart: the line that calls an `async def` has not done the work yet. The cell below
# calls a small `generate`, like slime's, but forgets the `await`; it counts the requests it
# sends, and the next step reads the reward from what it got back. After it come the slime
# lines it models, which do await their generate function. Every place where slime
# defines or awaits a coroutine is listed in the
# [source inventory](../book/reference/inventory.md).
#
# Predict: with the `await` missing, what error do you get, and on which line? Is any request
# sent, and does anything name `generate`?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
requests_sent: list[str] = []


async def generate(prompt: str) -> dict:
    requests_sent.append(prompt)  # the request to the inference server
    await asyncio.sleep(0)
    return {"prompt": prompt, "reward": 1.0}


with warnings.catch_warnings(record=True) as lost_await:
    warnings.simplefilter("always")
    sample = generate("2 + 2")  # the await is missing
    try:
        print(sample["reward"])  # what a later step does with the sample
    except TypeError as exc:
        print(f"{type(exc).__name__}: {exc}")
    del sample
    gc.collect()
print("requests sent:", requests_sent)
print("warnings:", [str(w.message) for w in lost_await])

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert requests_sent == [], requests_sent
assert [w.source.__qualname__ for w in lost_await if inspect.iscoroutine(w.source)] == [
    "generate"], [str(w.message) for w in lost_await]
print("✓ no request was sent, and only the warning named `generate`")

# %% [markdown]
# :::{dropdown} Why
#
# The missing `await` costs three things. No request was sent: the generate body never ran.
# The error names the subscript, not the missing `await`. It appears at the next step that
# reads the result, not at the call that lost its `await`; in slime, that is the code after
# the quote below: the sample hooks, then the reward step. Only the "never awaited" warning
# names `generate`, and it comes only when the object is destroyed. So when a step fails on a
# coroutine object it did not expect, search the run's output for that warning.
#
# :::

# %% tags=["remove-input"]
from lab_snippets.sites import show_call_site

show_call_site("01b")

# %% [markdown]
# The second call site separates creating from running, as Exercise 1.1 does: `eval_rollout`
# builds every dataset's coroutine object first and runs them only at its one `await`. Where
# Exercise 1.1 then awaits the objects one by one, `eval_rollout` hands the list to
# `asyncio.gather` (chapter 03), which starts the bodies together, not one after another.

# %% tags=["remove-input"]
show_call_site("01")

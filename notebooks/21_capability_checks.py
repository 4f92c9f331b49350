# %% [markdown]
# # 21 · Async capability checks and protocol boundaries
# *异步能力检查与协议边界*
#
# **The question.** A plugin hands you a callable. Must you `await` what it returns, and which
# check (on the function, on its result, on its annotation, on the object's methods) actually
# answers that?
#
# **You will**
# 1. keep four questions apart: *is this a coroutine function* (`inspect.iscoroutinefunction`),
#    *is this result awaitable* (`inspect.isawaitable`), *what does the annotation promise*
#    (`Awaitable`, `AsyncIterator`), and *which protocol does the object speak* (`__await__`,
#    `__aiter__`);
# 2. build an extension point that accepts sync and async hooks, and compare two ways of
#    deciding what to await;
# 3. write a decorator for async functions, and measure what a plain wrapper's span covers;
# 4. implement a hook runner that awaits only what is awaitable and reads hooks that stream.
#
# **Needs** chapters 01 (coroutine function, object, body) and 03 (Tasks) · about 65 minutes
#
# **New to the course?** [How to read an experiment](../book/reading_guide.md) explains the
# timelines, the helpers and the folded checks; the [glossary](../book/glossary.md) gives the
# words the chapters share. The imports are folded below; `figure_style()` only sets how
# the plots look.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the setup"}
import asyncio
import functools
import gc
import inspect
import sys
import warnings
from collections.abc import AsyncIterator, Awaitable, Coroutine

from lab_snippets.timeline import Timeline, figure_style

figure_style()

# %% [markdown]
# ## Eight ways to hand over a score
#
# Each callable below takes a sample and, one way or another, produces a score. Think of them
# as eight hooks a user could plug into a rollout; the dictionary after them names each hook
# by how it is written. Something you can `await` is {term}`awaitable`.

# %%
async def score_async(sample: str) -> float:
    await asyncio.sleep(0.01)
    return len(sample) / 10


def score_later(sample: str) -> Awaitable[float]:
    return score_async(sample)


class ScoreClient:
    async def __call__(self, sample: str) -> float:
        return await score_async(sample)


def score_scheduled(sample: str) -> "asyncio.Task[float]":
    return asyncio.ensure_future(score_async(sample))


# %%
class ReadyScore:
    def __init__(self, value: float) -> None:
        self.value = value

    def __await__(self):
        # __await__ must return an iterator; borrowing sleep(0)'s is the shortest way
        yield from asyncio.sleep(0).__await__()
        return self.value


def score_ready(sample: str) -> ReadyScore:
    return ReadyScore(len(sample) / 10)


def score_plain(sample: str) -> float:
    return len(sample) / 10


async def score_stream(sample: str) -> AsyncIterator[float]:
    for part in sample.split():
        await asyncio.sleep(0)
        yield len(part) / 10


# %%
hooks = {
    "score_async": score_async,
    "partial(score_async)": functools.partial(score_async),
    "score_later": score_later,
    "ScoreClient()": ScoreClient(),
    "score_scheduled": score_scheduled,
    "score_ready": score_ready,
    "score_plain": score_plain,
    "score_stream": score_stream,
}

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the helper"}
async def settle(result) -> None:
    """Run or close whatever a hook's call returned, so that no body is left unrun."""
    if inspect.isawaitable(result):
        await result
    elif hasattr(result, "aclose"):
        await result.aclose()

# %% [markdown]
# ## Predict: which of the eight calls give something to await?
#
# The usual reflex is "if `inspect.iscoroutinefunction(hook)` is true, await the call;
# otherwise use the value". The next cell calls each hook once and asks both questions;
# `settle` (folded above) then runs or closes what the call returned. The
# `iscoroutinefunction` column is filled in: it looks through `functools.partial` and bound
# methods to the function inside, and says no to everything else (an object with an async
# `__call__` included). Copy the table and fill in the last column:
#
# | hook | `iscoroutinefunction` | call awaitable? |
# |---|---|---|
# | `score_async` | True | |
# | `functools.partial(score_async)` | True | |
# | `score_later` | False | |
# | `ScoreClient()` | False | |
# | `score_scheduled` | False | |
# | `score_ready` | False | |
# | `score_plain` | False | |
# | `score_stream` | False | |
#
# Before running the cell: which of the eight calls give something you can `await`?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
rows = {}
for name, hook in hooks.items():
    result = hook("two words")
    awaitable = inspect.isawaitable(result)
    rows[name] = (inspect.iscoroutinefunction(hook), awaitable, type(result).__name__)
    await settle(result)

print(f"{'hook':<21} {'iscoroutinefunction':<20} {'awaitable':<10} returns")
for name, (is_coro_fn, awaitable, kind) in rows.items():
    print(f"{name:<21} {is_coro_fn!s:<20} {awaitable!s:<10} {kind}")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: iscoroutinefunction-misses-awaitable-results
disagree = [name for name, (is_coro_fn, awaitable, _) in rows.items() if is_coro_fn != awaitable]
# a coroutine returned, an async __call__, a Task returned, an __await__ object returned
assert disagree == ["score_later", "ScoreClient()", "score_scheduled", "score_ready"], (
    f"iscoroutinefunction and isawaitable disagree on: {disagree}")
assert rows["score_stream"][:2] == (False, False), "the async generator function: async, yet neither check says so"
print(f"✓ the two checks disagree on {len(disagree)} hooks; neither sees the async generator")

# %% [markdown]
# :::{dropdown} Why
#
# `iscoroutinefunction` answers a narrow question about *how the function was written*: was it
# an `async def` (seen through `functools.partial` and bound methods)? It cannot see through a
# plain function that happens to return a coroutine, a Task or any object with `__await__`,
# nor through a callable object. Look at the table for the rows where its two columns
# disagree: four of the eight hooks (`score_later` to `score_ready`) return something
# awaitable while `iscoroutinefunction` says no, and the async generator function
# (`score_stream`) is async yet gives nothing to await (you `async for` over it). The question
# "must I await this?" is about the **result**, and only `inspect.isawaitable(result)`
# answers it.
#
# `score_ready` returns a `ReadyScore`, awaitable without being a coroutine: `await` calls its
# `__await__` method, which must return an iterator. A method with `yield` in it returns a
# generator, the easiest iterator to write: this one hands control to the loop once, as
# `await asyncio.sleep(0)` would, then returns the score.
#
# :::
#
# ## Protocols: what do `await` and `async for` look for?
#
# The abstract base classes in `collections.abc` (`Awaitable`, `Coroutine`, `AsyncIterator`)
# can be asked with `isinstance`. The cell below asks them, then `inspect.iscoroutine` and
# `inspect.isawaitable`, of five objects, one question a column: `ReadyScore(0.5)` (what
# `score_ready` returns: an object of a class with an `__await__` method), a coroutine, a
# `Task`, an async generator, and `old_style(0.5)`, a coroutine written the way it was before
# `async def` (folded; you meet it only in old code, and a fold after the answer explains its row).
#
# The classes check methods, not how an object was made: `Awaitable` asks for `__await__`
# alone; `Coroutine` also for `send`, `throw` and `close`, the methods that drive a coroutine
# step by step. A `Task` (chapter 03) is a kind of Future: it has `__await__`.
#
# **Predict.** Which of the five checks give `True` for the `Task`? What is at stake: a
# framework that awaits a hook's result only when `isinstance(result, Coroutine)` says so would
# pass on any object that check rejects as if it were the score.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show old_style, a pre-async-def coroutine"}
import types


@types.coroutine  # marks the generator it makes, so that `await` accepts it
def old_style(value: float):
    yield from asyncio.sleep(0).__await__()
    return value


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
ready, coro, old = ReadyScore(0.5), score_async("x"), old_style(0.5)
task, stream = asyncio.ensure_future(asyncio.sleep(0)), score_stream("a b")
checks = {
    name: (isinstance(x, Awaitable), isinstance(x, Coroutine),
           isinstance(x, AsyncIterator), inspect.iscoroutine(x), inspect.isawaitable(x))
    for name, x in (("ReadyScore", ready), ("coroutine", coro), ("Task", task),
                    ("types.coroutine", old), ("async generator", stream))
}
columns = ("Awaitable", "Coroutine", "AsyncIterator", "iscoroutine", "isawaitable")
print(f"{'':<16}", "".join(f"{c:<15}" for c in columns))
for name, flags in checks.items():
    print(f"{name:<16}", "".join(f"{f!s:<15}" for f in flags))

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the check"}
assert checks["ReadyScore"] == (True, False, False, False, True), "awaitable by protocol, not a coroutine"
assert checks["coroutine"] == (True, True, False, True, True)
assert checks["Task"] == (True, False, False, False, True)
assert checks["types.coroutine"] == (False, False, False, False, True), "only isawaitable sees it"
assert checks["async generator"] == (False, False, True, False, False)
assert await asyncio.wait_for(ready, timeout=2) == 0.5
assert await asyncio.wait_for(old, timeout=2) == 0.5, "await accepts the generator-based coroutine"
coro.close()  # inspected only
await asyncio.wait_for(task, timeout=2)
await stream.aclose()
print("✓ ReadyScore and a Task are Awaitable; the generator-based coroutine only isawaitable")

# %% [markdown]
# :::{dropdown} Why
#
# `await` accepts every one of the five but the async generator (the check awaits the
# `ReadyScore`, the old-style coroutine and the `Task`).
# `await x` works when `x` is a coroutine or has an `__await__` method returning an iterator;
# `async for` needs `__aiter__` returning something with `__anext__`. `ReadyScore`, the
# coroutine and the `Task` all have `__await__`, so all three are `Awaitable`; only the
# coroutine also has `send`, `throw` and `close`, so only it is a `Coroutine`. `inspect.iscoroutine` is true only for what an `async def`
# made, so it misses `ReadyScore` and the `Task`, both of which `await` accepts. Only
# `inspect.isawaitable` says `True` on every row that `await` accepts and `False` on the async
# generator.
#
# So the framework that awaits only a `Coroutine` fails on two hooks: `score_scheduled`'s
# `Task` and `score_ready`'s `ReadyScore` go on unawaited, as if they were scores, and the next
# hook or the reward receives an object where it expected a sample. The hooks that return a
# coroutine (`score_later`, `ScoreClient()`) pass, which is why such a check can look right in
# a test of `async def` hooks alone.
#
# :::
#
# :::{dropdown} The `old_style(0.5)` row: a coroutine from before `async def`
#
# `old_style` is a generator function decorated with `types.coroutine`. The generator it
# returns has `send`, `throw` and `close` but no `__await__`, so `Awaitable` and `Coroutine`
# both say `False`; what `types.coroutine` adds is a flag on the generator's code, which
# `await` reads (the check cell awaits it). `inspect.isawaitable` reads that flag too, which is
# why it is the one check that says `True` on this row as well.
#
# :::
#
# ## Does anything check an annotation?
#
# The function below is annotated to return an awaitable, returns a number, and is awaited.
# Predict: does Python object at the `return` that breaks the promise, or only at the `await`?
# Then look at the line the traceback points to.

# %% tags=["raises-exception", "hide-output"] mystnb={"code_prompt_show": "Show the result"}
def promised_awaitable(sample: str) -> Awaitable[float]:
    return len(sample) / 10


await promised_awaitable("two words")

# %% [markdown]
# :::{dropdown} Why
#
# An annotation is only a promise, which Python never checks at run time, so the `return`
# passes, and the error comes from the `await` syntax, far from the function that lied.
#
# :::

# %% [markdown]
# ## An extension point that takes sync and async hooks
#
# A rollout framework lets users plug functions in by path and cannot know how each was
# written. Two ways to call a chain of hooks, each hook taking the sample and returning the
# new sample:
#
# - **decide by the function**: `await hook(x)` if `iscoroutinefunction(hook)`, else `hook(x)`;
# - **decide by the result**: call `hook(x)`, then `await` the result if it is awaitable.
#
# **Predict.** Both run the same chain of mixed hooks below: an `async def`; a plain function
# that passes the call on to it and returns the coroutine (an *adapter*, `add_via_adapter`); a
# plain function; and an object with an async `__call__`. Deciding
# by the function goes wrong somewhere in this chain: at which hook, and how does it show?
# An error at that hook, an error at a later one, or a wrong result with no error?

# %%
async def add_async(sample: str) -> str:
    await asyncio.sleep(0.005)
    return sample + "+async"


def add_via_adapter(sample: str) -> Awaitable[str]:
    return add_async(sample)


def add_plain(sample: str) -> str:
    return sample + "+plain"


class AddClient:
    async def __call__(self, sample: str) -> str:
        await asyncio.sleep(0.005)
        return sample + "+client"


mixed_chain = [add_async, add_via_adapter, add_plain, AddClient()]


# %%
async def run_chain_by_function(sample, chain):
    for hook in chain:
        if inspect.iscoroutinefunction(hook):
            sample = await hook(sample)
        else:
            sample = hook(sample)
    return sample


async def run_chain_by_result(sample, chain):
    for hook in chain:
        result = hook(sample)
        if inspect.isawaitable(result):
            result = await result
        sample = result
    return sample


# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the instrument: never_awaited_warnings, a recorder of never-awaited warnings"}
import contextlib


@contextlib.contextmanager
def never_awaited_warnings():
    """Collect the "coroutine ... was never awaited" warnings raised inside the block."""
    found: list[warnings.WarningMessage] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield found
        gc.collect()  # a coroutine dropped without an await warns when it is collected
    found.extend(w for w in caught if inspect.iscoroutine(w.source))


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
with never_awaited_warnings() as coroutine_warnings:  # folded above
    outcome = {}
    for name, run_chain in (("by result", run_chain_by_result),
                            ("by function", run_chain_by_function)):
        try:
            outcome[name] = await run_chain("s", mixed_chain)
        except Exception as exc:  # whatever happens, show it
            outcome[name] = f"{type(exc).__name__}: {exc}"
by_result, by_function = outcome["by result"], outcome["by function"]
recorded = [str(w.message) for w in coroutine_warnings]

print("decide by the result:  ", by_result)
print("decide by the function:", by_function)
print("recorded:", recorded)

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: decide-by-the-result-not-the-function
# a warning about a coroutine has that coroutine as its source: its function's name tells
unawaited_names = [w.source.__name__ for w in coroutine_warnings]
assert by_result == "s+async+async+plain+client", f"deciding by the result handled every hook: {by_result}"
assert by_function.startswith("TypeError"), "the adapter's coroutine was passed on as if it were a sample"
assert "add_async" in unawaited_names, "and its body never ran"
print("✓ deciding by the result ran every hook; deciding by the function passed a coroutine on")

# %% [markdown]
# :::{dropdown} Why
#
# The adapter is a plain function that returns a coroutine, so `iscoroutinefunction` says no
# and deciding by the function passes that coroutine object to the next hook as if it were the
# sample. Look at the second printed line and the warning: the chain broke one step later
# with a confusing `TypeError`, and the adapter's work never ran. Deciding by the result
# handled every hook. The cost is small: one
# check per call, and a sync hook is never awaited.
#
# :::
#
# ## Measure: what a tracing decorator's span covers
#
# Tracing decorators wrap a function to time it. One version is a plain wrapper: record the
# start, call, record the end. The async-aware version asks once, at
# decoration time, whether `fn` is a coroutine function, and picks its wrapper by the answer.
#
# The experiment decorates the same coroutine function both ways and records when each span
# opens and closes against when the body runs, on a `Timeline`: `tl.span` times a block,
# `tl.mark` notes a moment (the [reading guide](../book/reading_guide.md) lists the rest).
#
# The cell calls `generate` through the plain wrapper, pauses 0.02 s, then awaits that call
# together with one through the async-aware wrapper (`gather`), so that the moments of the two
# calls sit apart on the time axis.
#
# **Predict.** Applied to an `async def`, does the plain wrapper's span cover the body it
# traces? And what does `inspect.iscoroutinefunction` say of each decorated function?

# %%
tl = Timeline()


def traced_simple(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with tl.span(f"{fn.__name__} span (simple)", state="waiting"):
            tl.mark(f"{fn.__name__} span (simple) opens")
            result = fn(*args, **kwargs)
        tl.mark(f"{fn.__name__} span (simple) closes")
        return result

    return wrapper


# %%
def traced(fn):
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def async_wrapper(*args, **kwargs):
            with tl.span(f"{fn.__name__} span (async-aware)", state="waiting"):
                tl.mark(f"{fn.__name__} span (async-aware) opens")
                result = await fn(*args, **kwargs)
            tl.mark(f"{fn.__name__} span (async-aware) closes")
            return result

        return async_wrapper

    @functools.wraps(fn)
    def sync_wrapper(*args, **kwargs):
        with tl.span(f"{fn.__name__} span (async-aware)", state="waiting"):
            return fn(*args, **kwargs)

    return sync_wrapper


# %%
async def generate(label: str) -> str:
    with tl.span(f"generate body ({label})"):
        tl.mark(f"generate body ({label}) starts")
        await asyncio.sleep(0.06)
    return label


simple_generate, aware_generate = traced_simple(generate), traced(generate)
pending_simple = simple_generate("simple")
await asyncio.sleep(0.02)
results = await asyncio.gather(pending_simple, aware_generate("aware"))

# %% tags=["hide-input", "remove-output"] mystnb={"code_prompt_show": "Show the plotting code"}
from lab_snippets.timeline import STATE_COLOURS  # each state's colour (legend)


def draw_spans():
    """The four lanes, with a diamond where the simple span (too short for a bar) sits."""
    fig = tl.plot("Where each tracer's span sits against the body it traces",
                  lanes=["generate span (simple)", "generate body (simple)",
                         "generate span (async-aware)", "generate body (aware)"],
                  meanings={"waiting": "tracer's span", "running": "body running"})
    simple_span = tl.spans_of("generate span (simple)")[0]
    fig.axes[0].plot(simple_span.start, 0, marker="D", markersize=9,
                     color=STATE_COLOURS["waiting"], markeredgecolor="black")
    return fig


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
print("iscoroutinefunction: simple", inspect.iscoroutinefunction(simple_generate),
      "· async-aware", inspect.iscoroutinefunction(aware_generate))
fig = draw_spans()  # the plotting code's fold: the four lanes of the timeline

# %% [markdown]
# :::{dropdown} Why
#
# Applied to an `async def`, the "call" inside a plain wrapper only makes the coroutine
# object, so its span closes **before any of the body has run**: in the figure the simple
# span is a sliver at the start, while the async-aware span contains the body. The green bar is
# the async-aware span (legend "tracer's span"; the simple span is too short for a bar, so a
# diamond marks it) and the blue bars the bodies. The time axis starts when `tl` was made, a
# cell before the calls, so the diamond sits a little after 0. The simple span sits at the
# call, and its body starts only
# once `gather` awaits the coroutine. The answer's printed line shows the second damage:
# `functools.wraps` copies the name and docstring, yet `iscoroutinefunction` of the simple
# wrapper is `False` (the async-aware one's is `True`), so any extension point that
# decides by the function (previous section) would now mistreat it.
#
# :::

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: an-async-aware-decorator-spans-the-body
print(tl.names())
assert results == ["simple", "aware"]
assert tl.order("generate span (simple) closes", "generate body (simple) starts"), \
    "the simple span closed before the body started"
assert tl.order("generate span (async-aware) opens", "generate body (aware) starts",
                "generate span (async-aware) closes"), "the async-aware span opened before the body and closed after it"
simple_span = tl.spans_of("generate span (simple)")[0]
aware_span = tl.spans_of("generate span (async-aware)")[0]
body = tl.spans_of("generate body (aware)")[0]
assert aware_span.duration >= body.duration >= 5 * simple_span.duration
assert inspect.iscoroutinefunction(aware_generate) and not inspect.iscoroutinefunction(simple_generate)
print("✓ the async-aware span covers the body; the simple one closed before the body started")

# %% [markdown]
# Newer Pythons change two things around `iscoroutinefunction`.
#
# :::{dropdown} Going further: `iscoroutinefunction` in newer Pythons
#
# **Marking a sync wrapper (Python 3.12+).** Sometimes a sync wrapper that
# returns an awaitable is what you want (it must pick a coroutine at call time, say). Since
# 3.12, `inspect.markcoroutinefunction(fn)` marks such a function so that
# `inspect.iscoroutinefunction` reports true. On 3.11 there is no supported way to do that:
# write an `async def` wrapper instead. On 3.12 and later the folded cell below prints
# `before: False after marking: True`, and awaiting the marked function's result still gives
# 0.3: marking changes what the check reports, not what the function returns.
#
# **`asyncio.iscoroutinefunction` is deprecated (Python 3.14+).** It is an older twin of the
# `inspect` check with extra rules for the long-removed `@asyncio.coroutine` decorator. From
# 3.14 calling it emits a `DeprecationWarning` (removal is planned for 3.16): use
# `inspect.iscoroutinefunction`. The folded cell below runs both experiments on the Python
# that built this page.
#
# :::

# %% tags=["hide-cell"] mystnb={"code_prompt_show": "Show the two experiments"}
def pick_scorer(sample: str) -> Awaitable[float]:
    return score_async(sample)


if sys.version_info >= (3, 12):
    before = inspect.iscoroutinefunction(pick_scorer)
    inspect.markcoroutinefunction(pick_scorer)
    print("before:", before, "after marking:", inspect.iscoroutinefunction(pick_scorer))
    assert not before and inspect.iscoroutinefunction(pick_scorer)
    assert await asyncio.wait_for(pick_scorer("abc"), timeout=2) == 0.3
else:
    print("Python < 3.12 has no inspect.markcoroutinefunction: "
          "iscoroutinefunction(pick_scorer) stays False; wrap it in an `async def` "
          "if callers check the function.")
    assert not inspect.iscoroutinefunction(pick_scorer)

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    asyncio_says = asyncio.iscoroutinefunction(score_async)
deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning)]
if sys.version_info >= (3, 14):
    print("3.14+: asyncio.iscoroutinefunction warns:", deprecations[0].message)
    assert deprecations
else:
    print("Python < 3.14: asyncio.iscoroutinefunction works without a warning; "
          "it is still better to use inspect.iscoroutinefunction, "
          "which will outlive it.")
    assert not deprecations
assert asyncio_says == inspect.iscoroutinefunction(score_async)

# %% [markdown]
# ## A caller cancelled mid-chain
#
# The exercise below also asks what happens when the caller is cancelled while a hook is still
# working. The cell runs `run_chain_by_result` from the extension-point section as a task, on a
# chain whose second hook waits on a server that never answers, cancels that task after
# 0.02 s, and prints whether it ended cancelled and which hooks noted anything.
#
# Predict: does the stuck hook's `finally` run, and is the hook after it, `next_hook`, called?

# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
events: list[str] = []


async def stuck_hook(sample: str) -> str:
    try:
        await asyncio.sleep(10)  # a server that never answers
    finally:
        events.append("stuck_hook stopped")
    return sample


def next_hook(sample: str) -> str:
    events.append("next_hook called")
    return sample


stuck_chain = [add_plain, stuck_hook, next_hook]
caller = asyncio.create_task(run_chain_by_result("s", stuck_chain))
await asyncio.sleep(0.02)
caller.cancel()
await asyncio.wait([caller], timeout=1)
print(f"caller cancelled: {caller.cancelled()} | events: {events}")

# %% [markdown]
# :::{dropdown} Why
#
# `await result` runs the hook's coroutine inside the caller's task, so the cancel is thrown
# into the hook where it waits: its `finally` runs, the cancel comes out of the caller, and
# `next_hook` is never called. Nothing extra is needed for that, and a stream read with
# `async for` is stopped the same way, since each step of the loop is awaited in the caller's
# task too. What would break it is putting the hook out of the cancel's reach, for example
# `await asyncio.shield(result)`: the caller would end cancelled while the hook ran on.
#
# :::

# %% [markdown]
# ## Exercise 21.1 · Apply hooks, whatever their kind
#
# Implement `apply_hooks(sample, hooks)`. Each hook takes the current sample and returns the
# next one. A hook may be a plain function, an `async def`, a plain function returning an
# awaitable, or a callable object.
#
# - Run the hooks **one after another, in order**, and return the final sample.
# - Await a result only when it is awaitable.
# - Only `None` keeps the current sample: a falsy result such as `""` or `0` replaces it.
# - A hook may **stream**: when its result has `__aiter__` (what `async for` needs), however
#   the hook was written, consume it to the end; each value it yields, except `None`, becomes
#   the sample.
# - An error raised in a hook or its stream reaches the caller, and no later hook is called.
# - If the caller is cancelled while it waits on a hook, that hook (or its stream) is
#   cancelled with it.
#
# :::{dropdown} What the grader checks
#
# Graded, on many generated chains (from no hook to five, every kind above mixed, streams
# included; results that repeat, are falsy or are objects that are not awaitable; hooks and
# streams that wait or raise; a caller cancelled mid-chain):
#
# - every kind of hook above works, decided by its *result* (is it awaitable?), not by the
#   function;
# - the hooks run one after another, in order, each on the previous one's result; with no
#   hooks the sample comes back unchanged;
# - only `None` keeps the current sample, whether a sync hook returns it or it is what an
#   awaited result turns into; any other result, falsy ones such as `""`, `0` or `[]`
#   included, becomes the next sample;
# - a result that has `__aiter__` is a stream, whether an `async def` with `yield`, a plain
#   function or an object returned it, or a hand-written class that has only `__aiter__`
#   (one hook reused may return a different kind on each call): it
#   is consumed to its end before the next hook is called, and each value it yields except
#   `None` becomes the sample (a stream that yields nothing keeps it);
# - no hook's coroutine is left unawaited, no stream is left unfinished, a sync result is never
#   awaited, and an error raised inside a hook or its stream (a `TypeError` included) reaches
#   the caller; no later hook is called;
# - a caller cancelled while a hook's result or stream is awaited ends at once: that hook is
#   cancelled with it (nothing is left running) and no later hook is called.
#
# :::

# %% tags=["solution", "hide-input"] mystnb={"code_prompt_show": "Show the solution"}
async def apply_hooks(sample, hooks):
    """Apply each hook in order: await an awaitable result, consume a stream; None keeps the sample."""
    ### BEGIN SOLUTION
    for hook in hooks:
        result = hook(sample)
        if inspect.isawaitable(result):
            result = await result
        if hasattr(result, "__aiter__"):  # a stream: what `async for` accepts, however it was made
            async for value in result:
                if value is not None:
                    sample = value
        elif result is not None:
            sample = result
    return sample
    ### END SOLUTION


# %% tags=["tests"]
visible_chain = [add_plain, add_async, add_via_adapter, AddClient()]
visible = await asyncio.wait_for(apply_hooks("s", visible_chain), timeout=2)
assert visible == "s+plain+async+async+client", (
    "each hook must get the previous one's result, awaited only when it is awaitable; "
    f"got {visible!r}")
visible_kept = await asyncio.wait_for(apply_hooks("s", [lambda s: None]), timeout=2)
assert visible_kept == "s", (
    f"a hook that returns None keeps the sample: 's' expected, got {visible_kept!r}")


async def add_stream(sample: str):  # an async generator function: its call is a stream
    yield sample + "+draft"
    await asyncio.sleep(0)
    yield sample + "+final"


streamed = await asyncio.wait_for(apply_hooks("s", [add_plain, add_stream]), timeout=2)
assert streamed == "s+plain+final", (
    "a hook's stream (a result with __aiter__) is consumed to its end, each value "
    f"it yields becoming the sample: 's+plain+final' expected, got {streamed!r}")

# %% tags=["tests", "hidden-tests", "remove-cell"]
### BEGIN HIDDEN TESTS
async def _hidden_check_apply_hooks():
    _events: list[str] = []
    def _plain(s):
        _events.append("plain")
        return s + "p"
    async def _slow(s):
        _events.append("slow starts")
        await asyncio.sleep(0.03)
        _events.append("slow ends")
        return s + "S"
    async def _fast(s):
        _events.append("fast starts")
        await asyncio.sleep(0)
        _events.append("fast ends")
        return s + "F"
    class _Ready:
        def __init__(self, value):
            self.value = value
        def __await__(self):
            yield from asyncio.sleep(0).__await__()
            return self.value
    class _NotAwaitable:
        """A sync hook result that must be used as is: awaiting it would fail."""
        def __init__(self, s):
            self.s = s
    class _BuggyHook(Exception):
        pass
    async def _raises_type_error(s):
        raise TypeError("a bug inside the hook")
    def _show_value(v):
        return repr(v) if v is None or isinstance(v, (str, int, list)) else f"a {type(v).__name__} object"
    async def _one(chain, sample="x"):
        async with asyncio.timeout(2):
            return await apply_hooks(sample, chain)
    with warnings.catch_warnings():  # coroutines dropped by earlier cells are not this test's business
        warnings.simplefilter("ignore")
        gc.collect()
    # A plain hook may schedule a task (asyncio.ensure_future): it needs the caller's running loop,
    # so every hook is called in the loop's thread.
    import threading as _threading
    _called_in: list[str] = []
    def _where(s):
        _called_in.append(_threading.current_thread().name)
        return s + "w"
    await _one([_where, _plain])
    _loop_thread = _threading.current_thread().name
    assert _called_in == [_loop_thread], (
        "every kind of hook works, including a plain function that returns a task it scheduled on the caller's "
        f"loop: a plain hook was called in thread {_called_in[:1]}, not in the event loop's thread "
        f"({_loop_thread!r}), where asyncio.ensure_future finds no running loop: call each hook directly, "
        "hook(sample), and await its result only when it is awaitable (chapter 21)")
    with warnings.catch_warnings(record=True) as _caught:
        warnings.simplefilter("always")
        _kinds = {
            "a plain function that returns a coroutine": ([lambda s: _fast(s)], "xF",
                "decide by the result (inspect.isawaitable), not by the function"),
            "an object with __await__ that is not a coroutine": ([lambda s: _Ready(s + "R")], "xR",
                "test the result with inspect.isawaitable, not iscoroutine"),
            "a plain function that returns a future": ([lambda s: asyncio.ensure_future(_fast(s))], "xF",
                "test the result with inspect.isawaitable, not iscoroutine"),
            "a callable object with an async __call__": ([type("_Hook", (), {"__call__": lambda self, s: _fast(s)})()],
                "xF", "decide by the result, not by the function"),
        }
        for _kind, (_chain, _want, _idea) in _kinds.items():
            _got = await _one(_chain)
            assert _got == _want, (
                f"the result of {_kind} was not awaited (the sample became {type(_got).__name__}): "
                f"{_idea} (chapter 21)")
        _kept = await _one([_plain, lambda s: None])
        assert _kept == "xp", f"a hook returning None keeps the current sample, got {_kept!r} (chapter 21)"
        async def _async_none(s):
            await asyncio.sleep(0)
            return None
        _kept = await _one([_plain, _async_none, lambda s: _Ready(None)])
        assert _kept == "xp", (
            f"an async hook (or an awaitable) whose result is None keeps the current sample, got {_kept!r}: "
            "await first, then test the awaited result for None (chapter 21)")
        for _falsy in ("", 0, [], {}):
            for _hook in (lambda s, v=_falsy: v, lambda s, v=_falsy: _Ready(v)):
                _got = await _one([_plain, _hook])
                assert _got == _falsy and type(_got) is type(_falsy), (
                    f"only None keeps the sample: a hook returned {_falsy!r}, which must become the next "
                    f"sample, but apply_hooks returned {_got!r}. Test `is not None`, not truthiness "
                    "(chapter 21)")
        try:
            await _one([_raises_type_error])
        except TypeError:
            pass
        else:
            raise AssertionError(
                "an error raised inside a hook must reach the caller: await only what is awaitable; "
                "catching TypeError around the await also swallows the hook's own errors (chapter 21)")
        _events.clear()
        _chain = [_slow, lambda s: _fast(s), _plain, lambda s: _Ready(s + "R"), lambda s: None,
                  lambda s: asyncio.ensure_future(_fast(s))]
        _out = await _one(_chain)
        assert _events[:5] == ["slow starts", "slow ends", "fast starts", "fast ends", "plain"], (
            f"hooks must run one after another, in order, each on the previous one's result: "
            f"saw {_events[:5]} (chapter 21)")
        assert _out == "xSFpRF", f"the chain gave {_out!r}, not 'xSFpRF' (chapter 21)"
        gc.collect()
    # the warning's source is the coroutine that was dropped unawaited (not its message's wording)
    _unawaited = [str(w.message) for w in _caught if inspect.iscoroutine(w.source)]
    assert not _unawaited, f"every coroutine must be awaited: {_unawaited[:1]} (chapter 21)"
    _obj = await _one([_NotAwaitable], "y")
    assert isinstance(_obj, _NotAwaitable) and _obj.s == "y", (
        "a sync result is used as is, never awaited (chapter 21)")
    assert await _one([], "z") == "z", "no hooks: the sample comes back unchanged"
    # A hook may stream: a result that `async for` accepts (it has __aiter__) is consumed to its end.
    _stream_ends: list[str] = []
    async def _stream(s, values=None):
        try:
            for _v in (s + "a", s + "b", None) if values is None else values:
                await asyncio.sleep(0)
                yield _v
            _stream_ends.append("ended")
        except BaseException:
            _stream_ends.append("cut off")
            raise
    class _Pieces:
        """A hand-written stream: only __aiter__, which returns a separate iterator."""
        def __init__(self, s):
            self.s = s
        def __aiter__(self):
            return _stream(self.s)
    class _StreamClient:
        def __call__(self, s):
            return _stream(s)
    _streams = {
        "an async generator function (async def with yield)": (_stream, "xb"),
        "a plain function that returns an async generator": (lambda s: _stream(s), "xb"),
        "a callable object that returns an async generator": (_StreamClient(), "xb"),
        "a plain function that returns an object with only __aiter__": (_Pieces, "xb"),
        "a stream that yields '' last": (lambda s: _stream(s, (s + "a", "")), ""),
        "a stream that yields nothing": (lambda s: _stream(s, ()), "x"),
    }
    for _kind, (_hook, _want) in _streams.items():
        _stream_ends.clear()
        _got = await _one([_hook])
        assert _got == _want and _stream_ends == ["ended"], (
            "a hook's result that async for accepts (it has __aiter__) is a stream: consume it to its end "
            f"with async for, each value it yields except None becoming the sample; for {_kind} apply_hooks "
            f"returned {_show_value(_got)} (expected {_want!r}) and the stream was "
            f"{'consumed to its end' if _stream_ends == ['ended'] else 'not consumed to its end'}. "
            "Test the result for the protocol (__aiter__), not how the hook was written (chapter 21)")
    _events.clear()
    _stream_ends.clear()
    _got = await _one([_slow, _stream, _plain])
    assert _got == "xSbp" and _events == ["slow starts", "slow ends", "plain"], (
        "a hook's stream is consumed to its end before the next hook is called, which gets its last "
        f"value: the chain [async, stream, plain] gave {_got!r}, not 'xSbp' (chapter 21)")
    for _error in (ValueError, TypeError):
        async def _broken_stream(s, _error=_error):
            yield s + "a"
            raise _error("a bug inside the stream")
        _events.clear()
        try:
            await _one([_broken_stream, _plain])
        except _error:
            pass
        else:
            raise AssertionError(
                f"an error raised inside a hook's stream must reach the caller, a {_error.__name__} too: "
                "iterate with async for, which stops at the end of the stream and lets any other error "
                "through (a TypeError caught to mean 'not a stream' also swallows the stream's own; "
                "chapter 21)")
        assert not _events, "an error raised inside a hook's stream ends the chain: no later hook is called"
    # One hook object, reused: each call's result decides, not what the hook returned last time.
    async def _later(v):
        return v
    class _Changeling:
        def __init__(self):
            self.calls = 0
        def __call__(self, s):
            self.calls += 1
            if self.calls == 1:
                return s + "1"
            return _later(s + "2") if self.calls == 2 else _stream(s, (s + "3",))
    _changeling = _Changeling()
    _seen = [await _one([_changeling], "c") for _ in range(3)]
    assert _seen == ["c1", "c2", "c3"], (
        "every kind of hook works, decided by its result, not by the function: one hook reused across "
        "calls of apply_hooks returned a plain value, then a coroutine, then a stream, and apply_hooks "
        f"gave {[_show_value(v) for v in _seen]}, not ['c1', 'c2', 'c3']; test each result, do not "
        "remember a hook's kind (chapter 21)")
async with asyncio.timeout(5):
    await _hidden_check_apply_hooks()

# Generated scenarios (issue 37): the same hook chains through apply_hooks and the reference, on
# virtual time, compared on what the contract names (lab_snippets.scenarios explains the pattern).
import dataclasses as _dc

from hypothesis import strategies as _st

from lab_snippets import scenarios as _sc

_reference = _sc.reference(globals(), "apply_hooks")
_KINDS = {  # kind -> how it reads in a scenario
    "plain": "a plain function",
    "async": "an async def",
    "returns coroutine": "a plain function that returns a coroutine",
    "returns future": "a plain function that returns a task",
    "returns awaitable": "a plain function that returns an object with __await__",
    "object": "a callable object",
    "async object": "a callable object with an async __call__",
    "async generator": "an async generator function (a stream)",
    "returns stream": "a plain function that returns an object with only __aiter__ (a stream)",
}
_STREAMS = ("async generator", "returns stream")
_RESULTS = ("new", "None", "''", "0", "[]", "thing", "raise ValueError", "raise TypeError")


def _show(value) -> str:
    return repr(value) if isinstance(value, (str, int, list, _Thing)) else f"a {type(value).__name__} object"


class _Thing:
    """A sync hook's result that is neither None nor awaitable."""

    def __init__(self, n):
        self.n = n

    def __repr__(self):
        return f"<thing {self.n}>"


@_dc.dataclass(frozen=True)
class _Hook:
    kind: str = "plain"
    result: str = "new"      # one of _RESULTS; "new" is the string f"h{n}(<sample>)"
    seconds: float = 0       # what an awaited result waits first (virtual seconds)

    def describe(self, n: int) -> str:
        wait = f" that waits {_sc.fmt(self.seconds)}" if self.seconds and self.kind not in ("plain", "object") else ""
        what = {"new": f"returns 'h{n}(<its sample>)'", "thing": f"returns the non-awaitable object <thing {n}>",
                "None": "returns None"}.get(self.result, self.result if self.result.startswith("raise")
                                            else f"returns {self.result}")
        if self.kind in _STREAMS:  # a stream yields 'h{n}~(<its sample>)', then what the hook "returns"
            what = f"yields 'h{n}~(<its sample>)', then " + what.replace("returns", "yields")
            wait = wait and wait + " before each value"
        return f"hook {n}: {_KINDS[self.kind]}{wait} and {what}"


@_dc.dataclass(frozen=True)
class _Scenario:
    sample: str
    hooks: tuple   # of _Hook
    cancel_at: float | None = None

    def describe(self) -> str:
        cancel = (f"; the caller is cancelled at {_sc.fmt(self.cancel_at)}" if self.cancel_at is not None else "")
        chain = "; ".join(h.describe(n) for n, h in enumerate(self.hooks)) or "no hooks"
        return f"apply_hooks({self.sample!r}, hooks): {chain}{cancel}"


@_st.composite
def _scenarios(draw):
    hook = _st.builds(_Hook, kind=_st.sampled_from(list(_KINDS)), result=_st.sampled_from(_RESULTS),
                      seconds=_st.sampled_from([0, 1, 2]))
    return _Scenario(sample=draw(_st.sampled_from(["s", "", "é"])),
                     hooks=tuple(draw(_st.lists(hook, max_size=5))),
                     cancel_at=draw(_st.sampled_from([None, None, None, 0.5, 1.5, 2.5])))


def _observe(fn, s: _Scenario) -> dict:
    seen: dict = {"calls": [], "peak": 0, "outcome": None, "unawaited": [], "left": [], "unconsumed": 0}
    running, coroutines, readies, tasks, agens = [0], [], [], [], []

    async def main() -> dict:
        loop = asyncio.get_running_loop()

        def value(n, hook, sample):
            if hook.result.startswith("raise"):
                raise {"raise ValueError": ValueError, "raise TypeError": TypeError}[hook.result](f"hook {n}")
            return {"new": f"h{n}({sample!r})", "None": None, "''": "", "0": 0, "[]": [],
                    "thing": _Thing(n)}[hook.result]

        async def body(n, hook, sample, call):
            running[0] += 1
            seen["peak"] = max(seen["peak"], running[0])
            try:
                await asyncio.sleep(hook.seconds)
                got = value(n, hook, sample)
                call[2] = "ended"
                return got
            except asyncio.CancelledError:
                call[2] = "cancelled"
                raise
            except Exception:
                call[2] = "ended"
                raise
            finally:
                running[0] -= 1

        async def stream(n, hook, sample, call):
            running[0] += 1
            seen["peak"] = max(seen["peak"], running[0])
            call[2] = "streaming"
            try:
                await asyncio.sleep(hook.seconds)
                yield f"h{n}~({sample!r})"
                await asyncio.sleep(hook.seconds)
                yield value(n, hook, sample)
                call[2] = "ended"
            except asyncio.CancelledError:
                call[2] = "cancelled"
                raise
            except Exception:
                call[2] = "ended"
                raise
            finally:
                running[0] -= 1

        class Pieces:  # a hand-written stream: only __aiter__
            def __init__(self, agen):
                self.agen = agen

            def __aiter__(self):
                return self.agen

        class Ready:
            def __init__(self, coro):
                self.coro = coro

            def __await__(self):
                readies.remove(self)
                return self.coro.__await__()

        def make(n, hook):
            def sync(sample):
                seen["calls"].append([n, _show(sample), "ended"])
                if hook.kind in ("plain", "object"):
                    return value(n, hook, sample)
                seen["calls"][-1][2] = "not awaited"
                coro = body(n, hook, sample, seen["calls"][-1])
                if hook.kind == "returns future":
                    task = asyncio.ensure_future(coro)
                    tasks.append(task)
                    return task
                coroutines.append(coro)
                if hook.kind == "returns awaitable":
                    ready = Ready(coro)
                    readies.append(ready)
                    return ready
                return coro
            if hook.kind == "returns stream":
                def pieces(sample):
                    seen["calls"].append([n, _show(sample), "not consumed"])
                    agen = stream(n, hook, sample, seen["calls"][-1])
                    agens.append(agen)
                    return Pieces(agen)
                return pieces
            if hook.kind == "async generator":
                async def hook_gen(sample):  # the call is seen when its stream starts
                    seen["calls"].append([n, _show(sample), "streaming"])
                    agen = stream(n, hook, sample, seen["calls"][-1])
                    agens.append(agen)
                    async for got in agen:
                        yield got
                return hook_gen
            if hook.kind == "async":
                async def hook_fn(sample):
                    seen["calls"].append([n, _show(sample), "not finished"])
                    return await body(n, hook, sample, seen["calls"][-1])
                return hook_fn
            if hook.kind in ("object", "async object"):
                return type(f"Hook{n}", (), {"__call__": lambda self, sample: sync(sample)})()
            return sync

        hooks = [make(n, h) for n, h in enumerate(s.hooks)]
        task = asyncio.create_task(fn(s.sample, hooks))
        if s.cancel_at is not None:
            loop.call_at(s.cancel_at, task.cancel)
        try:
            got = await task
            seen["outcome"] = ("returned", _show(got))
        except asyncio.CancelledError:
            seen["outcome"] = ("cancelled",)
        except Exception as exc:  # noqa: BLE001 - what came out is the observation
            seen["outcome"] = (_sc.kind_of(exc), str(exc))
        seen["at"], seen["ends"] = loop.time(), [c[2] for c in seen["calls"]]
        seen["left"] = running[0] + sum(not t.done() for t in tasks)
        seen["unconsumed"] = sum(c[2] in ("not consumed", "streaming") for c in seen["calls"])
        for t in tasks:
            t.cancel()
        for agen in agens:  # finish what a wrong answer left half-read
            try:
                await agen.aclose()
            except Exception:  # noqa: BLE001 - already running or broken: nothing to observe
                pass
        await asyncio.sleep(0)
        return seen

    run = _sc.run_virtual(main, limit=60)
    if run.error is not None or run.hung or run.spinning:
        seen["failed"] = ("spun without ever letting time pass" if run.spinning
                          else "did not end" if run.hung else f"failed: {run.error!r}")
    seen["unawaited"] = len(readies) + sum(inspect.getcoroutinestate(c) == inspect.CORO_CREATED for c in coroutines)
    for c in coroutines:
        c.close()
    return seen


def _compare(me: dict, it: dict, s: _Scenario) -> str | None:
    if "failed" in me:
        return f"apply_hooks {me['failed']}"
    if [c[:2] for c in me["calls"]] != [c[:2] for c in it["calls"]]:
        return (f"the hooks were called (hook, sample) {[tuple(c[:2]) for c in me['calls']]}, expected "
                f"{[tuple(c[:2]) for c in it['calls']]}: call each hook in order on the previous one's result "
                "(awaited when it is awaitable; a stream's last value that is not None); only None keeps the "
                "sample, and a hook that raises ends the chain")
    if me["outcome"] != it["outcome"]:
        return (f"apply_hooks ended with {me['outcome']!r}, expected {it['outcome']!r}: return the last sample "
                "(a falsy result is a sample too), await a result only when inspect.isawaitable says so, read a "
                "result that has __aiter__ to its end (each value but None becomes the sample), and let a hook's "
                "error (TypeError included, also one raised in its stream) reach the caller")
    if me["unconsumed"] > it["unconsumed"]:
        return ("a hook's result that async for accepts (it has __aiter__) is a stream: consume it to its end "
                f"with async for before the next hook; {me['unconsumed']} stream(s) were left unread or half-read")
    if me["peak"] > 1:
        return (f"{me['peak']} hooks' results were awaited at once: the hooks run one after another, each on "
                "the previous one's result; await each result before calling the next hook")
    if me["unawaited"] or me["left"]:
        return ("a hook's awaitable result was never awaited, or was still running when apply_hooks ended: "
                "await every awaitable result before going on, and let a cancel of the caller reach it (no shield)")
    if me["ends"] != it["ends"]:
        return (f"when apply_hooks ended, the hooks had {me['ends']}, expected {it['ends']}: when the caller is "
                "cancelled, the hook being awaited is cancelled with it (no shield) and no later hook runs")
    if me["at"] != it["at"]:
        return (f"apply_hooks ended at {_sc.fmt(me['at'])}, expected {_sc.fmt(it['at'])}: it returns as soon "
                "as the last hook's result is in, and ends the moment it is cancelled")
    return None


_sc.differential(apply_hooks, _reference, _scenarios(), _observe, _compare, what="apply_hooks",
                 examples=40, hint="chapter 21", explicit=(
                     _Scenario("s", (_Hook("plain"), _Hook("async", "raise TypeError", 1))),
                     _Scenario("s", (_Hook("returns future", "new", 1), _Hook("async", "new", 2)), 1.5),
                     _Scenario("s", (_Hook("returns stream", "None", 1), _Hook("async generator", "''"), _Hook("plain"))),
                     _Scenario("s", (_Hook("async generator", "new", 1), _Hook("returns stream", "new", 1)), 2.5)))
### END HIDDEN TESTS

# %% [markdown]
# ## Summary
#
# - `inspect.iscoroutinefunction(f)` asks how `f` was written; `inspect.isawaitable(f(x))` asks
#   whether you must await what you got. Only the second answers "must I await this?".
# - `await` and `async for` accept protocols (`__await__`, `__aiter__`/`__anext__`), which the
#   `collections.abc` classes check; only `inspect.isawaitable` also sees a `types.coroutine`
#   generator. Annotations such as `Awaitable[float]` are never checked.
# - An extension point that takes sync or async hooks should call first and check the result.
# - A tracing decorator's span must close after the body. Deciding once with
#   `iscoroutinefunction` and returning an `async def` wrapper covers functions written with
#   `async def`. A plain wrapper's span
#   closes before the body runs, and it hides that the function is async.
#
# **What's next.** [Part V](../book/parts/services.md) goes on to running concurrent
# services, from chapter 22 on.
#
# ## In slime
#
# slime uses both of this chapter's checks at its own extension points: rollout sample hooks
# that users plug in by import path, and a tracing decorator on the per-sample generate step.
# Every static use of these checks is listed in the [source inventory](../book/reference/inventory.md).

# %% tags=["remove-input"]
from lab_snippets.sites import show_call_site

show_call_site("21")

# %% [markdown]
# ### A run: which mistakes does the boundary catch?
#
# A model of the rule quoted above, written for this page (a small `Sample` class stands in
# for slime's): call the hook, await the result when it is awaitable; then `None` keeps the
# sample, a `Sample` replaces it, anything else is a `TypeError`. Three hooks a user might
# write go through it: one edits the sample in place and forgets its `return`; one builds a new
# sample to replace it and forgets its `return` too; the third is an async generator like
# exercise 21.1's streams. **Predict:** which of the three does the boundary report with an
# error, and which sample goes on after each of the other two?

# %%
class Sample:
    """Stands in for slime's Sample: a record a hook may edit in place or replace."""

    def __init__(self, text: str) -> None:
        self.text = text


async def through_boundary(sample: Sample, hook) -> Sample:
    result = hook(sample)
    if inspect.isawaitable(result):
        result = await result
    if result is None:
        return sample
    if not isinstance(result, Sample):
        raise TypeError(f"returned {type(result).__name__}, not a Sample or None")
    return result


# %%
# The three hooks:
def edits_in_place(sample: Sample) -> None:
    sample.text += " (edited)"  # and no `return sample`


def builds_a_new_sample(sample: Sample) -> None:
    rewritten = Sample(sample.text.upper())  # meant to replace the sample
    rewritten.text += " (rewritten)"  # and no `return rewritten`


async def streams_samples(sample: Sample):
    yield Sample(sample.text + " (streamed)")


# %% tags=["hide-output"] mystnb={"code_prompt_show": "Show the answer"}
at_boundary = {}
hooks = {"forgets its return": edits_in_place,
         "new one, no return": builds_a_new_sample,
         "async generator": streams_samples}
for name, hook in hooks.items():
    given = Sample("s")
    try:
        kept = await asyncio.wait_for(through_boundary(given, hook), timeout=2)
        at_boundary[name] = ("no error", kept is given, kept.text)
    except TypeError as exc:
        at_boundary[name] = ("TypeError", str(exc))
    print(f"{name:<20}", *at_boundary[name], sep=" | ")

# %% tags=["claim", "hide-cell"] mystnb={"code_prompt_show": "Show the check"}
# claim: slime-boundary-passes-a-forgotten-return
assert at_boundary["forgets its return"] == ("no error", True, "s (edited)"), (
    "a hook that forgets its return passes silently: the same sample goes on, edited in place")
assert at_boundary["new one, no return"] == ("no error", True, "s"), (
    "a hook that forgets to return its new sample passes silently: the old one goes on, unchanged")
assert at_boundary["async generator"][0] == "TypeError" and "async_generator" in at_boundary["async generator"][1], (
    "an async generator hook is refused, its stream never read")
print("✓ both forgotten returns passed with no error, the new sample dropped; the async generator was refused")

# %% [markdown]
# :::{dropdown} Why
#
# Look at the three printed lines. The hook that forgot its `return` gave `None`, which the
# boundary reads as "keep the sample", and the sample it keeps is the very object the hook
# edited (the `True` on the first line is `kept is given`). So no error, and the edit
# survives. The second hook gave `None` too, so the boundary kept the old sample, still `s`:
# the new sample it built never came back to the caller, and nothing said so. That is the
# costly case, a hook whose whole work is lost without an error. The async generator's call gives an
# `async_generator` object, neither awaitable nor a `Sample`, so the boundary raises a
# `TypeError` and the stream is never read: slime refuses the streaming hooks that exercise
# 21.1 reads to their end.
#
# :::

# %% tags=["remove-input"]
show_call_site("21b")

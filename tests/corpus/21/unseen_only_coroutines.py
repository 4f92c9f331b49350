# mistake: awaits the result only when asyncio.iscoroutine(result) is true
# violates: the result of an object with __await__ that is not a coroutine was not awaited
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "await a result only when it is awaitable" (every awaitable, not only coroutines)
# breaks: a hook returning a Future, a Task or another awaitable object gives that object as the sample
# how: a hook returning an asyncio Future resolved to "f": the sample becomes the Future itself
async def apply_hooks(sample, hooks):
    """Apply each hook in order; await its result only if awaitable; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        if asyncio.iscoroutine(result):
            result = await result
        if result is not None:
            sample = result
    return sample

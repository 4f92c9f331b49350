# mistake: decides by the result, but with inspect.iscoroutine(result) instead of inspect.isawaitable(result)
# violates: with __await__ that is not a coroutine was not awaited
# the red team's words: "every kind of hook above works, decided by its *result* (is it awaitable?) -- a Task or an `__await__` object is passed on unawaited"; from: red team of session 14, who saw the statement only
async def apply_hooks(sample, hooks):
    """Apply each hook in order: await an awaitable result, consume a stream; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        if hasattr(result, "__aiter__"):
            async for value in result:
                if value is not None:
                    sample = value
            continue
        if inspect.iscoroutine(result):
            result = await result
        if result is not None:
            sample = result
    return sample

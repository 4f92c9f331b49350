# mistake: awaits only coroutine objects (inspect.iscoroutine), missing futures and objects with __await__
# violates: test the result with inspect.isawaitable, not iscoroutine
async def apply_hooks(sample, hooks):
    """Apply each hook in order; await its result only if awaitable; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        if inspect.iscoroutine(result):
            result = await result
        if result is not None:
            sample = result
    return sample

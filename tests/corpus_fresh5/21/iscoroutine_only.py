# mistake: asks inspect.iscoroutine(result) instead of inspect.isawaitable(result), so a Task, a Future or an __await__ object is passed on unawaited as the sample
# violates: any awaitable result (not only a coroutine) is awaited, and what it gives becomes the next sample
# from: red team, session 5 (unseen tests)
async def apply_hooks(sample, hooks):
    """Apply each hook in order; await its result only if awaitable; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        if inspect.iscoroutine(result):
            result = await result
        if result is not None:
            sample = result
    return sample

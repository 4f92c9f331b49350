# mistake: awaits a result only when inspect.iscoroutine says so, so a hook that returns another awaitable (a Future, a Task, an object with __await__) hands that awaitable on as the next sample instead of its value
# violates: every kind of hook above works, decided by its *result* (is it awaitable?)
# from: red team, session 4 (unseen tests)
async def apply_hooks(sample, hooks):
    """Apply each hook in order; await its result only if awaitable; None keeps the sample."""
    import inspect

    for hook in hooks:
        result = hook(sample)
        if inspect.iscoroutine(result):
            result = await result
        if result is not None:
            sample = result
    return sample

# mistake: decides by the hook (inspect.iscoroutinefunction) instead of by its result
# violates: "every kind of hook above works, decided by its result (is it awaitable?), not by the function"
# breaks: a plain function returning an awaitable, or an object with async __call__, yields an un-awaited coroutine that becomes the sample
# how: [add_via_adapter] returns a coroutine object instead of "s+async" (and a "never awaited" warning)
async def apply_hooks(sample, hooks):
    """Apply each hook in order; await its result only if awaitable; None keeps the sample."""
    for hook in hooks:
        if inspect.iscoroutinefunction(hook):
            result = await hook(sample)
        else:
            result = hook(sample)
        if result is not None:
            sample = result
    return sample

# mistake: decides whether to await by looking at the hook (iscoroutinefunction) instead of its result
# violates: was not awaited
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

# mistake: always takes the hook's result, so a hook returning None wipes the sample
# violates: a hook returning None keeps the current sample
async def apply_hooks(sample, hooks):
    """Apply each hook in order; await its result only if awaitable; None keeps the sample."""
    for hook in hooks:
        sample = hook(sample)
        if inspect.isawaitable(sample):
            sample = await sample
    return sample

# mistake: tests the hook's result for None before awaiting it
# violates: then test the awaited result for None
# breaks: a hook returning None keeps the current sample (also when the None comes from an awaited result)
# how: tests `result is None` before awaiting; an async hook that returns None turns the sample into None
async def apply_hooks(sample, hooks):
    """Apply each hook in order; await its result only if awaitable; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        if result is None:
            continue
        if inspect.isawaitable(result):
            result = await result
        sample = result
    return sample

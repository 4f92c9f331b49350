# mistake: keeps the sample for any falsy result (sample = result or sample)
# violates: only None keeps the sample
# breaks: only None keeps the sample (a hook may legitimately return a falsy sample: "", 0, {}, [])
# how: `sample = result or sample`, so an empty result is treated like None
async def apply_hooks(sample, hooks):
    """Apply each hook in order; await its result only if awaitable; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        if inspect.isawaitable(result):
            result = await result
        sample = result or sample
    return sample

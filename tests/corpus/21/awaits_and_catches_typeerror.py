# mistake: awaits every result and treats a TypeError as "not awaitable", which also swallows the hook's own errors
# violates: an error raised inside a hook must reach the caller
async def apply_hooks(sample, hooks):
    """Apply each hook in order; await its result only if awaitable; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        try:
            result = await result
        except TypeError:
            pass  # not awaitable: a plain value
        if result is not None:
            sample = result
    return sample

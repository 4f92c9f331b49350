# mistake: awaits every result and treats a TypeError as "not awaitable", which also swallows a TypeError raised inside an async hook
# violates: an error raised inside a hook, a TypeError included, reaches the caller and no later hook is called
# from: red team, session 5 (unseen tests)
async def apply_hooks(sample, hooks):
    """Apply each hook in order; await its result only if awaitable; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        try:
            result = await result
        except TypeError:
            pass  # "object ... can't be used in 'await' expression": a plain result
        if result is not None:
            sample = result
    return sample

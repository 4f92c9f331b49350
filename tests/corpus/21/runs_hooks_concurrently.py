# mistake: runs every hook at once with gather on the original sample instead of one after another
# violates: hooks must run one after another, in order
async def apply_hooks(sample, hooks):
    """Apply each hook in order; await its result only if awaitable; None keeps the sample."""
    async def run(hook):
        result = hook(sample)
        if inspect.isawaitable(result):
            result = await result
        return result

    for result in await asyncio.gather(*(run(hook) for hook in hooks)):
        if result is not None:
            sample = result
    return sample

# mistake: calls every hook in a worker thread (asyncio.to_thread) so a slow sync hook cannot block the loop; a hook that schedules a Task there finds no running loop
# violates: a plain hook was called in thread
# from: red team, session 5 (unseen tests)
async def apply_hooks(sample, hooks):
    """Apply each hook in order; await its result only if awaitable; None keeps the sample."""
    for hook in hooks:
        result = await asyncio.to_thread(hook, sample)
        if inspect.isawaitable(result):
            result = await result
        if result is not None:
            sample = result
    return sample

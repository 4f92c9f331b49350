# mistake: wraps each awaitable result in a task and waits with asyncio.wait, which does not cancel the task when the caller is cancelled
# violates: a caller cancelled while a hook's result is awaited ends at once and that hook is cancelled with it (nothing left running)
# from: red team, session 5 (unseen tests)
async def apply_hooks(sample, hooks):
    """Apply each hook in order; await its result only if awaitable; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        if inspect.isawaitable(result):
            task = asyncio.ensure_future(result)
            await asyncio.wait({task})
            result = task.result()
        if result is not None:
            sample = result
    return sample

# mistake: tests for None before awaiting, so an async hook whose awaited result is None replaces the sample with None
# violates: None keeps the current sample also when it is what an awaited result turns into
# from: red team, session 5 (unseen tests)
async def apply_hooks(sample, hooks):
    """Apply each hook in order; await its result only if awaitable; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        if result is None:
            continue
        if inspect.isawaitable(result):
            sample = await result
        else:
            sample = result
    return sample

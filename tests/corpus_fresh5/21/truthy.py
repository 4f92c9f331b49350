# mistake: keeps the current sample whenever the result is falsy (`result or sample`), not only when it is None
# violates: only None keeps the sample; "", 0, [] and other falsy results become the next sample
# from: red team, session 5 (unseen tests)
async def apply_hooks(sample, hooks):
    """Apply each hook in order; await its result only if awaitable; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        if inspect.isawaitable(result):
            result = await result
        sample = result or sample
    return sample

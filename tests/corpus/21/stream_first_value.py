# mistake: takes only the stream's first value (await anext(result)), as if a stream were one awaitable, and leaves it half-read
# violates: a hook's result that async for accepts (it has __aiter__) is a stream
async def apply_hooks(sample, hooks):
    """Apply each hook in order: await an awaitable result, consume a stream; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        if inspect.isawaitable(result):
            result = await result
        if hasattr(result, "__aiter__"):
            result = await anext(aiter(result), None)
        if result is not None:
            sample = result
    return sample

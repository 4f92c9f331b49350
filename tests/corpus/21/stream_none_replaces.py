# mistake: lets every value the stream yields become the sample, None included, so a stream that ends with None wipes the sample
# violates: a hook's result that async for accepts (it has __aiter__) is a stream
async def apply_hooks(sample, hooks):
    """Apply each hook in order: await an awaitable result, consume a stream; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        if inspect.isawaitable(result):
            result = await result
        if hasattr(result, "__aiter__"):
            async for value in result:
                sample = value
        elif result is not None:
            sample = result
    return sample

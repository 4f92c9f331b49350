# mistake: recognises a stream with isinstance(result, AsyncIterator), which needs __anext__ on the object itself, so a class that has only __aiter__ is passed on as the sample
# violates: a hook's result that async for accepts (it has __aiter__) is a stream
async def apply_hooks(sample, hooks):
    """Apply each hook in order: await an awaitable result, consume a stream; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        if inspect.isawaitable(result):
            result = await result
        if isinstance(result, AsyncIterator):
            async for value in result:
                if value is not None:
                    sample = value
        elif result is not None:
            sample = result
    return sample

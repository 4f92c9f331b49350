# mistake: recognises a stream with inspect.isasyncgen (the check the page's first table cell uses), so a hand-written class with __aiter__ passes on as the sample
# violates: a hook's result that async for accepts (it has __aiter__) is a stream
async def apply_hooks(sample, hooks):
    """Apply each hook in order: await an awaitable result, consume a stream; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        if inspect.isawaitable(result):
            result = await result
        if inspect.isasyncgen(result):
            async for value in result:
                if value is not None:
                    sample = value
        elif result is not None:
            sample = result
    return sample

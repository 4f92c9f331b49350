# mistake: decides that a hook streams by looking at the hook (inspect.isasyncgenfunction), so a plain function or an object that returns a stream is not read
# violates: a hook's result that async for accepts (it has __aiter__) is a stream
async def apply_hooks(sample, hooks):
    """Apply each hook in order: await an awaitable result, consume a stream; None keeps the sample."""
    for hook in hooks:
        if inspect.isasyncgenfunction(hook):
            async for value in hook(sample):
                if value is not None:
                    sample = value
            continue
        result = hook(sample)
        if inspect.isawaitable(result):
            result = await result
        if result is not None:
            sample = result
    return sample

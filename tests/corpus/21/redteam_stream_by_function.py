# mistake: decides "is it a stream?" by the function (inspect.isasyncgenfunction(hook)), awaitables by the result
# violates: is a stream: consume it to its end
# the red team's words: "a result that has `__aiter__` is a stream, whether an `async def` with `yield`, a plain function or an object returned it"; from: red team of session 14, who saw the statement only
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

# mistake: recognises a stream with isinstance(result, AsyncIterator) (the chapter's ABC), which needs __anext__ as well as __aiter__
# violates: is a stream: consume it to its end
# the red team's words: "a result that has `__aiter__` is a stream, ... or a hand-written class that has only `__aiter__`"; from: red team of session 14, who saw the statement only
async def apply_hooks(sample, hooks):
    """Apply each hook in order: await an awaitable result, consume a stream; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        if isinstance(result, AsyncIterator):
            async for value in result:
                if value is not None:
                    sample = value
            continue
        if inspect.isawaitable(result):
            result = await result
        if result is not None:
            sample = result
    return sample

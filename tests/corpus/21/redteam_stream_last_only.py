# mistake: consumes the stream but keeps only its LAST value, so a stream ending on None drops every earlier value
# violates: is a stream: consume it to its end
# the red team's words: "each value it yields except `None` becomes the sample (a stream that yields nothing keeps it)"; from: red team of session 14, who saw the statement only
async def apply_hooks(sample, hooks):
    """Apply each hook in order: await an awaitable result, consume a stream; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        if hasattr(result, "__aiter__"):
            last = None
            async for last in result:  # noqa: B007 - the last value is the point
                pass
            result = last  # the stream's final word
        elif inspect.isawaitable(result):
            result = await result
        if result is not None:
            sample = result
    return sample

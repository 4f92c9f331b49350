# mistake: drives the stream with `anext(it, None)` and stops at the first None, mistaking a yielded None for the end of the stream
# violates: is a stream: consume it to its end
# the red team's words: "it is consumed to its end before the next hook is called, and each value it yields except `None` becomes the sample; no stream is left unfinished"; from: red team of session 14, who saw the statement only
async def apply_hooks(sample, hooks):
    """Apply each hook in order: await an awaitable result, consume a stream; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        if hasattr(result, "__aiter__"):
            stream = aiter(result)
            while (value := await anext(stream, None)) is not None:
                sample = value
            continue
        if inspect.isawaitable(result):
            result = await result
        if result is not None:
            sample = result
    return sample

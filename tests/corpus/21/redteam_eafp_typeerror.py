# mistake: EAFP: tries `async for` on every result and treats a TypeError as "not a stream", swallowing TypeErrors raised inside the stream
# violates: an error raised inside a hook's stream
# the red team's words: "an error raised inside a hook or its stream (a `TypeError` included) reaches the caller; no later hook is called"; from: red team of session 14, who saw the statement only
async def apply_hooks(sample, hooks):
    """Apply each hook in order: await an awaitable result, consume a stream; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        try:
            async for value in result:
                if value is not None:
                    sample = value
            continue
        except TypeError:
            pass  # 'async for' requires an object with __aiter__: not a stream
        if inspect.isawaitable(result):
            result = await result
        if result is not None:
            sample = result
    return sample

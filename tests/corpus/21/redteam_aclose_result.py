# mistake: to leave no stream unfinished, always calls `await result.aclose()` in a finally, which only async generators have
# violates: AttributeError: '_Pieces' object has no attribute 'aclose'
# the red team's words: "a hand-written class that has only `__aiter__` is a stream ...; an error raised inside a hook or its stream reaches the caller"; from: red team of session 14, who saw the statement only
async def apply_hooks(sample, hooks):
    """Apply each hook in order: await an awaitable result, consume a stream; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        if hasattr(result, "__aiter__"):
            try:
                async for value in result:
                    if value is not None:
                        sample = value
            finally:
                await result.aclose()  # no stream left unfinished
            continue
        if inspect.isawaitable(result):
            result = await result
        if result is not None:
            sample = result
    return sample

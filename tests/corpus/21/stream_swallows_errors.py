# mistake: reads the stream by hand and stops at any exception (except Exception: break) instead of StopAsyncIteration, so an error inside the stream is swallowed
# violates: an error raised inside a hook's stream must reach the caller
async def apply_hooks(sample, hooks):
    """Apply each hook in order: await an awaitable result, consume a stream; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        if inspect.isawaitable(result):
            result = await result
        if hasattr(result, "__aiter__"):
            stream = result.__aiter__()
            while True:
                try:
                    value = await stream.__anext__()
                except Exception:
                    break
                if value is not None:
                    sample = value
        elif result is not None:
            sample = result
    return sample

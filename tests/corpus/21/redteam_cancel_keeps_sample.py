# mistake: treats a CancelledError while awaiting a hook like a None result: keeps the sample and moves on to the next hook
# violates: expected ('cancelled',)
# the red team's words: "a caller cancelled while a hook's result or stream is awaited ends at once ... and no later hook is called"; from: red team of session 14, who saw the statement only
async def apply_hooks(sample, hooks):
    """Apply each hook in order: await an awaitable result, consume a stream; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        try:
            if hasattr(result, "__aiter__"):
                async for value in result:
                    if value is not None:
                        sample = value
                continue
            if inspect.isawaitable(result):
                result = await result
        except asyncio.CancelledError:
            continue  # a cancelled hook gives nothing: keep the current sample
        if result is not None:
            sample = result
    return sample

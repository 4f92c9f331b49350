# correct: normalises every result into one async generator of candidate samples (a stream as is, an awaitable as one awaited value, a plain value as itself), so a single `async for` with one `is not None` test applies them all
# from: red team of session 14, who saw the statement only
def _candidates(result):
    if hasattr(result, "__aiter__"):
        return result

    async def one():
        yield (await result) if inspect.isawaitable(result) else result

    return one()


async def apply_hooks(sample, hooks):
    """Apply each hook in order: await an awaitable result, consume a stream; None keeps the sample."""
    for hook in hooks:
        async for value in _candidates(hook(sample)):
            if value is not None:
                sample = value
    return sample

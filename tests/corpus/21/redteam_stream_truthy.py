# mistake: "is not None" for hook results, but a truthiness test (`if value:`) for the values a stream yields
# violates: is a stream: consume it to its end
# the red team's words: "only `None` keeps the current sample ... any other result, falsy ones such as `''`, `0` or `[]` included, becomes the next sample"; from: red team of session 14, who saw the statement only
async def apply_hooks(sample, hooks):
    """Apply each hook in order: await an awaitable result, consume a stream; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        if hasattr(result, "__aiter__"):
            async for value in result:
                if value:  # skip the empty updates
                    sample = value
            continue
        if inspect.isawaitable(result):
            result = await result
        if result is not None:
            sample = result
    return sample

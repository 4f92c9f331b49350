# correct: recognises streams with isinstance(result, collections.abc.AsyncIterable) (true for any class defining __aiter__) and drives them with aiter()/anext() and StopAsyncIteration instead of `async for`
# from: red team of session 14, who saw the statement only
from collections.abc import AsyncIterable


async def apply_hooks(sample, hooks):
    """Apply each hook in order: await an awaitable result, consume a stream; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        if isinstance(result, AsyncIterable):
            iterator = aiter(result)
            while True:
                try:
                    value = await anext(iterator)
                except StopAsyncIteration:
                    break
                if value is not None:
                    sample = value
            continue
        if inspect.isawaitable(result):
            result = await result
        if result is not None:
            sample = result
    return sample

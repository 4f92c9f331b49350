# correct: recognises a stream with collections.abc.AsyncIterable and reads it by hand with aiter/anext until StopAsyncIteration, one None check for both paths
from collections.abc import AsyncIterable as _AsyncIterable


async def apply_hooks(sample, hooks):
    """Apply each hook in order: await an awaitable result, consume a stream; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        if inspect.isawaitable(result):
            result = await result
        values = [result]
        if isinstance(result, _AsyncIterable):
            values, stream = [], aiter(result)
            while True:
                try:
                    values.append(await anext(stream))
                except StopAsyncIteration:
                    break
        for value in values:
            if value is not None:
                sample = value
    return sample

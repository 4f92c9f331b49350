# mistake: turns every awaitable into a Task and waits with asyncio.wait({task}), which does not cancel the task when the caller is cancelled
# violates: was still running when apply_hooks ended
# the red team's words: "a caller cancelled while a hook's result ... is awaited ends at once: that hook is cancelled with it (nothing is left running)"; from: red team of session 14, who saw the statement only
async def apply_hooks(sample, hooks):
    """Apply each hook in order: await an awaitable result, consume a stream; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        if hasattr(result, "__aiter__"):
            async for value in result:
                if value is not None:
                    sample = value
            continue
        if inspect.isawaitable(result):
            task = asyncio.ensure_future(result)  # coroutine, Task or __await__ object alike
            done, _ = await asyncio.wait({task})
            result = done.pop().result()
        if result is not None:
            sample = result
    return sample

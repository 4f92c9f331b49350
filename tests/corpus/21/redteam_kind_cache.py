# mistake: remembers each hook's kind (stream / awaitable / plain) from its first result in a module-level dict, to skip the checks on later calls
# violates: one hook reused across calls
# the red team's words: "every kind of hook above works, decided by its *result* (is it awaitable?), not by the function; no hook's coroutine is left unawaited, a sync result is never awaited"; from: red team of session 14, who saw the statement only
_hook_kind = {}  # hook -> "stream" | "await" | "plain", learned from its first result


async def apply_hooks(sample, hooks):
    """Apply each hook in order: await an awaitable result, consume a stream; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        kind = _hook_kind.get(hook)
        if kind is None:
            if hasattr(result, "__aiter__"):
                kind = "stream"
            elif inspect.isawaitable(result):
                kind = "await"
            else:
                kind = "plain"
            _hook_kind[hook] = kind
        if kind == "stream":
            async for value in result:
                if value is not None:
                    sample = value
            continue
        if kind == "await":
            result = await result
        if result is not None:
            sample = result
    return sample

# mistake: "a bad hook must not break the chain": catches exceptions and keeps the sample
# violates: an error raised inside a hook must reach the caller: await only what is awaitable
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "an error raised inside a hook reaches the caller"
# breaks: a hook that raises is silently skipped
# how: apply_hooks("s", [raising hook]) returns "s" instead of raising
async def apply_hooks(sample, hooks):
    """Apply each hook in order; await its result only if awaitable; None keeps the sample."""
    for hook in hooks:
        try:
            result = hook(sample)
            if inspect.isawaitable(result):
                result = await result
        except Exception:
            continue
        if result is not None:
            sample = result
    return sample

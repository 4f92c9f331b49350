# mistake: tests for None on the raw result, before awaiting it
# violates: or an awaitable) whose result is None keeps the current sample, got None: await first
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "only None keeps the current sample, whether a sync hook returns it or it is what an awaited result turns into"
# breaks: an async hook whose result is None replaces the sample with None
# how: apply_hooks("s", [async def returning None]) returns None instead of "s"
async def apply_hooks(sample, hooks):
    """Apply each hook in order; await its result only if awaitable; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        if result is None:
            continue
        if inspect.isawaitable(result):
            result = await result
        sample = result
    return sample

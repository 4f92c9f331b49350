# mistake: decides by the hook (inspect.iscoroutinefunction) instead of by its result
# violates: the result of a plain function that returns a coroutine was not awaited
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "every kind of hook above works, decided by its result (is it awaitable?), not by the function"
# breaks: a plain function returning an awaitable, or an object with async __call__, yields an un-awaited coroutine that becomes the sample
# how: [add_via_adapter] returns a coroutine object instead of "s+async" (and a "never awaited" warning)
async def apply_hooks(sample, hooks):
    """Apply each hook in order; await its result only if awaitable; None keeps the sample."""
    for hook in hooks:
        if inspect.iscoroutinefunction(hook):
            result = await hook(sample)
        else:
            result = hook(sample)
        if result is not None:
            sample = result
    return sample

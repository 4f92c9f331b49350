# mistake: the answer that was right before the stream twist (session 14): inspect.isawaitable on each result, None check after the await, and no stream handling, so a stream passes on as the sample
# violates: a hook's result that async for accepts (it has __aiter__) is a stream
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
async def apply_hooks(sample, hooks):
    """Apply each hook in order; await its result only if awaitable; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        if inspect.isawaitable(result):
            result = await result
        if result is not None:
            sample = result
    return sample

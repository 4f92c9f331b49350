# mistake: keeps the current sample when the result is falsy (`if result:`) rather than only when it is None
# violates: only None keeps the sample: a hook returned
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "only None keeps the current sample ... any other result, falsy ones such as '', 0 or [] included, becomes the next sample"
# breaks: a hook that returns "" (or 0, []) is ignored
# how: apply_hooks("s", [lambda s: ""]) returns "s" instead of ""
async def apply_hooks(sample, hooks):
    """Apply each hook in order; await its result only if awaitable; None keeps the sample."""
    for hook in hooks:
        result = hook(sample)
        if inspect.isawaitable(result):
            result = await result
        if result:
            sample = result
    return sample

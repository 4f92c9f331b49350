# mistake: the answer that was right before the stream twist (session 14): checks the result's type for __await__ / collections.abc.Awaitable with a while-style reduce, and has no stream handling
# violates: a hook's result that async for accepts (it has __aiter__) is a stream
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
from collections.abc import Awaitable as _Awaitable

async def apply_hooks(sample, hooks):
    """Apply each hook in order; await its result only if awaitable; None keeps the sample."""
    current = sample
    for hook in list(hooks):
        outcome = hook(current)
        if isinstance(outcome, _Awaitable) or inspect.isawaitable(outcome):
            outcome = await outcome
        current = current if outcome is None else outcome
    return current

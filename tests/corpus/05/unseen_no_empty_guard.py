# mistake: forgets that asyncio.wait refuses an empty set
# violates: drain raised ValueError
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "An empty set drains to (0, 0)"; "drain never raises"
# breaks: drain(set(), ...) raises ValueError
# how: await drain(set(), 0.1)
async def drain(tasks: set[asyncio.Task], grace: float, cleanup_budget: float = 1.0) -> tuple[int, int]:
    """Wait up to `grace` s, cancel what is left, wait for its cleanup; return (finished, cancelled)."""
    done, pending = await asyncio.wait(tasks, timeout=grace)
    for t in pending:
        t.cancel()
    if pending:
        await asyncio.wait(pending, timeout=cleanup_budget)
    return (len(done), len(pending))

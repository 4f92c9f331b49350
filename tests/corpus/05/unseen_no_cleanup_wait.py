# mistake: cancels what is left after the grace period and returns at once
# violates: wait for the cancelled tasks' cleanup before returning
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "wait (at most cleanup_budget seconds) until the cancelled tasks have finished their cleanup"
# breaks: when drain returns, the cancelled tasks' finally blocks (freeing their slot) have not run
# how: one 5 s request, grace 0.05: on return `freed` is empty and the task is not done
async def drain(tasks: set[asyncio.Task], grace: float, cleanup_budget: float = 1.0) -> tuple[int, int]:
    """Wait up to `grace` s, cancel what is left, wait for its cleanup; return (finished, cancelled)."""
    if not tasks:
        return (0, 0)
    done, pending = await asyncio.wait(tasks, timeout=grace)
    for t in pending:
        t.cancel()
    return (len(done), len(pending))

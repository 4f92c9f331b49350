# mistake: waits for the cancelled tasks with gather(return_exceptions=True) and no time limit
# violates: drain waited for a cleanup longer than cleanup_budget: bound the wait for the cancelled
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "wait (at most cleanup_budget seconds)"; "never takes longer than their sum"
# breaks: a task whose cleanup is slow (or that swallows the cancel) holds drain for as long as it likes
# how: a task whose finally sleeps 1 s, grace 0.05, cleanup_budget 0.1: drain takes ~1 s
async def drain(tasks: set[asyncio.Task], grace: float, cleanup_budget: float = 1.0) -> tuple[int, int]:
    """Wait up to `grace` s, cancel what is left, wait for its cleanup; return (finished, cancelled)."""
    if not tasks:
        return (0, 0)
    done, pending = await asyncio.wait(tasks, timeout=grace)
    for t in pending:
        t.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    return (len(done), len(pending))

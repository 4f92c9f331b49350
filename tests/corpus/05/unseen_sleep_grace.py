# mistake: sleeps the whole grace period, then looks at which tasks are done
# violates: drain waited out the grace period although every task had finished: return as soon as all
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "return early if they all finish sooner"; "a return as soon as every task is done"
# breaks: drain always takes `grace` seconds even when every task finished in 10 ms
# how: two 0.01 s requests, grace 0.5: drain takes 0.5 s
async def drain(tasks: set[asyncio.Task], grace: float, cleanup_budget: float = 1.0) -> tuple[int, int]:
    """Wait up to `grace` s, cancel what is left, wait for its cleanup; return (finished, cancelled)."""
    await asyncio.sleep(grace)
    done = [t for t in tasks if t.done()]
    pending = [t for t in tasks if not t.done()]
    for t in pending:
        t.cancel()
    if pending:
        await asyncio.wait(pending, timeout=cleanup_budget)
    return (len(done), len(pending))

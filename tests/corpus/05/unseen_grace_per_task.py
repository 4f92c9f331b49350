# mistake: gives each task its own grace with wait_for(shield(t), grace), one after the other
# violates: bound the whole drain, not each task
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "grace and cleanup_budget bound the whole drain (not each task), so it never takes longer than their sum"
# breaks: with several slow tasks the drain takes n * grace
# how: three 5 s requests, grace 0.1, cleanup_budget 0.1: drain takes ~0.35 s instead of <= 0.2 s
async def drain(tasks: set[asyncio.Task], grace: float, cleanup_budget: float = 1.0) -> tuple[int, int]:
    """Wait up to `grace` s, cancel what is left, wait for its cleanup; return (finished, cancelled)."""
    finished = cancelled = 0
    late = []
    for t in tasks:
        try:
            await asyncio.wait_for(asyncio.shield(t), grace)
            finished += 1
        except asyncio.TimeoutError:
            t.cancel()
            late.append(t)
            cancelled += 1
        except Exception:
            finished += 1
    if late:
        await asyncio.wait(late, timeout=cleanup_budget)
    return (finished, cancelled)

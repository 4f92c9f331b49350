# mistake: waits out the grace with wait_for(shield(gather(*tasks))), so a task's error escapes drain
# violates: "A task that ended with an error during the grace period counts as finished; drain itself must not raise"
# from: red team, session 7 (unseen tests)
import asyncio
async def drain(tasks, grace, cleanup_budget=1.0):
    tasks = set(tasks)
    if not tasks:
        return (0, 0)
    try:
        await asyncio.wait_for(asyncio.shield(asyncio.gather(*tasks)), grace)
    except TimeoutError:
        pass
    pending = [t for t in tasks if not t.done()]
    for t in pending:
        t.cancel()
    if pending:
        await asyncio.wait(pending, timeout=cleanup_budget)
    return (len(tasks) - len(pending), len(pending))

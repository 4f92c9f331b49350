# mistake: counts at the end from task state (done and not cancelled / cancelled), so a task still cleaning up is counted nowhere
# violates: "cancelled: every task still running after the grace period" (counts), with "a cleanup longer than cleanup_budget, which is left to run"
# from: red team, session 7 (unseen tests)
import asyncio
async def drain(tasks, grace, cleanup_budget=1.0):
    tasks = set(tasks)
    if not tasks:
        return (0, 0)
    done, pending = await asyncio.wait(tasks, timeout=grace)
    for t in pending:
        t.cancel()
    if pending:
        await asyncio.wait(pending, timeout=cleanup_budget)
    finished = sum(1 for t in tasks if t.done() and not t.cancelled())
    cancelled = sum(1 for t in tasks if t.cancelled())
    return (finished, cancelled)

# mistake: gives each task its own grace with wait_for(shield(t), grace), one after another
# violates: "grace and cleanup_budget bound the whole drain (not each task), so it never takes longer than their sum"
# from: red team, session 7 (unseen tests)
import asyncio
async def drain(tasks, grace, cleanup_budget=1.0):
    finished, pending = 0, []
    for t in list(tasks):
        try:
            await asyncio.wait_for(asyncio.shield(t), grace)
            finished += 1
        except TimeoutError:
            pending.append(t)
        except Exception:
            finished += 1
    for t in pending:
        t.cancel()
    if pending:
        await asyncio.wait(pending, timeout=cleanup_budget)
    return (finished, len(pending))

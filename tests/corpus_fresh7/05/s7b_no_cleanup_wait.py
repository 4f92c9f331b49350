# mistake: cancels the leftover tasks and returns at once, without waiting for their cleanup
# violates: "every cancelled task's cleanup is over when drain returns"
# from: red team, session 7 (unseen tests)
import asyncio
async def drain(tasks, grace, cleanup_budget=1.0):
    tasks = set(tasks)
    if not tasks:
        return (0, 0)
    done, pending = await asyncio.wait(tasks, timeout=grace)
    for t in pending:
        t.cancel()
    return (len(done), len(pending))

# mistake: counts finished as len(tasks) - len(pending) after the grace, reading the live set that has already shrunk
# violates: "return (finished_on_their_own, cancelled)" with tasks "as a session's running set, which drops each task as it finishes"
# from: red team, session 7 (unseen tests)
import asyncio
async def drain(tasks, grace, cleanup_budget=1.0):
    if not tasks:
        return (0, 0)
    done, pending = await asyncio.wait(tasks, timeout=grace)
    for t in pending:
        t.cancel()
    if pending:
        await asyncio.wait(pending, timeout=cleanup_budget)
    return (len(tasks) - len(pending), len(pending))

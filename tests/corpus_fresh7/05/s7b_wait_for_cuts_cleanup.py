# mistake: bounds the cleanup with wait_for(gather(...)), which cancels the tasks a second time on timeout
# violates: "a cleanup longer than cleanup_budget, which is left to run, not cut short" / "each cancelled once"
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
        try:
            await asyncio.wait_for(asyncio.gather(*pending, return_exceptions=True), cleanup_budget)
        except TimeoutError:
            pass
    return (len(done), len(pending))

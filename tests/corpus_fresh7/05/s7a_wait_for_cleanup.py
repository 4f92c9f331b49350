# mistake: bounds the cleanup with wait_for(gather(...)), whose timeout cancels the tasks a second time
# violates: cleanup -- a cleanup longer than cleanup_budget "is left to run, not cut short"; "each cancelled once"
# from: red team, session 7 (unseen tests)
async def drain(tasks: set[asyncio.Task], grace: float, cleanup_budget: float = 1.0) -> tuple[int, int]:
    tasks = set(tasks)
    if not tasks:
        return (0, 0)
    done, pending = await asyncio.wait(tasks, timeout=grace)
    for task in pending:
        task.cancel()
    if pending:
        try:
            await asyncio.wait_for(asyncio.gather(*pending, return_exceptions=True), cleanup_budget)
        except TimeoutError:
            pass
    return (len(done), len(pending))

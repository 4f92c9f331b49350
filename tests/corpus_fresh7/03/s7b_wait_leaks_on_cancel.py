# mistake: asyncio.wait(FIRST_EXCEPTION) handles errors, but a cancel of the caller leaves the calls running
# violates: "when the caller cancels score_group, it ends cancelled once the calls are cleaned up"
# from: red team, session 7 (unseen tests)
import asyncio
async def score_group(names, score_one):
    tasks = [asyncio.create_task(score_one(n)) for n in names]
    if not tasks:
        return []
    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    errors = [t.exception() for t in done if t.exception() is not None]
    if errors:
        for t in pending:
            t.cancel()
        await asyncio.wait(pending)
        raise ExceptionGroup("score_group failed", errors)
    return [t.result() for t in tasks]

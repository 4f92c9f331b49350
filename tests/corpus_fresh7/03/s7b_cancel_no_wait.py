# mistake: on error cancels the other tasks but raises without waiting for their cleanup
# violates: "cancel the others, wait until they are gone" / "not earlier (no call left running)"
# from: red team, session 7 (unseen tests)
import asyncio
async def score_group(names, score_one):
    tasks = [asyncio.create_task(score_one(n)) for n in names]
    try:
        return list(await asyncio.gather(*tasks))
    except Exception as e:
        for t in tasks:
            t.cancel()
        raise ExceptionGroup("score_group failed", [e])

# mistake: uses plain asyncio.gather: on error raises the bare exception and leaves the other calls running
# violates: "if any call fails, cancel the others, wait until they are gone, and let the failure propagate as an ExceptionGroup"
# from: red team, session 7 (unseen tests)
import asyncio
async def score_group(names, score_one):
    return list(await asyncio.gather(*(score_one(n) for n in names)))

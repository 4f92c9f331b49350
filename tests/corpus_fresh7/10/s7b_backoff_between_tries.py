# mistake: sleeps an exponential backoff (0.05 s, 0.1 s, ...) before each retry
# violates: "at most attempts per user, the next at once after a failure"
# from: red team, session 7 (unseen tests)
import asyncio
from contextlib import asynccontextmanager
@asynccontextmanager
async def booted(factory, permits, attempts=3):
    resource, last = None, None
    for n in range(attempts):
        if n:
            await asyncio.sleep(0.05 * 2 ** (n - 1))
        candidate = factory()
        try:
            async with permits:
                await candidate.boot()
        except Exception as e:
            await candidate.close()
            last = e
            continue
        except BaseException:
            await candidate.close()
            raise
        resource = candidate
        break
    if resource is None:
        raise last
    try:
        yield resource
    finally:
        await resource.close()

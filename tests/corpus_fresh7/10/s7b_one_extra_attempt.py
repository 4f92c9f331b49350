# mistake: counts retries instead of attempts (first try + attempts retries), so it boots attempts+1 times
# violates: "try at most attempts times to boot"
# from: red team, session 7 (unseen tests)
import asyncio
from contextlib import asynccontextmanager
@asynccontextmanager
async def booted(factory, permits, attempts=3):
    tries = 0
    while True:
        resource = factory()
        try:
            async with permits:
                await resource.boot()
        except Exception:
            await resource.close()
            if tries >= attempts:
                raise
            tries += 1
            continue
        except BaseException:
            await resource.close()
            raise
        break
    try:
        yield resource
    finally:
        await resource.close()

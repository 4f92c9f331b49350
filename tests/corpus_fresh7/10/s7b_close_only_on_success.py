# mistake: closes the booted resource after the yield without try/finally, so only a normal exit closes it
# violates: "await resource.close() when the caller's block ends, on every path: normal exit, an exception, or cancellation"
# from: red team, session 7 (unseen tests)
import asyncio
from contextlib import asynccontextmanager
@asynccontextmanager
async def booted(factory, permits, attempts=3):
    last = None
    for _ in range(attempts):
        resource = factory()
        try:
            async with permits:
                await resource.boot()
        except Exception as e:
            await resource.close()
            last = e
            continue
        except BaseException:
            await resource.close()
            raise
        yield resource
        await resource.close()
        return
    raise last

# mistake: when every attempt fails, raises a new RuntimeError (chained from the last error) instead of the last error
# violates: "when every attempt fails, raise the last error" / "the last boot error does [come out]"
# from: red team, session 7 (unseen tests)
import asyncio
from contextlib import asynccontextmanager
@asynccontextmanager
async def booted(factory, permits, attempts=3):
    resource, last = None, None
    for _ in range(attempts):
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
        raise RuntimeError(f"boot failed after {attempts} attempts") from last
    try:
        yield resource
    finally:
        await resource.close()

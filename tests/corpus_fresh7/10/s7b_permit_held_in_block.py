# mistake: takes the permit around the whole boot-and-use, so it is held while the caller's block runs
# violates: "holding one permit of permits only while boot() runs" / "a user's boot starts as soon as a permit is free"
# from: red team, session 7 (unseen tests)
import asyncio
from contextlib import asynccontextmanager
@asynccontextmanager
async def booted(factory, permits, attempts=3):
    async with permits:
        last = None
        for _ in range(attempts):
            resource = factory()
            try:
                await resource.boot()
            except Exception as e:
                await resource.close()
                last = e
                continue
            except BaseException:
                await resource.close()
                raise
            try:
                yield resource
            finally:
                await resource.close()
            return
        raise last

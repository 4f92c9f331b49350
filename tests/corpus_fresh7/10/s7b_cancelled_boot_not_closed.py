# mistake: closes a candidate only when boot() raises an Exception; a boot interrupted by cancellation leaks its candidate
# violates: "closed: ... a candidate whose boot was cancelled (it may be half open)"
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
        try:
            yield resource
        finally:
            await resource.close()
        return
    raise last

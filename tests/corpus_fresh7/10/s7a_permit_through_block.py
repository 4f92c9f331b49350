# mistake: holds the permit for the whole life of the resource, not only while boot() runs
# violates: boots -- "the permit held only while boot() runs, so a user's boot starts as soon as a permit is free"
# from: red team, session 7 (unseen tests)
@asynccontextmanager
async def booted(factory, permits: asyncio.Semaphore, attempts: int = 3):
    async with permits:
        last_error = None
        for _ in range(attempts):
            resource = factory()
            try:
                await resource.boot()
            except Exception as exc:
                last_error = exc
                await resource.close()
                continue
            try:
                yield resource
            finally:
                await resource.close()
            return
        raise last_error

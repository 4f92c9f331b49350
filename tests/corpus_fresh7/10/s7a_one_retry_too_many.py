# mistake: reads "try again" as retries after a first try: boots up to attempts + 1 times
# violates: boots -- "at most attempts per user"
# from: red team, session 7 (unseen tests)
@asynccontextmanager
async def booted(factory, permits: asyncio.Semaphore, attempts: int = 3):
    tries = 0
    while True:
        resource = factory()
        try:
            async with permits:
                await resource.boot()
        except BaseException as exc:
            await resource.close()
            if not isinstance(exc, Exception) or tries >= attempts:
                raise
            tries += 1
            continue
        break
    try:
        yield resource
    finally:
        await resource.close()

# mistake: waits with an exponential backoff (0.05 s, 0.1 s, ...) between failed boots
# violates: boots -- "the next at once after a failure"
# from: red team, session 7 (unseen tests)
@asynccontextmanager
async def booted(factory, permits: asyncio.Semaphore, attempts: int = 3):
    last_error = None
    for attempt in range(attempts):
        if attempt:
            await asyncio.sleep(0.05 * 2 ** (attempt - 1))
        resource = factory()
        try:
            async with permits:
                await resource.boot()
        except BaseException as exc:
            await resource.close()
            if not isinstance(exc, Exception):
                raise
            last_error = exc
            continue
        break
    else:
        raise last_error
    try:
        yield resource
    finally:
        await resource.close()

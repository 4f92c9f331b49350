# mistake: closes a candidate only when boot() raises an Exception, not when the boot is cancelled
# violates: closed -- "a candidate whose boot was cancelled (it may be half open)" must be closed
# from: red team, session 7 (unseen tests)
@asynccontextmanager
async def booted(factory, permits: asyncio.Semaphore, attempts: int = 3):
    last_error = None
    for _ in range(attempts):
        resource = factory()
        try:
            async with permits:
                await resource.boot()
        except Exception as exc:
            last_error = exc
            await resource.close()
            continue
        break
    else:
        raise last_error
    try:
        yield resource
    finally:
        await resource.close()

# mistake: closes the resource after the yield without try/finally, so a raising or cancelled block leaves it open
# violates: closed -- "the booted resource on every way out of the block"
# from: red team, session 7 (unseen tests)
@asynccontextmanager
async def booted(factory, permits: asyncio.Semaphore, attempts: int = 3):
    last_error = None
    for _ in range(attempts):
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
    yield resource
    await resource.close()

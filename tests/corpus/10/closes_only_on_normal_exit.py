# mistake: closes the resource after the yield without a finally, so an exception skips it
# violates: closed when the body raises
@asynccontextmanager
async def booted(factory, permits: asyncio.Semaphore, attempts: int = 3):
    """Boot a resource from `factory` under one permit of `permits`, retrying up to `attempts` times;
    yield it, and close it on every way out of the caller's block."""
    last_error = None
    resource = None
    for _ in range(attempts):
        candidate = factory()
        async with permits:
            try:
                await candidate.boot()
            except Exception as exc:
                last_error = exc
                await candidate.close()
                continue
        resource = candidate
        break
    if resource is None:
        raise last_error
    yield resource
    await resource.close()

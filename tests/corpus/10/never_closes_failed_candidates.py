# mistake: moves on to the next attempt without closing the candidate whose boot failed
# violates: candidates whose boot failed
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
                continue
        resource = candidate
        break
    if resource is None:
        raise last_error
    try:
        yield resource
    finally:
        await resource.close()

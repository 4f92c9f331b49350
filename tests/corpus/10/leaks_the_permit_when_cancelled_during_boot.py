# mistake: acquires and releases the permit by hand; a cancellation during boot skips the release
# violates: a permit was lost
@asynccontextmanager
async def booted(factory, permits: asyncio.Semaphore, attempts: int = 3):
    """Boot a resource from `factory` under one permit of `permits`, retrying up to `attempts` times;
    yield it, and close it on every way out of the caller's block."""
    last_error = None
    resource = None
    for _ in range(attempts):
        candidate = factory()
        await permits.acquire()
        try:
            await candidate.boot()
        except Exception as exc:
            permits.release()
            last_error = exc
            await candidate.close()
            continue
        permits.release()
        resource = candidate
        break
    if resource is None:
        raise last_error
    try:
        yield resource
    finally:
        await resource.close()

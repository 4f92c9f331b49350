# mistake: waits a short exponential backoff (10 ms, 20 ms, ...) before each retry, as retry loops "should", so the next boot does not start at once after a failure
# violates: the next at once after a failure
# from: red team, session 4 (unseen tests)
@asynccontextmanager
async def booted(factory, permits: asyncio.Semaphore, attempts: int = 3):
    """Boot a resource from `factory` under one permit of `permits`, retrying up to `attempts` times;
    yield it, and close it on every way out of the caller's block."""
    last_error = None
    resource = None
    for attempt in range(attempts):
        if attempt:
            await asyncio.sleep(0.01 * 2 ** (attempt - 1))  # back off a little before retrying
        candidate = factory()
        try:
            async with permits:
                await candidate.boot()
        except Exception as exc:
            last_error = exc
            await candidate.close()
            continue
        except BaseException:
            await candidate.close()
            raise
        resource = candidate
        break
    if resource is None:
        raise last_error
    try:
        yield resource
    finally:
        await resource.close()

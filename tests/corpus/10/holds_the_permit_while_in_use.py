# mistake: yields inside the permit block, so the permit is held for the whole use
# violates: released once booted
@asynccontextmanager
async def booted(factory, permits: asyncio.Semaphore, attempts: int = 3):
    """Boot a resource from `factory` under one permit of `permits`, retrying up to `attempts` times;
    yield it, and close it on every way out of the caller's block."""
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

# mistake: catches the body's exception around the yield to log it, and so suppresses it
# violates: must propagate out of the async with block
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
    try:
        yield resource
    except Exception as exc:
        print("resource user failed:", exc)
    finally:
        await resource.close()

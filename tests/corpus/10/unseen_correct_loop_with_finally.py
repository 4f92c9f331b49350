# correct: for-loop of attempts, `async with permits` around boot only, candidate closed on any failure of boot, try/finally around yield
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
@asynccontextmanager
async def booted(factory, permits: asyncio.Semaphore, attempts: int = 3):
    """Boot a resource from `factory` under one permit of `permits`, retrying up to `attempts` times;
    yield it, and close it on every way out of the caller's block."""
    last_error = None
    resource = None
    for _ in range(attempts):
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

# correct: a nested helper boots with explicit acquire/release; the yield is guarded by try/finally
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
@asynccontextmanager
async def booted(factory, permits: asyncio.Semaphore, attempts: int = 3):
    """Boot a resource from `factory` under one permit of `permits`, retrying up to `attempts` times;
    yield it, and close it on every way out of the caller's block."""
    async def boot_once():
        candidate = factory()
        ok = False
        await permits.acquire()
        try:
            await candidate.boot()
            ok = True
        finally:
            permits.release()
            if not ok:
                await candidate.close()
        return candidate

    errors = []
    resource = None
    while resource is None:
        try:
            resource = await boot_once()
        except Exception as exc:
            errors.append(exc)
            if len(errors) >= attempts:
                raise errors[-1]
    try:
        yield resource
    finally:
        await resource.close()

# mistake: acquires and releases the permit by hand around boot(), without a try/finally
# violates: TimeoutError
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "holding one permit of permits only while boot() runs" (it must come back when boot fails too)
# breaks: every failed boot keeps its permit; with Semaphore(1) the retry waits forever
# how: fail_first=1, Semaphore(1): the second attempt never gets a permit (hangs until a timeout)
@asynccontextmanager
async def booted(factory, permits: asyncio.Semaphore, attempts: int = 3):
    """Boot a resource from `factory` under one permit of `permits`, retrying up to `attempts` times;
    yield it, and close it on every way out of the caller's block."""
    last_error = None
    for _ in range(attempts):
        resource = factory()
        await permits.acquire()
        try:
            await resource.boot()
            permits.release()
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

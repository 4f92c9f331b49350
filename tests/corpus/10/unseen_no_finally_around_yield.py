# mistake: closes the resource after the yield, but not in a finally
# violates: the resource must be closed when the body raises: close it in a finally around the yield
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "await resource.close() when the caller's block ends, on every path: normal exit, an exception, or cancellation"
# breaks: when the caller's block raises (or is cancelled) the resource is never closed
# how: `async with booted(...): raise RuntimeError` leaves ledger.open == 1
@asynccontextmanager
async def booted(factory, permits: asyncio.Semaphore, attempts: int = 3):
    """Boot a resource from `factory` under one permit of `permits`, retrying up to `attempts` times;
    yield it, and close it on every way out of the caller's block."""
    last_error = None
    for _ in range(attempts):
        resource = factory()
        try:
            async with permits:
                await resource.boot()
        except Exception as exc:
            last_error = exc
            await resource.close()
            continue
        yield resource
        await resource.close()
        return
    raise last_error

# correct: closes a failed candidate only when boot() raises an Exception, as the reference does: the Graded list asks for every permit back when the caller is cancelled while it boots, and for failed candidates closed, and a candidate whose boot was cancelled has not failed
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; sent in as a wrong answer (closes a candidate only when boot() raises an Exception; a cancellation during boot skips the close; the red team's reading: resource "closed on every path ... or cancellation" (nothing left open when the caller is cancelled)), the first run accepted it
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
        try:
            yield resource
        finally:
            await resource.close()
        return
    raise last_error

# mistake: closes a candidate only when boot() raises an Exception; a cancellation during boot skips the close
# violates: resource "closed on every path ... or cancellation" (nothing left open when the caller is cancelled)
# breaks: a caller cancelled while boot() runs leaves the half-booted candidate open
# how: cancel the caller 10 ms into a 0.1 s boot: ledger.open == 1 afterwards
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

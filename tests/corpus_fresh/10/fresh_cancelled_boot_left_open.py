# mistake: closes a candidate only when boot() raises an Exception, so a caller cancelled while its boot runs leaves that half-booted candidate open
# violates: every failed candidate
# from: red team, session 4 (unseen tests)
@asynccontextmanager
async def booted(factory, permits: asyncio.Semaphore, attempts: int = 3):
    """Boot a resource from `factory` under one permit of `permits`, retrying up to `attempts` times;
    yield it, and close it on every way out of the caller's block."""
    last_error = None
    for _ in range(attempts):
        candidate = factory()
        try:
            async with permits:
                await candidate.boot()
        except Exception as exc:
            last_error = exc
            await candidate.close()
            continue
        try:
            yield candidate
        finally:
            await candidate.close()
        return
    raise last_error

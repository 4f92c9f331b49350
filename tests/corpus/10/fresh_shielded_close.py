# mistake: shields the final close() so that a cancel cannot interrupt it, but a caller cancelled while that close runs gets its CancelledError at once and leaves the `async with` while close() is still running
# violates: the `async with` ends once its `close()` has finished
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
        except BaseException as exc:
            await asyncio.shield(candidate.close())
            if not isinstance(exc, Exception):
                raise
            last_error = exc
            continue
        try:
            yield candidate
        finally:
            await asyncio.shield(candidate.close())  # a cancel must not cut the close short
        return
    raise last_error

# mistake: acquires the permit inside the try whose finally releases it, so a caller cancelled while it waits for a permit releases one it never held and later users boot more at once than there are permits
# violates: never more boots at once than permits
# from: red team, session 4 (unseen tests)
@asynccontextmanager
async def booted(factory, permits: asyncio.Semaphore, attempts: int = 3):
    """Boot a resource from `factory` under one permit of `permits`, retrying up to `attempts` times;
    yield it, and close it on every way out of the caller's block."""
    last_error = None
    for _ in range(attempts):
        candidate = factory()
        try:
            try:
                await permits.acquire()
                await candidate.boot()
            finally:
                permits.release()
        except Exception as exc:
            last_error = exc
            await candidate.close()
            continue
        except BaseException:
            await candidate.close()
            raise
        try:
            yield candidate
        finally:
            await candidate.close()
        return
    raise last_error

# correct: shields the final close() from a cancel, and when the caller is cancelled meanwhile, waits for that close() to finish before letting the CancelledError out
# from: s5holesB (issue 37), the counterpart of fresh_shielded_close
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
            await candidate.close()
            last_error = exc
            continue
        except BaseException:
            await candidate.close()
            raise
        try:
            yield candidate
        finally:
            closing = asyncio.ensure_future(candidate.close())
            try:
                await asyncio.shield(closing)
            except asyncio.CancelledError:
                await closing  # the block ends once close() has finished
                raise
        return
    raise last_error

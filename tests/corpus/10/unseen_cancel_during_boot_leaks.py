# mistake: closes a failed candidate only when boot() raises an Exception; a candidate whose boot is cancelled is left half open
# violates: still open after the cancelled async with ended
# from: the unseen red team (issue 37), who never saw the tests; first graded correct, as the reference then also left a cancelled boot's candidate open; the reference now closes it (session 4), as the red team's reading of the contract asked
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

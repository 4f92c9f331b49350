# mistake: remembers only the first boot error and re-raises it when every attempt fails
# violates: when every attempt fails, the last boot error comes out || still open after the cancelled async with ended
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "when every attempt fails, raise the last error"; it also leaves a candidate whose boot was cancelled open, which the reference closes since session 4
# breaks: the caller sees the first failure, not the last
# how: boots fail with ConnectionError("boot 1"), ("boot 2"), ("boot 3"): the raised error says "boot 1"
@asynccontextmanager
async def booted(factory, permits: asyncio.Semaphore, attempts: int = 3):
    """Boot a resource from `factory` under one permit of `permits`, retrying up to `attempts` times;
    yield it, and close it on every way out of the caller's block."""
    first_error = None
    for _ in range(attempts):
        resource = factory()
        try:
            async with permits:
                await resource.boot()
        except Exception as exc:
            if first_error is None:
                first_error = exc
            await resource.close()
            continue
        try:
            yield resource
        finally:
            await resource.close()
        return
    raise first_error

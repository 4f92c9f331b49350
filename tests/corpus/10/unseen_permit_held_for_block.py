# mistake: wraps the whole thing, yield included, in `async with permits`
# violates: the permit must be released once booted, not held during use: with
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "holding one permit of permits only while boot() runs"
# breaks: the permit stays taken for the caller's whole block, so with Semaphore(1) a second booter waits for the first user to finish
# how: two callers on Semaphore(1), each holding the resource 0.2 s: the second boot starts only after the first block ends
@asynccontextmanager
async def booted(factory, permits: asyncio.Semaphore, attempts: int = 3):
    """Boot a resource from `factory` under one permit of `permits`, retrying up to `attempts` times;
    yield it, and close it on every way out of the caller's block."""
    async with permits:
        last_error = None
        for _ in range(attempts):
            resource = factory()
            try:
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

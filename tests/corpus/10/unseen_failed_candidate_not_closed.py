# mistake: on a failed boot just tries a new candidate, forgetting to close the one that failed
# violates: resources still open after every user left: every resource, including the candidates
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "when boot() raises an Exception, close that candidate ... and try again"
# breaks: every failed attempt leaves a half-open resource behind
# how: fail_first=2: after the block, ledger.open == 2
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
            continue
        try:
            yield resource
        finally:
            await resource.close()
        return
    raise last_error

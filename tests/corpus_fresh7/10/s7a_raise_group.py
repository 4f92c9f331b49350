# mistake: when every attempt fails, raises an ExceptionGroup of all boot errors instead of the last one
# violates: the block -- "when every attempt fails, the last boot error does [come out]"
# from: red team, session 7 (unseen tests)
@asynccontextmanager
async def booted(factory, permits: asyncio.Semaphore, attempts: int = 3):
    errors = []
    for _ in range(attempts):
        resource = factory()
        try:
            async with permits:
                await resource.boot()
        except BaseException as exc:
            await resource.close()
            if not isinstance(exc, Exception):
                raise
            errors.append(exc)
            continue
        break
    else:
        raise ExceptionGroup(f"boot failed {len(errors)} times", errors)
    try:
        yield resource
    finally:
        await resource.close()

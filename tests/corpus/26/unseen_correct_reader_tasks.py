# correct: two reader tasks + proc.wait() gathered under asyncio.timeout; cleanup in finally kills the group unless everything completed, then waits for the leader and the readers
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
async def run_tool(argv: list[str], timeout: float) -> tuple[int, bytes, bytes]:
    """Run argv as its own process group; return (code, out, err) or kill the group on timeout."""
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        start_new_session=True)
    readers = [asyncio.ensure_future(proc.stdout.read()), asyncio.ensure_future(proc.stderr.read())]
    completed = False
    try:
        async with asyncio.timeout(timeout):
            out, err, code = await asyncio.gather(readers[0], readers[1], proc.wait())
        completed = True
        return code, out, err
    finally:
        if not completed:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            await proc.wait()
            for r in readers:
                r.cancel()
            await asyncio.gather(*readers, return_exceptions=True)

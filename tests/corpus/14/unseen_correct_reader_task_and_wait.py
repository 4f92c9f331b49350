# correct: a reader task drains stdout while asyncio.wait({proc.wait()}, timeout) waits for the exit; explicit kill/reap helper used on timeout and on cancellation
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
async def run_harness_owned(sandbox: MiniSandbox, task: str, work: float, budget: float,
                            hang: bool = False) -> tuple[int, str | None]:
    """Run the harness child with a budget; kill and reap it on timeout or cancellation."""
    proc = await sandbox.start(harness_command(task, work, hang=hang, max_life=3))
    reader = asyncio.ensure_future(proc.stdout.read())
    exited = asyncio.ensure_future(proc.wait())

    async def kill_and_reap():
        if proc.returncode is None:
            proc.kill()
        await asyncio.wait_for(asyncio.gather(exited, reader), timeout=REAP_TIMEOUT)
        sandbox.forget(proc)

    try:
        done, _ = await asyncio.wait({exited}, timeout=budget)
    except BaseException:
        await kill_and_reap()
        raise
    if not done:
        await kill_and_reap()
        return BUDGET_EXCEEDED, None
    out = await asyncio.wait_for(reader, timeout=REAP_TIMEOUT)
    sandbox.forget(proc)
    result = parse_result(out.decode())
    return proc.returncode, (result["diff"] if result else None)

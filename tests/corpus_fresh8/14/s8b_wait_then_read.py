# mistake: waits for the exit with proc.wait() under the budget and reads the output afterwards; a child that writes more than the pipe holds blocks and never exits
# violates: result -- "`(returncode, diff)` once the child finishes ... perhaps after writing 200 KB"
# from: red team, session 8 (unseen tests)
async def run_harness_owned(sandbox: MiniSandbox, task: str, work: float, budget: float,
                            hang: bool = False) -> tuple[int, str | None]:
    """Run the harness child with a budget; kill and reap it on timeout or cancellation."""
    proc = await sandbox.start(harness_command(task, work, hang=hang, max_life=3))
    try:
        async with asyncio.timeout(budget):
            await proc.wait()
    except BaseException as exc:
        if proc.returncode is None:
            proc.kill()
        async with asyncio.timeout(REAP_TIMEOUT):
            await proc.communicate()
        sandbox.forget(proc)
        if isinstance(exc, TimeoutError):
            return BUDGET_EXCEEDED, None
        raise
    out, _ = await proc.communicate()
    sandbox.forget(proc)
    result = parse_result(out.decode())
    return proc.returncode, result["diff"] if result else None

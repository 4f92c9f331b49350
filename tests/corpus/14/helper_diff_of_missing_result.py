# mistake: reads the diff from the result line without checking that the child printed one
# violates: the diff of its result line or None
# from: written by the helper who wrote the generators (issue 37)
async def run_harness_owned(sandbox: MiniSandbox, task: str, work: float, budget: float,
                            hang: bool = False) -> tuple[int, str | None]:
    """Run the harness child with a budget; kill and reap it on timeout or cancellation."""
    proc = await sandbox.start(harness_command(task, work, hang=hang, max_life=3))
    try:
        async with asyncio.timeout(budget):
            out, _ = await proc.communicate()
    except BaseException as exc:
        proc.kill()
        async with asyncio.timeout(2):
            await proc.communicate()
        sandbox.forget(proc)
        if isinstance(exc, TimeoutError):
            return BUDGET_EXCEEDED, None
        raise
    sandbox.forget(proc)
    return proc.returncode, parse_result(out.decode())["diff"]

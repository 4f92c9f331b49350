# mistake: stops the child with terminate() (SIGTERM), which a child may ignore
# violates: the cancellation propagated
# from: written by the helper who wrote the generators (issue 37)
async def run_harness_owned(sandbox: MiniSandbox, task: str, work: float, budget: float,
                            hang: bool = False) -> tuple[int, str | None]:
    """Run the harness child with a budget; kill and reap it on timeout or cancellation."""
    proc = await sandbox.start(harness_command(task, work, hang=hang, max_life=3))
    try:
        async with asyncio.timeout(budget):
            out, _ = await proc.communicate()
    except TimeoutError:
        proc.terminate()
        async with asyncio.timeout(2):
            await proc.communicate()
        sandbox.forget(proc)
        return BUDGET_EXCEEDED, None
    except asyncio.CancelledError:
        proc.terminate()
        async with asyncio.timeout(2):
            await proc.communicate()
        sandbox.forget(proc)
        raise
    sandbox.forget(proc)
    result = parse_result(out.decode())
    return proc.returncode, result["diff"] if result else None

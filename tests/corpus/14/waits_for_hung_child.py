# mistake: waits for the child with no bound, so a hung harness runs until it ends by itself
# violates: must kill the hung child when the budget runs out
async def run_harness_owned(sandbox: MiniSandbox, task: str, work: float, budget: float,
                            hang: bool = False) -> tuple[int, str | None]:
    """Run the harness child with a budget; kill and reap it on timeout or cancellation."""
    proc = await sandbox.start(harness_command(task, work, hang=hang, max_life=3))
    try:
        out, _ = await proc.communicate()
    except asyncio.CancelledError:
        proc.kill()
        await asyncio.wait_for(proc.communicate(), timeout=2)
        sandbox.forget(proc)
        raise
    sandbox.forget(proc)
    result = parse_result(out.decode())
    return proc.returncode, result["diff"] if result else None

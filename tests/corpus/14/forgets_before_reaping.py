# mistake: tells the sandbox the child is gone right after kill(), before waiting for it
# violates: only after reaping
async def run_harness_owned(sandbox: MiniSandbox, task: str, work: float, budget: float,
                            hang: bool = False) -> tuple[int, str | None]:
    """Run the harness child with a budget; kill and reap it on timeout or cancellation."""
    proc = await sandbox.start(harness_command(task, work, hang=hang, max_life=3))
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout=budget)
    except (TimeoutError, asyncio.CancelledError) as exc:
        proc.kill()
        sandbox.forget(proc)
        await asyncio.wait_for(proc.communicate(), timeout=2)
        if isinstance(exc, asyncio.CancelledError):
            raise
        return BUDGET_EXCEEDED, None
    sandbox.forget(proc)
    result = parse_result(out.decode())
    return proc.returncode, result["diff"] if result else None

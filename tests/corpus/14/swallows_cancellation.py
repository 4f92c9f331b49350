# mistake: on cancellation kills and reaps the child, then returns a result instead of re-raising
# violates: the cancellation must propagate
async def run_harness_owned(sandbox: MiniSandbox, task: str, work: float, budget: float,
                            hang: bool = False) -> tuple[int, str | None]:
    """Run the harness child with a budget; kill and reap it on timeout or cancellation."""
    proc = await sandbox.start(harness_command(task, work, hang=hang, max_life=3))
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout=budget)
    except (TimeoutError, asyncio.CancelledError):
        proc.kill()
        await asyncio.wait_for(proc.communicate(), timeout=2)
        sandbox.forget(proc)
        return BUDGET_EXCEEDED, None
    sandbox.forget(proc)
    result = parse_result(out.decode())
    return proc.returncode, result["diff"] if result else None

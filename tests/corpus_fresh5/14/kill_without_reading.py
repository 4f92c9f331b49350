# mistake: after the budget runs out it kills and waits for the child but never reads the rest of its output
# violates: on timeout the child's output is read to the end before the step returns
# from: red team, session 5 (unseen tests)
async def run_harness_owned(sandbox: MiniSandbox, task: str, work: float, budget: float,
                            hang: bool = False) -> tuple[int, str | None]:
    """Run the harness child with a budget; kill and reap it on timeout or cancellation."""
    proc = await sandbox.start(harness_command(task, work, hang=hang, max_life=3))
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout=budget)
    except BaseException:  # budget ran out, or we were cancelled
        proc.kill()
        await asyncio.wait_for(proc.wait(), timeout=REAP_TIMEOUT)
        sandbox.forget(proc)
        if asyncio.current_task().cancelling():
            raise
        return BUDGET_EXCEEDED, None
    sandbox.forget(proc)
    result = parse_result(out.decode())
    return proc.returncode, result["diff"] if result else None

# mistake: waits for the child with proc.wait() and reads its stdout only afterwards, so a child that writes more than the pipe holds never exits
# violates: (returncode, diff) as soon as the child finishes, also when it writes 200 KB (no pipe deadlock)
# from: red team, session 5 (unseen tests)
async def run_harness_owned(sandbox: MiniSandbox, task: str, work: float, budget: float,
                            hang: bool = False) -> tuple[int, str | None]:
    """Run the harness child with a budget; kill and reap it on timeout or cancellation."""
    proc = await sandbox.start(harness_command(task, work, hang=hang, max_life=3))
    try:
        await asyncio.wait_for(proc.wait(), timeout=budget)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        await proc.stdout.read()
        sandbox.forget(proc)
        return BUDGET_EXCEEDED, None
    except asyncio.CancelledError:
        proc.kill()
        await proc.wait()
        await proc.stdout.read()
        sandbox.forget(proc)
        raise
    out = await proc.stdout.read()
    sandbox.forget(proc)
    result = parse_result(out.decode())
    return proc.returncode, result["diff"] if result else None

# mistake: keeps run_harness's polling loop (sleep, then look at returncode) and adds the kill; it reads stdout only after the exit
# violates: the result comes from a wait woken by the child's end (no timer), and a child writing 200 KB is not stuck on a full pipe
# from: red team, session 5 (unseen tests)
async def run_harness_owned(sandbox: MiniSandbox, task: str, work: float, budget: float,
                            hang: bool = False) -> tuple[int, str | None]:
    """Run the harness child with a budget; kill and reap it on timeout or cancellation."""
    proc = await sandbox.start(harness_command(task, work, hang=hang, max_life=3))
    deadline = time.monotonic() + budget
    try:
        while proc.returncode is None and time.monotonic() < deadline:
            await asyncio.sleep(min(0.05, max(0.0, deadline - time.monotonic())))
    finally:
        if proc.returncode is None:
            proc.kill()
        async with asyncio.timeout(REAP_TIMEOUT):
            out, _ = await proc.communicate()
        sandbox.forget(proc)
    if proc.returncode < 0:
        return BUDGET_EXCEEDED, None
    result = parse_result(out.decode())
    return proc.returncode, result["diff"] if result else None

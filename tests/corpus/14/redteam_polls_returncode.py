# mistake: keeps the chapter's polling loop (sleep 0.02 and look at returncode) and only adds the kill and reap (red team, issue 28)
# violates: polled
# breaks: wait for the child without polling
# how: keeps the chapter polling loop (sleep 0.02 and look at returncode) and only adds the kill and reap
async def run_harness_owned(sandbox: MiniSandbox, task: str, work: float, budget: float,
                            hang: bool = False) -> tuple[int, str | None]:
    """Run the harness child with a budget; kill and reap it on timeout or cancellation."""
    proc = await sandbox.start(harness_command(task, work, hang=hang, max_life=3))
    deadline = time.monotonic() + budget
    try:
        while proc.returncode is None and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        if proc.returncode is None:
            proc.kill()
            await asyncio.wait_for(proc.communicate(), timeout=REAP_TIMEOUT)
            sandbox.forget(proc)
            return BUDGET_EXCEEDED, None
        out, _ = await asyncio.wait_for(proc.communicate(), timeout=REAP_TIMEOUT)
        sandbox.forget(proc)
        result = parse_result(out.decode())
        return proc.returncode, result["diff"] if result else None
    except asyncio.CancelledError:
        if proc.returncode is None:
            proc.kill()
        await asyncio.wait_for(proc.communicate(), timeout=REAP_TIMEOUT)
        sandbox.forget(proc)
        raise

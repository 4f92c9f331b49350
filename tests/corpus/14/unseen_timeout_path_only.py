# mistake: handles the budget (kill + reap + forget) but has no cleanup for cancellation
# violates: the child must be killed and reaped before the cancellation left the step: catch
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "if the step is cancelled, kill and reap the child, and let the cancellation propagate"
# breaks: a cancelled step leaves its child running (it is killed only later by the sandbox's close, if ever)
# how: cancel the step while the child hangs: right after the CancelledError, the child process is still running
async def run_harness_owned(sandbox: MiniSandbox, task: str, work: float, budget: float,
                            hang: bool = False) -> tuple[int, str | None]:
    """Run the harness child with a budget; kill and reap it on timeout or cancellation."""
    proc = await sandbox.start(harness_command(task, work, hang=hang, max_life=3))
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout=budget)
    except TimeoutError:
        proc.kill()
        await proc.communicate()
        sandbox.forget(proc)
        return BUDGET_EXCEEDED, None
    sandbox.forget(proc)
    result = parse_result(out.decode())
    return proc.returncode, (result["diff"] if result else None)

# mistake: reaps the killed child with proc.wait() only, never reading the rest of its output
# violates: the step did not return within || hung child that keeps writing
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "kill the child and reap it (wait for it and read its output to the end)"
# breaks: the child's stdout pipe is left unread and open after the step returns (transport not at EOF)
# how: a hung child that keeps writing, budget 0.5 s: after the step, proc.stdout.at_eof() is False
async def run_harness_owned(sandbox: MiniSandbox, task: str, work: float, budget: float,
                            hang: bool = False) -> tuple[int, str | None]:
    """Run the harness child with a budget; kill and reap it on timeout or cancellation."""
    proc = await sandbox.start(harness_command(task, work, hang=hang, max_life=3))
    try:
        await asyncio.wait_for(proc.wait(), timeout=budget)
    except BaseException as exc:
        proc.kill()
        await proc.wait()
        sandbox.forget(proc)
        if isinstance(exc, TimeoutError):
            return BUDGET_EXCEEDED, None
        raise
    out = await proc.stdout.read()
    sandbox.forget(proc)
    result = parse_result(out.decode())
    return proc.returncode, (result["diff"] if result else None)

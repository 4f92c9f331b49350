# mistake: uses the blocking subprocess.run(..., timeout=...) inside the coroutine
# violates: heartbeats while the tool ran: run_tool blocked the event loop
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "start argv with asyncio.create_subprocess_exec"; "never block the event loop"
# breaks: the loop is frozen for the tool's whole run (and on timeout subprocess.run kills only the leader)
# how: a 0.5 s tool while a heartbeat task runs: the heartbeat sees a 0.5 s gap
async def run_tool(argv: list[str], timeout: float) -> tuple[int, bytes, bytes]:
    """Run argv as its own process group; return (code, out, err) or kill the group on timeout."""
    try:
        done = subprocess.run(argv, capture_output=True, timeout=timeout, start_new_session=True)
    except subprocess.TimeoutExpired as exc:
        raise TimeoutError(str(exc)) from None
    return done.returncode, done.stdout, done.stderr

# mistake: calls subprocess.run inside the async def, so the event loop waits for the child
# violates: blocked the event loop
async def run_tool(argv: list[str], timeout: float) -> tuple[int, bytes, bytes]:
    """Run argv as its own process group; return (code, out, err) or kill the group on timeout."""
    try:
        done = subprocess.run(argv, capture_output=True, timeout=timeout, start_new_session=True)
    except subprocess.TimeoutExpired as exc:
        raise TimeoutError(f"{argv[0]} ran longer than {timeout} s") from exc
    return done.returncode, done.stdout, done.stderr

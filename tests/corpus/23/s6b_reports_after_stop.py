# mistake: waits with stop.wait(poll) but ignores what it returns and checks the stop flag only at the top of the loop, so it still reports once after stop is set
# violates: report nothing after stop
# from: red team, session 6 (unseen tests)
def watch_progress(progress, stall: float, reports: list[str], stop: threading.Event,
                   loop: asyncio.AbstractEventLoop | None = None, poll: float = 0.01) -> None:
    """Append format_all_stacks(loop) to `reports` once each time `progress()` stalls for `stall` s."""
    last = progress()
    changed_at = time.monotonic()
    reported = False
    while not stop.is_set():
        stop.wait(poll)
        current = progress()
        now = time.monotonic()
        if current != last:
            last, changed_at, reported = current, now, False
        elif not reported and now - changed_at >= stall:
            reports.append(format_all_stacks(loop))
            reported = True

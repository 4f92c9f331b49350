# mistake: treats only a larger number as progress (a counter only goes up), so progress that wraps around to smaller values looks like a stall
# violates: no false alarm: a number that comes back to an earlier value has still changed
# from: red team, session 6 (unseen tests)
def watch_progress(progress, stall: float, reports: list[str], stop: threading.Event,
                   loop: asyncio.AbstractEventLoop | None = None, poll: float = 0.01) -> None:
    """Append format_all_stacks(loop) to `reports` once each time `progress()` stalls for `stall` s."""
    best = progress()
    changed_at = time.monotonic()
    reported = False
    while not stop.wait(poll):
        current = progress()
        now = time.monotonic()
        if current > best:
            best, changed_at, reported = current, now, False
        elif not reported and now - changed_at >= stall:
            reports.append(format_all_stacks(loop))
            reported = True

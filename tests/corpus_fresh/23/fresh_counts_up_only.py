# mistake: treats progress as a counter that only grows and counts a change only when the number is larger than the last one, so progress that wraps around to smaller values looks like a stall and is reported while the service works
# violates: a number that comes back to an earlier value has still changed
# from: red team, session 4 (unseen tests)
def watch_progress(progress, stall: float, reports: list[str], stop: threading.Event,
                   loop: asyncio.AbstractEventLoop | None = None, poll: float = 0.01) -> None:
    """Append format_all_stacks(loop) to `reports` once each time `progress()` stalls for `stall` s."""
    best = progress()
    changed_at = time.monotonic()
    reported = False
    while not stop.wait(poll):
        now, value = time.monotonic(), progress()
        if value > best:
            best, changed_at, reported = value, now, False
        elif not reported and now - changed_at >= stall:
            reports.append(format_all_stacks(loop))
            reported = True

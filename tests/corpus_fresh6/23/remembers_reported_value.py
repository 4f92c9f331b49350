# mistake: remembers the progress number it last reported at and never reports at that number again
# violates: a new report for each later stall, even one at a number an earlier stall was reported at (progress may wrap around)
# from: red team, session 6 (unseen tests)
def watch_progress(progress, stall: float, reports: list[str], stop: threading.Event,
                   loop: asyncio.AbstractEventLoop | None = None, poll: float = 0.01) -> None:
    """Append format_all_stacks(loop) to `reports` once each time `progress()` stalls for `stall` s."""
    last = progress()
    changed_at = time.monotonic()
    reported_at = None  # the number the current stall was reported at
    while not stop.wait(poll):
        current = progress()
        now = time.monotonic()
        if current != last:
            last, changed_at = current, now
        elif current != reported_at and now - changed_at >= stall:
            reports.append(format_all_stacks(loop))
            reported_at = current

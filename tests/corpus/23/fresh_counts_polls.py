# mistake: measures the stall by counting unchanged polls (count * poll >= stall) instead of reading the clock, so when progress() or the report is slow, or a poll oversleeps, the stall is reported late
# violates: about `stall` seconds after progress stopped
# from: red team, session 4 (unseen tests)
def watch_progress(progress, stall: float, reports: list[str], stop: threading.Event,
                   loop: asyncio.AbstractEventLoop | None = None, poll: float = 0.01) -> None:
    """Append format_all_stacks(loop) to `reports` once each time `progress()` stalls for `stall` s."""
    last = progress()
    unchanged = 0
    reported = False
    while not stop.wait(poll):
        value = progress()
        if value != last:
            last, unchanged, reported = value, 0, False
            continue
        unchanged += 1
        if not reported and unchanged * poll >= stall - 1e-9:
            reports.append(format_all_stacks(loop))
            reported = True

# mistake: measures the stall by counting unchanged polls (polls × poll), which runs slow when a wait wakes late
# violates: a stall is reported about `stall` seconds after the last change, measured on the clock, not later
# from: red team, session 6 (unseen tests)
def watch_progress(progress, stall: float, reports: list[str], stop: threading.Event,
                   loop: asyncio.AbstractEventLoop | None = None, poll: float = 0.01) -> None:
    """Append format_all_stacks(loop) to `reports` once each time `progress()` stalls for `stall` s."""
    last = progress()
    unchanged = 0
    reported = False
    while not stop.wait(poll):
        current = progress()
        if current != last:
            last, unchanged, reported = current, 0, False
            continue
        unchanged += 1
        if not reported and unchanged * poll >= stall:
            reports.append(format_all_stacks(loop))
            reported = True

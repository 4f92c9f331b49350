# mistake: keeps "once per stall" by remembering the value it last reported and never reporting that value again, so a later stall at a value it had before (a counter that wrapped around) is not reported
# violates: must report the next stall
# from: red team, session 4 (unseen tests)
def watch_progress(progress, stall: float, reports: list[str], stop: threading.Event,
                   loop: asyncio.AbstractEventLoop | None = None, poll: float = 0.01) -> None:
    """Append format_all_stacks(loop) to `reports` once each time `progress()` stalls for `stall` s."""
    last = progress()
    changed_at = time.monotonic()
    reported_value = object()
    while not stop.wait(poll):
        now, value = time.monotonic(), progress()
        if value != last:
            last, changed_at = value, now
        elif value != reported_value and now - changed_at >= stall:
            reports.append(format_all_stacks(loop))
            reported_value = value

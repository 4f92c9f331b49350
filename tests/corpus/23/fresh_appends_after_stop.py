# mistake: sleeps with time.sleep(poll) and looks at `stop` only at the top of the loop, so a stall whose time is reached during the poll in which stop is set is still reported after stop
# violates: report nothing after stop
# from: red team, session 4 (unseen tests)
def watch_progress(progress, stall: float, reports: list[str], stop: threading.Event,
                   loop: asyncio.AbstractEventLoop | None = None, poll: float = 0.01) -> None:
    """Append format_all_stacks(loop) to `reports` once each time `progress()` stalls for `stall` s."""
    last = progress()
    changed_at = time.monotonic()
    reported = False
    while not stop.is_set():
        time.sleep(poll)
        now, value = time.monotonic(), progress()
        if value != last:
            last, changed_at, reported = value, now, False
        elif not reported and now - changed_at >= stall:
            reports.append(format_all_stacks(loop))
            reported = True

# mistake: looks at progress once every `stall` seconds instead of every `poll`, and reports when two looks agree
# violates: a stall is reported about `stall` seconds after the last change, within a poll or two, not up to another `stall` later
# from: red team, session 6 (unseen tests)
def watch_progress(progress, stall: float, reports: list[str], stop: threading.Event,
                   loop: asyncio.AbstractEventLoop | None = None, poll: float = 0.01) -> None:
    """Append format_all_stacks(loop) to `reports` once each time `progress()` stalls for `stall` s."""
    last = progress()
    reported = False
    while not stop.wait(stall):  # nothing can be a stall sooner than this
        current = progress()
        if current != last:
            last, reported = current, False
        elif not reported:
            reports.append(format_all_stacks(loop))
            reported = True

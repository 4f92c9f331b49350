# mistake: a single "already reported" flag that is never cleared
# violates: 1 report(s) for 2 stalls: after progress resumes, the watchd
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "one report per stall, and a new one for the next stall"
# breaks: the second stall is never reported
# how: two stall windows separated by progress: 1 report instead of 2
def watch_progress(progress, stall: float, reports: list[str], stop: threading.Event,
                   loop: asyncio.AbstractEventLoop | None = None, poll: float = 0.01) -> None:
    """Append format_all_stacks(loop) to `reports` once each time `progress()` stalls for `stall` s."""
    last = progress()
    changed_at = time.monotonic()
    reported = False
    while not stop.wait(poll):
        value = progress()
        if value != last:
            last, changed_at = value, time.monotonic()
        elif not reported and time.monotonic() - changed_at >= stall:
            reports.append(format_all_stacks(loop))
            reported = True

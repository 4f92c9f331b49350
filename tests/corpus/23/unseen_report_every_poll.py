# mistake: appends a report on every poll while the stall lasts
# violates: one stall, so one report, not
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "report once per stall: no second report until progress has resumed and stalled again"
# breaks: a long stall produces dozens of reports
# how: stall 0.1, one 0.35 s window without progress: ~25 reports instead of 1
def watch_progress(progress, stall: float, reports: list[str], stop: threading.Event,
                   loop: asyncio.AbstractEventLoop | None = None, poll: float = 0.01) -> None:
    """Append format_all_stacks(loop) to `reports` once each time `progress()` stalls for `stall` s."""
    last = progress()
    changed_at = time.monotonic()
    while not stop.wait(poll):
        value = progress()
        if value != last:
            last, changed_at = value, time.monotonic()
        elif time.monotonic() - changed_at >= stall:
            reports.append(format_all_stacks(loop))

# mistake: keeps a "report at" deadline pushed forward on every change, but sleeps with time.sleep(poll) and checks stop.is_set() only at the top of the loop, so a stall whose time comes during the poll in which stop is set is reported after stop (graded correct until session 5: the same path as fresh_appends_after_stop)
# violates: report nothing after stop
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
def watch_progress(progress, stall: float, reports: list[str], stop: threading.Event,
                   loop: asyncio.AbstractEventLoop | None = None, poll: float = 0.01) -> None:
    """Append format_all_stacks(loop) to `reports` once each time `progress()` stalls for `stall` s."""
    seen = progress()
    report_at = time.monotonic() + stall
    while not stop.is_set():
        time.sleep(poll)
        current = progress()
        if current != seen:
            seen = current
            report_at = time.monotonic() + stall
        elif report_at is not None and time.monotonic() >= report_at:
            reports.append(format_all_stacks(loop))
            report_at = None

# mistake: after a report, waits in an inner loop for progress to resume, without looking at `stop`
# violates: did not return soon after stop was set
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "return soon after stop (a threading.Event) is set"
# breaks: if stop is set during a stall, the watchdog keeps spinning until progress resumes (never, for a real hang)
# how: stall window lasting past the end of the run: the watchdog thread is still alive 1 s after stop
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
            while progress() == last:
                time.sleep(poll)

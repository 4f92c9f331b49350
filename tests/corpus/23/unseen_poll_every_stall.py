# mistake: samples progress once per `stall` and reports when two samples are equal
# violates: Call progress() every `poll` seconds, not every `stall`
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "a stall is reported about stall seconds after progress stopped ... not much later (so check every poll seconds, not every stall)"
# breaks: the report comes up to 2 x stall after progress stopped
# how: stall 0.2, progress stops at 0.05: report at ~0.4 s (0.35 s after) instead of ~0.25 s
def watch_progress(progress, stall: float, reports: list[str], stop: threading.Event,
                   loop: asyncio.AbstractEventLoop | None = None, poll: float = 0.01) -> None:
    """Append format_all_stacks(loop) to `reports` once each time `progress()` stalls for `stall` s."""
    last = progress()
    reported = False
    while not stop.wait(stall):
        value = progress()
        if value != last:
            last, reported = value, False
        elif not reported:
            reports.append(format_all_stacks(loop))
            reported = True

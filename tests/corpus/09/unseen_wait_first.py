# mistake: `while not stop.wait(interval): check()`, the idiom from the chapter, without the first call
# violates: must run right away, before the first wait of `interval`
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "calls check() once right away, then once every interval seconds"
# breaks: the first check() comes only after a whole interval
# how: interval 2 s: no call within the first 0.5 s
def start_periodic_check(check, interval: float, stop: threading.Event) -> threading.Thread:
    """Start a thread that calls check() now and every `interval` s until `stop` is set."""
    def run():
        while not stop.wait(interval):
            check()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread

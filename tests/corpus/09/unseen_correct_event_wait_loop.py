# correct: loop on stop.wait(interval), checking the event before every call
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
def start_periodic_check(check, interval: float, stop: threading.Event) -> threading.Thread:
    """Start a thread that calls check() now and every `interval` s until `stop` is set."""
    def run():
        while not stop.is_set():
            check()
            if stop.wait(interval):
                return

    thread = threading.Thread(target=run, name="periodic-check", daemon=True)
    thread.start()
    return thread

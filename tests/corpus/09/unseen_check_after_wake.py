# mistake: waits on the event, then calls check() before testing the loop condition again
# violates: was called again after stop was set: test stop after every wait, before the next call
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "never calls check() again once stop is set"
# breaks: setting stop wakes the thread promptly, but it makes one more check() call on the way out
# how: interval 2 s, stop set after the first call: a second check() happens after stop was set
def start_periodic_check(check, interval: float, stop: threading.Event) -> threading.Thread:
    """Start a thread that calls check() now and every `interval` s until `stop` is set."""
    def run():
        check()
        while not stop.is_set():
            stop.wait(interval)
            check()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread

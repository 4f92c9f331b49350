# mistake: chains threading.Timer objects, each re-arming the next, and returns the first timer
# violates: ran in a thread other than the one returned: call it in that thread || must return the thread it started
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: the returned thread must be the one that runs the checks and "ends promptly when stop is set"
# breaks: the returned thread ends after the first call; the re-armed timer thread is left sleeping (up to an interval) after stop is set and joined
# how: interval 2 s, stop set and returned thread joined: another Timer thread is still alive
def start_periodic_check(check, interval: float, stop: threading.Event) -> threading.Thread:
    """Start a thread that calls check() now and every `interval` s until `stop` is set."""
    def tick():
        if stop.is_set():
            return
        check()
        nxt = threading.Timer(interval, tick)
        nxt.daemon = True
        nxt.start()

    first = threading.Timer(0, tick)
    first.daemon = True
    first.start()
    return first

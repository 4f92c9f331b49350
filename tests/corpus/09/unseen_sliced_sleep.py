# mistake: makes the pause "interruptible" by sleeping it in ten slices and looking at `stop` between slices
# violates: slow to stop: the thread ended
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "the thread ends within half a second of stop being set, however long the interval"
# breaks: the reaction time grows with the interval (interval / 10): with a 10 s interval, stopping takes up to 1 s
# how: interval 10 s, stop set 0.3 s in: join(timeout=0.5) returns with the thread still alive
def start_periodic_check(check, interval: float, stop: threading.Event) -> threading.Thread:
    """Start a thread that calls check() now and every `interval` s until `stop` is set."""
    def run():
        while not stop.is_set():
            check()
            for _ in range(10):
                if stop.is_set():
                    return
                time.sleep(interval / 10)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread

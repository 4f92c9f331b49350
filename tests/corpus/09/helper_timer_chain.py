# mistake: a chain of threading.Timer, each firing the next, returned as the first timer
# violates: check() ran in a thread other than the one returned || must return the thread it started
# from: written by the helper who wrote the generators (issue 37)
def start_periodic_check(check, interval: float, stop: threading.Event) -> threading.Thread:
    def tick() -> None:
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

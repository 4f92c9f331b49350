# mistake: schedules rounds at a fixed rate (start to start), subtracting the round's duration from the pause
# violates: rounds too close
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "checks every engine in turn, then waits interval seconds, then checks again"; "the rounds are interval apart, not closer"
# breaks: when checks are slow, the next round starts soon after the previous one ends
# how: checks taking 0.15 s, interval 0.2: rounds start 0.2 s apart, only ~0.05 s between the end of one and the start of the next
class HealthMonitor:
    def __init__(self, engines: dict, ping, get, kill, interval: float, timeout: float):
        self.engines = dict(engines)
        self.ping, self.get, self.kill = ping, get, kill
        self.interval, self.timeout = interval, timeout
        self.killed: list[str] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="HealthMonitor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        while not self._stop.is_set():
            self._round_start = time.monotonic()
            for name, handle in list(self.engines.items()):
                if self._stop.is_set():
                    return
                try:
                    self.get(self.ping(handle), self.timeout)
                except Exception:
                    del self.engines[name]
                    self.killed.append(name)
                    try:
                        self.kill(handle)
                    except Exception:
                        pass
            if self._stop.wait(max(0.0, self._round_start + self.interval - time.monotonic())):
                return

# correct: a threading.Condition + "stopping" flag; the pause waits on the condition until a monotonic deadline; a set of dead names filters the rounds
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/
class HealthMonitor:
    def __init__(self, engines: dict, ping, get, kill, interval: float, timeout: float):
        self._engines = engines
        self._ping, self._get, self._kill = ping, get, kill
        self._interval, self._timeout = interval, timeout
        self.killed: list[str] = []
        self._dead: set = set()
        self._cv = threading.Condition()
        self._stopping = False
        self._thread = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="HealthMonitor")
        self._thread.start()

    def stop(self) -> None:
        with self._cv:
            self._stopping = True
            self._cv.notify_all()
        if self._thread is not None:
            self._thread.join(self._timeout + 5)

    def _pause(self) -> bool:
        until = time.monotonic() + self._interval
        with self._cv:
            while not self._stopping:
                left = until - time.monotonic()
                if left <= 0:
                    break
                self._cv.wait(left)
            return self._stopping

    def _run(self) -> None:
        while True:
            for name in [n for n in self._engines if n not in self._dead]:
                with self._cv:
                    if self._stopping:
                        return
                handle = self._engines[name]
                try:
                    self._get(self._ping(handle), self._timeout)
                    continue
                except Exception:
                    pass
                self._dead.add(name)
                self.killed.append(name)
                try:
                    self._kill(handle)
                except Exception:
                    pass
            if self._pause():
                return

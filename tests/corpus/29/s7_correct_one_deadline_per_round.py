# correct: pings every engine at once, then waits for the answers against one deadline for the round; since an answer's time counts from its ping (the statement: the call runs from then on), every engine still gets its whole timeout
# from: red team, session 7 (unseen tests), sent in as a wrong answer under a model where an engine starts answering only when waited for; session 8's statement says the time counts from the ping
class HealthMonitor:
    def __init__(self, engines: dict, ping, get, kill, interval: float, timeout: float):
        self.engines = dict(engines)
        self.ping, self.get, self.kill = ping, get, kill
        self.interval, self.timeout = interval, timeout
        self.killed: list = []
        self._stop = threading.Event()
        self._thread = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="HealthMonitor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _fail(self, name, handle) -> None:
        self.killed.append(name)
        self.kill(handle)

    def _run(self) -> None:
        while not self._stop.is_set():
            refs = {}
            for name, handle in list(self.engines.items()):
                if name in self.killed:
                    continue
                try:
                    refs[name] = self.ping(handle)
                except Exception:
                    self._fail(name, handle)
            deadline = time.monotonic() + self.timeout  # the round's checks run side by side
            for name, ref in refs.items():
                if self._stop.is_set():
                    return
                try:
                    self.get(ref, max(0.0, deadline - time.monotonic()))
                except Exception:
                    self._fail(name, self.engines[name])
            self._stop.wait(self.interval)

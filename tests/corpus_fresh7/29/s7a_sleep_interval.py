# mistake: waits between rounds with time.sleep(interval), which stop() cannot interrupt
# violates: stop() -- "returns promptly, even in the middle of an interval" / "within about timeout, even with a long interval"
# from: red team, session 7 (unseen tests)
class HealthMonitor:
    def __init__(self, engines: dict, ping, get, kill, interval: float, timeout: float):
        self.engines = dict(engines)
        self.ping, self.get, self.kill = ping, get, kill
        self.interval, self.timeout = interval, timeout
        self.killed: list = []
        self._running = False
        self._thread = None

    def start(self) -> None:
        self._running = True
        self._thread = threading.Thread(target=self._run, name="HealthMonitor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._running = False
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        while self._running:
            for name, handle in list(self.engines.items()):
                if not self._running:
                    return
                if name in self.killed:
                    continue
                try:
                    self.get(self.ping(handle), self.timeout)
                except Exception:
                    self.killed.append(name)
                    self.kill(handle)
            time.sleep(self.interval)

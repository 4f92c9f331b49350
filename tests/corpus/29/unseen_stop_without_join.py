# mistake: stop() only sets the event ("the thread will notice")
# violates: left running after stop(): join the monitor's thread || stop() joins
# from: the unseen red team (issue 37), who never saw the tests; first-run figures in tests/corpus_unseen/; the property in the red team's words: "stop() ... leaves no thread"
# breaks: when stop() returns, the monitor thread is still running (e.g. in the middle of a check)
# how: stop() during a 0.5 s check: the "HealthMonitor" thread is alive right after stop() returns
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

    def _run(self) -> None:
        while not self._stop.is_set():
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
            if self._stop.wait(self.interval):
                return

# correct: a class with __enter__/__exit__ instead of @contextmanager; the token lives on the instance and __exit__ ignores reset's ValueError and returns False
# from: red team of session 13 (had not seen the tests)
class traced_span:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._token: contextvars.Token | None = None

    def __enter__(self) -> None:
        stack = TRACE_STACK.get()
        span_log.append((self.name, stack[-1] if stack else None))
        self._token = TRACE_STACK.set(stack + (self.name,))

    def __exit__(self, exc_type, exc, tb) -> bool:
        token, self._token = self._token, None
        if token is not None:
            try:
                TRACE_STACK.reset(token)
            except ValueError:
                pass  # closed in another context: leave that context's stack alone
        return False  # never swallow the block's error

# correct: a class with __enter__/__exit__ instead of a generator; the exit catches only the reset's ValueError and returns False, so the block's error goes on
class traced_span:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.token = None

    def __enter__(self) -> None:
        stack = TRACE_STACK.get()
        span_log.append((self.name, stack[-1] if stack else None))
        self.token = TRACE_STACK.set((*stack, self.name))

    def __exit__(self, *exc_info) -> bool:
        try:
            TRACE_STACK.reset(self.token)
        except ValueError:  # closed in another context: that stack is not ours to change
            pass
        return False

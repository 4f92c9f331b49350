# mistake: wraps the whole try/finally in suppress(ValueError), which also swallows a ValueError the block itself raised
# violates: the block's own error was swallowed
from contextlib import suppress


@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    stack = TRACE_STACK.get()
    span_log.append((name, stack[-1] if stack else None))
    token = TRACE_STACK.set(stack + (name,))
    with suppress(ValueError):
        try:
            yield
        finally:
            TRACE_STACK.reset(token)

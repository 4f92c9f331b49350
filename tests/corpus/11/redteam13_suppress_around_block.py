# mistake: wrapped the whole try/finally (the yield included) in suppress(ValueError) to silence reset in another context
# violates: the block's own error was swallowed
# from: red team of session 13 (had not seen the tests)
@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    from contextlib import suppress
    stack = TRACE_STACK.get()
    span_log.append((name, stack[-1] if stack else None))
    token = TRACE_STACK.set(stack + (name,))
    with suppress(ValueError):  # reset raises ValueError when closed in another context
        try:
            yield
        finally:
            TRACE_STACK.reset(token)

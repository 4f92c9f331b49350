# mistake: records the outermost open span (stack[0]) as the parent instead of the innermost
# violates: wrong parents under concurrency
# from: red team of session 13 (had not seen the tests)
@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    stack = TRACE_STACK.get()
    parent = stack[0] if stack else None
    span_log.append((name, parent))
    token = TRACE_STACK.set(stack + (name,))
    try:
        yield
    finally:
        try:
            TRACE_STACK.reset(token)
        except ValueError:
            pass  # closed in another context

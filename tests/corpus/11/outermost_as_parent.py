# mistake: records the outermost open span (stack[0]) as the parent instead of the innermost
# violates: wrong parents under concurrency
@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    stack = TRACE_STACK.get()
    span_log.append((name, stack[0] if stack else None))
    token = TRACE_STACK.set(stack + (name,))
    try:
        yield
    finally:
        TRACE_STACK.reset(token)

# mistake: records the outermost open span (stack[0]) as the parent instead of the innermost
# violates: a span's parent is the innermost span open in its context (wrong from three levels deep)
# from: red team, session 5 (unseen tests)
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
        TRACE_STACK.reset(token)

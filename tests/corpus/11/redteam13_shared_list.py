# mistake: turns the stack into a list once per context and pushes/pops it in place (fewer tuple copies)
# violates: wrong parents for tasks started inside a span
# from: red team of session 13 (had not seen the tests)
@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    stack = TRACE_STACK.get()
    token = None
    if not isinstance(stack, list):  # first span in this context: give it a list to push on
        stack = list(stack)
        token = TRACE_STACK.set(stack)
    span_log.append((name, stack[-1] if stack else None))
    stack.append(name)
    try:
        yield
    finally:
        stack.pop()
        if token is not None:
            try:
                TRACE_STACK.reset(token)
            except ValueError:
                pass  # closed in another context

# mistake: when reset raises ValueError, sets the stack saved at the start instead, which writes the opener's stack into the closing context
# violates: the stack where the span closed changed
@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    stack = TRACE_STACK.get()
    span_log.append((name, stack[-1] if stack else None))
    token = TRACE_STACK.set(stack + (name,))
    try:
        yield
    finally:
        try:
            TRACE_STACK.reset(token)
        except ValueError:  # another context: put the stack back by hand
            TRACE_STACK.set(stack)

# mistake: when reset raises ValueError, sets the saved stack back only where this span is on top, so a task created inside the span loses the span it inherited
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
        except ValueError:
            if TRACE_STACK.get() == stack + (name,):  # our span shows here: unwind it
                TRACE_STACK.set(stack)

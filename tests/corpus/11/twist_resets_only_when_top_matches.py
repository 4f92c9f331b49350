# mistake: resets only when the current stack still ends with this span, taking that for "the same context"; a task created inside the span inherits that stack and the reset there raises
# violates: the exit raised in another context
@contextmanager
def traced_span(name: str) -> Iterator[None]:
    """Record (name, parent) in span_log and make `name` the innermost span inside the block."""
    stack = TRACE_STACK.get()
    span_log.append((name, stack[-1] if stack else None))
    token = TRACE_STACK.set(stack + (name,))
    try:
        yield
    finally:
        if TRACE_STACK.get() == stack + (name,):  # still our stack: we are where we opened
            TRACE_STACK.reset(token)

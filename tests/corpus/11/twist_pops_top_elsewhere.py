# mistake: when reset raises ValueError, pops the top of whatever stack the closing context has, removing a span that is not its own
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
        except ValueError:  # another context: pop our span there instead
            TRACE_STACK.set(TRACE_STACK.get()[:-1])

# mistake: when reset raises ValueError, sets token.old_value in the closing context (the opener's old stack, or Token.MISSING when the opener had none)
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
            TRACE_STACK.set(token.old_value)
